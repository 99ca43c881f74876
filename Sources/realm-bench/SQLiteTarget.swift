import CSQLite

/// An error from the SQLite C API, with the call that failed.
struct SQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String
    var context: String

    var description: String { "sqlite: \(context): \(message) (code \(code))" }
}

/// The SQLite side of the comparison, written the way a careful application
/// would: one connection, WAL with `synchronous=FULL` (the WAL is fsync'ed on
/// every commit, matching the engine's one sync per commit), statements
/// prepared once and reused with `sqlite3_bind_*`, each write workload one
/// explicit transaction.
final class SQLiteTarget: BenchTarget {
    let name = "sqlite"

    /// Page cache per connection, in KiB (SQLite's own default is 2,000 KiB).
    static let cacheKiB = 64 * 1024
    /// Reads through a memory map of the main file, as the engine does.
    static let mmapBytes = 1 << 30

    /// `SQLITE_TRANSIENT`, which does not import into Swift: SQLite copies the
    /// bound bytes before `sqlite3_bind_*` returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    func setUp(directory: String) throws {
        let path = directory + "/bench.sqlite"
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        db = handle
        guard rc == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            throw SQLiteError(code: rc, message: message, context: "open \(path)")
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        try exec("PRAGMA cache_size=-\(Self.cacheKiB)")
        try exec("PRAGMA mmap_size=\(Self.mmapBytes)")
        try exec("PRAGMA temp_store=MEMORY")
        // Refuse to measure with weaker durability than asked for.
        let mode = try queryText("PRAGMA journal_mode")
        let sync = try queryInt("PRAGMA synchronous")
        guard mode.lowercased() == "wal", sync == 2 else {
            throw SQLiteError(code: SQLITE_ERROR, message: "journal_mode=\(mode), synchronous=\(sync)",
                              context: "settings not applied (want wal, 2 = FULL)")
        }
    }

    /// The settings actually in force, for the report header.
    func settingsDescription() -> String? {
        let mode = (try? queryText("PRAGMA journal_mode")) ?? "?"
        let sync = (try? queryInt("PRAGMA synchronous")).map { $0 == 2 ? "FULL" : "\($0)" } ?? "?"
        let page = (try? queryInt("PRAGMA page_size")).map(String.init) ?? "?"
        let mmap = (try? queryInt("PRAGMA mmap_size")).map { "\($0 >> 20) MiB" } ?? "?"
        return "SQLite \(String(cString: sqlite3_libversion())), journal_mode=\(mode), synchronous=\(sync), "
            + "page_size=\(page), cache_size=\(Self.cacheKiB >> 10) MiB, mmap_size=\(mmap)"
    }

    func insertAll(_ people: [Person]) throws -> Int {
        try exec("BEGIN")
        try exec("""
            CREATE TABLE person(
                id     INTEGER PRIMARY KEY,
                name   TEXT    NOT NULL,
                city   TEXT    NOT NULL,
                age    INTEGER NOT NULL,
                score  REAL    NOT NULL,
                active INTEGER NOT NULL
            )
            """)
        try exec("CREATE INDEX person_name ON person(name)")
        let insert = try statement(Self.insertSQL)
        for person in people { try insertRow(insert, person) }
        try exec("COMMIT")
        return people.count
    }

    func insertOneByOne(_ people: [Person]) throws -> Int {
        let begin = try statement("BEGIN")
        let commit = try statement("COMMIT")
        let insert = try statement(Self.insertSQL)
        for person in people {
            try stepDone(begin, "BEGIN")
            try insertRow(insert, person)
            try stepDone(commit, "COMMIT")
        }
        return people.count
    }

    func countAge(in range: ClosedRange<Int>) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT count(*) FROM person WHERE age BETWEEN ?1 AND ?2")
            try bind(stmt, 1, range.lowerBound)
            try bind(stmt, 2, range.upperBound)
            return try singleInt(stmt, "count range")
        }
    }

    func sumAge(in range: ClosedRange<Int>) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT coalesce(sum(age), 0) FROM person WHERE age BETWEEN ?1 AND ?2")
            try bind(stmt, 1, range.lowerBound)
            try bind(stmt, 2, range.upperBound)
            return try singleInt(stmt, "sum range")
        }
    }

    func lookupNames(_ names: [String]) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT id FROM person WHERE name = ?1")
            var ids: [Int] = []
            ids.reserveCapacity(64)
            var total = 0
            for name in names {
                try bind(stmt, 1, name)
                while try stepRow(stmt, "indexed string eq") {
                    ids.append(Int(sqlite3_column_int64(stmt, 0)))
                }
                sqlite3_reset(stmt)
                total += ids.count
                ids.removeAll(keepingCapacity: true)
            }
            return total
        }
    }

    // MARK: Queries (the SQL equivalent of each RealmQuery workload)

    func insertDogs(owners: [Int]) throws -> Int {
        try exec("BEGIN")
        try exec("CREATE TABLE dog (id INTEGER PRIMARY KEY, name TEXT NOT NULL, owner INTEGER REFERENCES person(id))")
        try exec("CREATE INDEX dog_owner ON dog(owner)")
        let stmt = try statement("INSERT INTO dog (id, name, owner) VALUES (?1, ?2, ?3)")
        for (i, o) in owners.enumerated() {
            try bind(stmt, 1, i)
            try bind(stmt, 2, "dog-\(i)")
            try bind(stmt, 3, o)
            try stepDone(stmt, "INSERT dog")
        }
        try exec("COMMIT")
        return owners.count
    }

    private func countRows(_ stmt: OpaquePointer, _ context: String) throws -> Int {
        var ids: [Int] = []
        while try stepRow(stmt, context) { ids.append(Int(sqlite3_column_int64(stmt, 0))) }
        sqlite3_reset(stmt)
        return ids.count
    }

    func queryAgeRange(_ range: ClosedRange<Int>) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT id FROM person WHERE age BETWEEN ?1 AND ?2")
            try bind(stmt, 1, range.lowerBound)
            try bind(stmt, 2, range.upperBound)
            return try countRows(stmt, "query age range")
        }
    }

    func queryCityContains(_ needle: String) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT id FROM person WHERE city LIKE '%' || ?1 || '%'")
            try bind(stmt, 1, needle)
            return try countRows(stmt, "query city contains")
        }
    }

    func queryNames(_ names: [String]) throws -> Int { try lookupNames(names) }

    func queryDogsByOwnerName(_ names: [String]) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT dog.id FROM dog JOIN person ON person.id = dog.owner WHERE person.name = ?1")
            var total = 0
            for n in names {
                try bind(stmt, 1, n)
                total += try countRows(stmt, "query dogs by owner name")
            }
            return total
        }
    }

    func querySortByName() throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT id FROM person ORDER BY name, id")
            var h: UInt64 = 0
            while try stepRow(stmt, "query sort") { h = h &* 31 &+ UInt64(bitPattern: sqlite3_column_int64(stmt, 0)) }
            sqlite3_reset(stmt)
            return Int(bitPattern: UInt(h))
        }
    }

    func countCity(_ city: String) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT count(*) FROM person WHERE city = ?1")
            try bind(stmt, 1, city)
            return try singleInt(stmt, "non-indexed string eq")
        }
    }

    func lookupAges(ids: [Int]) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT age FROM person WHERE id = ?1")
            var sum = 0
            for id in ids {
                try bind(stmt, 1, id)
                if try stepRow(stmt, "primary key lookup") {
                    sum += Int(sqlite3_column_int64(stmt, 0))
                }
                sqlite3_reset(stmt)
            }
            return sum
        }
    }

    func iterateAll() throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT * FROM person")
            var checksum = PersonChecksum()
            while try stepRow(stmt, "iterate all") {
                checksum.add(
                    id: Int(sqlite3_column_int64(stmt, 0)),
                    name: Self.text(stmt, 1),
                    city: Self.text(stmt, 2),
                    age: Int(sqlite3_column_int64(stmt, 3)),
                    score: sqlite3_column_double(stmt, 4),
                    active: sqlite3_column_int64(stmt, 5) != 0
                )
            }
            sqlite3_reset(stmt)
            return checksum.value
        }
    }

    func incrementAllAges() throws -> Int {
        try exec("BEGIN")
        try exec("UPDATE person SET age = age + 1")
        let changed = Int(sqlite3_changes64(db))
        try exec("COMMIT")
        return changed
    }

    func deleteAll() throws -> Int {
        try exec("BEGIN")
        // The engine nulls every link to a deleted object (Realm's semantics); with the dogs of the query
        // workloads present, SQLite does the same work.
        if try queryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'dog'") > 0 {
            try exec("UPDATE dog SET owner = NULL WHERE owner IS NOT NULL")
        }
        try exec("DELETE FROM person")
        let changed = Int(sqlite3_changes64(db))
        try exec("COMMIT")
        return changed
    }

    // MARK: Sets, dictionaries and embedded objects (the tables a user would write for them)

    func insertItems(_ items: [Item]) throws -> Int {
        try exec("BEGIN")
        try exec("CREATE TABLE item (id INTEGER PRIMARY KEY)")
        // A set: a join table, unique per item, with an index by tag for `ANY tags == x`.
        try exec("""
            CREATE TABLE item_tags (
                item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                tag     TEXT    NOT NULL,
                PRIMARY KEY (item_id, tag)
            ) WITHOUT ROWID
            """)
        try exec("CREATE INDEX item_tags_tag ON item_tags(tag)")
        // A dictionary: key and value per item.
        try exec("""
            CREATE TABLE item_scores (
                item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                key     TEXT    NOT NULL,
                value   INTEGER NOT NULL,
                PRIMARY KEY (item_id, key)
            ) WITHOUT ROWID
            """)
        // An embedded object: a child table, one row per item.
        try exec("""
            CREATE TABLE item_address (
                item_id INTEGER PRIMARY KEY REFERENCES item(id) ON DELETE CASCADE,
                street  TEXT NOT NULL,
                city    TEXT NOT NULL
            )
            """)
        let item = try statement("INSERT INTO item (id) VALUES (?1)")
        let tag = try statement("INSERT INTO item_tags (item_id, tag) VALUES (?1, ?2)")
        let score = try statement("INSERT INTO item_scores (item_id, key, value) VALUES (?1, ?2, ?3)")
        let address = try statement("INSERT INTO item_address (item_id, street, city) VALUES (?1, ?2, ?3)")
        for i in items {
            try bind(item, 1, i.id)
            try stepDone(item, "INSERT item")
            for t in i.tags {
                try bind(tag, 1, i.id)
                try bind(tag, 2, t)
                try stepDone(tag, "INSERT item_tags")
            }
            for (k, v) in i.scores {
                try bind(score, 1, i.id)
                try bind(score, 2, k)
                try bind(score, 3, v)
                try stepDone(score, "INSERT item_scores")
            }
            try bind(address, 1, i.id)
            try bind(address, 2, i.street)
            try bind(address, 3, i.city)
            try stepDone(address, "INSERT item_address")
        }
        try exec("COMMIT")
        return items.count
    }

    func queryAnyTag(_ tags: [String]) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT item_id FROM item_tags WHERE tag = ?1")
            var total = 0
            for t in tags {
                try bind(stmt, 1, t)
                total += try countRows(stmt, "query any tag")
            }
            return total
        }
    }

    func queryScores(key: String, above thresholds: [Int]) throws -> Int {
        try readTransaction {
            let stmt = try statement("SELECT item_id FROM item_scores WHERE key = ?1 AND value > ?2")
            var total = 0
            for v in thresholds {
                try bind(stmt, 1, key)
                try bind(stmt, 2, v)
                total += try countRows(stmt, "query scores")
            }
            return total
        }
    }

    func itemChecksum() throws -> Int {
        try readTransaction {
            guard try queryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'item'") > 0 else { return 0 }
            var checksum = ItemChecksum()
            let items = try statement("SELECT id FROM item")
            while try stepRow(items, "items") { checksum.addItem(id: Int(sqlite3_column_int64(items, 0))) }
            sqlite3_reset(items)
            let tags = try statement("SELECT item_id, tag FROM item_tags")
            while try stepRow(tags, "tags") { checksum.addTag(id: Int(sqlite3_column_int64(tags, 0)), Self.text(tags, 1)) }
            sqlite3_reset(tags)
            let scores = try statement("SELECT item_id, key, value FROM item_scores")
            while try stepRow(scores, "scores") {
                checksum.addScore(id: Int(sqlite3_column_int64(scores, 0)), Self.text(scores, 1), Int(sqlite3_column_int64(scores, 2)))
            }
            sqlite3_reset(scores)
            let addresses = try statement("SELECT street, city FROM item_address")
            while try stepRow(addresses, "addresses") { checksum.addAddress(street: Self.text(addresses, 0), city: Self.text(addresses, 1)) }
            sqlite3_reset(addresses)
            return checksum.value
        }
    }

    func deleteItems() throws -> Int {
        try exec("BEGIN")
        // What ON DELETE CASCADE would do, written out (foreign keys are not enforced: PRAGMA foreign_keys is off,
        // SQLite's default), so SQLite empties each table whole.
        try exec("DELETE FROM item_tags")
        try exec("DELETE FROM item_scores")
        try exec("DELETE FROM item_address")
        try exec("DELETE FROM item")
        let changed = Int(sqlite3_changes64(db))
        try exec("COMMIT")
        return changed
    }

    /// `page_count × page_size`: the size of the main file once the WAL has
    /// been checkpointed into it (the WAL itself is not counted).
    func fileSize() throws -> Int {
        try queryInt("PRAGMA page_count") * queryInt("PRAGMA page_size")
    }

    func tearDown() {
        for stmt in statements.values { sqlite3_finalize(stmt) }
        statements.removeAll()
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    deinit { tearDown() }

    // MARK: - Helpers

    /// Runs `body` in one read transaction (one snapshot, one WAL read lock)
    /// instead of an implicit transaction per statement, as an application
    /// batching reads would, and as the engine reads from one version.
    private func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try stepDone(statement("BEGIN"), "BEGIN")
        let result: T
        do {
            result = try body()
        } catch {
            _ = try? stepDone(statement("COMMIT"), "COMMIT")
            throw error
        }
        try stepDone(statement("COMMIT"), "COMMIT")
        return result
    }

    private static let insertSQL =
        "INSERT INTO person(id, name, city, age, score, active) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"

    private func insertRow(_ stmt: OpaquePointer, _ person: Person) throws {
        try bind(stmt, 1, person.id)
        try bind(stmt, 2, person.name)
        try bind(stmt, 3, person.city)
        try bind(stmt, 4, person.age)
        try check(sqlite3_bind_double(stmt, 5, person.score), "bind score")
        try bind(stmt, 6, person.active ? 1 : 0)
        try stepDone(stmt, "INSERT")
    }

    private func error(_ code: Int32, _ context: String) -> SQLiteError {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return SQLiteError(code: code, message: message, context: context)
    }

    private func check(_ code: Int32, _ context: @autoclosure () -> String) throws {
        if code != SQLITE_OK { throw error(code, context()) }
    }

    private func exec(_ sql: String) throws {
        try check(sqlite3_exec(db, sql, nil, nil, nil), sql)
    }

    /// The prepared statement for `sql`, prepared on first use and reset
    /// (bindings kept) after each use by the caller.
    private func statement(_ sql: String) throws -> OpaquePointer {
        if let stmt = statements[sql] { return stmt }
        var stmt: OpaquePointer?
        try check(sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil), "prepare \(sql)")
        guard let stmt else { throw SQLiteError(code: SQLITE_MISUSE, message: "empty statement", context: sql) }
        statements[sql] = stmt
        return stmt
    }

    private func bind(_ stmt: OpaquePointer, _ index: Int32, _ value: Int) throws {
        try check(sqlite3_bind_int64(stmt, index, sqlite3_int64(value)), "bind int")
    }

    private func bind(_ stmt: OpaquePointer, _ index: Int32, _ value: String) throws {
        var value = value
        let rc = value.withUTF8 { utf8 -> Int32 in
            // A null pointer would bind NULL; an empty string needs a real one.
            guard let base = utf8.baseAddress else { return sqlite3_bind_text(stmt, index, "", 0, Self.transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(stmt, index, $0, Int32(utf8.count), Self.transient)
            }
        }
        try check(rc, "bind text")
    }

    /// Steps a statement that returns no rows, then resets it.
    private func stepDone(_ stmt: OpaquePointer, _ context: String) throws {
        let rc = sqlite3_step(stmt)
        sqlite3_reset(stmt)
        if rc != SQLITE_DONE { throw error(rc, context) }
    }

    /// Steps a query: true with a row available, false when done.
    private func stepRow(_ stmt: OpaquePointer, _ context: String) throws -> Bool {
        switch sqlite3_step(stmt) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc:
            sqlite3_reset(stmt)
            throw error(rc, context)
        }
    }

    /// Runs a one-row, one-column integer query and resets it.
    private func singleInt(_ stmt: OpaquePointer, _ context: String) throws -> Int {
        defer { sqlite3_reset(stmt) }
        guard try stepRow(stmt, context) else {
            throw SQLiteError(code: SQLITE_ERROR, message: "no row", context: context)
        }
        return Int(sqlite3_column_int64(stmt, 0))
    }

    private func queryInt(_ sql: String) throws -> Int {
        try singleInt(statement(sql), sql)
    }

    private func queryText(_ sql: String) throws -> String {
        let stmt = try statement(sql)
        defer { sqlite3_reset(stmt) }
        guard try stepRow(stmt, sql) else {
            throw SQLiteError(code: SQLITE_ERROR, message: "no row", context: sql)
        }
        return Self.text(stmt, 0)
    }

    @inline(__always)
    private static func text(_ stmt: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(stmt, column) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
