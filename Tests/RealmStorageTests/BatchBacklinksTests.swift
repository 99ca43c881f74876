import Foundation
import Testing
@testable import RealmStorage

/// `backlinks(of:)` walks the tree once for many targets (DECISIONS 40); it must give what asking for each
/// target in turn gives, on a tree deep enough to have inner levels, and in a write transaction with
/// pending changes.
@Suite struct BatchBacklinksTests {
    @Test func batchedBacklinksMatchOneByOne() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        var rng = SplitMix64(seed: 40)
        let people = 70_000  // more than 256 leaves: two levels of inner nodes
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            let t = try tx.table("Person")
            let columns = try ["id", "name", "age"].map { try tx.property(t, $0) }
            for i in 0..<people { try tx.createObject(t, columns: columns, values: [.int(Int64(i)), .string("p\(i)"), .int(1)]) }
            let dogs = try tx.table("Dog")
            let dogColumns = try ["name", "owner"].map { try tx.property(dogs, $0) }
            for i in 0..<20_000 {
                let owner = try #require(try tx.object(t, primaryKey: .int(Int64(rng.next() % UInt64(people)))))
                try tx.createObject(dogs, columns: dogColumns, values: [.string("d\(i)"), .link(owner)])
            }
        }
        func check(_ s: Snapshot, _ context: String) throws {
            let t = try s.table("Person")
            let all = try s.keys(t)
            #expect(all.count > 20_000)
            for round in 0..<30 {
                var targets = (0..<(1 + Int(rng.next() % 400))).map { _ in all[Int(rng.next() % UInt64(all.count))] }
                if round % 3 == 0 { targets.append(ObjectKey(1 << 61)) }  // no such object
                let batched = try s.backlinks(of: targets, in: t, from: "Dog", property: "owner")
                var expected: [ObjectKey] = []
                for k in targets.sorted() where try s.exists(t, k) {
                    expected += try s.backlinks(k, in: t, from: "Dog", property: "owner")
                }
                #expect(batched == expected, "\(context), round \(round), \(targets.count) targets")
            }
        }
        try db.read { try check($0, "snapshot") }
        let tx = try db.beginWrite()
        let dogs = try tx.table("Dog")
        let owner = try tx.property(dogs, "owner")
        for k in try tx.keys(dogs).prefix(300) { try tx.set(k, owner, .null) }
        try check(tx, "write transaction with pending changes")
        tx.rollback()
    }

    /// The batched read takes a backlink set from where it lies in the cluster; it must also handle a set
    /// stored out of line (over 1 KiB), leaves written before the backlink column existed, and sets made
    /// empty again.
    @Test func outOfLineSetsAndLeavesWithoutTheColumn() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("b.realm"))
        let people = 3_000
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Person", properties: [PropertySchema(name: "id", type: .int, isPrimaryKey: true)]))
            let t = try tx.table("Person")
            let id = try tx.property(t, "id")
            for i in 0..<people { try tx.createObject(t, columns: [id], values: [.int(Int64(i))]) }
        }
        // The class linking to Person arrives later: most Person leaves are never rewritten and predate the
        // backlink column.
        var rng = SplitMix64(seed: 44)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Dog", properties: [PropertySchema(name: "n", type: .int), .link("owner", to: "Person")]))
            let t = try tx.table("Person"), dogs = try tx.table("Dog")
            let columns = try ["n", "owner"].map { try tx.property(dogs, $0) }
            let popular = try #require(try tx.object(t, primaryKey: .int(7)))
            for i in 0..<1_500 {  // 1,500 keys: far past the 1 KiB inline limit
                try tx.createObject(dogs, columns: columns, values: [.int(Int64(i) << 20), .link(popular)])
            }
            for i in 0..<40 {
                let owner = try #require(try tx.object(t, primaryKey: .int(Int64(rng.next() % 300))))
                try tx.createObject(dogs, columns: columns, values: [.int(Int64(i)), .link(owner)])
            }
        }
        func compare(_ context: String) throws {
            try db.read { s in
                let t = try s.table("Person")
                let all = try s.keys(t)
                let targets = all.filter { _ in rng.next() % 4 == 0 } + [all[7]]
                let batched = try s.backlinks(of: targets, in: t, from: "Dog", property: "owner")
                var expected: [ObjectKey] = []
                for k in targets.sorted() { expected += try s.backlinks(k, in: t, from: "Dog", property: "owner") }
                #expect(batched == expected, "\(context)")
                #expect(try s.backlinks(of: [all[7]], in: t, from: "Dog", property: "owner").count == (context == "emptied" ? 0 : 1_500))
            }
        }
        try compare("out of line")
        // Empty the big set again: the row holds an empty set, inline.
        try db.write { tx in
            let dogs = try tx.table("Dog"), owner = try tx.property(dogs, "owner")
            let person = try tx.table("Person")
            let seven = try #require(try tx.object(person, primaryKey: .int(7)))
            for k in try tx.backlinks(seven, in: person, from: "Dog", property: "owner") { try tx.set(k, owner, .null) }
        }
        try compare("emptied")
        // No targets left at all: an empty tree.
        let gone = try db.read { s in try s.keys(try s.table("Person")).prefix(6) }
        try db.write { tx in
            let t = try tx.table("Person")
            try tx.deleteAll(t)
        }
        try db.read { s in
            let left = try s.backlinks(of: Array(gone), in: try s.table("Person"), from: "Dog", property: "owner")
            #expect(left.isEmpty)
        }
    }
}
