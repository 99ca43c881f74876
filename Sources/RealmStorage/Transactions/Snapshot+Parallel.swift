import Dispatch
import Foundation

/// How a long read of one table is split across the processors (DECISIONS 104).
public enum ParallelReads {
    /// The threads one read may use: the processors this process may run on, or `REALM_READ_THREADS` when set
    /// to a positive number (1 reads on the calling thread only).
    public static let processors: Int = {
        if let text = ProcessInfo.processInfo.environment["REALM_READ_THREADS"], let n = Int(text), n > 0 { return n }
        return max(1, ProcessInfo.processInfo.activeProcessorCount)
    }()

    /// A run shorter than this is not given a thread of its own: a sibling snapshot and a thread hand-off cost
    /// tens of microseconds, a scan of this many objects a few hundred to a few thousand.
    public static let minimumObjectsPerRun = 65_536

    /// The number of runs a table of `objects` objects is read in.
    public static func runs(objects: Int) -> Int { max(1, min(processors, objects / minimumObjectsPerRun)) }
}

/// Set by the first run that fails; the others stop at their next leaf.
private final class RunFailure: @unchecked Sendable {
    // Safe: `failed` is read and written under `lock`.
    private let lock = PthreadMutex()
    private var failed = false
    func set() { lock.withLock { failed = true } }
    var isSet: Bool { lock.withLock { failed } }
}

/// What the threads of one parallel read share: the readers, the body, and a result slot per run.
private final class RunContext<R>: @unchecked Sendable {
    // Safe: each thread writes only its own slot of `results` and reads the other fields, which do not change;
    // the caller reads the slots after every thread has finished.
    let readers: [Snapshot]
    let body: (Int, Snapshot) throws -> R
    let results: UnsafeMutablePointer<Result<R, any Error>?>
    let failure: RunFailure

    init(readers: [Snapshot], failure: RunFailure, body: @escaping (Int, Snapshot) throws -> R) {
        self.readers = readers
        self.failure = failure
        self.body = body
        results = .allocate(capacity: readers.count)
        results.initialize(repeating: nil, count: readers.count)
    }

    deinit {
        results.deinitialize(count: readers.count)
        results.deallocate()
    }

    func run(_ i: Int) {
        let result = Result { try body(i, readers[i]) }
        if case .failure = result { failure.set() }
        results[i] = result
    }
}

extension Snapshot {
    /// The leaves of `classID` in `k` runs of whole leaves that tile the table in key order, each run read on a
    /// thread of its own by a snapshot of this version (the first run by this one, the others by siblings
    /// opened for the read and closed after it); `body(run, reader, visit)` reads one run. The results come
    /// back in key order. Only a committed snapshot of a plain file splits (a write transaction's changes are
    /// its thread's; an encrypted file's long scans give decrypted pages back between leaves, which needs the
    /// only snapshot open): anything else is one run on this thread.
    func leafRuns<R>(_ classID: UInt32, runs requested: Int?,
                     _ body: @escaping (Int, Snapshot, ((LeafAccess) throws -> Bool) throws -> Void) throws -> R) throws -> [R] {
        let c = try classInfo(TableHandle(name: className(classID), classID: classID))
        let n = Int(c.objectCount)
        let splits = !(self is WriteTransaction) && !database.isEncrypted
        let k = splits ? max(1, min(requested ?? ParallelReads.runs(objects: n), n)) : 1
        if k == 1 {
            return [try body(0, self) { visit in try walkLeaves(classID, visit) }]
        }
        guard case .clean(let root) = root(of: classID) else { preconditionFailure("a committed snapshot's table root is clean") }
        var readers: [Snapshot] = [self]
        defer { for r in readers.dropFirst() { r.close() } }
        for _ in 1..<k { readers.append(try sibling()) }
        let failure = RunFailure()
        let context = RunContext(readers: readers, failure: failure) { i, reader in
            let firsts = (n * i / k)..<(n * (i + 1) / k)
            return try body(i, reader) { visit in
                _ = try reader.naming(classID) {
                    try TableTree.forEachLeaf(committed: root, source: reader, firsts: firsts) { leaf in
                        if failure.isSet { return false }
                        return try visit(leaf)
                    }
                }
            }
        }
        DispatchQueue.concurrentPerform(iterations: k) { i in context.run(i) }
        // The first failure in key order; a run stopped because another failed has none of its own or the same.
        return try (0..<k).map { try context.results[$0]!.get() }
    }

    /// `scan` in runs of whole leaves on several threads (see `ObjectReader.scanRuns`).
    public func scanRuns<R>(_ table: TableHandle, runs: Int?,
                            _ body: @escaping (Int, any ObjectReader, ((LeafCursor) throws -> Bool) throws -> Void) throws -> R) throws -> [R] {
        _ = try classInfo(table)
        return try leafRuns(table.classID, runs: runs) { i, reader, walk in
            try withoutActuallyEscaping(walk) { walk in
                try body(i, reader) { visit in
                    try withoutActuallyEscaping(visit) { visit in try walk { try visit(LeafCursor(leaf: $0, source: reader)) } }
                }
            }
        }
    }
}
