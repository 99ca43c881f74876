#if canImport(Glibc)
import Glibc
#endif

extension Database {
    /// Writes a compacted copy of the newest version to `path`, which must not exist: only live data,
    /// contiguous, with object keys, schema and schema version preserved.
    public func writeCopy(to path: String) throws {
        try writeCopy(to: path, encryptionKey: encryptionKey)
    }

    /// `writeCopy(to:)` with the copy's key: nil writes a plain copy (decrypting an encrypted file), a key an
    /// encrypted one (encrypting a plain file, or changing the key).
    public func writeCopy(to path: String, encryptionKey key: [UInt8]?) throws {
        if access(path, F_OK) == 0 { throw StorageError.io(path: path, operation: "create the copy", errno: EEXIST) }
        if let key, key.count != PageCipher.keyLength { throw StorageError.invalidKeyLength(key.count) }
        try read { source in
            var options = DatabaseOptions(encryptionKey: key)
            options.usesCommitLog = false  // the copy is synced whole; it has no log to leave behind
            let target = try Database.open(path: path, options: options)
            try Database.copy(from: source, into: target)
        }
        unlink(path + ".lock")
    }

    /// Copies every class and object of `source` into the empty database `target`, in batches.
    static func copy(from source: Snapshot, into target: Database, batch: Int = 100_000) throws {
        var catalogue = source.catalogue
        for i in catalogue.classes.indices {
            catalogue.classes[i].tableRoot = 0
            catalogue.classes[i].objectCount = 0
            for j in catalogue.classes[i].properties.indices { catalogue.classes[i].properties[j].indexRoot = 0 }
        }
        var tx = try target.beginWrite()
        tx.catalogue = catalogue
        tx.catalogueChanged = true
        var pending = 0
        /// Counts `n` more copied items; once a batch is full, commits it and begins the next transaction
        /// (returns true then).
        func copied(_ n: Int) throws -> Bool {
            pending += n
            guard pending >= batch else { return false }
            try tx.commit()
            tx = try target.beginWrite()
            pending = 0
            return true
        }
        do {
            for c in source.catalogue.classes {
                // Walked as a long read: an encrypted source gives its decrypted pages back as the copy goes.
                try source.walkLeaves(c.classID) { leaf in
                    guard case .clean(let view) = leaf else { return true }
                    try copyLeaf(view, c, from: source, into: tx)
                    _ = try copied(view.count)
                    return true
                }
            }
            // Backlink trees, entry by entry in order (each insert lands at the right edge).
            for c in source.catalogue.classes {
                for bl in c.properties where bl.type == .backlink {
                    var current = try tx.backlinkColumn(classID: c.classID, columnID: bl.columnID)
                    try source.backlinkTree(c.classID, bl).scan(from: [], source: source) { e in
                        try tx.withIndex(c.classID, current) { _ = try $0.insert(e, sink: tx) }
                        if try copied(1) { current = try tx.backlinkColumn(classID: c.classID, columnID: bl.columnID) }
                        return true
                    }
                }
            }
            try tx.commit()
        } catch {
            tx.rollback()
            throw error
        }
    }

    private static func copyLeaf(_ view: ClusterView, _ c: ClassInfo, from source: Snapshot, into tx: WriteTransaction) throws {
        let ci = try tx.classIndex(c.classID)
        let current = tx.catalogue.classes[ci]
        let mutator = TreeMutator(sink: tx, properties: current.properties)
        var root = tx.root(of: c.classID)
        let readers = try c.properties.map { p in p.hasColumn ? try view.reader(for: p, source: source) : nil }
        for row in 0..<view.count {
            let key = view.key(at: row)
            var values: [UInt32: Value] = [:]
            for (pi, p) in c.properties.enumerated() where p.hasColumn {
                guard let r = readers[pi] else { continue }
                // Lists are byte strings in the cluster: copied as they are.
                values[p.columnID] = try r.value(at: row, source: source, location: "row \(row) of \(c.name).\(p.name) in the cluster at page \(view.ref)")
            }
            try mutator.insert(&root, key: key, values: values)
            for p in current.properties where p.isIndexed {
                try tx.addToIndex(c.classID, p, values[p.columnID] ?? p.defaultValue, key)
            }
            for p in current.properties where p.isElementIndexed {
                guard case .data(let bytes) = values[p.columnID] ?? p.defaultValue else { continue }
                let elements: [Value]
                do {
                    elements = try ListCoding.decode(bytes)
                } catch let e as ListCoding.Malformed {
                    throw StorageError.corrupt(path: source.displayPath, location: "set \(c.name).\(p.name) of #\(key)", reason: e.reason)
                }
                for v in elements { try tx.addToIndex(c.classID, p, v, key) }
            }
        }
        tx.roots[c.classID] = root
        tx.catalogue.classes[ci].objectCount += UInt64(view.count)
    }

    /// Bytes of the file holding live data (the rest is free space).
    public func usedBytes() throws -> Int {
        try read { s in
            var free: UInt64 = 0
            if s.meta.catalogueRef != 0 {
                for (e, _) in try CommitRoot.freeList(s.node(s.meta.catalogueRef, expected: .catalogue), ref: s.meta.catalogueRef,
                                                      source: s, pageCount: s.meta.pageCount) { free += e.count }
            }
            guard free <= s.meta.pageCount else {
                throw s.corrupt(s.meta.catalogueRef, "free list holds \(free) pages of a file of \(s.meta.pageCount)")
            }
            return Int(s.meta.pageCount - free) * pageSize
        }
    }

    /// Rewrites the file with only its live data and swaps it in atomically (rename). Refused while another
    /// process has the file open, or while snapshots or a write transaction of this process are open.
    /// Does nothing for an in-memory database.
    public func compact() throws {
        if isReadOnly { throw StorageError.readOnly(path: path) }
        if isInMemory { return }  // no file to shrink
        try refuseIfThisThreadWrites()
        try coordinator.lockWriter()
        defer { coordinator.unlockWriter() }
        let snapshots = openSnapshotCount
        if snapshots > 0 {
            throw StorageError.inUse(path: path, operation: "compact",
                                     reason: snapshots == 1 ? "1 snapshot of this process is still open"
                                                            : "\(snapshots) snapshots of this process are still open")
        }
        let temp = path + ".compact"
        unlink(temp)
        unlink(temp + ".lock")
        let done = try coordinator.withExclusiveAccess {
            do {
                try read { source in
                    var options = DatabaseOptions(encryptionKey: encryptionKey)
                    options.usesCommitLog = false
                    let target = try Database.open(path: temp, options: options)
                    try Database.copy(from: source, into: target)
                }
            } catch {
                // Nothing of a copy that failed (a full disk) stays behind to take up the space.
                unlink(temp)
                unlink(temp + ".lock")
                throw error
            }
            unlink(temp + ".lock")
            if rename(temp, path) != 0 { throw StorageError.io(path: path, operation: "rename the compacted file", errno: errno) }
            try reopenStore()
            // Until the directory is synced a power cut can bring the old file back, and with it lose every
            // commit made to the new one; the writer lock is held, so none is made before this returns.
            try syncParentDirectory(of: path)
        }
        if !done {
            throw StorageError.inUseByAnotherProcess(path: path, operation: "compact")
        }
    }
}

extension Database {
    /// Makes the data file hold every commit by itself: syncs it and retires the commit log's records
    /// (DECISIONS 39). Copy the file with ordinary tools after this (and while no one writes). Checkpoints
    /// also run on their own as the log fills; nothing for in-memory, encrypted or read-only databases.
    public func checkpoint() throws {
        guard let log = commitLog else { return }
        try refuseIfThisThreadWrites()
        try coordinator.lockWriter()
        defer { coordinator.unlockWriter() }
        let meta = try latestMeta()
        guard meta.logID != 0, access(log.path, F_OK) == 0 else { return }
        _ = try checkpointLog(after: meta)
    }
}
