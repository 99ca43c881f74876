/// The node a meta slot points at (type 8): the catalogue, the free list and the commit log of one version,
/// in one node so that a small commit writes one page of bookkeeping instead of three.
///
/// Body: `u32 format`, `u32 catalogueBytes`, the catalogue section, zero padding to 8 bytes, then the free
/// list (`u32 count`, 4 reserved, 24-byte entries) and the commit log (`u32 count`, 4 reserved, 16-byte
/// entries), then zeros only where the node would otherwise end before the last of the pages it was given (a node's
/// pages are counted from its length). See docs/FILE_FORMAT.md, "Commit root".
enum CommitRoot {
    static let format: UInt32 = 2

    /// Bytes the node needs for a catalogue section of `catalogueBytes`, `freeEntries` free-list entries and
    /// `logEntries` commit-log entries.
    static func size(catalogueBytes: Int, freeEntries: Int, logEntries: Int) -> Int {
        let head = nodeHeaderSize + 8 + catalogueBytes
        return (head + 7) / 8 * 8 + 8 + 24 * freeEntries + 8 + 16 * logEntries
    }

    /// Built in `buffer`'s storage when it has room (a recycled node array, DECISIONS 64): a new array per
    /// commit cost an allocation and the runtime's lookup of the array type's metadata, ~2.5 % of a small
    /// commit's time on a CPU whose caches the disk wait left cold.
    static func encode(catalogue: [UInt8], free: [(Extent, UInt64)], log: [Extent], pages: Int,
                       reusing buffer: consuming [UInt8] = []) -> [UInt8] {
        let contents = size(catalogueBytes: catalogue.count, freeEntries: free.count, logEntries: log.count)
        precondition(contents <= pages * pageSize, "commit root larger than its pages")
        // Hashing, logging and writing zeros cost as much as the contents did: the node is padded only as far
        // as it must be to span all its pages (it frees as many as it took).
        let length = max(contents, pages * pageSize - pageSize + 1)
        var node = [UInt8].filled(count: length, reusing: consume buffer, minimumCapacity: smallNodeCapacity) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            var w = FieldWriter(buffer.baseAddress! + nodeHeaderSize)
            w.u32(format)
            w.u32(UInt32(catalogue.count))
            catalogue.withUnsafeBytes { w.raw($0) }
            w.skip(to: (nodeHeaderSize + w.written + 7) / 8 * 8 - nodeHeaderSize)
            w.u32(UInt32(free.count))
            w.u32(0)
            for (e, v) in free {
                w.u64(e.page)
                w.u64(e.count)
                w.u64(v)
            }
            w.u32(UInt32(log.count))
            w.u32(0)
            for e in log {
                w.u64(e.page)
                w.u64(e.count)
            }
            precondition(nodeHeaderSize + w.written == contents, "commit root size")
        }
        sealNode(&node, type: .catalogue)
        return node
    }

    /// Offset of the free-list section.
    private static func freeOffset(_ node: UnsafeRawBufferPointer, ref: UInt64, source: NodeSource) throws -> Int {
        guard node.count >= nodeHeaderSize + 8 else { throw source.corrupt(ref, "commit root shorter than its header") }
        let length = Int(node.u32(at: nodeHeaderSize + 4))
        let offset = (nodeHeaderSize + 8 + length + 7) / 8 * 8
        guard offset + 8 <= node.count else { throw source.corrupt(ref, "catalogue section runs past the node") }
        return offset
    }

    static func freeList(_ node: UnsafeRawBufferPointer, ref: UInt64, source: NodeSource, pageCount: UInt64) throws -> [(Extent, UInt64)] {
        let o = try freeOffset(node, ref: ref, source: source)
        let count = Int(node.u32(at: o))
        guard count <= (node.count - o - 8) / 24 else { throw source.corrupt(ref, "free list count \(count) runs past the node") }
        var out: [(Extent, UInt64)] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            let at = o + 8 + 24 * i
            let e = Extent(page: node.u64(at: at), count: node.u64(at: at + 8))
            guard e.page >= 2, e.count > 0, e.page < pageCount, e.count <= pageCount - e.page else {
                throw source.corrupt(ref, "free list entry \(i) (pages \(e.page)+\(e.count)) is outside the file")
            }
            out.append((e, node.u64(at: at + 16)))
        }
        return out
    }

    /// The extents the commit wrote (every node but this one), or nil when the sections do not fit the node.
    static func logEntries(_ node: UnsafeRawBufferPointer) -> [Extent]? {
        guard node.count >= nodeHeaderSize + 8 else { return nil }
        let o = (nodeHeaderSize + 8 + Int(node.u32(at: nodeHeaderSize + 4)) + 7) / 8 * 8
        guard o + 8 <= node.count else { return nil }
        let freeCount = Int(node.u32(at: o))
        guard freeCount <= (node.count - o - 8) / 24 else { return nil }
        let lo = o + 8 + 24 * freeCount
        guard lo + 8 <= node.count else { return nil }
        let count = Int(node.u32(at: lo))
        guard count <= (node.count - lo - 8) / 16 else { return nil }
        return (0..<count).map { Extent(page: node.u64(at: lo + 8 + 16 * $0), count: node.u64(at: lo + 16 + 16 * $0)) }
    }
}
