import Foundation
import RealmStorage

/// One token of query text.
struct Token: Sendable {
    enum Kind: Equatable, Sendable {
        /// A name: a property, a class, a keyword (keywords are recognized by the parser, case-insensitively).
        case identifier(String)
        /// A name that is never a keyword: written with NSPredicate's escape `#` (`#any`, for a property
        /// named `any`), or given by `%K`. The name without `#`.
        case name(String)
        /// `@count`, `@links`, ... (the name without `@`).
        case atIdentifier(String)
        /// `$0`, `$1`, ...
        case argument(Int)
        /// `$x`, a subquery variable (the name without `$`).
        case variable(String)
        /// Digits as written (with `0x`, `.`, exponent), sign not included.
        case number(String)
        case string(String)
        case binary([UInt8])
        case date(Timestamp)
        case objectId(ObjectId)
        case uuid(UUID)
        /// Punctuation and operators, as written: `(`, `)`, `{`, `}`, `[`, `]`, `,`, `.`, `==`, `=`, `!=`,
        /// `<>`, `<`, `<=`, `=<`, `>`, `>=`, `=>`, `&&`, `||`, `!`, `+`, `-`, `*`, `/`.
        case symbol(String)
        case end
    }

    var kind: Kind
    var range: SourceRange
}

/// Splits query text into tokens. Never traps: bad input is a `QueryError` with the offending position.
struct Lexer {
    let text: String
    let bytes: [UInt8]
    var pos = 0
    /// How many `%@` and `%K` placeholders came before: the n-th one takes argument n - 1, as NSPredicate
    /// numbers them.
    var placeholders = 0
    /// The arguments `%K` takes its key paths from; nil: `%K` is an error (the plain `Query.parse`).
    let keyPathArguments: [QueryArgument]?
    /// The arguments `%K` took (by number): removed from the arguments, so `%@` after them count down.
    var keyPathsTaken: [Int] = []
    /// Where the first `$n` is: `$n` and `%K` cannot be mixed (the numbers would mean two things).
    var firstDollar: SourceRange?
    /// Tokens made by a `%K`, still to be returned.
    var pending: [Token] = []

    init(_ text: String, keyPathArguments: [QueryArgument]? = nil) {
        self.text = text
        self.bytes = Array(text.utf8)
        self.keyPathArguments = keyPathArguments
    }

    func error(_ message: String, _ start: Int, _ end: Int) -> QueryError {
        QueryError(.syntax, message, query: text, range: SourceRange(start, end))
    }

    /// Every token, ending with `.end`.
    mutating func tokens() throws(QueryError) -> [Token] {
        var out: [Token] = []
        while true {
            let t = try next()
            out.append(t)
            if t.kind == .end { return out }
        }
    }

    @inline(__always) func peek(_ k: Int = 0) -> UInt8? { pos + k < bytes.count ? bytes[pos + k] : nil }

    static func isIdentStart(_ c: UInt8) -> Bool { (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c >= 0x80 }
    static func isIdentChar(_ c: UInt8) -> Bool { isIdentStart(c) || isDigit(c) }
    /// Whether `bytes` are one name as the lexer reads it unescaped (`first_name`, `年齢`; not `first name`).
    static func isIdentifier<C: Collection<UInt8>>(_ bytes: C) -> Bool {
        bytes.first.map(isIdentStart) == true && bytes.allSatisfy(isIdentChar)
    }
    static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
    static func isHex(_ c: UInt8) -> Bool { isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102) }

    mutating func next() throws(QueryError) -> Token {
        if !pending.isEmpty { return pending.removeFirst() }
        while let c = peek(), c == 32 || c == 9 || c == 10 || c == 13 { pos += 1 }
        let start = pos
        guard let c = peek() else { return Token(kind: .end, range: SourceRange(pos, pos)) }
        func tok(_ k: Token.Kind) -> Token { Token(kind: k, range: SourceRange(start, pos)) }

        if c == 39 || c == 34 { return tok(.string(try string(quote: c))) }
        if Lexer.isDigit(c) {
            if let d = try dateLiteral() { return tok(.date(d)) }
            return tok(.number(number()))
        }
        if c == 46, let d = peek(1), Lexer.isDigit(d) { return tok(.number(number())) }
        if c == 84, let t = try secondsDate() { return tok(.date(t)) }  // T<seconds>:<nanoseconds>
        if Lexer.isIdentStart(c) {
            let name = identifier()
            if name == "B64", peek() == 34 || peek() == 39 {
                // A string, as Realm reads `B64"…"` (`bin(B64"…")` is binary data); bytes that are not UTF-8
                // text stay bytes, which compare with strings and data as the bytes Realm would compare.
                let data = try base64(start)
                if let text = String(validating: data, as: UTF8.self) { return tok(.string(text)) }
                return tok(.binary(data))
            }
            let lower = name.lowercased()
            if (lower == "oid" || lower == "uuid"), peek() == 40 {
                return tok(try objectIdOrUUID(lower, start))
            }
            if lower == "bin", peek() == 40 { return tok(.binary(try binaryLiteral(start))) }
            return tok(.identifier(name))
        }
        if c == 35 {  // #name: NSPredicate's escape of a reserved word used as a name
            pos += 1
            if let q = peek(), q == 34 || q == 39 {
                // #"first name": a name that is not an identifier (spaces, punctuation, a leading digit), which
                // Realm files written by other SDKs may have. Quoted and escaped as a string is.
                let name = try string(quote: q)
                guard !name.isEmpty else { throw error("expected a name inside the quotes after '#'", start, pos) }
                return tok(.name(name))
            }
            guard let d = peek(), Lexer.isIdentStart(d) else {
                throw error("expected a name after '#' (a name with spaces or punctuation is quoted: #\"first name\")", start, pos)
            }
            return tok(.name(identifier()))
        }
        if c == 64 {  // @
            pos += 1
            guard let d = peek(), Lexer.isIdentStart(d) else { throw error("expected a name after '@'", start, pos) }
            return tok(.atIdentifier(identifier()))
        }
        if c == 37 {  // %@, NSPredicate's placeholder
            pos += 1
            guard peek() == 64 else {
                if peek() == 75 || peek() == 107 {
                    pos += 1
                    return try keyPathPlaceholder(start)
                }
                if let d = peek(), d > 32 { pos += 1 }
                throw error("expected '%@', an argument placeholder, after '%'", start, pos)
            }
            pos += 1
            placeholders += 1
            return tok(.argument(placeholders - 1 - keyPathsTaken.count))
        }
        if c == 36 {  // $
            pos += 1
            if let d = peek(), Lexer.isDigit(d) {
                let s = pos
                while let d = peek(), Lexer.isDigit(d) { pos += 1 }
                guard let n = Int(String(decoding: bytes[s..<pos], as: UTF8.self)), n < 1_000_000 else {
                    throw error("argument number too large", start, pos)
                }
                if firstDollar == nil { firstDollar = SourceRange(start, pos) }
                if !keyPathsTaken.isEmpty { throw error("$\(n) cannot be used with %K; use %@ for the values", start, pos) }
                return tok(.argument(n))
            }
            guard let d = peek(), Lexer.isIdentStart(d) else { throw error("expected an argument number or a variable name after '$'", start, pos) }
            return tok(.variable(identifier()))
        }
        // Operators and punctuation: longest match first.
        let two: [String] = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"]
        if let d = peek(1) {
            let s = String(decoding: [c, d], as: UTF8.self)
            if two.contains(s) {
                pos += 2
                return tok(.symbol(s))
            }
        }
        if "(){}[],.=<>!+-*/".utf8.contains(c) {
            pos += 1
            return tok(.symbol(String(UnicodeScalar(c))))
        }
        // One whole character (possibly several bytes) for the message.
        pos += 1
        while let d = peek(), d & 0xC0 == 0x80 { pos += 1 }
        let ch = String(decoding: bytes[start..<pos], as: UTF8.self)
        if c == 38 || c == 124 { throw error("unexpected '\(ch)'; did you mean '\(ch)\(ch)'?", start, pos) }
        throw error("unexpected character '\(ch)'", start, pos)
    }

    mutating func identifier() -> String {
        let s = pos
        while let c = peek(), Lexer.isIdentChar(c) { pos += 1 }
        return String(decoding: bytes[s..<pos], as: UTF8.self)
    }

    /// Digits, hex, a fraction and an exponent, as written.
    mutating func number() -> String {
        let s = pos
        if peek() == 48, peek(1) == 120 || peek(1) == 88 {
            pos += 2
            while let c = peek(), Lexer.isHex(c) { pos += 1 }
            return String(decoding: bytes[s..<pos], as: UTF8.self)
        }
        while let c = peek(), Lexer.isDigit(c) { pos += 1 }
        if peek() == 46, let d = peek(1), Lexer.isDigit(d) {
            pos += 1
            while let c = peek(), Lexer.isDigit(c) { pos += 1 }
        } else if peek() == 46, !(peek(1).map(Lexer.isIdentStart) ?? false), peek(1) != 64 {
            pos += 1  // `1.` is a float
        }
        if peek() == 101 || peek() == 69 {
            var k = 1
            if peek(1) == 43 || peek(1) == 45 { k = 2 }
            if let d = peek(k), Lexer.isDigit(d) {
                pos += k
                while let c = peek(), Lexer.isDigit(c) { pos += 1 }
            }
        }
        // Letters glued to a number (`12abc`) are part of the bad token.
        while let c = peek(), Lexer.isIdentChar(c) { pos += 1 }
        return String(decoding: bytes[s..<pos], as: UTF8.self)
    }

    mutating func string(quote: UInt8) throws(QueryError) -> String {
        let start = pos
        pos += 1
        var out: [UInt8] = []
        while true {
            guard let c = peek() else { throw error("unterminated string", start, pos) }
            pos += 1
            if c == quote { break }
            if c != 92 { out.append(c); continue }
            guard let e = peek() else { throw error("unterminated string", start, pos) }
            let escapeStart = pos - 1
            pos += 1
            switch e {
            case 110: out.append(10)                 // \n
            case 116: out.append(9)                  // \t
            case 114: out.append(13)                 // \r
            case 48: out.append(0)                   // \0
            case 98: out.append(8)                   // \b
            case 102: out.append(12)                 // \f
            case 39, 34, 92, 47: out.append(e)       // \' \" \\ \/
            case 117:                                // \uXXXX
                var v: UInt32 = 0
                for _ in 0..<4 {
                    guard let h = peek(), Lexer.isHex(h) else { throw error("expected four hex digits after \\u", escapeStart, pos) }
                    v = v << 4 | UInt32(Lexer.hexValue(h))
                    pos += 1
                }
                // A surrogate pair: \uD83E\uDD84.
                if (0xD800...0xDBFF).contains(v), peek() == 92, peek(1) == 117 {
                    let save = pos
                    pos += 2
                    var low: UInt32 = 0
                    var ok = true
                    for _ in 0..<4 {
                        guard let h = peek(), Lexer.isHex(h) else { ok = false; break }
                        low = low << 4 | UInt32(Lexer.hexValue(h))
                        pos += 1
                    }
                    if ok, (0xDC00...0xDFFF).contains(low) {
                        v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        pos = save
                    }
                }
                guard let scalar = Unicode.Scalar(v) else { throw error("\\u escape is not a Unicode scalar", escapeStart, pos) }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw error("unknown escape '\\\(String(decoding: [e], as: UTF8.self))' in string", escapeStart, pos)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ c: UInt8) -> UInt8 {
        if c <= 57 { return c - 48 }
        return (c | 0x20) - 87
    }

    /// `YYYY-MM-DD@HH:MM:SS[:ns]` or with `T`; nil (and nothing consumed) when the digits are not a date.
    mutating func dateLiteral() throws(QueryError) -> Timestamp? {
        let start = pos
        var p = pos
        func digits() -> Int? {
            let s = p
            while p < bytes.count, Lexer.isDigit(bytes[p]), p - s < 18 { p += 1 }
            if p == s { return nil }
            return Int(String(decoding: bytes[s..<p], as: UTF8.self))
        }
        guard let year = digits(), p - start == 4, p < bytes.count, bytes[p] == 45 else { return nil }
        p += 1
        guard let month = digits(), p < bytes.count, bytes[p] == 45 else { return nil }
        p += 1
        guard let day = digits(), p < bytes.count, bytes[p] == 64 || bytes[p] == 84 else { return nil }
        p += 1
        guard let h = digits(), p < bytes.count, bytes[p] == 58 else { throw error("incomplete date: expected HH:MM:SS", start, p) }
        p += 1
        guard let mi = digits(), p < bytes.count, bytes[p] == 58 else { throw error("incomplete date: expected HH:MM:SS", start, p) }
        p += 1
        guard let se = digits() else { throw error("incomplete date: expected HH:MM:SS", start, p) }
        var ns = 0
        if p < bytes.count, bytes[p] == 58 {
            p += 1
            guard let n = digits() else { throw error("expected nanoseconds after ':'", start, p) }
            ns = n
        }
        pos = p
        guard (1...12).contains(month), (1...31).contains(day), h < 24, mi < 60, se < 61, ns < 1_000_000_000 else {
            throw error("invalid date", start, pos)
        }
        let days = Lexer.daysFromCivil(year, month, day)
        let secs = Int64(days) * 86400 + Int64(h * 3600 + mi * 60 + se)
        // Before 1970 the nanoseconds take the sign of the seconds, as Timestamp requires.
        if secs < 0 && ns > 0 { return Timestamp(seconds: secs + 1, nanoseconds: Int32(ns - 1_000_000_000)) }
        return Timestamp(seconds: secs, nanoseconds: Int32(ns))
    }

    /// `T<seconds>:<nanoseconds>` (either may be negative); nil when the text is not one.
    mutating func secondsDate() throws(QueryError) -> Timestamp? {
        var p = pos + 1
        func signedDigits() -> Int64? {
            var neg = false
            if p < bytes.count, bytes[p] == 45 { neg = true; p += 1 }
            let s = p
            while p < bytes.count, Lexer.isDigit(bytes[p]) { p += 1 }
            // The magnitude in 64 unsigned bits, so that -2^63 (the smallest date Realm's SDKs store) is read.
            guard p > s, p - s <= 20, let v = UInt64(String(decoding: bytes[s..<p], as: UTF8.self)) else { return nil }
            return neg ? Int64(exactly: -Int128(v)) : Int64(exactly: v)
        }
        guard let s = signedDigits(), p < bytes.count, bytes[p] == 58 else { return nil }
        p += 1
        guard let ns = signedDigits() else { return nil }
        if p < bytes.count, Lexer.isIdentChar(bytes[p]) { return nil }
        let start = pos
        pos = p
        guard abs(ns) < 1_000_000_000 else { throw error("nanoseconds out of range", start, pos) }
        guard s == 0 || ns == 0 || (s < 0) == (ns < 0) else {
            throw error("seconds and nanoseconds must have the same sign", start, pos)
        }
        return Timestamp(seconds: s, nanoseconds: Int32(ns))
    }

    /// `%K`: the key path its argument names (`"owner.name"`, `"dogs.@count"`), as the tokens of that path,
    /// all at the placeholder's position; `pos` is after the `K`.
    mutating func keyPathPlaceholder(_ start: Int) throws(QueryError) -> Token {
        guard let args = keyPathArguments else {
            throw error("%K (a key path given as an argument) needs the arguments: use filter(\"%K == %@\", \"name\", value)", start, pos)
        }
        if let d = firstDollar { throw error("%K cannot be used with $n arguments; use %@ for the values", d.start, d.end) }
        let n = placeholders
        placeholders += 1
        guard n < args.count, case .value(.string(let path)) = args[n] else {
            throw error("%K needs a key path given as a string, and argument \(n) \(n < args.count ? "is not a string" : "is missing")", start, pos)
        }
        let r = SourceRange(start, pos)
        var out: [Token] = []
        for (i, name) in path.split(separator: ".", omittingEmptySubsequences: false).enumerated() {
            let bare = name.hasPrefix("@") ? name.dropFirst() : name[...]
            // Any name but an empty one: a property may be named `first name` (NSPredicate's %K takes it too);
            // an aggregate after `@` is a word.
            guard !bare.isEmpty, Lexer.isIdentifier(bare.utf8) || !name.hasPrefix("@") else {
                throw error("%K: '\(path)' is not a key path (names joined by '.')", start, pos)
            }
            if i > 0 { out.append(Token(kind: .symbol("."), range: r)) }
            out.append(Token(kind: name.hasPrefix("@") ? .atIdentifier(String(bare)) : .name(String(bare)), range: r))
        }
        keyPathsTaken.append(n)
        pending = Array(out.dropFirst())
        return out[0]
    }

    /// The bytes of `B64"…"`; `pos` is at the quote.
    mutating func base64(_ start: Int) throws(QueryError) -> [UInt8] {
        let s = try string(quote: peek()!)
        guard let data = Base64.decode(s) else { throw error("invalid base64 in binary literal", start, pos) }
        return data
    }

    /// `bin('text')`: the bytes of the string, or `bin(B64"…")`: the decoded bytes (Realm's binary literals);
    /// `pos` is at the `(`.
    mutating func binaryLiteral(_ start: Int) throws(QueryError) -> [UInt8] {
        pos += 1
        while let c = peek(), c == 32 { pos += 1 }
        if peek() == 66, peek(1) == 54, peek(2) == 52, peek(3) == 34 || peek(3) == 39 {  // B64"
            pos += 3
            let data = try base64(start)
            while let c = peek(), c == 32 { pos += 1 }
            guard peek() == 41 else { throw error("expected ')' to close bin(", start, pos) }
            pos += 1
            return data
        }
        guard let q = peek(), q == 39 || q == 34 else { throw error("bin(...) needs a quoted string: bin('text') or bin(B64\"…\")", start, pos) }
        let s = try string(quote: q)
        while let c = peek(), c == 32 { pos += 1 }
        guard peek() == 41 else { throw error("expected ')' to close bin(", start, pos) }
        pos += 1
        return Array(s.utf8)
    }

    /// `oid(24 hex digits)` or `uuid(8-4-4-4-12)`; `pos` is at the `(`.
    mutating func objectIdOrUUID(_ kind: String, _ start: Int) throws(QueryError) -> Token.Kind {
        pos += 1
        let s = pos
        while let c = peek(), c != 41 { pos += 1 }
        guard peek() == 41 else { throw error("unterminated \(kind)(...)", start, pos) }
        let body = String(decoding: bytes[s..<pos], as: UTF8.self).trimmingCharacters(in: " ")
        pos += 1
        if kind == "oid" {
            guard body.utf8.count == 24, let o = ObjectId(hexString: body) else {
                throw error("oid(...) needs 24 hexadecimal digits", start, pos)
            }
            return .objectId(o)
        }
        guard body.utf8.count == 36, let u = UUID(uuidString: body) else {
            throw error("uuid(...) needs the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", start, pos)
        }
        return .uuid(u)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (m + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}

/// Standard base64 (RFC 4648, padding optional), without Foundation.
enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func decode(_ s: String) -> [UInt8]? {
        var out: [UInt8] = []
        var acc: UInt32 = 0
        var bits = 0
        var padding = 0
        for c in s.utf8 {
            if c == 61 { padding += 1; continue }
            guard padding == 0 else { return nil }
            let v: UInt8
            switch c {
            case 65...90: v = c - 65
            case 97...122: v = c - 71
            case 48...57: v = c + 4
            case 43: v = 62
            case 47: v = 63
            default: return nil
            }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        guard padding <= 2 else { return nil }
        return out
    }

    static func encode(_ data: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < data.count {
            let b0 = UInt32(data[i])
            let b1 = i + 1 < data.count ? UInt32(data[i + 1]) : 0
            let b2 = i + 2 < data.count ? UInt32(data[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(i + 1 < data.count ? alphabet[Int(n >> 6 & 63)] : 61)
            out.append(i + 2 < data.count ? alphabet[Int(n & 63)] : 61)
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
