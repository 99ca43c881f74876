#if canImport(Glibc)
import Glibc
#endif
internal import CStorageSupport
import Synchronization

/// The commit log beside a plain database file (`<path>.log`, DECISIONS 39, FILE_FORMAT "Commit log").
///
/// A small commit writes its new nodes and meta only here, as one record, durably (one direct write that
/// includes the flush); readers of every process find those nodes through the log's index (`LogPages`,
/// DECISIONS 53) and the meta published in the lock file. At a checkpoint the last copy of each page goes
/// into the data file, which is synced, and the log starts a new generation. After a machine crash the first
/// process to open the file replays the records of the current generation into the data file, so it holds
/// the last commit whose record is whole.
///
/// Only the writer (under the writer lock) appends; the header and the meta slots say where.
final class CommitLog {
    static let magic: [UInt8] = Array("RBDBLOG\u{0}".utf8)
    /// 2 added the generation's start and the reader pin to the header and aligned the records (DECISIONS
    /// 53); logs of format 1 are still replayed.
    static let formatVersion: UInt32 = 2
    /// Records of a format-2 log start on multiples of this, so that they can be written with direct I/O.
    static let recordAlignment = 4096

    static func aligned(_ n: Int) -> Int { (n + recordAlignment - 1) / recordAlignment * recordAlignment }
    /// Records start after the header page.
    static let headerSize = 4096
    /// Records written now: the checksum covers the record header and each node's 16-byte header (which holds
    /// that node's own checksum of its bytes), so a commit's bytes are hashed once, by `NodeBuilder`; it is
    /// seeded with the log's identity and the generation (`recordSeed`), so a record left by another file at
    /// this path, or by an earlier life of this log, never checks out.
    static let recordMagic: UInt32 = 0x3343_5252  // "RRC3"
    /// Records of earlier builds, still replayed: as "RRC3", seeded with the generation only.
    static let generationSeededRecordMagic: UInt32 = 0x3243_5252  // "RRC2"
    /// Records of earlier builds, still replayed: the checksum covers every byte.
    static let wholeHashRecordMagic: UInt32 = 0x4443_5252  // "RRCD"

    static func isRecordMagic(_ magic: UInt32) -> Bool {
        magic == recordMagic || magic == generationSeededRecordMagic || magic == wholeHashRecordMagic
    }

    /// The seed of the checksum of a record of `magic` in generation `generation` of the log `logID`.
    static func recordSeed(magic: UInt32, logID: UInt64, generation: UInt64) -> UInt64 {
        magic == recordMagic ? hash64(word: logID, seed: generation) : generation
    }
    /// Fixed part of a record: magic, entry count, generation, version, total length.
    static let recordHeaderSize = 32
    static let entrySize = 16
    /// Commits that write more than this go straight to the data file (after a checkpoint).
    static let recordLimit = 1 << 20
    /// A checkpoint runs once the records of a generation pass this size (DECISIONS 67: 16 MiB; at 4 MiB the
    /// checkpoints were ~3 % of a run of single commits at 100,000 objects and more at a million).
    static let checkpointBytes: UInt64 = 16 << 20

    let path: String
    private var fd: Int32 = -1
    /// The log opened for direct, synchronous writes (`O_DIRECT | O_DSYNC`): a record goes to the disk in one
    /// call, without a copy in the page cache or a separate `fdatasync` (DECISIONS 53). -1 where the file
    /// system refuses it (tmpfs), and then records are written and synced through `fd`.
    private var directFD: Int32 = -1

    /// Whether records may be written with direct I/O (tests turn it off to take the other path).
    let directWrites: Bool

    init(dataPath: String, directWrites: Bool = true) {
        path = dataPath + ".log"
        self.directWrites = directWrites
    }

    deinit {
        if let headerPage { munmap(headerPage, CommitLog.headerSize) }
        if fd >= 0 { close(fd) }
        if directFD >= 0 { close(directFD) }
    }

    struct Header: Equatable {
        var logID: UInt64
        var generation: UInt64
        /// Where the generation's records begin: right after the header, or after the records of the
        /// generations before it while a reader may still read those (DECISIONS 53).
        var start: UInt64 = UInt64(CommitLog.headerSize)
        /// Readers of versions up to this one may still read records before `start`.
        var pin: UInt64 = 0
        /// Whether records start on multiples of `recordAlignment` (format 2; format 1 packed them).
        var isAligned = true

        func encode() -> [UInt8] {
            var w = ByteWriter(capacity: 56)
            w.raw(CommitLog.magic)
            w.u32(CommitLog.formatVersion)
            w.u32(UInt32(pageSize))
            w.u64(logID)
            w.u64(generation)
            w.u64(start)
            w.u64(pin)
            w.u64(hash64(w.bytes))
            return w.bytes
        }

        /// nil for anything but a whole header of this format or of format 1 (which had neither `start` nor
        /// `pin`).
        static func decode(_ b: UnsafeRawBufferPointer) -> Header? {
            guard b.count >= 40, zip(b[0..<8], CommitLog.magic).allSatisfy({ $0 == $1 }), b.u32(at: 12) == UInt32(pageSize) else {
                return nil
            }
            switch b.u32(at: 8) {
            case 1:
                guard hash64(UnsafeRawBufferPointer(rebasing: b[0..<32])) == b.u64(at: 32) else { return nil }
                return Header(logID: b.u64(at: 16), generation: b.u64(at: 24), isAligned: false)
            case CommitLog.formatVersion:
                guard b.count >= 56, hash64(UnsafeRawBufferPointer(rebasing: b[0..<48])) == b.u64(at: 48) else { return nil }
                let start = b.u64(at: 32)
                guard start >= UInt64(CommitLog.headerSize), start <= Meta.maxLogBytes else { return nil }
                return Header(logID: b.u64(at: 16), generation: b.u64(at: 24), start: start, pin: b.u64(at: 40))
            default:
                return nil
            }
        }
    }

    /// One page write of a commit: node bytes at a page, zero-padded to whole pages.
    struct Entry {
        var page: UInt64
        var bytes: [UInt8]
    }

    // MARK: Writing (under the writer lock)

    /// False from the log's creation here until its directory has been synced (tried again by every write
    /// until it succeeds: a record in a file whose name is not durable is not durable).
    private var nameSynced = true

    private func openForWriting() throws {
        if fd < 0 {
            let created = access(path, F_OK) != 0
            fd = openRetrying(path, O_RDWR | O_CREAT | O_CLOEXEC)
            if fd < 0 { throw StorageError.io(path: path, operation: "open the commit log", errno: errno) }
            if created { nameSynced = false }
            if directWrites && CommitLog.directFlag != 0 { directFD = openRetrying(path, O_RDWR | O_DSYNC | CommitLog.directFlag | O_CLOEXEC) }
        }
        if !nameSynced {
            try syncDirectory()
            nameSynced = true
        }
    }

    /// `O_DIRECT`, which Swift's Glibc module does not export.
    #if arch(x86_64) || arch(i386)
    static let directFlag: Int32 = 0o40000
    #elseif arch(arm64) || arch(arm)
    static let directFlag: Int32 = 0o200000
    #else
    static let directFlag: Int32 = 0
    #endif

    /// The log grows in steps of this many zero bytes, written ahead of the records: appending then
    /// overwrites blocks the file already has, so syncing a record never has to write the file's size or
    /// allocate blocks (measured: DECISIONS 39). A log that never passes 1 MiB stays that size.
    static let growthStep = 1 << 20
    /// What `preallocate` writes (made once: filling a new megabyte each time cost a tenth of a small commit's
    /// instructions).
    private static let zeros = [UInt8](repeating: 0, count: growthStep)

    /// Bytes the file is known to have (zeros ahead of the records included).
    private var allocated = 0

    /// Makes the file at least `bytes` long, in whole steps of zeros (not `fallocate`: unwritten extents
    /// would still be converted, with the same metadata writes, on first use).
    private func preallocate(_ bytes: Int) throws {
        if bytes <= allocated { return }
        var st = stat()
        if fstat(fd, &st) != 0 { throw StorageError.io(path: path, operation: "fstat the commit log", errno: errno) }
        var size = Int(st.st_size)
        let target = (bytes + CommitLog.growthStep - 1) / CommitLog.growthStep * CommitLog.growthStep
        let grows = size < target
        while size < target {
            let n = min(CommitLog.zeros.count, target - size)
            try CommitLog.zeros.withUnsafeBytes { try writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: size) }
            size += n
        }
        // Synced now, so that a direct write never has to flush cached zeros first (and the file's size and
        // blocks are durable before any record counts on them).
        if grows { try sync() }
        allocated = size
    }

    /// A new file's name is durable once its directory is synced.
    private func syncDirectory() throws {
        try syncParentDirectory(of: path)
    }

    /// The header page, mapped once the file holds it: the header is read before every logged commit, and a
    /// load from the page cache costs nothing where a `pread` cost ~2.5 µs of system time (DECISIONS 51). The
    /// log is never shortened while open (it only grows, in `growthStep`s), so the page stays in the file.
    private var headerPage: UnsafeMutableRawPointer?

    private func readHeader() throws -> Header? {
        if headerPage == nil {
            var st = stat()
            if fstat(fd, &st) != 0 { throw StorageError.io(path: path, operation: "fstat the commit log", errno: errno) }
            if Int(st.st_size) >= CommitLog.headerSize {
                let m = mmap(nil, CommitLog.headerSize, PROT_READ, MAP_SHARED, fd, 0)
                if let m, m != MAP_FAILED { headerPage = m }
            }
        }
        if let headerPage { return Header.decode(UnsafeRawBufferPointer(start: headerPage, count: 56)) }
        var buf = [UInt8](repeating: 0, count: 56)
        let n = try buf.withUnsafeMutableBytes { try readFully(fd, into: $0, at: 0, path: path, operation: "read the commit log") }
        return n >= 40 ? buf.withUnsafeBytes { Header.decode(UnsafeRawBufferPointer(rebasing: $0[0..<n])) } : nil
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        try writeFully(fd, bytes, at: offset, path: path, operation: "write the commit log")
    }

    private func sync() throws {
        try syncData(fd, path: path, operation: "fdatasync the commit log")
    }

    /// Starts generation `generation` at `start`: records of earlier generations no longer count. Every
    /// page they held must be in the synced data file first, and no published meta slot may still name one of
    /// them with records between `start` and where this generation's records will end.
    func reset(logID: UInt64, generation: UInt64, start: UInt64 = UInt64(CommitLog.headerSize), pin: UInt64 = 0) throws {
        try openForWriting()
        try preallocate(CommitLog.headerSize)
        try Header(logID: logID, generation: generation, start: start, pin: pin).encode().withUnsafeBytes { try writeAll($0, at: 0) }
        try sync()
    }

    /// Where the record of the commit after `meta` goes: its generation, offset, and where that generation's
    /// records start. A header that is missing, damaged or another file's is replaced first.
    ///
    /// A generation without records that starts after others (a checkpoint or direct commit left it there,
    /// because readers might still read the records before it) is moved to the front of the log, as a new
    /// generation, once no reader of a version up to the header's pin is left (`oldestReader`): the records
    /// after the header are then overwritten, so the log stays as long as the records between two
    /// checkpoints.
    func appendPosition(after meta: Meta, oldestReader: () -> UInt64?) throws -> (generation: UInt64, offset: UInt64, start: UInt64) {
        try openForWriting()
        let front = UInt64(CommitLog.headerSize)
        guard let h = try readHeader(), h.logID == meta.logID, h.isAligned else {
            // (A log of format 1 only ever held pages the data file has as well: nothing reads it.)
            let g = meta.logGeneration + 1
            try reset(logID: meta.logID, generation: g)
            return (g, front, front)
        }
        if h.generation < meta.logGeneration {
            // The meta slots name a generation the header does not yet: a checkpoint or direct commit made its
            // slots durable and then failed (or died) before it retired the log. Retire it now, as that would
            // have: the generation starts where the slots say, after every record readers may still read.
            let start = meta.logRecordsStart
            try reset(logID: meta.logID, generation: meta.logGeneration, start: start, pin: max(h.pin, meta.version))
            return (meta.logGeneration, max(meta.logEnd, start), start)
        }
        guard h.generation == meta.logGeneration else {
            // A generation after `meta`'s was started; only logs of earlier builds (whose checkpoints retired the
            // log before writing the slots) get here.
            return (h.generation, h.start, h.start)
        }
        let start = meta.logRecordsStart
        if meta.logEnd > start || start == front { return (h.generation, max(meta.logEnd, start), start) }
        if let oldest = oldestReader(), oldest <= h.pin { return (h.generation, start, start) }
        let g = h.generation + 1
        // The pin carries over: it also says which version the data file's slots held when they were last made
        // durable (`Database.checkDamagedSlots`).
        try reset(logID: meta.logID, generation: g, pin: h.pin)
        return (g, front, front)
    }

    /// The generation after the one `meta` names (or the header's, when that moved on): where it starts (after
    /// every record written so far, which readers of versions up to `pin` may still read) and its number.
    /// Nothing is written; `retire` writes it once the data file holds and has synced every logged page.
    func nextGeneration(after meta: Meta) throws -> (generation: UInt64, start: UInt64) {
        try openForWriting()
        let current = try readHeader()
        let same = current?.logID == meta.logID
        let g = max(meta.logGeneration, same ? current!.generation : 0) + 1
        let start = max(UInt64(CommitLog.headerSize), meta.logEnd, same ? current!.start : 0)
        return (g, UInt64(CommitLog.aligned(Int(start))))
    }

    /// Starts the generation `nextGeneration` named. The data file must hold every page logged before and
    /// be synced.
    func retire(logID: UInt64, to next: (generation: UInt64, start: UInt64), pin: UInt64) throws {
        try reset(logID: logID, generation: next.generation, start: next.start, pin: pin)
    }

    /// Bytes of the record of a commit with these page writes, without the padding to the next record.
    static func unpaddedRecordSize(entries: [Entry]) -> Int {
        recordHeaderSize + entries.count * entrySize + Meta.encodedSize + entries.reduce(0) { $0 + $1.bytes.count } + 8
    }

    /// Bytes the record of a commit with these page writes takes in the log, up to where the next one starts.
    static func recordSize(entries: [Entry]) -> UInt64 { UInt64(aligned(unpaddedRecordSize(entries: entries))) }

    /// The record of one commit, built in memory that stays valid as long as `record.block` is held: the writer's
    /// index of the log serves the record's nodes from there (DECISIONS 62). Its entries' node bytes follow
    /// the record header, the entry table and the meta slot, in the entries' order.
    func build(logID: UInt64, generation: UInt64, version: UInt64, meta encodedMeta: [UInt8], entries: [Entry]) -> BuiltRecord {
        precondition(encodedMeta.count == Meta.encodedSize, "a record holds one whole meta slot")
        let unpadded = CommitLog.unpaddedRecordSize(entries: entries)
        let total = CommitLog.aligned(unpadded)
        let headSize = CommitLog.recordHeaderSize + entries.count * CommitLog.entrySize + encodedMeta.count
        if block.map({ $0.room < total }) ?? true { block = RecordBlock.make(atLeast: total) }
        let record = BuiltRecord(block: block!, base: block!.take(total), count: total)
        var at = headSize
        // The header and the checksum are made on the stack; the pieces in record order are the header, each
        // node, the checksum. The nodes' bytes stay where they are while `entries` holds them.
        withUnsafeTemporaryAllocation(byteCount: headSize, alignment: 8) { head in
            var w = FieldWriter(head.baseAddress!)
            w.u32(CommitLog.recordMagic)
            w.u32(UInt32(entries.count))
            w.u64(generation)
            w.u64(version)
            w.u64(UInt64(unpadded))
            // By index: binding each entry retained and released its bytes (`perf`: reference counting in this
            // function was ~1.5 % of a small commit's time).
            for i in entries.indices {
                w.u64(entries[i].page)
                w.u64(UInt64(entries[i].bytes.count))
            }
            encodedMeta.withUnsafeBytes { w.raw($0) }
            precondition(w.written == headSize, "commit log record header size")
            // Each node's bytes are covered by its own checksum, in its header; the record's checksum covers
            // the headers.
            var hash = Hash64Stream(seed: CommitLog.recordSeed(magic: CommitLog.recordMagic, logID: logID, generation: generation))
            hash.update(UnsafeRawBufferPointer(head))
            let pieces = entries.count + 2
            withUnsafeTemporaryAllocation(of: UnsafeRawPointer?.self, capacity: pieces) { sources in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: pieces) { lengths in
                    sources[0] = UnsafeRawPointer(head.baseAddress!)
                    lengths[0] = headSize
                    for i in entries.indices {
                        assert(Self.isWholeNode(entries[i], pageBound: encodedMeta.withUnsafeBytes { $0.u32(at: 8) } > Meta.lastUnboundFormat),
                               "a commit log entry is one whole, sealed node")
                        let node = entries[i].bytes.withUnsafeBytes { $0 }
                        hash.update(UnsafeRawBufferPointer(rebasing: node[0..<nodeHeaderSize]))
                        sources[i + 1] = node.baseAddress
                        lengths[i + 1] = node.count
                        at += node.count
                    }
                    var checksum = hash.finish().littleEndian
                    at += 8
                    // Streaming stores, all pieces in one call: memory the device has read is slow to write
                    // with ordinary stores, and any locked instruction between the pieces (a retain) would wait
                    // for the streamed lines to drain (DECISIONS 54).
                    withUnsafeBytes(of: &checksum) { t in
                        sources[pieces - 1] = t.baseAddress
                        lengths[pieces - 1] = 8
                        storage_gather_nontemporal(record.base, sources.baseAddress!, lengths.baseAddress!, pieces)
                    }
                }
            }
        }
        precondition(at == unpadded, "commit log record size")
        storage_zero_nontemporal(record.base + at, total - at)
        return record
    }

    /// Makes the log long enough for `record` at `offset` (growing it by synced zeros). A failure here (a full
    /// disk) has written nothing of the record: there is nothing to make unreplayable.
    func reserve(_ record: BuiltRecord, at offset: UInt64) throws {
        try preallocate(Int(offset) + record.count)
    }

    /// Writes a record built by `build` at `offset`, reserved by `reserve`, and makes it durable.
    func write(_ record: BuiltRecord, at offset: UInt64) throws {
        try preallocate(Int(offset) + record.count)
        try write(UnsafeRawBufferPointer(start: record.base, count: record.count), at: Int(offset))
    }

    /// Makes the record at `offset` unreplayable after its write failed: the failed write may have reached the
    /// disk whole, and a replay must not bring back a commit that threw. Zeros over its first block, synced.
    func invalidate(at offset: UInt64) throws {
        try openForWriting()
        try CommitLog.zeros.withUnsafeBytes {
            try writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<CommitLog.recordAlignment]), at: Int(offset))
        }
        try sync()
    }

    /// The block records are built in now (a new one when a record does not fit in what is left).
    private var block: RecordBlock?

    /// For tests: the block the next record is built in, if one has been made.
    var currentBlockForTesting: RecordBlock? { block }

    /// For tests: the next record write fails with `EIO`, as a failing disk would, before writing anything.
    var failNextWriteForTesting = false

    /// Writes a whole record durably: one direct, synchronous write where the file system allows it,
    /// otherwise a write and an `fdatasync`.
    private func write(_ record: UnsafeRawBufferPointer, at offset: Int) throws {
        if failNextWriteForTesting {
            failNextWriteForTesting = false
            throw StorageError.io(path: path, operation: "write the commit log", errno: EIO)
        }
        if directFD >= 0 {
            var done = 0
            while done < record.count {
                let n = pwrite(directFD, record.baseAddress! + done, record.count - done, off_t(offset + done))
                if n > 0 && (done + n == record.count || (done + n) % CommitLog.recordAlignment == 0) {
                    done += n
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && errno != EINVAL { throw StorageError.io(path: path, operation: "write the commit log", errno: errno) }
                // Direct I/O refused (or a short write off alignment): the rest goes through the page cache.
                close(directFD)
                directFD = -1
                try writeAll(UnsafeRawBufferPointer(start: record.baseAddress! + done, count: record.count - done), at: offset + done)
                try sync()
                return
            }
            return
        }
        try writeAll(record, at: offset)
        try sync()
    }

    // MARK: Recovery (first opener)

    /// One whole record read back.
    /// The checksum a whole record of `magic` ends with; nil when one of its nodes is not whole (its own
    /// checksum or length does not match its bytes: a torn write).
    /// `pageBound`: the record's meta slot is of format 6, so its nodes' checksums include their pages' terms.
    static func checksum(of b: UnsafeRawBufferPointer, record: Range<Int>, headEnd: Int, entries: [Entry], magic: UInt32,
                         logID: UInt64, generation: UInt64, pageBound: Bool) -> UInt64? {
        if magic == wholeHashRecordMagic {
            return hash64(UnsafeRawBufferPointer(rebasing: b[record.lowerBound..<record.upperBound - 8]), seed: generation)
        }
        var hash = Hash64Stream(seed: recordSeed(magic: magic, logID: logID, generation: generation))
        hash.update(UnsafeRawBufferPointer(rebasing: b[record.lowerBound..<headEnd]))
        for e in entries {
            guard isWholeNode(e, pageBound: pageBound) else { return nil }
            e.bytes.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[0..<nodeHeaderSize])) }
        }
        return hash.finish()
    }

    /// Whether the entry's bytes are one node whose length and checksum fields match them and its page
    /// (`checksumHolds`).
    static func isWholeNode(_ entry: Entry, pageBound: Bool) -> Bool {
        entry.bytes.withUnsafeBytes { b in
            b.count >= nodeHeaderSize && Int(b.u32(at: 4)) == b.count && checksumHolds(b, page: entry.page, pageBound: pageBound)
        }
    }

    struct Record {
        var version: UInt64
        var meta: [UInt8]
        var entries: [Entry]
    }

    /// The header of the log at `path`; nil when there is no log or no whole header.
    static func readHeader(path: String) throws -> Header? {
        let fd = openRetrying(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StorageError.io(path: path, operation: "open the commit log", errno: errno)
        }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 56)
        let n = try buf.withUnsafeMutableBytes { try readFully(fd, into: $0, at: 0, path: path, operation: "read the commit log") }
        return buf.withUnsafeBytes { Header.decode(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    }

    /// The whole records of the header's generation, in order, when the header names `logID`.
    static func readRecords(path: String, logID: UInt64) throws -> (header: Header, records: [Record])? {
        let fd = openRetrying(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StorageError.io(path: path, operation: "open the commit log", errno: errno)
        }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) != 0 { throw StorageError.io(path: path, operation: "fstat", errno: errno) }
        let size = Int(st.st_size)
        guard size >= 40 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let done = try bytes.withUnsafeMutableBytes { try readFully(fd, into: $0, at: 0, path: path, operation: "read the commit log") }
        return bytes.withUnsafeBytes { buf -> (Header, [Record])? in
            let b = UnsafeRawBufferPointer(rebasing: buf[0..<done])
            guard let h = Header.decode(b), h.logID == logID else { return nil }
            var records: [Record] = []
            var o = Int(h.start)
            // Every record of one replay is of the kind the first one is: a log this build took over from
            // another file holds its own records first and, after them, possibly older ones of that file.
            var kind: UInt32?
            while o + recordHeaderSize <= b.count {
                let magic = b.u32(at: o)
                guard isRecordMagic(magic), magic == (kind ?? magic), b.u64(at: o + 8) == h.generation else { break }
                kind = magic
                let count = Int(b.u32(at: o + 4))
                let version = b.u64(at: o + 16)
                let total = b.u64(at: o + 24)
                if let last = records.last, version != last.version + 1 { break }
                guard total <= UInt64(b.count - o), count <= (Int(total) - recordHeaderSize) / entrySize,
                      Int(total) >= recordHeaderSize + count * entrySize + Meta.encodedSize + 8 else { break }
                let end = o + Int(total)
                let headEnd = o + recordHeaderSize + count * entrySize + Meta.encodedSize
                var entries: [Entry] = []
                var at = headEnd
                var ok = true
                for i in 0..<count {
                    let e = o + recordHeaderSize + i * entrySize
                    let page = b.u64(at: e), length = b.u64(at: e + 8)
                    guard length <= UInt64(end - 8 - at), page >= 2, page < Meta.maxPageCount else { ok = false; break }
                    entries.append(Entry(page: page, bytes: Array(b[at..<at + Int(length)])))
                    at += Int(length)
                }
                // The record's meta slot (part of the bytes its checksum covers) says which rule its nodes follow.
                let metaStart = o + recordHeaderSize + count * entrySize
                let pageBound = b.u32(at: metaStart + 8) > Meta.lastUnboundFormat
                guard ok, at == end - 8, Self.checksum(of: b, record: o..<end, headEnd: headEnd, entries: entries, magic: magic,
                                                       logID: h.logID, generation: h.generation,
                                                       pageBound: pageBound) == b.u64(at: end - 8) else { break }
                let meta = Array(b[metaStart..<metaStart + Meta.encodedSize])
                guard case .valid(let m) = meta.withUnsafeBytes({ Meta.decode($0) }), m.version == version else { break }
                records.append(Record(version: version, meta: meta, entries: entries))
                o = h.isAligned ? aligned(end) : end
            }
            return (h, records)
        }
    }
}

extension CommitLog {
    /// Calls `body` with the page, offset and length of every entry of the records of `generation` between
    /// `from` and `to` in the log's bytes `b` (a read of published commits: their records were synced before
    /// their meta slots were written, so nothing is checksummed here). False when the records there do not
    /// line up (a damaged log).
    static func forEachEntry(in b: UnsafeRawBufferPointer, from: Int, to: Int, generation: UInt64,
                             _ body: (_ page: UInt64, _ offset: Int, _ length: Int) -> Void) -> Bool {
        // Only format-2 logs (aligned records) hold pages the data file lacks (`Database.hasLoggedPages`).
        guard from >= headerSize, to <= b.count else { return false }
        var o = from
        while o < to {
            guard o + recordHeaderSize <= to else { return false }
            let magic = b.u32(at: o)
            guard isRecordMagic(magic), b.u64(at: o + 8) == generation else { return false }
            let count = Int(b.u32(at: o + 4))
            let total = b.u64(at: o + 24)
            guard total <= UInt64(to - o), count <= (Int(total) - recordHeaderSize) / entrySize,
                  Int(total) >= recordHeaderSize + count * entrySize + Meta.encodedSize + 8 else { return false }
            let end = o + Int(total)
            var at = o + recordHeaderSize + count * entrySize + Meta.encodedSize
            for i in 0..<count {
                let e = o + recordHeaderSize + i * entrySize
                let page = b.u64(at: e), length = b.u64(at: e + 8)
                guard length <= UInt64(end - 8 - at), length >= UInt64(nodeHeaderSize), page >= 2, page < Meta.maxPageCount else {
                    return false
                }
                body(page, at, Int(length))
                at += Int(length)
            }
            guard at == end - 8 else { return false }
            o = aligned(end)
        }
        return o == to
    }
}

/// A record built by `CommitLog.build`: `count` bytes at `base`, inside `block`.
struct BuiltRecord {
    let block: RecordBlock
    let base: UnsafeMutableRawPointer
    let count: Int
}

/// Memory aligned for direct I/O that commit log records are built in, one after another (DECISIONS 62). The
/// writer's index of a log generation serves the nodes of its own records from here, so a block lives as long
/// as an index holding one of its records; then its memory goes back to a small pool for the records of later
/// generations (memory already mapped: a new buffer per record cost more in page faults than a copy).
final class RecordBlock: @unchecked Sendable {
    // Safe: `used` changes only in `take`, called by the one writer that builds records in the block; the
    // bytes below `used` are never written again while the block lives.
    static let standardSize = 1 << 20
    /// Standard blocks kept for reuse at most: enough for a generation's records (`CommitLog.checkpointBytes`),
    /// with the block a generation starts in and the one it ends in.
    static let poolLimit = Int(CommitLog.checkpointBytes) / standardSize + 2
    private static let pool = Mutex<[UnsafeMutableRawPointer]>([])

    let base: UnsafeMutableRawPointer
    let capacity: Int
    private var used = 0

    private init(base: UnsafeMutableRawPointer, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// A block with room for at least `bytes`: a standard one from the pool when that is enough.
    static func make(atLeast bytes: Int) -> RecordBlock {
        if bytes <= standardSize, let reused = pool.withLock({ $0.popLast() }) {
            return RecordBlock(base: reused, capacity: standardSize)
        }
        let capacity = max(standardSize, CommitLog.aligned(bytes))
        var p: UnsafeMutableRawPointer?
        // The call stays outside the precondition: -Ounchecked builds do not evaluate a precondition's condition.
        let rc = posix_memalign(&p, CommitLog.recordAlignment, capacity)
        guard rc == 0, let p else { fatalError("out of memory: \(capacity) bytes for commit log records") }
        return RecordBlock(base: p, capacity: capacity)
    }

    /// Bytes not yet taken.
    var room: Int { capacity - used }

    /// The next `bytes` (a multiple of the record alignment, at most `room`).
    func take(_ bytes: Int) -> UnsafeMutableRawPointer {
        precondition(bytes <= room && bytes % CommitLog.recordAlignment == 0, "record block overrun")
        defer { used += bytes }
        return base + used
    }

    deinit {
        if capacity == RecordBlock.standardSize {
            let kept = RecordBlock.pool.withLock { pool -> Bool in
                guard pool.count < RecordBlock.poolLimit else { return false }
                pool.append(base)
                return true
            }
            if kept { return }
        }
        free(base)
    }
}
