import Foundation
import Testing
@testable import RealmStorage

/// renameProperty, setIndexed and setPrimaryKey: the schema edits that keep stored data (used by migrations).
@Suite struct SchemaEditTests {
    /// 200 people (id = i, name "p<i % 50>", age i), each with a dog; a committed file.
    func seeded(_ dir: TempDir) throws -> Database {
        let db = try Database.open(path: dir.file("edit.realm"))
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            for i in 0..<200 {
                let p = try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("p\(i % 50)"), "age": .int(Int64(i))])
                let d = try tx.createObject("Dog", ["name": .string("d\(i)"), "owner": .link(p)])
                try tx.listAppend(p, tx.property(tx.table("Person"), "dogs"), .link(d))
            }
        }
        return db
    }

    func expectSound(_ db: Database, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let report = try db.verify()
        #expect(report.isOK, "\(report)", sourceLocation: sourceLocation)
    }

    @Test func renameKeepsValuesIndexLinksAndBacklinks() throws {
        let dir = TempDir()
        let db = try seeded(dir)
        try db.write { tx in
            try tx.renameProperty("Person", from: "name", to: "title")
            try tx.renameProperty("Person", from: "dogs", to: "pets")
            try tx.renameProperty("Dog", from: "owner", to: "keeper")
        }
        try expectSound(db)
        try db.read { s in
            let people = try s.table("Person")
            let dogs = try s.table("Dog")
            #expect(s.classSchema("Person")?.property(named: "title")?.isIndexed == true)
            #expect(s.classSchema("Person")?.property(named: "name") == nil)
            #expect(s.classSchema("Dog")?.property(named: "owners")?.originProperty == "pets")
            #expect(try s.find(s.property(people, "title"), equalTo: .string("p7")).count == 4)
            let p3 = try #require(try s.object(people, primaryKey: .int(3)))
            let d3 = try #require(try s.list(p3, s.property(people, "pets")).first)
            guard case .link(let dk) = d3 else { Issue.record("not a link"); return }
            #expect(try s.value(dk, s.property(dogs, "keeper")) == .link(p3))
            #expect(try s.list(dk, s.property(dogs, "owners")) == [.link(p3)])
            #expect(try s.backlinks(p3, in: people, from: "Dog", property: "keeper") == [dk])
        }
        #expect(throws: StorageError.self) { try db.write { tx in try tx.renameProperty("Person", from: "age", to: "title") } }
    }

    @Test func indexAddedAndRemoved() throws {
        let dir = TempDir()
        let db = try seeded(dir)
        try db.write { tx in
            try tx.setIndexed("Person", "age", true)
            try tx.setIndexed("Person", "name", false)
        }
        try expectSound(db)
        try db.read { s in
            let t = try s.table("Person")
            #expect(s.classSchema("Person")?.property(named: "age")?.isIndexed == true)
            #expect(s.classSchema("Person")?.property(named: "name")?.isIndexed == false)
            #expect(try s.find(s.property(t, "age"), equalTo: .int(42)).count == 1)
            #expect(try s.find(s.property(t, "name"), equalTo: .string("p7")).count == 4)
        }
    }

    @Test func aUniquePropertyBecomesThePrimaryKey() throws {
        let dir = TempDir()
        let db = try seeded(dir)
        try db.write { tx in try tx.setPrimaryKey("Person", "age") }
        try expectSound(db)
        try db.write { tx in
            let t = try tx.table("Person")
            let k = try #require(try tx.object(t, primaryKey: .int(17)))
            #expect(try tx.value(k, tx.property(t, "id")) == .int(17))
            // The old key is a plain property now: duplicates are allowed; the new one refuses them.
            try tx.createObject("Person", ["id": .int(17), "age": .int(1000)])
            #expect(throws: StorageError.duplicatePrimaryKey(className: "Person", property: "age")) {
                try tx.createObject("Person", ["id": .int(5000), "age": .int(17)])
            }
            #expect(tx.classSchema("Person")?.property(named: "age")?.isPrimaryKey == true)
            #expect(tx.classSchema("Person")?.property(named: "id")?.isPrimaryKey == false)
        }
        try expectSound(db)
        try db.read { s in
            let t = try s.table("Person")
            #expect(try s.object(t, primaryKey: .int(1000)) != nil)
            #expect(try s.find(s.property(t, "id"), equalTo: .int(17)).count == 2)
        }
    }

    @Test func duplicatesAreRefusedAndNothingChanges() throws {
        let dir = TempDir()
        let db = try seeded(dir)
        try db.write { tx in
            #expect(throws: StorageError.duplicatePrimaryKey(className: "Person", property: "name")) {
                try tx.setPrimaryKey("Person", "name")
            }
            // The transaction is still usable and the old key still works.
            let t = try tx.table("Person")
            #expect(try tx.object(t, primaryKey: .int(3)) != nil)
            #expect(tx.classSchema("Person")?.property(named: "id")?.isPrimaryKey == true)
            #expect(tx.classSchema("Person")?.property(named: "name")?.isIndexed == true)
            #expect(throws: StorageError.self) { try tx.setPrimaryKey("Person", "tags") }
            #expect(throws: StorageError.self) { try tx.setPrimaryKey("Dog", "weight") }
        }
        try expectSound(db)
    }

    @Test func anIndexedKeyIsDroppedAndAnotherChosen() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("k.realm"))
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "K", properties: [
                PropertySchema(name: "code", type: .string, isPrimaryKey: true),
                PropertySchema(name: "uid", type: .string, isOptional: true),
            ]))
            for i in 0..<100 { try tx.createObject("K", ["code": .string("c\(i)"), "uid": i == 0 ? .null : .string("u\(i)")]) }
        }
        try db.write { tx in try tx.setPrimaryKey("K", nil) }
        try expectSound(db)
        try db.write { tx in
            try tx.createObject("K", ["code": .string("c1")])  // no key: duplicates are fine
            #expect(throws: StorageError.self) { try tx.setPrimaryKey("K", "uid") }  // two nulls now
        }
        try db.write { tx in
            let t = try tx.table("K")
            try tx.delete(t, try #require(try tx.find(tx.property(t, "uid"), equalTo: .null).last))
            try tx.setPrimaryKey("K", "uid")
        }
        try expectSound(db)
        try db.read { s in
            let t = try s.table("K")
            #expect(try s.object(t, primaryKey: .string("u5")) != nil)
            #expect(try s.object(t, primaryKey: .null) != nil)
        }
    }

    @Test func aKeyThatIsTheObjectKeyIsDroppedAndNewObjectsGetKeysAboveTheOld() throws {
        let dir = TempDir()
        let db = try seeded(dir)
        try db.write { tx in try tx.setPrimaryKey("Person", nil) }
        try expectSound(db)
        try db.write { tx in
            let t = try tx.table("Person")
            for i in 0..<50 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("again")]) }
            #expect(try tx.count("Person") == 250)
            #expect(try tx.find(tx.property(t, "id"), equalTo: .int(7)).count == 2)
        }
        try expectSound(db)
        // And back: the ids are no longer unique, so they cannot be the key again.
        try db.write { tx in
            #expect(throws: StorageError.duplicatePrimaryKey(className: "Person", property: "id")) { try tx.setPrimaryKey("Person", "id") }
        }
        try expectSound(db)
        let reopened = try Database.open(path: dir.file("edit.realm"))
        #expect(try reopened.verify().isOK)
    }
}
