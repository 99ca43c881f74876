import Foundation
import RealmStorage

#if !canImport(ObjectiveC)
/// Runs `body`. Foundation on Linux has no autorelease pools (nothing is autoreleased there); realm-swift code
/// wraps background writes in one, so this lets it compile and run unchanged.
public func autoreleasepool<Result>(invoking body: () throws -> Result) rethrows -> Result {
    try body()
}
#endif

/// Identifies an asynchronous write (`writeAsync`, `beginAsyncWrite`, `commitAsyncWrite`).
public typealias AsyncTransactionId = UInt

/// Carries a value that belongs to one queue to a block that runs on that same queue. `@unchecked`: the
/// value is only touched there (a Realm confined to the queue, the caller's blocks). A class: as a generic
/// struct holding a tuple with a closure, the dispatch block's copy was released once too often when the block
/// was destroyed (a crash in about one run of two, Swift 6.3.1 debug builds).
final class SameQueue<T>: @unchecked Sendable {
    let value: T
    init(value: T) { self.value = value }
}

extension Realm {
    // MARK: Asynchronous writes

    /// The queue asynchronous work of this Realm runs on: its own queue, or the main queue for a Realm of the
    /// main thread. Realms of other threads have none: nothing would ever run their blocks.
    private func asyncQueue(_ operation: String) -> DispatchQueue {
        verifyThread("Realm")
        guard let q = rlm.deliveryQueue else {
            preconditionFailure("\(operation) needs a Realm confined to a queue (Realm(configuration:queue:)) or "
                + "opened on the main thread: a Realm of another thread has no queue to run the write on")
        }
        return q
    }

    /// Runs `block` in a write transaction later, on this Realm's queue, commits it and calls `onComplete` with
    /// nil or the commit's error. The Realm must be confined to a queue or be the main thread's. Writes queued
    /// this way run in order; `cancelAsyncWrite` drops one not yet begun.
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        let realm = SameQueue(value: self)
        return beginAsyncWrite {
            block()
            if realm.value.isInWriteTransaction {
                realm.value.commitAsyncWrite(onComplete)
            } else {
                // The block cancelled its write: nothing to commit.
                onComplete?(nil)
            }
        }
    }

    /// Begins a write transaction later, on this Realm's queue, and runs `block` in it; the block commits with
    /// `commitAsyncWrite` (or cancels with `cancelWrite`).
    @discardableResult
    public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        let queue = asyncQueue("beginAsyncWrite")
        let id = rlm.nextAsyncWriteID
        rlm.nextAsyncWriteID += 1
        rlm.queuedAsyncWrites.insert(id)
        let work = SameQueue(value: (self, asyncWriteBlock))
        queue.async {
            let (realm, block) = work.value
            guard realm.rlm.queuedAsyncWrites.remove(id) != nil, !realm.rlm.isClosed else { return }
            realm.beginWrite()
            block()
        }
        return id
    }

    /// Commits the write transaction now and calls `onComplete` on this Realm's queue afterwards, with nil or
    /// the commit's error (the write is then rolled back).
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        let queue = asyncQueue("commitAsyncWrite")
        let id = rlm.nextAsyncWriteID
        rlm.nextAsyncWriteID += 1
        var failure: Swift.Error?
        do { try commitWrite() } catch { failure = error }
        if let onComplete {
            let done = SameQueue(value: (onComplete, failure))
            queue.async { done.value.0(done.value.1) }
        }
        return id
    }

    /// Drops an asynchronous write that has not begun yet. An id that is not queued (already begun, run or
    /// cancelled) is an error.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        verifyThread("Realm")
        guard rlm.queuedAsyncWrites.remove(asyncTransactionId) != nil else {
            throw RealmError.invalidConfiguration("no asynchronous write \(asyncTransactionId) is waiting to begin")
        }
    }

    /// Whether asynchronous writes are queued and not yet begun.
    public var isPerformingAsynchronousWriteOperations: Bool { !rlm.queuedAsyncWrites.isEmpty }

    // MARK: Opening asynchronously

    /// A Realm being opened by `asyncOpen`.
    public final class AsyncOpenTask: @unchecked Sendable {
        // Safe: `cancelled` is read and written under `lock`.
        private let lock = NSLock()
        private var cancelled = false

        /// Stops the open: the callback is not called.
        public func cancel() { lock.withLock { cancelled = true } }
        var isCancelled: Bool { lock.withLock { cancelled } }
    }

    /// Opens the Realm of `configuration` on a background queue (running any migration or compaction there),
    /// then calls `callback` on `callbackQueue` with a Realm confined to that queue, or the error.
    @discardableResult
    public static func asyncOpen(configuration: Realm.Configuration = .defaultConfiguration,
                                 callbackQueue: DispatchQueue = .main,
                                 callback: @escaping (Result<Realm, Swift.Error>) -> Void) -> AsyncOpenTask {
        let task = AsyncOpenTask()
        // The callback only runs on `callbackQueue`, the queue it was given for.
        let deliver = SameQueue(value: callback)
        DispatchQueue.global().async {
            // Opened and released here so that the slow part (migration, compaction, schema set-up) happens
            // off the callback queue; the callback queue's own open then finds the file ready.
            let failure: Swift.Error?
            do { _ = try Realm(configuration: configuration); failure = nil } catch { failure = error }
            callbackQueue.async {
                guard !task.isCancelled else { return }
                if let failure { return deliver.value(.failure(failure)) }
                deliver.value(Result { try Realm(configuration: configuration, queue: callbackQueue) })
            }
        }
        return task
    }
}

extension Realm {
    // MARK: Files

    /// Whether the file of `config` exists (false for an in-memory configuration).
    public static func fileExists(for config: Configuration) -> Bool {
        guard config.inMemoryIdentifier == nil, let path = config.resolvedPath else { return false }
        return FileManager.default.fileExists(atPath: path)
    }

    /// Deletes the file of `config` and the files beside it (its commit log and lock file); true if the data
    /// file existed. A Realm of it still open in this process is an error: its reads would fail.
    @discardableResult
    public static func deleteFiles(for config: Configuration) throws -> Bool {
        guard config.inMemoryIdentifier == nil, let path = config.resolvedPath else { return false }
        if RealmCore.isOpen(path: path) {
            throw RealmError.invalidConfiguration("\(config.displayPath) is open in this process: close every Realm of it before deleting its files")
        }
        let existed = FileManager.default.fileExists(atPath: path)
        for p in [path, path + ".log", path + ".lock"] where FileManager.default.fileExists(atPath: p) {
            do { try FileManager.default.removeItem(atPath: p) } catch {
                throw RealmError.invalidConfiguration("cannot delete \(p): \(error.localizedDescription)")
            }
        }
        return existed
    }

    /// Writes a compacted copy of this Realm's current version to the file of `configuration` (with its
    /// encryption key, if any).
    public func writeCopy(configuration: Configuration) throws {
        guard let path = configuration.resolvedPath, configuration.inMemoryIdentifier == nil else {
            throw RealmError.invalidConfiguration("writeCopy needs a configuration with a file URL")
        }
        try writeCopy(toFile: URL(fileURLWithPath: path), encryptionKey: configuration.encryptionKey)
    }
}
