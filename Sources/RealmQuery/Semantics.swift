import Foundation
import RealmStorage

/// The meaning of comparisons, in one place: every evaluation path (column kernels, per-object evaluation,
/// index candidates) agrees with these functions.
///
/// - Null equals null and nothing else; ordering comparisons and string operators with null are false.
/// - Numbers compare by value across int, float, double and decimal; an int and a double compare exactly
///   (no rounding of large ints). A float property compares with a double constant rounded to float, as
///   Realm converts constants to the column's type. NaN equals NaN; every ordering with NaN is false.
/// - Decimals compare exactly (34 digits; `1.10 == 1.1`), with each other and with ints. A double or float
///   compares with a decimal as Realm Core converts it, `Decimal128(_:significantDigits:)` with 15 digits
///   for a double and 7 for a float (DECISIONS 71).
/// - Strings compare by Unicode code point (their UTF-8 bytes); `==` is bytewise (no canonical equivalence),
///   the same as the indexes. `[c]` folds ASCII and Latin-1 letters; `[d]` removes diacritics (canonical
///   decomposition, then combining marks U+0300–U+036F dropped).
/// - Values of types that cannot be compared (a string and a number in a mixed property) are unequal and
///   unordered.
enum Semantics {
    // MARK: Type names (`@type`)

    /// The name `@type` gives the type of a value.
    static func typeName(_ v: Value) -> String {
        switch v {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int"
        case .float: return "float"
        case .double: return "double"
        case .string: return "string"
        case .data: return "binary"
        case .date: return "date"
        case .objectId: return "objectId"
        case .uuid: return "uuid"
        case .decimal128: return "decimal"
        case .link, .typedLink: return "link"
        case .list: return "list"
        case .dictionary: return "dictionary"
        }
    }

    /// The names a query may compare `@type` with (case-insensitive), each with the `typeName`s it stands for:
    /// Realm Core's table (`src/realm/query_value.cpp`, after MongoDB's `$type` names), where `object` is a
    /// dictionary (a JSON object) and `char` an int. `list`, `dictionary` and `collection` name the collections a
    /// mixed value will hold; no stored value has them yet.
    static let typeNames: [String: [String]] = [
        "null": ["null"],
        "int": ["int"], "integer": ["int"], "int16": ["int"], "int32": ["int"], "int64": ["int"], "short": ["int"],
        "long": ["int"], "byte": ["int"], "char": ["int"],
        "bool": ["bool"], "boolean": ["bool"], "string": ["string"],
        "binary": ["binary"], "data": ["binary"], "bytearray": ["binary"], "byte[]": ["binary"], "bindata": ["binary"],
        "date": ["date"], "datetimeoffset": ["date"], "timestamp": ["date"],
        "float": ["float"], "double": ["double"], "decimal128": ["decimal"], "decimal": ["decimal"],
        "objectlink": ["link"], "link": ["link"], "objectid": ["objectId"], "uuid": ["uuid"], "guid": ["uuid"],
        "numeric": ["int", "float", "double", "decimal"],
        "object": ["dictionary"], "dictionary": ["dictionary"], "array": ["list"], "list": ["list"],
        "collection": ["list", "dictionary"],
    ]

    /// -1, 0 or 1, or nil when the two cannot be ordered (different kinds, NaN, null).
    static func order(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.double(let x), .double(let y)): return doubleOrder(x, y)
        case (.float(let x), .float(let y)): return doubleOrder(Double(x), Double(y))
        case (.int(let x), .double(let y)): return intDoubleOrder(x, y)
        case (.double(let x), .int(let y)): return intDoubleOrder(y, x).map { -$0 }
        case (.int(let x), .float(let y)): return intDoubleOrder(x, Double(y))
        case (.float(let x), .int(let y)): return intDoubleOrder(y, Double(x)).map { -$0 }
        case (.float(let x), .double(let y)): return doubleOrder(Double(x), Double(Float(y)))
        case (.double(let x), .float(let y)): return doubleOrder(Double(Float(x)), Double(y))
        case (.decimal128(let x), .decimal128(let y)): return x.isNaN || y.isNaN ? nil : (x < y ? -1 : (x == y ? 0 : 1))
        case (.decimal128(let x), _): return decimal(b).flatMap { order(.decimal128(x), .decimal128($0)) }
        case (_, .decimal128(let y)): return decimal(a).flatMap { order(.decimal128($0), .decimal128(y)) }
        case (.string(let x), .string(let y)): return bytesOrder(x, y)
        case (.data(let x), .data(let y)): return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        case (.date(let x), .date(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.objectId(let x), .objectId(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.uuid(let x), .uuid(let y)): return uuidOrder(x, y)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.link(let x), .link(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.typedLink(let c, let x), .typedLink(let d, let y)):
            return (c, x) < (d, y) ? -1 : (c == d && x == y ? 0 : 1)
        default: return nil
        }
    }

    static func decimal(_ v: Value) -> Decimal128? {
        switch v {
        case .int(let i): return Decimal128(i)
        case .double(let d): return d.isNaN ? nil : Decimal128(d, significantDigits: 15)
        case .float(let f): return f.isNaN ? nil : Decimal128(Double(f), significantDigits: 7)
        default: return nil
        }
    }

    @inline(__always) static func doubleOrder(_ x: Double, _ y: Double) -> Int? {
        if x < y { return -1 }
        if x > y { return 1 }
        if x == y { return 0 }
        return nil
    }

    /// Exact order of an int and a double.
    static func intDoubleOrder(_ i: Int64, _ d: Double) -> Int? {
        d.isNaN ? nil : SetOrder.intDouble(i, d)
    }

    static func uuidOrder(_ x: UUID, _ y: UUID) -> Int {
        withUnsafeBytes(of: x.uuid) { a in
            withUnsafeBytes(of: y.uuid) { b in
                let c = memcmp(a.baseAddress!, b.baseAddress!, 16)
                return c < 0 ? -1 : (c == 0 ? 0 : 1)
            }
        }
    }

    static func bytesOrder(_ x: String, _ y: String) -> Int {
        var x = x, y = y
        return x.withUTF8 { a in y.withUTF8 { b in rawOrder(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) } }
    }

    @inline(__always) static func rawOrder(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let n = min(a.count, b.count)
        if n > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, n)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
    }

    static func isNaN(_ v: Value) -> Bool {
        switch v {
        case .double(let d): return d.isNaN
        case .float(let f): return f.isNaN
        case .decimal128(let d): return d.isNaN
        default: return false
        }
    }

    static func equal(_ a: Value, _ b: Value, _ options: Comparison.Options) -> Bool {
        if a.isNull || b.isNull { return a.isNull && b.isNull }
        if !options.isEmpty, let x = textBytes(a), let y = textBytes(b) {
            return fold(x, options) == fold(y, options)
        }
        if let o = order(a, b) { return o == 0 }
        return isNaN(a) && isNaN(b)
    }

    /// `l op r` for one pair of values (IN and BETWEEN are handled by the caller).
    static func test(_ l: Value, _ op: Comparison.Operator, _ options: Comparison.Options, _ r: Value) -> Bool {
        switch op {
        case .equal, .in: return equal(l, r, options)
        case .notEqual: return !equal(l, r, options)
        case .less: return order(l, r).map { $0 < 0 } ?? false
        case .lessOrEqual: return order(l, r).map { $0 <= 0 } ?? false
        case .greater: return order(l, r).map { $0 > 0 } ?? false
        case .greaterOrEqual: return order(l, r).map { $0 >= 0 } ?? false
        case .between: return false
        case .beginsWith, .endsWith, .contains, .like:
            guard let x = textBytes(l), let y = textBytes(r) else { return false }
            let fx = options.isEmpty ? x : fold(x, options)
            let fy = options.isEmpty ? y : fold(y, options)
            return fx.withUnsafeBytes { a in fy.withUnsafeBytes { b in stringOp(op, a, b) } }
        }
    }

    static func textBytes(_ v: Value) -> [UInt8]? {
        switch v {
        case .string(let s): return Array(s.utf8)
        case .data(let d): return d
        default: return nil
        }
    }

    // MARK: String operators on bytes

    @inline(__always)
    static func stringOp(_ op: Comparison.Operator, _ h: UnsafeRawBufferPointer, _ n: UnsafeRawBufferPointer) -> Bool {
        switch op {
        case .beginsWith:
            return n.count <= h.count && (n.count == 0 || memcmp(h.baseAddress!, n.baseAddress!, n.count) == 0)
        case .endsWith:
            return n.count <= h.count && (n.count == 0 || memcmp(h.baseAddress! + (h.count - n.count), n.baseAddress!, n.count) == 0)
        case .contains:
            if n.count == 0 { return true }
            if n.count > h.count { return false }
            return find(h, n)
        case .like: return like(h, n)
        case .equal: return rawOrder(h, n) == 0
        default: return false
        }
    }

    /// Whether `n` (not empty, not longer than `h`) occurs in `h`: memchr for the first byte, then memcmp.
    @inline(__always) static func find(_ h: UnsafeRawBufferPointer, _ n: UnsafeRawBufferPointer) -> Bool {
        let first = Int32(n[0])
        let base = h.baseAddress!
        var p = base
        let last = base + (h.count - n.count)
        while p <= last {
            guard let hit = memchr(p, first, last - p + 1) else { return false }
            if memcmp(hit, n.baseAddress!, n.count) == 0 { return true }
            p = UnsafeRawPointer(hit) + 1
        }
        return false
    }

    /// `CONTAINS[c]` without copying: whether the case-folded `n` (not empty, not longer than `h`) occurs in
    /// `h` folded as `foldCase` folds (ASCII letters, and Latin-1 letters after 0xC3), folding `h` on the fly.
    /// A needle can only start on a character's first byte, so the 0xC3 context of a match's first byte
    /// never matters.
    static func containsFolded(_ h: UnsafeRawBufferPointer, _ n: UnsafeRawBufferPointer) -> Bool {
        let hc = h.count, nc = n.count
        guard nc > 0 else { return true }
        guard nc <= hc, let hb = h.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let nb = n.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        @inline(__always) func folded(_ i: Int) -> UInt8 {
            let c = hb[i]
            if c >= 65 && c <= 90 { return c | 0x20 }
            if c >= 0x80 && c <= 0x9E && c != 0x97 && i > 0 && hb[i - 1] == 0xC3 { return c + 0x20 }
            return c
        }
        let first = nb[0]
        let upper: UInt8 = first >= 97 && first <= 122 ? first - 0x20 : first
        var i = 0
        let last = hc - nc
        while i <= last {
            let c = hb[i]
            if c == first || c == upper {
                var j = 1
                while j < nc && folded(i + j) == nb[j] { j += 1 }
                if j == nc { return true }
            }
            i += 1
        }
        return false
    }

    /// `*` matches any run of characters, `?` one character (a whole UTF-8 sequence).
    static func like(_ s: UnsafeRawBufferPointer, _ p: UnsafeRawBufferPointer) -> Bool {
        var si = 0, pi = 0
        var starP = -1, starS = 0
        @inline(__always) func charLength(_ i: Int) -> Int {
            let c = s[i]
            let n = c < 0x80 ? 1 : (c < 0xE0 ? 2 : (c < 0xF0 ? 3 : 4))
            return min(n, s.count - i)
        }
        while si < s.count {
            if pi < p.count, p[pi] == 42 {  // *
                starP = pi
                starS = si
                pi += 1
            } else if pi < p.count, p[pi] == 63 {  // ?
                si += charLength(si)
                pi += 1
                while pi < p.count, p[pi] & 0xC0 == 0x80 { pi += 1 }
            } else if pi < p.count, p[pi] == s[si] {
                si += 1
                pi += 1
            } else if starP >= 0 {
                pi = starP + 1
                starS += charLength(starS)
                si = starS
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == 42 { pi += 1 }
        return pi == p.count
    }

    // MARK: Folding

    static func fold(_ bytes: [UInt8], _ options: Comparison.Options) -> [UInt8] {
        var b = bytes
        if options.contains(.diacriticInsensitive) { b = removeDiacritics(b) }
        if options.contains(.caseInsensitive) { b.withUnsafeMutableBytes { foldCase($0) } }
        return b
    }

    /// Lowercases ASCII and Latin-1 letters in place (U+00C0–U+00DE except U+00D7; lengths are unchanged).
    @inline(__always) static func foldCase(_ b: UnsafeMutableRawBufferPointer) {
        var i = 0
        let n = b.count
        while i < n {
            let c = b[i]
            if c >= 65 && c <= 90 {
                b[i] = c | 0x20
            } else if c == 0xC3, i + 1 < n {
                let d = b[i + 1]
                if d >= 0x80 && d <= 0x9E && d != 0x97 { b[i + 1] = d + 0x20 }
                i += 1
            }
            i += 1
        }
    }

    static func removeDiacritics(_ b: [UInt8]) -> [UInt8] {
        if b.allSatisfy({ $0 < 0x80 }) { return b }
        let s = String(decoding: b, as: UTF8.self).decomposedStringWithCanonicalMapping
        var out = String.UnicodeScalarView()
        for u in s.unicodeScalars where !(0x300...0x36F).contains(u.value) { out.append(u) }
        return Array(String(out).precomposedStringWithCanonicalMapping.utf8)
    }
}
