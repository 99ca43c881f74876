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
    /// Runs the work: a query's keys, the number of objects exported, a collection's elements, or the tables
    /// shown read in a newer version.
    func run(in snapshot: any ObjectReader, progress: QueryProgress?) throws -> JobOutcome {
        switch self {
        case .query(let q): return .filter(try q.run(in: snapshot, progress: progress))
        case .export(let e): return .exported(try e.run(in: snapshot, progress: progress))
        case .open(let source):
            // One read of the whole collection: it can be stopped before it, not during it.
            try progress?.begin(.scanning, total: 1)
            return .collection(try BrowserData.readCollection(source, in: snapshot))
        case .update(let u): return .updated(try u.run(in: snapshot, progress: progress))
        }
    }
}

extension BrowserApp {
    /// Starts a job: at once on this thread inside a write transaction (the query must see its uncommitted
    /// changes, which only this thread's transaction holds), otherwise on a worker. A job that ends within
    /// `quickJobMilliseconds` shows its result before the next screen is drawn, as if it had run here.
    func startJob(_ job: QueryJob) {
        stopWorker()
        if let u = updating {
            updating = nil
            // A query or sort asked for while the screen is brought to a newer version runs in that version.
            if job.isQuery {
                startUpdate(u.newer, absorbing: job)
                return
            }
            // Other work reads the version shown; the newer one is taken again once it ends.
            u.newer.close()
        }
        if data.isInTransaction {
            let outcome: JobOutcome
            do {
                outcome = try job.work.run(in: data.snapshot, progress: nil)
            } catch let f as QueryFailure {
                outcome = .failed(f)
            } catch {
                outcome = .failed(QueryFailure(message: "\(error)", start: 0, width: 0))
            }
            finish(job.id, outcome, readFrom: data.snapshot)
            return
        }
        let snapshot: any ObjectReader
        do {
            snapshot = try data.snapshot.openSibling()
        } catch {
            state.reduce(.jobFinished(id: job.id, .failed(QueryFailure(message: "\(error)", start: 0, width: 0))), data: data, keyMap: keyMap)
            return
        }
        runOnWorker(job, reading: snapshot, readFrom: data.snapshot)
    }

    /// Runs `job` on a worker over `snapshot`, waiting up to `quickJobMilliseconds` so quick work shows in the
    /// same frame. `readFrom`: the reader shown when it started (nil for an update, read from a newer version).
    private func runOnWorker(_ job: QueryJob, reading snapshot: any ObjectReader, readFrom: AnyObject?) {
        let w = QueryWorker(job: job, snapshot: snapshot, checkpoint: jobCheckpoint)
        worker = w
        workerReadFrom = readFrom
        if let outcome = w.wait(milliseconds: quickJobMilliseconds) {
            worker = nil
            finish(job.id, outcome, readFrom: readFrom)
        }
    }

    /// Starts reading the tables shown in `newer` (another process committed it), carrying along the query or
    /// sort `absorbing` that was running: the screen keeps showing the version it shows, whole, until they
    /// are in. A job reading an older newer version is stopped.
    func startUpdate(_ newer: BrowserData.NewerVersion, absorbing: QueryJob?) {
        stopWorker()
        if let u = updating, u.newer !== newer { u.newer.close() }
        let job = state.startUpdate(absorbing: absorbing)
        let u = Update(jobID: job.id, newer: newer, absorbing: absorbing, shown: data.snapshot)
        updating = u
        let sibling: any ObjectReader
        do {
            sibling = try newer.reader.openSibling()
        } catch {
            finishUpdate(u, .failed(QueryFailure(message: "\(error)", start: 0, width: 0)))
            return
        }
        runOnWorker(job, reading: sibling, readFrom: nil)
    }

    /// A job ended: its outcome goes to the reducer. A collection read is kept for the version it was read
    /// in (`readFrom`, the reader shown when it started); an update's newer version is shown first.
    func finish(_ id: Int, _ outcome: JobOutcome, readFrom reader: AnyObject?) {
        if let u = updating, u.jobID == id {
            finishUpdate(u, outcome)
            return
        }
        if case .collection(let contents) = outcome, let job = state.running, job.id == id {
            guard reader === data.snapshot else {
                // Not for the version shown now (cannot happen while updates wait for a list being opened).
                state.running = nil
                state.jobProgress = nil
                state.message = StatusMessage("\(job.base.crumb) changed while it was read: Enter opens it again")
                return
            }
            data.install(contents, for: job.base)
        }
        state.reduce(.jobFinished(id: id, outcome), data: data, keyMap: keyMap)
    }

    /// An update ended: when what it read still covers every table shown, the newer version becomes the one
    /// shown, with those tables; otherwise (a table opened or a class chosen meanwhile) it starts again on the
    /// newest version.
    func finishUpdate(_ u: Update, _ outcome: JobOutcome) {
        updating = nil
        guard let job = state.running, job.id == u.jobID, case .update(let plan) = job.work,
              case .update(let absorbed) = job.purpose else {
            u.newer.close()
            return
        }
        switch outcome {
        case .updated(let result):
            guard data.snapshot === u.shown else {
                // Not reached: `settleUpdate` drops an update as soon as the version shown changes here.
                u.newer.close()
                state.running = nil
                state.jobProgress = nil
                return
            }
            guard state.updateCovers(plan.tables) else {
                var newer = u.newer
                do {
                    if let newest = try data.newerVersion(than: u.newer) {
                        u.newer.close()
                        newer = newest
                    }
                } catch {
                    state.message = StatusMessage("Reading the newest version failed: \(error)", isError: true)
                }
                startUpdate(newer, absorbing: absorbed)
                return
            }
            data.show(u.newer)
            for (plan, update) in result.tables {
                if case .shown(let contents?, _) = update { data.install(contents, for: plan.base) }
            }
            state.reduce(.jobFinished(id: job.id, outcome), data: data, keyMap: keyMap)
        case .failed(let f):
            // The newer version could not be read apart: shown here, as it was before updates had jobs.
            state.running = nil
            state.jobProgress = nil
            data.show(u.newer)
            state.reduce(.databaseChanged, data: data, keyMap: keyMap)
            state.message = StatusMessage("Reading the newest version failed: \(f.message)", isError: true)
        case .cancelled, .filter, .exported, .collection:
            state.running = nil
            state.jobProgress = nil
            u.newer.close()
        }
    }

    /// An update whose job the state no longer runs: `Esc` declined its version (the screen stays on the one
    /// it shows until the next commit; when it carried a query, only the query is cancelled and the version
    /// is taken again at the next poll), or other work (a list opened, an export) goes first.
    /// An update is dropped too when the version shown changes here (an edit committed, a transaction begun):
    /// it was for an older one, and the next poll looks again; a query it carried runs on the version shown.
    func settleUpdate() {
        guard let u = updating else { return }
        if data.snapshot !== u.shown {
            updating = nil
            u.newer.close()
            guard state.running?.id == u.jobID else { return }
            stopWorker()
            state.running = u.absorbing
            state.jobProgress = nil
            if u.absorbing != nil {
                state.restartRunningJob(data)
                runPendingTask()
            }
            return
        }
        guard state.running?.id != u.jobID else { return }
        updating = nil
        if state.running == nil && u.absorbing == nil {
            data.decline(u.newer)
        } else {
            u.newer.close()
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
        workerReadFrom = nil
    }

    /// Brings the state up to date with the worker: its progress, or its result once it ended. A worker
    /// whose job the state no longer wants (cancelled with Esc, replaced, its table closed) is stopped.
    /// True when the state changed.
    @discardableResult
    public func pollJob() -> Bool {
        guard let w = worker else { return false }
        guard state.running?.id == w.jobID else {
            stopWorker()
            settleUpdate()
            return false
        }
        if let outcome = w.outcome {
            let reader = workerReadFrom
            worker = nil
            workerReadFrom = nil
            finish(w.jobID, outcome, readFrom: reader)
            return true
        }
        let now = w.progress.current
        // Each phase counts from 0 to 100 under its own word: a column sort reads the objects, then sorts.
        let running = state.running
        let label: String
        switch (now.phase, running?.queryJob?.purpose ?? running?.purpose) {
        case (_, .open?): label = running?.label ?? "opening"
        case (.sorting, _): label = "sorting"
        case (.scanning, .sort?): label = "reading"
        case (.scanning, _): label = running?.label ?? "querying"
        }
        // A collection is read in one step: no percentage (an update reading one says `updating…` alone).
        let shown = JobProgress(label: label, percent: running?.purpose == .open || now.total <= 1 ? nil : now.percent)
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

/// A newer version being read by an update job, not shown yet.
struct Update {
    let jobID: Int
    let newer: BrowserData.NewerVersion
    /// The query or sort that was running when it began, carried along.
    let absorbing: QueryJob?
    /// The reader shown when it began: the update is for the version after that one.
    let shown: AnyObject
}
