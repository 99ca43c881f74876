#if canImport(Glibc)
import Glibc
#endif
import Atomics
internal import CStorageSupport

/// The pages of one database: a file (`pwrite` to write, a shared read-only map to read) or anonymous memory.
final class PageStore: @unchecked Sendable {
    // Mutable state (`mapping`, `fileBytes`) is only changed under `stateLock`; readers take the current
    // mapping once per snapshot and keep a strong reference to it.
    let path: String
    let fd: Int32
    let isMemory: Bool
    let readOnly: Bool
    private let stateLock = PthreadMutex()
    private var _mapping: Mapping
    /// Node checksums this process found right, per page (`Mapping.checksumMatches`); nil in memory.
    private let checkedSums: CheckedChecksums?

    static let defaultReservation = 1 << 36  // 64 GiB of address space; pages beyond the file are never touched

    /// Opens a file store. `fd` is owned by the store from here on.
    init(path: String, fd: Int32, readOnly: Bool, cipher: PageCipher? = nil) throws {
        self.path = path
        self.fd = fd
        self.isMemory = false
        self.readOnly = readOnly
        self.cipher = cipher
        let size = try PageStore.fileSize(fd: fd, path: path)
        checkedSums = try CheckedChecksums(pages: (cipher != nil ? PageStore.encryptedReservation : PageStore.defaultReservation) / pageSize,
                                           path: path)
        if cipher != nil {
            let file = try PageStore.mapFile(fd: fd, path: path, length: max(PageStore.defaultReservation, size * 2))
            cipherMappings = [file]
            cipherBase = UnsafeRawPointer(file.base)
            cipherLength = file.length
            physicalBytes = size
            readableBase.store(Int(bitPattern: file.base), ordering: .releasing)
            readableBytes.store(min(size, file.length), ordering: .releasing)
            _mapping = try PageStore.mapAnonymous(length: PageStore.encryptedReservation, path: path, checkedSums: checkedSums)
            nonceTable = try PageStore.mapAnonymous(length: PageStore.encryptedReservation / pageSize * 16, path: path)
            nonceBase = nonceTable?.base
            knownBytes = Int(EncryptedLayout.logicalPages(physicalBytes: size)) * pageSize
            _mapping.encryptedStore = self
        } else {
            _mapping = try PageStore.mapFile(fd: fd, path: path, length: max(PageStore.defaultReservation, size * 2),
                                             checkedSums: checkedSums)
            knownBytes = size
        }
    }

    // MARK: Encryption (nil / unused for plain files)

    let cipher: PageCipher?
    /// The ciphertext file mapped read-only; replaced (the old ones kept mapped) when the file outgrows it.
    private var cipherMappings: [Mapping] = []
    private var cipherBase: UnsafeRawPointer?
    private var cipherLength = 0
    /// Physical bytes of the file known to exist (reads past them would fault).
    private var physicalBytes = 0
    /// What the read path may touch without a lock: the current ciphertext map's base address and the bytes
    /// both in the file and in that map (published after the map they describe; old maps are never unmapped).
    private let readableBase = ManagedAtomic<Int>(0)
    private let readableBytes = ManagedAtomic<Int>(0)

    /// Publishes the ciphertext map and size the lock-free read path uses (under `stateLock`).
    private func publishReadable() {
        readableBase.store(Int(bitPattern: cipherBase), ordering: .releasing)
        readableBytes.store(min(physicalBytes, cipherLength), ordering: .releasing)
    }
    /// Per logical page: the nonce of the ciphertext decrypted into the mirror (12 bytes) and a valid flag.
    private var nonceTable: Mapping?
    /// `nonceTable.base`, for the per-page check on every node read (no retain of the mapping there).
    private var nonceBase: UnsafeMutableRawPointer?
    private let decryptLock = PthreadMutex()
    /// Address space of the plaintext mirror (256 GiB; pages are only backed once read).
    static let encryptedReservation = 1 << 38

    var isEncrypted: Bool { cipher != nil }

    /// Writes the encryption header (physical page 0) of a new encrypted file.
    func writeEncryptionHeader() throws {
        guard let c = cipher else { return }
        let bytes = EncryptionHeader(salt: c.salt, keyCheck: c.keyCheck).encode()
        try bytes.withUnsafeBytes { try pwriteAll($0, at: 0, operation: "write the encryption header") }
        stateLock.withLock {
            physicalBytes = max(physicalBytes, pageSize)
            publishReadable()
        }
    }

    private func pwriteAll(_ bytes: UnsafeRawBufferPointer, at offset: Int, operation: String = "write") throws {
        try writeFully(fd, bytes, at: offset, path: path, operation: operation)
    }

    /// Whether the physical page lies inside the file (asking the OS only when not already known).
    private func physicallyPresent(_ physicalPage: UInt64) -> Bool {
        let end = Int(physicalPage + 1) * pageSize
        if end <= readableBytes.load(ordering: .acquiring) { return true }
        // False makes the caller throw `corrupt` for the page (never an empty page), whichever call failed here.
        guard let size = try? PageStore.fileSize(fd: fd, path: path) else { return false }  // see above
        return (try? stateLock.withLock {  // see above
            physicalBytes = max(physicalBytes, size)
            if size > cipherLength {
                let file = try PageStore.mapFile(fd: fd, path: path, length: max(PageStore.defaultReservation, size * 2))
                cipherMappings.append(file)
                cipherBase = UnsafeRawPointer(file.base)
                cipherLength = file.length
            }
            publishReadable()
            return end <= min(physicalBytes, cipherLength)
        }) ?? false
    }

    /// The ciphertext map for lock-free reads.
    private var readBase: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: readableBase.load(ordering: .acquiring)) }

    /// Decrypts logical page `p` into the mirror unless the mirror already holds the ciphertext now in the
    /// file (same nonce). False when the page fails authentication (or is not in the file).
    ///
    /// `alwaysCheck`: compare with the file's nonce even when confirmed in this epoch (the meta slots, which
    /// every commit rewrites and which are read to find out whether another process committed at all).
    private func materialize(_ p: UInt64, alwaysCheck: Bool = false) -> Bool {
        guard let table = nonceBase else { return true }
        guard Int(p + 1) * pageSize <= PageStore.encryptedReservation else { return false }
        let slot = table + Int(p) * 16
        // Confirmed since the last commit of another process: nothing can have changed the page (and it was
        // in the file then; an open file never shrinks). The common case, checked before anything else.
        let now = epoch.load(ordering: .acquiring)
        let seen = slot.load(fromByteOffset: 12, as: UInt32.self)
        if seen == now && !alwaysCheck { return true }
        return materializeSlow(p, slot: slot, seen: seen, now: now)
    }

    private func materializeSlow(_ p: UInt64, slot: UnsafeMutableRawPointer, seen: UInt32, now: UInt32) -> Bool {
        guard let cipher else { return true }
        let phys = EncryptedLayout.physical(p), metaPhys = EncryptedLayout.metadataPage(p)
        guard physicallyPresent(phys), let base = readBase else { return false }
        let entry = base + Int(metaPhys) * pageSize + EncryptedLayout.entryOffset(p)
        if seen != 0 && memcmp(slot, entry, 12) == 0 {
            slot.storeBytes(of: now, toByteOffset: 12, as: UInt32.self)
            return true
        }
        return decryptLock.withLock {
            if slot.load(fromByteOffset: 12, as: UInt32.self) != 0 && memcmp(slot, entry, 12) == 0 {
                slot.storeBytes(of: now, toByteOffset: 12, as: UInt32.self)
                return true
            }
            var nonce = [UInt8](repeating: 0, count: 12)
            nonce.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: entry, count: 12)) }
            let ok = nonce.withUnsafeBytes { n in
                cipher.open(UnsafeRawBufferPointer(start: base + Int(phys) * pageSize, count: pageSize), nonce: n,
                            tag: UnsafeRawBufferPointer(start: entry + 12, count: 16), logicalPage: p,
                            into: UnsafeMutableRawBufferPointer(start: _mapping.base + Int(p) * pageSize, count: pageSize))
            }
            guard ok else { return false }
            nonce.withUnsafeBytes { slot.copyMemory(from: $0.baseAddress!, byteCount: 12) }
            slot.storeBytes(of: now, toByteOffset: 12, as: UInt32.self)
            mirroredPages.wrappingIncrement(ordering: .relaxed)
            return true
        }
    }

    /// Pages put into the mirror since it was last trimmed (decrypted or written; approximate).
    private let mirroredPages = ManagedAtomic<Int>(0)

    /// Bytes of plaintext the mirror holds (about), for `Database.decryptedBytes`.
    var mirroredBytes: Int { mirroredPages.load(ordering: .relaxed) * pageSize }

    /// Gives the mirror's memory back: every page is decrypted again on its next read. Only while nothing
    /// in this process reads the database (`Database.trimDecryptedPages` checks what it can).
    func trimMirror() {
        guard cipher != nil, let table = nonceTable else { return }
        decryptLock.withLock {
            let pages = min(stateLock.withLock { knownBytes } / pageSize + 1, PageStore.encryptedReservation / pageSize)
            madvise(_mapping.base, pages * pageSize, MADV_DONTNEED)
            madvise(table.base, (pages * 16 + pageSize - 1) / pageSize * pageSize, MADV_DONTNEED)
            mirroredPages.store(0, ordering: .relaxed)
        }
    }

    /// `trimMirror` keeping logical pages `pinned` decrypted (their plaintext and nonce entries are put back
    /// after the rest is given up): the nodes a walk still reads in place.
    func trimMirror(keeping pinned: [UInt64]) {
        guard cipher != nil, let table = nonceTable else { return }
        decryptLock.withLock {
            let pages = min(stateLock.withLock { knownBytes } / pageSize + 1, PageStore.encryptedReservation / pageSize)
            let kept = Set(pinned).filter { Int($0) < pages }
            var saved: [(UInt64, [UInt8], [UInt8])] = []
            for p in kept {
                let plain = UnsafeRawBufferPointer(start: _mapping.base + Int(p) * pageSize, count: pageSize)
                let entry = UnsafeRawBufferPointer(start: table.base + Int(p) * 16, count: 16)
                saved.append((p, Array(plain), Array(entry)))
            }
            madvise(_mapping.base, pages * pageSize, MADV_DONTNEED)
            madvise(table.base, (pages * 16 + pageSize - 1) / pageSize * pageSize, MADV_DONTNEED)
            for (p, plain, entry) in saved {
                plain.withUnsafeBytes { (_mapping.base + Int(p) * pageSize).copyMemory(from: $0.baseAddress!, byteCount: pageSize) }
                entry.withUnsafeBytes { (table.base + Int(p) * 16).copyMemory(from: $0.baseAddress!, byteCount: 16) }
            }
            mirroredPages.store(saved.count, ordering: .relaxed)
        }
    }

    /// Bumped whenever a version this process did not commit is seen: pages confirmed under an older epoch
    /// are checked against the file's nonces again on their next read (another process may have reused them).
    private let epoch = ManagedAtomic<UInt32>(1)
    private let lastVersion = ManagedAtomic<UInt64>(0)

    /// The newest version was read from the meta slots.
    func observe(version: UInt64) {
        guard cipher != nil else { return }
        let last = lastVersion.load(ordering: .acquiring)
        if version != last {
            lastVersion.store(version, ordering: .releasing)
            if last != 0 {
                var next = epoch.load(ordering: .relaxed) &+ 1
                if next == 0 { next = 1 }
                epoch.store(next, ordering: .releasing)
            }
        }
    }

    /// This process committed `version` (its pages are in the mirror already).
    func committed(version: UInt64) {
        guard cipher != nil else { return }
        lastVersion.store(version, ordering: .releasing)
    }

    /// `Mapping.materializeNode`: the node's first page (for its length), then the rest.
    func materializeNode(_ ref: UInt64, limit: UInt64) throws {
        func fail(_ p: UInt64) -> StorageError {
            StorageError.corrupt(path: path, location: "page \(p)", reason: "fails authentication (wrong key, damage or a torn write)")
        }
        guard ref < limit else { return }   // the caller reports references outside the version
        guard materialize(ref) else { throw fail(ref) }
        let length = Int(UInt32(littleEndian: UnsafeRawPointer(_mapping.base + Int(ref) * pageSize).loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        let pages = UInt64(max(1, pagesFor(bytes: length)))
        guard pages > 1, let table = nonceBase else { return }
        let now = epoch.load(ordering: .acquiring)
        var p = ref + 1
        while p < ref + pages && p < limit {
            // As `materialize`, with the epoch read once for the node.
            guard Int(p + 1) * pageSize <= PageStore.encryptedReservation else { throw fail(p) }
            let slot = table + Int(p) * 16
            let seen = slot.load(fromByteOffset: 12, as: UInt32.self)
            if seen != now { guard materializeSlow(p, slot: slot, seen: seen, now: now) else { throw fail(p) } }
            p += 1
        }
    }

    /// Both meta slots: one that fails authentication reads as zeros (as a torn slot would read as damaged).
    func materializeMetaSlots() {
        for p: UInt64 in 0..<2 where !materialize(p, alwaysCheck: true) {
            decryptLock.withLock { _ = memset(_mapping.base + Int(p) * pageSize, 0, pageSize) }
        }
    }

    /// Encrypts and writes whole logical pages starting at `page`; the plaintext goes to the mirror too.
    private func writeEncrypted(_ plain: UnsafeRawBufferPointer, atPage page: UInt64) throws {
        guard let cipher, let table = nonceTable else { return }
        let count = UInt64(plain.count / pageSize)
        guard Int(page + count) * pageSize <= PageStore.encryptedReservation else {
            throw StorageError.io(path: path, operation: "grow the encrypted file past 256 GiB", errno: EFBIG)
        }
        var p = page
        while p < page + count {
            // One group at a time: its run of ciphertext pages, then its metadata page.
            let groupEnd = min(page + count, (p / EncryptedLayout.group + 1) * EncryptedLayout.group)
            let metaPhys = EncryptedLayout.metadataPage(p)
            var meta = [UInt8](repeating: 0, count: pageSize)
            if physicallyPresent(metaPhys), let base = readBase {
                meta.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + Int(metaPhys) * pageSize, count: pageSize)) }
            }
            var run: [UInt8] = []
            run.reserveCapacity(Int(groupEnd - p) * pageSize)
            var nonces: [(UInt64, [UInt8])] = []
            for q in p..<groupEnd {
                let src = UnsafeRawBufferPointer(rebasing: plain[Int(q - page) * pageSize..<Int(q - page + 1) * pageSize])
                let sealed = try cipher.seal(src, logicalPage: q)
                run.append(contentsOf: sealed.ciphertext)
                let at = EncryptedLayout.entryOffset(q)
                meta.replaceSubrange(at..<at + 12, with: sealed.nonce)
                meta.replaceSubrange(at + 12..<at + 28, with: sealed.tag)
                nonces.append((q, sealed.nonce))
            }
            try run.withUnsafeBytes { try pwriteAll($0, at: Int(EncryptedLayout.physical(p)) * pageSize) }
            try meta.withUnsafeBytes { try pwriteAll($0, at: Int(metaPhys) * pageSize) }
            // The mirror and the nonce table: this process reads what it wrote without decrypting it.
            decryptLock.withLock {
                for (q, nonce) in nonces {
                    (_mapping.base + Int(q) * pageSize).copyMemory(from: plain.baseAddress! + Int(q - page) * pageSize, byteCount: pageSize)
                    let slot = table.base + Int(q) * 16
                    nonce.withUnsafeBytes { slot.copyMemory(from: $0.baseAddress!, byteCount: 12) }
                    slot.storeBytes(of: epoch.load(ordering: .acquiring), toByteOffset: 12, as: UInt32.self)
                }
                mirroredPages.wrappingIncrement(by: nonces.count, ordering: .relaxed)
            }
            let end = Int(EncryptedLayout.physical(groupEnd - 1) + 1) * pageSize
            stateLock.withLock {
                physicalBytes = max(physicalBytes, end)
                knownBytes = max(knownBytes, Int(groupEnd) * pageSize)
                publishReadable()
            }
            _ = physicallyPresent(EncryptedLayout.physical(groupEnd - 1))   // remaps when the file outgrew the map
            p = groupEnd
        }
    }

    /// Creates an empty in-memory store.
    init(memoryNamed name: String) throws {
        self.path = name
        self.fd = -1
        self.isMemory = true
        self.readOnly = false
        self.cipher = nil
        checkedSums = nil
        _mapping = try PageStore.mapAnonymous(length: PageStore.defaultReservation, path: name)
    }

    deinit { if fd >= 0 { close(fd) } }

    var mapping: Mapping { stateLock.withLock { _mapping } }

    /// Bytes in the file (or in use in memory), as the OS reports it for files.
    private var memoryBytes = 0
    func currentSize() throws -> Int {
        if isMemory { return stateLock.withLock { memoryBytes } }
        var size = try PageStore.fileSize(fd: fd, path: path)
        if cipher != nil {
            stateLock.withLock {
                physicalBytes = max(physicalBytes, size)
                publishReadable()
            }
            size = Int(EncryptedLayout.logicalPages(physicalBytes: size)) * pageSize
        }
        stateLock.withLock { knownBytes = max(knownBytes, size) }
        return size
    }

    /// Bytes the file is known to hold: its size at the last `fstat`, or more after this process's writes.
    /// A database file only grows while it is open (compaction makes a new store), so a version whose pages
    /// lie below this needs no `fstat` to rule out truncation. Asking costs more than the call: on Linux an
    /// `fstat` marks the file's timestamps as seen, so the next write stamps a fine-grained time and dirties
    /// the inode, which the commit's `fdatasync` must then write as well (DECISIONS 17).
    private var knownBytes = 0

    /// Whether the file holds at least `bytes` bytes; `fstat` only when that is not already known.
    func holds(bytes: Int) throws -> (Bool, size: Int) {
        let known = stateLock.withLock { isMemory ? memoryBytes : knownBytes }
        if bytes <= known { return (true, known) }
        let size = try currentSize()
        return (bytes <= size, size)
    }

    /// Makes sure the mapping covers `bytes` bytes (after the file grew).
    func ensureMapped(bytes: Int) throws {
        try stateLock.withLock {
            if !isMemory { knownBytes = max(knownBytes, bytes) }
            if bytes <= _mapping.length { return }
            if cipher != nil {
                throw StorageError.io(path: path, operation: "grow the encrypted file past 256 GiB", errno: EFBIG)
            }
            let newLength = max(bytes * 2, _mapping.length * 2)
            if isMemory {
                let m = try PageStore.mapAnonymous(length: newLength, path: path)
                m.base.copyMemory(from: _mapping.base, byteCount: memoryBytes)
                _mapping = m
            } else {
                _mapping = try PageStore.mapFile(fd: fd, path: path, length: newLength, checkedSums: checkedSums)
            }
        }
    }

    /// Writes `bytes` at page `page`. Pages written must not be reachable from any published version.
    func write(_ bytes: UnsafeRawBufferPointer, atPage page: UInt64) throws {
        let offset = Int(page) * pageSize
        if cipher != nil {
            if bytes.count % pageSize == 0 {
                try writeEncrypted(bytes, atPage: page)
            } else {
                var padded = [UInt8](bytes)
                padded.append(contentsOf: repeatElement(0, count: pagesFor(bytes: bytes.count) * pageSize - bytes.count))
                try padded.withUnsafeBytes { try writeEncrypted($0, atPage: page) }
            }
            return
        }
        if isMemory {
            try ensureMapped(bytes: offset + bytes.count)
            stateLock.withLock {
                _mapping.base.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                memoryBytes = max(memoryBytes, offset + bytes.count)
            }
            return
        }
        try writeFully(fd, bytes, at: offset, path: path, operation: "write")
        try ensureMapped(bytes: offset + bytes.count)
    }

    /// Makes a plain file at least `pages` pages long (the pages past its end read as zeros): a logged commit
    /// leaves its pages out of the data file (DECISIONS 53), but the file still covers every page of every
    /// published version, so that a shorter one is known to be cut short.
    ///
    /// The pages it adds are holes, and stay so until a checkpoint writes them: nothing reads them through the
    /// map before that (readers find them in the log). That matters on tmpfs, where even a read of a hole
    /// through a map needs a page, and raises SIGBUS when the file system is full.
    func extend(toPages pages: UInt64) throws {
        let bytes = Int(pages) * pageSize
        if isMemory || cipher != nil || stateLock.withLock({ knownBytes }) >= bytes { return }
        if try PageStore.fileSize(fd: fd, path: path) < bytes {
            try setFileSize(fd, to: bytes, path: path, operation: "extend the file")
        }
        try ensureMapped(bytes: bytes)
    }

    /// Writes one node at `page`, padded with zeros to whole pages (one `pwritev`).
    func writePadded(_ node: UnsafeRawBufferPointer, atPage page: UInt64) throws {
        let pad = pagesFor(bytes: node.count) * pageSize - node.count
        if cipher != nil || isMemory || pad == 0 {
            if pad == 0 { return try write(node, atPage: page) }
            var padded = [UInt8](node)
            padded.append(contentsOf: repeatElement(0, count: pad))
            return try padded.withUnsafeBytes { try write($0, atPage: page) }
        }
        try writePadded(sorted: [(page, node)])
    }

    /// Writes nodes at their pages, each padded with zeros to whole pages, given sorted by page and none
    /// overlapping another: each run of nodes on consecutive pages in one `pwritev` (a checkpoint's ~110 nodes
    /// of single commits fell in ~20 runs; one call per node cost ~2 µs each).
    func writePadded(sorted nodes: [(page: UInt64, node: UnsafeRawBufferPointer)]) throws {
        if cipher != nil || isMemory {
            for n in nodes { try writePadded(n.node, atPage: n.page) }
            return
        }
        var end: UInt64 = 0
        try PageStore.zeroPage.withUnsafeBytes { z in
            var vecs: [iovec] = []
            vecs.reserveCapacity(min(2 * nodes.count, 1024))
            var start: UInt64 = 0
            func flush() throws {
                if vecs.isEmpty { return }
                try writeVectorsFully(fd, &vecs, at: Int(start) * pageSize, path: path, operation: "write")
                vecs.removeAll(keepingCapacity: true)
            }
            for (page, node) in nodes {
                precondition(page >= end, "writePadded(sorted:): nodes out of order or overlapping")
                if page != end || vecs.count >= 1022 {
                    try flush()
                    start = page
                }
                let pages = pagesFor(bytes: node.count)
                vecs.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: node.baseAddress), iov_len: node.count))
                let pad = pages * pageSize - node.count
                if pad > 0 { vecs.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: z.baseAddress), iov_len: pad)) }
                end = page + UInt64(pages)
            }
            try flush()
        }
        if end > 0 { try ensureMapped(bytes: Int(end) * pageSize) }
    }

    /// Writes nodes to consecutive pages starting at `page`, each padded with zeros to whole pages, in one
    /// `pwritev` per batch of buffers (no copying into a staging buffer).
    func write(pages chunks: [[UInt8]], atPage page: UInt64) throws {
        if cipher != nil {
            var all: [UInt8] = []
            all.reserveCapacity(chunks.reduce(0) { $0 + pagesFor(bytes: $1.count) * pageSize })
            for c in chunks {
                all.append(contentsOf: c)
                all.append(contentsOf: repeatElement(0, count: pagesFor(bytes: c.count) * pageSize - c.count))
            }
            try all.withUnsafeBytes { try writeEncrypted($0, atPage: page) }
            return
        }
        if isMemory {
            var p = page
            for c in chunks {
                let pages = pagesFor(bytes: c.count)
                var padded = c
                padded.append(contentsOf: repeatElement(0, count: pages * pageSize - c.count))
                try padded.withUnsafeBytes { try write($0, atPage: p) }
                p += UInt64(pages)
            }
            return
        }
        let zeros = PageStore.zeroPage
        var offset = Int(page) * pageSize
        var index = 0
        while index < chunks.count {
            // At most IOV_MAX/2 chunks per call (each may need a padding vector).
            let batch = chunks[index..<min(chunks.count, index + 500)]
            var total = 0
            var keep: [[UInt8]] = []
            for c in batch {
                keep.append(c)
                let pad = pagesFor(bytes: c.count) * pageSize - c.count
                total += c.count + pad
            }
            try withIOVecs(keep, zeros: zeros) { vecs in
                var vecs = vecs
                try writeVectorsFully(fd, &vecs, at: offset, path: path, operation: "write")
            }
            offset += total
            index += batch.count
        }
        try ensureMapped(bytes: offset)
    }

    private static let zeroPage = [UInt8](repeating: 0, count: pageSize)

    /// Builds iovecs over the chunks (and padding from `zeros`) valid for the duration of `body`.
    private func withIOVecs(_ chunks: [[UInt8]], zeros: [UInt8], _ body: ([iovec]) throws -> Void) throws {
        var vecs: [iovec] = []
        func build(_ i: Int) throws {
            if i == chunks.count { try body(vecs); return }
            try chunks[i].withUnsafeBytes { buf in
                try zeros.withUnsafeBytes { z in
                    let pad = pagesFor(bytes: buf.count) * pageSize - buf.count
                    vecs.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: buf.baseAddress), iov_len: buf.count))
                    if pad > 0 { vecs.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: z.baseAddress), iov_len: pad)) }
                    try build(i + 1)
                }
            }
        }
        try build(0)
    }

    /// Flushes written data to stable storage (one `fdatasync`).
    func sync() throws {
        if isMemory { return }
        try syncData(fd, path: path, operation: "fdatasync")
    }

    func truncate(toPages pages: UInt64) throws {
        if isMemory { stateLock.withLock { memoryBytes = min(memoryBytes, Int(pages) * pageSize) }; return }
        let bytes = cipher != nil ? Int(EncryptedLayout.physicalPages(logical: pages)) * pageSize : Int(pages) * pageSize
        try setFileSize(fd, to: bytes, path: path, operation: "ftruncate")
        stateLock.withLock {
            knownBytes = Int(pages) * pageSize
            if cipher != nil {
                physicalBytes = bytes
                publishReadable()
            }
        }
    }

    /// Gives a new, empty file blocks for its first `pages` pages (its header pages) without making it longer:
    /// a page of them that is never written (slot A of a new file) then reads as zeros through the map on a
    /// full file system too, where tmpfs would raise SIGBUS for a hole, and a full disk is an error here. File
    /// systems that cannot reserve blocks are left as they are (reading a hole costs them no block).
    func reserveBlocks(pages: UInt64) throws {
        if isMemory { return }
        let bytes = cipher != nil ? Int(EncryptedLayout.physicalPages(logical: pages)) * pageSize : Int(pages) * pageSize
        let err = storage_reserve_blocks(fd, Int64(bytes))
        if err == 0 || err == EOPNOTSUPP || err == ENOSYS { return }
        throw StorageError.io(path: path, operation: "reserve space for the new file", errno: err)
    }

    static func fileSize(fd: Int32, path: String) throws -> Int {
        var st = stat()
        if fstat(fd, &st) != 0 { throw StorageError.io(path: path, operation: "fstat", errno: errno) }
        return Int(st.st_size)
    }

    private static func mapFile(fd: Int32, path: String, length: Int, checkedSums: CheckedChecksums? = nil) throws -> Mapping {
        guard let p = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            throw StorageError.io(path: path, operation: "mmap", errno: errno)
        }
        return Mapping(base: p, length: length, checkedSums: checkedSums)
    }

    static func mapAnonymous(length: Int, path: String, checkedSums: CheckedChecksums? = nil) throws -> Mapping {
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
              p != MAP_FAILED else {
            throw StorageError.io(path: path, operation: "mmap", errno: errno)
        }
        return Mapping(base: p, length: length, checkedSums: checkedSums)
    }
}

/// A small pthread mutex wrapper usable from any thread (`Synchronization.Mutex` needs non-copyable plumbing).
final class PthreadMutex: @unchecked Sendable {
    // Safe: the pthread mutex itself provides the synchronisation; the pointer is never shared otherwise.
    private let m: UnsafeMutablePointer<pthread_mutex_t>

    /// A recursive mutex may be locked again by the thread that holds it.
    init(recursive: Bool = false) {
        m = .allocate(capacity: 1)
        if recursive {
            var attr = pthread_mutexattr_t()
            pthread_mutexattr_init(&attr)
            pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_RECURSIVE))
            pthread_mutex_init(m, &attr)
            pthread_mutexattr_destroy(&attr)
        } else {
            pthread_mutex_init(m, nil)
        }
    }

    deinit {
        pthread_mutex_destroy(m)
        m.deallocate()
    }

    func lock() { pthread_mutex_lock(m) }
    func unlock() { pthread_mutex_unlock(m) }
    /// Locks when free; false at once when another thread holds it.
    func tryLock() -> Bool { pthread_mutex_trylock(m) == 0 }

    @inline(__always) func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return try body()
    }
}
