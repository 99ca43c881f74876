#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Atomics
internal import CStorageSupport

// The writer lease's moving parts (DECISIONS 55); `LockFile` takes, keeps and asks for the lease.

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
