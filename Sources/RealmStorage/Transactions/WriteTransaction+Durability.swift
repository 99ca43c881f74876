#if canImport(Glibc)
import Glibc
#endif

/// The two ways a commit becomes durable, each a short sequence of named steps in the order the crash argument
/// of docs/RELIABILITY.md needs. A commit's outcome is exact: when these return, the version survives a crash
/// at any later instant; when they throw, no process sees it, now or after reopening.
extension WriteTransaction {
    /// A logged commit (its nodes total at most `CommitLog.recordLimit`): one record appended to the commit log
    /// and synced, then the meta published in the lock file. The data file is not written; it catches up at a
    /// checkpoint, whose failure is not this commit's.
    func commitLogged(_ proposed: Meta, log: CommitLog, catalogueBytes: [UInt8], rootRef: UInt64,
                      freeList: [(Extent, UInt64)]) throws -> Meta {
        var newMeta = proposed
        let store = database.store
        let coordinator = database.coordinator
        precondition(coordinator.publishesMeta, "a database with a commit log has a lock file to publish in")
        // 1. Where the record goes (the log's header follows the slots first, if a checkpoint or direct commit
        //    was cut short after its slots), and the data file made long enough for the version's pages (a hole:
        //    nothing is written to it). Nothing that can fail comes after the record's write.
        let (generation, offset, start) = try log.appendPosition(after: meta,
                                                                 oldestReader: { database.coordinator.oldestReaderVersion() })
        newMeta.logGeneration = generation
        newMeta.logStart = start
        newMeta.logEnd = offset + CommitLog.recordSize(entries: logEntries)
        try store.extend(toPages: newMeta.pageCount)
        let encodedMeta = newMeta.encode(reusing: take(&database.recycled.meta, leaving: []))

        // Bookkeeping before the write, while what it touches is still in the cache (after the wait for the disk
        // it is not, DECISIONS 58): the record's pages go into this process's index of the log (no snapshot can
        // reach them before the meta is published: they were free in every version a live reader sees; if the
        // write fails the index is dropped and read again from the file), the written nodes are handed on (the
        // next transaction takes them only if its version is this one), and what the transaction no longer
        // needs is let go.
        let record = log.build(logID: meta.logID, generation: generation, version: newMeta.version, meta: encodedMeta,
                               entries: logEntries)
        database.logPages?.committed(newMeta, recordStart: offset, record: record, entries: logEntries)
        handOver(version: newMeta.version, catalogueSection: catalogueBytes, root: rootRef, freeList: freeList)
        // What was handed on is for a transaction starting from this commit's version; if the commit fails it
        // must not be taken by one that starts from the same version another process then commits.
        var published = false
        defer {
            if !published {
                database.decodedLeaves = DecodedLeaves()
                database.writerHandover = nil
            }
        }

        // 2. The record, durable when the write returns. The log grows first: when that fails nothing of the
        //    record is written, and the handle goes on (the zeros that make a failed record unreplayable would
        //    need the very space that is missing, and failing to write them stops the handle).
        do {
            try log.reserve(record, at: offset)
        } catch {
            database.logPages?.reset()
            throw error
        }
        do {
            try log.write(record, at: offset)
        } catch {
            database.logPages?.reset()
            // The failed write may still have reached the disk whole; a replay must not bring back a commit that
            // threw. If even that cannot be made sure of, this handle writes no more.
            do { try log.invalidate(at: offset) } catch { database.stopWrites(after: error) }
            throw error
        }

        // 3. Visible to every process. This process's next transactions read the record's nodes from memory this
        //    transaction sealed them in: they are known to match their checksums (computing them again on the
        //    first read was ~2 % of a small commit's time).
        coordinator.publish(meta: encodedMeta, decoded: newMeta)
        published = true
        for i in logEntries.indices {
            logEntries[i].bytes.withUnsafeBytes { mapping.noteChecked($0, ref: logEntries[i].page) }
        }
        database.recycled.meta = encodedMeta  // for the next commit's meta (DECISIONS 64)

        // 4. A checkpoint when the generation's records are long enough: the commit is durable and visible
        //    already, so a checkpoint that fails (a full disk) is reported and tried again after the next commit.
        if newMeta.logEnd - start > database.checkpointBytes {
            do {
                newMeta = try database.checkpointLog(after: newMeta, previous: meta)
            } catch {
                database.checkpointFailed(error)
            }
        }
        return newMeta
    }

    /// A direct commit (a large one, or any on a file without a commit log): the nodes, already written to the
    /// data file, are synced; then the meta slot is written and synced (so a valid slot always names nodes that
    /// were durable before it, and a node that fails its checksum later is damage, never a torn commit); then
    /// the log's records, which the data file now holds, are retired; then the meta is published.
    func commitDirect(_ proposed: Meta) throws -> Meta {
        var newMeta = proposed
        let store = database.store
        var retire: (generation: UInt64, start: UInt64)?
        // The slots this commit writes: its own, and the one before it when that named logged pages (it is
        // whole in the data file now; its slot then no longer sends a reader to the log).
        var slots: [Meta] = []
        if let log = database.commitLog {
            if meta.logID == 0 {
                // A file of format 1: it gets its log identity with this commit.
                newMeta.logID = UInt64.random(in: 1...UInt64.max)
            } else if access(log.path, F_OK) == 0 {
                let next = try log.nextGeneration(after: meta)
                newMeta = newMeta.naming(emptyGeneration: next.generation, at: next.start)
                retire = next
                if Database.hasLoggedPages(meta) { slots.append(meta.naming(emptyGeneration: next.generation, at: next.start)) }
            }
        }
        slots.append(newMeta)

        // 1. Every node of the new version durable (pages only the log held were written before this
        //    transaction's own, which may reuse some of them).
        do {
            try store.sync()
        } catch {
            database.stopWrites(after: error)
            throw error
        }

        // 2. The switch: the meta slot(s), synced. Until the sync returns, no process adopts the version (only
        //    published metas are, step 4); if it fails, the slots get back what they held, so that what the
        //    disk keeps is the version before.
        let coordinator = database.coordinator
        if coordinator.publishesMeta, coordinator.publishedMeta(current: true).map({ $0.logID != meta.logID }) ?? true {
            // Nothing of this file published yet (its first commit since every process closed it): the version
            // this commit builds on is, so that no process adopts the new slot before step 4.
            coordinator.publish(meta: meta.encode(), decoded: meta)
        }
        let before = slots.map { (page: $0.version % 2, bytes: store.metaSlotBytes(page: $0.version % 2)) }
        do {
            for m in slots { try m.encode().withUnsafeBytes { try store.write($0, atPage: m.version % 2) } }
            try store.sync()
        } catch {
            database.stopWrites(after: error)
            do {
                for b in before { try b.bytes.withUnsafeBytes { try store.write($0, atPage: b.page) } }
                try store.sync()
            } catch {
                throw StorageError.io(path: store.path, operation: "restore the meta slots after a failed commit (whether "
                                      + "the file keeps version \(newMeta.version) is known only after reopening it)",
                                      errno: StorageError.errnoOf(error) ?? EIO)
            }
            throw error
        }

        // 3. The log's records retired (the data file holds every page they wrote). The commit is durable
        //    already: if this fails, the next logged commit retires them first (`CommitLog.appendPosition`),
        //    and a replay skips records that are not newer than the slots.
        if let next = retire, let log = database.commitLog {
            do {
                try log.retire(logID: newMeta.logID, to: next, pin: newMeta.version)
            } catch {
                database.checkpointFailed(error)
            }
        }

        // 4. Visible to every process.
        if coordinator.publishesMeta { coordinator.publish(meta: newMeta.encode(), decoded: newMeta) }
        return newMeta
    }
}

extension Database {
    /// After a failed sync of the data file (or of a record that then could not be made unreplayable), this
    /// handle writes no more: Linux may have marked the pages whose write-back failed clean, so the page cache
    /// no longer says what the disk holds (PostgreSQL's "fsyncgate", 2018). The file keeps what the disk has;
    /// reopening the database (every reference let go, then `open`) starts from that.
    func stopWrites(after error: Error) {
        ownerLock.withLock { if _writesStopped == nil { _writesStopped = "\(error)" } }
    }

    func refuseIfWritesStopped() throws {
        if let cause = ownerLock.withLock({ _writesStopped }) { throw StorageError.writesStopped(path: path, cause: cause) }
    }

    /// Why the last checkpoint (or a direct commit's retiring of the log) failed, nil when it succeeded: the
    /// commits are durable in the log meanwhile, and the next commit tries again.
    public var checkpointFailure: String? { ownerLock.withLock { _checkpointFailure } }

    func checkpointFailed(_ error: Error) {
        ownerLock.withLock { _checkpointFailure = "\(error)" }
    }

    func checkpointSucceeded() {
        ownerLock.withLock { _checkpointFailure = nil }
    }
}

extension PageStore {
    /// The 128 bytes of the meta slot at `page` (0 or 1) as this process sees them now.
    func metaSlotBytes(page: UInt64) -> [UInt8] {
        let mapping = self.mapping
        mapping.materializeMetaSlots()
        return Array(UnsafeRawBufferPointer(start: mapping.base + Int(page) * pageSize, count: Meta.encodedSize))
    }
}

extension StorageError {
    /// The errno of an I/O error, nil for any other error.
    static func errnoOf(_ error: Error) -> Int32? {
        if case .io(_, _, let e)? = error as? StorageError { return e }
        return nil
    }
}
