/// An IEEE 754-2008 128-bit decimal floating-point value (BID encoding), as Realm stores it.
public struct Decimal128: Hashable, Sendable, CustomStringConvertible {
    /// The low and high 64 bits of the BID encoding.
    public var low: UInt64
    public var high: UInt64

    public init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// Zero with exponent 0.
    public static let zero = Decimal128(low: 0, high: 0x3040_0000_0000_0000)

    public var description: String { "Decimal128(\(high),\(low))" }
}
