import Foundation

/// Order-preserving byte encoding of index entries.
///
/// An index entry is `encode(value) ++ objectKey` (8 bytes, big-endian), and entries are compared
/// with unsigned lexicographic byte order (memcmp, shorter-is-smaller on a common prefix). For two
/// values of the same indexable type (bool, int, string, date, objectId, uuid), or `.null`,
/// `encode(a) < encode(b)` iff `a < b`, and `.null` sorts before every other value. Every encoding is
/// self-delimiting (no encoding is a proper prefix of another), so entries with equal values order
/// by object key.
///
/// Layout: one tag byte, then a payload:
///
/// | value | tag | payload |
/// |---|---|---|
/// | null | 0x00 | none |
/// | bool | 0x01 | 0x00 false, 0x01 true |
/// | int | 0x02 | 8 bytes big-endian of the bit pattern with the sign bit flipped |
/// | string | 0x05 | UTF-8 (at most 240 bytes), each 0x00 written as 0x00 0xFF, then 0x00 0x01 (whole string) or 0x00 0x02 (truncated) |
/// | date | 0x07 | seconds as int (8 bytes), then nanoseconds as 4 bytes big-endian with the sign bit flipped |
/// | objectId | 0x08 | the 12 bytes |
/// | uuid | 0x09 | the 16 bytes |
///
/// Tags are the `PropertyType` codes, so values of different types order by type code.
///
/// Strings longer than `maxStringBytes` UTF-8 bytes are cut after exactly that many bytes (possibly
/// inside a character) and end with the truncation marker 0x00 0x02, which sorts after the terminator
/// 0x00 0x01 of a string that is exactly that prefix, and after every other string sharing the
/// prefix. All strings sharing the same 240-byte prefix therefore encode identically: the index
/// can find the range of candidates, but equality (and the order among them) must be confirmed by
/// the caller against the real value. `encode` returns whether it truncated, and
/// `isTruncated(encoded:)` tells it from an encoded value or entry.
enum IndexKey {
    /// Longest UTF-8 prefix of a string kept in a key.
    static let maxStringBytes = 240

    static let nullTag: UInt8 = 0x00
    static let boolTag: UInt8 = PropertyType.bool.rawValue
    static let intTag: UInt8 = PropertyType.int.rawValue
    static let stringTag: UInt8 = PropertyType.string.rawValue
    static let dateTag: UInt8 = PropertyType.date.rawValue
    static let objectIdTag: UInt8 = PropertyType.objectId.rawValue
    static let uuidTag: UInt8 = PropertyType.uuid.rawValue

    /// Written for a 0x00 byte inside a string: 0x00 followed by this byte.
    static let escapedZero: UInt8 = 0xFF
    /// Ends a whole string: 0x00 followed by this byte.
    static let stringTerminator: UInt8 = 0x01
    /// Ends a truncated string: 0x00 followed by this byte.
    static let truncationMarker: UInt8 = 0x02

    /// Appends the order-preserving encoding of `value`. Returns true if a string was truncated,
    /// in which case equality with the indexed value must be checked against the object.
    /// Traps for non-indexable types (float, double, data, decimal128, link).
    @discardableResult
    static func encode(_ value: Value, into bytes: inout [UInt8]) -> Bool {
        // One allocation for the value and the object key that usually follows it; grown geometrically, since
        // an exact reservation would copy a buffer of many entries (a transaction's pending index entries,
        // DECISIONS 52) whole for every entry.
        let need = bytes.count + encodedSizeHint(value) + 8
        if bytes.capacity < need { bytes.reserveCapacity(max(need, 2 * bytes.capacity)) }
        switch value {
        case .null:
            bytes.append(nullTag)
        case .bool(let b):
            bytes.append(boolTag)
            bytes.append(b ? 1 : 0)
        case .int(let v):
            bytes.append(intTag)
            appendBigEndian(UInt64(bitPattern: v) ^ (1 << 63), to: &bytes)
        case .string(let s):
            bytes.append(stringTag)
            return appendString(s, to: &bytes)
        case .date(let t):
            bytes.append(dateTag)
            appendBigEndian(UInt64(bitPattern: t.seconds) ^ (1 << 63), to: &bytes)
            let n = UInt32(bitPattern: t.nanoseconds) ^ (1 << 31)
            bytes.append(UInt8(truncatingIfNeeded: n >> 24))
            bytes.append(UInt8(truncatingIfNeeded: n >> 16))
            bytes.append(UInt8(truncatingIfNeeded: n >> 8))
            bytes.append(UInt8(truncatingIfNeeded: n))
        case .objectId(let oid):
            bytes.append(objectIdTag)
            withUnsafeBytes(of: oid.bytes) { bytes.append(contentsOf: $0) }
        case .uuid(let u):
            bytes.append(uuidTag)
            withUnsafeBytes(of: u.uuid) { bytes.append(contentsOf: $0) }
        case .float, .double, .data, .decimal128, .link, .typedLink, .list, .dictionary:
            preconditionFailure("IndexKey: \(value.type.map { "\($0)" } ?? "value") is not indexable")
        }
        return false
    }

    /// The encoded length of `value` (for a string, assuming no NUL byte).
    @inline(__always)
    private static func encodedSizeHint(_ value: Value) -> Int {
        switch value {
        case .null: return 1
        case .bool: return 2
        case .int: return 9
        case .string(let s): return 3 + min(s.utf8.count, maxStringBytes)
        case .date: return 13
        case .objectId: return 13
        case .uuid: return 17
        default: return 0
        }
    }

    /// The encoding of `value` as a new array.
    static func encode(_ value: Value) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(value, into: &bytes)
        return bytes
    }

    /// A whole index entry: `encode(value) ++ key` (big-endian).
    static func entry(_ value: Value, key: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        encode(value, into: &bytes)
        appendObjectKey(key, to: &bytes)
        return bytes
    }

    private static func appendString(_ s: String, to bytes: inout [UInt8]) -> Bool {
        // Native strings: copy the kept bytes at once when they hold no NUL to escape.
        let fast: Bool? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            let kept = UnsafeBufferPointer(rebasing: utf8[..<min(utf8.count, maxStringBytes)])
            if kept.contains(0) { return nil }
            bytes.append(contentsOf: kept)
            bytes.append(0)
            let truncated = utf8.count > maxStringBytes
            bytes.append(truncated ? truncationMarker : stringTerminator)
            return truncated
        } ?? nil
        if let fast { return fast }
        var count = 0
        for b in s.utf8 {
            if count == maxStringBytes {
                bytes.append(0)
                bytes.append(truncationMarker)
                return true
            }
            if b == 0 {
                bytes.append(0)
                bytes.append(escapedZero)
            } else {
                bytes.append(b)
            }
            count += 1
        }
        bytes.append(0)
        bytes.append(stringTerminator)
        return false
    }

    /// Whether an encoded value (or a whole entry, which starts with one) is a truncated string.
    static func isTruncated<C: Collection<UInt8>>(encoded: C) -> Bool {
        var it = encoded.makeIterator()
        guard it.next() == stringTag else { return false }
        while let b = it.next() {
            if b == 0 {
                switch it.next() {
                case escapedZero: continue
                case truncationMarker: return true
                default: return false
                }
            }
        }
        return false
    }

    @inline(__always)
    private static func appendBigEndian(_ v: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends an object key, 8 bytes big-endian.
    static func appendObjectKey(_ key: UInt64, to bytes: inout [UInt8]) {
        appendBigEndian(key, to: &bytes)
    }

    /// The object key in the last 8 bytes of an entry.
    static func objectKey(fromEntry entry: UnsafeRawBufferPointer) -> UInt64 {
        precondition(entry.count >= 8, "index entry shorter than an object key")
        return UInt64(bigEndian: entry.loadUnaligned(fromByteOffset: entry.count - 8, as: UInt64.self))
    }

    /// The object key in the last 8 bytes of an entry.
    static func objectKey(fromEntry entry: [UInt8]) -> UInt64 {
        entry.withUnsafeBytes { objectKey(fromEntry: $0) }
    }
}
