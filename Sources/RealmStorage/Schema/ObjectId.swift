/// A 12-byte MongoDB-style object identifier.
public struct ObjectId: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 12 bytes, big-endian as printed.
    public var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

    public init(bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)) {
        self.bytes = bytes
    }

    public init<C: Collection>(byteArray: C) where C.Element == UInt8 {
        precondition(byteArray.count == 12, "ObjectId needs 12 bytes")
        let a = Array(byteArray)
        bytes = (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11])
    }

    public static let zero = ObjectId(bytes: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    public var byteArray: [UInt8] {
        [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5, bytes.6, bytes.7, bytes.8, bytes.9, bytes.10, bytes.11]
    }

    public static func == (a: ObjectId, b: ObjectId) -> Bool { a.byteArray == b.byteArray }
    public func hash(into h: inout Hasher) { h.combine(byteArray) }
    public static func < (a: ObjectId, b: ObjectId) -> Bool { a.byteArray.lexicographicallyPrecedes(b.byteArray) }

    public var description: String {
        byteArray.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
