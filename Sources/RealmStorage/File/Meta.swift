/// One of the two meta slots (pages 0 and 1): the root of one committed version.
struct Meta: Equatable {
    static let magic: [UInt8] = [0x52, 0x42, 0x44, 0x42, 0x00, 0x0D, 0x0A, 0x1A]
    /// 2 added the commit log fields; files of format 1 read as having no log. 3 moved backlinks from the
    /// target's clusters into trees of their own (DECISIONS 50): a file of format 1 or 2 with backlinks is
    /// upgraded when opened writable (`Database.upgradeBacklinks`). 4: a logged commit's pages may be only in
    /// the commit log until a checkpoint (`logStart`, DECISIONS 53); a build that reads format 3 would miss them.
    /// 5: commit log records carry the log's identity ("RRC3"), which a build reading format 4 would not replay.
    /// 6: a node's checksum field includes the term of its page (`pageChecksumTerm`, DECISIONS 73), which a
    /// build reading format 5 would take for damage everywhere. 7: sets, dictionaries, embedded classes, typed
    /// links and nested collections in mixed values (property flags 0x40 and 0x80, class flag 1, mixed tags 12,
    /// 16 and 17), which a build reading format 6 would misread; a format-6 file is valid format 7, so its first
    /// commit by this build writes 7. 8: string columns of clusters may be in dictionary form (null header byte 1,
    /// `StringDictionary`, DECISIONS 105), which a build reading format 7 would take for damage; a format-7 file
    /// is valid format 8, so its first commit by this build writes 8. 9: index leaves may be prefix leaves (node
    /// flags byte 1, DECISIONS 109), which a build reading format 8 would take for damage; a format-8 file is
    /// valid format 9, so its first commit by this build writes 9.
    static let formatVersion: UInt32 = 9
    /// The newest format whose nodes' checksums are not bound to their pages. A file of this format or older
    /// is upgraded (compacted into a file of `formatVersion`) when opened writable by the only process that has
    /// it open; until then every commit to it keeps to this format (`Database.upgradeNodeChecksumsIfNeeded`).
    static let lastUnboundFormat: UInt32 = 5
    static let encodedSize = 128
    /// Largest page count a slot may claim (4 PiB): keeps `pageCount * pageSize` and the like from overflowing.
    static let maxPageCount: UInt64 = 1 << 40
    /// Largest commit log offset a slot may name (256 TiB): log offsets are used as `Int` byte counts.
    static let maxLogBytes: UInt64 = 1 << 48

    var version: UInt64
    var catalogueRef: UInt64
    var freeListRef: UInt64
    var commitLogRef: UInt64
    var pageCount: UInt64
    var flags: UInt64 = 0
    /// Names this data file to its commit log (`<path>.log`): a random nonzero value chosen when the file is
    /// made; 0 when it has no log (encrypted and in-memory databases, files from format 1).
    var logID: UInt64 = 0
    /// The log generation and the end of its records after this commit (see `CommitLog`).
    var logGeneration: UInt64 = 0
    var logEnd: UInt64 = 0
    /// Where the records of `logGeneration` begin in the log (format 4; 0 in older slots, read as the first
    /// byte after the log's header). Pages a record of the generation wrote, between here and `logEnd`, may
    /// be only in the log (DECISIONS 53).
    var logStart: UInt64 = 0
    /// The format of the file when the slot was written. `encode` writes `formatVersion` for a version whose
    /// nodes are bound to their pages, `lastUnboundFormat` for any other: a commit to a file not yet upgraded
    /// carries its format on (`WriteTransaction.commit`).
    var format: UInt32 = Meta.formatVersion

    /// Whether the nodes of this version hold checksums bound to their pages (format 6 on).
    var hasPageBoundChecksums: Bool { format > Meta.lastUnboundFormat }

    /// The format `encode` writes for this version.
    var encodedFormat: UInt32 { hasPageBoundChecksums ? Meta.formatVersion : Meta.lastUnboundFormat }

    /// Where the records of `logGeneration` begin (`logStart`, or right after the log's header when 0).
    var logRecordsStart: UInt64 { max(logStart, UInt64(CommitLog.headerSize)) }

    /// This slot naming log generation `generation`, without records, starting at `start` (the data file holds
    /// every page of the version: after a checkpoint, a replay or a direct commit).
    func naming(emptyGeneration generation: UInt64, at start: UInt64) -> Meta {
        var m = self
        m.logGeneration = generation
        m.logStart = start
        m.logEnd = start
        return m
    }

    /// The slot's `encodedSize` bytes; the rest of its page stays zero (a commit writes only these, DECISIONS 47).
    /// In `buffer`'s storage when it has room: a commit passes its writer's last encoded meta, whose new array
    /// each commit had cost an allocation and the runtime's lookup of the array type's metadata (DECISIONS 64).
    func encode(reusing buffer: consuming [UInt8] = []) -> [UInt8] {
        // Stored field by field into an array of the exact size (a growing writer cost a third of this).
        func fill(_ raw: UnsafeMutableRawBufferPointer) {
            raw.initializeMemory(as: UInt8.self, repeating: 0)
            var w = FieldWriter(raw.baseAddress!)
            for b in Meta.magic { w.u8(b) }
            w.u32(encodedFormat)
            w.u32(UInt32(pageSize))
            w.u64(version)
            w.u64(catalogueRef)
            w.u64(freeListRef)
            w.u64(commitLogRef)
            w.u64(pageCount)
            w.u64(flags)
            w.u64(logID)
            w.u64(logGeneration)
            w.u64(logEnd)
            w.u64(logStart)
            let sum = hash64(UnsafeRawBufferPointer(rebasing: raw[0..<120]))
            raw.storeBytes(of: sum.littleEndian, toByteOffset: 120, as: UInt64.self)
        }
        return [UInt8].filled(count: Meta.encodedSize, reusing: consume buffer, fill)
    }

    enum Decoded {
        case valid(Meta)
        case foreign        // not our magic
        case newer(UInt32)  // our magic, a format this build does not read
        case damaged        // our magic, bad checksum or impossible fields

        /// A valid slot, or one of a newer format (reported as such): anything but damage or a foreign page.
        static func isUsable(_ d: Decoded) -> Bool {
            switch d {
            case .valid, .newer: return true
            case .foreign, .damaged: return false
            }
        }
    }

    static func decode(_ page: UnsafeRawBufferPointer) -> Decoded {
        guard page.count >= encodedSize else { return .foreign }
        if !zip(page[0..<8], magic).allSatisfy({ $0 == $1 }) { return .foreign }
        let format = page.u32(at: 8)
        if format > formatVersion { return .newer(format) }
        if format < 1 { return .damaged }
        if hash64(UnsafeRawBufferPointer(rebasing: page[0..<120])) != page.u64(at: 120) { return .damaged }
        if page.u32(at: 12) != UInt32(pageSize) { return .damaged }
        let m = Meta(version: page.u64(at: 16), catalogueRef: page.u64(at: 24), freeListRef: page.u64(at: 32),
                     commitLogRef: page.u64(at: 40), pageCount: page.u64(at: 48), flags: page.u64(at: 56),
                     logID: page.u64(at: 64), logGeneration: page.u64(at: 72), logEnd: page.u64(at: 80),
                     logStart: format >= 4 ? page.u64(at: 88) : 0, format: format)
        if m.pageCount < 2 || m.pageCount > maxPageCount || m.catalogueRef >= m.pageCount || m.freeListRef >= m.pageCount
            || m.commitLogRef >= m.pageCount || m.logStart > m.logEnd || m.logEnd > maxLogBytes { return .damaged }
        return .valid(m)
    }
}
