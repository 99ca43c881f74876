#if canImport(Glibc)
import Glibc
#endif

/// What the first process to open a file does before anyone reads it: replay the commit log's records the
/// slots are not yet past, then check the meta slots (docs/RELIABILITY.md, "Opening").
extension Database {
    /// Run by the first process to open a plain file: writes the whole records of the commit log's current
    /// generation into the data file (a machine crash may have lost page writes the log made durable), with
    /// the meta slots of the last two, syncs the file and retires the records. A log of another file (its
    /// identity differs) is left alone; the next logged commit replaces it.
    static func replayCommitLog(store: PageStore) throws {
        guard !store.isMemory, !store.isEncrypted else { return }
        var newest: Meta?
        for s in readSlots(mapping: store.mapping) {
            if case .valid(let m) = s, m.version > (newest?.version ?? 0) { newest = m }
        }
        guard let newest, newest.logID != 0,
              let (header, all) = try CommitLog.readRecords(path: store.path + ".log", logID: newest.logID) else { return }
        // Records the slots are already past were made durable in the data file by a checkpoint or a direct
        // commit that then stopped before retiring them: replayed, they would write over pages later versions
        // reuse.
        let records = all.filter { $0.version > newest.version }
        guard !records.isEmpty else { return }
        let generation = header.generation
        let zeros = [UInt8](repeating: 0, count: pageSize)
        var writes: [(page: UInt64, bytes: [UInt8])] = []
        for r in records {
            for e in r.entries {
                var b = e.bytes
                b.append(contentsOf: zeros[0..<(pagesFor(bytes: b.count) * pageSize - b.count)])
                writes.append((e.page, b))
            }
        }
        /// The meta slots of the last two records; `moved`: naming the generation the replay starts, without
        /// records, so that no reader goes to the log for records the next commit overwrites.
        func metaWrites(moved: Bool) -> [(page: UInt64, bytes: [UInt8])] {
            records.suffix(2).map { r in
                var b = r.meta
                if moved, case .valid(let m) = b.withUnsafeBytes({ Meta.decode($0) }) {
                    b = m.naming(emptyGeneration: generation + 1, at: UInt64(CommitLog.headerSize)).encode()
                }
                b.append(contentsOf: zeros[0..<(pageSize - b.count)])
                return (r.version % 2, b)
            }
        }
        if store.readOnly {
            // After a clean exit the file holds every record already: nothing to write, and a read-only opener
            // must not need write access then (a database copied to read-only media).
            let size = try store.currentSize()
            let all = writes + metaWrites(moved: false)
            // Each page as the last record wrote it (a later commit may have reused a page an earlier one wrote).
            var latest: [UInt64: (write: Int, offset: Int)] = [:]
            for (i, w) in all.enumerated() {
                for p in 0..<(w.bytes.count / pageSize) { latest[w.page + UInt64(p)] = (i, p * pageSize) }
            }
            // Read with `pread`, not through the mapping: the pages only the log held are holes in the data file,
            // and reading a hole through a shared mapping faults (SIGBUS) on a full tmpfs.
            let readFD = openRetrying(store.path, O_RDONLY | O_CLOEXEC)
            if readFD < 0 { throw StorageError.io(path: store.path, operation: "open to compare with the commit log", errno: errno) }
            defer { Glibc.close(readFD) }
            var page = [UInt8](repeating: 0, count: pageSize)
            let holdsAll = try latest.allSatisfy { p, at in
                guard (Int(p) + 1) * pageSize <= size else { return false }
                let n = try page.withUnsafeMutableBytes {
                    try readFully(readFD, into: $0, at: Int(p) * pageSize, path: store.path, operation: "read to compare with the commit log")
                }
                if n != pageSize { return false }
                return all[at.write].bytes.withUnsafeBytes { b in
                    page.withUnsafeBytes { memcmp($0.baseAddress!, b.baseAddress! + at.offset, pageSize) == 0 }
                }
            }
            if holdsAll { return }
            // The first opener opened read-only: replay through a descriptor of its own, or say what to do.
            let fd = openRetrying(store.path, O_RDWR | O_CLOEXEC)
            if fd < 0 {
                throw StorageError.io(path: store.path, operation: "replay the commit log (opened read-only; "
                                      + "open the file read-write once to recover it)", errno: errno)
            }
            defer { Glibc.close(fd) }
            for w in writes + metaWrites(moved: true) {
                try w.bytes.withUnsafeBytes { try writeFully(fd, $0, at: Int(w.page) * pageSize, path: store.path, operation: "replay the commit log") }
            }
            try syncData(fd, path: store.path, operation: "fdatasync")
        } else {
            for w in writes + metaWrites(moved: true) { try w.bytes.withUnsafeBytes { try store.write($0, atPage: w.page) } }
            try store.sync()
        }
        try CommitLog(dataPath: store.path).reset(logID: newest.logID, generation: generation + 1, pin: records.last!.version)
    }

    /// Run by the first process to open the file, after the replay. Every valid slot names nodes that were
    /// durable before the slot was written (`WriteTransaction.commitDirect`), so there is no torn commit to
    /// roll back: a node that fails its checksum is damage, reported by whoever reads it. A slot that fails its
    /// own checksum while the other is valid is either the write of a commit cut short (its sync never
    /// returned, so neither did the commit) or damage to a version that was acknowledged. The commit log's
    /// header tells them apart where there is one: its pin is a version whose slots were synced before the
    /// header was written. When that is newer than the valid slot, the damaged slot held an acknowledged
    /// version, and opening the older one instead would lose it silently: that is an error.
    static func checkDamagedSlots(store: PageStore) throws {
        guard !store.isMemory else { return }
        let slots = readSlots(mapping: store.mapping)
        // (A slot of zeros or other bytes without our magic counts too: only a new file's slot A is legitimately
        // empty, and then no version after the other slot's was ever committed.)
        guard let damaged = slots.firstIndex(where: { if case .valid = $0 { return false } else { return true } }),
              case .valid(let other) = slots[1 - damaged], other.logID != 0,
              let header = try CommitLog.readHeader(path: store.path + ".log"), header.logID == other.logID,
              header.pin > other.version else { return }
        throw StorageError.corrupt(path: store.path, location: "meta slot \(damaged == 0 ? "A (page 0)" : "B (page 1)")",
                                   reason: "it fails its checksum, and it held version \(header.pin) or later, which was "
                                   + "committed; the other slot holds only version \(other.version)")
    }
}
