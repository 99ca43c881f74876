#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Atomics
internal import CStorageSupport

/// `close(2)`, callable from inside `LockFile`, whose own `close()` shadows it there.
private func closeDescriptor(_ fd: Int32) { _ = close(fd) }

/// The lock file beside a database (`NAME.realm.lock`, layout in docs/FILE_FORMAT.md, "Lock file"):
/// who has the database open (shared `flock`), who writes (`fcntl` lock on byte 0 plus an in-process lock),
/// and which versions live readers still use (the reader table, memory-mapped by every process).
///
/// The `fcntl` lock is a lease (DECISIONS 55): a process keeps it between its write transactions until a
/// writer in another process asks for it (the waiting-writers count and wake sequence in the header), so a
/// process committing alone makes no system call for the lock. A watcher thread, started at the first write,
/// hands the lease over when the request comes while this process is not writing; the kernel releases it if
/// the process dies.
///
/// One instance per database file per process. Two instances for one path in one process work for `flock`
/// (each has its own open file description) but not for the `fcntl` locks, which belong to the process: the
/// second instance does not exclude the first, and closing either releases both instances' `fcntl` locks.
/// For the same reason nothing else in the process may open and close the lock file while a writer holds it.
///
/// `@unchecked Sendable` because every piece of shared mutable state is synchronised by hand:
/// - `fd`, the mapping and the configuration are set once in `init` and only released by `close()`;
/// - `closed`, `writerHeld`, `ownedSlots` and the lease are only touched while holding `stateMutex`, and the
///   reader-table operations run entirely under it, so they never see an unmapped table; the watcher thread
///   shares them through `WriterState` and is joined by `close()` before the table is unmapped;
/// - the reader table itself is shared with other processes and only accessed through atomics;
/// - `withExclusiveAccess` is serialised by `exclusiveMutex`.
/// The one rule callers must keep: do not call `close()` while another thread is inside `lockWriter()` or
/// `withExclusiveAccess(_:)` (the engine closes when its last handle goes away, so nothing else runs).
final class LockFile: @unchecked Sendable {
    /// `RBLK` + lock format 5 (4 told a live reader by its pid, which another PID namespace does not see; 3
    /// had no waiter byte, so a waiter killed while counted made every holder give the lease up after each
    /// transaction; 2 released the writer lock after every transaction and had no waiting-writers count; 1
    /// had no published meta slots).
    static let magic: [UInt8] = [0x52, 0x42, 0x4C, 0x4B, 0x00, 0x00, 0x00, 0x05]
    static let headerSize = 384
    /// The published meta (DECISIONS 53): which of the two areas holds the newest (8 bytes at 64), then the
    /// two areas of one encoded meta slot each (128 bytes at 128 and 256).
    static let publishedOffset = 64
    static let slotSize = 16
    static let defaultSlotCount = 1024
    /// Upper bound accepted when reading another process's header (a sanity check, not a format limit).
    static let maxSlotCount = 1 << 16
    /// Byte 0: the writer lock (`fcntl`, exclusive, held for a whole write transaction and kept after it until
    /// another process asks for it).
    static let writerLockByte: off_t = 0
    /// At byte 24: writers of other processes waiting for byte 0 (`UInt32`); at byte 28: the wake sequence
    /// (`UInt32`, a futex word), raised by every request so a watcher cannot miss one.
    static let waitingWritersOffset = 24
    static let wakeSequenceOffset = 28
    /// How long `tryLockWriter` gives another process's idle lease to be handed over (polling, in µs).
    static let tryLeaseWait: (polls: Int, interval: UInt32) = (100, 2000)
    /// Byte 2: held shared (`fcntl`) by every process waiting for byte 0, from before it counts itself among
    /// the waiting writers until after it takes itself off: the holder asks the kernel whether anyone alive is
    /// behind the count (`WriterState.othersWaiting`).
    static let waiterByte: off_t = 2
    /// Byte 1: the open guard (`fcntl`, exclusive, held briefly). Held while deciding who is the first opener
    /// and while trying to upgrade to the exclusive `flock`, so no process can run first-opener initialisation
    /// in the window where an upgrading process has dropped its shared `flock` (see `withExclusiveAccess`).
    static let openGuardByte: off_t = 1
    /// A slot whose pid has this bit set was being cleared by a build of lock format 4 (see `liveVersion`).
    static let clearingBit: UInt64 = 1 << 63
    /// Byte `livenessBase + i`: locked (an open file description lock, exclusive) by the process that holds
    /// reader slot `i`, from before it claims the slot until after it frees it. The kernel drops the lock when
    /// the process dies, whatever PID namespace it ran in: a slot whose byte no one holds belongs to no one
    /// alive. (The bytes lie past the end of the file; a lock needs no data there.)
    static let livenessBase: off_t = 1 << 20

    static func fileSize(slotCount: Int) -> Int { headerSize + slotSize * slotCount }

    let path: String
    /// True when this open found nobody else holding the file and (re)initialised the table.
    let wasFirstOpener: Bool
    let slotCount: Int

    let fd: Int32
    let mapping: UnsafeMutableRawPointer
    private let mappingSize: Int
    /// Two atomics per slot: pid at `2*i`, version at `2*i + 1`.
    private let slots: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>
    /// The published meta's words: the area index, 7 spare, then the two areas of 16 words.
    private let published: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>
    /// At byte 16: one more than the highest slot index ever claimed (scans of the table stop there).
    private let slotsInUse: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>
    private let ownPid: UInt64

    let waitingWriters: UnsafeAtomic<UInt32>
    let wakeSequence: UnsafeAtomic<UInt32>

    let stateMutex: UnsafeMutablePointer<pthread_mutex_t>
    private let writerReleased: UnsafeMutablePointer<pthread_cond_t>
    private let exclusiveMutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Guarded by stateMutex: `closed`, the writer and the lease (shared with the watcher thread).
    let state: WriterState
    // Guarded by stateMutex:
    private var ownedSlots: [Bool]
    var watcher: pthread_t?
    /// The bytes this process last published and the meta they encode (under `stateMutex`): the writer's next
    /// transaction reads them back from the table, and decoding them again (a hash and every field checked)
    /// cost ~1.5 % of a small commit on a CPU the disk wait left cold (DECISIONS 64).
    /// Allocated once the lock file is open (an initialiser that throws before every property is set runs no
    /// `deinit`, so nothing that needs freeing is made before the last step that can throw).
    let lastPublishedBytes: UnsafeMutableRawPointer
    var lastPublishedMeta: Meta?
    /// For tests: taking the waiter byte fails with this `errno` (as `ENOLCK` would), set before any thread
    /// asks for the writer lock.
    var failWaiterByteForTesting: Int32?

    /// Opens (creating if needed, mode 0644) `path` and maps the reader table.
    ///
    /// Under the open guard, takes a non-blocking exclusive `flock`. If that succeeds nobody else has the file
    /// open: this process re-initialises the table (header, all slots zero), calls `firstOpener()` while still
    /// holding the exclusive lock, then switches to a shared `flock`. Otherwise it blocks on a shared `flock`
    /// (waiting for anyone holding it exclusively) and checks the header: a bad header while others have the
    /// file open is reported as `.corrupt`; a bad header with nobody else left is re-initialised.
    ///
    /// A lock file this call creates has its name made durable (its directory synced) before it is used.
    init(path: String, firstOpener: () throws -> Void) throws {
        var fd = openRetrying(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC)
        let created = fd >= 0
        if fd < 0 && errno == EEXIST { fd = openRetrying(path, O_RDWR | O_CLOEXEC) }
        guard fd >= 0 else { throw StorageError.io(path: path, operation: "open lock file", errno: errno) }
        let opened: Opened
        do {
            if created { try syncParentDirectory(of: path) }
            opened = try Self.negotiate(fd: fd, path: path, firstOpener: firstOpener)
        } catch {
            closeDescriptor(fd)  // releases every lock taken so far
            throw error
        }
        self.path = path
        self.fd = fd
        self.mapping = opened.base
        self.mappingSize = Self.fileSize(slotCount: opened.slotCount)
        self.slotCount = opened.slotCount
        self.wasFirstOpener = opened.firstOpener
        self.slots = (opened.base + Self.headerSize)
            .bindMemory(to: UnsafeAtomic<UInt64>.Storage.self, capacity: 2 * opened.slotCount)
        self.slotsInUse = (opened.base + 16).bindMemory(to: UnsafeAtomic<UInt64>.Storage.self, capacity: 1)
        self.published = (opened.base + Self.publishedOffset)
            .bindMemory(to: UnsafeAtomic<UInt64>.Storage.self, capacity: (Self.headerSize - Self.publishedOffset) / 8)
        self.ownPid = UInt64(UInt32(bitPattern: getpid()))
        self.ownedSlots = Array(repeating: false, count: opened.slotCount)
        self.waitingWriters = UnsafeAtomic(at: (opened.base + Self.waitingWritersOffset)
            .bindMemory(to: UnsafeAtomic<UInt32>.Storage.self, capacity: 1))
        self.wakeSequence = UnsafeAtomic(at: (opened.base + Self.wakeSequenceOffset)
            .bindMemory(to: UnsafeAtomic<UInt32>.Storage.self, capacity: 1))
        stateMutex = .allocate(capacity: 1)
        pthread_mutex_init(stateMutex, nil)
        state = WriterState(fd: fd)
        writerReleased = .allocate(capacity: 1)
        pthread_cond_init(writerReleased, nil)
        exclusiveMutex = .allocate(capacity: 1)
        pthread_mutex_init(exclusiveMutex, nil)
        lastPublishedBytes = .allocate(byteCount: 128, alignment: 8)
    }

    deinit {
        close()
        pthread_mutex_destroy(stateMutex)
        stateMutex.deallocate()
        pthread_cond_destroy(writerReleased)
        writerReleased.deallocate()
        pthread_mutex_destroy(exclusiveMutex)
        exclusiveMutex.deallocate()
        lastPublishedBytes.deallocate()
    }

    /// Unmaps the table and closes the file, which releases the `flock` and this process's `fcntl` locks.
    /// Slots still claimed through this instance are released first. Idempotent.
    func close() {
        pthread_mutex_lock(stateMutex)
        guard !state.closed else {
            pthread_mutex_unlock(stateMutex)
            return
        }
        state.closed = true
        for i in 0..<slotCount where ownedSlots[i] {
            versionAtomic(i).store(0, ordering: .sequentiallyConsistent)
            pidAtomic(i).store(0, ordering: .sequentiallyConsistent)
            ownedSlots[i] = false
            // (Closing the descriptor below drops the liveness lock too.)
        }
        pthread_cond_broadcast(writerReleased)  // waiters in lockWriter() see `closed` and throw
        let watcher = self.watcher
        self.watcher = nil
        pthread_mutex_unlock(stateMutex)
        // The watcher sees `closed` once woken; it uses the mapping, so it must be gone before the unmap.
        if let watcher {
            wakeSequence.wrappingIncrement(ordering: .sequentiallyConsistent)
            storage_wake_all(wakeSequenceWord)
            pthread_join(watcher, nil)
        }
        munmap(mapping, mappingSize)
        closeDescriptor(fd)  // releases the lease, if held
    }

    // MARK: - Writer lock

    /// Takes the writer lock: first across threads of this process (an owner-free lock, so it may be released
    /// from another thread, as a write transaction may hop threads), then across processes: the lease on byte 0,
    /// which this process may still hold from its last transaction. Blocks until both are held.
    func lockWriter() throws {
        pthread_mutex_lock(stateMutex)
        while state.writerHeld && !state.closed { pthread_cond_wait(writerReleased, stateMutex) }
        if state.closed {
            pthread_mutex_unlock(stateMutex)
            throw closedError("lock the writer")
        }
        state.writerHeld = true
        if holdsLease() {
            pthread_mutex_unlock(stateMutex)
            return
        }
        pthread_mutex_unlock(stateMutex)

        var err = Self.recordLock(fd, type: F_WRLCK, byte: Self.writerLockByte, wait: false)
        var operation = "lock the writer (fcntl F_SETLKW)"
        if err == EAGAIN || err == EACCES {
            // Another process has it, perhaps only as a lease between its transactions: ask for it, then wait.
            err = requestLease()
            if err == 0 {
                err = Self.recordLock(fd, type: F_WRLCK, byte: Self.writerLockByte, wait: true)
                leaseRequestEnded()
            } else {
                operation = Self.requestLeaseOperation
            }
        }
        if err != 0 {
            pthread_mutex_lock(stateMutex)
            state.writerHeld = false
            pthread_cond_signal(writerReleased)
            pthread_mutex_unlock(stateMutex)
            throw StorageError.io(path: path, operation: operation, errno: err)
        }
        leaseTaken()
    }

    /// `lockWriter` without waiting for a writer: false when another thread of this process or another process
    /// is writing. Another process's idle lease is asked for and given a short time (`tryLeaseWait`) to come.
    func tryLockWriter() throws -> Bool {
        pthread_mutex_lock(stateMutex)
        if state.closed {
            pthread_mutex_unlock(stateMutex)
            throw closedError("lock the writer")
        }
        if state.writerHeld {
            pthread_mutex_unlock(stateMutex)
            return false
        }
        state.writerHeld = true
        if holdsLease() {
            pthread_mutex_unlock(stateMutex)
            return true
        }
        pthread_mutex_unlock(stateMutex)
        var err = Self.recordLock(fd, type: F_WRLCK, byte: Self.writerLockByte, wait: false)
        var operation = "lock the writer (fcntl F_SETLK)"
        if err == EAGAIN || err == EACCES {
            err = requestLease()
            if err == 0 {
                for _ in 0..<Self.tryLeaseWait.polls {
                    usleep(Self.tryLeaseWait.interval)
                    err = Self.recordLock(fd, type: F_WRLCK, byte: Self.writerLockByte, wait: false)
                    if err != EAGAIN && err != EACCES { break }
                }
                leaseRequestEnded()
            } else {
                operation = Self.requestLeaseOperation
            }
        }
        if err == 0 {
            leaseTaken()
            return true
        }
        pthread_mutex_lock(stateMutex)
        state.writerHeld = false
        pthread_cond_signal(writerReleased)
        pthread_mutex_unlock(stateMutex)
        if err == EAGAIN || err == EACCES { return false }
        throw StorageError.io(path: path, operation: operation, errno: err)
    }

    /// Ends this thread's hold on the writer lock. The lease on byte 0 is kept unless a writer of another
    /// process is waiting for it.
    func unlockWriter() {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        precondition(state.writerHeld, "unlockWriter() without lockWriter()")
        if state.leaseHeld && !state.closed && (!state.keepsLease || state.othersWaiting(waitingWriters)) {
            state.releaseLease()
        }
        state.writerHeld = false
        pthread_cond_signal(writerReleased)
    }

    /// Whether this process holds the lease (under stateMutex). A forked child inherits the flag but not the
    /// lock, so the flag counts only in the process that took it.
    private func holdsLease() -> Bool {
        if state.leaseHeld && state.leasePid == storage_process_id() { return true }
        state.leaseHeld = false
        return false
    }

    private var closed: Bool { state.closed }

    // MARK: - Reader slots

    /// Claims a free slot (compare-and-swap of pid 0 → our pid), stores `version` in it and returns its index.
    /// Between the two steps the slot reads as version 0, which only makes writers more conservative.
    /// When the table is full, slots of dead processes are cleared first; if it is still full this throws.
    func claimReaderSlot(version: UInt64) throws -> Int {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        guard !closed else { throw closedError("claim a reader slot") }
        if let slot = tryClaim(version: version) { return slot }
        for i in 0..<slotCount { _ = liveVersion(ofSlot: i) }  // clears dead processes' slots
        if let slot = tryClaim(version: version) { return slot }
        throw StorageError.io(
            path: path,
            operation: "claim a reader slot (all \(slotCount) slots are held by live readers)",
            errno: EAGAIN)
    }

    func setReaderVersion(_ version: UInt64, slot: Int) {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        guard !closed else { return }
        precondition(ownedSlots[slot], "reader slot \(slot) is not claimed by this lock file")
        versionAtomic(slot).store(version, ordering: .sequentiallyConsistent)
    }

    /// Releases a slot: version first, then pid, so the slot is never free with a stale version.
    /// A no-op after `close()` (which released it already).
    func releaseReaderSlot(_ slot: Int) {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        guard !closed else { return }
        precondition(ownedSlots[slot], "reader slot \(slot) is not claimed by this lock file")
        versionAtomic(slot).store(0, ordering: .sequentiallyConsistent)
        pidAtomic(slot).store(0, ordering: .sequentiallyConsistent)
        ownedSlots[slot] = false
        _ = Self.livenessLock(fd, slot: slot, type: F_UNLCK)
    }

    // MARK: - Published meta

    /// Makes `meta` (one encoded meta slot, 128 bytes) the newest version for every process, without writing
    /// the data file (DECISIONS 53). Writer only: the area not in use is filled, then becomes the one in use,
    /// so a writer that dies half way leaves the previous one whole.
    func publish(meta bytes: [UInt8], decoded meta: Meta) {
        precondition(bytes.count == 128, "a published meta is one encoded meta slot")
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        guard !closed else { return }
        bytes.withUnsafeBytes { lastPublishedBytes.copyMemory(from: $0.baseAddress!, byteCount: 128) }
        lastPublishedMeta = meta
        let index = UnsafeAtomic<UInt64>(at: published)
        let next = 1 - (index.load(ordering: .relaxed) & 1)
        let area = published + 8 + Int(next) * 16
        bytes.withUnsafeBytes { b in
            for i in 0..<16 { UnsafeAtomic<UInt64>(at: area + i).store(b.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self), ordering: .relaxed) }
        }
        index.store(next, ordering: .sequentiallyConsistent)
    }

    /// The published meta in use (`current`) or the other one, as `decode` reads it from its 128 bytes (nil:
    /// not whole); nil when nothing was published since the table was initialised. A copy torn by a
    /// concurrent `publish` is read again. The bytes are copied to the stack: an array here cost more than the
    /// rest of the read (`perf`).
    func publishedMeta<T>(current: Bool = true, decode: (UnsafeRawBufferPointer) -> T?) -> T? {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        guard !closed else { return nil }
        let index = UnsafeAtomic<UInt64>(at: published)
        return withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { b -> T? in
            for _ in 0..<1000 {
                let i = index.load(ordering: .sequentiallyConsistent) & 1
                let area = published + 8 + Int(current ? i : 1 - i) * 16
                var any: UInt64 = 0
                for w in 0..<16 {
                    let word = UnsafeAtomic<UInt64>(at: area + w).load(ordering: .relaxed)
                    any |= word
                    b.storeBytes(of: word, toByteOffset: w * 8, as: UInt64.self)
                }
                if any == 0 { return nil }
                if let value = decode(UnsafeRawBufferPointer(b)) { return value }
                if !current { return nil }
            }
            return nil
        }
    }

    /// The smallest version in any used slot of any process, or nil when no slot is used (or after `close()`).
    /// Slots whose owner is gone (no one holds their liveness byte) are cleared on the way;
    /// a live process's slot is never cleared. A slot being claimed (version not yet stored) counts as 0.
    func oldestReaderVersion() -> UInt64? {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        guard !closed else { return nil }
        var oldest: UInt64?
        for i in 0..<scannedSlots {
            if let v = liveVersion(ofSlot: i) { oldest = min(oldest ?? v, v) }
        }
        return oldest
    }

    func readerVersions() -> [UInt64] {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        guard !closed else { return [] }
        return (0..<scannedSlots).compactMap { liveVersion(ofSlot: $0) }
    }

    // MARK: - Exclusive access

    /// Runs `body` while no other process has the file open, and returns true; returns false without running
    /// `body` when another process holds the file.
    ///
    /// Converting a `flock` from shared to exclusive is not atomic: Linux removes the shared lock before it
    /// checks for conflicts, so a failed non-blocking upgrade leaves this process holding no lock at all. While
    /// unlocked, a process opening the file could take the exclusive lock, believe it is the first opener and
    /// zero the reader table under our live readers. The open guard (fcntl byte 1), which every opener takes
    /// before trying the exclusive lock, is held across the attempt, so that cannot happen; afterwards the
    /// shared lock is always re-acquired (blocking) before returning or throwing.
    func withExclusiveAccess(_ body: () throws -> Void) throws -> Bool {
        pthread_mutex_lock(exclusiveMutex)
        defer { pthread_mutex_unlock(exclusiveMutex) }
        pthread_mutex_lock(stateMutex)
        let isClosed = closed
        pthread_mutex_unlock(stateMutex)
        guard !isClosed else { throw closedError("get exclusive access") }

        let guardErr = Self.recordLock(fd, type: F_WRLCK, byte: Self.openGuardByte, wait: true)
        guard guardErr == 0 else {
            throw StorageError.io(path: path, operation: "lock the open guard (fcntl F_SETLKW)", errno: guardErr)
        }
        defer { _ = Self.recordLock(fd, type: F_UNLCK, byte: Self.openGuardByte, wait: false) }

        let exclusive: Bool
        do {
            exclusive = try Self.tryFlock(fd, LOCK_EX, path: path)
        } catch {
            try Self.blockingFlock(fd, LOCK_SH, path: path)
            throw error
        }
        guard exclusive else {
            try Self.blockingFlock(fd, LOCK_SH, path: path)
            return false
        }
        var bodyError: (any Error)?
        do { try body() } catch { bodyError = error }
        try Self.blockingFlock(fd, LOCK_SH, path: path)
        if let bodyError { throw bodyError }
        return true
    }

    // MARK: - Test support

    /// Writes a slot directly, bypassing claim bookkeeping (tests simulate other or dead processes with it).
    func testingStoreSlot(_ slot: Int, pid: UInt64, version: UInt64) {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        precondition(!closed && slot >= 0 && slot < slotCount)
        raiseSlotsInUse(to: slot + 1)
        versionAtomic(slot).store(version, ordering: .sequentiallyConsistent)
        pidAtomic(slot).store(pid, ordering: .sequentiallyConsistent)
    }

    func testingSlot(_ slot: Int) -> (pid: UInt64, version: UInt64) {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        precondition(!closed && slot >= 0 && slot < slotCount)
        return (pidAtomic(slot).load(ordering: .sequentiallyConsistent),
                versionAtomic(slot).load(ordering: .sequentiallyConsistent))
    }

    // MARK: - Slot internals (callers hold stateMutex and the table is mapped)

    private func pidAtomic(_ slot: Int) -> UnsafeAtomic<UInt64> { UnsafeAtomic(at: slots + 2 * slot) }
    private func versionAtomic(_ slot: Int) -> UnsafeAtomic<UInt64> { UnsafeAtomic(at: slots + 2 * slot + 1) }

    private func tryClaim(version: UInt64) -> Int? {
        for i in 0..<slotCount {
            let pid = pidAtomic(i)
            guard pid.load(ordering: .relaxed) == 0 else { continue }
            // The liveness lock first: from the moment the pid is in the slot, the slot's byte is held.
            guard Self.livenessLock(fd, slot: i, type: F_WRLCK) == 0 else { continue }
            raiseSlotsInUse(to: i + 1)  // before the slot is used, so every scan that could miss it is older
            if pid.compareExchange(expected: 0, desired: ownPid, ordering: .sequentiallyConsistent).exchanged {
                versionAtomic(i).store(version, ordering: .sequentiallyConsistent)
                ownedSlots[i] = true
                return i
            }
            _ = Self.livenessLock(fd, slot: i, type: F_UNLCK)
        }
        return nil
    }

    /// How many slots a scan must look at: every slot ever claimed lies below (DECISIONS 53: scanning all
    /// 1,024 at every write transaction cost ~1 µs).
    private var scannedSlots: Int { min(slotCount, Int(clamping: UnsafeAtomic<UInt64>(at: slotsInUse).load(ordering: .sequentiallyConsistent))) }

    private func raiseSlotsInUse(to n: Int) {
        let inUse = UnsafeAtomic<UInt64>(at: slotsInUse)
        var seen = inUse.load(ordering: .sequentiallyConsistent)
        while seen < UInt64(n) {
            let (done, now) = inUse.compareExchange(expected: seen, desired: UInt64(n), ordering: .sequentiallyConsistent)
            if done { return }
            seen = now
        }
    }

    /// The version a used slot protects, or nil for a free slot or a slot whose owner is gone (which this call
    /// clears). The owner is alive exactly while the slot's liveness byte is locked (`livenessBase`).
    private func liveVersion(ofSlot i: Int) -> UInt64? {
        let pid = pidAtomic(i).load(ordering: .sequentiallyConsistent)
        if pid == 0 { return nil }
        if ownedSlots[i] { return versionAtomic(i).load(ordering: .sequentiallyConsistent) }
        switch Self.livenessHeld(fd, slot: i) {
        case true?:
            // Held: its owner is alive (or, for a marker of lock format 4, someone is clearing it).
            return pid & Self.clearingBit != 0 ? nil : versionAtomic(i).load(ordering: .sequentiallyConsistent)
        case nil:
            // The kernel could not say: count the slot, as a live one (only keeps pages longer).
            return pid & Self.clearingBit != 0 ? nil : versionAtomic(i).load(ordering: .sequentiallyConsistent)
        case false?:
            clearSlot(i, observedPid: pid)
            return nil
        }
    }

    /// Clears a slot whose liveness byte no one held. The byte is taken first, so no process can claim the slot
    /// while it is cleared; if the pid changed meanwhile (its owner freed it, someone claimed it again), it is
    /// left alone.
    private func clearSlot(_ i: Int, observedPid: UInt64) {
        guard Self.livenessLock(fd, slot: i, type: F_WRLCK) == 0 else { return }
        defer { _ = Self.livenessLock(fd, slot: i, type: F_UNLCK) }
        let pid = pidAtomic(i)
        guard pid.load(ordering: .sequentiallyConsistent) == observedPid else { return }
        versionAtomic(i).store(0, ordering: .sequentiallyConsistent)
        pid.store(0, ordering: .sequentiallyConsistent)
    }


    private func closedError(_ operation: String) -> StorageError {
        .io(path: path, operation: "\(operation) (the lock file is closed)", errno: EBADF)
    }

    // MARK: - Opening

    private struct Opened {
        var base: UnsafeMutableRawPointer
        var slotCount: Int
        var firstOpener: Bool
    }

    private static func negotiate(fd: Int32, path: String, firstOpener: () throws -> Void) throws -> Opened {
        let guardErr = recordLock(fd, type: F_WRLCK, byte: openGuardByte, wait: true)
        guard guardErr == 0 else {
            throw StorageError.io(path: path, operation: "lock the open guard (fcntl F_SETLKW)", errno: guardErr)
        }
        defer { _ = recordLock(fd, type: F_UNLCK, byte: openGuardByte, wait: false) }

        if try tryFlock(fd, LOCK_EX, path: path) {
            return try initialise(fd: fd, path: path, firstOpener: firstOpener)
        }
        // Someone has it open. Participants only hold it exclusively under the open guard, which we hold, so
        // this waits only for a process outside the protocol holding it exclusively.
        try blockingFlock(fd, LOCK_SH, path: path)
        let refusal: StorageError
        switch try readHeader(fd: fd, path: path) {
        case .valid(let slotCount):
            return Opened(base: try map(fd: fd, path: path, slotCount: slotCount), slotCount: slotCount,
                          firstOpener: false)
        case .invalid(let reason):
            refusal = .corrupt(path: path, location: "lock file header",
                               reason: "\(reason); another process has the database open, so it cannot be reinitialised")
        case .otherFormat(let format):
            // Not damage: a build of another version has the database open, and the two would not agree on
            // who holds the writer lock.
            refusal = .inUse(path: path, operation: "open the database",
                             reason: "a process of another version of this software has it open (its lock file is of "
                                 + "lock format \(format), this build uses \(magic[7])); close that process first")
        }
        // The holder may have gone while we waited (for example it created the file and never initialised it).
        // If we can now get it exclusively, it is ours to initialise.
        if try tryFlock(fd, LOCK_EX, path: path) {
            return try initialise(fd: fd, path: path, firstOpener: firstOpener)
        }
        throw refusal
    }

    /// First opener: we hold the exclusive flock. Writes a fresh table, runs `firstOpener`, goes shared.
    ///
    /// The table is written with `pwrite`, not through the mapping: every process stores into the mapped table,
    /// and a store into a page the file system has no block for (a hole left by `ftruncate`) raises SIGBUS when
    /// the disk is full. Written, every page has its block, and a full disk is an error here instead.
    private static func initialise(fd: Int32, path: String, firstOpener: () throws -> Void) throws -> Opened {
        let slotCount = defaultSlotCount
        let size = fileSize(slotCount: slotCount)
        var table = [UInt8](repeating: 0, count: size)
        table.replaceSubrange(0..<magic.count, with: magic)
        withUnsafeBytes(of: UInt32(slotCount).littleEndian) { table.replaceSubrange(8..<12, with: $0) }
        try table.withUnsafeBytes { try writeFully(fd, $0, at: 0, path: path, operation: "initialise the lock file") }
        try setFileSize(fd, to: size, path: path, operation: "resize lock file")  // a longer file (another slot count) loses its tail
        let base = try map(fd: fd, path: path, slotCount: slotCount)
        do {
            try firstOpener()
            try blockingFlock(fd, LOCK_SH, path: path)  // exclusive → shared; cannot conflict
        } catch {
            munmap(base, size)
            throw error
        }
        return Opened(base: base, slotCount: slotCount, firstOpener: true)
    }

    private enum Header {
        case valid(slotCount: Int)
        case invalid(String)
        /// `RBLK` with another lock format number.
        case otherFormat(UInt8)
    }

    private static func readHeader(fd: Int32, path: String) throws -> Header {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StorageError.io(path: path, operation: "stat lock file", errno: errno) }
        let size = Int(st.st_size)
        if size < headerSize {
            return .invalid("lock file is too short (\(size) bytes, the header alone is \(headerSize))")
        }
        var header = [UInt8](repeating: 0, count: 12)
        let n = try header.withUnsafeMutableBytes { try readFully(fd, into: $0, at: 0, path: path, operation: "read lock file header") }
        guard n == 12 else {
            throw StorageError.io(path: path, operation: "read lock file header (it ended at byte \(n))", errno: EIO)
        }
        if Array(header[0..<7]) == Array(magic[0..<7]), header[7] != magic[7] { return .otherFormat(header[7]) }
        if Array(header[0..<8]) != magic {
            return .invalid("lock file has wrong magic \(header[0..<8].map { String($0, radix: 16) })")
        }
        let count = Int(header[8]) | Int(header[9]) << 8 | Int(header[10]) << 16 | Int(header[11]) << 24
        if count < 1 || count > maxSlotCount {
            return .invalid("lock file has an invalid slot count \(count)")
        }
        if size < fileSize(slotCount: count) {
            return .invalid("lock file is too short (\(size) bytes) for \(count) reader slots")
        }
        return .valid(slotCount: count)
    }

    private static func map(fd: Int32, path: String, slotCount: Int) throws -> UnsafeMutableRawPointer {
        let size = fileSize(slotCount: slotCount)
        guard let p = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
              p != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw StorageError.io(path: path, operation: "mmap lock file", errno: errno)
        }
        return p
    }

    // MARK: - Lock primitives

    /// Non-blocking `flock`; false when another open file description holds a conflicting lock.
    /// Note that a failed upgrade from shared leaves no lock held (see `withExclusiveAccess`).
    private static func tryFlock(_ fd: Int32, _ operation: Int32, path: String) throws -> Bool {
        while true {
            if flock(fd, operation | LOCK_NB) == 0 { return true }
            let e = errno
            if e == EINTR { continue }
            if e == EWOULDBLOCK { return false }
            throw StorageError.io(path: path, operation: "flock lock file", errno: e)
        }
    }

    private static func blockingFlock(_ fd: Int32, _ operation: Int32, path: String) throws {
        while flock(fd, operation) != 0 {
            let e = errno
            if e != EINTR { throw StorageError.io(path: path, operation: "flock lock file", errno: e) }
        }
    }
}
