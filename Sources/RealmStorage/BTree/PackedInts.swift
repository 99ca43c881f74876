/// A structural problem found while decoding a packed array or a column block.
///
/// Readers throw this instead of trapping; the engine wraps it with the file path and the
/// node's location (`storageError(path:location:)`).
struct CodecError: Error, Equatable, CustomStringConvertible {
    var reason: String
    init(_ reason: String) { self.reason = reason }
    var description: String { reason }
    func storageError(path: String, location: String) -> StorageError {
        .corrupt(path: path, location: location, reason: reason)
    }
}

/// Frame-of-reference bit-packed arrays of `Int64` (FILE_FORMAT.md, "Packed integer arrays").
///
/// Layout: `u8 width`, 7 zero bytes, `i64 base`, then `ceil(n × width / 64)` little-endian
/// 64-bit words; element `i` is the `width`-bit field at bit `i × width`, plus `base`.
enum PackedInts {
    static let headerSize = 16

    /// True for the widths the format allows: 0, 1, 2, 4, 8, 16, 32, 64.
    @inline(__always) static func isLegalWidth(_ width: Int) -> Bool {
        width == 0 || (width > 0 && width <= 64 && width & (width &- 1) == 0)
    }

    /// Total bytes of an array of `count` elements at `width` bits, header included (a multiple of 8).
    static func byteLength(count: Int, width: Int) -> Int {
        headerSize + ((count * width + 63) >> 6) << 3
    }

    /// The smallest legal width whose fields hold `span` (unsigned).
    static func width(forSpan span: UInt64) -> Int {
        if span == 0 { return 0 }
        let bits = 64 - span.leadingZeroBitCount
        var w = 1
        while w < bits { w <<= 1 }
        return w
    }

    /// The base and width the writer chooses: `base = min`, the smallest width holding `max - min`;
    /// width 64 and base 0 when `max - min` overflows `Int64`. An empty array is width 0, base 0.
    static func parameters(_ values: UnsafeBufferPointer<Int64>) -> (base: Int64, width: Int) {
        guard var lo = values.first else { return (0, 0) }
        var hi = lo
        for v in values {
            lo = Swift.min(lo, v)
            hi = Swift.max(hi, v)
        }
        let (span, overflow) = hi.subtractingReportingOverflow(lo)
        if overflow { return (0, 64) }
        return (lo, width(forSpan: UInt64(span)))
    }

    /// Appends the packed array of `values` to `w`.
    ///
    /// Precondition: `w.count` is a multiple of 8 (the writer holds the node from its first byte, so
    /// this is the format's 8-byte alignment relative to the node start). The writer does not align
    /// by itself, because callers record offsets before writing.
    static func encode(_ values: UnsafeBufferPointer<Int64>, into w: inout ByteWriter) {
        precondition(w.count & 7 == 0, "a packed array must start 8-byte aligned")
        let (base, width) = parameters(values)
        let n = values.count
        let start = w.count
        w.zeros(byteLength(count: n, width: width))
        w.bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt8(width), toByteOffset: start, as: UInt8.self)
            raw.storeBytes(of: UInt64(bitPattern: base).littleEndian, toByteOffset: start + 8, as: UInt64.self)
            guard width > 0 else { return }
            var offset = start + headerSize
            let perWord = 64 / width
            var i = 0
            while i < n {
                let end = Swift.min(i + perWord, n)
                var word: UInt64 = 0
                var shift: UInt64 = 0
                while i < end {
                    word |= UInt64(bitPattern: values[i] &- base) &<< shift
                    shift &+= UInt64(width)
                    i += 1
                }
                raw.storeBytes(of: word.littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
        }
    }

    static func encode(_ values: [Int64], into w: inout ByteWriter) {
        values.withUnsafeBufferPointer { encode($0, into: &w) }
    }

    /// Appends a plain bitmap of `count` bits (bit `i` of byte `i / 8`, least significant first),
    /// padded with zeros to a multiple of 8 bytes.
    static func appendBitmap(count: Int, into w: inout ByteWriter, _ bit: (Int) -> Bool) {
        var i = 0
        while i < count {
            let end = Swift.min(i + 64, count)
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while i < end {
                if bit(i) { word |= 1 &<< shift }
                shift &+= 1
                i += 1
            }
            w.u64(word)
        }
    }
}

/// A read-only view of a plain bitmap (a null bitmap, a bool column, ...): `count` bits padded to
/// whole 64-bit words, bit `i` set means true / null.
struct BitmapReader {
    let data: UnsafeRawPointer
    let count: Int

    static func byteLength(count: Int) -> Int { ((count + 63) >> 6) << 3 }

    /// Throws when the bitmap's bytes do not fit `buffer` from `offset`.
    init(_ buffer: UnsafeRawBufferPointer, offset: Int, count: Int) throws(CodecError) {
        guard count >= 0, count <= Int(UInt32.max) else { throw CodecError("bitmap count \(count) out of range") }
        guard let p = buffer.baseAddress, offset >= 0, offset <= buffer.count,
              BitmapReader.byteLength(count: count) <= buffer.count - offset
        else { throw CodecError("bitmap of \(count) bits does not fit its block") }
        data = p + offset
        self.count = count
    }

    /// The 64 bits of rows `64k ..< 64k + 64` (bits past `count` are whatever the file holds).
    @inline(__always) func word(_ k: Int) -> UInt64 {
        UInt64(littleEndian: data.loadUnaligned(fromByteOffset: k &<< 3, as: UInt64.self))
    }

    @inline(__always) subscript(i: Int) -> Bool {
        precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "bitmap index out of range")
        return (word(i &>> 6) &>> UInt64(truncatingIfNeeded: i & 63)) & 1 != 0
    }

    /// Number of set bits among `rows` (all rows by default).
    func nonzeroCount(rows: Range<Int>? = nil) -> Int {
        let rows = rows ?? 0..<count
        precondition(rows.lowerBound >= 0 && rows.upperBound <= count, "rows out of range")
        var c = 0
        forEachBlock(rows: rows) { k, valid in c &+= (word(k) & valid).nonzeroBitCount }
        return c
    }
}

/// Calls `body(block, mask)` for every 64-row block meeting `rows`; `mask` has the bits of the
/// block's rows that lie in `rows`.
@inline(__always)
func forEachBlock(rows: Range<Int>, _ body: (_ block: Int, _ mask: UInt64) -> Void) {
    if rows.isEmpty { return }
    let first = rows.lowerBound &>> 6
    let last = (rows.upperBound &- 1) &>> 6
    var b = first
    while b <= last {
        var mask = UInt64.max
        if b == first { mask &= UInt64.max &<< UInt64(truncatingIfNeeded: rows.lowerBound & 63) }
        if b == last {
            let e = rows.upperBound &- (b &<< 6)
            if e < 64 { mask &= (1 &<< UInt64(truncatingIfNeeded: e)) &- 1 }
        }
        body(b, mask)
        b &+= 1
    }
}

/// A read-only view of one packed array inside a node. Construction validates the header and
/// bounds once; element access and the scan kernels do no further checks against the file.
///
/// Null rows: the kernels take an optional `BitmapReader` (`excluding:`) whose set bits are rows to
/// skip; pass a column's null bitmap to exclude null rows.
struct PackedIntsReader {
    /// First packed word. For width 0 this points at the header, and `mask` is 0, so the
    /// branch-free element access reads valid memory and yields `base`.
    let data: UnsafeRawPointer
    let count: Int
    let width: Int
    let base: Int64
    /// `2^width - 1`.
    let mask: UInt64

    /// Validates the array at `offset` of `buffer` (8-byte aligned relative to the start of
    /// `buffer`, which must be the node or an 8-aligned block of it) holding `count` elements.
    init(_ buffer: UnsafeRawBufferPointer, offset: Int, count: Int) throws(CodecError) {
        guard count >= 0, count <= Int(UInt32.max) else { throw CodecError("packed array count \(count) out of range") }
        guard let p = buffer.baseAddress, offset >= 0, offset <= buffer.count,
              buffer.count - offset >= PackedInts.headerSize
        else { throw CodecError("packed array header does not fit its block") }
        guard offset & 7 == 0 else { throw CodecError("packed array at offset \(offset) is not 8-byte aligned") }
        let header = buffer.u64(at: offset)
        let width = Int(header & 0xFF)
        guard header >> 8 == 0 else { throw CodecError("packed array reserved bytes are not zero") }
        guard PackedInts.isLegalWidth(width) else { throw CodecError("packed array width \(width) is not legal") }
        guard PackedInts.byteLength(count: count, width: width) <= buffer.count - offset else {
            throw CodecError("packed array of \(count) × \(width) bits does not fit its block")
        }
        self.data = width == 0 ? p + offset : p + offset + PackedInts.headerSize
        self.count = count
        self.width = width
        self.base = Int64(bitPattern: buffer.u64(at: offset + 8))
        self.mask = width == 64 ? UInt64.max : (1 &<< UInt64(width)) &- 1
    }

    /// An empty reader (count 0) for columns that do not use a second array.
    init(emptyAt pointer: UnsafeRawPointer) {
        data = pointer
        count = 0
        width = 0
        base = 0
        mask = 0
    }

    /// Bytes the array occupies, header included.
    var byteLength: Int { PackedInts.byteLength(count: count, width: width) }

    @inline(__always) func word(_ k: Int) -> UInt64 {
        UInt64(littleEndian: data.loadUnaligned(fromByteOffset: k &<< 3, as: UInt64.self))
    }

    /// The unsigned field of element `i` (the value minus `base`).
    @inline(__always) func field(_ i: Int) -> UInt64 {
        let bit = i &* width
        return (word(bit &>> 6) &>> UInt64(truncatingIfNeeded: bit & 63)) & mask
    }

    @inline(__always) subscript(i: Int) -> Int64 {
        precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "packed array index out of range")
        return base &+ Int64(bitPattern: field(i))
    }

    /// All elements as an array.
    var array: [Int64] {
        Array(unsafeUninitializedCapacity: count) { buf, n in
            forEach { i, v in buf.baseAddress!.advanced(by: i).initialize(to: v) }
            n = count
        }
    }
}
