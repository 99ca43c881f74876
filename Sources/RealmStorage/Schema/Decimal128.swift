/// An IEEE 754-2008 128-bit decimal floating-point value (BID encoding), as Realm and MongoDB store it.
///
/// The 128-bit word (`high` is bits 127–64, `low` bits 63–0) holds, for a finite value,
/// a sign bit (127), a 14-bit exponent biased by 6176 (bits 126–113) and a 113-bit binary
/// coefficient (bits 112–0); the value is `(−1)^sign × coefficient × 10^exponent` with
/// `0 ≤ coefficient ≤ 10³⁴ − 1` and `−6176 ≤ exponent ≤ 6111` (so the adjusted exponent
/// `exponent + digits − 1` lies in emin…emax = −6143…6144 for normal numbers). Bits 126–122 equal
/// to `11110` mean infinity, `11111` NaN (bit 121 set: signalling). Encodings whose bits 126–125 are
/// `11` but are not infinity or NaN, and encodings with a coefficient above 10³⁴ − 1, are
/// non-canonical and read as zero (with their exponent), as the standard requires.
///
/// Parsing (`init?(string:)`) follows IEEE 754 conversion: more than 34 significant digits are
/// rounded half-to-even; an exponent above the range is first absorbed by appending zeros to the
/// coefficient (clamping) and otherwise overflows to ±infinity; an exponent below the range
/// rounds digits away half-to-even (possibly to a zero with exponent −6176). Zeros clamp their
/// exponent into range. Only a malformed string gives nil.
///
/// Equality, hashing and ordering are **numeric**: `1.0 == 1.00`, `0 == -0`; values that differ
/// only in their exponent (cohort members) are equal and hash alike. The order is total:
/// every NaN (of either sign, quiet or signalling) is equal to every other NaN and sorts before
/// everything else, then −infinity, the finite values, and +infinity.
public struct Decimal128: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The low and high 64 bits of the BID encoding.
    public var low: UInt64
    public var high: UInt64

    public init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// Zero with exponent 0.
    public static let zero = Decimal128(low: 0, high: 0x3040_0000_0000_0000)
    /// The canonical quiet NaN.
    public static let nan = Decimal128(low: 0, high: 0x7C00_0000_0000_0000)
    public static let infinity = Decimal128(low: 0, high: 0x7800_0000_0000_0000)
    public static let negativeInfinity = Decimal128(low: 0, high: 0xF800_0000_0000_0000)

    static let exponentBias = 6176
    /// Smallest exponent of the coefficient (the quantum), −6176.
    static let minExponent = -6176
    /// Largest exponent of the coefficient, 6111 (6144 − 33).
    static let maxExponent = 6111
    static let maxDigits = 34
    static let maxCoefficient: UInt128 = powersOfTen[34] - 1

    /// 10⁰ … 10³⁸ (10³⁸ < 2¹²⁸).
    static let powersOfTen: [UInt128] = {
        var p: [UInt128] = [1]
        for _ in 1...38 { p.append(p[p.count - 1] * 10) }
        return p
    }()

    // MARK: Decoding and encoding

    enum Kind: UInt8 { case nan = 0, infinite = 1, finite = 2 }

    /// The decoded fields. For NaN and infinity `coefficient` is 0 and `exponent` 0.
    struct Parts {
        var kind: Kind
        var negative: Bool
        var coefficient: UInt128
        var exponent: Int
    }

    var parts: Parts {
        let negative = high >> 63 != 0
        let top5 = (high >> 58) & 0x1F
        if top5 == 0x1F { return Parts(kind: .nan, negative: negative, coefficient: 0, exponent: 0) }
        if top5 == 0x1E { return Parts(kind: .infinite, negative: negative, coefficient: 0, exponent: 0) }
        if (high >> 61) & 3 == 3 {
            // Coefficient 0b100… (≥ 2¹¹³): non-canonical, hence zero.
            let e = Int((high >> 47) & 0x3FFF) - Decimal128.exponentBias
            return Parts(kind: .finite, negative: negative, coefficient: 0, exponent: e)
        }
        let e = Int((high >> 49) & 0x3FFF) - Decimal128.exponentBias
        var c = UInt128(high & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(low)
        if c > Decimal128.maxCoefficient { c = 0 }
        return Parts(kind: .finite, negative: negative, coefficient: c, exponent: e)
    }

    /// A finite value; `coefficient` must be at most 10³⁴ − 1 and `exponent` within −6176…6111.
    init(negative: Bool, coefficient: UInt128, exponent: Int) {
        precondition(coefficient <= Decimal128.maxCoefficient, "Decimal128 coefficient out of range")
        precondition(exponent >= Decimal128.minExponent && exponent <= Decimal128.maxExponent,
                     "Decimal128 exponent out of range")
        let biased = UInt64(exponent + Decimal128.exponentBias)
        high = (negative ? 1 << 63 : 0) | biased << 49 | UInt64(truncatingIfNeeded: coefficient >> 64)
        low = UInt64(truncatingIfNeeded: coefficient)
    }

    // MARK: Properties

    public var isNaN: Bool { (high >> 58) & 0x1F == 0x1F }
    public var isInfinite: Bool { (high >> 58) & 0x1F == 0x1E }
    public var isFinite: Bool { (high >> 59) & 0xF != 0xF }
    /// The sign bit: true also for −0 and for a NaN with its sign bit set.
    public var isNegative: Bool { high >> 63 != 0 }
    /// True for a finite zero of any sign and exponent (including non-canonical encodings).
    public var isZero: Bool { let p = parts; return p.kind == .finite && p.coefficient == 0 }

    // MARK: Conversions

    /// The integer `v` with exponent 0 (exact).
    public init(_ v: Int64) {
        self.init(negative: v < 0, coefficient: UInt128(v.magnitude), exponent: 0)
    }

    /// The shortest decimal that round-trips to `d` (Swift's `Double.description` digits), with
    /// trailing fractional zeros removed down to exponent 0: `0.1` → `0.1`, `100.0` → `100`,
    /// `1e20` → `1E+20`, `-0.0` → `-0`. NaN gives NaN, infinities give infinities.
    public init(_ d: Double) {
        if d.isNaN { self = .nan; return }
        if d.isInfinite { self = d < 0 ? .negativeInfinity : .infinity; return }
        guard var p = Decimal128(string: d.description)?.parts else {
            preconditionFailure("Double.description is not a decimal: \(d)")
        }
        while p.exponent < 0 && p.coefficient % 10 == 0 && p.coefficient != 0 {
            p.coefficient /= 10
            p.exponent += 1
        }
        if p.coefficient == 0 { p.exponent = 0 }
        self.init(negative: p.negative, coefficient: p.coefficient, exponent: p.exponent)
    }

    /// A finite nonzero double's magnitude as `m × 2^e`, `m` odd.
    static func binaryParts(_ d: Double) -> (m: UInt64, e: Int) {
        var m = d.exponentBitPattern == 0 ? d.significandBitPattern : d.significandBitPattern | 1 << 52
        var e = d.exponentBitPattern == 0 ? -1074 : Int(d.exponentBitPattern) - 1075
        let tz = m.trailingZeroBitCount
        m >>= tz
        e += tz
        return (m, e)
    }

    /// The exact binary value of `d` if it fits in 34 decimal digits (e.g. `0.5`, `0.375`, `2⁵³`),
    /// else nil (e.g. `0.1`, whose exact value needs 55 digits). NaN gives nil; infinities give
    /// infinities. The result has exponent 0 for integers, else no trailing fractional zeros.
    public init?(exactly d: Double) {
        if d.isNaN { return nil }
        if d.isInfinite { self = d < 0 ? .negativeInfinity : .infinity; return }
        let negative = d.sign == .minus
        if d == 0 { self.init(negative: negative, coefficient: 0, exponent: 0); return }
        let (m, e2) = Decimal128.binaryParts(d)
        var c = UInt128(m)
        if e2 >= 0 {
            guard 64 - m.leadingZeroBitCount + e2 <= 113 else { return nil }
            c <<= e2
            guard c <= Decimal128.maxCoefficient else { return nil }
            self.init(negative: negative, coefficient: c, exponent: 0)
        } else {
            // m / 2^k = m × 5^k / 10^k
            let k = -e2
            for _ in 0..<k {
                let (r, overflow) = c.multipliedReportingOverflow(by: 5)
                guard !overflow, r <= Decimal128.maxCoefficient else { return nil }
                c = r
            }
            self.init(negative: negative, coefficient: c, exponent: -k)
        }
    }

    /// The nearest `Double` (correctly rounded); NaN and infinities map to their `Double` counterparts.
    public var doubleValue: Double {
        let p = parts
        switch p.kind {
        case .nan: return .nan
        case .infinite: return p.negative ? -.infinity : .infinity
        case .finite: break
        }
        var d: Double
        if p.coefficient == 0 {
            d = 0
        } else if p.coefficient <= 1 << 53 && p.exponent >= -22 && p.exponent <= 22 {
            // Both operands exact, so one correctly rounded operation.
            d = Double(UInt64(p.coefficient))
            if p.exponent >= 0 { d *= Decimal128.doublePowersOfTen[p.exponent] }
            else { d /= Decimal128.doublePowersOfTen[-p.exponent] }
        } else {
            // strtod-style conversion of the canonical string is correctly rounded.
            guard let v = Double(Decimal128(negative: false, coefficient: p.coefficient, exponent: p.exponent).description)
            else { preconditionFailure("unparsable Decimal128 description") }
            d = v
        }
        return p.negative ? -d : d
    }

    private static let doublePowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    // MARK: Parsing

    /// Parses `[+|-] (digits [. digits*] | . digits) [(e|E) [+|-] digits]`, or
    /// `[+|-] (Inf | Infinity | NaN)` (case-insensitive). No whitespace is allowed.
    /// See the type's documentation for rounding, clamping and overflow.
    public init?(string: String) {
        var s = string
        guard let v = s.withUTF8({ Decimal128.parse($0) }) else { return nil }
        self = v
    }

    static func parse(_ s: UnsafeBufferPointer<UInt8>) -> Decimal128? {
        var i = 0
        let n = s.count
        var negative = false
        if i < n && (s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-")) {
            negative = s[i] == UInt8(ascii: "-")
            i += 1
        }
        if i < n && !isDigit(s[i]) && s[i] != UInt8(ascii: ".") {
            let word = String(decoding: UnsafeBufferPointer(rebasing: s[i...]), as: UTF8.self).lowercased()
            switch word {
            case "inf", "infinity": return negative ? .negativeInfinity : .infinity
            case "nan": return negative ? Decimal128(low: 0, high: 0xFC00_0000_0000_0000) : .nan
            default: return nil
            }
        }
        var digits: [UInt8] = []  // significant digits, leading zeros dropped
        var sawDigit = false
        var sawPoint = false
        var fractionDigits = 0
        while i < n {
            let c = s[i]
            if isDigit(c) {
                sawDigit = true
                if sawPoint { fractionDigits += 1 }
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c &- UInt8(ascii: "0")) }
            } else if c == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
            } else {
                break
            }
            i += 1
        }
        guard sawDigit else { return nil }
        var exp = 0
        if i < n && (s[i] == UInt8(ascii: "e") || s[i] == UInt8(ascii: "E")) {
            i += 1
            var expNegative = false
            if i < n && (s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-")) {
                expNegative = s[i] == UInt8(ascii: "-")
                i += 1
            }
            var any = false
            while i < n && isDigit(s[i]) {
                any = true
                // Saturate: any magnitude beyond this overflows or underflows anyway.
                exp = min(exp * 10 + Int(s[i] &- UInt8(ascii: "0")), 1 << 40)
                i += 1
            }
            guard any else { return nil }
            if expNegative { exp = -exp }
        }
        guard i == n else { return nil }
        return make(negative: negative, digits: digits, exponent: exp - fractionDigits)
    }

    /// `(−1)^negative × coefficient × 10^exponent` for a coefficient of at most 34 digits and an exponent not
    /// below the range: an exponent above it is brought down by adding zeros to the coefficient while they fit
    /// (a zero takes the largest exponent), else the value overflows to infinity.
    static func clamped(negative: Bool, coefficient c0: UInt128, exponent e0: Int) -> Decimal128 {
        var coefficient = c0, exponent = e0
        if exponent > maxExponent {
            if coefficient == 0 {
                exponent = maxExponent
            } else {
                while exponent > maxExponent && coefficient <= maxCoefficient / 10 {
                    coefficient *= 10
                    exponent -= 1
                }
                if exponent > maxExponent { return negative ? .negativeInfinity : .infinity }
            }
        }
        return Decimal128(negative: negative, coefficient: coefficient, exponent: exponent)
    }

    @inline(__always) private static func isDigit(_ c: UInt8) -> Bool {
        c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
    }

    /// `(−1)^negative × digits × 10^e0`, rounded half-to-even into range (see the type's documentation).
    /// `digits` has no leading zeros.
    static func make(negative: Bool, digits: [UInt8], exponent e0: Int) -> Decimal128 {
        let n = digits.count
        if n == 0 {
            return Decimal128(negative: negative, coefficient: 0,
                              exponent: Swift.min(Swift.max(e0, minExponent), maxExponent))
        }
        let drop = Swift.max(0, n - maxDigits, minExponent - e0)
        let keep = n - drop  // may be negative: every digit is dropped
        var coefficient: UInt128 = 0
        if keep > 0 {
            for d in digits[0..<keep] { coefficient = coefficient * 10 + UInt128(d) }
        }
        var exponent = e0 + drop
        if drop > 0 {
            let roundDigit: UInt8 = keep >= 0 ? digits[keep] : 0
            var sticky = false
            let stickyStart = keep >= 0 ? keep + 1 : 0
            if stickyStart < n {
                for d in digits[stickyStart...] where d != 0 { sticky = true; break }
            }
            if roundDigit > 5 || (roundDigit == 5 && (sticky || coefficient & 1 == 1)) {
                coefficient += 1
                if coefficient > maxCoefficient {  // 10³⁴ → 10³³ × 10
                    coefficient /= 10
                    exponent += 1
                }
            }
        }
        return clamped(negative: negative, coefficient: coefficient, exponent: exponent)
    }

    // MARK: Printing

    /// The canonical string (MongoDB's Decimal128 form): `NaN`, `Infinity`, `-Infinity`; for a finite
    /// value with exponent ≤ 0 and adjusted exponent ≥ −6, plain notation with exactly −exponent
    /// fraction digits (`1.00`, `-0.001`, `0E+0` prints `0`); otherwise scientific notation with one
    /// integer digit and `E+`/`E-` followed by the adjusted exponent (`1E+3`, `1.5E-7`, `0E-6176`).
    /// Parsing it gives back the same encoding (same coefficient and exponent).
    public var description: String {
        let p = parts
        switch p.kind {
        case .nan: return "NaN"
        case .infinite: return p.negative ? "-Infinity" : "Infinity"
        case .finite: break
        }
        let digits = Array(String(p.coefficient).utf8)
        var out: [UInt8] = p.negative ? [UInt8(ascii: "-")] : []
        let adjusted = p.exponent + digits.count - 1
        if p.exponent <= 0 && adjusted >= -6 {
            if p.exponent == 0 {
                out += digits
            } else {
                let integerDigits = digits.count + p.exponent
                if integerDigits > 0 {
                    out += digits[0..<integerDigits]
                    out.append(UInt8(ascii: "."))
                    out += digits[integerDigits...]
                } else {
                    out += Array("0.".utf8)
                    out += repeatElement(UInt8(ascii: "0"), count: -integerDigits)
                    out += digits
                }
            }
        } else {
            out.append(digits[0])
            if digits.count > 1 {
                out.append(UInt8(ascii: "."))
                out += digits[1...]
            }
            out.append(UInt8(ascii: "E"))
            out.append(adjusted >= 0 ? UInt8(ascii: "+") : UInt8(ascii: "-"))
            out += Array(String(adjusted.magnitude).utf8)
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Numeric comparison

    /// Decimal digits of `c` (1 for 0).
    static func digitCount(_ c: UInt128) -> Int {
        var n = 1
        while n < powersOfTen.count && c >= powersOfTen[n] { n += 1 }
        return n
    }

    /// Position in the total order: NaN, −∞, finite, +∞.
    private static func rank(_ p: Parts) -> Int {
        switch p.kind {
        case .nan: return 0
        case .infinite: return p.negative ? 1 : 3
        case .finite: return 2
        }
    }

    /// −1, 0 or 1 under the numeric total order described on the type.
    static func compare(_ a: Decimal128, _ b: Decimal128) -> Int {
        if a.high == b.high && a.low == b.low { return 0 }
        let pa = a.parts, pb = b.parts
        let ra = rank(pa), rb = rank(pb)
        if ra != rb { return ra < rb ? -1 : 1 }
        if ra != 2 { return 0 }
        let sa = pa.coefficient == 0 ? 0 : (pa.negative ? -1 : 1)
        let sb = pb.coefficient == 0 ? 0 : (pb.negative ? -1 : 1)
        if sa != sb { return sa < sb ? -1 : 1 }
        if sa == 0 { return 0 }
        let m = compareMagnitudes(pa.coefficient, pa.exponent, pb.coefficient, pb.exponent)
        return sa > 0 ? m : -m
    }

    /// Compares c1 × 10^e1 with c2 × 10^e2 for nonzero coefficients.
    private static func compareMagnitudes(_ c1: UInt128, _ e1: Int, _ c2: UInt128, _ e2: Int) -> Int {
        let d1 = digitCount(c1), d2 = digitCount(c2)
        let adj1 = e1 + d1 - 1, adj2 = e2 + d2 - 1
        if adj1 != adj2 { return adj1 < adj2 ? -1 : 1 }
        // Same leading-digit position: scale the shorter coefficient to the other's length (≤ 34 digits).
        var x = c1, y = c2
        if d1 < d2 { x *= powersOfTen[d2 - d1] } else if d2 < d1 { y *= powersOfTen[d1 - d2] }
        return x == y ? 0 : (x < y ? -1 : 1)
    }

    public static func == (a: Decimal128, b: Decimal128) -> Bool { compare(a, b) == 0 }
    public static func < (a: Decimal128, b: Decimal128) -> Bool { compare(a, b) < 0 }

    /// Hashes the numeric value: cohort members (`1.0`, `1.00`), ±0, and all NaNs hash alike.
    public func hash(into h: inout Hasher) {
        var p = parts
        h.combine(p.kind.rawValue)
        switch p.kind {
        case .nan:
            return
        case .infinite:
            h.combine(p.negative)
        case .finite:
            if p.coefficient == 0 { return }
            while p.coefficient % 10 == 0 {
                p.coefficient /= 10
                p.exponent += 1
            }
            h.combine(p.negative)
            h.combine(p.coefficient)
            h.combine(p.exponent)
        }
    }
}
