/// How the index of a mixed property is searched for a value.
///
/// Numbers of different types are equal by value in a mixed property (1, 1.0 and decimal 1 are one value in
/// `SetOrder`, and the query language compares them across types, a float with a double at float precision
/// and a decimal with a double at 15 significant digits), so an equality lookup cannot be one prefix. Each
/// kind of number keeps its own tag: an int its exact encoding, a float or double its `Double`, a decimal its
/// nearest `Double`. A lookup of a number reads the int that equals it exactly (if any) and, under the
/// double and decimal tags, every entry whose `Double` lies in a window around the number's `Double` wide
/// enough to hold every value any of those comparisons calls equal. What the index returns is a superset;
/// the caller confirms each candidate against the stored value with the comparison it means.
extension IndexKey {
    /// A part of a mixed index to read: the entries whose encoded value starts with `prefix`, or whose first
    /// 9 bytes (a numeric tag and its 8 bytes) lie in `lower...upper`.
    enum Span: Equatable {
        case prefix([UInt8])
        case range(lower: [UInt8], upper: [UInt8])
    }

    /// Relative half-width of the window around a number: above the 5e-7 of a decimal compared with a float
    /// at 7 significant digits, the largest relative rounding any mixed comparison makes.
    static let relativeWindow = 4e-6
    /// Absolute half-width: covers the smallest subnormal floats (a double rounds to float 0 below 7e-46).
    static let absoluteWindow = 1e-44

    /// The spans of a mixed index that hold every entry whose value may equal `value`; nil when `value` is a
    /// link or a nested collection, which the index does not search.
    static func mixedSpans(for value: Value) -> [Span]? {
        switch value {
        case .link, .typedLink, .list, .dictionary:
            return nil
        case .int(let i):
            return numberSpans(exactly: i, near: Double(i))
        case .float(let f):
            return numberSpans(exactly: exactInt(Double(f)), near: Double(f))
        case .double(let d):
            return numberSpans(exactly: exactInt(d), near: d)
        case .decimal128(let d):
            return numberSpans(exactly: d.exactInt64, near: d.doubleValue)
        default:
            return [.prefix(encode(value))]
        }
    }

    /// The int equal to the number (if any), then its double and decimal windows.
    private static func numberSpans(exactly int: Int64?, near x: Double) -> [Span] {
        (int.map { [Span.prefix(encode(.int($0)))] } ?? []) + numberWindows(x)
    }

    /// The int a double equals exactly, if any.
    private static func exactInt(_ d: Double) -> Int64? {
        guard d == d.rounded(), d >= -9_223_372_036_854_775_808.0, d < 9_223_372_036_854_775_808.0 else { return nil }
        return Int64(d)
    }

    /// The double and decimal spans around `x`: the NaN key alone for a NaN, else `x` ± the window, reaching to
    /// the infinity beyond the float range (a double above it equals the float infinity).
    private static func numberWindows(_ x: Double) -> [Span] {
        var lo: Double, hi: Double
        let floatMax = Double(Float.greatestFiniteMagnitude) * (1 - relativeWindow)
        if x.isNaN {
            lo = .nan
            hi = .nan
        } else if x.isInfinite {
            lo = x > 0 ? floatMax : -.infinity
            hi = x > 0 ? .infinity : -floatMax
        } else {
            let w = abs(x) * relativeWindow + absoluteWindow
            lo = x - w
            hi = x + w
            if hi > floatMax { hi = .infinity }
            if lo < -floatMax { lo = -.infinity }
        }
        return [doubleTag, decimalTag].map { tag in
            var l: [UInt8] = [tag], u: [UInt8] = [tag]
            appendBigEndian(orderedBits(lo), to: &l)
            appendBigEndian(orderedBits(hi), to: &u)
            return .range(lower: l, upper: u)
        }
    }

    /// 8 bytes of a double that order as the double does (big-endian): NaN (any) is 0, below every number;
    /// -0.0 is 0.0.
    static func orderedBits(_ d: Double) -> UInt64 {
        if d.isNaN { return 0 }
        let bits = d == 0 ? 0 : d.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }
}
