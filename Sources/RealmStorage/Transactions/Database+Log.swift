#if canImport(Glibc)
import Glibc
#endif

extension Database {
    /// Writes every page that only the commit log holds for `meta`'s generation into the data file, each as
    /// the last record wrote it (not synced). Under the writer lock.
    func writeLoggedPages(of meta: Meta) throws {
        guard let index = try logPages?.index(for: meta) else { return }
        let store = self.store
        if let e = checkpointWriteErrorForTesting {
            throw StorageError.io(path: store.path, operation: "write", errno: e)
        }
        try store.writePadded(sorted: index.checkpointCopies())
    }

    /// A checkpoint, under the writer lock, right after `meta` was published: the data file gets and syncs
    /// every page only the log held, both meta slots are written naming a new generation without records (so
    /// no reader starting from here reads the log): `meta`'s version and the one before it (`previous`, when
    /// known), whole in the data file now. Then the log's header starts that generation after the records,
    /// which readers of versions up to `meta`'s may still read (DECISIONS 53). Returns the slot as written. In
    /// that order, a crash at any point leaves the log replaying over a file it matches.
    func checkpointLog(after meta: Meta, previous: Meta? = nil) throws -> Meta {
        guard let log = commitLog, meta.logID != 0 else { return meta }
        try writeLoggedPages(of: meta)
        let store = self.store
        try store.sync()
        let next = try log.nextGeneration(after: meta)
        var before = previous
        if before == nil, coordinator.publishesMeta { before = coordinator.publishedMeta(current: false) }
        if let b = before, b.version + 1 == meta.version, b.logID == meta.logID {
            try b.naming(emptyGeneration: next.generation, at: next.start).encode().withUnsafeBytes {
                try store.write($0, atPage: b.version % 2)
            }
        }
        let moved = meta.naming(emptyGeneration: next.generation, at: next.start)
        let encoded = moved.encode()
        try encoded.withUnsafeBytes { try store.write($0, atPage: meta.version % 2) }
        try store.sync()
        try log.retire(logID: meta.logID, to: next, pin: meta.version)
        if coordinator.publishesMeta { coordinator.publish(meta: encoded, decoded: moved) }
        checkpointSucceeded()
        return moved
    }

    /// For tests: while set, writing the logged pages into the data file (the first step of a checkpoint and of a
    /// direct commit) fails with this `errno` before anything is written, as it does on a full disk.
    var checkpointWriteErrorForTesting: Int32? {
        get { ownerLock.withLock { _checkpointWriteErrorForTesting } }
        set { ownerLock.withLock { _checkpointWriteErrorForTesting = newValue } }
    }

    /// Whether `meta`'s version may have pages that only the commit log holds (slots of format 4 on: before,
    /// every logged page was written to the data file as well).
    static func hasLoggedPages(_ meta: Meta) -> Bool {
        meta.format >= 4 && meta.logID != 0 && meta.logEnd > meta.logRecordsStart
    }

    /// When the process lets go of the database: a checkpoint if the log holds pages and no one is writing,
    /// so that the data file stands alone again once every process has closed it. Errors are ignored (the
    /// next process to open the file first replays the log).
    func checkpointOnClose() {
        // Every error here leaves the commits where they are safe, in the log: the next first opener replays it.
        guard commitLog != nil, let m = try? latestMeta(), Database.hasLoggedPages(m) else { return }  // (see above)
        guard (try? coordinator.tryLockWriter()) == true else { return }  // another writer checkpoints instead
        defer { coordinator.unlockWriter() }
        if let m = try? latestMeta(), Database.hasLoggedPages(m) { _ = try? checkpointLog(after: m) }  // (see above)
    }
}

extension Database {
    /// Every database still open when the program exits normally is checkpointed, as if it were closed:
    /// command-line programs usually leave their databases to the end of the process.
    static let exitCheckpoint: Void = {
        atexit {
            let open = Database.registryLock.withLock { Database.openFiles.values.compactMap { $0.value } }
            for db in open { db.checkpointOnClose() }
        }
    }()
}
