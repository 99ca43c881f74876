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
    public init(_ date: Date) {
        let t = date.timeIntervalSince1970
        let s = t.rounded(.towardZero)
        self.seconds = Int64(s)
        self.nanoseconds = Int32(((t - s) * 1e9).rounded())
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
        case .link: return .link
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
    func matchesQuery(_ other: Value) -> Bool {
        if case .string(let a) = self, case .string(let b) = other { return utf8Equal(a, b) }
        return self == other
    }
}

private func utf8Equal(_ a: String, _ b: String) -> Bool {
    var a = a, b = b
    return a.withUTF8 { x in b.withUTF8 { y in bytesEqual(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
}
