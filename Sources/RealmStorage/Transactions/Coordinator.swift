#if canImport(Glibc)
import Glibc
#endif

/// Writer exclusion and the table of live reader versions: across processes through the lock file, or within
/// this process for in-memory databases and read-only files whose lock file cannot be created.
protocol Coordinator: AnyObject, Sendable {
    func lockWriter() throws
    /// `lockWriter` without waiting: false when another thread or process is the writer.
    func tryLockWriter() throws -> Bool
    func unlockWriter()
    func claimReaderSlot(version: UInt64) throws -> Int
    func setReaderVersion(_ version: UInt64, slot: Int)
    func releaseReaderSlot(_ slot: Int)
    func oldestReaderVersion() -> UInt64?
    /// The version of every live reader (in every process sharing the coordinator).
    func readerVersions() -> [UInt64]
    /// Runs `body` if no other process has the database open; returns false (without running it) otherwise.
    func withExclusiveAccess(_ body: () throws -> Void) throws -> Bool
    /// Whether commits can be made visible by `publish` instead of a meta slot in the data file.
    var publishesMeta: Bool { get }
    /// Publishes `bytes`, the encoding of `meta`.
    func publish(meta bytes: [UInt8], decoded meta: Meta)
    /// The newest published meta (or, `current` false, the one before it) if whole.
    func publishedMeta(current: Bool) -> Meta?
}

/// A coordinator for one process only.
final class LocalCoordinator: Coordinator, @unchecked Sendable {
    // Safe: all mutable state is guarded by `mutex`; the writer lock is a separate pthread mutex.
    private let mutex = PthreadMutex()
    private let writer = PthreadMutex()
    private var slots: [Int: UInt64] = [:]
    private var nextSlot = 0

    func lockWriter() throws { writer.lock() }
    func tryLockWriter() throws -> Bool { writer.tryLock() }
    func unlockWriter() { writer.unlock() }

    func claimReaderSlot(version: UInt64) throws -> Int {
        mutex.withLock {
            nextSlot += 1
            slots[nextSlot] = version
            return nextSlot
        }
    }

    func setReaderVersion(_ version: UInt64, slot: Int) { mutex.withLock { slots[slot] = version } }
    func releaseReaderSlot(_ slot: Int) { _ = mutex.withLock { slots.removeValue(forKey: slot) } }
    func oldestReaderVersion() -> UInt64? { mutex.withLock { slots.values.min() } }
    func readerVersions() -> [UInt64] { mutex.withLock { Array(slots.values) } }

    func withExclusiveAccess(_ body: () throws -> Void) throws -> Bool {
        try body()
        return true
    }

    var publishesMeta: Bool { false }
    func publish(meta bytes: [UInt8], decoded meta: Meta) {}
    func publishedMeta(current: Bool) -> Meta? { nil }
}

extension LockFile: Coordinator {
    var publishesMeta: Bool { true }

    func publishedMeta(current: Bool) -> Meta? {
        publishedMeta(current: current) { b -> Meta? in
            // Runs under the state mutex: what this process published last, unchanged, is not decoded again.
            if let last = lastPublishedMeta, memcmp(b.baseAddress!, lastPublishedBytes, 128) == 0 { return last }
            if case .valid(let m) = Meta.decode(b) { return m }
            return nil
        }
    }
}
