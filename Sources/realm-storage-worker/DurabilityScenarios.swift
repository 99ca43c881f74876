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
/// Objects are of class `Item` with an int `n` (the commit's number) and a data value `payload`.
enum DurabilityScenarios {
    nonisolated(unsafe) static var keptOpen: Database?

    static func run(_ args: [String]) throws {
        switch (args.first, args.count) {
        case ("small-then-large", 2):
            let db = try open(args[1])
            var n = try nextNumber(db)
            for _ in 0..<20 {
                commit(db, n) { tx, table in try tx.createObject(table, ["n": .int(Int64(n)), "payload": .data([1, 2, 3])]) }
                n += 1
            }
            let big = [UInt8](repeating: 0xAB, count: 4096)
            commit(db, n) { tx, table in
                for _ in 0..<300 { try tx.createObject(table, ["n": .int(Int64(n)), "payload": .data(big)]) }
            }
        case ("commits", 3):
            guard let count = Int(args[2]) else { WorkerMain.usage() }
            let db = try open(args[1])
            var n = try nextNumber(db)
            for _ in 0..<count {
                commit(db, n) { tx, table in try tx.createObject(table, ["n": .int(Int64(n)), "payload": .data([1])]) }
                n += 1
            }
        case ("commit-and-hang", 2):
            let db = try open(args[1])
            keptOpen = db
            let n = try nextNumber(db)
            commit(db, n) { tx, table in try tx.createObject(table, ["n": .int(Int64(n)), "payload": .data([2])]) }
            while true {
                sleep(60)
                withExtendedLifetime(db) {}
            }
        default:
            WorkerMain.usage()
        }
    }

    static func open(_ path: String) throws -> Database {
        let db = try Database.open(path: path, options: workerOptions)
        if try db.read({ $0.classSchema("Item") }) == nil {
            try db.write { tx in
                try tx.createClasses([ClassSchema(name: "Item", properties: [PropertySchema(name: "n", type: .int),
                                                                             PropertySchema(name: "payload", type: .data)])])
            }
        }
        return db
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
