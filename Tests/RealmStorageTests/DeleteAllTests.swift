import Foundation
import Testing
@testable import RealmStorage

/// `deleteAll` of a class with links in and out drops the class at once and fixes the other classes by
/// scanning columns (DECISIONS 38). It must leave exactly what deleting the objects one by one leaves.
@Suite struct DeleteAllTests {
    func below(_ rng: inout SplitMix64, _ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

    static let schema: [ClassSchema] = [
        ClassSchema(name: "Owner", properties: [
            PropertySchema(name: "name", type: .string, isPrimaryKey: true),
            .list("pets", of: "Pet"),
            .link("best", to: "Pet"),
            .link("friend", to: "Owner"),
        ]),
        ClassSchema(name: "Pet", properties: [
            PropertySchema(name: "name", type: .string, isIndexed: true),
            .link("owner", to: "Owner"),
            .list("toys", of: "Toy"),
            .link("mate", to: "Pet"),
            .list("litter", of: "Pet"),
            PropertySchema(name: "tags", type: .string, isList: true),
            .linkingObjects("owners", from: "Owner", property: "pets"),
        ]),
        ClassSchema(name: "Toy", properties: [
            PropertySchema(name: "code", type: .int, isPrimaryKey: true),
            .link("holder", to: "Pet"),
        ]),
    ]

    /// Fills a database from `seed`, then in one more transaction makes pending changes and deletes every
    /// object of `victim`, either with `deleteAll` or one by one.
    func build(_ db: Database, seed: UInt64, victim: String, bulk: Bool) throws {
        var rng = SplitMix64(seed: seed)
        var owners: [ObjectKey] = [], pets: [ObjectKey] = [], toys: [ObjectKey] = []
        try db.write { tx in
            try tx.createClasses(Self.schema)
            for i in 0..<300 { owners.append(try tx.createObject("Owner", ["name": .string("owner \(i) 🐾")])) }
            for i in 0..<700 {
                let owner: Value = below(&rng, 4) == 0 ? .null : .link(owners[below(&rng, owners.count)])
                pets.append(try tx.createObject("Pet", ["name": .string("pet \(i % 50)"), "owner": owner],
                                                lists: ["tags": [.string("t\(i % 7)"), .string("東京")]]))
            }
            for i in 0..<400 {
                let holder: Value = below(&rng, 5) == 0 ? .null : .link(pets[below(&rng, pets.count)])
                toys.append(try tx.createObject("Toy", ["code": .int(Int64(i)), "holder": holder]))
            }
            let o = try tx.table("Owner"), p = try tx.table("Pet")
            let ownerPets = try tx.property(o, "pets"), best = try tx.property(o, "best"), friend = try tx.property(o, "friend")
            let petToys = try tx.property(p, "toys"), mate = try tx.property(p, "mate"), litter = try tx.property(p, "litter")
            for k in owners {
                // Lists may hold the same pet twice.
                for _ in 0..<below(&rng, 6) { try tx.listAppend(k, ownerPets, .link(pets[below(&rng, pets.count)])) }
                if below(&rng, 2) == 0 { try tx.set(k, best, .link(pets[below(&rng, pets.count)])) }
                if below(&rng, 3) == 0 { try tx.set(k, friend, .link(owners[below(&rng, owners.count)])) }
            }
            for k in pets {
                for _ in 0..<below(&rng, 4) { try tx.listAppend(k, petToys, .link(toys[below(&rng, toys.count)])) }
                if below(&rng, 3) == 0 { try tx.set(k, mate, .link(pets[below(&rng, pets.count)])) }
                for _ in 0..<below(&rng, 3) { try tx.listAppend(k, litter, .link(pets[below(&rng, pets.count)])) }
            }
        }
        try db.write { tx in
            // Pending changes in the same transaction: new objects and links, both ways.
            let o = try tx.table("Owner"), p = try tx.table("Pet"), t = try tx.table("Toy")
            let newPet = try tx.createObject("Pet", ["name": .string("new"), "owner": .link(owners[3])])
            try tx.listAppend(owners[5], try tx.property(o, "pets"), .link(newPet))
            try tx.listAppend(newPet, try tx.property(p, "toys"), .link(toys[7]))
            try tx.set(toys[9], try tx.property(t, "holder"), .link(newPet))
            try tx.set(pets[11], try tx.property(p, "owner"), .link(owners[13]))
            try tx.listRemoveAll(owners[17], try tx.property(o, "pets"))
            try tx.createObject("Owner", ["name": .string("late"), "best": .link(pets[19])])
            let table = try tx.table(victim)
            if bulk {
                try tx.deleteAll(table)
            } else {
                for k in try tx.keys(table) { try tx.delete(table, k) }
            }
            #expect(try tx.count(table) == 0)
        }
    }

    func dump(_ db: Database) throws -> [String] { try db.read { try dumpObjects($0) } }

    @Test(arguments: ["Pet", "Owner", "Toy"])
    func deleteAllMatchesDeletingOneByOne(victim: String) throws {
        let dir = TempDir()
        for seed: UInt64 in [1, 2] {
            let bulk = try Database.open(path: dir.file("bulk-\(victim)-\(seed).realm"))
            let single = try Database.open(path: dir.file("single-\(victim)-\(seed).realm"))
            try build(bulk, seed: seed, victim: victim, bulk: true)
            try build(single, seed: seed, victim: victim, bulk: false)
            let expected = try dump(single)
            #expect(expected.count > 600)
            #expect(try dump(bulk) == expected)
            let report = try bulk.verify()
            #expect(report.isOK, "\(report)")
            // The class is usable afterwards, and the freed space is reused without overlap.
            try bulk.write { tx in
                try tx.createObject(victim, victim == "Toy" ? ["code": .int(1)] : victim == "Owner" ? ["name": .string("again")] : [:])
            }
            #expect(try bulk.read { try $0.count(victim) } == 1)
            #expect(try bulk.verify().isOK)
        }
    }
}

/// `deleteAll` nulls the to-one links into the class in one walk of the origins' tree (many leaves, three
/// levels), touching only the origins' rows: the rest, and leaves already changed in the transaction, stay as
/// they were.
@Suite struct DeleteAllLinkWalkTests {
    static let schema: [ClassSchema] = [
        ClassSchema(name: "Owner", properties: [PropertySchema(name: "id", type: .int, isPrimaryKey: true)]),
        ClassSchema(name: "Vet", properties: [PropertySchema(name: "id", type: .int, isPrimaryKey: true)]),
        ClassSchema(name: "Dog", properties: [
            PropertySchema(name: "name", type: .string),
            .link("owner", to: "Owner"),
            .link("vet", to: "Vet"),
        ]),
    ]

    func build(_ db: Database, bulk: Bool) throws {
        var owners: [ObjectKey] = [], vets: [ObjectKey] = [], dogs: [ObjectKey] = []
        try db.write { tx in
            try tx.createClasses(Self.schema)
            for i in 0..<300 { owners.append(try tx.createObject("Owner", ["id": .int(Int64(i))])) }
            for i in 0..<20 { vets.append(try tx.createObject("Vet", ["id": .int(Int64(i))])) }
            let t = try tx.table("Dog")
            let columns = try ["name", "owner", "vet"].map { try tx.property(t, $0) }
            // Dogs 0..<2000 own nothing; after them every third dog has no owner: whole leaves without an
            // origin, then leaves of mixed rows.
            for i in 0..<40_000 {
                let owner: Value = i < 2000 || i % 3 == 0 ? .null : .link(owners[(i * 7) % owners.count])
                dogs.append(try tx.createObject(t, columns: columns, values: [.string("dog \(i) 犬"), owner, .link(vets[i % vets.count])]))
            }
        }
        try db.write { tx in
            let t = try tx.table("Dog")
            // Changes earlier in the same transaction: a dirty leaf, a link moved, a dog added at the end.
            try tx.set(dogs[30_001], try tx.property(t, "name"), .string("renamed"))
            try tx.set(dogs[30_002], try tx.property(t, "owner"), .link(owners[1]))
            try tx.set(dogs[30_003], try tx.property(t, "owner"), .null)
            try tx.createObject("Dog", ["name": .string("late"), "owner": .link(owners[2])])
            let table = try tx.table("Owner")
            if bulk {
                try tx.deleteAll(table)
            } else {
                for k in try tx.keys(table) { try tx.delete(table, k) }
            }
        }
    }

    @Test func deleteAllNullsEveryIncomingLinkAsDeletingOneByOneDoes() throws {
        let dir = TempDir()
        let bulk = try Database.open(path: dir.file("bulk.realm"))
        let single = try Database.open(path: dir.file("single.realm"))
        try build(bulk, bulk: true)
        try build(single, bulk: false)
        let expected = try single.read { try dumpObjects($0) }
        #expect(expected.count > 40_000)
        #expect(try bulk.read { try dumpObjects($0) } == expected)
        try bulk.read { s in
            let t = try s.table("Dog")
            let owner = try s.property(t, "owner"), vet = try s.property(t, "vet"), name = try s.property(t, "name")
            let keys = try s.keys(t)
            #expect(keys.count == 40_001)
            for (i, k) in keys.enumerated() {
                #expect(try s.value(k, owner) == .null)
                // The late dog has no vet.
                if i == 40_000 { continue }
                if case .link = try s.value(k, vet) {} else { Issue.record("dog \(k) lost its vet") }
            }
            #expect(try s.value(keys[30_001], name) == .string("renamed"))
            #expect(try s.value(keys[12_345], name) == .string("dog 12345 犬"))
        }
        let report = try bulk.verify()
        #expect(report.isOK, "\(report)")
    }
}

@Suite struct DeleteAllThenInsertTests {
    /// Inserting after `deleteAll` in the same transaction used index roots remembered from before it
    /// (the bulk-insert plan), which `deleteAll` had freed.
    @Test(arguments: [false, true])
    func insertAfterDeleteAllInOneTransaction(bulkPath: Bool) throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        try db.write { try $0.createClasses(personDogSchema) }
        func add(_ tx: WriteTransaction, _ i: Int) throws {
            let people = try tx.table("Person")
            if bulkPath {
                let columns = try ["id", "name", "age"].map { try tx.property(people, $0) }
                try tx.createObject(people, columns: columns, values: [.int(Int64(i)), .string("n\(i % 10)"), .int(1)])
            } else {
                try tx.createObject(people, ["id": .int(Int64(i)), "name": .string("n\(i % 10)"), "age": .int(1)])
            }
        }
        try db.write { tx in for i in 0..<3000 { try add(tx, i) } }
        try db.write { tx in
            for i in 3000..<3010 { try add(tx, i) }
            try tx.deleteAll(tx.table("Person"))
            for i in 5000..<5300 { try add(tx, i) }
        }
        #expect(try db.verify().isOK)
        try db.read { s in
            let people = try s.table("Person")
            #expect(try s.count(people) == 300)
            #expect(try s.find(s.property(people, "name"), equalTo: .string("n3")).count == 30)
            #expect(try s.object(people, primaryKey: .int(5007)) != nil)
            #expect(try s.object(people, primaryKey: .int(7)) == nil)
        }
    }
}

@Suite struct BulkInsertLinkTests {
    /// The bulk path finds a link's target once for both the check and the backlink; a missing target is
    /// still refused before anything is written, and backlinks come out as the one-by-one path makes them.
    @Test func bulkInsertWithLinksChecksTargetsAndKeepsBacklinksExact() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            for i in 0..<600 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("p\(i)"), "age": .int(1)]) }
        }
        var rng = SplitMix64(seed: 5)
        var expected: [ObjectKey: [ObjectKey]] = [:]
        try db.write { tx in
            let people = try tx.table("Person"), dogs = try tx.table("Dog")
            let columns = try ["name", "owner"].map { try tx.property(dogs, $0) }
            for i in 0..<3000 {
                let owner = try #require(try tx.object(people, primaryKey: .int(Int64(rng.next() % 600))))
                let dog = try tx.createObject(dogs, columns: columns, values: [.string("d\(i)"), .link(owner)])
                expected[owner, default: []].append(dog)
            }
            let gone = try #require(try tx.object(people, primaryKey: .int(7)))
            for d in expected[gone] ?? [] { try tx.set(d, tx.property(dogs, "owner"), .null) }
            expected[gone] = nil
            try tx.delete(people, gone)
            let before = try tx.count(dogs)
            #expect(throws: StorageError.self) { try tx.createObject(dogs, columns: columns, values: [.string("x"), .link(gone)]) }
            #expect(try tx.count(dogs) == before)
        }
        try db.read { s in
            let people = try s.table("Person")
            for k in try s.keys(people) {
                #expect(try s.backlinks(k, in: people, from: "Dog", property: "owner") == (expected[k] ?? []).sorted())
            }
        }
        #expect(try db.verify().isOK)
    }
}
