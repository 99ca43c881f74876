#if canImport(Glibc)
import Glibc
#endif

extension WriteTransaction {
    /// Makes every change durable and visible as one new version, atomically: after a crash at any instant the
    /// database opens at either the previous version or this one, whole.
    public func commit() throws {
        try checkActive()
        defer { if isActive { finish() } }
        guard hasChanges else { return }
        let newVersion = meta.version + 1

        // 1. Lists, sets and dictionaries: serialized into their (dirty) clusters' bytes columns.
        if !dirtyLists.isEmpty || !dirtyDictionaries.isEmpty { try serializeDirtyLists() }

        // 2. Object trees.
        for (classID, root) in roots {
            guard let ci = catalogue.classIndex(id: classID) else { continue }
            let ref = try TreeMutator(sink: self, properties: catalogue.classes[ci].properties).write(root)
            catalogue.classes[ci].tableRoot = ref
        }
        // The written leaves may be handed to the next transaction (DecodedLeaves): from here on this one reads
        // the trees it committed, not its dirty copies.
        roots = [:]

        // 3. Indexes and backlink trees.
        try flushAllIndexEntries()
        for (slot, var tree) in indexes where tree.isDirty {
            let ref = try tree.commit(sink: self)
            guard let ci = catalogue.classIndex(id: slot.classID),
                  let pi = catalogue.classes[ci].properties.firstIndex(where: { $0.columnID == slot.columnID }) else { continue }
            catalogue.classes[ci].properties[pi].indexRoot = ref
        }

        // 4. The commit root: catalogue, free list and commit log in one node, sized before the free list is
        //    computed (allocating changes it), from the same arena as the rest of the commit.
        if meta.catalogueRef != 0 { try free(meta.catalogueRef) }
        let catalogueBytes = catalogue.encodeSection(reusing: take(&database.recycled.section, leaving: []))
        let log = written
        // A bound without merging while the lists are short (building the merged list twice was a fiftieth of a
        // small commit); the merged count when many extents were freed, which a bound could overstate by pages
        // of padding in the commit root.
        let bound = freeSpace.entryBound
        let estimate = (bound <= 64 ? bound : freeSpace.entries(newVersion: newVersion).count) + 2
        let rootPages = pagesFor(bytes: CommitRoot.size(catalogueBytes: catalogueBytes.count, freeEntries: estimate,
                                                        logEntries: log.count))
        let rootRef = freeSpace.allocate(rootPages)
        freeSpace.closeArena()
        let entries = freeSpace.entries(newVersion: newVersion)
        precondition(entries.count <= estimate, "free list grew past its estimate")
        var rootNode = CommitRoot.encode(catalogue: catalogueBytes, free: entries, log: log, pages: rootPages,
                                         reusing: smallNodeBuffer())
        if pageBoundChecksums { bindNode(&rootNode, toPage: rootRef) }
        try stage(rootNode, at: rootRef, pages: rootPages)
        try flushWrites()

        // 5. Durability (docs/RELIABILITY.md walks through a crash between any two steps): a small commit
        //    appends one record to the commit log, synced, and publishes its meta (DECISIONS 39, 53); a large
        //    one makes its nodes durable in the data file, then its meta slot, then retires the log's records.
        var newMeta = Meta(version: newVersion, catalogueRef: rootRef, freeListRef: 0, commitLogRef: 0,
                           pageCount: freeSpace.endPage, logID: meta.logID, logGeneration: meta.logGeneration,
                           logEnd: meta.logEnd, logStart: meta.logStart)
        // The version keeps its file's rule for node checksums: a file of format 5 stays so until it is upgraded.
        newMeta.format = meta.encodedFormat
        if let log = database.commitLog, meta.logID != 0, !logOverflow {
            newMeta = try commitLogged(newMeta, log: log, catalogueBytes: catalogueBytes, rootRef: rootRef, freeList: entries)
        } else {
            newMeta = try commitDirect(newMeta)
        }
        database.store.committed(version: newVersion)
        if !handedOver { handOver(version: newVersion, catalogueSection: catalogueBytes, root: rootRef, freeList: entries) }
        recycleNodeBuffers()
        meta = newMeta
        finish()
    }

    /// Serializes the lists changed in this transaction into their (dirty) clusters' bytes columns, in key
    /// order, so that consecutive rows are found in the leaf the last one was in (nothing here adds or removes
    /// rows, so a dirty leaf stays where it is). A method of its own, called only when a list changed: inside
    /// `commit` its working state (an optional class description) was destroyed by every commit (`perf`: ~1 %
    /// of a small commit's time, in code the disk wait had left cold).
    private func serializeDirtyLists() throws {
        var lastLeaf: (classID: UInt32, leaf: DirtyLeaf)?
        var lastClass: (id: UInt32, info: ClassInfo)?
        func target(_ slot: SlotKey) throws -> (DirtyLeaf, Int, PropertyInfo)? {
            if lastClass?.id != slot.classID {
                guard let c = catalogue.classInfo(id: slot.classID) else { return nil }
                lastClass = (slot.classID, c)
            }
            guard let p = lastClass!.info.property(column: slot.columnID) else { return nil }
            if let l = lastLeaf, l.classID == slot.classID, let row = l.leaf.row(of: slot.key) { return (l.leaf, row, p) }
            guard try locate(slot.classID, slot.key) != nil else { return nil }
            let (leaf, row) = try mutableRow(slot.classID, slot.key)
            lastLeaf = (slot.classID, leaf)
            return (leaf, row, p)
        }
        func ordered<V>(_ d: [SlotKey: V]) -> [(key: SlotKey, value: V)] {
            d.sorted { SlotKey.ordered($0.key, $1.key) }
        }
        for (slot, values) in ordered(dirtyLists) {
            guard let (leaf, row, p) = try target(slot) else { continue }
            try leaf.set(row: row, property: p, .data(ListCoding.encode(values, type: p.type, nullable: p.isSet ? p.collectionValuesNullable : p.isOptional)))
        }
        for (slot, entries) in ordered(dirtyDictionaries) {
            guard let (leaf, row, p) = try target(slot) else { continue }
            try leaf.set(row: row, property: p, .data(DictionaryCoding.encode(entries, type: p.type, nullable: p.collectionValuesNullable)))
        }
    }

    /// Gives the nodes this commit wrote to the next transaction (`DecodedLeaves`; taken only by one that
    /// starts from `version`), and its catalogue and free list (`WriterHandover`, taken only by one that starts
    /// from this commit root), tells the catalogue cache what the new catalogue section decodes to (it is
    /// matched by those bytes, so this holds whether or not the commit then succeeds), and lets go of the
    /// state only a running transaction needs.
    func handOver(version: UInt64, catalogueSection: [UInt8], root: UInt64, freeList: [(Extent, UInt64)]) {
        database.writerHandover = WriterHandover(version: version, root: root, store: ObjectIdentifier(database.store),
                                                 catalogue: catalogue, freeList: freeList)
        database.recycled.section = database.catalogues.remember(section: catalogueSection, catalogue)
        writtenLeaves.version = version
        writtenLeaves.store = ObjectIdentifier(database.store)
        database.decodedLeaves = writtenLeaves
        writtenLeaves = DecodedLeaves()
        keptLeaves.removeAllKeepingStorage()
        database.recycled.decodedLists = keptLeaves
        keptLeaves = DecodedLeaves()
        indexes = [:]
        plans.removeAll()
        handedOver = true
    }

    /// Writes an out-of-line value as a blob node.
    func storeBlob(_ bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        var b = NodeBuilder(.blob, capacity: bytes.count + nodeHeaderSize)
        b.w.raw(bytes)
        return try write(b.finish())
    }
}

extension Snapshot {
    /// Every node reachable from a committed table tree: inner nodes, clusters and the blobs of their bytes
    /// columns (long strings, data, mixed values, lists, format 2's backlink sets) — including columns of
    /// removed properties, whose blobs live until the cluster is rewritten.
    func collectTableRefs(_ ref: UInt64, _ c: ClassInfo, into refs: inout [UInt64]) throws {
        if ref == 0 { return }
        refs.append(ref)
        let node = try self.node(ref, expected: nil)
        if TableTree.isLeafNode(node) {
            let view = try ClusterView(node: node, ref: ref, source: self)
            for id in view.columnIDs {
                guard let e = view.columnEntry(id), let enc = ColumnEncoding(rawValue: e.encoding), enc == .bytes else { continue }
                let r: ColumnReader
                do {
                    r = try ColumnReader(node: node, offset: e.offset, length: e.length, count: view.count, encoding: enc,
                                         type: .data, linkStorage: .raw)
                } catch {
                    throw corrupt(ref, "column \(id) is malformed")
                }
                r.forEachBlobRef { refs.append($0) }
            }
            return
        }
        guard node[0] == NodeType.tableInner.rawValue else { throw corrupt(ref, "expected a table node, found type \(node[0])") }
        let v = try InnerView(node: node, ref: ref, source: self)
        for i in 0..<v.count { try collectTableRefs(v.ref(i), c, into: &refs) }
    }
}
