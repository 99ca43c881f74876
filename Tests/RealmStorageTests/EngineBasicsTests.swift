import Foundation
import Testing
@testable import RealmStorage

@Suite struct EngineBasicsTests {
    @Test func createReadReopen() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClasses(personDogSchema)
                let ann = try tx.createObject("Person", ["id": .int(1), "name": .string("Ann"), "age": .int(31)],
                                              lists: ["tags": [.string("東京"), .string("🐶")]])
                let rex = try tx.createObject("Dog", ["name": .string("Rex"), "weight": .double(12.5), "owner": .link(ann)])
                let t = try tx.table("Person")
                try tx.listAppend(ann, tx.property(t, "dogs"), .link(rex))
            }
            let s = try db.snapshot()
            #expect(try s.count("Person") == 1)
            #expect(try s.count("Dog") == 1)
            s.close()
        }
        let db = try Database.open(path: path)
        try db.read { s in
            let people = try s.table("Person")
            let dogs = try s.table("Dog")
            let ann = try #require(try s.object(people, primaryKey: .int(1)))
            #expect(try s.value(ann, "Person", "name") == .string("Ann"))
            #expect(try s.value(ann, "Person", "nickname") == .null)
            #expect(try s.list(ann, s.property(people, "tags")) == [.string("東京"), .string("🐶")])
            let rex = try #require(try s.key(at: 0, in: dogs))
            #expect(try s.list(ann, s.property(people, "dogs")) == [.link(rex)])
            #expect(try s.list(rex, s.property(dogs, "owners")) == [.link(ann)])
            #expect(try s.backlinks(ann, in: people, from: "Dog", property: "owner") == [rex])
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }

    @Test func manyObjectsAndDeletes() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("b.realm"))
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            for i in 0..<3000 {
                try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("p\(i % 100)"), "age": .int(Int64(i % 90))])
            }
        }
        #expect(try db.verify().isOK)
        try db.write { tx in
            let t = try tx.table("Person")
            for i in stride(from: 0, to: 3000, by: 3) {
                let k = try #require(try tx.object(t, primaryKey: .int(Int64(i))))
                try tx.delete(t, k)
            }
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
        try db.read { s in
            #expect(try s.count("Person") == 2000)
            let t = try s.table("Person")
            #expect(try s.find(s.property(t, "name"), equalTo: .string("p7")).count == 20)
        }
    }

    /// `values(_:where:equalTo:)` gives what `find` then `value` give, whether the property read is the key
    /// (an int primary key, not visited) or stored, and through an index or a scan.
    @Test func valuesWhereEqualAgreeWithFindThenValue() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("v.realm"))
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            for i in 0..<1000 {
                try tx.createObject("Person", ["id": .int(Int64(i * 7 - 3000)), "name": .string("p\(i % 30)"), "age": .int(Int64(i % 9))])
            }
            let t = try tx.table("Person")
            for i in stride(from: 0, to: 1000, by: 4) { try tx.delete(t, #require(try tx.object(t, primaryKey: .int(Int64(i * 7 - 3000))))) }
        }
        func check(_ s: Snapshot, p7: Int) throws {
            let t = try s.table("Person")
            let id = try s.property(t, "id"), name = try s.property(t, "name"), age = try s.property(t, "age")
            for (p, v) in [(name, Value.string("p7")), (name, .string("none")), (age, .int(3)), (id, .int(-2993)), (id, .int(-3000))] {
                for q in [id, name, age] {
                    let expected = try s.find(p, equalTo: v).map { try s.value($0, q) }
                    #expect(try s.values(q, where: p, equalTo: v) == expected)
                }
            }
            #expect(try s.values(id, where: name, equalTo: .string("p7")).count == p7)
            let dogs = try s.table("Dog")
            #expect(throws: StorageError.self) { try s.values(s.property(dogs, "name"), where: name, equalTo: .string("p7")) }
        }
        try db.read { try check($0, p7: 34) }
        try db.write { tx in
            let t = try tx.table("Person")
            try tx.createObject("Person", ["id": .int(1), "name": .string("p7")])
            try tx.delete(t, #require(try tx.object(t, primaryKey: .int(-2993 + 7 * 30))))
            try check(tx, p7: 35)
        }
    }
}

@Suite struct LazyColumnTests {
    /// Leaves changed in one column keep their other columns (and those columns' blobs) as they were.
    @Test func updatingOneColumnKeepsLongStringsAndBlobs() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("lazy.realm"))
        let long = { (i: Int) in String(repeating: "東京🐶\(i)", count: 400) }
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Note", properties: [
                PropertySchema(name: "n", type: .int),
                PropertySchema(name: "text", type: .string),
                PropertySchema(name: "blob", type: .data, isOptional: true),
            ]))
            for i in 0..<600 {
                try tx.createObject("Note", ["n": .int(Int64(i)), "text": .string(i % 3 == 0 ? long(i) : "short \(i)"),
                                             "blob": i % 5 == 0 ? .data(Array(repeating: UInt8(i % 251), count: 3000)) : .null])
            }
        }
        for round in 1...3 {
            try db.write { tx in
                let t = try tx.table("Note")
                try tx.updateAll(t, tx.property(t, "n")) { v in
                    if case .int(let x) = v { return .int(x + 1) }
                    return v
                }
            }
            let report = try db.verify()
            #expect(report.isOK, "round \(round): \(report)")
        }
        try db.write { tx in
            let t = try tx.table("Note")
            for k in try tx.keys(t) where k.rawValue % 7 == 0 { try tx.delete(t, k) }
        }
        #expect(try db.verify().isOK)
        try db.read { s in
            let t = try s.table("Note")
            let n = try s.property(t, "n"), text = try s.property(t, "text"), blob = try s.property(t, "blob")
            var seen = 0
            for k in try s.keys(t) {
                let i = Int(k.rawValue)
                #expect(try s.value(k, n) == .int(Int64(i + 3)))
                #expect(try s.value(k, text) == .string(i % 3 == 0 ? long(i) : "short \(i)"))
                #expect(try s.value(k, blob) == (i % 5 == 0 ? .data(Array(repeating: UInt8(i % 251), count: 3000)) : .null))
                seen += 1
            }
            #expect(seen == 600 - 86)
        }
    }
}

@Suite struct OpenRegistryTests {
    @Test func everySpellingOfOnePathIsOneDatabase() throws {
        let dir = TempDir()
        // The first open creates the file through an unusual spelling; later opens find it by another.
        let a = try Database.open(path: dir.path + "/./same.realm")
        let b = try Database.open(path: dir.file("same.realm"))
        let c = try Database.open(path: dir.path + "/../" + (dir.path as NSString).lastPathComponent + "/same.realm")
        #expect(a === b)
        #expect(a === c)
        let other = try Database.open(path: dir.file("other.realm"))
        #expect(a !== other)
    }
}

@Suite struct IntPrimaryKeyTests {
    /// A required int primary key is the object key: lookups need no index, order is numeric, duplicates and
    /// changes are refused, and links from such objects keep exact backlinks.
    @Test func intPrimaryKeyIsTheObjectKey() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("pk.realm"))
        let ids: [Int64] = [5, -3, Int64.max, Int64.min, 0, 42, -1]
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            for id in ids { try tx.createObject("Person", ["id": .int(id), "name": .string("p\(id)")]) }
            #expect(throws: StorageError.duplicatePrimaryKey(className: "Person", property: "id")) {
                try tx.createObject("Person", ["id": .int(42)])
            }
            let people = try tx.table("Person")
            let owner = try #require(try tx.object(people, primaryKey: .int(Int64.min)))
            try tx.createObject("Dog", ["name": .string("Rex"), "owner": .link(owner)])
            #expect(throws: StorageError.primaryKeyChange(className: "Person", property: "id")) {
                try tx.set(owner, tx.property(people, "id"), .int(7))
            }
        }
        try db.read { s in
            let people = try s.table("Person")
            let id = try s.property(people, "id")
            // Key order is numeric order from -2^62 up; Int64.min (below -2^62) sorts last.
            let ordered = try s.keys(people).map { try s.value($0, id) }
            #expect(ordered == ids.filter { $0 != Int64.min }.sorted().map { .int($0) } + [.int(Int64.min)])
            for v in ids {
                let k = try #require(try s.object(people, primaryKey: .int(v)))
                #expect(try s.value(k, id) == .int(v))
                #expect(try s.find(id, equalTo: .int(v)) == [k])
            }
            #expect(try s.object(people, primaryKey: .int(6)) == nil)
            #expect(try s.object(people, primaryKey: .string("5")) == nil)
            let owner = try #require(try s.object(people, primaryKey: .int(Int64.min)))
            #expect(try s.backlinks(owner, in: people, from: "Dog", property: "owner").count == 1)
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }
}

@Suite struct BacklinkStorageTests {
    /// Short lists and backlink sets live inside their objects' clusters: 2,000 people with one dog each
    /// need a few dozen nodes, not a node per list (the first design took 2,026, then 4,026 with large keys).
    @Test func shortListsAndBacklinksNeedNoNodesOfTheirOwn() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("bl.realm"))
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            let people = try tx.table("Person")
            let dogs = try tx.property(people, "dogs")
            for i in 0..<2000 {
                let dog = try tx.createObject("Dog", ["name": .string("d\(i)")])
                try tx.createObject("Person", ["id": .int(Int64(i))], lists: ["dogs": [.link(dog)]])
                _ = dogs
            }
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
        // 2000 people and 2000 dogs fit in a few dozen nodes; a list node per person would add 2000.
        #expect(report.nodes < 100, "\(report.nodes) nodes")
    }
}
