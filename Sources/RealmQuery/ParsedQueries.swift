import Synchronization

/// The queries parsed lately, by their text, shared by every thread (DECISIONS 114): a query typed once and
/// run many times, as `Results.filter("name == %@", x)` or `Query.evaluate(text, ...)` in a loop, is lexed
/// and parsed once. Parsing depends on the text alone (not on any schema or argument value; text whose
/// `%K` takes key paths from the arguments is not kept), so an entry never goes stale: a schema change is
/// met when the query is bound, as before. Errors are not kept.
///
/// Bounded: at `limit` entries the table is emptied and starts again (a program that makes ever new query
/// texts, with values written into them, keeps at most `limit`). Guarded by one lock, held for a dictionary
/// lookup or insert only, never while parsing.
enum ParsedQueries {
    static let limit = 256
    /// Texts longer than this are parsed each time (and not kept: their keys would cost the memory).
    static let longestText = 2_048

    private static let table = Mutex<[String: Query]>([:])

    /// The parsed query of `text`, from the table or parsed now (and kept).
    static func query(_ text: String, parse: (String) throws(QueryError) -> Query) throws(QueryError) -> Query {
        guard text.utf8.count <= longestText else { return try parse(text) }
        if let q = table.withLock({ $0[text] }) { return q }
        let q = try parse(text)
        table.withLock { t in
            if t.count >= limit { t.removeAll(keepingCapacity: true) }
            t[text] = q
        }
        return q
    }

    /// The number of texts kept (for tests).
    static var count: Int { table.withLock { $0.count } }

    /// Forgets every text (for tests).
    static func removeAll() { table.withLock { $0.removeAll() } }
}
