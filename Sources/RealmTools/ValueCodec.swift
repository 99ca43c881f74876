import Foundation
import RealmStorage

/// Stored values as JSON, in the encodings of the data files: dates as ISO-8601 UTC strings with fractional
/// seconds, data as base64, objectId as 24 hex digits, uuid canonical, decimal128 as a decimal string,
/// floats and doubles as numbers (`NaN`, `Infinity`, `-Infinity` as strings). Mixed values that JSON cannot
/// tell apart carry a tag: `{"$date": ...}`, `{"$oid": ...}`, `{"$uuid": ...}`, `{"$binary": ...}`,
/// `{"$decimal": ...}`, `{"$float": ...}`; a mixed double always has a fraction or exponent.
public enum ValueCodec {
    // MARK: To JSON

    public static func json(_ v: Value, type: PropertyType) -> JSONValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let f):
            if type == .mixed { return .object([("$float", floatJSON(Double(f), text: "\(f)"))]) }
            return floatJSON(Double(f), text: "\(f)")
        case .double(let d): return floatJSON(d, text: "\(d)")
        case .string(let s): return .string(s)
        case .data(let d):
            let s = Data(d).base64EncodedString()
            return type == .mixed ? .object([("$binary", .string(s))]) : .string(s)
        case .date(let t):
            let s = iso8601(t)
            return type == .mixed ? .object([("$date", .string(s))]) : .string(s)
        case .objectId(let o): return type == .mixed ? .object([("$oid", .string(o.hexString))]) : .string(o.hexString)
        case .uuid(let u):
            let s = u.uuidString.lowercased()
            return type == .mixed ? .object([("$uuid", .string(s))]) : .string(s)
        case .decimal128(let d): return type == .mixed ? .object([("$decimal", .string(d.description))]) : .string(d.description)
        case .link(let k): return .int(Int64(bitPattern: k.rawValue))
        case .typedLink(let c, let k): return .object([("$link", .array([.int(Int64(c)), .int(Int64(bitPattern: k.rawValue))]))])
        case .list(let l): return .array(l.map { json($0, type: .mixed) })
        case .dictionary(let d): return .object(d.map { ($0.key, json($0.value, type: .mixed)) })
        }
    }

    /// A float or double as a number with a fraction or exponent (`1.0`, `1e+300`), or a string for NaN/∞.
    static func floatJSON(_ d: Double, text: String) -> JSONValue {
        if d.isNaN { return .string("NaN") }
        if d.isInfinite { return .string(d < 0 ? "-Infinity" : "Infinity") }
        var t = text
        if !t.contains(".") && !t.contains("e") && !t.contains("E") { t += ".0" }
        return .number(t)
    }

    // MARK: From JSON

    /// Converts a JSON value to a stored primitive of `type`; nil with a reason when it does not fit.
    public static func value(_ j: JSONValue, type: PropertyType, optional: Bool) -> Result<Value, ValueError> {
        if case .null = j {
            return optional || type == .mixed ? .success(.null) : .failure(ValueError("null in a required \(type) property"))
        }
        func bad(_ expected: String) -> Result<Value, ValueError> { .failure(ValueError("expected \(expected), found \(j.kind)")) }
        switch type {
        case .bool:
            if case .bool(let b) = j { return .success(.bool(b)) }
            return bad("true or false")
        case .int:
            guard case .number(let n) = j else { return bad("an integer") }
            if let i = Int64(n) { return .success(.int(i)) }
            if let d = Double(n), d == d.rounded(), abs(d) < 9.2e18 { return .success(.int(Int64(d))) }
            return .failure(ValueError("\(n) is not an integer in -2^63 ... 2^63-1"))
        case .float, .double:
            let d: Double
            switch j {
            case .number(let n): d = Double(n) ?? .nan
            case .string("NaN"): d = .nan
            case .string("Infinity"), .string("inf"): d = .infinity
            case .string("-Infinity"), .string("-inf"): d = -.infinity
            default: return bad("a number")
            }
            if type == .float {
                if case .number(let n) = j, let f = Float(n) { return .success(.float(f)) }
                return .success(.float(Float(d)))
            }
            return .success(.double(d))
        case .string:
            if case .string(let s) = j { return .success(.string(s)) }
            return bad("a string")
        case .data:
            guard case .string(let s) = j else { return bad("a base64 string") }
            guard let d = Data(base64Encoded: s) else { return .failure(ValueError("not valid base64")) }
            return .success(.data([UInt8](d)))
        case .date:
            guard case .string(let s) = j else { return bad("an ISO-8601 date string") }
            guard let t = parseISO8601(s) else {
                return .failure(ValueError("'\(s.prefix(40))' is not an ISO-8601 date (YYYY-MM-DDTHH:MM:SS[.fraction]Z)"))
            }
            return .success(.date(t))
        case .objectId:
            guard case .string(let s) = j else { return bad("an objectId string") }
            guard let o = ObjectId(hexString: s) else { return .failure(ValueError("an objectId is 24 hex digits")) }
            return .success(.objectId(o))
        case .uuid:
            guard case .string(let s) = j else { return bad("a uuid string") }
            guard let u = UUID(uuidString: s) else { return .failure(ValueError("not a canonical uuid")) }
            return .success(.uuid(u))
        case .decimal128:
            let s: String
            switch j {
            case .string(let t): s = t
            case .number(let t): s = t
            default: return bad("a decimal string")
            }
            guard let d = Decimal128(string: s) else { return .failure(ValueError("'\(s.prefix(40))' is not a decimal")) }
            return .success(.decimal128(d))
        case .mixed:
            switch j {
            case .null: return .success(.null)
            case .bool(let b): return .success(.bool(b))
            case .string(let s): return .success(.string(s))
            case .number(let n):
                if let i = Int64(n) { return .success(.int(i)) }
                return .success(.double(Double(n) ?? .nan))
            case .object(let m) where m.count == 1:
                let (tag, inner) = m[0]
                switch tag {
                case "$date": return value(inner, type: .date, optional: false)
                case "$oid": return value(inner, type: .objectId, optional: false)
                case "$uuid": return value(inner, type: .uuid, optional: false)
                case "$binary": return value(inner, type: .data, optional: false)
                case "$decimal": return value(inner, type: .decimal128, optional: false)
                case "$float": return value(inner, type: .float, optional: false)
                default: return .failure(ValueError("unknown mixed tag '\(tag)'"))
                }
            default: return bad("a mixed value (null, boolean, number, string or a tagged object)")
            }
        case .link, .linkingObjects, .backlink:
            return bad("a value")
        }
    }

    // MARK: Dates

    /// `1970-01-01T00:00:00Z`, with a fraction of up to nine digits when there are nanoseconds. Every timestamp has
    /// one, out to the extremes Realm's SDKs store, (−2^63 s, −999,999,999 ns) and (2^63 − 1 s, 999,999,999 ns), in
    /// the years −292,277,022,657 and 292,277,026,596: a year outside 0000…9999 takes a sign and more digits.
    public static func iso8601(_ t: Timestamp) -> String {
        // Floor division in 128 bits: the instant of the extremes lies outside 64-bit seconds, and a foreign
        // file's nanoseconds may lie outside ±10^9.
        let total = Int128(t.seconds) * 1_000_000_000 + Int128(t.nanoseconds)
        let (q, r) = total.quotientAndRemainder(dividingBy: 86_400 * 1_000_000_000)
        let (days, dayNanos) = r < 0 ? (q - 1, r + 86_400 * 1_000_000_000) : (q, r)
        let rem = Int64(dayNanos / 1_000_000_000), nanos = Int64(dayNanos % 1_000_000_000)
        let (y, m, d) = civil(fromDays: Int64(days))
        let hh = rem / 3600, mm = (rem % 3600) / 60, ss = rem % 60
        var s = y < 0 || y > 9999 ? String(format: "%+05lld", y) : String(format: "%04lld", y)
        s += String(format: "-%02lld-%02lldT%02lld:%02lld:%02lld", m, d, hh, mm, ss)
        if nanos > 0 {
            var frac = String(format: "%09lld", nanos)
            while frac.hasSuffix("0") { frac.removeLast() }
            s += "." + frac
        }
        return s + "Z"
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with `Z`, `±HH:MM` or no zone (UTC).
    public static func parseISO8601(_ s: String) -> Timestamp? {
        let b = Array(s.utf8)
        var i = 0
        func num(_ n: Int) -> Int64? {
            guard i + n <= b.count else { return nil }
            var v: Int64 = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            i += n
            return v
        }
        func expect(_ c: Character) -> Bool {
            guard i < b.count, b[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        var sign: Int64 = 1
        var yearDigits = 4
        if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") {
            sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            var n = 0
            while i + n < b.count, b[i + n] >= 48, b[i + n] <= 57 { n += 1 }
            // Twelve digits reach past the years a timestamp holds (±292,277,026,596) without overflowing.
            guard n >= 4, n <= 12 else { return nil }
            yearDigits = n
        }
        guard let yy = num(yearDigits), expect("-"), let mo = num(2), expect("-"), let dd = num(2) else { return nil }
        guard (1...12).contains(mo), dd >= 1, dd <= daysIn(month: mo, year: sign * yy) else { return nil }
        var hh: Int64 = 0, mi: Int64 = 0, ss: Int64 = 0, nanos: Int64 = 0
        if i < b.count {
            guard expect("T") || expect(" ") else { return nil }
            guard let h = num(2), expect(":"), let m = num(2) else { return nil }
            hh = h
            mi = m
            if expect(":") {
                guard let s = num(2) else { return nil }
                ss = s
                if expect(".") {
                    var digits = 0
                    while i < b.count, b[i] >= 48, b[i] <= 57 {
                        if digits < 9 { nanos = nanos * 10 + Int64(b[i] - 48) }
                        digits += 1
                        i += 1
                    }
                    guard digits > 0 else { return nil }
                    for _ in digits..<9 where digits < 9 { nanos *= 10 }
                }
            }
            guard hh < 24, mi < 60, ss < 61 else { return nil }
        }
        var offset: Int64 = 0
        if i < b.count {
            if expect("Z") {
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                let neg = b[i] == UInt8(ascii: "-")
                i += 1
                guard let oh = num(2) else { return nil }
                _ = expect(":")
                guard let om = num(2), oh < 24, om < 60 else { return nil }
                offset = (oh * 3600 + om * 60) * (neg ? -1 : 1)
            } else {
                return nil
            }
        }
        guard i == b.count else { return nil }
        let days = days(fromCivil: sign * yy, mo, dd)
        var secs = Int128(days) * 86400 + Int128(hh * 3600 + mi * 60 + ss - offset)
        var ns = Int32(nanos)
        // Realm's convention: nanoseconds take the sign of seconds.
        if secs < 0 && ns > 0 { secs += 1; ns -= 1_000_000_000 }
        // A date past the range of 64-bit seconds is not a timestamp.
        guard let seconds = Int64(exactly: secs) else { return nil }
        return Timestamp(seconds: seconds, nanoseconds: ns)
    }

    static func daysIn(month m: Int64, year y: Int64) -> Int64 {
        switch m {
        case 2: return (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}

/// Why a JSON value does not fit a property.
public struct ValueError: Error, Equatable {
    public let message: String
    init(_ message: String) { self.message = message }
}
