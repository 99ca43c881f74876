import RealmQuery
import RealmStorage

/// Work that runs off the main loop (`BrowserApp` runs it on a thread of its own, with its own snapshot): a
/// query or sort of a table, an export, a large list read when it is opened, or the tables shown read again
/// in a version another process committed. Keys and resizing keep working meanwhile and `Esc` can stop it.
public struct QueryJob: Equatable, Sendable {
    /// Unique in a session: a result or a progress report names the job it is for.
    public let id: Int
    public let work: Work
    /// The table it is for: its depth in the stack and what it shows without a query.
    public let depth: Int
    public let base: TableSource
    /// What the table shows once the result is in (the typed query, trimmed, and the column sort).
    public let query: String
    public let sort: ColumnSort?
    /// Why it runs: what the status bar says while it does, and after.
    public let purpose: Purpose

    /// What runs: a query (or sort) of the table, an export of what it shows, the reading of a collection
    /// table before it opens, or the tables shown brought to a newer version.
    public enum Work: Sendable {
        case query(PreparedTableQuery)
        case export(TableExport)
        case open(TableSource)
        case update(VersionUpdate)
    }

    public enum Purpose: Equatable, Sendable {
        /// A query submitted in the query bar.
        case query
        /// `[` / `]` on a column (the sort added, or removed when nil).
        case sort(ColumnSort?, property: String)
        /// `:export PATH`.
        case export(path: String)
        /// Enter on a list, set, dictionary or incoming links: the table `base` opens once read.
        case open
        /// Another process committed: the tables shown are read again in its version before it is shown.
        /// A query or sort that was running when it began is carried along (`absorbing`), its result shown
        /// with the new version.
        indirect case update(absorbing: QueryJob?)
    }

    /// A query or sort, as opposed to an export.
    var isQuery: Bool {
        if case .query = work { return true }
        return false
    }

    /// Jobs are the same when their ids are (a prepared query is not compared).
    public static func == (a: QueryJob, b: QueryJob) -> Bool { a.id == b.id }

    /// What the status bar says while it runs, before the engine reports a phase.
    var label: String {
        switch purpose {
        case .query: return "querying"
        case .sort: return "sorting"
        case .export: return "exporting"
        case .open: return "opening \(base.crumb)"
        case .update(let absorbed): return absorbed?.label ?? "updating"
        }
    }

    /// The query or sort this job shows once it ends: itself, or the one an update carries.
    var queryJob: QueryJob? {
        if isQuery { return self }
        if case .update(let absorbed) = purpose { return absorbed }
        return nil
    }
}

/// How far the running job is, as the status bar shows it.
public struct JobProgress: Equatable, Sendable {
    /// `querying`, `sorting`, `opening dogs`.
    public var label: String
    /// nil when the work cannot tell (one read of a whole list).
    public var percent: Int?
}

/// How a job ended.
public enum JobOutcome: Equatable, Sendable {
    /// The keys to show.
    case filter(KeyFilter)
    /// The number of objects exported.
    case exported(Int)
    /// The query could not run (a query error points into the typed text).
    case failed(QueryFailure)
    /// A collection table's contents, read for it to open.
    case collection(CollectionContents)
    /// The tables shown, read in a newer version.
    case updated(UpdateResult)
    /// It was stopped before it finished.
    case cancelled
}

extension AppState {
    /// Runs a query on a table in the background: the reducer stays quick, `BrowserApp` takes the job from
    /// `task` and reports back with `.jobProgress` and `.jobFinished`. A job already running is replaced.
    mutating func start(_ work: QueryJob.Work, query: String, sort: ColumnSort?, purpose: QueryJob.Purpose,
                        depth: Int? = nil) {
        let depth = depth ?? stack.count
        guard depth >= 1, depth <= stack.count, case .table(let t) = stack[depth - 1] else { return }
        nextJobID += 1
        let job = QueryJob(id: nextJobID, work: work, depth: depth, base: t.source.base,
                           query: query.trimmingCharacters(in: .whitespaces), sort: sort, purpose: purpose)
        running = job
        jobProgress = JobProgress(label: job.label, percent: 0)
        task = .query(job)
    }

    /// The query and sort a table is getting: those of the job running for it, else those it shows. (A sort
    /// asked for while a query runs sorts that query's result, and a query typed while a sort runs keeps it.)
    func pendingQueryAndSort(_ t: TableScreen) -> (query: String, sort: ColumnSort?) {
        pendingQueryAndSort(t, depth: stack.count)
    }

    /// The same for the table at `depth` in the stack.
    func pendingQueryAndSort(_ t: TableScreen, depth: Int) -> (query: String, sort: ColumnSort?) {
        if let job = running?.queryJob, job.depth == depth, job.base == t.source.base { return (job.query, job.sort) }
        return (t.query, t.sort)
    }

    /// `Esc` while a job runs: it stops, and the table stays as it was before it.
    mutating func cancelRunningJob() {
        guard let job = running else { return }
        running = nil
        jobProgress = nil
        switch job.purpose {
        case .sort: message = StatusMessage("Sorting cancelled: the table is as it was")
        case .query: message = StatusMessage("Query cancelled: the table is as it was")
        case .export(let path): message = StatusMessage("Export cancelled: \(path) was not written")
        case .open: message = StatusMessage("Opening \(job.base.crumb) cancelled")
        case .update(let absorbed?):
            message = StatusMessage(absorbed.purpose == .query ? "Query cancelled: the table is as it was"
                                                                : "Sorting cancelled: the table is as it was")
        case .update(nil):
            message = StatusMessage(AppState.updateCancelled)
        }
    }

    /// After a new version: the running job starts again on it (its result would show objects of the old one).
    mutating func restartRunningJob(_ data: BrowserData) {
        // An export writes the version it started on, whole.
        guard let job = running, case .query(let prepared) = job.work else { return }
        guard job.depth <= stack.count, case .table(let t) = stack[job.depth - 1], t.source.base == job.base else { return }
        do {
            start(.query(try data.prepare(prepared.query, on: t.source)), query: job.query, sort: job.sort, purpose: job.purpose, depth: job.depth)
        } catch {
            running = nil
            jobProgress = nil
            message = StatusMessage("The query no longer applies: \(error)", isError: true)
        }
    }

    /// A job whose table was closed (gone back from, or another class chosen) stops without a word.
    mutating func dropJobWithoutItsTable() {
        // A list being opened is for the screen it was asked from.
        if let job = running, job.purpose == .open, stack.count != job.depth {
            running = nil
            jobProgress = nil
            return
        }
        // An export goes on wherever one goes meanwhile (and an update brings every table shown).
        guard let job = running, job.isQuery else { return }
        if stack.count >= job.depth, case .table(let t) = stack[job.depth - 1], t.source.base == job.base { return }
        running = nil
        jobProgress = nil
    }

    mutating func jobFinished(_ id: Int, _ outcome: JobOutcome, data: BrowserData) {
        guard let job = running, job.id == id else { return }
        running = nil
        jobProgress = nil
        if case .export(let path) = job.purpose {
            switch outcome {
            case .exported(let n): message = StatusMessage("Exported \(ValueFormat.grouped(n)) objects to \(path)")
            case .failed(let f): message = StatusMessage("export: \(f.message)", isError: true)
            case .cancelled, .filter, .collection, .updated: message = StatusMessage("Export cancelled: \(path) was not written")
            }
            return
        }
        if job.purpose == .open {
            opened(job, outcome)
            return
        }
        if case .updated(let result) = outcome {
            updated(job, result, data: data)
            return
        }
        guard stack.count >= job.depth, case .table(var t) = stack[job.depth - 1], t.source.base == job.base else { return }
        switch outcome {
        case .cancelled, .exported, .collection, .updated:
            message = StatusMessage("Query cancelled: the table is as it was")
        case .failed(let f):
            if job.purpose == .query, job.depth == stack.count, prompt == nil {
                // Back in the query bar, with the mistake pointed at.
                var p = Prompt(kind: .query, text: job.query)
                p.error = PromptError(message: f.message, start: f.start, width: f.width)
                prompt = p
            } else {
                let what: String
                if case .sort(_, let property) = job.purpose { what = "Cannot sort by \(property)" } else { what = "The query failed" }
                message = StatusMessage("\(what): \(f.message)", isError: true)
            }
        case .filter(let filter):
            show(filter, query: job.query, sort: job.sort, on: &t, data: data)
            stack[job.depth - 1] = .table(t)
            switch job.purpose {
            case .query:
                message = StatusMessage(matchSummary(t, data: data))
            case .export, .open, .update: break
            case .sort(let sort, _):
                message = StatusMessage(sort.map { "Sorted by \($0.property) \($0.ascending ? "ascending" : "descending")" }
                                        ?? "Sort removed: \(t.query.isEmpty ? "key order" : "query order")")
            }
        }
    }

    /// Shows a result on a table, the selected object kept selected when it is still there.
    func show(_ filter: KeyFilter?, query: String, sort: ColumnSort?, on t: inout TableScreen, data: BrowserData) {
        let source = t.source.with(filter: filter)
        let selected = t.selectedKey
        t.source = source
        t.query = query.trimmingCharacters(in: .whitespaces)
        t.sort = sort
        if let selected, let pos = try? data.position(of: selected, in: source) {
            t.row = pos
        } else {
            t.row = 0
            t.top = 0
        }
    }
}
