import Synchronization

/// How far a running query has come, and a way to stop it: shared between the thread that runs the query and
/// one that watches it (the browser's main loop draws it in the status bar).
///
/// A query given one checks it once per leaf of objects it scans (a few thousand objects), every 256 objects
/// it reads one at a time (sort values through links, DISTINCT, the elements of a list), and every 65,536
/// comparisons while it sorts; after `cancel()` it throws a `QueryError` of kind `.cancelled` at the next
/// check. A query without one checks nothing.
public final class QueryProgress: Sendable {
    /// What the query is doing: finding the matching objects, then ordering them.
    public enum Phase: Sendable, Equatable {
        case scanning, sorting
    }

    /// The phase and how far it is: `done` of `total` (objects examined while scanning; while sorting, sort
    /// values read then comparisons made, against an estimate of 1.5·n·log2 n, so `done` stays below `total`
    /// until the sort ends).
    public struct Status: Sendable, Equatable {
        public var phase: Phase
        public var done: Int
        public var total: Int

        /// 0 to 100.
        public var percent: Int { total > 0 ? min(100, done * 100 / total) : 0 }
    }

    private let state = Mutex(Status(phase: .scanning, done: 0, total: 0))
    private let cancelled = Atomic<Bool>(false)
    private let checkpoint: (@Sendable (QueryProgress) -> Void)?

    /// `checkpoint` runs on the query's thread at every check, after the progress is counted and before the
    /// cancel flag is read (tests hold a query at a known point with it).
    public init(checkpoint: (@Sendable (QueryProgress) -> Void)? = nil) {
        self.checkpoint = checkpoint
    }

    /// The phase and how far it is, read at one moment.
    public var current: Status { state.withLock { $0 } }

    /// Asks the query to stop at its next check.
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Starts a phase of `total` units, then checks. (Public so that other long work, an export of a query's
    /// result, can report through the same object.)
    public func begin(_ phase: Phase, total: Int) throws {
        state.withLock { $0 = Status(phase: phase, done: 0, total: total) }
        try check()
    }

    /// Counts `units` more done in the current phase (never past `total` − 1: the phase ends when the work
    /// does), then checks.
    public func advance(by units: Int) throws {
        state.withLock { $0.done = min($0.done + units, max(0, $0.total - 1)) }
        try check()
    }

    /// Throws `.cancelled` when `cancel()` was called.
    public func check() throws {
        checkpoint?(self)
        if cancelled.load(ordering: .relaxed) {
            throw QueryError(.cancelled, "the query was cancelled", query: "", range: SourceRange(0, 0))
        }
    }

    /// The units of a sort phase over `n` values: one per value read, then an estimate of the comparisons.
    static func sortUnits(_ n: Int) -> Int {
        guard n > 1 else { return max(n, 1) }
        // The standard library's sort made 1.26–1.41 n·log2 n comparisons on 20,000 to 4,000,000 values.
        return n + n * (Int.bitWidth - n.leadingZeroBitCount) * 3 / 2
    }
}

extension QueryError {
    /// True for the error a cancelled query throws (`QueryProgress.cancel()`), as opposed to a query that
    /// cannot run.
    public var isCancellation: Bool { kind == .cancelled }
}
