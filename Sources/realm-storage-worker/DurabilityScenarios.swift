#if canImport(Glibc)
import Glibc
#endif
import RealmStorage

/// Short, fixed sequences of commits for the durability tests, which crash or fail them at chosen system calls
/// (`strace` fault injection) and then check what the file holds. Every commit that returns prints
/// `committed N`; one that throws prints `failed N: ERROR` and the sequence goes on.
///
///     durability small-then-large PATH   twenty one-object commits (logged), then one of ~1.2 MiB (direct)
///     durability commits PATH COUNT      COUNT one-object commits, then a normal exit
///     durability commit-and-hang PATH    one one-object commit, then waits to be killed
///
/// Objects are of class `Item` with an int `n` (the commit's number), a data value `payload`, and contents that
/// are a pure function of `n` (`DurabilityScenarios.contents`): a set of strings, a dictionary of ints, an
/// embedded `Place`, a mixed value holding a typed link to the one `Anchor` object or a nested list and
/// dictionary, and a set of links to the anchor.
enum DurabilityScenarios {
    nonisolated(unsafe) static var keptOpen: Database?

    static func run(_ args: [String]) throws {
        switch (args.first, args.count) {
        case ("small-then-large", 2):
            let db = try open(args[1])
            var n = try nextNumber(db)
            for _ in 0..<20 {
                commit(db, n) { tx, table in try create(tx, table, n, payload: [1, 2, 3]) }
                n += 1
            }
            let big = [UInt8](repeating: 0xAB, count: 4096)
            commit(db, n) { tx, table in
                for _ in 0..<300 { try create(tx, table, n, payload: big) }
            }
        case ("commits", 3):
            guard let count = Int(args[2]) else { WorkerMain.usage() }
            let db = try open(args[1])
            var n = try nextNumber(db)
            for _ in 0..<count {
                commit(db, n) { tx, table in try create(tx, table, n, payload: [1]) }
                n += 1
            }
        case ("commit-and-hang", 2):
            let db = try open(args[1])
            keptOpen = db
            let n = try nextNumber(db)
            commit(db, n) { tx, table in try create(tx, table, n, payload: [2]) }
            while true {
                sleep(60)
                withExtendedLifetime(db) {}
            }
        default:
            WorkerMain.usage()
        }
    }

    static let schema: [ClassSchema] = [
        ClassSchema(name: "Anchor", properties: [PropertySchema(name: "id", type: .int, isPrimaryKey: true)]),
        ClassSchema(name: "Place", properties: [PropertySchema(name: "street", type: .string)], isEmbedded: true),
        ClassSchema(name: "Item", properties: [
            PropertySchema(name: "n", type: .int),
            PropertySchema(name: "payload", type: .data),
            PropertySchema(name: "tags", type: .string, isSet: true),
            PropertySchema(name: "scores", type: .int, isDictionary: true),
            .link("place", to: "Place"),
            PropertySchema(name: "mixed", type: .mixed, isOptional: true),
            .set("anchors", of: "Anchor"),
        ]),
    ]

    static func open(_ path: String) throws -> Database {
        let db = try Database.open(path: path, options: workerOptions)
        if try db.read({ $0.classSchema("Item") }) == nil {
            try db.write { tx in
                try tx.createClasses(schema)
                try tx.createObject("Anchor", ["id": .int(0)])
            }
        }
        return db
    }

    /// What every object of commit `n` holds besides `n` and its payload; `anchor` is the typed link to the anchor
    /// (the checker passes its own stand-in).
    static func contents(_ n: Int, anchor: Value) -> (tags: [String], scores: ValueDictionary, street: String, mixed: Value) {
        let n64 = Int64(n)
        let mixed: Value = n % 2 == 0
            ? anchor
            : .list([.int(n64), .dictionary(ValueDictionary([("anchor", anchor), ("n", .string("\(n)"))]))])
        return (["all", "n\(n)", "p\(n % 3)"], ValueDictionary([("n", .int(n64)), ("sq", .int(n64 * n64 % 1_000))]),
                "street \(n)", mixed)
    }

    /// Creates one object of commit `n`.
    static func create(_ tx: WriteTransaction, _ table: TableHandle, _ n: Int, payload: [UInt8]) throws {
        let anchors = try tx.table("Anchor")
        guard let anchor = try tx.object(anchors, primaryKey: .int(0)) else { throw WorkerError("the anchor is missing") }
        guard let anchorClass = tx.classID(named: "Anchor") else { throw WorkerError("no class Anchor") }
        let c = contents(n, anchor: .typedLink(classID: anchorClass, key: anchor))
        let key = try tx.createObject(table, ["n": .int(Int64(n)), "payload": .data(payload), "mixed": c.mixed],
                                      lists: ["tags": c.tags.map { .string($0) }, "anchors": [.link(anchor)]],
                                      dictionaries: ["scores": c.scores])
        try tx.createEmbeddedObject(in: key, tx.property(table, "place"), ["street": .string(c.street)])
    }

    /// One more than the largest `n` stored (0 for none).
    static func nextNumber(_ db: Database) throws -> Int {
        try db.read { s in
            var next = 0
            let n = try s.property(s.table("Item"), "n")
            for key in try s.keys(s.table("Item")) {
                if case .int(let v) = try s.value(key, n) { next = max(next, Int(v) + 1) }
            }
            return next
        }
    }

    static func commit(_ db: Database, _ n: Int, _ body: (WriteTransaction, TableHandle) throws -> Void) {
        do {
            try db.write { tx in try body(tx, try tx.table("Item")) }
            emit("committed \(n)")
        } catch {
            emit("failed \(n): \(error)")
        }
    }
}
