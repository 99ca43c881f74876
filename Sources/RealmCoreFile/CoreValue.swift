/// A value read from a Realm Core file.
public enum CoreValue: Sendable, Hashable {
    case null
    case int(Int64)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case binary([UInt8])
    /// Seconds and nanoseconds since 1970-01-01 UTC (nanoseconds carry the sign of seconds).
    case timestamp(seconds: Int64, nanoseconds: Int32)
    case decimal128(CoreDecimal128)
    /// 12 bytes in display order (4-byte big-endian seconds first).
    case objectId([UInt8])
    /// 16 bytes in RFC 4122 order.
    case uuid([UInt8])
    /// A link to an object of `className` with object key `key`.
    case link(CoreLink)
    case list([CoreValue])
    case set([CoreValue])
    case dictionary([CoreDictionaryEntry])

    public var isNull: Bool { if case .null = self { true } else { false } }
}

/// The target of a link: a class (the table's name without `class_` for classes) and an object key.
public struct CoreLink: Sendable, Hashable, CustomStringConvertible {
    public let className: String
    public let key: Int64
    public var description: String { "\(className)#\(key)" }
}

/// One entry of a dictionary value, in the file's (key) order.
public struct CoreDictionaryEntry: Sendable, Hashable {
    public let key: String
    public let value: CoreValue
}

/// An IEEE 754-2008 decimal128 in BID encoding (the encoding Realm Core stores).
public struct CoreDecimal128: Sendable, Hashable, CustomStringConvertible {
    public let low: UInt64
    public let high: UInt64

    public init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    public static let zero = CoreDecimal128(low: 0, high: 0x3040_0000_0000_0000)
    /// Realm Core's null: a NaN with payload 0xAA.
    public static let realmNull = CoreDecimal128(low: 0xAA, high: 0x7C00_0000_0000_0000)

    public var isNaN: Bool { high & 0x7C00_0000_0000_0000 == 0x7C00_0000_0000_0000 }
    public var isInfinite: Bool { high & 0x7C00_0000_0000_0000 == 0x7800_0000_0000_0000 }

    /// Sign, decimal exponent and coefficient (nil for NaN and infinities).
    public var parts: (negative: Bool, exponent: Int, coefficient: UInt128)? {
        if isNaN || isInfinite { return nil }
        let negative = high >> 63 == 1
        if (high >> 61) & 3 == 3 {
            // The "large coefficient" form cannot hold a canonical 113-bit coefficient: it reads as zero.
            return (negative, Int((high >> 47) & 0x3FFF) - 6176, 0)
        }
        let exponent = Int((high >> 49) & 0x3FFF) - 6176
        let coefficient = UInt128(high & 0x0001_FFFF_FFFF_FFFF) << 64 | UInt128(low)
        return (negative, exponent, coefficient > 9_999_999_999_999_999_999_999_999_999_999 ? 0 : coefficient)
    }

    /// The value as decimal text: `123.45`, `-0`, `1.5E+40`, `NaN`, `Infinity`.
    public var description: String {
        if isNaN { return "NaN" }
        if isInfinite { return high >> 63 == 1 ? "-Infinity" : "Infinity" }
        guard let (negative, exponent, coefficient) = parts else { return "NaN" }
        let digits = String(coefficient)
        let sign = negative ? "-" : ""
        if exponent == 0 { return sign + digits }
        if exponent < 0 && -exponent < digits.count + 6 {
            let point = digits.count + exponent
            if point > 0 {
                return sign + digits.prefix(point) + "." + digits.dropFirst(point)
            }
            return sign + "0." + String(repeating: "0", count: -point) + digits
        }
        if exponent > 0 && exponent + digits.count <= 34 && coefficient == 0 { return sign + "0" }
        let adjusted = exponent + digits.count - 1
        let mantissa = digits.count > 1 ? String(digits.prefix(1)) + "." + digits.dropFirst() : digits
        return sign + mantissa + "E" + (adjusted >= 0 ? "+" : "") + String(adjusted)
    }

    /// Widens a BID64 value (format 24's 8-byte leaves) to BID128.
    static func fromBID64(_ v: UInt64) -> CoreDecimal128 {
        let sign = v >> 63
        if (v >> 58) & 0x1F == 0x1F {  // NaN: keep the payload (Realm's null is a NaN with payload 0xAA)
            return CoreDecimal128(low: v & 0x0003_FFFF_FFFF_FFFF, high: sign << 63 | 0x7C00_0000_0000_0000)
        }
        if (v >> 58) & 0x1F == 0x1E { return CoreDecimal128(low: 0, high: sign << 63 | 0x7800_0000_0000_0000) }
        let exponent: UInt64, coefficient: UInt64
        if (v >> 61) & 3 == 3 {
            exponent = (v >> 51) & 0x3FF
            coefficient = (v & 0x0007_FFFF_FFFF_FFFF) | 0x0020_0000_0000_0000
        } else {
            exponent = (v >> 53) & 0x3FF
            coefficient = v & 0x001F_FFFF_FFFF_FFFF
        }
        return make(sign: sign, exponent: Int(exponent) - 398, coefficient: coefficient)
    }

    /// Widens a BID32 value (format 24's 4-byte leaves) to BID128.
    static func fromBID32(_ v: UInt32) -> CoreDecimal128 {
        let sign = UInt64(v >> 31)
        if (v >> 26) & 0x1F == 0x1F { return CoreDecimal128(low: UInt64(v & 0x000F_FFFF), high: sign << 63 | 0x7C00_0000_0000_0000) }
        if (v >> 26) & 0x1F == 0x1E { return CoreDecimal128(low: 0, high: sign << 63 | 0x7800_0000_0000_0000) }
        let exponent: UInt32, coefficient: UInt32
        if (v >> 29) & 3 == 3 {
            exponent = (v >> 21) & 0xFF
            coefficient = (v & 0x001F_FFFF) | 0x0080_0000
        } else {
            exponent = (v >> 23) & 0xFF
            coefficient = v & 0x007F_FFFF
        }
        return make(sign: sign, exponent: Int(exponent) - 101, coefficient: UInt64(coefficient))
    }

    private static func make(sign: UInt64, exponent: Int, coefficient: UInt64) -> CoreDecimal128 {
        let biased = UInt64(exponent + 6176) & 0x3FFF
        return CoreDecimal128(low: coefficient, high: sign << 63 | biased << 49)
    }
}

/// The type of a property as Realm Core stores it (collection-ness is separate: `CoreCollectionKind`).
public enum CorePropertyType: String, Sendable, Hashable {
    case int, bool, string, binary, timestamp, float, double, decimal128, objectId, uuid, mixed, link, typedLink
    /// Formats ≤ 4: seconds since 1970 in an integer (read as a timestamp).
    case oldDateTime
    /// Formats ≤ 9: a sub-table that is not a list of primitives (not read).
    case subTable
}

/// Whether a property holds one value or a collection of them.
public enum CoreCollectionKind: String, Sendable, Hashable {
    case none, list, set, dictionary
}

/// A property (column) of a class.
public struct CoreProperty: Sendable, Hashable {
    public let name: String
    public let type: CorePropertyType
    public let collection: CoreCollectionKind
    public let isNullable: Bool
    public let isIndexed: Bool
    public let isPrimaryKey: Bool
    /// For links (and lists/sets/dictionaries of links): the target class.
    public let targetClass: String?
    /// Internal columns (`!OID`, `!ROW_INDEX`, …): read but not shown by the SDKs.
    public let isHidden: Bool
    /// Position of the column in the table (`CoreTable.columns`).
    let column: Int
}

/// Where the objects linking to a class come from: an origin class and its link property (Realm's
/// `LinkingObjects`).
public struct CoreBacklinkSource: Sendable, Hashable {
    public let originClass: String
    public let originProperty: String
    /// Position of the backlink column in the target table.
    let column: Int
}

/// The objects of `originClass` that link to an object through `originProperty`.
public struct CoreBacklinks: Sendable, Hashable {
    public let originClass: String
    public let originProperty: String
    public let keys: [Int64]
}

/// A class (an object-store `class_` table) or an internal table of a Realm Core file.
public struct CoreClass: Sendable, Hashable {
    /// The class name (the table name without `class_`), or the table name for internal tables.
    public let name: String
    public let tableName: String
    public let isEmbedded: Bool
    public let isAsymmetric: Bool
    public let primaryKey: String?
    /// Every named property, hidden ones (`!OID`) included, in the file's column order.
    public let properties: [CoreProperty]
    public let objectCount: Int
    /// Incoming links (from the target's backlink columns).
    public let linkingObjects: [CoreBacklinkSource]
    /// Position of the table in the file.
    let table: Int

    /// Properties the SDKs show (without `!`-prefixed internal columns).
    public var visibleProperties: [CoreProperty] { properties.filter { !$0.isHidden } }

    public func property(named name: String) -> CoreProperty? { properties.first { $0.name == name } }
}

/// One object: its key, its position in its class, and one value per property of the class (same order).
public struct CoreObject: Sendable, Hashable {
    public let key: Int64
    public let position: Int
    public let values: [CoreValue]
}
