import Foundation
import RealmQuery
import RealmStorage

/// A query that did not run, and the cells of the typed text it is about.
public struct QueryFailure: Error, Equatable {
    public var message: String
    public var start: Int
    public var width: Int
}

/// What a table's query bar text and column sort ask the engine for.
public struct TableQuery: Equatable, Sendable {
    /// The full query: `TRUEPREDICATE` before bare ordering clauses, the column sort as a last `SORT`
    /// (so it applies after the query's own ordering, as written).
    public var text: String
    /// Where the typed text starts in `text`, in UTF-8 bytes, and how long it is.
    var typedOffset: Int
    var typed: String

    /// nil when the table has neither a query nor a sort.
    public init?(query: String, sort: ColumnSort?) {
        let typed = query.trimmingCharacters(in: .whitespaces)
        if typed.isEmpty && sort == nil { return nil }
        let prefix = typed.isEmpty ? "TRUEPREDICATE" : TableQuery.startsWithClause(typed) ? "TRUEPREDICATE " : ""
        text = prefix + typed
        if let sort { text += " SORT(\(Query.escapedName(sort.property)) \(sort.ascending ? "ASC" : "DESC"))" }
        typedOffset = prefix.utf8.count
        self.typed = typed
    }

    /// Whether the typed text is only ordering clauses (`SORT(name ASC)`, `LIMIT (10)`), which need a condition
    /// before them; not a condition on a property whose name starts with one (`sortOrder > 1`).
    static func startsWithClause(_ typed: String) -> Bool {
        let upper = typed.uppercased()
        return ["SORT", "DISTINCT", "LIMIT"].contains { word in
            upper.hasPrefix(word) && upper.dropFirst(word.count).drop(while: { $0 == " " }).first == "("
        }
    }

    /// What the breadcrumb shows: the typed query and the sort.
    public var summary: String {
        let sortPart = text.utf8.count > typedOffset + typed.utf8.count
            ? String(decoding: Array(text.utf8)[(typedOffset + typed.utf8.count)...], as: UTF8.self).trimmingCharacters(in: .whitespaces) : ""
        return [typed, sortPart].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// Cells into the typed text of a byte offset into `text` (clamped to the typed text).
    func cells(atByte offset: Int) -> Int {
        let o = min(max(offset - typedOffset, 0), typed.utf8.count)
        return Canvas.width(of: String(decoding: Array(typed.utf8)[0..<o], as: UTF8.self))
    }
}

/// A table's query parsed and bound, ready to run on any thread against a snapshot of the version it was
/// bound in (`ObjectReader.openSibling()`): it holds names and keys, no handles.
public struct PreparedTableQuery: Sendable {
    public let query: TableQuery
    let bound: BoundQuery
    /// The objects of a list, linking objects or backlinks table, in their order (nil: the whole class).
    let keys: [ObjectKey]?

    /// The keys the table shows. A query that cannot run throws a `QueryFailure` pointing into the typed
    /// text; a cancelled one (`progress.cancel()`) throws the engine's `QueryError` of kind `.cancelled`.
    public func run(in snapshot: any ObjectReader, progress: QueryProgress? = nil) throws -> KeyFilter {
        do {
            let result: [ObjectKey]
            if let keys {
                result = try bound.evaluate(in: snapshot, keys: keys, progress: progress)
            } else {
                result = try bound.evaluate(in: snapshot, progress: progress)
            }
            return KeyFilter(keys: result, description: query.summary)
        } catch let e as QueryError where !e.isCancellation {
            throw query.failure(e)
        }
    }
}

extension TableQuery {
    /// A query error as a failure pointing at cells of the typed text.
    func failure(_ e: QueryError) -> QueryFailure {
        let start = cells(atByte: e.range.start)
        return QueryFailure(message: e.message, start: start, width: max(1, cells(atByte: e.range.end) - start))
    }
}

extension BrowserData {
    /// Parses and binds a table's query (a class, or the objects of a list or of incoming links, in their
    /// order): quick, and where a mistake in the text shows.
    public func prepare(_ q: TableQuery, on source: TableSource) throws -> PreparedTableQuery {
        let base = source.base
        var keys: [ObjectKey]?
        if case .objects = base {} else if BrowserData.rowClass(base, in: snapshot) != nil {
            keys = try collection(base).compactMap { if case .link(let k) = $0 { return k } else { return nil } }
        }
        return try BrowserData.prepare(q, on: base, keys: keys, in: snapshot)
    }

    /// The same on any thread, for `reader` (`keys`: the objects of a table that is not a whole class).
    static func prepare(_ q: TableQuery, on base: TableSource, keys: [ObjectKey]?, in reader: any ObjectReader) throws -> PreparedTableQuery {
        guard let cls = rowClass(base, in: reader) else {
            throw QueryFailure(message: "a list of values has no objects to query or sort", start: 0, width: 0)
        }
        do throws(QueryError) {
            let bound = try Query.parse(q.text).bind(to: cls, in: reader)
            return PreparedTableQuery(query: q, bound: bound, keys: keys)
        } catch {
            throw q.failure(error)
        }
    }

    /// Runs a table's query over its objects in the engine, across all of them, on this thread.
    public func evaluate(_ q: TableQuery, on source: TableSource) throws -> KeyFilter {
        try prepare(q, on: source).run(in: snapshot)
    }
}
