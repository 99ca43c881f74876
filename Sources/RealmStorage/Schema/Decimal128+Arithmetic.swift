/// Decimal arithmetic for aggregates (`@sum`, `@avg`), query arithmetic (`+ - * /`) and Realm's conversions
/// of binary floating point.
///
/// Results are those of IEEE 754-2008 decimal128 with rounding to nearest, ties to even (the mode Realm
/// Core's Intel library runs in): the exact result rounded to 34 significant digits, with the standard's
/// preferred exponent when the result is exact (the smaller operand exponent for a sum, the sum of the
/// exponents for a product, the dividend's minus the divisor's for a quotient, or as close to it as 34 digits
/// allow). An exponent above the range overflows to ±infinity;
/// below it, digits are rounded away (down to a zero with exponent −6176).
extension Decimal128 {
    /// The value with its sign bit flipped (NaN and zero too).
    public var negated: Decimal128 { Decimal128(low: low, high: high ^ (1 << 63)) }

    /// A NaN operand as an operation returns it: quiet, payload and sign kept.
    private var quieted: Decimal128 { Decimal128(low: low, high: high & ~(1 << 57)) }

    public static func + (a: Decimal128, b: Decimal128) -> Decimal128 {
        let pa = a.parts, pb = b.parts
        if pa.kind == .nan { return a.quieted }
        if pb.kind == .nan { return b.quieted }
        if pa.kind == .infinite {
            if pb.kind == .infinite && pb.negative != pa.negative { return .nan }
            return pa.negative ? .negativeInfinity : .infinity
        }
        if pb.kind == .infinite { return pb.negative ? .negativeInfinity : .infinity }
        return addFinite(pa, pb)
    }

    public static func - (a: Decimal128, b: Decimal128) -> Decimal128 { a + b.negated }

    public static func += (a: inout Decimal128, b: Decimal128) { a = a + b }

    /// `x + y` for finite values.
    private static func addFinite(_ a: Parts, _ b: Parts) -> Decimal128 {
        // x has the larger exponent.
        let (x, y) = a.exponent >= b.exponent ? (a, b) : (b, a)
        if x.coefficient == 0 && y.coefficient == 0 {
            // An exact zero is +0 unless both operands are −0; its exponent is the smaller one (`rounded` clamps
            // the exponent of a non-canonical zero into range).
            return rounded(negative: x.negative && y.negative, coefficient: 0, exponent: y.exponent, sticky: false)
        }
        if y.coefficient == 0 {
            // x, moved toward the preferred (smaller) exponent as far as 34 digits allow.
            let shift = Swift.min(x.exponent - y.exponent, maxDigits - digitCount(x.coefficient))
            return Decimal128(negative: x.negative, coefficient: x.coefficient * powersOfTen[shift], exponent: x.exponent - shift)
        }
        if x.coefficient == 0 { return Decimal128(negative: y.negative, coefficient: y.coefficient, exponent: y.exponent) }
        let d = x.exponent - y.exponent
        if d == 0 && x.negative == y.negative {
            // The common case (a column of prices): one addition, rounded only when it carries past 34 digits.
            return rounded(negative: x.negative, coefficient: x.coefficient + y.coefficient, exponent: x.exponent, sticky: false)
        }
        let nx = digitCount(x.coefficient)
        if nx + d <= 37 {
            // Exact in 128 bits: x × 10^d < 10³⁷, plus y < 10³⁴.
            let big = x.coefficient * powersOfTen[d]
            if x.negative == y.negative {
                return rounded(negative: x.negative, coefficient: big + y.coefficient, exponent: y.exponent, sticky: false)
            }
            if big == y.coefficient { return Decimal128(negative: false, coefficient: 0, exponent: y.exponent) }
            return big > y.coefficient
                ? rounded(negative: x.negative, coefficient: big - y.coefficient, exponent: y.exponent, sticky: false)
                : rounded(negative: y.negative, coefficient: y.coefficient - big, exponent: y.exponent, sticky: false)
        }
        // y lies wholly below the 37 digits of x taken here (at exponent w > y's); its digits below w only
        // decide the rounding, as a sticky bit below the three or more digits the result drops.
        let k = 37 - nx
        let w = x.exponent - k
        let big = x.coefficient * powersOfTen[k]
        let shift = w - y.exponent
        let (q, r): (UInt128, UInt128) = shift > 38
            ? (0, y.coefficient) : y.coefficient.quotientAndRemainder(dividingBy: powersOfTen[shift])
        if x.negative == y.negative { return rounded(negative: x.negative, coefficient: big + q, exponent: w, sticky: r != 0) }
        // big − q − (a fraction): one unit less, with the rest (strictly between 0 and 1) as the sticky bit.
        return r != 0
            ? rounded(negative: x.negative, coefficient: big - q - 1, exponent: w, sticky: true)
            : rounded(negative: x.negative, coefficient: big - q, exponent: w, sticky: false)
    }

    /// The quotient by an integer (for `@avg`): exact when it has at most 34 digits (with the exponent closest
    /// to this value's), else rounded to 34 digits. `x / 0` is ±infinity, `0 / 0` NaN.
    public func divided(by n: Int) -> Decimal128 {
        let p = parts
        let negative = p.negative != (n < 0)
        switch p.kind {
        case .nan: return quieted
        case .infinite: return negative ? .negativeInfinity : .infinity
        case .finite: break
        }
        if n == 0 { return p.coefficient == 0 ? .nan : (negative ? .negativeInfinity : .infinity) }
        return Decimal128.quotient(negative: negative, p.coefficient, by: UInt128(n.magnitude), exponent: p.exponent)
    }

    /// `(−1)^negative × c / m × 10^e` for m > 0 and m < 10³⁵: exact when it has at most 34 digits (with
    /// the exponent closest to `e`), else rounded to 34 digits.
    private static func quotient(negative: Bool, _ c: UInt128, by m: UInt128, exponent: Int) -> Decimal128 {
        if c == 0 { return rounded(negative: negative, coefficient: 0, exponent: exponent, sticky: false) }
        var (q, r) = c.quotientAndRemainder(dividingBy: m)
        var e = exponent
        // Long division, one digit at a time (r < m < 10³⁵, so r × 10 fits), until exact or 35 digits: the
        // 35th is the rounding digit, the remainder the sticky bit.
        while r != 0 && q < powersOfTen[34] && e >= minExponent {
            r *= 10
            q = q * 10 + r / m
            r %= m
            e -= 1
        }
        return rounded(negative: negative, coefficient: q, exponent: e, sticky: r != 0)
    }

    /// The product, exact when it has at most 34 digits (with the sum of the exponents), else rounded to 34
    /// digits. Infinity times zero is NaN.
    public static func * (a: Decimal128, b: Decimal128) -> Decimal128 {
        let pa = a.parts, pb = b.parts
        if pa.kind == .nan { return a.quieted }
        if pb.kind == .nan { return b.quieted }
        let negative = pa.negative != pb.negative
        if pa.kind == .infinite || pb.kind == .infinite {
            if (pa.kind == .finite && pa.coefficient == 0) || (pb.kind == .finite && pb.coefficient == 0) { return .nan }
            return negative ? .negativeInfinity : .infinity
        }
        let e = pa.exponent + pb.exponent
        let (high, low) = pa.coefficient.multipliedFullWidth(by: pb.coefficient)
        if high == 0 { return rounded(negative: negative, coefficient: low, exponent: e, sticky: false) }
        // 39 to 68 digits (the product is at least 2¹²⁸): keep 35 of them, the rest only decide the rounding.
        var n = 39
        while n < 68 {
            let (ph, pl) = powersOfTen[n - 34].multipliedFullWidth(by: powersOfTen[34])  // 10ⁿ
            if high < ph || (high == ph && low < pl) { break }
            n += 1
        }
        let divisor = powersOfTen[n - 35]
        let (q1, r1) = high.quotientAndRemainder(dividingBy: divisor)
        precondition(q1 == 0, "a 35-digit quotient fits in 128 bits")
        let (q, r) = divisor.dividingFullWidth((r1, low))
        return rounded(negative: negative, coefficient: q, exponent: e + n - 35, sticky: r != 0)
    }

    /// The quotient, exact when it has at most 34 digits (with the exponent closest to the dividend's minus
    /// the divisor's), else rounded to 34 digits. `x / 0` is ±infinity, `0 / 0` and `∞ / ∞` NaN, `x / ∞` zero.
    public static func / (a: Decimal128, b: Decimal128) -> Decimal128 {
        let pa = a.parts, pb = b.parts
        if pa.kind == .nan { return a.quieted }
        if pb.kind == .nan { return b.quieted }
        let negative = pa.negative != pb.negative
        switch (pa.kind, pb.kind) {
        case (.infinite, .infinite): return .nan
        case (.infinite, _): return negative ? .negativeInfinity : .infinity
        case (_, .infinite): return Decimal128(negative: negative, coefficient: 0, exponent: minExponent)
        default: break
        }
        if pb.coefficient == 0 { return pa.coefficient == 0 ? .nan : (negative ? .negativeInfinity : .infinity) }
        return quotient(negative: negative, pa.coefficient, by: pb.coefficient, exponent: pa.exponent - pb.exponent)
    }

    /// `(−1)^negative × c × 10^e` rounded half-to-even to 34 digits and into the exponent range. `sticky`
    /// says the exact magnitude is a little above `c × 10^e` (by less than one unit of `c`'s last digit); it
    /// is set only when some digit of `c` is dropped here (`c` over 34 digits, or `e` below the range).
    static func rounded(negative: Bool, coefficient c0: UInt128, exponent e0: Int, sticky: Bool) -> Decimal128 {
        if !sticky && c0 <= maxCoefficient && e0 >= minExponent && e0 <= maxExponent {
            return Decimal128(negative: negative, coefficient: c0, exponent: e0)  // nothing to round
        }
        var c = c0, e = e0
        let drop = Swift.max(0, digitCount(c) - maxDigits, minExponent - e)
        if drop > 38 {
            c = 0  // below half of the last place kept
            e += drop
        } else if drop > 0 {
            let p = powersOfTen[drop]
            let (q, r) = c.quotientAndRemainder(dividingBy: p)
            let half = p / 2
            c = q
            if r > half || (r == half && (sticky || q & 1 == 1)) { c += 1 }
            e += drop
            if c > maxCoefficient {  // 10³⁴ → 10³³ × 10
                c /= 10
                e += 1
            }
        }
        return clamped(negative: negative, coefficient: c, exponent: e)
    }

    // MARK: Integers

    /// The value as an Int64 when it is an integer in range (any exponent: `4.00`, `4E+1`), else nil.
    public var exactInt64: Int64? {
        let p = parts
        guard p.kind == .finite else { return nil }
        var c = p.coefficient
        if p.exponent < 0 {
            guard c != 0 else { return 0 }
            guard -p.exponent <= 38 else { return nil }
            let (q, r) = c.quotientAndRemainder(dividingBy: Decimal128.powersOfTen[-p.exponent])
            guard r == 0 else { return nil }
            c = q
        } else if p.exponent > 0 && c != 0 {
            guard p.exponent <= 19 else { return nil }
            let (m, overflow) = c.multipliedReportingOverflow(by: Decimal128.powersOfTen[p.exponent])
            guard !overflow else { return nil }
            c = m
        }
        if p.negative {
            guard c <= UInt128(Int64.max) + 1 else { return nil }
            return c == UInt128(Int64.max) + 1 ? .min : -Int64(c)
        }
        guard c <= UInt128(Int64.max) else { return nil }
        return Int64(c)
    }

    // MARK: Realm's conversion of binary floating point

    /// A double as Realm Core converts it where it compares or adds a double with a decimal (a mixed value,
    /// a double argument or property against a decimal): the exact binary value rounded half-to-even to 34
    /// digits, and then, when that needs more than `significantDigits` digits, to that many (15 for a double,
    /// 7 for a float), so that `0.1` is `0.100000000000000` and `0.1 + 0.2` (0.30000000000000004) is 0.3.
    /// NaN and infinities map to their decimal counterparts.
    public init(_ d: Double, significantDigits: Int) {
        precondition(significantDigits >= 1 && significantDigits <= Decimal128.maxDigits, "significantDigits out of range")
        if d.isNaN { self = .nan; return }
        if d.isInfinite { self = d < 0 ? .negativeInfinity : .infinity; return }
        let negative = d.sign == .minus
        if d == 0 { self.init(negative: negative, coefficient: 0, exponent: 0); return }
        let p: Parts
        if let exact = Decimal128(exactly: d) {
            p = exact.parts  // 34 digits or fewer: no rounding (integers, halves, quarters ...)
        } else {
            let (digits, exponent) = Decimal128.exactDigits(d.magnitude)
            p = Decimal128.make(negative: negative, digits: digits, exponent: exponent).parts
        }
        let n = Decimal128.digitCount(p.coefficient)
        if n <= significantDigits {
            self.init(negative: negative, coefficient: p.coefficient, exponent: p.exponent)
            return
        }
        self = Decimal128.rounded(negative: negative, coefficient: p.coefficient / Decimal128.powersOfTen[n - significantDigits - 1],
                                  exponent: p.exponent + n - significantDigits - 1, sticky: p.coefficient % Decimal128.powersOfTen[n - significantDigits - 1] != 0,
                                  digits: significantDigits)
    }

    /// `rounded` to `digits` significant digits instead of 34 (c has exactly `digits` + 1 digits).
    private static func rounded(negative: Bool, coefficient c: UInt128, exponent e: Int, sticky: Bool, digits: Int) -> Decimal128 {
        var (q, r) = c.quotientAndRemainder(dividingBy: 10)
        if r > 5 || (r == 5 && (sticky || q & 1 == 1)) { q += 1 }
        var exponent = e + 1
        if q == powersOfTen[digits] {
            q /= 10
            exponent += 1
        }
        // A double's exponent is far inside decimal128's range.
        return Decimal128(negative: negative, coefficient: q, exponent: exponent)
    }

    /// The decimal digits (no leading zeros) and exponent of a finite positive double's exact value.
    static func exactDigits(_ d: Double) -> (digits: [UInt8], exponent: Int) {
        let (m, e2) = Decimal128.binaryParts(d)
        // m × 2^e2 as little-endian 32-bit limbs: m × 2^e2, or m × 5^k × 10^−k.
        var limbs: [UInt32] = [UInt32(truncatingIfNeeded: m), UInt32(truncatingIfNeeded: m >> 32)]
        func multiply(by f: UInt32) {
            var carry: UInt64 = 0
            for i in limbs.indices {
                let v = UInt64(limbs[i]) * UInt64(f) + carry
                limbs[i] = UInt32(truncatingIfNeeded: v)
                carry = v >> 32
            }
            if carry != 0 { limbs.append(UInt32(carry)) }
        }
        var exponent = 0
        if e2 >= 0 {
            var left = e2
            while left > 0 { let s = Swift.min(left, 31); multiply(by: 1 << UInt32(s)); left -= s }
        } else {
            var left = -e2
            exponent = e2
            while left > 0 { let s = Swift.min(left, 13); multiply(by: Decimal128.powersOfFive[s]); left -= s }
        }
        // To decimal, nine digits at a time (least significant group first).
        var groups: [UInt32] = []
        while limbs.contains(where: { $0 != 0 }) {
            var rem: UInt64 = 0
            for i in limbs.indices.reversed() {
                let v = rem << 32 | UInt64(limbs[i])
                limbs[i] = UInt32(v / 1_000_000_000)
                rem = v % 1_000_000_000
            }
            groups.append(UInt32(rem))
            while limbs.last == 0 { limbs.removeLast() }
        }
        var digits: [UInt8] = []
        for (i, g) in groups.reversed().enumerated() {
            var chunk = [UInt8](repeating: 0, count: 9)
            var v = g
            for j in stride(from: 8, through: 0, by: -1) { chunk[j] = UInt8(v % 10); v /= 10 }
            digits += i == 0 ? Array(chunk.drop { $0 == 0 }) : chunk
        }
        return (digits, exponent)
    }

    private static let powersOfFive: [UInt32] = {
        var p: [UInt32] = [1]
        for _ in 1...13 { p.append(p[p.count - 1] * 5) }
        return p
    }()
}
