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
/// A mixed property's index holds every kind of value a mixed value can be, so four more encodings exist for it
/// (`IndexKey+Mixed.swift`): float and double under tag 0x04 (the value as a `Double`, 8 order-preserving bytes),
/// data under 0x06 (as a string), decimal128 under 0x0A (its nearest `Double`, the same 8 bytes), and 0xFF
/// without payload for a link or nested collection (present so that every object has its entry, never searched).
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
    /// Float and double values of a mixed property.
    static let doubleTag: UInt8 = PropertyType.double.rawValue
    /// Binary values of a mixed property.
    static let dataTag: UInt8 = PropertyType.data.rawValue
    /// Decimal128 values of a mixed property (keyed by their nearest `Double`).
    static let decimalTag: UInt8 = PropertyType.decimal128.rawValue
    /// Links and nested collections in a mixed property: one tag, no payload, not searched.
    static let unsearchedTag: UInt8 = 0xFF

    /// Written for a 0x00 byte inside a string: 0x00 followed by this byte.
    static let escapedZero: UInt8 = 0xFF
    /// Ends a whole string: 0x00 followed by this byte.
    static let stringTerminator: UInt8 = 0x01
    /// Ends a truncated string: 0x00 followed by this byte.
    static let truncationMarker: UInt8 = 0x02

    /// Appends the order-preserving encoding of `value`. Returns true if a string (or data) was truncated,
    /// in which case equality with the indexed value must be checked against the object. Float, double,
    /// decimal128, data, links and nested collections occur only in the index of a mixed property.
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
        case .float(let f):
            bytes.append(doubleTag)
            appendBigEndian(orderedBits(Double(f)), to: &bytes)
        case .double(let d):
            bytes.append(doubleTag)
            appendBigEndian(orderedBits(d), to: &bytes)
        case .decimal128(let d):
            bytes.append(decimalTag)
            appendBigEndian(orderedBits(d.doubleValue), to: &bytes)
        case .data(let b):
            bytes.append(dataTag)
            return appendEscaped(b, to: &bytes)
        case .link, .typedLink, .list, .dictionary:
            bytes.append(unsearchedTag)
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
        case .float, .double, .decimal128: return 9
        case .data(let b): return 3 + min(b.count, maxStringBytes)
        default: return 1
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
        return appendEscaped(s.utf8, to: &bytes)
    }

    /// Bytes as a string's are written: at most `maxStringBytes` of them, 0x00 escaped, then the terminator
    /// or the truncation marker. Returns whether they were truncated.
    private static func appendEscaped<C: Collection<UInt8>>(_ source: C, to bytes: inout [UInt8]) -> Bool {
        var count = 0
        for b in source {
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

    /// Whether an encoded value (or a whole entry, which starts with one) is a truncated string (or data).
    static func isTruncated<C: Collection<UInt8>>(encoded: C) -> Bool {
        var it = encoded.makeIterator()
        guard let tag = it.next(), tag == stringTag || tag == dataTag else { return false }
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
    static func appendBigEndian(_ v: UInt64, to bytes: inout [UInt8]) {
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
