import RealmStorage

/// Appends objects to an existing class in one commit, for the object layer's tests of notifications after
/// another process commits: `append-objects PATH CLASS PROPERTY COUNT` creates COUNT objects whose string
/// property PROPERTY is "w0", "w1", ..., and prints `committed` once the commit is durable. The database
/// stays open until the process exits, as command-line programs usually leave theirs.
enum AppendObjects {
    nonisolated(unsafe) static var keptOpen: Database?

    static func run(path: String, className: String, property: String, count: Int) throws {
        let db = try Database.open(path: path, options: workerOptions)
        keptOpen = db
        try db.write { tx in
            let table = try tx.table(className)
            for i in 0..<count { try tx.createObject(table, [property: .string("w\(i)")]) }
        }
        emit("committed")
    }
}
