import Dispatch
import Foundation
import RealmCoreFile
import RealmStorage

extension CoreFileReader {
    /// `scan` split across the processors, as on our own files (`ObjectReader.scanRuns`, DECISIONS 104, 120): the
    /// class in `k` runs of whole leaves that tile it in key order (`RealmCoreFile.forEachLeaf(of:firsts:)`: a
    /// leaf belongs to the run its first object's position falls in), each read on a thread of its own. Every
    /// run reads through this reader: it is immutable once made, and the file's only shared state, the decrypted
    /// pages of an encrypted file, is guarded by its own lock, so encrypted files split too. The results come
    /// back in key order; the first failure in key order is thrown, after every run has stopped.
    public func scanRuns<R>(_ table: TableHandle, runs requested: Int?,
                            _ body: @escaping (Int, any ObjectReader, ((LeafCursor) throws -> Bool) throws -> Void) throws -> R) throws -> [R] {
        let c = try classNumber(table)
        let cls = classes[c]
        let n = cls.objectCount
        let k = max(1, min(requested ?? ParallelReads.runs(objects: n), n))
        if k == 1 {
            return [try body(0, self) { visit in try scan(table, visit) }]
        }
        let failure = CoreRunFailure()
        let context = CoreRunContext<R>(count: k) { [self] i in
            // The first run from 0 and the last to the end, whatever the counts say: nothing falls between runs.
            let firsts = (i == 0 ? 0 : n * i / k)..<(i == k - 1 ? Int.max : n * (i + 1) / k)
            return try body(i, self) { visit in
                try self.file.forEachLeaf(of: cls, firsts: firsts) { leaf in
                    if failure.isSet { return false }
                    return try visit(LeafCursor(foreign: CoreLeafView(reader: self, classNumber: c, leaf: leaf)))
                }
            }
        } failed: {
            failure.set()
        }
        DispatchQueue.concurrentPerform(iterations: k) { i in context.run(i) }
        // The first failure in key order; a run stopped because another failed has none of its own or the same.
        return try (0..<k).map { try context.result($0) }
    }
}

/// Set by the first run that fails; the others stop at their next leaf.
private final class CoreRunFailure: @unchecked Sendable {
    // Safe: `failed` is read and written under `lock`.
    private let lock = NSLock()
    private var failed = false
    func set() { lock.withLock { failed = true } }
    var isSet: Bool { lock.withLock { failed } }
}

/// What the threads of one split read share: the work of a run, and a result slot per run.
private final class CoreRunContext<R>: @unchecked Sendable {
    // Safe: each thread writes only its own slot of `results` and reads the other fields, which do not change;
    // the caller reads the slots after every thread has finished (`concurrentPerform` returns after them).
    let count: Int
    let work: (Int) throws -> R
    let failed: () -> Void
    let results: UnsafeMutablePointer<Result<R, any Error>?>

    init(count: Int, work: @escaping (Int) throws -> R, failed: @escaping () -> Void) {
        self.count = count
        self.work = work
        self.failed = failed
        results = .allocate(capacity: count)
        results.initialize(repeating: nil, count: count)
    }

    deinit {
        results.deinitialize(count: count)
        results.deallocate()
    }

    func run(_ i: Int) {
        let result = Result { try work(i) }
        if case .failure = result { failed() }
        results[i] = result
    }

    func result(_ i: Int) throws -> R {
        guard let r = results[i] else { preconditionFailure("run \(i) did not finish") }
        return try r.get()
    }
}
