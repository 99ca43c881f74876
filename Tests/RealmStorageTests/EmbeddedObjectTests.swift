import Foundation
import Testing
@testable import RealmStorage

/// Embedded objects (Realm's `EmbeddedObject`): created only through their owner, never linked twice, deleted
/// with the link, element or object that owns them, through every level of nesting.
@Suite struct EmbeddedObjectTests {
    static let schema: [ClassSchema] = [
        ClassSchema(name: "Person", properties: [
            PropertySchema(name: "name", type: .string),
            .link("address", to: "Address"),
            .list("addresses", of: "Address"),
            .link("friend", to: "Person"),
        ]),
        ClassSchema(name: "Address", properties: [
            PropertySchema(name: "city", type: .string),
            PropertySchema(name: "lines", type: .string, isList: true),
            .link("geo", to: "Geo"),
            .linkingObjects("residents", from: "Person", property: "address"),
        ], isEmbedded: true),
        ClassSchema(name: "Geo", properties: [
            PropertySchema(name: "lat", type: .double),
            .list("points", of: "Point"),
        ], isEmbedded: true),
        ClassSchema(name: "Point", properties: [PropertySchema(name: "n", type: .int)], isEmbedded: true),
    ]

    /// A new database with `schema`.
    static func database(_ dir: TempDir, _ name: String = "a.realm") throws -> Database {
        let db = try Database.open(path: dir.file(name))
        try db.write { try $0.createClasses(schema) }
        return db
    }

    /// Handles of the schema's properties in one snapshot or transaction.
    struct Handles {
        let person, address, geo, point: TableHandle
        let name, home, homes, friend, city, lines, geoLink, residents, lat, points, n: PropertyHandle

        init(_ s: Snapshot) throws {
            person = try s.table("Person"); address = try s.table("Address"); geo = try s.table("Geo"); point = try s.table("Point")
            name = try s.property(person, "name"); home = try s.property(person, "address")
            homes = try s.property(person, "addresses"); friend = try s.property(person, "friend")
            city = try s.property(address, "city"); lines = try s.property(address, "lines")
            geoLink = try s.property(address, "geo"); residents = try s.property(address, "residents")
            lat = try s.property(geo, "lat"); points = try s.property(geo, "points"); n = try s.property(point, "n")
        }
    }

    /// The number of objects of each class, in schema order.
    static func counts(_ db: Database) throws -> [Int] {
        try db.read { s in try ["Person", "Address", "Geo", "Point"].map { try s.count($0) } }
    }

    /// `verify` finds nothing: links and backlinks are each other's inverse and every embedded object has
    /// exactly one owner.
    static func expectSound(_ db: Database, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let report = try db.verify()
        #expect(report.problems == [], sourceLocation: sourceLocation)
    }

    /// Whether `body` throws `existingEmbeddedObject` naming `property` of `className`, with Realm's text.
    static func refusesExisting(_ className: String, _ property: String, _ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch let e as StorageError {
            guard case .existingEmbeddedObject(className, property, _) = e else { return false }
            return e.description.contains("Cannot set a link to an existing managed embedded object")
                && e.description.contains("\(className).\(property)")
        } catch {
            return false
        }
    }

    // MARK: Creation

    @Test func anEmbeddedObjectIsNotCreatedOnItsOwn() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        try db.write { tx in
            let h = try Handles(tx)
            for attempt in 0..<3 {
                do {
                    switch attempt {
                    case 0: try tx.createObject("Address", ["city": .string("Oslo")])
                    case 1: try tx.createObject(h.address, columns: [h.city], values: [.string("Oslo")])
                    default: try tx.createObject(h.point)
                    }
                    Issue.record("an embedded object was created on its own")
                } catch let e as StorageError {
                    let name = attempt == 2 ? "Point" : "Address"
                    #expect(e == .embeddedObjectCreation(className: name))
                    #expect(e.description.hasPrefix("Explicit creation of embedded object not allowed in: \(name)"))
                }
            }
        }
        #expect(try Self.counts(db) == [0, 0, 0, 0])
    }

    @Test func createEmbeddedObjectLinksANewObjectAndDeletesTheOldOne() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let (p, first, second) = try db.write { tx in
            let h = try Handles(tx)
            let p = try tx.createObject(h.person, ["name": .string("Ann")])
            let first = try tx.createEmbeddedObject(in: p, h.home, ["city": .string("Oslo")], lists: ["lines": [.string("Storgata 1")]])
            #expect(try tx.value(p, h.home) == .link(first))
            #expect(try tx.value(first, h.city) == .string("Oslo"))
            #expect(try tx.list(first, h.lines) == [.string("Storgata 1")])
            _ = try tx.createEmbeddedObject(in: first, h.geoLink, ["lat": .double(59.9)])
            return (p, first, try tx.createEmbeddedObject(in: p, h.home, ["city": .string("Bergen")]))
        }
        try db.read { s in
            let h = try Handles(s)
            #expect(try s.value(p, h.home) == .link(second))
            #expect(try s.exists(h.address, first) == false)
            #expect(try s.value(second, h.city) == .string("Bergen"))
            #expect(try s.list(second, h.residents) == [.link(p)])
            #expect(try s.backlinks(second, in: h.address, from: "Person", property: "address") == [p])
        }
        // The replaced address went with its geo.
        #expect(try Self.counts(db) == [1, 1, 0, 0])
        try Self.expectSound(db)
    }

    @Test func aRefusedCreationChangesNothing() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let (p, a) = try db.write { tx in
            let h = try Handles(tx)
            let p = try tx.createObject(h.person)
            return (p, try tx.createEmbeddedObject(in: p, h.home, ["city": .string("Oslo")]))
        }
        try db.write { tx in
            let h = try Handles(tx)
            #expect(throws: StorageError.typeMismatch(className: "Address", property: "city", expected: "string", got: "int")) {
                try tx.createEmbeddedObject(in: p, h.home, ["city": .int(1)])
            }
            #expect(throws: StorageError.noSuchProperty(className: "Address", property: "zip")) {
                try tx.listInsertEmbedded(p, h.homes, at: 0, ["zip": .int(1)])
            }
            #expect(throws: StorageError.indexOutOfRange(index: 1, count: 0)) { try tx.listInsertEmbedded(p, h.homes, at: 1) }
            #expect(throws: StorageError.indexOutOfRange(index: 0, count: 0)) { try tx.listSetEmbedded(p, h.homes, at: 0) }
            #expect(throws: StorageError.noSuchObject(className: "Person", key: 99)) { try tx.createEmbeddedObject(in: ObjectKey(99), h.home) }
            // Properties that do not hold embedded objects.
            #expect(throws: StorageError.typeMismatch(className: "Person", property: "friend", expected: "a to-one link to an embedded class",
                                                      got: "a link to 'Person', which is not embedded")) {
                try tx.createEmbeddedObject(in: p, h.friend)
            }
            #expect(throws: StorageError.typeMismatch(className: "Person", property: "addresses", expected: "a to-one link to an embedded class",
                                                      got: "a collection")) {
                try tx.createEmbeddedObject(in: p, h.homes)
            }
            #expect(throws: StorageError.self) { try tx.listInsertEmbedded(p, h.home, at: 0) }
            #expect(throws: StorageError.typeMismatch(className: "Address", property: "lines", expected: "a list of links to an embedded class",
                                                      got: "string")) {
                try tx.listInsertEmbedded(a, h.lines, at: 0)
            }
        }
        #expect(try Self.counts(db) == [1, 1, 0, 0])
        #expect(try db.read { s in try s.value(p, try Handles(s).home) } == .link(a))
        try Self.expectSound(db)
    }

    // MARK: Links to existing embedded objects

    @Test func linkingAnExistingEmbeddedObjectIsRefused() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        try db.write { tx in
            let h = try Handles(tx)
            let p = try tx.createObject(h.person), q = try tx.createObject(h.person)
            let a = try tx.createEmbeddedObject(in: p, h.home)
            let b = try tx.listInsertEmbedded(p, h.homes, at: 0)
            #expect(Self.refusesExisting("Person", "address") { try tx.set(q, h.home, .link(a)) })
            // Even the link it already is: only a new object may be placed.
            #expect(Self.refusesExisting("Person", "address") { try tx.set(p, h.home, .link(a)) })
            #expect(Self.refusesExisting("Person", "addresses") { try tx.listAppend(q, h.homes, .link(a)) })
            #expect(Self.refusesExisting("Person", "addresses") { try tx.listInsert(p, h.homes, .link(b), at: 0) })
            #expect(Self.refusesExisting("Person", "addresses") { try tx.listSet(p, h.homes, .link(a), at: 0) })
            #expect(Self.refusesExisting("Person", "addresses") { try tx.setList(p, h.homes, [.link(b)]) })
            #expect(Self.refusesExisting("Person", "address") { try tx.createObject(h.person, ["address": .link(a)]) })
            #expect(Self.refusesExisting("Person", "addresses") { try tx.createObject(h.person, lists: ["addresses": [.link(b)]]) })
            #expect(Self.refusesExisting("Person", "address") { try tx.createObject(h.person, columns: [h.home], values: [.link(a)]) })
            #expect(Self.refusesExisting("Person", "address") { _ = try tx.updateAll(h.person, h.home) { _ in .link(a) } })
            #expect(try tx.value(p, h.home) == .link(a))
            #expect(try tx.list(p, h.homes) == [.link(b)])
        }
        #expect(try Self.counts(db) == [2, 2, 0, 0])
        try Self.expectSound(db)
    }

    // MARK: Letting go deletes

    @Test func aNullLinkDeletesTheEmbeddedObjectWithItsChildren() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        try db.write { tx in
            let h = try Handles(tx)
            let p = try tx.createObject(h.person)
            let a = try tx.createEmbeddedObject(in: p, h.home)
            let g = try tx.createEmbeddedObject(in: a, h.geoLink)
            for i in 0..<3 { try tx.listInsertEmbedded(g, h.points, at: i, ["n": .int(Int64(i))]) }
            try tx.set(p, h.home, .null)
            #expect(try tx.value(p, h.home) == .null)
            #expect(try tx.exists(h.address, a) == false)
        }
        #expect(try Self.counts(db) == [1, 0, 0, 0])
        try Self.expectSound(db)
    }

    @Test func listsOfEmbeddedObjects() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let p = try db.write { tx in try tx.createObject("Person") }
        var keys: [ObjectKey] = []
        func cities(_ s: Snapshot) throws -> [Value] {
            let h = try Handles(s)
            return try s.list(p, h.homes).map { v in
                guard case .link(let k) = v else { return .null }
                #expect(try s.owner(of: k, in: h.address).map { "\($0.className) \($0.key) \($0.property)" } == "Person \(p) addresses")
                return try s.value(k, h.city)
            }
        }
        // Insert (at the end, at the front), set, move, remove: the backlinks stay exact after each step.
        let steps: [(String, (WriteTransaction, Handles) throws -> Void)] = [
            ("a b c", { tx, h in for (i, c) in ["a", "b", "c"].enumerated() { keys.append(try tx.listInsertEmbedded(p, h.homes, at: i, ["city": .string(c)])) } }),
            ("z a b c", { tx, h in keys.insert(try tx.listInsertEmbedded(p, h.homes, at: 0, ["city": .string("z")]), at: 0) }),
            ("z a y c", { tx, h in keys[2] = try tx.listSetEmbedded(p, h.homes, at: 2, ["city": .string("y")]) }),
            ("a y z c", { tx, h in try tx.listMove(p, h.homes, from: 0, to: 2); keys = [keys[1], keys[2], keys[0], keys[3]] }),
            ("a z c", { tx, h in try tx.listRemove(p, h.homes, at: 1); keys.remove(at: 1) }),
        ]
        for (expected, step) in steps {
            try db.write { tx in try step(tx, try Handles(tx)) }
            #expect(try db.read { try cities($0) } == expected.split(separator: " ").map { .string(String($0)) })
            #expect(try Self.counts(db)[1] == keys.count, "\(expected)")
            #expect(try db.read { s in try s.list(p, try Handles(s).homes) } == keys.map(Value.link))
            try Self.expectSound(db)
        }
        try db.write { tx in try tx.listRemoveAll(p, try Handles(tx).homes) }
        #expect(try Self.counts(db) == [1, 0, 0, 0])
        // setList with no elements lets go of every element too.
        try db.write { tx in
            let h = try Handles(tx)
            for i in 0..<4 { try tx.listInsertEmbedded(p, h.homes, at: i) }
            try tx.setList(p, h.homes, [])
        }
        #expect(try Self.counts(db) == [1, 0, 0, 0])
        try Self.expectSound(db)
    }

    // MARK: Deleting

    /// Person → Address → Geo → Points: `n` people with an address each and one in a list, each geo with
    /// `points` points.
    @discardableResult
    static func fill(_ tx: WriteTransaction, people n: Int, points: Int) throws -> [ObjectKey] {
        let h = try Handles(tx)
        var people: [ObjectKey] = []
        for i in 0..<n {
            let p = try tx.createObject(h.person, ["name": .string("p\(i)")])
            for a in [try tx.createEmbeddedObject(in: p, h.home, ["city": .string("c\(i)")]),
                      try tx.listInsertEmbedded(p, h.homes, at: 0, ["city": .string("d\(i)")])] {
                let g = try tx.createEmbeddedObject(in: a, h.geoLink, ["lat": .double(Double(i))])
                for j in 0..<points { try tx.listInsertEmbedded(g, h.points, at: j, ["n": .int(Int64(j))]) }
            }
            people.append(p)
        }
        return people
    }

    @Test func deletingTheOwnerDeletesThreeLevelsOfEmbeddedObjects() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let people = try db.write { tx in try Self.fill(tx, people: 3, points: 2) }
        #expect(try Self.counts(db) == [3, 6, 6, 12])
        let before = try db.snapshot()
        defer { before.close() }
        try db.write { tx in try tx.delete("Person", people[1]) }
        #expect(try Self.counts(db) == [2, 4, 4, 8])
        try Self.expectSound(db)
        // The change sets report the cascaded deletions as deletions of their classes.
        try db.read { s in
            for (name, n) in [("Person", 1), ("Address", 2), ("Geo", 2), ("Point", 4)] {
                let changes = try s.changes(in: name, since: before)
                #expect(changes.deleted.count == n, "\(name)")
                #expect(changes.inserted.isEmpty && changes.modified.isEmpty, "\(name)")
            }
        }
    }

    @Test func tenThousandEmbeddedObjectsSeveralLevelsDeepGoWithTheirOwner() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let people = try db.write { tx in try Self.fill(tx, people: 1, points: 5_000) }
        #expect(try Self.counts(db) == [1, 2, 2, 10_000])
        try db.write { tx in try tx.delete("Person", people[0]) }
        #expect(try Self.counts(db) == [0, 0, 0, 0])
        try Self.expectSound(db)
    }

    @Test func deletingAnEmbeddedObjectDirectlyClearsItsOwner() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let p = try db.write { tx in try Self.fill(tx, people: 1, points: 2)[0] }
        try db.write { tx in
            let h = try Handles(tx)
            guard case .link(let a) = try tx.value(p, h.home), case .link(let b) = try tx.list(p, h.homes).first else {
                Issue.record("no addresses"); return
            }
            try tx.delete(h.address, a)
            #expect(try tx.value(p, h.home) == .null)
            try tx.delete(h.address, b)
            #expect(try tx.list(p, h.homes) == [])
        }
        // Their geos and points went with them.
        #expect(try Self.counts(db) == [1, 0, 0, 0])
        try Self.expectSound(db)
    }

    @Test func deleteAllDeletesTheEmbeddedObjectsOfTheClass() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let people = try db.write { tx in try Self.fill(tx, people: 4, points: 3) }
        // All the addresses: their owners' links become null, their geos and points go.
        try db.write { tx in try tx.deleteAll(try tx.table("Address")) }
        #expect(try Self.counts(db) == [4, 0, 0, 0])
        try db.read { s in
            let h = try Handles(s)
            for p in people {
                #expect(try s.value(p, h.home) == .null)
                #expect(try s.list(p, h.homes) == [])
            }
        }
        try Self.expectSound(db)
        try db.write { tx in try Self.fill(tx, people: 2, points: 3) }
        try db.write { tx in try tx.deleteAll(try tx.table("Person")) }
        #expect(try Self.counts(db) == [0, 0, 0, 0])
        try Self.expectSound(db)
    }

    /// Deleting every owner of one class empties the embedded class whole only when that leaves it empty: an
    /// embedded class owned from two classes keeps the other class's objects.
    @Test func deleteAllOfOneOwnerClassKeepsTheEmbeddedObjectsOfAnother() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("two.realm"))
        try db.write { tx in
            try tx.createClasses([
                ClassSchema(name: "Tag", properties: [PropertySchema(name: "n", type: .int), .link("inner", to: "Inner")], isEmbedded: true),
                ClassSchema(name: "Inner", properties: [PropertySchema(name: "x", type: .int)], isEmbedded: true),
                ClassSchema(name: "A", properties: [.link("tag", to: "Tag")]),
                ClassSchema(name: "B", properties: [.link("tag", to: "Tag")]),
            ])
            for (cls, n) in [("A", 3), ("B", 2)] {
                let t = try tx.table(cls)
                for i in 0..<n {
                    let o = try tx.createObject(t)
                    let tag = try tx.createEmbeddedObject(in: o, tx.property(t, "tag"), ["n": .int(Int64(i))])
                    try tx.createEmbeddedObject(in: tag, tx.property(tx.table("Tag"), "inner"), ["x": .int(Int64(i))])
                }
            }
        }
        try db.write { tx in try tx.deleteAll(tx.table("A")) }
        #expect(try db.read { s in [try s.count("A"), try s.count("B"), try s.count("Tag"), try s.count("Inner")] } == [0, 2, 2, 2])
        #expect(try db.verify().isOK)
        try db.write { tx in try tx.deleteAll(tx.table("B")) }
        #expect(try db.read { s in [try s.count("B"), try s.count("Tag"), try s.count("Inner")] } == [0, 0, 0])
        #expect(try db.verify().isOK)
    }

    @Test func removingTheOwningPropertyOrClassDeletesTheEmbeddedObjects() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        try db.write { tx in try Self.fill(tx, people: 3, points: 2) }
        // A class that embedded objects are linked to stays while the link does.
        #expect(throws: StorageError.invalidSchema("cannot remove class 'Address': Person.address refers to it")) {
            try db.write { tx in try tx.removeClass("Address") }
        }
        try db.write { tx in try tx.removeProperty("Person", "addresses") }
        #expect(try Self.counts(db) == [3, 3, 3, 6])
        try Self.expectSound(db)
        // Person goes once Address.residents (which lists people) has gone.
        try db.write { tx in
            try tx.removeProperty("Address", "residents")
            try tx.removeClass("Person")
        }
        #expect(try db.read { s in try ["Address", "Geo", "Point"].map { try s.count($0) } } == [0, 0, 0])
        try Self.expectSound(db)
    }

    // MARK: Schema

    @Test func cyclesThroughEmbeddedClassesAreRefused() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        func refusal(_ classes: [ClassSchema]) -> String? {
            do {
                try db.write { try $0.createClasses(classes) }
                return nil
            } catch StorageError.invalidSchema(let m) { return m } catch { return "\(error)" }
        }
        let node = ClassSchema(name: "Node", properties: [PropertySchema(name: "v", type: .int), .link("child", to: "Node")], isEmbedded: true)
        #expect(refusal([node]) == "Cycles containing embedded objects are not currently supported: 'Node.child'")
        let a = ClassSchema(name: "A", properties: [.list("bs", of: "B")], isEmbedded: true)
        let b = ClassSchema(name: "B", properties: [.link("a", to: "A")], isEmbedded: true)
        #expect(refusal([a, b]) == "Cycles containing embedded objects are not currently supported: 'A.bs.a'")
        #expect(try db.read { $0.schema.isEmpty })
        // Through a top-level class there is no cycle (each object still has one owner), nor in a top-level
        // class linking to itself.
        let top = ClassSchema(name: "Top", properties: [.link("e", to: "E"), .link("next", to: "Top")])
        let e = ClassSchema(name: "E", properties: [.link("top", to: "Top"), .link("f", to: "F")], isEmbedded: true)
        let f = ClassSchema(name: "F", properties: [PropertySchema(name: "v", type: .int)], isEmbedded: true)
        #expect(refusal([top, e, f]) == nil)
        // A property that would close a cycle is refused and the schema stays as it was.
        #expect(throws: StorageError.invalidSchema("Cycles containing embedded objects are not currently supported: 'E.f.back'")) {
            try db.write { try $0.addProperty("F", .link("back", to: "E")) }
        }
        #expect(try db.read { $0.classSchema("F")?.properties.map(\.name) } == ["v"])
    }

    /// A format-5 file another process has open stays format 5 (a build that reads only format 5 may be that
    /// process), so it takes no embedded class.
    @Test func aFileThatStaysFormatFiveRefusesEmbeddedClasses() throws {
        try PageBoundChecksumTests.withSharedFormatFiveFixture { db in
            do {
                try db.write { tx in try tx.createClass(ClassSchema(name: "Spot", properties: [], isEmbedded: true)) }
                Issue.record("a format-5 file took an embedded class")
            } catch StorageError.invalidSchema(let m) {
                #expect(m.hasPrefix("embedded class 'Spot' needs file format 7; this file is format 5"), "\(m)")
            }
            #expect(try db.read { $0.classSchema("Spot") } == nil)
        }
    }

    @Test func anEmbeddedClassTakesNoPrimaryKeyLater() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        #expect(throws: StorageError.invalidSchema("embedded class 'Address' cannot have a primary key ('city')")) {
            try db.write { tx in try tx.setPrimaryKey("Address", "city") }
        }
        #expect(throws: StorageError.invalidSchema("embedded class 'Geo' cannot have a primary key ('id')")) {
            try db.write { tx in try tx.addProperty("Geo", PropertySchema(name: "id", type: .int, isPrimaryKey: true)) }
        }
        #expect(try db.read { s in s.classSchema("Address")?.primaryKey == nil && s.classSchema("Geo")?.property(named: "id") == nil })
        // Linking objects on an embedded class are allowed (Realm's `LinkingObjects` of an `EmbeddedObject`).
        try db.write { tx in try tx.addProperty("Geo", .linkingObjects("places", from: "Address", property: "geo")) }
        try db.write { tx in
            let h = try Handles(tx)
            let p = try tx.createObject(h.person)
            let a = try tx.createEmbeddedObject(in: p, h.home)
            let g = try tx.createEmbeddedObject(in: a, h.geoLink)
            #expect(try tx.list(g, try tx.property(h.geo, "places")) == [.link(a)])
            #expect(try tx.list(a, h.residents) == [.link(p)])
        }
        try Self.expectSound(db)
    }

    @Test func ownerNamesTheSingleIncomingLink() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let p = try db.write { tx in try Self.fill(tx, people: 1, points: 1)[0] }
        try db.read { s in
            let h = try Handles(s)
            guard case .link(let a) = try s.value(p, h.home), case .link(let b) = try s.list(p, h.homes).first,
                  case .link(let g) = try s.value(a, h.geoLink), case .link(let pt) = try s.list(g, h.points).first else {
                Issue.record("no embedded objects"); return
            }
            func owner(_ k: ObjectKey, _ t: TableHandle) throws -> String? {
                try s.owner(of: k, in: t).map { "\($0.className) \($0.key.rawValue) \($0.property)" }
            }
            #expect(try owner(a, h.address) == "Person \(p.rawValue) address")
            #expect(try owner(b, h.address) == "Person \(p.rawValue) addresses")
            #expect(try owner(g, h.geo) == "Address \(a.rawValue) geo")
            #expect(try owner(pt, h.point) == "Geo \(g.rawValue) points")
            #expect(try owner(p, h.person) == nil)
            #expect(throws: StorageError.noSuchObject(className: "Address", key: 999)) { try s.owner(of: ObjectKey(999), in: h.address) }
        }
    }

    // MARK: Verify, reopen, compaction

    @Test func verifyFindsAnOrphanAndASharedEmbeddedObject() throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        let (orphan, shared) = try db.write { tx in
            let h = try Handles(tx)
            let p = try tx.createObject(h.person), q = try tx.createObject(h.person)
            let shared = try tx.createEmbeddedObject(in: p, h.home)
            // Planted as no public call makes them: an address no one owns, and q linking p's address too.
            let orphan = try tx.newEmbeddedObject(try #require(tx.catalogue.classInfo(named: "Address")), [:], lists: [:])
            let pc = try #require(tx.catalogue.classInfo(named: "Person"))
            let link = try #require(pc.property(named: "address"))
            let (leaf, row) = try tx.mutableRow(pc.classID, q.rawValue)
            try leaf.set(row: row, property: link, .link(shared))
            try tx.addBacklink(target: shared.rawValue, via: link, from: pc.classID, origin: q.rawValue)
            return (orphan, shared)
        }
        // In key order: the shared address was made first.
        #expect(try db.verify().problems == [
            "Address #\(shared.rawValue): embedded object with 2 incoming links (it must have exactly one owner)",
            "Address #\(orphan.rawValue): embedded object without an owner (no link or list holds it)",
        ])
        #expect(try db.read { s in try s.owner(of: orphan, in: try s.table("Address")) } == nil)
    }

    @Test func reopeningAndCompactionKeepEmbeddedObjects() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        var dump: [String] = []
        do {
            let db = try Self.database(dir)
            try db.write { tx in try Self.fill(tx, people: 20, points: 3) }
            try db.write { tx in
                let t = try tx.table("Person")
                for k in try tx.keys(t).prefix(10) { try tx.delete(t, k) }
            }
            dump = try db.read { try dumpObjects($0) }
            try db.writeCopy(to: dir.file("copy.realm"))
        }
        for file in [path, dir.file("copy.realm")] {
            let db = try Database.open(path: file)
            #expect(try db.read { try dumpObjects($0) } == dump)
            #expect(try db.read { $0.classSchema("Geo")?.isEmbedded } == true)
            #expect(try Self.counts(db) == [10, 20, 20, 60])
            try Self.expectSound(db)
            // The rules hold in the reopened file and the copy.
            #expect(throws: StorageError.embeddedObjectCreation(className: "Geo")) { try db.write { tx in try tx.createObject("Geo") } }
            try db.write { tx in try tx.deleteAll(try tx.table("Person")) }
            #expect(try Self.counts(db) == [0, 0, 0, 0])
            try Self.expectSound(db)
        }
        do {
            let db = try Database.open(path: path)
            try db.write { tx in try Self.fill(tx, people: 5, points: 2) }
            let before = try db.read { try dumpObjects($0) }
            try db.compact()
            #expect(try db.read { try dumpObjects($0) } == before)
            try Self.expectSound(db)
        }
    }

    // MARK: Random operations against a model

    /// An address as the model keeps it: its city and its geo's latitude (nil: no geo).
    struct ModelAddress: Equatable {
        var city: String
        var lat: Double?
    }

    struct ModelPerson: Equatable {
        var home: ModelAddress?
        var homes: [ModelAddress] = []
    }

    /// What the database holds, read back in the model's terms.
    static func read(_ s: Snapshot) throws -> [ObjectKey: ModelPerson] {
        let h = try Handles(s)
        func address(_ v: Value) throws -> ModelAddress? {
            guard case .link(let a) = v else { return nil }
            guard case .string(let city) = try s.value(a, h.city) else { return nil }
            var lat: Double?
            if case .link(let g) = try s.value(a, h.geoLink), case .double(let d) = try s.value(g, h.lat) { lat = d }
            return ModelAddress(city: city, lat: lat)
        }
        var out: [ObjectKey: ModelPerson] = [:]
        for p in try s.keys(h.person) {
            out[p] = ModelPerson(home: try address(try s.value(p, h.home)), homes: try s.list(p, h.homes).compactMap { try address($0) })
        }
        return out
    }

    /// Seeded random sequences of every embedded operation, checked against a plain model after each
    /// transaction, with `verify` (links, backlinks, one owner each) every few.
    @Test(arguments: [1, 2, 3] as [UInt64]) func randomOperationsMatchTheModel(seed: UInt64) throws {
        let dir = TempDir()
        let db = try Self.database(dir)
        var rng = SplitMix64(seed: seed)
        func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        var model: [ObjectKey: ModelPerson] = [:]
        var serial = 0
        for round in 0..<40 {
            try db.write { tx in
                let h = try Handles(tx)
                for _ in 0..<8 {
                    serial += 1
                    let city = "c\(serial)"
                    let people = model.keys.sorted()
                    guard let p = people.isEmpty ? nil : people[below(people.count)], below(12) != 0 else {
                        model[try tx.createObject(h.person, ["name": .string(city)])] = ModelPerson()
                        continue
                    }
                    let n = model[p]!.homes.count
                    switch below(11) {
                    case 0:
                        try tx.createEmbeddedObject(in: p, h.home, ["city": .string(city)])
                        model[p]!.home = ModelAddress(city: city)
                    case 1:
                        try tx.set(p, h.home, .null)
                        model[p]!.home = nil
                    case 2, 3:
                        let i = below(n + 1)
                        try tx.listInsertEmbedded(p, h.homes, at: i, ["city": .string(city)])
                        model[p]!.homes.insert(ModelAddress(city: city), at: i)
                    case 4 where n > 0:
                        let i = below(n)
                        try tx.listSetEmbedded(p, h.homes, at: i, ["city": .string(city)])
                        model[p]!.homes[i] = ModelAddress(city: city)
                    case 5 where n > 0:
                        let i = below(n)
                        try tx.listRemove(p, h.homes, at: i)
                        model[p]!.homes.remove(at: i)
                    case 6 where n > 0:
                        let from = below(n), to = below(n)
                        try tx.listMove(p, h.homes, from: from, to: to)
                        model[p]!.homes.insert(model[p]!.homes.remove(at: from), at: to)
                    case 7:
                        // A geo for the home or an element (replacing the one it had).
                        let lat = Double(serial)
                        let i = below(n + 1)
                        if i == n {
                            guard case .link(let a) = try tx.value(p, h.home) else { continue }
                            try tx.createEmbeddedObject(in: a, h.geoLink, ["lat": .double(lat)])
                            model[p]!.home!.lat = lat
                        } else {
                            guard case .link(let a) = try tx.list(p, h.homes)[i] else { continue }
                            try tx.createEmbeddedObject(in: a, h.geoLink, ["lat": .double(lat)])
                            model[p]!.homes[i].lat = lat
                        }
                    case 8:
                        try tx.delete(h.person, p)
                        model[p] = nil
                    case 9:
                        // An address deleted directly.
                        let i = below(n + 1)
                        if i == n {
                            guard case .link(let a) = try tx.value(p, h.home) else { continue }
                            try tx.delete(h.address, a)
                            model[p]!.home = nil
                        } else {
                            guard case .link(let a) = try tx.list(p, h.homes)[i] else { continue }
                            try tx.delete(h.address, a)
                            model[p]!.homes.remove(at: i)
                        }
                    default:
                        if below(8) == 0 {
                            try tx.deleteAll(h.address)
                            for k in model.keys { model[k] = ModelPerson() }
                        } else {
                            try tx.setList(p, h.homes, [])
                            model[p]!.homes = []
                        }
                    }
                }
                #expect(try Self.read(tx) == model, "round \(round) before commit")
            }
            #expect(try db.read { try Self.read($0) } == model, "round \(round)")
            let addresses = model.values.reduce(0) { $0 + ($1.home == nil ? 0 : 1) + $1.homes.count }
            let geos = model.values.reduce(0) { $0 + ($1.home?.lat == nil ? 0 : 1) + $1.homes.filter { $0.lat != nil }.count }
            #expect(try Self.counts(db) == [model.count, addresses, geos, 0], "round \(round)")
            if round % 8 == 7 { try Self.expectSound(db) }
        }
        try Self.expectSound(db)
    }
}
