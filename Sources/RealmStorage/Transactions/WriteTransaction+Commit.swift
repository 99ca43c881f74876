extension WriteTransaction {
    /// Makes every change durable and visible as one new version, atomically: after a crash at any instant the
    /// database opens at either the previous version or this one, whole.
    public func commit() throws {
        try checkActive()
        defer { if isActive { finish() } }
        guard hasChanges else { return }
        let newVersion = meta.version + 1

        // 1. Lists and backlink sets: write their nodes and store the refs in the (dirty) clusters.
        for (slot, values) in dirtyLists.sorted(by: { ($0.key.classID, $0.key.key) < ($1.key.classID, $1.key.key) }) {
            guard let c = catalogue.classInfo(id: slot.classID), let p = c.property(column: slot.columnID),
                  try locate(slot.classID, slot.key) != nil else { continue }
            var ref: UInt64 = 0
            if !values.isEmpty {
                let node = try ListNode.encode(values, type: p.type, nullable: p.isOptional, storeBlob: storeBlob)
                ref = try write(node)
            }
            let (leaf, row) = try mutableRow(slot.classID, slot.key)
            leaf.set(row: row, property: p, .int(Int64(ref)))
        }
        for (slot, keys) in dirtyBacklinks {
            guard let c = catalogue.classInfo(id: slot.classID), let p = c.property(column: slot.columnID),
                  try locate(slot.classID, slot.key) != nil else { continue }
            var tag: UInt64 = 0
            if keys.count == 1 {
                tag = keys[0] << 1 | 1
            } else if keys.count > 1 {
                let node = try ListNode.encode(keys.map { .int(Int64(bitPattern: $0)) }, type: .int, nullable: false, storeBlob: storeBlob)
                tag = try write(node) << 1  // even: told from an inline origin by the low bit
            }
            let (leaf, row) = try mutableRow(slot.classID, slot.key)
            leaf.set(row: row, property: p, .int(Int64(bitPattern: tag)))
        }

        // 2. Object trees.
        for (classID, root) in roots {
            guard let ci = catalogue.classIndex(id: classID) else { continue }
            let ref = try TreeMutator(sink: self, properties: catalogue.classes[ci].properties).write(root)
            catalogue.classes[ci].tableRoot = ref
        }

        // 3. Indexes.
        for (slot, var tree) in indexes where tree.isDirty {
            let ref = try tree.commit(sink: self)
            guard let ci = catalogue.classIndex(id: slot.classID),
                  let pi = catalogue.classes[ci].properties.firstIndex(where: { $0.columnID == slot.columnID }) else { continue }
            catalogue.classes[ci].properties[pi].indexRoot = ref
        }

        // 4. Catalogue.
        if meta.catalogueRef != 0 { try free(meta.catalogueRef) }
        let catalogueRef = catalogue.classes.isEmpty && catalogue.schemaVersion == 0 ? 0 : try write(catalogue.encode())

        // 5. Free list and commit log, sized before the free list is computed (allocating changes it).
        if meta.freeListRef != 0 { try free(meta.freeListRef) }
        if meta.commitLogRef != 0 { try free(meta.commitLogRef) }
        let logPages = pagesFor(bytes: nodeHeaderSize + 8 + 16 * (written.count + 2))
        let logRef = freeSpace.allocate(logPages)
        let estimate = freeSpace.entries(newVersion: newVersion).count + 2
        let freePages = pagesFor(bytes: FreeSpace.encodedSize(entries: estimate))
        let freeRef = freeSpace.allocate(freePages)
        let entries = freeSpace.entries(newVersion: newVersion)
        precondition(entries.count <= estimate, "free list grew past its estimate")
        let freeNode = FreeSpace.encode(entries, padTo: freePages * pageSize)
        try freeNode.withUnsafeBytes { try database.store.write($0, atPage: freeRef) }
        written.append(Extent(page: freeRef, count: UInt64(freePages)))

        var log = NodeBuilder(.commitLog, capacity: logPages * pageSize)
        log.w.u32(UInt32(written.count))
        log.w.u32(0)
        for e in written {
            log.w.u64(e.page)
            log.w.u64(e.count)
        }
        log.w.zeros(logPages * pageSize - log.w.count)
        let logNode = log.finish()
        try logNode.withUnsafeBytes { try database.store.write($0, atPage: logRef) }

        // 6. The meta slot, then one sync (see docs/DECISIONS.md, 2).
        let newMeta = Meta(version: newVersion, catalogueRef: catalogueRef, freeListRef: freeRef, commitLogRef: logRef,
                           pageCount: freeSpace.endPage)
        try newMeta.encode().withUnsafeBytes { try database.store.write($0, atPage: newVersion % 2) }
        try database.store.sync()
        meta = newMeta
        finish()
    }

    /// Writes an out-of-line value as a blob node.
    func storeBlob(_ bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        var b = NodeBuilder(.blob, capacity: bytes.count + nodeHeaderSize)
        b.w.raw(bytes)
        return try write(b.finish())
    }
}

extension Snapshot {
    /// Every node reachable from a committed table tree: inner nodes, clusters, their blobs, list nodes
    /// (with their blobs) and backlink list nodes. Columns of removed properties contribute only blobs (their
    /// list nodes were freed when the property was removed).
    func collectTableRefs(_ ref: UInt64, _ c: ClassInfo, into refs: inout [UInt64]) throws {
        if ref == 0 { return }
        refs.append(ref)
        let node = try self.node(ref, expected: nil)
        if TableTree.isLeafNode(node) {
            let view = try ClusterView(node: node, ref: ref, source: self)
            for id in view.columnIDs {
                guard let e = view.columnEntry(id), let enc = ColumnEncoding(rawValue: e.encoding), enc == .bytes else { continue }
                let r = try ColumnReader(node: node, offset: e.offset, length: e.length, count: view.count, encoding: enc,
                                         type: .data, linkStorage: .raw)
                try r.forEachBlobRef { refs.append($0) }
            }
            for p in c.properties where (p.isList && p.type != .linkingObjects) || p.type == .backlink {
                guard let r = try view.reader(for: p, source: self) else { continue }
                for i in 0..<view.count {
                    let raw = UInt64(bitPattern: r.int(at: i))
                    if raw == 0 || (p.type == .backlink && raw & 1 == 1) { continue }
                    refs.append(p.type == .backlink ? raw >> 1 : raw)
                    if p.isList {
                        refs += try ListNode.blobRefs(self.node(raw, expected: .list), ref: raw, source: self)
                    }
                }
            }
            return
        }
        guard node[0] == NodeType.tableInner.rawValue else { throw corrupt(ref, "expected a table node, found type \(node[0])") }
        let v = try InnerView(node: node, ref: ref, source: self)
        for i in 0..<v.count { try collectTableRefs(v.ref(i), c, into: &refs) }
    }
}
