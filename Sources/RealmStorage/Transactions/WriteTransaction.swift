/// Identifies one list or backlink slot: a column of one object.
struct SlotKey: Hashable {
    var classID: UInt32
    var key: UInt64
    var columnID: UInt32
}

/// The single write transaction: reads see its own changes; nothing is visible to others until `commit()`.
///
/// Not thread-safe: use it on the thread that began it, and end it with `commit()` or `rollback()`.
public final class WriteTransaction: Snapshot, NodeSink {
    var freeSpace: FreeSpace
    /// Object trees changed in this transaction, by class ID.
    var roots: [UInt32: TreeChild] = [:]
    /// Lists changed in this transaction (their committed nodes are already freed).
    var dirtyLists: [SlotKey: [Value]] = [:]
    /// Backlink sets changed in this transaction, sorted origin keys.
    var dirtyBacklinks: [SlotKey: [UInt64]] = [:]
    /// Indexes loaded in this transaction, by (class ID, column ID).
    var indexes: [SlotKey: EntryTree] = [:]
    var catalogueChanged = false
    var written: [Extent] = []
    private(set) var isActive = true
    let oldestReader: UInt64

    init(database: Database, meta: Meta, mapping: Mapping, oldestReader: UInt64) throws {
        self.oldestReader = oldestReader
        self.freeSpace = FreeSpace(entries: [], endPage: meta.pageCount, oldestReader: oldestReader)
        try super.init(database: database, meta: meta, mapping: mapping, readerSlot: nil)
        if meta.freeListRef != 0 {
            let entries = try FreeSpace.decode(node(meta.freeListRef, expected: .freeList), ref: meta.freeListRef,
                                               source: self, pageCount: meta.pageCount)
            freeSpace = FreeSpace(entries: entries, endPage: meta.pageCount, oldestReader: oldestReader)
        }
    }

    deinit { if isActive { rollback() } }

    /// Whether anything was changed.
    public var hasChanges: Bool {
        catalogueChanged || !roots.isEmpty || !dirtyLists.isEmpty || !dirtyBacklinks.isEmpty
    }

    func checkActive() throws { if !isActive { throw StorageError.transactionEnded } }

    /// Discards every change and releases the writer lock.
    public func rollback() {
        guard isActive else { return }
        isActive = false
        database.endWrite()
    }

    func finish() {
        isActive = false
        database.endWrite()
    }

    // MARK: NodeSink

    override func node(_ ref: UInt64, expected: NodeType?) throws -> UnsafeRawBufferPointer {
        try super.node(ref, expected: expected)
    }

    func write(_ node: [UInt8]) throws -> UInt64 {
        let pages = pagesFor(bytes: node.count)
        return try write(node, atPage: freeSpace.allocate(pages), pages: pages)
    }

    /// Writes a node at an even page. A backlink column tells a list node's ref from a single origin
    /// (`key << 1 | 1`) by the low bit, so a backlink list must start on an even page (docs/FILE_FORMAT.md,
    /// "Cluster"). One spare page is allocated and given straight back.
    func writeAtEvenPage(_ node: [UInt8]) throws -> UInt64 {
        let pages = pagesFor(bytes: node.count)
        var page = freeSpace.allocate(pages + 1)
        if page & 1 == 1 {
            freeSpace.giveBack(Extent(page: page, count: 1))
            page += 1
        } else {
            freeSpace.giveBack(Extent(page: page + UInt64(pages), count: 1))
        }
        return try write(node, atPage: page, pages: pages)
    }

    private func write(_ node: [UInt8], atPage page: UInt64, pages: Int) throws -> UInt64 {
        var padded = node
        padded.append(contentsOf: repeatElement(0, count: pages * pageSize - node.count))
        try padded.withUnsafeBytes { try database.store.write($0, atPage: page) }
        written.append(Extent(page: page, count: UInt64(pages)))
        pageLimit = max(pageLimit, freeSpace.endPage)
        return page
    }

    func free(_ ref: UInt64) throws {
        let n = try super.node(ref, expected: nil)
        freeSpace.free(Extent(page: ref, count: UInt64(pagesFor(bytes: n.count))))
    }

    func discard(_ ref: UInt64) throws {
        guard let i = written.lastIndex(where: { $0.page == ref }) else { return }
        freeSpace.giveBack(written.remove(at: i))
    }

    // MARK: Dirty state seen by reads

    override func root(of classID: UInt32) -> TreeChild {
        roots[classID] ?? super.root(of: classID)
    }

    override func listValues(_ classID: UInt32, _ key: UInt64, _ info: PropertyInfo, _ loc: RowLocation) throws -> [Value] {
        if let l = dirtyLists[SlotKey(classID: classID, key: key, columnID: info.columnID)] { return l }
        return try super.listValues(classID, key, info, loc)
    }

    override func backlinkKeys(_ classID: UInt32, _ key: UInt64, _ bl: PropertyInfo) throws -> [UInt64] {
        if let l = dirtyBacklinks[SlotKey(classID: classID, key: key, columnID: bl.columnID)] { return l }
        return try super.backlinkKeys(classID, key, bl)
    }

    override func indexTree(_ classID: UInt32, _ p: PropertyInfo) -> EntryTree {
        indexes[SlotKey(classID: classID, key: 0, columnID: p.columnID)] ?? EntryTree(root: p.indexRoot)
    }

    func mutator(_ classID: UInt32) throws -> TreeMutator {
        guard let c = catalogue.classInfo(id: classID) else { throw StorageError.noSuchClass("class \(classID)") }
        return TreeMutator(sink: self, properties: c.properties)
    }

    /// The dirty leaf and row of an object, making its path dirty.
    func mutableRow(_ classID: UInt32, _ key: UInt64) throws -> (DirtyLeaf, Int) {
        var root = self.root(of: classID)
        let found = try mutator(classID).leafForUpdate(&root, key: key)
        roots[classID] = root
        guard let f = found else {
            throw StorageError.noSuchObject(className: catalogue.classInfo(id: classID)?.name ?? "?", key: key)
        }
        return f
    }

    func classIndex(_ classID: UInt32) throws -> Int {
        guard let i = catalogue.classIndex(id: classID) else { throw StorageError.noSuchClass("class \(classID)") }
        return i
    }

    // MARK: Index maintenance

    func withIndex(_ classID: UInt32, _ p: PropertyInfo, _ body: (inout EntryTree) throws -> Void) throws {
        let slot = SlotKey(classID: classID, key: 0, columnID: p.columnID)
        var tree = indexes[slot] ?? EntryTree(root: p.indexRoot)
        try body(&tree)
        indexes[slot] = tree
    }

    func indexEntry(_ value: Value, _ key: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        IndexKey.encode(value, into: &bytes)
        IndexKey.appendObjectKey(key, to: &bytes)
        return bytes
    }

    func addToIndex(_ classID: UInt32, _ p: PropertyInfo, _ value: Value, _ key: UInt64) throws {
        let entry = indexEntry(value, key)
        try withIndex(classID, p) { _ = try $0.insert(entry, sink: self) }
    }

    func removeFromIndex(_ classID: UInt32, _ p: PropertyInfo, _ value: Value, _ key: UInt64) throws {
        let entry = indexEntry(value, key)
        try withIndex(classID, p) { _ = try $0.remove(entry, sink: self) }
    }
}
