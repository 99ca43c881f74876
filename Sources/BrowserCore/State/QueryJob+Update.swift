import RealmQuery
import RealmStorage

/// A table the screen shows that a newer version must be read for before it is shown: a collection table
/// (its elements), or a table with a query or sort (its result).
public struct TablePlan: Equatable, Sendable {
    /// Where it is in the stack, what it shows without a query, and its query and sort.
    public var depth: Int
    public var base: TableSource
    public var query: String
    public var sort: ColumnSort?
}

/// The tables shown, to read again in a newer version (`QueryJob.Work.update`).
public struct VersionUpdate: Sendable {
    public var tables: [TablePlan]

    /// Reads each table in `reader` (a sibling of the newer version): a collection's elements, then the
    /// query's result over them. A table that cannot be read there any more says why; cancelling throws.
    func run(in reader: any ObjectReader, progress: QueryProgress?) throws -> UpdateResult {
        var out: [(TablePlan, TableUpdate)] = []
        for plan in tables {
            do {
                var contents: CollectionContents?
                var keys: [ObjectKey]?
                if case .objects = plan.base {} else {
                    try progress?.begin(.scanning, total: 1)
                    let read = try BrowserData.readCollection(plan.base, in: reader)
                    contents = read
                    if BrowserData.rowClass(plan.base, in: reader) != nil {
                        keys = read.values.compactMap { if case .link(let k) = $0 { return k } else { return nil } }
                    }
                }
                var filter: KeyFilter?
                if let q = TableQuery(query: plan.query, sort: plan.sort) {
                    filter = try BrowserData.prepare(q, on: plan.base, keys: keys, in: reader).run(in: reader, progress: progress)
                }
                out.append((plan, .shown(contents, filter)))
            } catch let e as QueryError where e.isCancellation {
                throw e
            } catch let f as QueryFailure {
                out.append((plan, .failed(f.message)))
            } catch {
                out.append((plan, .failed("\(error)")))
            }
        }
        return UpdateResult(tables: out)
    }
}

/// One table read in a newer version.
public enum TableUpdate: Sendable {
    /// Its elements (a collection table) and its query's result (nil: none).
    case shown(CollectionContents?, KeyFilter?)
    /// Why it cannot be shown as it was (the schema changed under its query, its collection went away).
    case failed(String)
}

/// The tables of a `VersionUpdate`, read. Compared by identity.
public final class UpdateResult: Equatable, @unchecked Sendable {
    // @unchecked: immutable after init.
    public let tables: [(plan: TablePlan, update: TableUpdate)]

    init(tables: [(TablePlan, TableUpdate)]) { self.tables = tables.map { (plan: $0.0, update: $0.1) } }

    public static func == (a: UpdateResult, b: UpdateResult) -> Bool { a === b }
}

extension AppState {
    /// What `Esc` during an update says.
    static let updateCancelled = "Update cancelled: the older version stays until the next commit"

    /// The tables a newer version must be read for before the screen shows it: every collection table on
    /// the stack, and every table with a query or sort (the one a running query brings, where one runs).
    /// Empty when the newer version can be shown at once.
    func updatePlan() -> [TablePlan] {
        var out: [TablePlan] = []
        for (i, screen) in stack.enumerated() {
            guard case .table(let t) = screen else { continue }
            let (query, sort) = pendingQueryAndSort(t, depth: i + 1)
            let base = t.source.base
            if case .objects = base, TableQuery(query: query, sort: sort) == nil { continue }
            out.append(TablePlan(depth: i + 1, base: base, query: query.trimmingCharacters(in: .whitespaces), sort: sort))
        }
        return out
    }

    /// Whether `plan` (what an update read) still covers every table the screen shows.
    func updateCovers(_ plan: [TablePlan]) -> Bool {
        updatePlan().allSatisfy { plan.contains($0) }
    }

    /// Starts reading the tables shown in a newer version (`BrowserApp` found one); a query or sort that runs
    /// is carried along. Returns the job, which replaces the running one.
    mutating func startUpdate(absorbing: QueryJob?) -> QueryJob {
        nextJobID += 1
        let placeholder = QueryJob(id: nextJobID, work: .update(VersionUpdate(tables: [])), depth: stack.count,
                                   base: .objects(className: "", filter: nil), query: "", sort: nil, purpose: .update(absorbing: absorbing))
        // The plan is made with the job in place, so that it reads the carried query's table with that query.
        running = placeholder
        let job = QueryJob(id: placeholder.id, work: .update(VersionUpdate(tables: updatePlan())), depth: stack.count,
                           base: placeholder.base, query: "", sort: nil, purpose: placeholder.purpose)
        running = job
        // Only collections to read: one step each, no percentage.
        let queries = updatePlan().contains { TableQuery(query: $0.query, sort: $0.sort) != nil }
        jobProgress = JobProgress(label: job.label, percent: queries ? 0 : nil)
        return job
    }

    /// The newer version is shown (`BrowserApp` made it the one read): each table gets what was read for it,
    /// then the rest follows as after any commit (counts, rows kept on their objects, deleted objects' screens
    /// closed). A carried query or sort says how it ended, as it would have.
    mutating func updated(_ job: QueryJob, _ result: UpdateResult, data: BrowserData) {
        var absorbedDepth: Int?
        if case .update(let absorbed?) = job.purpose { absorbedDepth = absorbed.depth }
        for (plan, update) in result.tables {
            guard plan.depth <= stack.count, case .table(var t) = stack[plan.depth - 1], t.source.base == plan.base else { continue }
            switch update {
            case .shown(_, let filter):
                if plan.depth == absorbedDepth {
                    show(filter, query: plan.query, sort: plan.sort, on: &t, data: data)
                } else {
                    t.source = plan.base.with(filter: filter)
                    t.query = plan.query
                    t.sort = plan.sort
                }
            case .failed(let why):
                // A collection that went away closes with the screens of deleted objects (below).
                guard TableQuery(query: plan.query, sort: plan.sort) != nil else { continue }
                t.source = t.source.base
                t.query = ""
                t.sort = nil
                message = StatusMessage("The query no longer applies and was cleared: \(why)", isError: true)
            }
            stack[plan.depth - 1] = .table(t)
        }
        databaseChanged(data, reevaluate: false)
        // A version declined earlier is not the one shown any more.
        if message?.text == AppState.updateCancelled { message = nil }
        guard case .update(let absorbed?) = job.purpose, message?.isError != true,
              absorbed.depth <= stack.count, case .table(let t) = stack[absorbed.depth - 1], t.source.base == absorbed.base else { return }
        switch absorbed.purpose {
        case .sort(let sort, _):
            message = StatusMessage(sort.map { "Sorted by \($0.property) \($0.ascending ? "ascending" : "descending")" }
                                    ?? "Sort removed: \(t.query.isEmpty ? "key order" : "query order")")
        default:
            message = StatusMessage(matchSummary(t, data: data))
        }
    }

    // MARK: Opening a collection

    /// Opens a list, set, dictionary or incoming links table: its elements are read by a job (a list may
    /// hold millions of links), and the table shows once they are in (`opened`).
    mutating func open(_ source: TableSource) {
        nextJobID += 1
        let job = QueryJob(id: nextJobID, work: .open(source), depth: stack.count, base: source, query: "", sort: nil, purpose: .open)
        running = job
        jobProgress = JobProgress(label: job.label, percent: nil)
        task = .query(job)
    }

    /// A collection table's elements are in: the table opens (`BrowserApp` kept them for the version shown).
    mutating func opened(_ job: QueryJob, _ outcome: JobOutcome) {
        switch outcome {
        case .collection:
            guard stack.count == job.depth else { return }
            push(.table(TableScreen(source: job.base)))
        case .failed(let f):
            message = StatusMessage(f.message, isError: true)
        case .cancelled, .filter, .exported, .updated:
            message = StatusMessage("Opening \(job.base.crumb) cancelled")
        }
    }
}
