import Foundation

/// A read-only view of one column block in a node. Construction validates every offset and
/// length inside the block against `length` (and the out-of-line layout of string/data/mixed
/// columns); afterwards the typed accessors read without further checks. Nothing is allocated.
///
/// Typed accessors (`int(at:)`, `double(at:)`, ...) return the stored value of a row without
/// looking at its null bit (a null row holds 0 / empty); check `isNull` where it matters. Calling
/// an accessor that does not match the column's encoding, or with an index outside `0..<count`,
/// is a programmer error (trap).
struct ColumnReader {
    let count: Int
    let encoding: ColumnEncoding
    let type: PropertyType
    let linkStorage: LinkStorage
    /// The null bitmap, nil when the block has none (`hasNulls` = 0).
    let nullBitmap: BitmapReader?

    /// `.int`: the values; `.date`: seconds; `.bytes`: end offsets. Empty for other encodings.
    private let primary: PackedIntsReader
    /// `.date`: nanoseconds; `.bytes`: out-of-line flags (0/1). Empty for other encodings.
    private let secondary: PackedIntsReader
    /// Start of the fixed-width values, the bool bitmap or the byte area.
    private let payload: UnsafeRawPointer
    /// Bytes available from `payload` to the end of the block.
    private let payloadLength: Int
    /// Stored 0 means null (`.link` with `.plusOne`).
    private let zeroIsNull: Bool
    /// `.bytes`: whether any value is out-of-line (width 0, base 0 flags means none).
    let anyOutOfLine: Bool
    /// `.bytes` in dictionary form: each row's code, the index of its value among the `entryCount` distinct
    /// values that `primary` and the payload hold (`StringDictionary`); nil in plain form.
    let codes: PackedIntsReader?
    /// `.bytes`: the number of values the end offsets describe (the rows, or the distinct values).
    let entryCount: Int

    /// - Parameters:
    ///   - node: the whole node (offsets are 8-aligned relative to its start).
    ///   - offset, length: the column block, from the cluster's column directory.
    ///   - count: the number of rows (objects or list elements).
    ///   - nullable: when false, a block with a null bitmap is rejected as corrupt.
    /// Whether every end offset of a `.bytes` column was checked at init; when not (`checkAllOffsets: false`,
    /// for reading one row), each row's bounds are checked when it is read.
    let offsetsChecked: Bool

    init(node: UnsafeRawBufferPointer, offset: Int, length: Int, count: Int, encoding: ColumnEncoding,
         type: PropertyType, linkStorage: LinkStorage = .plusOne, nullable: Bool = true,
         checkAllOffsets: Bool = true) throws(CodecError) {
        offsetsChecked = checkAllOffsets || encoding != .bytes
        guard offset >= 0, length >= 0, offset <= node.count, length <= node.count - offset else {
            throw CodecError("column block \(offset)+\(length) outside the node of \(node.count) bytes")
        }
        guard offset & 7 == 0 else { throw CodecError("column block at \(offset) is not 8-byte aligned") }
        guard count >= 0, count <= Int(UInt32.max) else { throw CodecError("row count \(count) out of range") }
        guard let expected = ColumnEncoding.encodingIfStored(for: type), expected == encoding else {
            throw CodecError("column encoding \(encoding.rawValue) does not match type \(type)")
        }
        let block = UnsafeRawBufferPointer(rebasing: node[offset..<offset + length])
        guard length >= 8, let blockBase = block.baseAddress else { throw CodecError("column block has no null header") }
        let header = block.u64(at: 0)
        // Byte 0: a null bitmap follows; byte 1: the dictionary form of a bytes block, with its number of
        // distinct values in bytes 4..<8 (format 8, `StringDictionary`).
        let isDictionary = header & 0xFF00 == 0x100
        guard header & 0xFF <= 1, header & 0xFFFF_0000 == 0, header & 0xFF00 == 0 || (isDictionary && encoding == .bytes),
              isDictionary || header >> 32 == 0 else {
            throw CodecError("column block null header \(header)")
        }
        var pos = 8
        if header & 1 == 1 {
            guard nullable else { throw CodecError("required column has a null bitmap") }
            nullBitmap = try BitmapReader(block, offset: pos, count: count)
            pos += BitmapReader.byteLength(count: count)
        } else {
            nullBitmap = nil
        }
        self.count = count
        self.encoding = encoding
        self.type = type
        self.linkStorage = linkStorage
        zeroIsNull = type == .link && linkStorage == .plusOne

        var primary = PackedIntsReader(emptyAt: blockBase)
        var secondary = PackedIntsReader(emptyAt: blockBase)
        var anyOutOfLine = false
        var codes: PackedIntsReader?
        var entryCount = count
        let fixedSize: Int
        switch encoding {
        case .int:
            primary = try PackedIntsReader(block, offset: pos, count: count)
            pos += primary.byteLength
            fixedSize = 0
        case .date:
            primary = try PackedIntsReader(block, offset: pos, count: count)
            pos += primary.byteLength
            secondary = try PackedIntsReader(block, offset: pos, count: count)
            pos += secondary.byteLength
            if secondary.count(in: Int64(Int32.min)...Int64(Int32.max)) != count {
                throw CodecError("date nanoseconds outside Int32")
            }
            fixedSize = 0
        case .bytes:
            var entries = count
            if isDictionary {
                entries = Int(header >> 32)
                guard entries >= (count > 0 ? 1 : 0), entries <= count else {
                    throw CodecError("dictionary of \(entries) values for \(count) rows")
                }
                let c = try PackedIntsReader(block, offset: pos, count: count)
                pos += c.byteLength
                if checkAllOffsets, count > 0, c.count(in: 0...Int64(entries - 1)) != count {
                    throw CodecError("dictionary code outside its \(entries) values")
                }
                codes = c
            }
            entryCount = entries
            primary = try PackedIntsReader(block, offset: pos, count: entries)
            pos += primary.byteLength
            secondary = try PackedIntsReader(block, offset: pos, count: entries)
            pos += secondary.byteLength
            let flags = secondary
            guard flags.width <= 1, flags.base == 0 || (flags.base == 1 && flags.width == 0) else {
                throw CodecError("out-of-line flags are not a 0/1 array")
            }
            anyOutOfLine = entries > 0 && (flags.width == 1 || flags.base == 1)
            if isDictionary && anyOutOfLine { throw CodecError("a dictionary value is marked out of line") }
            let area = Int64(length - pos)
            var previous: Int64 = 0
            var bad = false
            if checkAllOffsets, !anyOutOfLine, let ascending = primary.ascends(from: 0, through: area) {
                bad = !ascending
            } else if checkAllOffsets { primary.forEach { i, end in
                if end < previous || end > area || (anyOutOfLine && flags[i] != 0 && end - previous != 16) {
                    bad = true
                }
                previous = end
            } }
            if bad { throw CodecError("variable-length end offsets out of order or outside the block") }
            fixedSize = 0
        case .bool: fixedSize = BitmapReader.byteLength(count: count)
        case .float: fixedSize = count * 4
        case .double: fixedSize = count * 8
        case .objectId: fixedSize = count * 12
        case .bytes16: fixedSize = count * 16
        }
        guard fixedSize <= length - pos else {
            throw CodecError("column of \(count) \(type) values needs \(fixedSize) bytes, block has \(length - pos)")
        }
        self.primary = primary
        self.secondary = secondary
        self.anyOutOfLine = anyOutOfLine
        self.codes = codes
        self.entryCount = entryCount
        payload = blockBase + pos
        payloadLength = length - pos
    }

    // MARK: Nulls

    /// True when the block has a null bitmap.
    var hasNulls: Bool { nullBitmap != nil }

    @inline(__always) func isNull(_ i: Int) -> Bool {
        precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "row index out of range")
        if let nullBitmap, nullBitmap[i] { return true }
        return zeroIsNull && primary[i] == 0
    }

    // MARK: Packed arrays for the scan kernels

    /// The values of an `.int` column (stored form: links are key + 1 with `.plusOne`).
    var packedInts: PackedIntsReader? { encoding == .int ? primary : nil }
    /// The seconds of a `.date` column.
    var seconds: PackedIntsReader? { encoding == .date ? primary : nil }
    /// The nanoseconds of a `.date` column.
    var nanoseconds: PackedIntsReader? { encoding == .date ? secondary : nil }

    // MARK: Typed accessors

    /// The stored integer of an `.int` column (links: the stored key + 1 or raw key).
    @inline(__always) func int(at i: Int) -> Int64 {
        precondition(encoding == .int, "int(at:) on a \(encoding) column")
        return primary[i]
    }

    /// The target key of a `.link` column, nil when null.
    @inline(__always) func linkKey(at i: Int) -> ObjectKey? {
        precondition(type == .link, "linkKey(at:) on a \(type) column")
        if isNull(i) { return nil }
        let raw = UInt64(bitPattern: primary[i])
        return ObjectKey(linkStorage == .plusOne ? raw &- 1 : raw)
    }

    @inline(__always) func bool(at i: Int) -> Bool {
        checkFixed(i, .bool)
        return (payload.loadUnaligned(fromByteOffset: (i &>> 6) &<< 3, as: UInt64.self).littleEndian
            &>> UInt64(truncatingIfNeeded: i & 63)) & 1 != 0
    }

    @inline(__always) func float(at i: Int) -> Float {
        checkFixed(i, .float)
        return Float(bitPattern: UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: i &<< 2, as: UInt32.self)))
    }

    @inline(__always) func double(at i: Int) -> Double {
        checkFixed(i, .double)
        return Double(bitPattern: UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: i &<< 3, as: UInt64.self)))
    }

    @inline(__always) func timestamp(at i: Int) -> Timestamp {
        precondition(encoding == .date, "timestamp(at:) on a \(encoding) column")
        return Timestamp(seconds: primary[i], nanoseconds: Int32(truncatingIfNeeded: secondary[i]))
    }

    func objectId(at i: Int) -> ObjectId {
        checkFixed(i, .objectId)
        let p = payload + i * 12
        return ObjectId(bytes: (p.load(fromByteOffset: 0, as: UInt8.self), p.load(fromByteOffset: 1, as: UInt8.self),
                                p.load(fromByteOffset: 2, as: UInt8.self), p.load(fromByteOffset: 3, as: UInt8.self),
                                p.load(fromByteOffset: 4, as: UInt8.self), p.load(fromByteOffset: 5, as: UInt8.self),
                                p.load(fromByteOffset: 6, as: UInt8.self), p.load(fromByteOffset: 7, as: UInt8.self),
                                p.load(fromByteOffset: 8, as: UInt8.self), p.load(fromByteOffset: 9, as: UInt8.self),
                                p.load(fromByteOffset: 10, as: UInt8.self), p.load(fromByteOffset: 11, as: UInt8.self)))
    }

    func uuid(at i: Int) -> UUID {
        checkFixed(i, .bytes16)
        precondition(type == .uuid, "uuid(at:) on a \(type) column")
        return ColumnCodec.uuidFrom(payload + i * 16)
    }

    func decimal128(at i: Int) -> Decimal128 {
        checkFixed(i, .bytes16)
        precondition(type == .decimal128, "decimal128(at:) on a \(type) column")
        let p = payload + i * 16
        return Decimal128(low: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)),
                          high: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    /// The 16 raw bytes of a uuid/decimal128 row (for comparisons without decoding).
    func withBytes16<R>(at i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        checkFixed(i, .bytes16)
        return body(UnsafeRawBufferPointer(start: payload + i * 16, count: 16))
    }

    // MARK: Variable-length values

    /// True when row `i` of a `.bytes` column is stored in a blob node (never in dictionary form).
    @inline(__always) func isOutOfLine(_ i: Int) -> Bool {
        precondition(encoding == .bytes, "isOutOfLine on a \(encoding) column")
        return anyOutOfLine && !isNull(i) && secondary[i] != 0
    }

    /// The entry of the end offsets holding row `i`'s bytes: its code in dictionary form, else `i`.
    @inline(__always) func entry(_ i: Int) -> Int {
        guard let codes else { return i }
        return Int(truncatingIfNeeded: codes[i])
    }

    /// Whether row `i`'s bytes lie inside the block (what init checks for every row of a checked reader).
    func rowBoundsOK(_ i: Int) -> Bool {
        guard encoding == .bytes, i >= 0, i < count else { return false }
        return entryBoundsOK(entry(i))
    }

    /// Whether the bytes of entry `e` lie inside the block.
    func entryBoundsOK(_ e: Int) -> Bool {
        guard e >= 0, e < entryCount else { return false }
        let start = e == 0 ? 0 : primary[e - 1], end = primary[e]
        guard start >= 0, start <= end, end <= Int64(payloadLength) else { return false }
        if anyOutOfLine && secondary[e] != 0 && end - start != 16 { return false }
        return true
    }

    /// The blob ref and length of an out-of-line row (unvalidated), nil when the row is inline.
    func blobReference(at i: Int) -> (ref: UInt64, length: UInt64)? {
        guard isOutOfLine(i) else { return nil }
        if !offsetsChecked && !rowBoundsOK(i) { return nil }
        let start = i == 0 ? 0 : Int(primary[i - 1])
        return (UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: start, as: UInt64.self)),
                UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self)))
    }

    /// Calls `body` with the stored bytes of an inline row of a `.bytes` column, in place (for
    /// mixed columns the bytes start with the type tag). Returns nil, without calling `body`, when
    /// the row is null or out-of-line. String bytes are not UTF-8 validated here.
    @inline(__always)
    func withBytes<R>(at i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        precondition(encoding == .bytes, "withBytes on a \(encoding) column")
        if isNull(i) || (anyOutOfLine && secondary[i] != 0) { return nil }
        let e = entry(i)
        if !offsetsChecked && !entryBoundsOK(e) { return nil }
        return try body(entryBytes(e))
    }

    /// The stored bytes of entry `e` (a row in plain form, a distinct value in dictionary form), inline and
    /// within the block: `e` < `entryCount` of a reader that checked its offsets, or `entryBoundsOK(e)`.
    @inline(__always) func entryBytes(_ e: Int) -> UnsafeRawBufferPointer {
        let start = e == 0 ? 0 : Int(truncatingIfNeeded: primary[e &- 1])
        let end = Int(truncatingIfNeeded: primary[e])
        return UnsafeRawBufferPointer(start: payload + start, count: end &- start)
    }

    /// The type of a non-null mixed row (from its tag byte; loads the blob when out-of-line).
    func mixedType(at i: Int, loadBlob: (UInt64, Int) throws -> [UInt8]) throws -> PropertyType? {
        precondition(type == .mixed, "mixedType on a \(type) column")
        if isNull(i) { return nil }
        if let inline = withBytes(at: i, { $0.first }) {
            guard let tag = inline else { throw CodecError("bad mixed tag") }
            if tag == ColumnCodec.nestedListTag || tag == ColumnCodec.nestedDictionaryTag { return .mixed }
            guard let t = PropertyType(rawValue: tag) else { throw CodecError("bad mixed tag") }
            return t
        }
        return try value(at: i, loadBlob: loadBlob).type
    }

    // MARK: Values

    /// The value of row `i`. `loadBlob(ref, length)` returns the bytes of an out-of-line value's
    /// blob (after its node header). Throws `CodecError` for corrupt contents (invalid UTF-8, a
    /// bad mixed tag or payload, a bad blob reference) and whatever `loadBlob` throws.
    func value(at i: Int, loadBlob: (UInt64, Int) throws -> [UInt8]) throws -> Value {
        if isNull(i) { return .null }
        if !offsetsChecked && !rowBoundsOK(i) { throw CodecError("variable-length end offsets of row \(i) out of order or outside the block") }
        switch encoding {
        case .int:
            let v = primary[i]
            guard type == .link else { return .int(v) }
            let raw = UInt64(bitPattern: v)
            return .link(ObjectKey(linkStorage == .plusOne ? raw &- 1 : raw))
        case .bool: return .bool(bool(at: i))
        case .float: return .float(float(at: i))
        case .double: return .double(double(at: i))
        case .date: return .date(timestamp(at: i))
        case .objectId: return .objectId(objectId(at: i))
        case .bytes16: return type == .uuid ? .uuid(uuid(at: i)) : .decimal128(decimal128(at: i))
        case .bytes:
            if let (ref, length) = blobReference(at: i) {
                guard ref >= 2 else { throw CodecError("blob ref \(ref) names a meta page") }
                guard length > UInt64(ColumnCodec.inlineLimit), length <= UInt64(ColumnCodec.maxBlobLength) else {
                    throw CodecError("blob length \(length) out of range")
                }
                let bytes = try loadBlob(ref, Int(length))
                guard bytes.count == Int(length) else {
                    throw CodecError("blob \(ref) has \(bytes.count) bytes, expected \(length)")
                }
                return try bytes.withUnsafeBytes { try decodeBytes($0) }
            }
            return try withBytes(at: i) { try decodeBytes($0) }!
        }
    }

    private func decodeBytes(_ b: UnsafeRawBufferPointer) throws(CodecError) -> Value {
        switch type {
        case .string:
            guard let s = decodeUTF8(b) else { throw CodecError("string is not valid UTF-8") }
            return .string(s)
        case .data: return .data(Array(b))
        default: return try ColumnCodec.decodeMixed(b)
        }
    }

    @inline(__always) private func checkFixed(_ i: Int, _ expected: ColumnEncoding) {
        precondition(encoding == expected, "\(expected) accessor on a \(encoding) column")
        precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "row index out of range")
    }
}
