/// Appends little-endian fields to a growing byte buffer.
extension Array where Element == UInt8 {
    /// `count` bytes, every one of them stored by `fill` at its offset: in `buffer`'s storage when it holds
    /// them (a recycled array, DECISIONS 64), else in a new array with room for at least `minimumCapacity`
    /// bytes (so that it fits the next thing of its kind when recycled in turn).
    static func filled(count: Int, reusing buffer: consuming [UInt8], minimumCapacity: Int = 0,
                       _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        if buffer.capacity >= count {
            var bytes = consume buffer
            bytes.resizeForOverwrite(to: count)
            bytes.withUnsafeMutableBytes(fill)
            return bytes
        }
        return [UInt8](unsafeUninitializedCapacity: Swift.max(count, minimumCapacity)) { storage, initialized in
            fill(UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(storage)[0..<count]))
            initialized = count
        }
    }

    /// Makes the array `count` bytes long for a caller that then stores every one of them at its offset: a
    /// recycled node buffer keeps its old bytes up to the new length (shortening is free) and gets zeros past
    /// its old length. Emptying it and writing `count` zeros first cost a copy from a block of zeros that a
    /// small commit's cold cache had to fetch (`perf`: ~2 % of its time).
    mutating func resizeForOverwrite(to count: Int) {
        if self.count > count {
            removeLast(self.count - count)
        } else if self.count < count {
            ByteWriter.appendZeros(count - self.count, to: &self)
        }
    }
}

struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Writes into `buffer`'s storage (emptied first), grown to `capacity` if it has less: a recycled node
    /// buffer saves an allocation and its release (`NodeSink.nodeBuffer`). If another array still shares the
    /// storage, emptying it makes a new one and the other keeps its bytes.
    init(reusing buffer: consuming [UInt8], capacity: Int) {
        // (See also `Array.resizeForOverwrite`, for callers that store every byte at known offsets.)
        bytes = consume buffer  // moved, not copied: emptying a shared array would allocate anew
        bytes.removeAll(keepingCapacity: true)
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    // Byte by byte: appending an 8-byte buffer through `append(contentsOf:)` costs several times more
    // (`perf`: writing a commit root's free list).
    @inline(__always) mutating func u16(_ v: UInt16) { appendLittleEndian(UInt64(v), bytes: 2) }
    @inline(__always) mutating func u32(_ v: UInt32) { appendLittleEndian(UInt64(v), bytes: 4) }
    @inline(__always) mutating func u64(_ v: UInt64) { appendLittleEndian(v, bytes: 8) }
    @inline(__always) private mutating func appendLittleEndian(_ v: UInt64, bytes n: Int) {
        var x = v
        for _ in 0..<n {
            bytes.append(UInt8(truncatingIfNeeded: x))
            x >>= 8
        }
    }
    mutating func i64(_ v: Int64) { u64(UInt64(bitPattern: v)) }
    mutating func string(_ s: String) {
        let utf8 = Array(s.utf8)
        u32(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }
    mutating func raw<S: Sequence>(_ s: S) where S.Element == UInt8 { bytes.append(contentsOf: s) }
    mutating func zeros(_ n: Int) { ByteWriter.appendZeros(n, to: &bytes) }

    /// Appends `n` zero bytes: one copy from a block of zeros (`repeatElement` is appended byte by byte,
    /// `perf`: the padding of index nodes and commit roots cost more than their contents).
    static func appendZeros(_ n: Int, to bytes: inout [UInt8]) {
        guard n > 0 else { return }
        var left = n
        zeroBlock.withUnsafeBufferPointer { z in
            while left > 0 {
                let k = min(left, z.count)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: z[..<k]))
                left -= k
            }
        }
    }
    private static let zeroBlock = [UInt8](repeating: 0, count: 4096)
    /// Pads with zeros to a multiple of `alignment` bytes.
    mutating func align(_ alignment: Int) {
        let r = bytes.count % alignment
        if r != 0 { zeros(alignment - r) }
    }
    mutating func patchU32(_ v: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= bytes.count, "patch past the written bytes")
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }
    mutating func patchU64(_ v: UInt64, at offset: Int) {
        precondition(offset >= 0 && offset + 8 <= bytes.count, "patch past the written bytes")
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt64.self) }
    }
}

/// Stores little-endian fields into memory the caller has sized for them (no bounds checks: the caller
/// computed the size from the same fields).
struct FieldWriter {
    private let base: UnsafeMutableRawPointer
    private(set) var written = 0

    init(_ base: UnsafeMutablePointer<UInt8>) { self.base = UnsafeMutableRawPointer(base) }
    init(_ base: UnsafeMutableRawPointer) { self.base = base }

    @inline(__always) mutating func u8(_ v: UInt8) {
        base.storeBytes(of: v, toByteOffset: written, as: UInt8.self)
        written += 1
    }
    @inline(__always) mutating func u32(_ v: UInt32) {
        base.storeBytes(of: v.littleEndian, toByteOffset: written, as: UInt32.self)
        written += 4
    }
    @inline(__always) mutating func u64(_ v: UInt64) {
        base.storeBytes(of: v.littleEndian, toByteOffset: written, as: UInt64.self)
        written += 8
    }
    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        if let p = bytes.baseAddress { (base + written).copyMemory(from: p, byteCount: bytes.count) }
        written += bytes.count
    }
    /// Moves on to `offset`, leaving the bytes in between as they are.
    mutating func skip(to offset: Int) {
        precondition(offset >= written, "FieldWriter moves forward only")
        written = offset
    }
    /// `u32` length, then the UTF-8 bytes (as `ByteWriter.string`).
    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            u32(UInt32(utf8.count))
            raw(UnsafeRawBufferPointer(utf8))
        }
    }
}

/// Reads little-endian fields from a byte buffer, throwing on overrun instead of trapping.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    var offset: Int

    init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    struct Overrun: Error {}

    private mutating func need(_ n: Int) throws {
        if n < 0 || offset > buffer.count - n { throw Overrun() }
    }
    mutating func u8() throws -> UInt8 { try need(1); defer { offset += 1 }; return buffer[offset] }
    mutating func u16() throws -> UInt16 {
        try need(2); defer { offset += 2 }
        return UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    mutating func u32() throws -> UInt32 {
        try need(4); defer { offset += 4 }
        return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    mutating func u64() throws -> UInt64 {
        try need(8); defer { offset += 8 }
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    mutating func i64() throws -> Int64 { Int64(bitPattern: try u64()) }
    mutating func string(maxLength: Int = 1 << 24) throws -> String {
        let n = Int(try u32())
        if n > maxLength { throw Overrun() }
        try need(n)
        defer { offset += n }
        guard let s = String(validating: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + n]), as: UTF8.self) else {
            throw Overrun()
        }
        return s
    }
    mutating func bytes(_ n: Int) throws -> UnsafeRawBufferPointer {
        try need(n)
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + n])
    }
    mutating func skip(_ n: Int) throws { try need(n); offset += n }
}

extension UnsafeRawBufferPointer {
    @inline(__always) func u16(at offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func u32(at offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) func u64(at offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
