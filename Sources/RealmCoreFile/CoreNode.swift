/// One node ("array") of a Realm Core file: an 8-byte header (flags, width, element count) and its payload,
/// checked to lie inside the file when it is made.
struct CoreNode {
    let ref: Int
    let flags: UInt8
    /// Number of elements (bytes for the fixed-bytes leaves of ObjectId and UUID).
    let count: Int
    /// Element width: bits for the bits scheme, bytes for the multiply scheme.
    let width: Int
    /// 0 bits, 1 multiply, 2 ignore (one byte per element).
    let scheme: Int
    let payload: UnsafeRawPointer
    let payloadBytes: Int

    var isInner: Bool { flags & 0x80 != 0 }
    var hasRefs: Bool { flags & 0x40 != 0 }
    var contextFlag: Bool { flags & 0x20 != 0 }

    /// Element `i` of an integer node: widths 1, 2, 4 unsigned bit fields (LSB first), 8–64 signed little-endian.
    @inline(__always)
    func int(_ i: Int) throws -> Int64 {
        guard i >= 0, i < count, scheme == 0 else { throw outOfRange(i) }
        return rawInt(i)
    }

    @inline(__always)
    func rawInt(_ i: Int) -> Int64 {
        switch width {
        case 0: return 0
        case 1: return Int64((payload.load(fromByteOffset: i >> 3, as: UInt8.self) >> UInt8(i & 7)) & 1)
        case 2: return Int64((payload.load(fromByteOffset: i >> 2, as: UInt8.self) >> UInt8((i & 3) * 2)) & 3)
        case 4: return Int64((payload.load(fromByteOffset: i >> 1, as: UInt8.self) >> UInt8((i & 1) * 4)) & 15)
        case 8: return Int64(payload.load(fromByteOffset: i, as: Int8.self))
        case 16: return Int64(Int16(littleEndian: payload.loadUnaligned(fromByteOffset: i * 2, as: Int16.self)))
        case 32: return Int64(Int32(littleEndian: payload.loadUnaligned(fromByteOffset: i * 4, as: Int32.self)))
        default: return Int64(littleEndian: payload.loadUnaligned(fromByteOffset: i * 8, as: Int64.self))
        }
    }

    /// `unsigned(i)` without the checks, for a node already checked to be an integer node of at least 8-bit
    /// elements holding more than `i`.
    @inline(__always)
    func rawUnsigned(_ i: Int) -> UInt64 {
        switch width {
        case 8: return UInt64(payload.load(fromByteOffset: i, as: UInt8.self))
        case 16: return UInt64(UInt16(littleEndian: payload.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self)))
        case 32: return UInt64(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)))
        default: return UInt64(bitPattern: rawInt(i))
        }
    }

    /// Element `i` of an `ArrayUnsigned` node (cluster key arrays, B+tree offsets): widths 8–32 unsigned.
    func unsigned(_ i: Int) throws -> UInt64 {
        guard i >= 0, i < count, scheme == 0 else { throw outOfRange(i) }
        switch width {
        case 8: return UInt64(payload.load(fromByteOffset: i, as: UInt8.self))
        case 16: return UInt64(UInt16(littleEndian: payload.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self)))
        case 32: return UInt64(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)))
        default: return UInt64(bitPattern: rawInt(i))
        }
    }

    /// Slot `i` of a has-refs node as a ref: nil for 0; an error for a tagged number or a misaligned value.
    func ref(_ i: Int) throws -> Int? {
        let v = try int(i)
        if v == 0 { return nil }
        guard v > 0, v & 7 == 0 else {
            throw RealmCoreFileError.corrupt(what: "slot \(i) holds \(v & 1 == 1 ? "a number" : "a misaligned value") where a ref is expected", offset: ref, context: "")
        }
        return Int(v)
    }

    /// Slot `i` as a tagged number (`(v << 1) | 1`).
    func tagged(_ i: Int) throws -> Int64 {
        let v = try int(i)
        guard v & 1 == 1 else {
            throw RealmCoreFileError.corrupt(what: "slot \(i) holds a ref where a number is expected", offset: ref, context: "")
        }
        return v >> 1
    }

    /// Slot `i`, which is either a ref or a tagged number.
    func refOrTagged(_ i: Int) throws -> (ref: Int?, number: Int64?) {
        let v = try int(i)
        if v & 1 == 1 { return (nil, v >> 1) }
        if v == 0 { return (nil, nil) }
        guard v > 0, v & 7 == 0 else {
            throw RealmCoreFileError.corrupt(what: "slot \(i) holds a misaligned ref", offset: ref, context: "")
        }
        return (Int(v), nil)
    }

    /// `length` payload bytes from `offset` (multiply and ignore schemes).
    func bytes(_ offset: Int, _ length: Int) throws -> UnsafeRawBufferPointer {
        guard offset >= 0, length >= 0, offset + length <= payloadBytes else {
            throw RealmCoreFileError.corrupt(what: "bytes \(offset)..<\(offset + length) outside a node of \(payloadBytes) payload bytes", offset: ref, context: "")
        }
        return UnsafeRawBufferPointer(start: payload + offset, count: length)
    }

    private func outOfRange(_ i: Int) -> RealmCoreFileError {
        if scheme != 0 {
            return .corrupt(what: "an integer node was expected, found one of width scheme \(scheme)", offset: ref, context: "")
        }
        return .corrupt(what: "element \(i) read from a node of \(count) elements", offset: ref, context: "")
    }
}

/// The structure walker shared by every part of the reader: turns refs into checked nodes.
final class CoreNodeReader: @unchecked Sendable {  // immutable after init; CoreMemory guards its own state
    let memory: CoreMemory
    /// Upper bound on the nodes a whole-structure walk may visit: more than the file can hold means a ref loop.
    let nodeBudget: Int

    init(memory: CoreMemory) {
        self.memory = memory
        nodeBudget = max(64, memory.size / 8)
    }

    /// The node at `ref`, its header and payload checked to lie inside the file.
    func node(_ ref: Int) throws -> CoreNode {
        let size = memory.size
        guard ref > 0, ref & 7 == 0, ref <= size - 8 else {
            throw RealmCoreFileError.corrupt(what: "ref \(ref) outside the file of \(size) bytes or misaligned", offset: ref, context: "")
        }
        try memory.ensure(offset: ref, count: 8)
        let h = memory.base + ref
        let flags = h.load(fromByteOffset: 4, as: UInt8.self)
        let count = Int(h.load(fromByteOffset: 5, as: UInt8.self)) << 16
            | Int(h.load(fromByteOffset: 6, as: UInt8.self)) << 8 | Int(h.load(fromByteOffset: 7, as: UInt8.self))
        let width = (1 << Int(flags & 7)) >> 1
        let scheme = Int((flags & 0x18) >> 3)
        let bytes: Int
        switch scheme {
        case 0: bytes = (count * width + 7) / 8
        case 1: bytes = count * width
        case 2: bytes = count
        default:
            throw RealmCoreFileError.corrupt(what: "node header with unknown width scheme 3", offset: ref, context: "")
        }
        guard bytes <= size - ref - 8 else {
            throw RealmCoreFileError.corrupt(what: "node of \(count) elements × \(width) runs past the end of the file", offset: ref, context: "")
        }
        try memory.ensure(offset: ref + 8, count: bytes)
        return CoreNode(ref: ref, flags: flags, count: count, width: width, scheme: scheme,
                        payload: UnsafeRawPointer(h + 8), payloadBytes: bytes)
    }

    /// A node that must have refs (a structure node rather than a leaf of values).
    func structure(_ ref: Int, minimumCount: Int = 0, _ what: String) throws -> CoreNode {
        let n = try node(ref)
        guard n.hasRefs, n.count >= minimumCount else {
            throw RealmCoreFileError.corrupt(what: "\(what) is not a structure node of at least \(minimumCount) slots", offset: ref, context: "")
        }
        return n
    }
}

/// Counts the nodes one walk visits and stops it when it exceeds what the file can hold (a ref loop).
struct WalkBudget {
    var remaining: Int
    init(_ reader: CoreNodeReader) { remaining = reader.nodeBudget }
    mutating func spend(_ ref: Int) throws {
        remaining -= 1
        if remaining < 0 {
            throw RealmCoreFileError.corrupt(what: "more nodes reached than the file can hold (a ref loop)", offset: ref, context: "")
        }
    }
}

/// Adds context (a table, a column, an object) to a corrupt-file error thrown by `body`.
@inline(__always)
func within<T>(_ context: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let RealmCoreFileError.corrupt(what, offset, inner) {
        let outer = context()
        throw RealmCoreFileError.corrupt(what: what, offset: offset, context: inner.isEmpty ? outer : outer + ", " + inner)
    }
}
