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
            if state.leaseHeld && !state.writerHeld && waiting.load(ordering: .sequentiallyConsistent) > 0 {
                state.releaseLease()
            }
            pthread_mutex_unlock(mutex)
            storage_wait_on_word(sequenceWord, seen)
        }
    }
}
