import Foundation
import RealmQuery
import RealmStorage
import Synchronization

/// Runs one `QueryJob` on a thread of its own, over a snapshot of its own (a sibling of the browser's, so the
/// same version), while the main loop keeps reading keys. The main loop reads `progress` and `outcome`; the
/// worker touches nothing else of the browser.
final class QueryWorker: Sendable {
    let jobID: Int
    let progress: QueryProgress
    private let result = Mutex<JobOutcome?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// A snapshot handed to the worker thread: created on the main thread, used and closed by the worker
    /// only from then on (a snapshot belongs to one thread at a time).
    private struct Handover: @unchecked Sendable {
        let snapshot: any ObjectReader
    }

    /// Starts the job on `snapshot` (which the worker closes when done). `checkpoint` runs at every check of
    /// the query (tests hold the worker with it).
    init(job: QueryJob, snapshot: any ObjectReader, checkpoint: (@Sendable (QueryProgress) -> Void)? = nil) {
        jobID = job.id
        progress = QueryProgress(checkpoint: checkpoint)
        let handover = Handover(snapshot: snapshot)
        let work = job.work
        let thread = Thread { [self] in
            let s = handover.snapshot
            let outcome: JobOutcome
            do {
                outcome = try work.run(in: s, progress: progress)
            } catch let e as QueryError where e.isCancellation {
                outcome = .cancelled
            } catch let f as QueryFailure {
                outcome = .failed(f)
            } catch {
                outcome = .failed(QueryFailure(message: "\(error)", start: 0, width: 0))
            }
            s.close()
            result.withLock { $0 = outcome }
            finished.signal()
        }
        thread.name = "realm-browser query"
        // Sorting recurses; a secondary thread's default stack is small.
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// How the job ended, or nil while it runs.
    var outcome: JobOutcome? { result.withLock { $0 } }

    /// Waits up to `milliseconds` for the job to end; its outcome, or nil when it still runs.
    func wait(milliseconds: Int) -> JobOutcome? {
        if let o = outcome { return o }
        guard finished.wait(timeout: .now() + .milliseconds(max(0, milliseconds))) == .success else { return nil }
        finished.signal()    // for a later wait
        return outcome
    }

    /// Asks the job to stop at its next check (once per leaf of objects: promptly).
    func cancel() { progress.cancel() }
}

extension QueryJob.Work {
    /// Runs the work: a query's keys, or the number of objects exported.
    func run(in snapshot: any ObjectReader, progress: QueryProgress?) throws -> JobOutcome {
        switch self {
        case .query(let q): return .filter(try q.run(in: snapshot, progress: progress))
        case .export(let e): return .exported(try e.run(in: snapshot, progress: progress))
        }
    }
}

extension BrowserApp {
    /// Starts a job: at once on this thread inside a write transaction (the query must see its uncommitted
    /// changes, which only this thread's transaction holds), otherwise on a worker. A job that ends within
    /// `quickJobMilliseconds` shows its result before the next screen is drawn, as if it had run here.
    func startJob(_ job: QueryJob) {
        stopWorker()
        if data.isInTransaction {
            let outcome: JobOutcome
            do {
                outcome = try job.work.run(in: data.snapshot, progress: nil)
            } catch let f as QueryFailure {
                outcome = .failed(f)
            } catch {
                outcome = .failed(QueryFailure(message: "\(error)", start: 0, width: 0))
            }
            state.reduce(.jobFinished(id: job.id, outcome), data: data, keyMap: keyMap)
            return
        }
        let snapshot: any ObjectReader
        do {
            snapshot = try data.snapshot.openSibling()
        } catch {
            state.reduce(.jobFinished(id: job.id, .failed(QueryFailure(message: "\(error)", start: 0, width: 0))), data: data, keyMap: keyMap)
            return
        }
        let w = QueryWorker(job: job, snapshot: snapshot, checkpoint: jobCheckpoint)
        worker = w
        if let outcome = w.wait(milliseconds: quickJobMilliseconds) {
            worker = nil
            state.reduce(.jobFinished(id: job.id, outcome), data: data, keyMap: keyMap)
        }
    }

    /// Cancels the worker's job, if any. With `wait`, waits for it to stop (its next check comes within a
    /// leaf of objects) before the file is compacted or replaced; otherwise it ends on its own, closing its
    /// snapshot, and the main loop goes on at once.
    func stopWorker(wait: Bool = false) {
        guard let w = worker else { return }
        w.cancel()
        if wait { _ = w.wait(milliseconds: 10_000) }
        worker = nil
    }

    /// Brings the state up to date with the worker: its progress, or its result once it ended. A worker
    /// whose job the state no longer wants (cancelled with Esc, replaced, its table closed) is stopped.
    /// True when the state changed.
    @discardableResult
    public func pollJob() -> Bool {
        guard let w = worker else { return false }
        guard state.running?.id == w.jobID else {
            stopWorker()
            return false
        }
        if let outcome = w.outcome {
            worker = nil
            state.reduce(.jobFinished(id: w.jobID, outcome), data: data, keyMap: keyMap)
            return true
        }
        let now = w.progress.current
        // Each phase counts from 0 to 100 under its own word: a column sort reads the objects, then sorts.
        let label: String
        switch (now.phase, state.running?.purpose) {
        case (.sorting, _): label = "sorting"
        case (.scanning, .sort?): label = "reading"
        case (.scanning, _): label = state.running?.label ?? "querying"
        }
        let shown = JobProgress(label: label, percent: now.percent)
        guard shown != state.jobProgress else { return false }
        state.reduce(.jobProgress(id: w.jobID, shown), data: data, keyMap: keyMap)
        return true
    }

    /// Waits for the running job to end and shows its result (tests; `timeoutMilliseconds` bounds the wait).
    @discardableResult
    public func waitForJob(timeoutMilliseconds: Int = 60_000) -> Bool {
        guard let w = worker else { return false }
        _ = w.wait(milliseconds: timeoutMilliseconds)
        pollJob()
        draw()
        return true
    }
}
