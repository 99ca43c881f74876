import Foundation

/// The key of an object within its class. Keys are assigned in increasing order and never reused.
public struct ObjectKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: ObjectKey, b: ObjectKey) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "#\(rawValue)" }
}

extension ObjectKey {
    /// The object key of an object whose int primary key is `value`: `value + 2^62` (wrapping). Keys of
    /// primary keys in -2^62 ..< 2^62 are below 2^63, so a single backlink to such an object is stored inline,
    /// and key order is numeric order for every primary key from -2^62 up (smaller ones sort last).
    static func fromPrimaryKey(_ value: Int64) -> ObjectKey { ObjectKey(UInt64(bitPattern: value &+ (1 << 62))) }
    /// The primary key of an object whose class stores a required int primary key as the object key (the
    /// inverse of `fromPrimaryKey`); meaningless for other keys.
    var primaryKeyValue: Int64 { Int64(bitPattern: rawValue) &- (1 << 62) }
}

/// A point in time with nanosecond precision: seconds since 1970-01-01T00:00:00Z plus nanoseconds.
///
/// `nanoseconds` has the same sign as `seconds` (or either sign when `seconds` is 0), as in Realm.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var seconds: Int64
    public var nanoseconds: Int32
    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }
    /// A `Date` as Realm's Swift SDK stores it: NaN as the epoch, and a date past 64-bit seconds as the last or
    /// first timestamp, (2^63 − 1 s, 999,999,999 ns) or (−2^63 s, −999,999,999 ns).
    public init(_ date: Date) {
        let t = date.timeIntervalSince1970
        if t.isNaN { self.init(seconds: 0); return }
        // ±2^63: no double lies strictly between the last second and 2^63.
        if t >= 9_223_372_036_854_775_808.0 { self.init(seconds: .max, nanoseconds: 999_999_999); return }
        if t < -9_223_372_036_854_775_808.0 { self.init(seconds: .min, nanoseconds: -999_999_999); return }
        let s = t.rounded(.towardZero)
        let nanos = Int32(((t - s) * 1e9).rounded())
        // A fraction that rounds to a whole second is that second (|s| < 2^63 - 1024 then: no overflow).
        if abs(nanos) == 1_000_000_000 { self.init(seconds: Int64(s) + Int64(nanos.signum())); return }
        self.init(seconds: Int64(s), nanoseconds: nanos)
    }
    public var date: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }
    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }
    public var description: String { "\(seconds)s\(nanoseconds)ns" }
}

/// A value stored in a property, a list element or a mixed property.
public enum Value: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case data([UInt8])
    case date(Timestamp)
    case objectId(ObjectId)
    case uuid(UUID)
    case decimal128(Decimal128)
    /// A to-one link (or a list-of-links element): the key of the target object in the property's target class.
    case link(ObjectKey)
    /// A link that names its class (Realm's typed link): what a mixed value, or a mixed element of a list, set
    /// or dictionary, holds when it links to an object. The class is the stored class ID
    /// (`Snapshot.classID(named:)`, `Snapshot.className(classID:)`).
    case typedLink(classID: UInt32, key: ObjectKey)
    /// A list nested in a mixed value (Realm Core 14's nested collections): its elements are mixed values.
    case list([Value])
    /// A dictionary nested in a mixed value: string keys, mixed values.
    case dictionary(ValueDictionary)

    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The property type this value naturally belongs to, or nil for `.null`.
    public var type: PropertyType? {
        switch self {
        case .null: return nil
        case .bool: return .bool
        case .int: return .int
        case .float: return .float
        case .double: return .double
        case .string: return .string
        case .data: return .data
        case .date: return .date
        case .objectId: return .objectId
        case .uuid: return .uuid
        case .decimal128: return .decimal128
        case .link, .typedLink: return .link
        case .list, .dictionary: return .mixed
        }
    }

    /// Whether the value is a nested list or dictionary.
    public var isCollection: Bool {
        switch self {
        case .list, .dictionary: return true
        default: return false
        }
    }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let v): return v ? "true" : "false"
        case .int(let v): return String(v)
        case .float(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return "\"\(v)\""
        case .data(let v): return "<\(v.count) bytes>"
        case .date(let v): return v.description
        case .objectId(let v): return "oid(\(v))"
        case .uuid(let v): return "uuid(\(v.uuidString.lowercased()))"
        case .decimal128(let v): return v.description
        case .link(let k): return "link(\(k))"
        case .typedLink(let c, let k): return "link(class \(c) \(k))"
        case .list(let l): return "[" + l.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let d): return "{" + d.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

extension Value {
    /// Whether storing `other` stores exactly what is stored for `self`. Unlike `==`, strings compare by
    /// UTF-8 bytes (not Unicode canonical equivalence) and floats, doubles and decimals by bit pattern, so
    /// -0.0 differs from 0.0 and NaN equals the same NaN.
    func isStoredIdentically(to other: Value) -> Bool {
        switch (self, other) {
        case (.float(let a), .float(let b)): return a.bitPattern == b.bitPattern
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.decimal128(let a), .decimal128(let b)): return a.low == b.low && a.high == b.high
        case (.string(let a), .string(let b)): return utf8Equal(a, b)
        default: return self == other
        }
    }

    /// Equality as queries see it, the same with or without an index: like `==`, except that strings
    /// compare by UTF-8 bytes, as index entries do.
    /// Equality of two values of a mixed property, as its index finds them: scalars by `SetOrder` (numbers by
    /// value across types, strings by their bytes), links and nested collections as `matchesQuery`.
    func equalsMixed(_ other: Value) -> Bool {
        if SetOrder.rank(self) >= 8 || SetOrder.rank(other) >= 8 { return matchesQuery(other) }
        return SetOrder.compare(self, other) == 0
    }

    func matchesQuery(_ other: Value) -> Bool {
        if case .string(let a) = self, case .string(let b) = other { return utf8Equal(a, b) }
        return self == other
    }
}

private func utf8Equal(_ a: String, _ b: String) -> Bool {
    var a = a, b = b
    return a.withUTF8 { x in b.withUTF8 { y in bytesEqual(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
}

/// The entries of a dictionary (a dictionary property's value, or one nested in a mixed value): string keys
/// in the order of their UTF-8 bytes, each with its value. Keys are unique; the order is Realm Core's (its
/// dictionaries keep their keys sorted as unsigned bytes).
public struct ValueDictionary: Hashable, Sendable, RandomAccessCollection {
    public private(set) var keys: [String] = []
    public private(set) var values: [Value] = []

    public init() {}

    /// A dictionary of `entries`; a key given twice keeps its last value.
    public init<S: Sequence>(_ entries: S) where S.Element == (String, Value) {
        // Sorted once by key, the last of equal keys kept: inserting the entries one by one grew and shifted both
        // arrays for each.
        let pairs = Array(entries).sortedUnique(keeping: .last) { SetOrder.compareUTF8($0.0, $1.0) }
        keys = pairs.map(\.0)
        values = pairs.map(\.1)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }
    public subscript(position: Int) -> (key: String, value: Value) { (keys[position], values[position]) }

    /// The position of `key`, or where it would be inserted.
    func search(_ key: String) -> (index: Int, found: Bool) {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = SetOrder.compareUTF8(keys[mid], key)
            if c == 0 { return (mid, true) }
            if c < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (lo, false)
    }

    public func index(forKey key: String) -> Int? {
        let s = search(key)
        return s.found ? s.index : nil
    }

    /// The value of `key`; setting nil removes the key (a stored null is `.null`).
    public subscript(key: String) -> Value? {
        get { index(forKey: key).map { values[$0] } }
        set {
            let s = search(key)
            switch (s.found, newValue) {
            case (true, let v?): values[s.index] = v
            case (true, nil): keys.remove(at: s.index); values.remove(at: s.index)
            case (false, let v?): keys.insert(key, at: s.index); values.insert(v, at: s.index)
            case (false, nil): break
            }
        }
    }

    /// The same keys with `transform` of each value, in order.
    func mapValues(_ transform: (String, Value) throws -> Value) rethrows -> ValueDictionary {
        var mapped: [Value] = []
        mapped.reserveCapacity(values.count)
        for i in keys.indices { mapped.append(try transform(keys[i], values[i])) }
        return ValueDictionary(sortedKeys: keys, values: mapped)
    }

    /// Builds a dictionary from keys already strictly increasing by UTF-8 bytes (as decoded; the caller checked).
    init(sortedKeys: [String], values: [Value]) {
        self.keys = sortedKeys
        self.values = values
    }
}

/// The total order of values Realm Core keeps sets in (`Mixed::compare`; `SetOrder`): null first, then bool, numbers (all
/// numeric types compared by value, so 1, 1.0 and decimal 1 are one element), strings (unsigned UTF-8 bytes),
/// binary, dates, object IDs, UUIDs, typed links, links. NaN sorts before every number (NaNs by bit pattern) and
/// -0.0 equals 0.0. Nested collections sort after everything, lists before dictionaries, and are never set
/// elements.
public enum SetOrder {
    /// -1, 0 or 1.
    public static func compare(_ a: Value, _ b: Value) -> Int {
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.null, .null): return 0
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.string(let x), .string(let y)): return compareUTF8(x, y)
        case (.data(let x), .data(let y)): return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        case (.date(let x), .date(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.objectId(let x), .objectId(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.uuid(let x), .uuid(let y)):
            return withUnsafeBytes(of: x.uuid) { p in withUnsafeBytes(of: y.uuid) { q in
                let c = memcmp(p.baseAddress!, q.baseAddress!, 16)
                return c < 0 ? -1 : (c == 0 ? 0 : 1)
            } }
        case (.typedLink(let c1, let k1), .typedLink(let c2, let k2)):
            return (c1, k1.rawValue) < (c2, k2.rawValue) ? -1 : ((c1, k1) == (c2, k2) ? 0 : 1)
        case (.link(let x), .link(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.list, .list), (.dictionary, .dictionary): return 0
        default: return compareNumbers(a, b)
        }
    }

    /// The kind of a value in the order: null 0, bool 1, numbers 2, string 3, binary 4, date 5, objectId 6,
    /// uuid 7, typed link 8, link 9, list 10, dictionary 11.
    public static func rank(_ v: Value) -> Int {
        switch v {
        case .null: return 0
        case .bool: return 1
        case .int, .float, .double, .decimal128: return 2
        case .string: return 3
        case .data: return 4
        case .date: return 5
        case .objectId: return 6
        case .uuid: return 7
        case .typedLink: return 8
        case .link: return 9
        case .list: return 10
        case .dictionary: return 11
        }
    }

    /// Numbers by value across types; NaN first, NaNs by bit pattern.
    private static func compareNumbers(_ a: Value, _ b: Value) -> Int {
        let na = isNaN(a), nb = isNaN(b)
        if na || nb {
            if na && nb { return nanBits(a) < nanBits(b) ? -1 : (nanBits(a) == nanBits(b) ? 0 : 1) }
            return na ? -1 : 1
        }
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.int(let x), .double(let y)): return intDouble(x, y)
        case (.double(let x), .int(let y)): return -intDouble(y, x)
        case (.int(let x), .float(let y)): return intDouble(x, Double(y))
        case (.float(let x), .int(let y)): return -intDouble(y, Double(x))
        case (.decimal128(let x), .decimal128(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.decimal128(let x), _): return compare(.decimal128(x), .decimal128(decimal(b)))
        case (_, .decimal128(let y)): return compare(.decimal128(decimal(a)), .decimal128(y))
        default:
            let x = double(a), y = double(b)
            return x < y ? -1 : (x == y ? 0 : 1)
        }
    }

    private static func isNaN(_ v: Value) -> Bool {
        switch v {
        case .float(let f): return f.isNaN
        case .double(let d): return d.isNaN
        case .decimal128(let d): return d.isNaN
        default: return false
        }
    }

    private static func nanBits(_ v: Value) -> UInt64 {
        switch v {
        case .float(let f): return UInt64(f.bitPattern)
        case .double(let d): return d.bitPattern
        case .decimal128(let d): return d.high
        default: return 0
        }
    }

    private static func double(_ v: Value) -> Double {
        switch v {
        case .float(let f): return Double(f)
        case .double(let d): return d
        case .int(let i): return Double(i)
        default: return 0
        }
    }

    private static func decimal(_ v: Value) -> Decimal128 {
        switch v {
        case .int(let i): return Decimal128(i)
        case .double(let d): return Decimal128(d, significantDigits: 15)
        case .float(let f): return Decimal128(Double(f), significantDigits: 7)
        default: return .zero
        }
    }

    /// Exact order of an int and a (non-NaN) double.
    public static func intDouble(_ i: Int64, _ d: Double) -> Int {
        if d >= 9_223_372_036_854_775_808.0 { return -1 }
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let t = d.rounded(.down)
        let ti = Int64(t)
        if i < ti { return -1 }
        if i > ti { return 1 }
        return d > t ? -1 : 0
    }

    /// Strings by their UTF-8 bytes, unsigned; a prefix first.
    public static func compareUTF8(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in compareBytes(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) }
        }
    }

    /// `compareUTF8` of two byte strings: unsigned bytewise, a prefix first.
    @inline(__always)
    public static func compareBytes(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Int {
        let n = min(x.count, y.count)
        if n > 0 {
            let c = memcmp(x.baseAddress!, y.baseAddress!, n)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return x.count < y.count ? -1 : (x.count == y.count ? 0 : 1)
    }
}
