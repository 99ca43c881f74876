extension Database {
    /// How many versions are kept alive: the newest, plus each older one some reader (in any process) holds.
    /// Space freed after the oldest of them cannot be reused yet.
    public var liveVersionCount: Int {
        let latest = (try? snapshot()).map { s -> UInt64 in  // a count of versions, at least 1: no data is read
            defer { s.close() }
            return s.version
        }
        var versions = Set(coordinator.readerVersions())
        if let latest { versions.insert(latest) }
        return max(versions.count, 1)
    }
}

extension Database {
    /// For an encrypted file: about how many bytes of decrypted pages this process keeps in memory (pages
    /// stay decrypted once read, DECISIONS 34); 0 for a plain file.
    public var decryptedBytes: Int { isEncrypted ? store.mirroredBytes : 0 }

    /// Bytes of commits in the commit log that no checkpoint has folded into the data file yet (DECISIONS
    /// 39); nil for a database without a log (encrypted or in-memory, or a format-1 file before its first
    /// commit with this version).
    public var commitLogBytes: Int? {
        // A meta that cannot be read shows as no log here; every read of the database reports its error.
        guard !isInMemory, let meta = try? latestMeta(), meta.logID != 0 else { return nil }  // see above
        guard Database.hasLoggedPages(meta) else { return 0 }
        return Int(meta.logEnd - meta.logRecordsStart)
    }

    /// For an encrypted file: past this many bytes of decrypted pages, a long read (a scan of a class, a
    /// query, iterating every object) gives them back as it goes instead of holding them to the end.
    /// 256 MiB unless set.
    public var decryptedPageBudget: Int {
        get { decryptedBudget.load(ordering: .relaxed) }
        set { decryptedBudget.store(max(newValue, 0), ordering: .relaxed) }
    }

    /// Frees the decrypted pages of an encrypted file; they are decrypted again when next read. Call it
    /// when no other thread of this process is using the database (a single-threaded program between two
    /// reads, as the browser does when `decryptedBytes` passes its budget). Returns false, freeing nothing,
    /// while this process has a snapshot or a write transaction open.
    @discardableResult
    /// Gives back the decrypted pages of an encrypted file except the nodes `pinned` (and their pages), from
    /// the middle of a walk by `snapshot`, which must be the only snapshot open in this process (no write
    /// transaction either). Returns false, freeing nothing, otherwise.
    func trimDecryptedPages(keeping pinned: [UInt64], during snapshot: Snapshot) -> Bool {
        guard isEncrypted, !snapshot.isClosed else { return false }
        return ownerLock.withLock {
            guard _openSnapshots == 1, writerThread == nil else { return false }
            decodedLeaves = DecodedLeaves()
            var pages: [UInt64] = []
            for ref in pinned {
                guard let n = try? snapshot.node(ref, expected: nil) else { continue }  // not kept: its next read fails again
                pages += (0..<UInt64(pagesFor(bytes: n.count))).map { ref + $0 }
            }
            _store.trimMirror(keeping: pages)
            return true
        }
    }

    public func trimDecryptedPages() -> Bool {
        guard isEncrypted else { return false }
        return ownerLock.withLock {
            guard _openSnapshots == 0, writerThread == nil else { return false }
            // Clusters kept decoded for the next write read their old node in place.
            decodedLeaves = DecodedLeaves()
            _store.trimMirror()
            return true
        }
    }
}

extension Snapshot {
    /// For a long loop of single reads (sorting by a path, exporting chosen objects) that keeps no
    /// `LeafCursor`, column or other view of this snapshot between two reads: on an encrypted file past
    /// `Database.decryptedPageBudget`, gives the decrypted pages back (DECISIONS 41). Does nothing for a
    /// plain file, inside a table walk (which does it itself), in a write transaction, or while another
    /// snapshot of this process is open.
    public func releaseDecryptedPagesIfOverBudget() {
        guard database.isEncrypted, !(self is WriteTransaction), walkDepth == 0,
              database.store.mirroredBytes > database.decryptedPageBudget else { return }
        _ = database.trimDecryptedPages(keeping: [], during: self)
    }
}
