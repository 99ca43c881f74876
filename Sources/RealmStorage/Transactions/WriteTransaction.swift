#if canImport(Glibc)
import Glibc
#endif
/// Identifies one list slot (a column of one object), or with `key` 0 one index or backlink tree.
struct SlotKey: Hashable {
    var classID: UInt32
    var key: UInt64
    var columnID: UInt32

    /// Class, object, column: the order commit stores slots in (rows of one leaf come together).
    static func ordered(_ a: SlotKey, _ b: SlotKey) -> Bool { (a.classID, a.key, a.columnID) < (b.classID, b.key, b.columnID) }
}

/// A transaction's insert plans by class ID: the first in a field of its own (a small transaction inserts into
/// one class, and a dictionary made for it per transaction cost more than the lookups), any others in a
/// dictionary. A class's plan is in one place or the other, never both.
struct PlanTable {
    private var first: WriteTransaction.InsertPlan?
    private var others = [UInt32: WriteTransaction.InsertPlan]()

    subscript(classID: UInt32) -> WriteTransaction.InsertPlan? {
        get {
            if let f = first, f.classID == classID { return f }
            return others.isEmpty ? nil : others[classID]
        }
        set {
            if first?.classID == classID || (first == nil && others.isEmpty) {
                first = newValue
            } else {
                others[classID] = newValue
            }
        }
    }

    mutating func removeAll() {
        first = nil
        others.removeAll()
    }
}

/// Nodes queued for adjacent pages, written together.
struct PendingRun {
    var page: UInt64
    var pages: UInt64
    /// Node bytes in page order; each is padded with zeros to whole pages when written.
    var chunks: [[UInt8]]
}

/// The single write transaction: reads see its own changes; nothing is visible to others until `commit()`.
///
/// Not thread-safe: use it on the thread that began it, and end it with `commit()` or `rollback()`.
public final class WriteTransaction: Snapshot, NodeSink {
    // Empty dictionaries are made with `init()`, not the literal `[:]`: the literal is a call into the
    // standard library's `init(dictionaryLiteral:)` per dictionary and transaction, cheap in instructions but,
    // on a CPU whose caches went cold during the last disk wait, ~1 % of a small commit's time (`perf`).
    var freeSpace: FreeSpace
    /// Object trees changed in this transaction, by class ID.
    var roots = [UInt32: TreeChild]()
    /// Lists changed in this transaction (their committed nodes are already freed).
    var dirtyLists = [SlotKey: [Value]]()
    /// Dictionaries changed in this transaction, stored in their clusters at commit (as `dirtyLists`).
    var dirtyDictionaries = [SlotKey: ValueDictionary]()
    /// Indexes and backlink trees loaded in this transaction, by (class ID, column ID).
    var indexes = [SlotKey: EntryTree]()
    /// Entries added to indexes that need no lookup before each insert (not primary keys), not yet in their
    /// trees (DECISIONS 52): put in, sorted, before the index is next read or changed otherwise, and at commit.
    var pendingIndexEntries = [SlotKey: PendingIndexEntries]()
    /// Index and backlink entries this transaction put straight into their trees (the first
    /// `Database.directIndexEntries`, all indexes together; later ones wait in `pendingIndexEntries`).
    var directIndexInserts = 0
    var catalogueChanged = false
    /// Insert plans by class ID; dropped whenever the schema changes.
    var plans = PlanTable()
    var written: [Extent] = []
    /// Clusters the commit this transaction started from wrote, decoded (`DecodedLeaves`), and those this
    /// transaction writes.
    var keptLeaves = DecodedLeaves()
    var writtenLeaves = DecodedLeaves()
    /// Node writes not yet issued: runs of adjacent pages.
    var pending: [PendingRun] = []
    var pendingBytes = 0
    /// Every node write issued so far, for the commit log record; dropped (and `logOverflow` set) once they
    /// pass `CommitLog.recordLimit`, which makes the commit go straight to the data file.
    var logEntries: [CommitLog.Entry] = []
    /// Node buffers of the process's last commit, for this transaction's index nodes (`nodeBuffer()`).
    var spareBuffers: [[UInt8]] = []
    /// Table inner node and commit root arrays of the process's last commit (`smallNodeBuffer()`).
    var smallBuffers: [[UInt8]] = []
    var logBytes = 0
    var logOverflow = false
    /// Nodes of a logged commit are written only to the commit log (DECISIONS 53): until the commit, reads
    /// find them in `logEntries` — by a scan while there are few (a small commit writes about seven; hashing
    /// each page cost more), then through this table of the index of each page's last node.
    var loggedPages = [UInt64: Int]()
    static let loggedPagesScanLimit = 32
    private(set) var isActive = true
    /// The commit has handed its written nodes on and dropped its working state (`handOver`).
    var handedOver = false
    let oldestReader: UInt64

    init(database: Database, meta: Meta, mapping: Mapping, oldestReader: UInt64) throws {
        self.oldestReader = oldestReader
        self.freeSpace = FreeSpace(entries: [], endPage: meta.pageCount, oldestReader: oldestReader)
        // What this process's last commit left, if this transaction starts from the root it wrote: its catalogue
        // and free list as they went into that root, instead of reading them back (DECISIONS 64). Taken whatever
        // happens, like the decoded leaves, so that a failed commit's is never used later.
        let handed = database.writerHandover.flatMap {
            $0.version == meta.version && $0.root == meta.catalogueRef && $0.store == ObjectIdentifier(database.store) ? $0 : nil
        }
        database.writerHandover = nil
        try super.init(database: database, meta: meta, mapping: mapping, readerSlot: nil, catalogue: handed?.catalogue)
        if let handed {
            freeSpace = FreeSpace(entries: handed.freeList, endPage: meta.pageCount, oldestReader: oldestReader)
        } else if meta.catalogueRef != 0 {
            let entries = try CommitRoot.freeList(node(meta.catalogueRef, expected: .catalogue), ref: meta.catalogueRef,
                                                  source: self, pageCount: meta.pageCount)
            freeSpace = FreeSpace(entries: entries, endPage: meta.pageCount, oldestReader: oldestReader)
        }
        // Taken whatever happens: a leaf handed to this transaction may be changed by it.
        if database.decodedLeaves.version == meta.version, database.decodedLeaves.store == ObjectIdentifier(database.store) {
            keptLeaves = database.decodedLeaves
        }
        database.decodedLeaves = DecodedLeaves()
        writtenLeaves = take(&database.recycled.decodedLists, leaving: DecodedLeaves())
        spareBuffers = take(&database.recycled.indexNodes, leaving: [])
        smallBuffers = take(&database.recycled.smallNodes, leaving: [])
    }

    deinit { if isActive { rollback() } }

    /// Whether anything was changed.
    public var hasChanges: Bool {
        catalogueChanged || !roots.isEmpty || !dirtyLists.isEmpty || !dirtyDictionaries.isEmpty || !pendingIndexEntries.isEmpty
            || indexes.values.contains { $0.isDirty }
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
        // Nodes this transaction wrote may still be queued; reading them needs them in the file.
        if !pending.isEmpty, pending.contains(where: { ref >= $0.page && ref < $0.page + $0.pages }) {
            try flushWrites()
        }
        if !logEntries.isEmpty, let i = loggedPages.isEmpty ? logEntries.lastIndex(where: { $0.page == ref }) : loggedPages[ref] {
            // The entry's bytes stay where they are: an entry is never changed once added, and the array of
            // entries outlives every read of this transaction.
            let b = logEntries[i].bytes.withUnsafeBytes { $0 }
            if let t = expected, b[0] != t.rawValue { throw corrupt(ref, "expected node type \(t.rawValue), found \(b[0])") }
            return b
        }
        return try super.node(ref, expected: expected)
    }

    func write(_ node: inout [UInt8]) throws -> UInt64 {
        let pages = pagesFor(bytes: node.count)
        let page = freeSpace.allocate(pages)
        if pageBoundChecksums { bindNode(&node, toPage: page) }
        try stage(node, at: page, pages: pages)
        return page
    }

    func decodedLeaf(_ ref: UInt64, properties: [PropertyInfo]) -> (leaf: DirtyLeaf, bytes: Int)? {
        keptLeaves.take(ref, properties: properties)
    }

    func wroteLeaf(_ leaf: DirtyLeaf, ref: UInt64, node: [UInt8], properties: [PropertyInfo]) {
        writtenLeaves.add(leaf, ref: ref, node: node, properties: properties)
    }

    func decodedInner(_ ref: UInt64) -> (node: DirtyInner, bytes: Int)? { keptLeaves.takeInner(ref) }

    func wroteInner(_ inner: DirtyInner, ref: UInt64, bytes: Int) { writtenLeaves.addInner(inner, ref: ref, bytes: bytes) }

    func decodedIndexNode(_ ref: UInt64) -> EntryTreeNode? { keptLeaves.takeIndexNode(ref) }

    func wroteIndexNode(_ node: EntryTreeNode, ref: UInt64) { writtenLeaves.addIndexNode(node, ref: ref) }

    /// A recycled index node buffer, taken out of the list (so the caller's is the only reference and it is
    /// written in place); empty when none is left. They are handed on in reverse order of writing, so a commit
    /// that changes the same path gets the leaf's buffer first.
    func nodeBuffer() -> [UInt8] { spareBuffers.popLast() ?? [] }

    func smallNodeBuffer() -> [UInt8] { smallBuffers.popLast() ?? [] }

    /// The cluster array the process's last cluster encoding let go of (`recycleClusterBuffer`), taken.
    func clusterBuffer() -> [UInt8] { take(&database.recycled.cluster, leaving: []) }

    func recycleClusterBuffer(_ bytes: consuming [UInt8]) {
        if bytes.capacity <= Self.largestKeptNodeBuffer { database.recycled.cluster = bytes }
    }

    /// Most node buffers carried to the next transaction, and the largest kept: a small commit builds a few
    /// index nodes of 1–4 KiB; a large one's would only hold memory.
    static let keptNodeBuffers = 16
    static let largestKeptNodeBuffer = 64 << 10

    /// Hands the byte arrays of the nodes this commit built (and the recycled ones it did not use) to the next
    /// write transaction (DECISIONS 64): index nodes' to `nodeBuffer()`, table inner nodes' and the commit
    /// root's to `smallNodeBuffer()`. Each kind is made with room for any node of its kind, so any recycled one
    /// fits the next. A cluster's array stays with its decoded leaf (`DecodedLeaves`) for the next commit to
    /// extend, and comes back through `recycleClusterBuffer`. A new array per node cost an allocation, its
    /// release and the runtime's lookup of the array type's metadata, which on a CPU whose caches the disk wait
    /// left cold added up to ~5 % of a small commit's time. The entries keep their bytes: an array still shared
    /// when a later transaction empties it gets new storage, and the entries' copy stays as it was.
    func recycleNodeBuffers() {
        var spare = spareBuffers
        spareBuffers = []
        var small = smallBuffers
        smallBuffers = []
        for i in logEntries.indices.reversed() {
            let bytes = logEntries[i].bytes
            guard let type = bytes.first, bytes.capacity <= Self.largestKeptNodeBuffer else { continue }
            if type == NodeType.indexLeaf.rawValue || type == NodeType.indexInner.rawValue {
                if spare.count < Self.keptNodeBuffers { spare.append(bytes) }
            } else if type == NodeType.tableInner.rawValue || type == NodeType.catalogue.rawValue {
                if small.count < Self.keptNodeBuffers && bytes.capacity >= smallNodeCapacity { small.append(bytes) }
            }
        }
        database.recycled.indexNodes = spare
        database.recycled.smallNodes = small
    }

    /// Takes a node for page `page`, bound to it already (`bindNode`) in a file of format 6: a logged commit's go straight into its record (`logEntries`); otherwise
    /// they are queued, and runs of adjacent pages are issued together by `flushWrites` (one `pwritev` each).
    func stage(_ node: [UInt8], at page: UInt64, pages: Int) throws {
        // A small commit stages ~10 nodes: one allocation instead of the array's growth steps.
        if written.isEmpty { written.reserveCapacity(16) }
        written.append(Extent(page: page, count: UInt64(pages)))
        pageLimit = max(pageLimit, freeSpace.endPage)
        if logsOnly {
            if logEntries.isEmpty { logEntries.reserveCapacity(16) }
            if !loggedPages.isEmpty {
                loggedPages[page] = logEntries.count
            } else if logEntries.count == Self.loggedPagesScanLimit {
                // Past a few entries the scan gives way to a table.
                for (i, e) in logEntries.enumerated() { loggedPages[e.page] = i }
                loggedPages[page] = logEntries.count
            }
            logEntries.append(CommitLog.Entry(page: page, bytes: node))
            logBytes += node.count
            if logBytes > CommitLog.recordLimit { try overflowRecord() }
            return
        }
        if let last = pending.last, last.page + last.pages == page {
            pending[pending.count - 1].chunks.append(node)
            pending[pending.count - 1].pages += UInt64(pages)
        } else {
            pending.append(PendingRun(page: page, pages: UInt64(pages), chunks: [node]))
        }
        pendingBytes += pages * pageSize
        if pendingBytes >= 8 << 20 { try flushWrites() }
    }

    /// Whether nodes go only to this commit's log record: a logged commit that has not outgrown its record.
    var logsOnly: Bool { !logOverflow && meta.logID != 0 && database.commitLog != nil }

    /// Issues every queued write (before anything reads the nodes back, and before the meta slot). A logged
    /// commit keeps them for its record only; one that outgrows the record writes them, and from then on
    /// everything, to the data file, after the pages only the log held (DECISIONS 53).
    func flushWrites() throws {
        if database.commitLog != nil && !logOverflow && !pending.isEmpty {
            // Only the first commit of a file of format 1 (no log identity yet) logs nodes it also writes here.
            for run in pending {
                var page = run.page
                for c in run.chunks {
                    logEntries.append(CommitLog.Entry(page: page, bytes: c))
                    logBytes += c.count
                    page += UInt64(pagesFor(bytes: c.count))
                }
            }
            if logBytes > CommitLog.recordLimit {
                logOverflow = true
                logEntries = []
            }
        }
        for run in pending { try database.store.write(pages: run.chunks, atPage: run.page) }
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
    }

    /// A logged commit that outgrows its record becomes a direct one: the data file gets the pages only the
    /// log held first (this transaction's own pages may reuse some of them), then this transaction's nodes so
    /// far; from here on everything is written to the data file (DECISIONS 53).
    func overflowRecord() throws {
        logOverflow = true
        try database.writeLoggedPages(of: meta)
        for e in logEntries { try e.bytes.withUnsafeBytes { try database.store.writePadded($0, atPage: e.page) } }
        loggedPages = [:]
        logEntries = []
    }

    func free(_ ref: UInt64) throws {
        let n = try node(ref, expected: nil)
        freeSpace.free(Extent(page: ref, count: UInt64(pagesFor(bytes: n.count))))
    }

    func free(_ ref: UInt64, bytes: Int) throws {
        freeSpace.free(Extent(page: ref, count: UInt64(pagesFor(bytes: bytes))))
    }

    func discard(_ ref: UInt64) throws {
        guard let i = written.lastIndex(where: { $0.page == ref }) else { return }
        // A page this transaction wrote can be written again with another node: lookups must not keep the old one.
        innerLookups.removeAll()
        freeSpace.giveBack(written.remove(at: i))
        writtenLeaves.forget(ref)
    }

    // MARK: Dirty state seen by reads

    override public func classSchema(_ name: String) -> ClassSchema? { uncachedClassSchema(name) }

    override func root(of classID: UInt32) -> TreeChild {
        roots[classID] ?? super.root(of: classID)
    }

    override func listValues(_ classID: UInt32, _ key: UInt64, _ info: PropertyInfo, _ loc: RowLocation) throws -> [Value] {
        if let l = dirtyLists[SlotKey(classID: classID, key: key, columnID: info.columnID)] { return l }
        return try super.listValues(classID, key, info, loc)
    }

    override func dictionaryValues(_ classID: UInt32, _ key: UInt64, _ info: PropertyInfo, _ loc: RowLocation) throws -> ValueDictionary {
        if let d = dirtyDictionaries[SlotKey(classID: classID, key: key, columnID: info.columnID)] { return d }
        return try super.dictionaryValues(classID, key, info, loc)
    }

    override func indexTree(_ classID: UInt32, _ p: PropertyInfo) throws -> EntryTree {
        try flushIndexEntries(SlotKey(classID: classID, key: 0, columnID: p.columnID))
        return storedIndexTree(classID, p)
    }

    override func storedIndexTree(_ classID: UInt32, _ p: PropertyInfo) -> EntryTree {
        indexes[SlotKey(classID: classID, key: 0, columnID: p.columnID)] ?? indexTree(root: p.indexRoot)
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

    /// Nodes keep to format 5 while the file does (another process had it open when it was opened).
    var writesFormat5Nodes: Bool { !pageBoundChecksums }

    /// The index tree with committed root `root`, with the limits this file's format writes.
    func indexTree(root: UInt64) -> EntryTree {
        EntryTree(root: root, limits: writesFormat5Nodes ? .format5 : .standard)
    }

    func withIndex(_ classID: UInt32, _ p: PropertyInfo, _ body: (inout EntryTree) throws -> Void) throws {
        let slot = SlotKey(classID: classID, key: 0, columnID: p.columnID)
        try flushIndexEntries(slot)
        try body(&indexes[slot, default: indexTree(root: p.indexRoot)])
    }

    /// Puts the entries added to one index and not yet in its tree into it, in entry order: consecutive
    /// inserts then land in the same leaf, where inserting values as they came (a million names in random
    /// order) found a random leaf, and missed the cache, for each (DECISIONS 52).
    func flushIndexEntries(_ slot: SlotKey) throws {
        guard !pendingIndexEntries.isEmpty, let pending = pendingIndexEntries.removeValue(forKey: slot),
              !pending.ends.isEmpty else { return }
        try pending.bytes.withUnsafeBytes { buf in
            let order = pending.sortedRanges(in: buf)
            try withStoredIndex(slot, root: pending.indexRoot) { tree in
                // Into an index empty or held in one leaf so far (a class or index new in this transaction, or
                // one not written yet by it past its first entries): built whole from the sorted entries.
                if !pending.backlinks, tree.bulkLoad(order.lazy.map { UnsafeRawBufferPointer(rebasing: buf[$0]) }) { return }
                tree.ascending = true
                defer { tree.ascending = false }
                for r in order {
                    let e = UnsafeRawBufferPointer(rebasing: buf[r])
                    if pending.backlinks { try insertBacklink(e, into: &tree) } else { _ = try tree.insert(e, sink: self) }
                }
            }
        }
    }

    /// Every index's pending entries into its tree (before commit).
    func flushAllIndexEntries() throws {
        for slot in Array(pendingIndexEntries.keys) { try flushIndexEntries(slot) }
    }

    /// The tree of an index as `withIndex` gives it, without putting its waiting entries in first.
    func withStoredIndex(_ slot: SlotKey, root: UInt64, _ body: (inout EntryTree) throws -> Void) throws {
        try body(&indexes[slot, default: indexTree(root: root)])
    }

    func indexEntry(_ value: Value, _ key: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        IndexKey.encode(value, into: &bytes)
        IndexKey.appendObjectKey(key, to: &bytes)
        return bytes
    }

    func addToIndex(_ classID: UInt32, _ p: PropertyInfo, _ value: Value, _ key: UInt64) throws {
        try addToIndex(classID, columnID: p.columnID, indexRoot: p.indexRoot, value, key, isPrimaryKey: p.isPrimaryKey)
    }

    /// `addToIndex` given the column and its committed root (what an insert plan keeps of the property). A
    /// primary key's entry goes into the tree at once (the next insert looks it up), and so do a transaction's
    /// first entries (`takesDirectIndexEntry`); the rest wait in `pendingIndexEntries`.
    func addToIndex(_ classID: UInt32, columnID: UInt32, indexRoot: UInt64, _ value: Value, _ key: UInt64,
                    isPrimaryKey: Bool) throws {
        let slot = SlotKey(classID: classID, key: 0, columnID: columnID)
        if isPrimaryKey || takesDirectIndexEntry() {
            _ = try indexes[slot, default: indexTree(root: indexRoot)].insert(indexEntry(value, key), sink: self)
            return
        }
        if pendingIndexEntries[slot, default: PendingIndexEntries(indexRoot: indexRoot)].append(value, key) {
            try flushIndexEntries(slot)
        }
    }

    /// Whether the next index or backlink entry goes straight into its tree (counting it): the first
    /// `Database.directIndexEntries` of a transaction do, since a transaction of a few objects would gain nothing
    /// from sorting them and pay for the buffers. The count only grows, so once an entry waits, every later one
    /// of the transaction waits too.
    func takesDirectIndexEntry() -> Bool {
        guard directIndexInserts < database.directIndexEntries else { return false }
        directIndexInserts += 1
        return true
    }

    func removeFromIndex(_ classID: UInt32, _ p: PropertyInfo, _ value: Value, _ key: UInt64) throws {
        let entry = indexEntry(value, key)
        try withIndex(classID, p) { _ = try $0.remove(entry, sink: self) }
    }
}

/// Index entries of one index that a write transaction added and has not put into the tree yet: their bytes
/// one after another, and where each ends.
struct PendingIndexEntries {
    let indexRoot: UInt64
    /// Entries of a backlink tree: (target, origin) pairs, a repeated pair becoming a counted entry.
    let backlinks: Bool
    var bytes: [UInt8] = []
    var ends: [Int] = []

    /// Put into the tree once they take this many bytes (about a million entries of short strings).
    static let flushBytes = 32 << 20

    init(indexRoot: UInt64, backlinks: Bool = false) {
        self.indexRoot = indexRoot
        self.backlinks = backlinks
    }

    /// Entries a transaction puts straight into their trees before the rest wait here
    /// (`WriteTransaction.takesDirectIndexEntry`; the default of `DatabaseOptions.directIndexEntries`).
    static let directEntries = 64

    /// Adds a backlink tree's pair entry (`BacklinkEntry.pair`) in place; true once the entries should be flushed.
    mutating func appendPair(_ target: UInt64, _ origin: UInt64) -> Bool {
        BacklinkEntry.appendPair(target, origin, to: &bytes)
        return endEntry()
    }

    /// Adds the entry of `value` for object `key` to the buffer; true once the entries should be flushed.
    mutating func append(_ value: Value, _ key: UInt64) -> Bool {
        _ = IndexKey.encode(value, into: &bytes)
        IndexKey.appendObjectKey(key, to: &bytes)
        return endEntry()
    }

    /// Ends the entry just appended; true once the entries should be flushed.
    private mutating func endEntry() -> Bool {
        ends.append(bytes.count)
        return bytes.count >= Self.flushBytes
    }

    /// The entries' byte ranges in `buf` (this struct's bytes) in entry order: by their first sixteen bytes read
    /// as two big-endian integers (zero-padded), then byte by byte. Lazy over the sorted array (no second array
    /// of a million ranges). Sixteen bytes, not eight: entries of one index often share their first bytes (a
    /// type tag and a common start such as "name-"), and ties on eight of them sent most comparisons of a bulk
    /// insert's sort to `memcmp`.
    func sortedRanges(in buf: UnsafeRawBufferPointer) -> LazyMapSequence<[SortKey], Range<Int>> {
        precondition(buf.count <= Int(UInt32.max), "pending index entries past 4 GiB")
        var keyed: [SortKey] = []
        keyed.reserveCapacity(ends.count)
        var start = 0
        for end in ends {
            keyed.append(SortKey(high: Self.bigEndianWord(buf, from: start, to: end),
                                 low: Self.bigEndianWord(buf, from: start + 8, to: end),
                                 start: UInt32(start), end: UInt32(end)))
            start = end
        }
        keyed.sort { a, b in
            if a.high != b.high { return a.high < b.high }
            if a.low != b.low { return a.low < b.low }
            let la = Int(a.end - a.start), lb = Int(b.end - b.start)
            let c = memcmp(buf.baseAddress! + Int(a.start), buf.baseAddress! + Int(b.start), min(la, lb))
            return c != 0 ? c < 0 : la < lb
        }
        return keyed.lazy.map { Int($0.start)..<Int($0.end) }
    }

    /// An entry's place in the sort: its first sixteen bytes as two integers, and where it lies.
    struct SortKey {
        var high: UInt64
        var low: UInt64
        var start: UInt32
        var end: UInt32
    }

    /// Bytes `from..<min(from + 8, to)` of `buf` as a big-endian integer, zero-padded on the right.
    @inline(__always)
    private static func bigEndianWord(_ buf: UnsafeRawBufferPointer, from: Int, to: Int) -> UInt64 {
        if to - from >= 8 { return UInt64(bigEndian: buf.loadUnaligned(fromByteOffset: from, as: UInt64.self)) }
        var word: UInt64 = 0
        var i = from
        while i < to {
            word |= UInt64(buf[i]) << (56 - 8 * (i - from))
            i += 1
        }
        return word
    }
}
