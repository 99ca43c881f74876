import Foundation
import Synchronization

/// A 12-byte MongoDB-style object identifier.
///
/// Layout of a generated id (all big-endian, as printed):
/// bytes 0–3 seconds since 1970-01-01T00:00:00Z, bytes 4–8 a random value chosen once per
/// process, bytes 9–11 a counter that starts at a random value and wraps modulo 2²⁴.
///
/// Ids order byte-wise (unsigned), so generated ids order by creation second first.
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

    /// Parses exactly 24 hexadecimal digits (either case); anything else gives nil.
    public init?(hexString: String) {
        let utf8 = hexString.utf8
        guard utf8.count == 24 else { return nil }
        var out = [UInt8](repeating: 0, count: 12)
        var i = 0
        var high: UInt8 = 0
        for c in utf8 {
            guard let nibble = ObjectId.hexValue(c) else { return nil }
            if i & 1 == 0 {
                high = nibble
            } else {
                out[i >> 1] = high << 4 | nibble
            }
            i += 1
        }
        self.init(byteArray: out)
    }

    /// The id whose bytes are all zero.
    public static let zero = ObjectId(bytes: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    public var byteArray: [UInt8] {
        [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5, bytes.6, bytes.7, bytes.8, bytes.9, bytes.10, bytes.11]
    }

    /// Bytes 0–7 as a big-endian integer.
    @inline(__always) var highWord: UInt64 {
        var v = UInt64(bytes.0) << 56 | UInt64(bytes.1) << 48 | UInt64(bytes.2) << 40 | UInt64(bytes.3) << 32
        v |= UInt64(bytes.4) << 24 | UInt64(bytes.5) << 16 | UInt64(bytes.6) << 8 | UInt64(bytes.7)
        return v
    }

    /// Bytes 8–11 as a big-endian integer.
    @inline(__always) var lowWord: UInt32 {
        UInt32(bytes.8) << 24 | UInt32(bytes.9) << 16 | UInt32(bytes.10) << 8 | UInt32(bytes.11)
    }

    public static func == (a: ObjectId, b: ObjectId) -> Bool {
        a.highWord == b.highWord && a.lowWord == b.lowWord
    }

    public func hash(into h: inout Hasher) {
        h.combine(highWord)
        h.combine(lowWord)
    }

    /// Unsigned byte-wise order.
    public static func < (a: ObjectId, b: ObjectId) -> Bool {
        let ah = a.highWord, bh = b.highWord
        return ah != bh ? ah < bh : a.lowWord < b.lowWord
    }

    /// The 24 lowercase hexadecimal digits.
    public var hexString: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(24)
        withUnsafeBytes(of: bytes) { raw in
            for b in raw {
                out.append(digits[Int(b >> 4)])
                out.append(digits[Int(b & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { hexString }

    /// The creation time stored in the first four bytes (whole seconds).
    public var timestamp: Date {
        let seconds = UInt32(bytes.0) << 24 | UInt32(bytes.1) << 16 | UInt32(bytes.2) << 8 | UInt32(bytes.3)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// A new id: the current second, this process's random 5 bytes and the next counter value.
    /// Thread-safe. Ids generated in the same process and second increase, except when the
    /// 24-bit counter wraps (once every 16,777,216 ids).
    public static func generate() -> ObjectId {
        let seconds = UInt32(truncatingIfNeeded: Int64(Date().timeIntervalSince1970.rounded(.down)))
        let counter = generatorCounter.wrappingAdd(1, ordering: .relaxed).oldValue & 0xFF_FFFF
        let p = processUnique
        return ObjectId(bytes: (
            UInt8(truncatingIfNeeded: seconds >> 24), UInt8(truncatingIfNeeded: seconds >> 16),
            UInt8(truncatingIfNeeded: seconds >> 8), UInt8(truncatingIfNeeded: seconds),
            p.0, p.1, p.2, p.3, p.4,
            UInt8(truncatingIfNeeded: counter >> 16), UInt8(truncatingIfNeeded: counter >> 8),
            UInt8(truncatingIfNeeded: counter)))
    }

    /// Five random bytes chosen once per process (lazily, thread-safely, as every global).
    private static let processUnique: (UInt8, UInt8, UInt8, UInt8, UInt8) = {
        var g = SystemRandomNumberGenerator()
        let r = g.next()
        return (UInt8(truncatingIfNeeded: r), UInt8(truncatingIfNeeded: r >> 8), UInt8(truncatingIfNeeded: r >> 16),
                UInt8(truncatingIfNeeded: r >> 24), UInt8(truncatingIfNeeded: r >> 32))
    }()

    /// The generator's counter; only its low 24 bits are used.
    private static let generatorCounter = Atomic<UInt32>(UInt32.random(in: 0...0xFF_FFFF))

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
