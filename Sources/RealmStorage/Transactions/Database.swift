import Atomics
#if canImport(Glibc)
import Glibc
#endif

/// How to open a database.
public struct DatabaseOptions: Sendable {
    /// Open without the ability to write; a missing file is an error rather than created.
    public var readOnly: Bool = false
    /// Called once at open with the file's total and used bytes; returning true compacts the file first
    /// (only when no other process has it open).
    public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)? = nil

    /// The 64-byte key of an encrypted file (AES-256-GCM pages); nil for a plain file. A new file opened
    /// with a key is created encrypted.
    public var encryptionKey: [UInt8]? = nil

    /// Small commits sync a log beside the file instead of the file (DECISIONS 39); copies made by
    /// `writeCopy` and compaction write without one.
    var usesCommitLog = true

    /// How many index and backlink entries (all indexes together) a write transaction puts into their trees at
    /// once before it starts keeping them to put in sorted (DECISIONS 52); tests set 0 to send every entry
    /// through the buffer.
    var directIndexEntries = PendingIndexEntries.directEntries

    /// Bytes of commit log records after which a commit checkpoints (DECISIONS 53, 67; 16 MiB): smaller keeps
    /// the log, the writer's memory for its records and a replay after a crash smaller, at the cost of more
    /// syncs and rewrites of the data file's pages; 0 checkpoints after every small commit.
    public var checkpointBytes = CommitLog.checkpointBytes

    /// Whether commit log records may be written with direct I/O (tests turn it off to take the page cache path
    /// that file systems without it use).
    var directLogWrites = true

    public init(readOnly: Bool = false, encryptionKey: [UInt8]? = nil,
                shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)? = nil) {
        self.encryptionKey = encryptionKey
        self.readOnly = readOnly
        self.shouldCompactOnLaunch = shouldCompactOnLaunch
    }
}

/// An open database: one file (or one in-memory store) shared by every transaction in this process.
///
/// Any number of read snapshots may be open at once on any threads; one write transaction at a time runs
/// across all threads and processes.
public final class Database: @unchecked Sendable {
    // Safe: immutable after init except `writerThread`, guarded by `ownerLock`, `decodedLeaves` and `insertPlans`, used
    // only under the writer lock, and the store/coordinator, which synchronise themselves.
    public let path: String
    public let isInMemory: Bool
    public let isReadOnly: Bool
    /// The key the file was opened with (never printed).
    let encryptionKey: [UInt8]?
    /// `DatabaseOptions.directIndexEntries`.
    let directIndexEntries: Int
    /// `DatabaseOptions.checkpointBytes`.
    let checkpointBytes: UInt64
    public var isEncrypted: Bool { encryptionKey != nil && !isInMemory }
    var _store: PageStore
    let coordinator: any Coordinator
    /// The commit log of a plain file opened for writing; nil otherwise (used under the writer lock).
    let commitLog: CommitLog?
    /// Where this process finds pages that only the commit log holds (plain files, any mode).
    let logPages: LogPages?
    let ownerLock = PthreadMutex()
    var writerThread: pthread_t?
    var _openSnapshots = 0
    /// Why this handle writes no more (a failed sync, `stopWrites(after:)`), under `ownerLock`.
    var _writesStopped: String?
    /// The last checkpoint's failure, nil once one succeeds (`checkpointFailed`), under `ownerLock`.
    var _checkpointFailure: String?
    /// `launchCompaction`, under `ownerLock`.
    var _launchCompaction: LaunchCompaction = .notAsked
    /// `checkpointWriteErrorForTesting`, under `ownerLock`.
    var _checkpointWriteErrorForTesting: Int32?
    let decryptedBudget = ManagedAtomic<Int>(256 << 20)
    /// Clusters the last commit of this process wrote, decoded; only used under the writer lock.
    var decodedLeaves = DecodedLeaves()
    /// Arrays this process's last commits built and no longer need, for the next commit to build in
    /// (`RecycledArrays`, DECISIONS 64); only used under the writer lock.
    var recycled = RecycledArrays()
    /// The catalogue and free list of this process's last commit (DECISIONS 64); only used under the writer lock.
    var writerHandover: WriterHandover?
    /// Insert plans by class ID, carried from one write transaction to the next while the class's schema stays
    /// the same (`WriteTransaction.insertPlan`); only used under the writer lock.
    var insertPlans: [UInt32: WriteTransaction.InsertPlan] = [:]
    /// The meta slots as the last write transaction decoded them (only write transactions use it, one at a time).
    let writerSlots = SlotCache()
    /// The catalogue last decoded or committed here (any thread).
    let catalogues = CatalogueCache()

    /// The page store; replaced only by in-place compaction, while nothing else in this process uses it.
    var store: PageStore { ownerLock.withLock { _store } }

    /// Read snapshots of this process that are still open.
    public var openSnapshotCount: Int { ownerLock.withLock { _openSnapshots } }
    func snapshotOpened() { ownerLock.withLock { _openSnapshots += 1 } }
    func snapshotClosed() { ownerLock.withLock { _openSnapshots -= 1 } }

    /// Reopens the file after compaction renamed a new file over it.
    func reopenStore() throws {
        let fd = openRetrying(path, (isReadOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC)
        if fd < 0 { throw StorageError.io(path: path, operation: "reopen", errno: errno) }
        var cipher: PageCipher?
        if let key = encryptionKey {
            do {
                cipher = try Database.precheckEncryption(fd: fd, size: try PageStore.fileSize(fd: fd, path: path), path: path, key: key)
            } catch {
                Glibc.close(fd)
                throw error
            }
        }
        let fresh = try PageStore(path: path, fd: fd, readOnly: isReadOnly, cipher: cipher)
        ownerLock.withLock { _store = fresh }
        decodedLeaves = DecodedLeaves()
        writerHandover = nil  // (a new store may be allocated where the old one was: its identity is no proof)
        logPages?.reset()
        // What was published names the file compaction replaced: the new file's newest slot instead.
        if coordinator.publishesMeta {
            var newest: Meta?
            for case .valid(let m) in Database.readSlots(mapping: fresh.mapping) where m.version > (newest?.version ?? 0) { newest = m }
            if let newest { coordinator.publish(meta: newest.encode(), decoded: newest) }
        }
    }

    // MARK: Opening

    nonisolated(unsafe) static var openFiles: [String: WeakDatabase] = [:]
    /// Recursive: a `Database` whose init throws (or whose last reference is dropped while the registry is
    /// read) runs `deinit`, which deregisters under this lock, on the thread that already holds it.
    static let registryLock = PthreadMutex(recursive: true)

    /// Opens (creating when missing, unless read-only) the database at `path`. Opening a path that is already
    /// open in this process returns the same database.
    public static func open(path: String, options: DatabaseOptions = DatabaseOptions()) throws -> Database {
        let key = canonicalPath(path)
        let (db, launched): (Database, Bool) = try registryLock.withLock {
            if let existing = openFiles[key]?.value {
                if existing.isReadOnly && !options.readOnly { throw StorageError.readOnly(path: path) }
                if existing.encryptionKey != options.encryptionKey {
                    if existing.encryptionKey == nil { throw StorageError.notEncrypted(path: path) }
                    throw options.encryptionKey == nil ? StorageError.encryptionKeyRequired(path: path) : StorageError.invalidKey(path: path)
                }
                return (existing, false)
            }
            let db = try Database(filePath: path, options: options)
            try db.upgradeBacklinksIfNeeded()
            openFiles[key] = WeakDatabase(db)
            _ = Database.exitCheckpoint
            return (db, true)
        }
        // Only on launch: a database already open in this process may have snapshots and transactions in use.
        if launched { try db.upgradeNodeChecksumsIfNeeded() }
        if launched, let decide = options.shouldCompactOnLaunch, !db.isReadOnly {
            let total = try db.store.currentSize()
            let used = try db.usedBytes()
            db.setLaunchCompaction(decide(total, used) ? db.compactOnLaunch(from: total) : .declined)
        }
        return db
    }

    /// What `shouldCompactOnLaunch` led to when this database was opened.
    public enum LaunchCompaction: Sendable, Equatable {
        /// No `shouldCompactOnLaunch` was given, or the file was already open in this process.
        case notAsked
        case declined
        case compacted(fromBytes: Int, toBytes: Int)
        /// The compaction was accepted but did not run or failed; the file is as it was, and `reason` says why.
        case skipped(reason: String)
    }

    /// What `shouldCompactOnLaunch` led to when this database was opened (a compaction that cannot run does
    /// not stop the open: the file is left as it was and the reason is kept here).
    public var launchCompaction: LaunchCompaction { ownerLock.withLock { _launchCompaction } }

    func setLaunchCompaction(_ outcome: LaunchCompaction) { ownerLock.withLock { _launchCompaction = outcome } }

    /// Compacts a database just opened. Another holder of the file is asked again a few times over about a
    /// third of a second: a process this one is starting holds copies of its descriptors, and with them the
    /// lock file's shared lock, until it has replaced its program, which on a loaded machine takes milliseconds.
    private func compactOnLaunch(from total: Int) -> LaunchCompaction {
        var wait: UInt32 = 5_000
        while true {
            do {
                try compact()
                return .compacted(fromBytes: total, toBytes: (try? store.currentSize()) ?? total)  // the size only reports the outcome; the compaction itself succeeded
            } catch StorageError.inUseByAnotherProcess(_, _) where wait <= 160_000 {
                usleep(wait)
                wait *= 2
            } catch {
                return .skipped(reason: "\(error)")
            }
        }
    }

    nonisolated(unsafe) private static var memoryStores: [String: WeakDatabase] = [:]

    /// Opens the in-memory database called `identifier`: the same engine with nothing on disk. Its contents
    /// live as long as some `Database` value for the identifier does.
    public static func inMemory(identifier: String) throws -> Database {
        try registryLock.withLock {
            if let existing = memoryStores[identifier]?.value { return existing }
            let db = try Database(memoryIdentifier: identifier)
            memoryStores[identifier] = WeakDatabase(db)
            return db
        }
    }

    private init(memoryIdentifier: String) throws {
        path = "memory:" + memoryIdentifier
        isInMemory = true
        isReadOnly = false
        encryptionKey = nil
        directIndexEntries = PendingIndexEntries.directEntries
        checkpointBytes = CommitLog.checkpointBytes
        commitLog = nil
        logPages = nil
        _store = try PageStore(memoryNamed: path)
        coordinator = LocalCoordinator()
        try initialiseEmpty()
    }

    private init(filePath: String, options: DatabaseOptions) throws {
        path = filePath
        isInMemory = false
        isReadOnly = options.readOnly
        encryptionKey = options.encryptionKey
        directIndexEntries = options.directIndexEntries
        checkpointBytes = options.checkpointBytes
        commitLog = options.readOnly || options.encryptionKey != nil || !options.usesCommitLog ? nil : CommitLog(dataPath: filePath, directWrites: options.directLogWrites)
        logPages = options.encryptionKey != nil ? nil : LogPages(dataPath: filePath)
        if let k = options.encryptionKey, k.count != PageCipher.keyLength { throw StorageError.invalidKeyLength(k.count) }
        // Look at the file before creating anything beside it: a foreign or newer file is reported as such.
        var opened = try Database.openFile(path: filePath, options: options)
        Database.afterOpeningFileForTesting?(filePath)
        let lockPath = filePath + ".lock"
        let readOnly = options.readOnly
        let setUp: () throws -> Void = {
            // The first opener holds the lock file exclusively: nothing can replace the file until it is done.
            opened = try Database.rebind(opened, options: options)
            let store = opened.store
            if try store.currentSize() == 0 {
                if readOnly { throw StorageError.readOnly(path: filePath) }
                try Database.create(store: store)
                // The new file is now at the path (with this store's key and salt): open it.
                opened = try Database.rebind(opened, options: options)
            }
            try Database.replayCommitLog(store: opened.store)
            try Database.checkDamagedSlots(store: opened.store)
        }
        do {
            coordinator = try LockFile(path: lockPath, firstOpener: setUp)
        } catch let error as StorageError {
            // A read-only file in a directory we cannot write: no lock file, so no other writer is assumed.
            guard readOnly, case .io(_, _, let e) = error, e == EACCES || e == EROFS else { throw error }
            coordinator = LocalCoordinator()
            try setUp()
        }
        // Holding the lock file (shared) no compaction can start; one that ran between opening the file and
        // taking the lock renamed a new file over the path, and the file opened then is no longer the database.
        opened = try Database.rebind(opened, options: options)
        _store = opened.store
        _ = try latestMeta()
    }

    deinit {
        checkpointOnClose()
        Database.registryLock.withLock {
            if isInMemory {
                if Database.memoryStores[String(path.dropFirst("memory:".count))]?.value == nil {
                    Database.memoryStores[String(path.dropFirst("memory:".count))] = nil
                }
            } else if Database.openFiles[Database.canonicalPath(path)]?.value == nil {
                Database.openFiles[Database.canonicalPath(path)] = nil
            }
        }
    }

    /// For tests: called by every open of a file between opening the data file and taking the lock file (under
    /// `registryLock`, as `open` holds it), with the path opened.
    nonisolated(unsafe) static var afterOpeningFileForTesting: ((String) -> Void)?

    /// The data file open, looked at, and its page store: what `openFile` found.
    private struct OpenedFile {
        var store: PageStore
        /// The file was empty when looked at: the key (or its absence) was not checked against it.
        var wasEmpty: Bool
    }

    /// Opens the data file (creating it when missing, unless read-only), reports a foreign, newer or truncated
    /// file and checks the key against an encrypted one (a new encrypted file gets a new salt), and makes its
    /// page store.
    private static func openFile(path: String, options: DatabaseOptions) throws -> OpenedFile {
        let flags = options.readOnly ? O_RDONLY : (O_RDWR | O_CREAT)
        let fd = openRetrying(path, flags | O_CLOEXEC)
        if fd < 0 { throw StorageError.io(path: path, operation: "open", errno: errno) }
        let size: Int
        var cipher: PageCipher?
        do {
            size = try PageStore.fileSize(fd: fd, path: path)
            if size > 0 {
                cipher = try Database.precheckEncryption(fd: fd, size: size, path: path, key: options.encryptionKey)
                if cipher == nil {
                    try Database.precheckHeader(fd: fd, size: size, path: path)
                    // Our plain format: a key means the caller expected an encrypted file.
                    if options.encryptionKey != nil { throw StorageError.notEncrypted(path: path) }
                }
            }
            if size == 0 && options.readOnly { throw StorageError.truncated(path: path, expectedBytes: UInt64(2 * pageSize), actualBytes: 0) }
            if size == 0, let key = options.encryptionKey { cipher = PageCipher(userKey: key, salt: PageCipher.randomSalt()) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return OpenedFile(store: try PageStore(path: path, fd: fd, readOnly: options.readOnly, cipher: cipher), wasEmpty: size == 0)
    }

    /// `opened`, or the file now at its path opened afresh: when compaction (of a process that had the file
    /// open) renamed a new file over the path after `opened` was opened, or when the file was empty then and
    /// another process has created it since (a new encrypted file's salt is that process's, not the one made
    /// for it here). Called holding the lock file, so no compaction runs meanwhile; a file replaced again and
    /// again (by something outside the engine) is an error after a few tries.
    private static func rebind(_ opened: OpenedFile, options: DatabaseOptions) throws -> OpenedFile {
        var current = opened
        for _ in 0..<4 {
            let store = current.store
            var atPath = stat(), held = stat()
            if stat(store.path, &atPath) != 0 {
                throw StorageError.io(path: store.path, operation: "check that the file opened is still at its path", errno: errno)
            }
            if fstat(store.fd, &held) != 0 { throw StorageError.io(path: store.path, operation: "fstat", errno: errno) }
            let replaced = atPath.st_dev != held.st_dev || atPath.st_ino != held.st_ino
            let createdMeanwhile = current.wasEmpty && held.st_size > 0
            if !replaced && !createdMeanwhile { return current }
            current = try openFile(path: store.path, options: options)
        }
        throw StorageError.inUse(path: opened.store.path, operation: "open the database",
                                 reason: "the file at this path was replaced while it was being opened, again and again")
    }

    /// Makes a new database where `store`'s file is empty: the encryption header and an empty version are
    /// written to `NAME.realm.new` (with blocks for both meta slots, though only slot B is written:
    /// `PageStore.reserveBlocks`), synced, renamed over the empty file, and the directory synced. A power cut
    /// at any moment leaves the empty file (the next open makes it again) or the whole new one, never one
    /// written in part (which would be refused as damaged); a failure (a full disk) removes what was written.
    /// The caller opens the path again: `store` still holds the empty file the rename replaced.
    private static func create(store: PageStore) throws {
        let temp = store.path + ".new"
        unlink(temp)  // (left by a creation cut short: never a database)
        let fd = openRetrying(temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC)
        if fd < 0 { throw StorageError.io(path: temp, operation: "create", errno: errno) }
        do {
            let made = try PageStore(path: temp, fd: fd, readOnly: false, cipher: store.cipher)
            try made.reserveBlocks(pages: 2)
            try made.writeEncryptionHeader()
            try Database.writeEmpty(store: made)  // (synced)
            if rename(temp, store.path) != 0 {
                throw StorageError.io(path: store.path, operation: "rename the new file into place", errno: errno)
            }
        } catch {
            unlink(temp)
            throw error
        }
        try syncParentDirectory(of: store.path)
    }

    /// The absolute, symlink-free path of `path`; for a file that does not exist yet, of its directory plus
    /// its name, so that every spelling of one file maps to one `Database` (and one lock file) per process.
    static func canonicalPath(_ path: String) -> String {
        func real(_ p: String) -> String? {
            guard let r = realpath(p, nil) else { return nil }
            defer { free(r) }
            return String(cString: r)
        }
        if let r = real(path) { return r }
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        if let d = real(dir.isEmpty ? "/" : dir) { return d == "/" ? "/" + name : d + "/" + name }
        return path
    }

    /// For an encrypted file (its encryption header), the cipher of `key`: a missing key, a wrong key, a key
    /// for a plain file and a damaged or newer header are each their own error. nil for a plain file opened
    /// without a key.
    private static func precheckEncryption(fd: Int32, size: Int, path: String, key: [UInt8]?) throws -> PageCipher? {
        var head = [UInt8](repeating: 0, count: pageSize)
        let n = try head.withUnsafeMutableBytes {
            try readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<min(size, pageSize)]), at: 0, path: path, operation: "read")
        }
        let encrypted = head.withUnsafeBytes { EncryptionHeader.isEncrypted(UnsafeRawBufferPointer(rebasing: $0[0..<max(0, n)])) }
        guard encrypted else { return nil }
        guard let key else { throw StorageError.encryptionKeyRequired(path: path) }
        guard n == pageSize else {
            throw StorageError.truncated(path: path, expectedBytes: UInt64(4 * pageSize), actualBytes: UInt64(size))
        }
        switch head.withUnsafeBytes({ EncryptionHeader.decode($0) }) {
        case .notEncrypted: return nil
        case .newer(let v): throw StorageError.newerFormat(path: path, fileVersion: v, supported: EncryptionHeader.formatVersion)
        case .damaged: throw StorageError.corrupt(path: path, location: "encryption header (page 0)", reason: "bad checksum or impossible values")
        case .valid(let h):
            let cipher = PageCipher(userKey: key, salt: h.salt)
            guard cipher.keyCheck == h.keyCheck else { throw StorageError.invalidKey(path: path) }
            return cipher
        }
    }

    /// Reports a foreign, newer or truncated file before anything is created beside it.
    private static func precheckHeader(fd: Int32, size: Int, path: String) throws {
        var head = [UInt8](repeating: 0, count: 2 * pageSize)
        _ = try head.withUnsafeMutableBytes {  // a file cut shorter meanwhile leaves zeros: read as no valid slot
            try readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<min(size, 2 * pageSize)]), at: 0, path: path, operation: "read")
        }
        let slots = head.withUnsafeBytes { buf in
            [Meta.decode(UnsafeRawBufferPointer(rebasing: buf[0..<pageSize])),
             Meta.decode(UnsafeRawBufferPointer(rebasing: buf[pageSize..<2 * pageSize]))]
        }
        var sawMagic = false
        for s in slots {
            switch s {
            case .foreign: continue
            case .newer(let v): throw StorageError.newerFormat(path: path, fileVersion: v, supported: Meta.formatVersion)
            case .damaged, .valid: sawMagic = true
            }
        }
        if !sawMagic {
            // A short file that starts like ours (slot A's magic, or as much of it as the file holds) is
            // truncated, not foreign.
            if size < 2 * pageSize, head[0..<min(size, Meta.magic.count)].elementsEqual(Meta.magic.prefix(size)) {
                throw StorageError.truncated(path: path, expectedBytes: UInt64(2 * pageSize), actualBytes: UInt64(size))
            }
            throw StorageError.notADatabase(path: path)
        }
        if size < 2 * pageSize {
            throw StorageError.truncated(path: path, expectedBytes: UInt64(2 * pageSize), actualBytes: UInt64(size))
        }
    }

    private func initialiseEmpty() throws { try Database.writeEmpty(store: store) }

    /// Writes the two meta pages of an empty database (version 1 in slot B, slot A empty).
    static func writeEmpty(store: PageStore) throws {
        let logID: UInt64 = store.isMemory || store.isEncrypted ? 0 : UInt64.random(in: 1...UInt64.max)
        let empty = Meta(version: 1, catalogueRef: 0, freeListRef: 0, commitLogRef: 0, pageCount: 2, logID: logID)
        // Only slot B is written: page 0 reads as zeros (an empty slot A) once the file is two pages long, and
        // no crash can leave a file that has a zero page 0 but no valid slot.
        var page = empty.encode()
        page.append(contentsOf: repeatElement(0, count: pageSize - page.count))
        try page.withUnsafeBytes { try store.write($0, atPage: 1) }
        try store.sync()
    }

    // MARK: Versions

    /// The newest committed meta slot.
    func latestMeta() throws -> Meta {
        try Database.latestMeta(store: store, mapping: store.mapping, coordinator: coordinator)
    }

    /// How many times (2 ms apart) `latestMeta` reads the slots again when neither is valid.
    static let tornSlotRereads = 50

    static func readSlots(mapping: Mapping) -> [Meta.Decoded] {
        mapping.materializeMetaSlots()
        let base = UnsafeRawBufferPointer(start: mapping.base, count: 2 * pageSize)
        return [Meta.decode(UnsafeRawBufferPointer(rebasing: base[0..<pageSize])),
                Meta.decode(UnsafeRawBufferPointer(rebasing: base[pageSize..<2 * pageSize]))]
    }

    /// `readSlots` for the writer: the data file's slots change only at checkpoints and direct commits, so
    /// while their bytes equal those last decoded (256 bytes compared) the decoded slots are reused instead of
    /// checking both checksums again. Bytes caught half written differ from a decoded copy and are decoded.
    static func readSlots(mapping: Mapping, cache: SlotCache) -> [Meta.Decoded] {
        mapping.materializeMetaSlots()
        let n = Meta.encodedSize
        let first = UnsafeRawPointer(mapping.base), second = UnsafeRawPointer(mapping.base + pageSize)
        let same = cache.bytes.withUnsafeBytes { c in
            memcmp(c.baseAddress!, first, n) == 0 && memcmp(c.baseAddress! + n, second, n) == 0
        }
        if same, !cache.slots.isEmpty { return cache.slots }
        cache.bytes.withUnsafeMutableBytes { c in
            c.baseAddress!.copyMemory(from: first, byteCount: n)
            (c.baseAddress! + n).copyMemory(from: second, byteCount: n)
        }
        // Decoded from the copy: what was compared next time is what was decoded now.
        cache.slots = cache.bytes.withUnsafeBytes { c in
            [Meta.decode(UnsafeRawBufferPointer(rebasing: c[0..<n])), Meta.decode(UnsafeRawBufferPointer(rebasing: c[n..<2 * n]))]
        }
        return cache.slots
    }

    /// The live version: the meta published in the lock file (DECISIONS 53), or where nothing of this file is
    /// published, the newest meta slot. Of a slot and a published meta of one version (a checkpoint wrote the
    /// slot again), the slot. A slot newer than the published meta belongs to a direct commit whose sync has
    /// not returned (or failed, and is being undone): no process adopts it before its writer publishes it.
    static func latestMeta(store: PageStore, mapping: Mapping, coordinator: (any Coordinator)?,
                           slotCache: SlotCache? = nil) throws -> Meta {
        var best: Meta?
        func read() -> [Meta.Decoded] { slotCache.map({ readSlots(mapping: mapping, cache: $0) }) ?? readSlots(mapping: mapping) }
        var slots = read()
        // Each slot can be caught half written by a commit of another process; both can, when this thread is
        // descheduled between reading them for as long as a commit and the start of the next one. Neither
        // valid is then read again for a while before it is called damage (a damaged header stays damaged).
        var rereads = 0
        while rereads < Database.tornSlotRereads, !slots.contains(where: Meta.Decoded.isUsable) {
            rereads += 1
            usleep(2_000)
            slots = read()
        }
        // The valid slot matching `test` (the slots are read as they are: no array is made per call, which runs
        // at every snapshot and write transaction).
        func slot(where test: (Meta) -> Bool) -> Meta? {
            for s in slots { if case .valid(let m) = s, test(m) { return m } }
            return nil
        }
        for s in slots {
            if case .valid(let m) = s, m.version > (best?.version ?? 0) { best = m }
            if case .newer(let v) = s { throw StorageError.newerFormat(path: store.path, fileVersion: v, supported: Meta.formatVersion) }
        }
        // (A published meta naming a log identity no slot has is of a file compaction replaced.)
        if let c = coordinator, c.publishesMeta, let m = c.publishedMeta(current: true), slot(where: { $0.logID == m.logID }) != nil {
            if m.version > (best?.version ?? 0) {
                best = m
            } else if m.version < best!.version {
                best = slot(where: { $0.version == m.version }) ?? m
            }
        }
        guard let meta = best else {
            throw StorageError.corrupt(path: store.path, location: "header (pages 0 and 1)", reason: "neither meta slot is valid (bad checksum or impossible values)")
        }
        store.observe(version: meta.version)
        let (holds, size) = try store.holds(bytes: Int(meta.pageCount) * pageSize)
        if !holds {
            throw StorageError.truncated(path: store.path, expectedBytes: meta.pageCount * UInt64(pageSize), actualBytes: UInt64(size))
        }
        return meta
    }

    // MARK: Transactions

    /// A consistent read-only view of the newest committed version. Close it (or let it go) when done; while
    /// it lives, the pages of its version are not reused.
    public func snapshot() throws -> Snapshot {
        let mapping = store.mapping
        var meta = try Database.latestMeta(store: store, mapping: mapping, coordinator: coordinator)
        let slot = try coordinator.claimReaderSlot(version: meta.version)
        do {
            while true {
                let again = try Database.latestMeta(store: store, mapping: store.mapping, coordinator: coordinator)
                // The whole slot: a checkpoint writes the same version again, naming a new log generation.
                if again == meta { break }
                meta = again
                coordinator.setReaderVersion(meta.version, slot: slot)
            }
            return try Snapshot(database: self, meta: meta, mapping: store.mapping, readerSlot: slot)
        } catch {
            coordinator.releaseReaderSlot(slot)
            throw error
        }
    }

    /// Runs `body` on a snapshot of the newest version.
    public func read<T>(_ body: (Snapshot) throws -> T) throws -> T {
        let s = try snapshot()
        defer { s.close() }
        return try body(s)
    }

    /// Starts the one write transaction, waiting for any other writer (thread or process) to finish.
    public func beginWrite() throws -> WriteTransaction {
        if isReadOnly { throw StorageError.readOnly(path: path) }
        try refuseIfWritesStopped()
        let me = pthread_self()
        let reentrant = ownerLock.withLock { writerThread.map { pthread_equal($0, me) != 0 } ?? false }
        if reentrant { throw StorageError.writeInProgress(path: path) }
        try coordinator.lockWriter()
        return try startWrite()
    }

    /// `beginWrite` without waiting for a writer: nil when another thread or process holds the write transaction
    /// (an interactive program can then say so and try again, instead of freezing). Another process that only
    /// keeps the writer lock between its transactions is asked for it and given up to 200 ms to hand it over.
    public func tryBeginWrite() throws -> WriteTransaction? {
        if isReadOnly { throw StorageError.readOnly(path: path) }
        try refuseIfWritesStopped()
        try refuseIfThisThreadWrites()
        guard try coordinator.tryLockWriter() else { return nil }
        return try startWrite()
    }

    /// The write transaction on the newest version, once this thread holds the writer lock.
    private func startWrite() throws -> WriteTransaction {
        ownerLock.withLock { writerThread = pthread_self() }
        do {
            let mapping = store.mapping
            let meta = try Database.latestMeta(store: store, mapping: mapping, coordinator: coordinator, slotCache: writerSlots)
            let oldest = min(coordinator.oldestReaderVersion() ?? meta.version, meta.version)
            return try WriteTransaction(database: self, meta: meta, mapping: mapping, oldestReader: oldest)
        } catch {
            endWrite()
            throw error
        }
    }

    /// Runs `body` in a write transaction and commits it; if `body` throws, nothing is written.
    @discardableResult
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        let tx = try beginWrite()
        do {
            let result = try body(tx)
            try tx.commit()
            return result
        } catch {
            tx.rollback()
            throw error
        }
    }

    /// Throws `.writeInProgress` when this thread holds the write transaction (waiting for it would hang).
    func refuseIfThisThreadWrites() throws {
        let me = pthread_self()
        let reentrant = ownerLock.withLock { writerThread.map { pthread_equal($0, me) != 0 } ?? false }
        if reentrant { throw StorageError.writeInProgress(path: path) }
    }

    func endWrite() {
        ownerLock.withLock { writerThread = nil }
        coordinator.unlockWriter()
    }
}

/// Arrays a commit built and no longer needs, kept for the next commit of the process to build the same kinds
/// of things in (DECISIONS 64): on a CPU whose caches the last disk wait left cold, a new array per node cost an
/// allocation, its release and the runtime's lookup of the array type's metadata. An array someone still shares
/// gets new storage when emptied, so the sharer's bytes never change.
/// `value`, taken out of its place with `empty` left there: a recycled array is taken, not copied, so the
/// taker's is the only reference and is written in place.
@inline(__always) func take<T>(_ value: inout T, leaving empty: T) -> T {
    var taken = empty
    swap(&taken, &value)
    return taken
}

struct RecycledArrays {
    /// Index nodes' arrays (4 KiB each), in reverse order of writing: a commit that changes the same path of
    /// an index gets the leaf's first.
    var indexNodes: [[UInt8]] = []
    /// Table inner nodes' and commit roots' arrays (4 KiB each).
    var smallNodes: [[UInt8]] = []
    /// The array of the cluster the last commit extended (the node it replaced).
    var cluster: [UInt8] = []
    /// A catalogue section of an earlier commit, given back by the catalogue cache.
    var section: [UInt8] = []
    /// The meta slot bytes of the last logged commit.
    var meta: [UInt8] = []
    /// The lists of the decoded nodes a transaction took over, emptied, for the next transaction to record
    /// the nodes it writes in.
    var decodedLists = DecodedLeaves()
}

/// What a commit leaves the next write transaction of its process, if that one starts from the commit root it
/// wrote (`root` of `version`, in the same page store: no other process, compaction or failed commit came in
/// between): the catalogue and free list exactly as they went into that root, so the transaction need not
/// read the root back, decode the free list and compare the catalogue section (DECISIONS 64).
struct WriterHandover {
    let version: UInt64
    let root: UInt64
    let store: ObjectIdentifier
    let catalogue: Catalogue
    let freeList: [(Extent, UInt64)]
}

/// The data file's meta slots' bytes and what they decoded to (`Database.readSlots(mapping:cache:)`).
final class SlotCache: @unchecked Sendable {
    // Safe: used only by `startWrite`, under the writer lock, one write transaction at a time.
    var bytes = [UInt8](repeating: 0, count: 2 * Meta.encodedSize)
    var slots: [Meta.Decoded] = []
}

final class WeakDatabase: @unchecked Sendable {
    // Safe: only touched under Database.registryLock.
    weak var value: Database?
    init(_ value: Database) { self.value = value }
}
