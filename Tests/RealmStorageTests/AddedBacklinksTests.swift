import Foundation
import Testing
@testable import RealmStorage

/// Backlinks added in a write transaction (entries of the backlink trees since DECISIONS 50; a log merged
/// on read before that, DECISIONS 45): every read inside the transaction must see them, every edit must
/// apply on top of them, and the committed file must hold the same backlinks.
@Suite struct AddedBacklinksTests {
    @Test func readsAndEditsInsideTheTransactionSeeAddedBacklinks() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir, "a.realm")
        let before = try db.snapshot()
        defer { before.close() }
        let tx = try db.beginWrite()
        let people = try tx.table("Person"), dogs = try tx.table("Dog")
        let pid = try tx.property(people, "id"), pname = try tx.property(people, "name"), page = try tx.property(people, "age")
        let owner = try tx.property(dogs, "owner"), dname = try tx.property(dogs, "name")
        let listOfDogs = try tx.property(people, "dogs")
        let a = try tx.createObject(people, columns: [pid, pname, page], values: [.int(1), .string("a"), .int(1)])
        let b = try tx.createObject(people, columns: [pid, pname, page], values: [.int(2), .string("b"), .int(2)])
        let d = try (0..<4).map { i in try tx.createObject(dogs, columns: [dname, owner], values: [.string("d\(i)"), .link(i < 3 ? a : b)]) }
        #expect(try tx.backlinks(a, in: people, from: "Dog", property: "owner") == [d[0], d[1], d[2]])
        // An edit after the read, and adds after the read, merge in order.
        try tx.set(d[1], owner, .link(b))
        #expect(try tx.backlinks(a, in: people, from: "Dog", property: "owner") == [d[0], d[2]])
        #expect(try tx.backlinks(b, in: people, from: "Dog", property: "owner") == [d[1], d[3]])
        // A list that holds the same dog twice gives it two entries; removing one leaves one.
        try tx.listAppend(a, listOfDogs, .link(d[3]))
        try tx.listAppend(b, listOfDogs, .link(d[3]))
        try tx.listAppend(a, listOfDogs, .link(d[3]))
        #expect(try tx.backlinks(d[3], in: dogs, from: "Person", property: "dogs") == [a, a, b])
        try tx.listRemove(a, listOfDogs, at: 0)
        #expect(try tx.backlinks(d[3], in: dogs, from: "Person", property: "dogs") == [a, b])
        // Adds not read before a delete: deleting the target nulls every link to it, added or not.
        let e = try tx.createObject(dogs, columns: [dname, owner], values: [.string("e"), .link(a)])
        try tx.delete(people, a)
        #expect(try tx.value(e, owner) == .null)
        #expect(try tx.value(d[0], owner) == .null)
        // Adds not read before a change set is taken inside the transaction: the same changes as committed.
        try tx.createObject(dogs, columns: [dname, owner], values: [.string("f"), .link(b)])
        let inside = try tx.changes(in: "Person", since: before)
        try tx.commit()
        try db.read { s in
            #expect(try s.changes(in: "Person", since: before) == inside)
            let f = try #require(try s.keys(dogs).last)
            #expect(try s.backlinks(b, in: people, from: "Dog", property: "owner") == [d[1], d[3], f])
            #expect(try s.backlinks(d[3], in: dogs, from: "Person", property: "dogs") == [b])
        }
        #expect(try db.verify().isOK)
    }

    /// Added and never read: the sets are merged into the targets' rows at commit, on top of what they held.
    @Test func addsNeverReadAreMergedAtCommit() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("b.realm"))
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            let people = try tx.table("Person")
            let cols = try ["id", "name", "age"].map { try tx.property(people, $0) }
            for i in 0..<600 { try tx.createObject(people, columns: cols, values: [.int(Int64(i)), .string("p\(i)"), .int(1)]) }
        }
        var rng = SplitMix64(seed: 45)
        var expected: [UInt64: [UInt64]] = [:]
        for round in 0..<3 {
            try db.write { tx in
                let people = try tx.table("Person"), dogs = try tx.table("Dog")
                let cols = try ["name", "owner"].map { try tx.property(dogs, $0) }
                for i in 0..<700 {
                    let o = try #require(try tx.object(people, primaryKey: .int(Int64(rng.next() % 600))))
                    let k = try tx.createObject(dogs, columns: cols, values: [.string("r\(round)-\(i)"), .link(o)])
                    expected[o.rawValue, default: []].append(k.rawValue)
                }
            }
        }
        try db.read { s in
            let people = try s.table("Person")
            for k in try s.keys(people) {
                #expect(try s.backlinks(k, in: people, from: "Dog", property: "owner").map(\.rawValue) == (expected[k.rawValue] ?? []).sorted())
            }
        }
        #expect(try db.verify().isOK)
    }
}
