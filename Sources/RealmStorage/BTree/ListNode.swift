/// A list node (type 3): the elements of one list property of one object, or a set of backlink origins.
enum ListNode {
    static func encode(_ values: [Value], type: PropertyType, nullable: Bool,
                       storeBlob: (UnsafeRawBufferPointer) throws -> UInt64) throws -> [UInt8] {
        var b = NodeBuilder(.list, capacity: 32 + values.count * 8)
        b.w.u32(UInt32(values.count))
        b.w.u8(type.rawValue)
        b.w.u8(nullable ? 1 : 0)
        b.w.u16(0)
        let lengthAt = b.w.count
        b.w.u32(0)
        b.w.u32(0)
        let start = b.w.count
        try ColumnCodec.encodeColumn(values[...], type: type, nullable: nullable, linkStorage: .raw,
                                     into: &b.w, storeBlob: storeBlob)
        b.w.patchU32(UInt32(b.w.count - start), at: lengthAt)
        return b.finish()
    }

    static func reader(_ node: UnsafeRawBufferPointer, ref: UInt64, source: NodeSource) throws -> (ColumnReader, Int) {
        guard node.count >= 32 else { throw source.corrupt(ref, "list node shorter than its header") }
        // Lists are decoded whole, so checking the checksum costs less than the decoding; it keeps a damaged
        // count (up to 2^28 elements) from being decoded at all.
        guard nodeChecksum(node) == node.u64(at: 8) else { throw source.corrupt(ref, "list node fails its checksum") }
        let count = Int(node.u32(at: 16))
        guard let type = PropertyType(rawValue: node[20]), type != .linkingObjects, type != .backlink else {
            throw source.corrupt(ref, "list node has element type \(node[20])")
        }
        let length = Int(node.u32(at: 24))
        guard count <= 1 << 28, 32 + length <= node.count else { throw source.corrupt(ref, "list node sizes out of range") }
        do {
            let r = try ColumnReader(node: node, offset: 32, length: length, count: count,
                                     encoding: ColumnEncoding.encoding(for: type), type: type, linkStorage: .raw)
            return (r, count)
        } catch {
            throw source.corrupt(ref, "list node column is malformed")
        }
    }

    static func decode(_ node: UnsafeRawBufferPointer, ref: UInt64, source: NodeSource) throws -> [Value] {
        let (r, count) = try reader(node, ref: ref, source: source)
        var out: [Value] = []
        out.reserveCapacity(count)
        for i in 0..<count { out.append(try source.value(r, at: i, node: ref)) }
        return out
    }

    /// Refs of out-of-line values of a list node (freed with the node).
    static func blobRefs(_ node: UnsafeRawBufferPointer, ref: UInt64, source: NodeSource) throws -> [UInt64] {
        let (r, _) = try reader(node, ref: ref, source: source)
        var refs: [UInt64] = []
        try r.forEachBlobRef { refs.append($0) }
        return refs
    }
}

extension ColumnReader {
    /// Calls `body` with the blob ref of every out-of-line value (bytes columns only).
    func forEachBlobRef(_ body: (UInt64) throws -> Void) rethrows {
        guard encoding == .bytes else { return }
        for i in 0..<count {
            if let b = blobReference(at: i) { try body(b.ref) }
        }
    }
}
