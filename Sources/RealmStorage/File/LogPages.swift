import Atomics
#if canImport(Glibc)
import Glibc
#endif

/// The commit log of one file, mapped read-only so that nodes of logged commits are read where the log holds
/// them (no copy).
final class LogFileMap: @unchecked Sendable {
    // Safe: immutable after init, except `knownBytes`, which is only used under the owning `LogPages` lock.
    let base: UnsafeRawPointer
    let length: Int
    let fd: Int32
    let device: UInt64
    let inode: UInt64
    /// Bytes the file is known to hold (it only grows while open; reads past its end would fault).
    var knownBytes: Int

    /// Address space reserved for the log (it is never touched past the file's end).
    static let reservation = 1 << 36

    init(path: String) throws {
        let fd = openRetrying(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT {
                throw StorageError.corrupt(path: path, location: "commit log",
                                           reason: "missing, but the data file's newest commits are only in it")
            }
            throw StorageError.io(path: path, operation: "open the commit log", errno: errno)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw StorageError.io(path: path, operation: "fstat the commit log", errno: e)
        }
        guard let m = mmap(nil, LogFileMap.reservation, PROT_READ, MAP_SHARED, fd, 0), m != MAP_FAILED else {
            let e = errno
            Glibc.close(fd)
            throw StorageError.io(path: path, operation: "mmap the commit log", errno: e)
        }
        base = UnsafeRawPointer(m)
        length = LogFileMap.reservation
        self.fd = fd
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        knownBytes = Int(st.st_size)
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), length)
        Glibc.close(fd)
    }

    /// Whether the file at `path` is still this one (a log removed and made again is another file).
    func isFile(at path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
    }

    /// Whether the file holds `bytes` bytes, asking the OS only when not already known.
    func holds(_ bytes: Int) -> Bool {
        if bytes <= knownBytes { return true }
        var st = stat()
        if fstat(fd, &st) == 0 { knownBytes = max(knownBytes, Int(st.st_size)) }
        return bytes <= min(knownBytes, length)
    }
}

/// Where the nodes of one log generation are in the log: for each page a record of the generation wrote,
/// the last copy (DECISIONS 53). Shared by every snapshot of the generation in this process: a later commit
/// only adds pages that were free, which no live snapshot reads, so a snapshot may use entries added after it
/// started. Lookups take no lock (`PageTable`); entries are added by one thread at a time (under the
/// `LogPages` lock).
final class LogIndex: @unchecked Sendable {
    // Safe: `_end` and `kept` are only touched under `lock`; `table` synchronises itself; the rest is
    // immutable.
    let logID: UInt64
    let generation: UInt64
    let start: UInt64
    let file: LogFileMap
    private let lock = PthreadMutex()
    private let table = PageTable()
    private var _end: UInt64
    /// The blocks holding the records this process wrote, which its entries point into (a direct write leaves
    /// nothing of them in the page cache, so the writer reads its own commits from memory).
    private var kept: [RecordBlock] = []

    typealias Location = PageTable.Location

    init(logID: UInt64, generation: UInt64, start: UInt64, file: LogFileMap) {
        self.logID = logID
        self.generation = generation
        self.start = start
        self.file = file
        _end = start
    }

    /// How far the records have been read.
    var end: UInt64 { lock.withLock { _end } }

    /// The node the log holds for `page`, nil when the data file holds it.
    @inline(__always) func node(_ page: UInt64) -> UnsafeRawBufferPointer? {
        guard let at = table.get(page) else { return nil }
        return UnsafeRawBufferPointer(start: at.bytes, count: at.length)
    }

    /// Reads the records from where the last read stopped up to `target` (the end of the records of a
    /// published meta slot). Called under the `LogPages` lock.
    func catchUp(to target: UInt64, path: String) throws {
        let from = end
        guard target > from else { return }
        guard file.holds(Int(target)) else {
            throw StorageError.corrupt(path: path, location: "commit log",
                                       reason: "shorter (\(file.knownBytes) bytes) than its commits (\(target) bytes)")
        }
        var found: [(UInt64, Location)] = []
        let ok = CommitLog.forEachEntry(in: UnsafeRawBufferPointer(start: file.base, count: Int(target)), from: Int(from),
                                        to: Int(target), generation: generation) { page, offset, length in
            found.append((page, Location(bytes: file.base + offset, length: length, offset: offset)))
        }
        guard ok else {
            throw StorageError.corrupt(path: path, location: "commit log, records from byte \(from) to \(target)",
                                       reason: "they do not form whole records of generation \(generation)")
        }
        for (p, at) in found { table.set(p, at) }
        lock.withLock { _end = target }
    }

    /// The writer's own record, which it knows without reading it back: its entries, built in `record` (the
    /// index serves their nodes from there, and keeps the block), written at `from`, and the end of the log
    /// after it. Only when the index has read everything before it. Called under the `LogPages` lock.
    func add(_ entries: [CommitLog.Entry], record: BuiltRecord, from: UInt64, to: UInt64) -> Bool {
        guard end == from else { return false }
        var at = CommitLog.recordHeaderSize + entries.count * CommitLog.entrySize + Meta.encodedSize
        for i in entries.indices {  // by index: binding each entry retained and released its bytes
            let length = entries[i].bytes.count
            table.set(entries[i].page, Location(bytes: record.base + at, length: length, offset: Int(from) + at))
            at += length
        }
        lock.withLock {
            if kept.last !== record.block { kept.append(record.block) }
            _end = to
        }
        return true
    }

    /// The nodes a checkpoint writes (under the writer lock): sorted by page, none overlapping another, each
    /// the last copy of its page — see `checkpointSelection`.
    func checkpointCopies() -> [(page: UInt64, node: UnsafeRawBufferPointer)] {
        let all = table.all()
        return LogIndex.checkpointSelection(all.map { (page: $0.0, pages: UInt64(pagesFor(bytes: $0.1.length)), offset: $0.1.offset) })
            .map { (all[$0].0, UnsafeRawBufferPointer(start: all[$0].1.bytes, count: all[$0].1.length)) }
    }

    /// Which of the last copies of pages (start page, page count, offset in the log) a checkpoint writes, as
    /// indices sorted by page. A node that covers several pages may cover a page whose last copy is older: that
    /// older node was freed before its page was taken again, so nothing reads it, and it is left out, as is any
    /// node a newer one overlaps at all. What is left does not overlap, so it can be written in page order,
    /// runs of consecutive pages together (written in log order instead, the newer node had to come last).
    static func checkpointSelection(_ copies: [(page: UInt64, pages: UInt64, offset: Int)]) -> [Int] {
        var covered = Set<UInt64>()
        covered.reserveCapacity(copies.count)
        var kept: [Int] = []
        kept.reserveCapacity(copies.count)
        for i in copies.indices.sorted(by: { copies[$0].offset > copies[$1].offset }) {
            let c = copies[i]
            if (c.page..<c.page + c.pages).contains(where: { covered.contains($0) }) { continue }
            for p in c.page..<c.page + c.pages { covered.insert(p) }
            kept.append(i)
        }
        return kept.sorted { copies[$0].page < copies[$1].page }
    }
}

/// Page → location, read without locks by any number of threads while one thread at a time adds entries
/// (DECISIONS 53: a mutex and a `Dictionary` probe on every node read cost more than the read). Open
/// addressing over two arrays of atomics: a key is published after its value, so a reader that sees the key
/// sees a value written for it; a value replaced later points to a location stored before it. Locations live
/// in chunks that never move; a table that fills is copied into one twice its size, and the old one is kept
/// (a reader may still be probing it) until the index goes.
final class PageTable: @unchecked Sendable {
    // Safe: see above; `tables`, `locationCount` and `keyCount` are the writer's.
    struct Location {
        /// Where the node's bytes are: in the log's mapping, or in a record this process wrote.
        var bytes: UnsafeRawPointer
        var length: Int
        /// Where they are in the log (the order of writes).
        var offset: Int
    }

    /// One table: its capacity (a power of two), then `capacity` keys, then `capacity` values, all words.
    /// Raw memory, so that a lookup touches no reference count.
    private typealias Words = UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>

    private static func makeTable(capacity: Int) -> Words {
        let t = Words.allocate(capacity: 1 + 2 * capacity)
        t.initialize(to: UnsafeAtomic<UInt64>.Storage(UInt64(capacity)))
        for i in 1...(2 * capacity) { (t + i).initialize(to: UnsafeAtomic<UInt64>.Storage(0)) }
        return t
    }

    @inline(__always) private static func capacity(_ t: Words) -> Int { Int(UnsafeAtomic<UInt64>(at: t).load(ordering: .relaxed)) }
    @inline(__always) private static func key(_ t: Words, _ i: Int) -> UnsafeAtomic<UInt64> { UnsafeAtomic(at: t + 1 + i) }
    @inline(__always) private static func value(_ t: Words, _ i: Int, _ capacity: Int) -> UnsafeAtomic<UInt64> {
        UnsafeAtomic(at: t + 1 + capacity + i)
    }
    @inline(__always) private static func hash(_ page: UInt64) -> UInt64 { page &* 0x9E37_79B9_7F4A_7C15 }

    /// A filter of one bit per hash of a page (set before the page's key is published): most pages a reader
    /// asks for are in the data file, and one load says so.
    private static let filterBits = 1 << 16
    private let filter: Words

    private static let chunkSize = 4096
    private static let maxChunks = 4096
    private let chunks: UnsafeMutablePointer<UnsafeMutablePointer<Location>?>
    private let current = ManagedAtomic<Int>(0)
    private var tables: [Words] = []
    private var locationCount = 0
    private var keyCount = 0

    init() {
        chunks = .allocate(capacity: PageTable.maxChunks)
        chunks.initialize(repeating: nil, count: PageTable.maxChunks)
        filter = .allocate(capacity: PageTable.filterBits / 64)
        for i in 0..<(PageTable.filterBits / 64) { (filter + i).initialize(to: UnsafeAtomic<UInt64>.Storage(0)) }
        let t = PageTable.makeTable(capacity: 256)
        tables.append(t)
        current.store(Int(bitPattern: t), ordering: .releasing)
    }

    deinit {
        for i in 0..<PageTable.maxChunks { chunks[i]?.deallocate() }
        chunks.deallocate()
        filter.deallocate()
        for t in tables { t.deallocate() }
    }

    var count: Int { keyCount }

    @inline(__always) func get(_ page: UInt64) -> Location? {
        let h = PageTable.hash(page)
        let bit = Int(truncatingIfNeeded: h >> 48)
        if UnsafeAtomic<UInt64>(at: filter + bit >> 6).load(ordering: .acquiring) & (1 << UInt64(bit & 63)) == 0 { return nil }
        let t = Words(bitPattern: current.load(ordering: .acquiring))!
        let capacity = PageTable.capacity(t)
        var i = Int(truncatingIfNeeded: h >> 32) & (capacity - 1)
        while true {
            let k = PageTable.key(t, i).load(ordering: .acquiring)
            if k == page {
                let v = Int(PageTable.value(t, i, capacity).load(ordering: .acquiring))
                return chunks[v / PageTable.chunkSize]![v % PageTable.chunkSize]
            }
            if k == 0 { return nil }
            i = (i + 1) & (capacity - 1)
        }
    }

    /// Adds or replaces the entry of `page` (one thread at a time).
    func set(_ page: UInt64, _ location: Location) {
        precondition(page != 0, "page 0 never holds a node")
        let n = locationCount
        // (16 M entries in one generation: a generation is checkpointed long before.)
        precondition(n / PageTable.chunkSize < PageTable.maxChunks, "commit log generation too large for its page table")
        if chunks[n / PageTable.chunkSize] == nil { chunks[n / PageTable.chunkSize] = .allocate(capacity: PageTable.chunkSize) }
        (chunks[n / PageTable.chunkSize]! + n % PageTable.chunkSize).initialize(to: location)
        locationCount += 1
        if (keyCount + 1) * 2 > PageTable.capacity(tables.last!) { grow() }
        let t = tables.last!
        let capacity = PageTable.capacity(t)
        let h = PageTable.hash(page)
        let bit = Int(truncatingIfNeeded: h >> 48)
        let word = UnsafeAtomic<UInt64>(at: filter + bit >> 6)
        word.store(word.load(ordering: .relaxed) | 1 << UInt64(bit & 63), ordering: .releasing)
        var i = Int(truncatingIfNeeded: h >> 32) & (capacity - 1)
        while true {
            let k = PageTable.key(t, i).load(ordering: .relaxed)
            if k == page {
                PageTable.value(t, i, capacity).store(UInt64(n), ordering: .releasing)
                return
            }
            if k == 0 {
                PageTable.value(t, i, capacity).store(UInt64(n), ordering: .relaxed)
                PageTable.key(t, i).store(page, ordering: .releasing)
                keyCount += 1
                return
            }
            i = (i + 1) & (capacity - 1)
        }
    }

    private func grow() {
        let old = tables.last!
        let oldCapacity = PageTable.capacity(old)
        let t = PageTable.makeTable(capacity: oldCapacity * 2)
        let capacity = oldCapacity * 2
        for j in 0..<oldCapacity {
            let k = PageTable.key(old, j).load(ordering: .relaxed)
            if k == 0 { continue }
            var i = Int(truncatingIfNeeded: PageTable.hash(k) >> 32) & (capacity - 1)
            while PageTable.key(t, i).load(ordering: .relaxed) != 0 { i = (i + 1) & (capacity - 1) }
            PageTable.value(t, i, capacity).store(PageTable.value(old, j, oldCapacity).load(ordering: .relaxed), ordering: .relaxed)
            PageTable.key(t, i).store(k, ordering: .relaxed)
        }
        tables.append(t)
        current.store(Int(bitPattern: t), ordering: .releasing)
    }

    /// Every page and its location (the writer's view).
    func all() -> [(UInt64, Location)] {
        let t = tables.last!
        let capacity = PageTable.capacity(t)
        var out: [(UInt64, Location)] = []
        out.reserveCapacity(keyCount)
        for i in 0..<capacity {
            let k = PageTable.key(t, i).load(ordering: .relaxed)
            if k == 0 { continue }
            let v = Int(PageTable.value(t, i, capacity).load(ordering: .relaxed))
            out.append((k, chunks[v / PageTable.chunkSize]![v % PageTable.chunkSize]))
        }
        return out
    }
}

/// The log generations this process reads: the index of the newest one seen, caught up to the newest
/// meta slot a snapshot was taken on.
final class LogPages: @unchecked Sendable {
    // Safe: `file` and `current` are only touched under `lock`.
    let path: String
    private let lock = PthreadMutex()
    private var file: LogFileMap?
    private var current: LogIndex?

    init(dataPath: String) {
        path = dataPath + ".log"
    }

    /// The index a snapshot of `meta` reads through, caught up to its commit; nil when the data file holds
    /// every page of the version (no record in its generation).
    func index(for meta: Meta) throws -> LogIndex? {
        guard Database.hasLoggedPages(meta) else { return nil }
        let start = meta.logRecordsStart
        return try lock.withLock {
            if let c = current, c.logID == meta.logID, c.generation == meta.logGeneration, c.start == start {
                try c.catchUp(to: meta.logEnd, path: path)
                return c
            }
            if file == nil || !file!.isFile(at: path) { file = try LogFileMap(path: path) }
            let index = LogIndex(logID: meta.logID, generation: meta.logGeneration, start: start, file: file!)
            try index.catchUp(to: meta.logEnd, path: path)
            if current.map({ $0.generation <= meta.logGeneration || $0.logID != meta.logID }) ?? true { current = index }
            return index
        }
    }

    /// The record of a commit this process just built (`CommitLog.build`), to be written at `recordStart`: its
    /// entries go into the index of its generation without reading the record back (when that index has read
    /// up to it; otherwise the next snapshot reads it).
    func committed(_ meta: Meta, recordStart: UInt64, record: BuiltRecord, entries: [CommitLog.Entry]) {
        let start = meta.logRecordsStart
        lock.withLock {
            if let c = current, c.logID == meta.logID, c.generation == meta.logGeneration, c.start == start,
               c.add(entries, record: record, from: recordStart, to: meta.logEnd) {
                return
            }
            guard recordStart == start else { return }
            if file == nil || !file!.isFile(at: path) { file = try? LogFileMap(path: path) }  // nil: the next snapshot's index(for:) maps it, or throws
            guard let f = file else { return }
            // The first record of a generation: a new index from it.
            let index = LogIndex(logID: meta.logID, generation: meta.logGeneration, start: start, file: f)
            if index.add(entries, record: record, from: start, to: meta.logEnd) { current = index }
        }
    }

    /// Forgets the indexes (after compaction replaced the file).
    func reset() {
        lock.withLock {
            current = nil
            file = nil
        }
    }
}
