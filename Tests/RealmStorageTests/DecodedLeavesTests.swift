import Foundation
import Testing
@testable import RealmStorage

/// A cluster a commit wrote is handed, decoded, to the next write transaction (`DecodedLeaves`): these runs of
/// small commits check that what is read back is always what was committed, whatever came in between.
@Suite struct DecodedLeavesTests {
    private let schema = ClassSchema(name: "Item", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "name", type: .string, isIndexed: true),
        PropertySchema(name: "note", type: .string, isOptional: true),
    ])

    private func expectContents(_ db: Database, _ model: [Int64: (String, String?)], _ comment: Comment? = nil) throws {
        try db.read { s in
            let t = try s.table("Item")
            let name = try s.property(t, "name"), note = try s.property(t, "note")
            #expect(try s.count(t) == model.count, comment)
            for (id, (n, o)) in model {
                let k = try #require(try s.object(t, primaryKey: .int(id)))
                #expect(try s.value(k, name) == .string(n), comment)
                #expect(try s.value(k, note) == (o.map(Value.string) ?? .null), comment)
            }
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }

    @Test func smallCommitsRollbacksSchemaChangesAndBlobs() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("d.realm"))
        try db.write { try $0.createClass(schema) }
        var model: [Int64: (String, String?)] = [:]
        // Single inserts into one cluster, each a commit.
        for i in 0..<300 {
            try db.write { tx in _ = try tx.createObject("Item", ["id": .int(Int64(i)), "name": .string("n\(i % 7)")]) }
            model[Int64(i)] = ("n\(i % 7)", nil)
        }
        try expectContents(db, model, "after single inserts")
        // A transaction that changes the cluster, then rolls back: the next one must not see its change.
        let tx = try db.beginWrite()
        _ = try tx.createObject("Item", ["id": .int(1000), "name": .string("gone")])
        try tx.set(#require(try tx.object(tx.table("Item"), primaryKey: .int(299))), "Item", "name", .string("changed"))
        tx.rollback()
        try db.write { tx in _ = try tx.createObject("Item", ["id": .int(300), "name": .string("n300")]) }
        model[300] = ("n300", nil)
        try expectContents(db, model, "after a rollback")
        // A throwing transaction is rolled back too.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.write { tx in
                _ = try tx.createObject("Item", ["id": .int(1001), "name": .string("gone")])
                throw Stop()
            }
        }
        try db.write { tx in _ = try tx.createObject("Item", ["id": .int(301), "name": .string("n301")]) }
        model[301] = ("n301", nil)
        // A long note goes out of line (a blob): the cluster is not kept, and no page leaks.
        let long = String(repeating: "x", count: 3000)
        try db.write { tx in try tx.set(#require(try tx.object(tx.table("Item"), primaryKey: .int(300))), "Item", "note", .string(long)) }
        model[300] = ("n300", long)
        for i in 302..<310 {
            try db.write { tx in _ = try tx.createObject("Item", ["id": .int(Int64(i)), "name": .string("n\(i)")]) }
            model[Int64(i)] = ("n\(i)", nil)
        }
        try expectContents(db, model, "after a blob")
        // A schema change between commits: clusters gain a column.
        try db.write { tx in try tx.addProperty("Item", PropertySchema(name: "extra", type: .int)) }
        for i in 310..<320 {
            try db.write { tx in _ = try tx.createObject("Item", ["id": .int(Int64(i)), "name": .string("n\(i)"), "extra": .int(7)]) }
            model[Int64(i)] = ("n\(i)", nil)
        }
        try expectContents(db, model, "after adding a property")
        try db.read { s in
            let t = try s.table("Item")
            let extra = try s.property(t, "extra")
            #expect(try s.value(#require(try s.object(t, primaryKey: .int(5))), extra) == .int(0))
            #expect(try s.value(#require(try s.object(t, primaryKey: .int(315))), extra) == .int(7))
        }
        // Updates and deletes of single objects, each a commit.
        for i in stride(from: 0, to: 320, by: 3) {
            try db.write { tx in
                let t = try tx.table("Item")
                let k = try #require(try tx.object(t, primaryKey: .int(Int64(i))))
                if i % 2 == 0 { try tx.delete(t, k) } else { try tx.set(k, "Item", "name", .string("u\(i)")) }
            }
            if i % 2 == 0 { model[Int64(i)] = nil } else { model[Int64(i)]?.0 = "u\(i)" }
        }
        try expectContents(db, model, "after updates and deletes")
    }

    /// Table inner nodes and index nodes are kept too: a table of two inner levels (more than 256 leaves) with
    /// an index, then single commits that append, change old rows in other leaves, delete, split the last leaf
    /// and roll back, each read back against a model (debug builds also compare every kept node with the node
    /// it stands for).
    @Test func innerNodesKeptAcrossSmallCommits() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("i.realm"))
        try db.write { try $0.createClass(schema) }
        var model: [Int64: (String, String?)] = [:]
        let n = 70_000
        try db.write { tx in
            let t = try tx.table("Item")
            let cols = try ["id", "name"].map { try tx.property(t, $0) }
            for i in 0..<n { try tx.createObject(t, columns: cols, values: [.int(Int64(i)), .string("n\(i % 13)")]) }
        }
        for i in 0..<n { model[Int64(i)] = ("n\(i % 13)", nil) }
        var rng = SplitMix64(seed: 5)
        var next = Int64(n)
        for step in 0..<400 {
            if step == 1 {
                #expect(!db.decodedLeaves.inners.isEmpty, "a single commit keeps the inner nodes it wrote")
                #expect(!db.decodedLeaves.indexNodes.isEmpty, "and the index nodes")
            }
            switch step % 5 {
            case 0, 1:
                try db.write { tx in _ = try tx.createObject("Item", ["id": .int(next), "name": .string("a\(next)")]) }
                model[next] = ("a\(next)", nil)
                next += 1
            case 2:
                let id = Int64(rng.below(n))
                guard model[id] != nil else { continue }
                try db.write { tx in try tx.set(#require(try tx.object(tx.table("Item"), primaryKey: .int(id))), "Item", "note", .string("s\(step)")) }
                model[id]?.1 = "s\(step)"
            case 3:
                let id = Int64(rng.below(n))
                guard model[id] != nil else { continue }
                try db.write { tx in
                    let t = try tx.table("Item")
                    try tx.delete(t, #require(try tx.object(t, primaryKey: .int(id))))
                }
                model[id] = nil
            default:
                let tx = try db.beginWrite()
                _ = try tx.createObject("Item", ["id": .int(next + 1_000_000), "name": .string("gone")])
                try tx.set(#require(try tx.object(tx.table("Item"), primaryKey: .int(next - 1))), "Item", "name", .string("gone"))
                tx.rollback()
            }
            if step == 199 { try expectContents(db, model, "step \(step)") }
        }
        try expectContents(db, model, "at the end")
    }

    /// A commit by another process in between: the next transaction of this one starts from a version its
    /// own last commit did not make, so nothing it kept is used.
    @Test func anotherWriterInBetweenIsSeen() throws {
        let dir = TempDir()
        let path = dir.file("e.realm")
        let db = try Database.open(path: path)
        try db.write { try $0.createClass(schema) }
        try db.write { tx in _ = try tx.createObject("Item", ["id": .int(1), "name": .string("a")]) }
        // Simulate another writer: the kept leaves carry the version they were made for; a different one
        // (as after a commit elsewhere) must make them unused.
        db.decodedLeaves.version &+= 1000
        try db.write { tx in _ = try tx.createObject("Item", ["id": .int(2), "name": .string("b")]) }
        try expectContents(db, [1: ("a", nil), 2: ("b", nil)])
    }

    /// The lists a transaction took its decoded nodes from are handed back empty, for the transaction after
    /// next to record its nodes in: nothing an earlier commit wrote may be left in them (a leaf left there
    /// would be handed on as if the last commit had written it at that ref). Commits alternate between two
    /// classes, so each transaction leaves the other class's cluster untaken.
    @Test func theListsATransactionTookOverAreReusedEmpty() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("r.realm"))
        let other = ClassSchema(name: "Other", properties: [PropertySchema(name: "v", type: .int)])
        try db.write { try $0.createClass(schema); try $0.createClass(other) }
        var model: [Int64: (String, String?)] = [:]
        for i in 0..<40 {
            if i % 2 == 0 {
                try db.write { tx in _ = try tx.createObject("Item", ["id": .int(Int64(i)), "name": .string("n\(i)")]) }
                model[Int64(i)] = ("n\(i)", nil)
            } else {
                try db.write { tx in _ = try tx.createObject("Other", ["v": .int(Int64(i))]) }
            }
            let lists = db.recycled.decodedLists
            #expect(lists.leaves.isEmpty && lists.inners.isEmpty && lists.indexNodes.isEmpty, "commit \(i)")
            #expect(lists.version == 0 && lists.store == nil && !lists.overflowed, "commit \(i)")
            // What is handed on is exactly what this commit wrote: one cluster (and the name index's leaf).
            #expect(db.decodedLeaves.leaves.count == 1, "commit \(i)")
        }
        try expectContents(db, model)
        try db.read { s in
            let t = try s.table("Other")
            #expect(try s.count(t) == 20)
        }
    }
}
