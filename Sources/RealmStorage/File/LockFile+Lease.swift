#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Atomics
internal import CStorageSupport

// The writer lease's moving parts (DECISIONS 55, 59): how `LockFile` asks for the lease and hands it over.

extension LockFile {
    /// Counts this process among the waiting writers and wakes every watcher, so whoever holds an idle lease
    /// lets it go; 0, or the `errno` of failing to take the waiter byte (then nothing is counted: a holder would
    /// find nobody behind the count, set it back and keep its lease, and the caller would wait for ever). The
    /// caller takes itself off the count once it has the lock (or gives up).
    func requestLease() -> Int32 {
        // The waiter byte first: a holder that sees this count must find the byte held (`othersWaiting`).
        let err = failWaiterByteForTesting ?? Self.recordLock(fd, type: F_RDLCK, byte: Self.waiterByte, wait: false)
        if err != 0 { return err }
        waitingWriters.wrappingIncrement(ordering: .sequentiallyConsistent)
        wakeSequence.wrappingIncrement(ordering: .sequentiallyConsistent)
        storage_wake_all(wakeSequenceWord)
        return 0
    }

    /// The operation a failed `requestLease` reports.
    static let requestLeaseOperation = "ask for the writer lock (fcntl F_SETLK on the lock file's waiter byte)"

    /// Takes this process off the waiting writers, then lets go of the waiter byte (in that order: a holder
    /// that still sees our count finds the byte held).
    func leaseRequestEnded() {
        waitingWriters.wrappingDecrement(ordering: .sequentiallyConsistent)
        _ = Self.recordLock(fd, type: F_UNLCK, byte: Self.waiterByte, wait: false)
    }

    /// The waiting-writers count in the header (tests: read through the mapping, since opening the lock file
    /// again in this process and closing it would drop this process's `fcntl` locks on it).
    var waitingWriterCount: UInt32 { waitingWriters.load(ordering: .sequentiallyConsistent) }

    /// Byte 0 is ours (the in-process writer flag already is): note the lease and start the watcher once.
    func leaseTaken() {
        pthread_mutex_lock(stateMutex)
        defer { pthread_mutex_unlock(stateMutex) }
        state.leaseHeld = true
        state.leasePid = storage_process_id()
        if watcher == nil && !state.closed { watcher = startWatcher() }
    }

    var wakeSequenceWord: UnsafeMutablePointer<UInt32> {
        (mapping + Self.wakeSequenceOffset).assumingMemoryBound(to: UInt32.self)
    }

    /// The thread that hands the lease over while this process is not writing: it sleeps on the wake sequence
    /// and, each time it changes, releases an idle lease if another process is waiting. It holds only the
    /// shared `WriterState` and raw pointers into the mapping, which `close()` unmaps after joining it.
    private func startWatcher() -> pthread_t? {
        let context = WatcherContext(state: state, mutex: stateMutex,
                                     waiting: waitingWriters, sequence: wakeSequence, sequenceWord: wakeSequenceWord)
        let unmanaged = Unmanaged.passRetained(context)
        var thread = pthread_t()
        let err = pthread_create(&thread, nil, { raw in
            let context = Unmanaged<WatcherContext>.fromOpaque(raw!).takeRetainedValue()
            storage_name_this_thread("realm-lease")
            context.run()
            return nil
        }, unmanaged.toOpaque())
        if err != 0 {
            // Without a watcher an idle lease could not be handed over: keep releasing after every transaction.
            unmanaged.release()
            state.keepsLease = false
            return nil
        }
        return thread
    }
}

/// The writer lock's state in one process, shared by `LockFile` and its watcher thread; every field is guarded
/// by the lock file's `stateMutex`.
final class WriterState: @unchecked Sendable {
    let fd: Int32
    var closed = false
    /// A thread of this process is the writer.
    var writerHeld = false
    /// This process holds the `fcntl` lock on byte 0 (taken by `leasePid`).
    var leaseHeld = false
    var leasePid: pid_t = 0
    /// False when no watcher could be started: the lease is then released after every transaction.
    var keepsLease = true

    init(fd: Int32) { self.fd = fd }

    func releaseLease() {
        _ = LockFile.recordLock(fd, type: F_UNLCK, byte: LockFile.writerLockByte, wait: false)
        leaseHeld = false
    }

    /// Whether a writer of another process is waiting for the lease. The waiting count in the header says so
    /// at no cost when it is zero; otherwise the kernel is asked whether any process holds the waiter byte (every
    /// waiter holds it shared while it waits, and the kernel drops the locks of a process that dies). A count
    /// that no live waiter stands behind was left by a waiter killed while counted: it is set back to zero, so
    /// the lease is not given up after every transaction from then on (lock format 4).
    func othersWaiting(_ waiting: UnsafeAtomic<UInt32>) -> Bool {
        let counted = waiting.load(ordering: .sequentiallyConsistent)
        if counted == 0 { return false }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = LockFile.waiterByte
        probe.l_len = 1
        guard fcntl(fd, F_GETLK, &probe) == 0, probe.l_type == Int16(F_UNLCK) else { return true }
        // A waiter takes the byte before it counts itself, so one counted in `counted` still holds it: nobody
        // behind the count. If the count moved since, a new waiter may be among it; keep it and hand over.
        return !waiting.compareExchange(expected: counted, desired: 0, ordering: .sequentiallyConsistent).exchanged
    }
}

/// What the watcher thread holds: the shared state and the mapping's words (valid until `close()` joins it).
final class WatcherContext: @unchecked Sendable {
    let state: WriterState
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    let waiting: UnsafeAtomic<UInt32>
    let sequence: UnsafeAtomic<UInt32>
    let sequenceWord: UnsafeMutablePointer<UInt32>

    init(state: WriterState, mutex: UnsafeMutablePointer<pthread_mutex_t>, waiting: UnsafeAtomic<UInt32>,
         sequence: UnsafeAtomic<UInt32>, sequenceWord: UnsafeMutablePointer<UInt32>) {
        self.state = state
        self.mutex = mutex
        self.waiting = waiting
        self.sequence = sequence
        self.sequenceWord = sequenceWord
    }

    /// Until the lock file closes: read the sequence, act on what it announced, sleep until it moves. A request
    /// raises the sequence before waking, so one made after the read makes the sleep return at once.
    func run() {
        while true {
            let seen = sequence.load(ordering: .sequentiallyConsistent)
            pthread_mutex_lock(mutex)
            if state.closed {
                pthread_mutex_unlock(mutex)
                return
            }
            if state.leaseHeld && !state.writerHeld && state.othersWaiting(waiting) {
                state.releaseLease()
            }
            pthread_mutex_unlock(mutex)
            storage_wait_on_word(sequenceWord, seen)
        }
    }
}
