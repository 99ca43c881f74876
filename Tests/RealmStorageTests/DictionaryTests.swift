import Foundation
import Testing
@testable import RealmStorage

/// Dictionary properties: keys in UTF-8 order, the key rules, backlinks of link values (repeated values,
/// setting the same link again), nulling on target delete, verify, compaction and change sets.
@Suite struct DictionaryTests {
    static let schema: [ClassSchema] = [
        ClassSchema(name: "Dog", properties: [PropertySchema(name: "name", type: .string)]),
        ClassSchema(name: "Bag", properties: [
            PropertySchema(name: "name", type: .string),
            PropertySchema(name: "ints", type: .int, isDictionary: true),
            PropertySchema(name: "optionalStrings", type: .string, isOptional: true, isDictionary: true),
            PropertySchema(name: "mixed", type: .mixed, isOptional: true, isDictionary: true),
            PropertySchema(name: "mixedNotMarkedOptional", type: .mixed, isDictionary: true),
            .dictionary("pets", of: "Dog"),
        ]),
    ]

    struct Fixture {
        let dir: TempDir
        let db: Database
        let bag: ObjectKey
        let dogs: [ObjectKey]
    }

    static func fixture(dogs n: Int = 3) throws -> Fixture {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        let (bag, dogs) = try db.write { tx throws in
            try tx.createClasses(schema)
            let dogs = try (0..<n).map { try tx.createObject("Dog", ["name": .string("d\($0)")]) }
            return (try tx.createObject("Bag", ["name": .string("b")]), dogs)
        }
        return Fixture(dir: dir, db: db, bag: bag, dogs: dogs)
    }

    static func handle(_ s: Snapshot, _ name: String) throws -> PropertyHandle { try s.property(s.table("Bag"), name) }

    static func entries(_ db: Database, _ bag: ObjectKey, _ name: String) throws -> [(String, Value)] {
        try db.read { s throws in try s.dictionary(bag, handle(s, name)).map { ($0.key, $0.value) } }
    }

    static func petBacklinks(_ s: Snapshot, _ dog: ObjectKey) throws -> [ObjectKey] {
        try s.backlinks(dog, in: s.table("Dog"), from: "Bag", property: "pets")
    }

    static func same(_ a: [(String, Value)], _ b: [(String, Value)]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    // MARK: Operations

    @Test func setGetRemoveAndReplace() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let ints = try Self.handle(tx, "ints")
            try tx.dictionarySet(f.bag, ints, key: "b", .int(2))
            try tx.dictionarySet(f.bag, ints, key: "a", .int(1))
            try tx.dictionarySet(f.bag, ints, key: "é", .int(3))
            try tx.dictionarySet(f.bag, ints, key: "Z", .int(4))
            try tx.dictionarySet(f.bag, ints, key: "a", .int(10))
            #expect(try tx.dictionaryValue(f.bag, ints, key: "a") == .int(10))
            #expect(try tx.dictionaryValue(f.bag, ints, key: "q") == nil)
            #expect(try tx.dictionaryRemove(f.bag, ints, key: "b"))
            #expect(try !tx.dictionaryRemove(f.bag, ints, key: "b"))
        }
        // Keys in UTF-8 byte order.
        #expect(Self.same(try Self.entries(f.db, f.bag, "ints"), [("Z", .int(4)), ("a", .int(10)), ("é", .int(3))]))
        let db = try Database.open(path: f.dir.file("a.realm"))
        #expect(Self.same(try Self.entries(db, f.bag, "ints"), [("Z", .int(4)), ("a", .int(10)), ("é", .int(3))]))
        try db.write { tx throws in
            try tx.setDictionary(f.bag, Self.handle(tx, "ints"), ValueDictionary([("x", .int(1)), ("w", .int(2))]))
        }
        #expect(Self.same(try Self.entries(db, f.bag, "ints"), [("w", .int(2)), ("x", .int(1))]))
        try db.write { tx throws in try tx.dictionaryRemoveAll(f.bag, Self.handle(tx, "ints")) }
        #expect(try Self.entries(db, f.bag, "ints").isEmpty)
        #expect(try db.verify().problems.isEmpty)
    }

    /// A dictionary built from entries has its keys in UTF-8 byte order, each once with the last value given
    /// for it: few entries take an insertion sort, many a sort by position.
    @Test func entriesAreSortedAndTheLastValueOfAKeyWins() {
        var rng = SplitMix64(seed: 0xD1C7)
        let keys = ["a", "b", "ab", "Z", "é", "日本", "🦄", "", "a\u{0}", "aa"]
        for count in [0, 1, 2, 7, 16, 17, 60] {
            for _ in 0..<30 {
                let entries = (0..<count).map { i in (keys[Int(rng.next() % UInt64(keys.count))], Value.int(Int64(i))) }
                var last: [String: Value] = [:]
                for (k, v) in entries { last[k] = v }
                let expectedKeys = last.keys.sorted { SetOrder.compareUTF8($0, $1) < 0 }
                let d = ValueDictionary(entries)
                #expect(Array(d.keys) == expectedKeys, "\(entries)")
                #expect(d.values == expectedKeys.map { last[$0]! }, "\(entries)")
            }
        }
    }

    @Test func aMissingKeyIsNilAndAStoredNullIsNull() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            try tx.dictionarySet(f.bag, Self.handle(tx, "optionalStrings"), key: "n", .null)
            try tx.dictionarySet(f.bag, Self.handle(tx, "mixed"), key: "n", .null)
            try tx.dictionarySet(f.bag, Self.handle(tx, "mixed"), key: "d", .decimal128(Decimal128(Int64(5))))
            try tx.dictionarySet(f.bag, Self.handle(tx, "mixedNotMarkedOptional"), key: "n", .null)
            #expect(throws: StorageError.self) { try tx.dictionarySet(f.bag, Self.handle(tx, "ints"), key: "n", .null) }
        }
        try f.db.read { s throws in
            #expect(try s.dictionaryValue(f.bag, Self.handle(s, "optionalStrings"), key: "n") == .null)
            #expect(try s.dictionaryValue(f.bag, Self.handle(s, "optionalStrings"), key: "m") == nil)
            #expect(try s.dictionaryValue(f.bag, Self.handle(s, "mixed"), key: "n") == .null)
            #expect(try s.dictionaryValue(f.bag, Self.handle(s, "mixedNotMarkedOptional"), key: "n") == .null)
            #expect(try s.dictionaryValue(f.bag, Self.handle(s, "mixed"), key: "d") == .decimal128(Decimal128(Int64(5))))
        }
    }

    @Test func settingTheValueAKeyHoldsWritesNothing() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in try tx.dictionarySet(f.bag, Self.handle(tx, "ints"), key: "a", .int(1)) }
        try f.db.write { tx throws in
            let ints = try Self.handle(tx, "ints")
            try tx.dictionarySet(f.bag, ints, key: "a", .int(1))
            #expect(try !tx.dictionaryRemove(f.bag, ints, key: "zz"))
            try tx.setDictionary(f.bag, ints, ValueDictionary([("a", .int(1))]))
            #expect(!tx.hasChanges)
        }
    }

    @Test func createObjectTakesDictionaries() throws {
        let f = try Self.fixture()
        let b = try f.db.write { tx throws in
            try tx.createObject("Bag", dictionaries: ["ints": ValueDictionary([("b", .int(2)), ("a", .int(1))]),
                                                      "pets": ValueDictionary([("x", .link(f.dogs[0])), ("y", .null)])])
        }
        #expect(Self.same(try Self.entries(f.db, b, "ints"), [("a", .int(1)), ("b", .int(2))]))
        try f.db.read { s throws in #expect(try Self.petBacklinks(s, f.dogs[0]) == [b]) }
        #expect(throws: StorageError.self) {
            try f.db.write { tx throws in try tx.createObject("Bag", dictionaries: ["name": ValueDictionary([("a", .string("x"))])]) }
        }
        #expect(throws: StorageError.invalidDictionaryKey(className: "Bag", property: "ints", key: "a.b", reason: "a key may not contain '.'")) {
            try f.db.write { tx throws in try tx.createObject("Bag", dictionaries: ["ints": ValueDictionary([("a.b", .int(1))])]) }
        }
        #expect(try f.db.read { s throws in try s.keys(s.table("Bag")).count } == 2)
        #expect(try f.db.verify().problems.isEmpty)
    }

    // MARK: Keys

    @Test func keysAreRefusedByRealmCoresRulesAndWhenEmpty() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let ints = try Self.handle(tx, "ints")
            for (key, reason) in [("", "a key may not be empty"), ("$id", "a key may not start with '$'"),
                                  ("a.b", "a key may not contain '.'"), (".", "a key may not contain '.'"),
                                  ("a\u{0}b", "a key may not contain a NUL character")] {
                #expect(throws: StorageError.invalidDictionaryKey(className: "Bag", property: "ints", key: key, reason: reason)) {
                    try tx.dictionarySet(f.bag, ints, key: key, .int(1))
                }
                #expect(throws: StorageError.self) { try tx.setDictionary(f.bag, ints, ValueDictionary([("ok", .int(1)), (key, .int(2))])) }
            }
            let e = StorageError.invalidDictionaryKey(className: "Bag", property: "ints", key: "$id", reason: "a key may not start with '$'")
            #expect(e.description == "Bag.ints: invalid dictionary key \"$id\": a key may not start with '$'")
            // Elsewhere, `$` and other characters are fine.
            try tx.dictionarySet(f.bag, ints, key: "a$", .int(1))
            try tx.dictionarySet(f.bag, ints, key: " ", .int(2))
            try tx.dictionarySet(f.bag, ints, key: "🐕", .int(3))
            #expect(try tx.dictionary(f.bag, ints).count == 3)
        }
    }

    @Test func keysAWriterRefusesAreReadFromAFile() throws {
        let f = try Self.fixture()
        let stored = ValueDictionary([("", .int(1)), ("$a", .int(2)), ("a.b", .int(3))])
        try f.db.write { tx throws in
            try tx.storeRawCollection(f.bag, Self.handle(tx, "ints"), DictionaryCoding.encode(stored, type: .int, nullable: false))
        }
        try f.db.read { s throws in
            #expect(try s.dictionary(f.bag, Self.handle(s, "ints")) == stored)
            #expect(try s.dictionaryValue(f.bag, Self.handle(s, "ints"), key: "") == .int(1))
        }
        #expect(try f.db.verify().problems.isEmpty)
        // Removing such a key works; the others stay.
        try f.db.write { tx throws in #expect(try tx.dictionaryRemove(f.bag, Self.handle(tx, "ints"), key: "$a")) }
        #expect(Self.same(try Self.entries(f.db, f.bag, "ints"), [("", .int(1)), ("a.b", .int(3))]))
    }

    // MARK: Size

    @Test func aLargeDictionaryIsStoredAsABlob() throws {
        let f = try Self.fixture()
        let entries = ValueDictionary((0..<200).map { ("key\($0)", Value.string(String(repeating: "v", count: $0 % 40))) })
        try f.db.write { tx throws in try tx.setDictionary(f.bag, Self.handle(tx, "optionalStrings"), entries) }
        let db = try Database.open(path: f.dir.file("a.realm"))
        #expect(try db.read { s throws in try s.dictionary(f.bag, Self.handle(s, "optionalStrings")) } == entries)
        try db.write { tx throws in try tx.dictionarySet(f.bag, Self.handle(tx, "optionalStrings"), key: "key5", .null) }
        #expect(try db.read { s throws in try s.dictionaryValue(f.bag, Self.handle(s, "optionalStrings"), key: "key5") } == .null)
        #expect(try db.verify().problems.isEmpty)
    }

    // MARK: Links

    @Test func repeatedLinkValuesHaveOneBacklinkPerKey() throws {
        let f = try Self.fixture()
        let d = f.dogs
        try f.db.write { tx throws in
            let pets = try Self.handle(tx, "pets")
            try tx.dictionarySet(f.bag, pets, key: "a", .link(d[0]))
            try tx.dictionarySet(f.bag, pets, key: "b", .link(d[0]))
            try tx.dictionarySet(f.bag, pets, key: "a", .link(d[0]))  // the same link again: no second backlink
            #expect(try Self.petBacklinks(tx, d[0]) == [f.bag, f.bag])
        }
        try f.db.read { s throws in #expect(try Self.petBacklinks(s, d[0]) == [f.bag, f.bag]) }
        #expect(try f.db.verify().problems.isEmpty)
        try f.db.write { tx throws in
            let pets = try Self.handle(tx, "pets")
            try tx.dictionarySet(f.bag, pets, key: "a", .link(d[1]))  // replaced
            try tx.dictionarySet(f.bag, pets, key: "c", .null)
            #expect(throws: StorageError.noSuchObject(className: "Dog", key: 999)) {
                try tx.dictionarySet(f.bag, pets, key: "x", .link(ObjectKey(999)))
            }
        }
        try f.db.read { s throws in
            #expect(try Self.petBacklinks(s, d[0]) == [f.bag])
            #expect(try Self.petBacklinks(s, d[1]) == [f.bag])
        }
        #expect(try f.db.verify().problems.isEmpty)
        try f.db.write { tx throws in
            let pets = try Self.handle(tx, "pets")
            #expect(try tx.dictionaryRemove(f.bag, pets, key: "b"))
            try tx.setDictionary(f.bag, pets, ValueDictionary([("p", .link(d[2])), ("q", .link(d[2])), ("r", .link(d[1]))]))
        }
        try f.db.read { s throws in
            #expect(try Self.petBacklinks(s, d[0]) == [])
            #expect(try Self.petBacklinks(s, d[1]) == [f.bag])
            #expect(try Self.petBacklinks(s, d[2]) == [f.bag, f.bag])
        }
        #expect(try f.db.verify().problems.isEmpty)
        try f.db.write { tx throws in try tx.dictionaryRemoveAll(f.bag, Self.handle(tx, "pets")) }
        try f.db.read { s throws in for dog in d { #expect(try Self.petBacklinks(s, dog) == []) } }
        #expect(try f.db.verify().problems.isEmpty)
    }

    @Test func deletingATargetNullsItsValuesAndKeepsTheKeys() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            try tx.setDictionary(f.bag, Self.handle(tx, "pets"),
                                 ValueDictionary([("a", .link(f.dogs[0])), ("b", .link(f.dogs[1])), ("c", .link(f.dogs[0]))]))
        }
        try f.db.write { tx throws in try tx.delete("Dog", f.dogs[0]) }
        #expect(Self.same(try Self.entries(f.db, f.bag, "pets"), [("a", .null), ("b", .link(f.dogs[1])), ("c", .null)]))
        #expect(try f.db.verify().problems.isEmpty)
        try f.db.write { tx throws in try tx.deleteAll(tx.table("Dog")) }
        #expect(Self.same(try Self.entries(f.db, f.bag, "pets"), [("a", .null), ("b", .null), ("c", .null)]))
        #expect(try f.db.verify().problems.isEmpty)
    }

    @Test func deletingTheOriginRemovesItsBacklinks() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            try tx.setDictionary(f.bag, Self.handle(tx, "pets"), ValueDictionary([("a", .link(f.dogs[0])), ("b", .link(f.dogs[0]))]))
        }
        try f.db.write { tx throws in
            try tx.dictionarySet(f.bag, Self.handle(tx, "pets"), key: "c", .link(f.dogs[1]))  // pending when the object goes
            try tx.delete("Bag", f.bag)
        }
        try f.db.read { s throws in for dog in f.dogs { #expect(try Self.petBacklinks(s, dog) == []) } }
        #expect(try f.db.verify().problems.isEmpty)
        // deleteAll, removeProperty and removeClass.
        let b = try f.db.write { tx throws in try tx.createObject("Bag", dictionaries: ["pets": ValueDictionary([("a", .link(f.dogs[1]))])]) }
        try f.db.write { tx throws in try tx.deleteAll(tx.table("Bag")) }
        try f.db.read { s throws in #expect(try Self.petBacklinks(s, f.dogs[1]) == []) }
        _ = b
        _ = try f.db.write { tx throws in try tx.createObject("Bag", dictionaries: ["pets": ValueDictionary([("a", .link(f.dogs[2]))])]) }
        try f.db.write { tx throws in try tx.removeProperty("Bag", "pets") }
        try f.db.read { s throws in #expect(try s.allBacklinks(f.dogs[2], in: s.table("Dog")).allSatisfy { $0.keys.isEmpty }) }
        #expect(try f.db.verify().problems.isEmpty)
        try f.db.write { tx throws in try tx.removeClass("Bag") }
        #expect(try f.db.verify().problems.isEmpty)
    }

    // MARK: Verify, compaction, changes

    @Test func verifyReportsKeysOutOfOrderAndWrongBacklinks() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let disordered = ValueDictionary(sortedKeys: ["b", "a"], values: [.int(1), .int(2)])
            try tx.storeRawCollection(f.bag, Self.handle(tx, "ints"), DictionaryCoding.encode(disordered, type: .int, nullable: false))
        }
        var problems = try f.db.verify().problems
        #expect(problems.count == 1)
        #expect(problems.first?.contains("keys out of order or repeated") == true)
        try f.db.write { tx throws in
            try tx.storeRawCollection(f.bag, Self.handle(tx, "ints"), [])
            // A link value without its backlink.
            let linked = ValueDictionary([("a", .link(f.dogs[0]))])
            try tx.storeRawCollection(f.bag, Self.handle(tx, "pets"), DictionaryCoding.encode(linked, type: .link, nullable: true))
        }
        problems = try f.db.verify().problems
        #expect(problems.contains { $0.contains("which has no backlink to it") })
    }

    @Test func compactionKeepsDictionaries() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            try tx.setDictionary(f.bag, Self.handle(tx, "ints"), ValueDictionary((0..<150).map { ("k\($0)", Value.int(Int64($0))) }))
            try tx.setDictionary(f.bag, Self.handle(tx, "pets"), ValueDictionary([("a", .link(f.dogs[0])), ("b", .link(f.dogs[0])), ("n", .null)]))
            try tx.setDictionary(f.bag, Self.handle(tx, "mixed"), ValueDictionary([("s", .string("x")), ("n", .null), ("i", .int(3))]))
        }
        let before = try f.db.read { try dumpObjects($0) }
        try f.db.compact()
        #expect(try f.db.read { try dumpObjects($0) } == before)
        #expect(try f.db.verify().problems.isEmpty)
    }

    @Test func aChangedDictionaryMarksItsObjectModified() throws {
        let f = try Self.fixture()
        let before = try f.db.snapshot()
        defer { before.close() }
        try f.db.write { tx throws in
            try tx.dictionarySet(f.bag, Self.handle(tx, "ints"), key: "a", .int(1))
            #expect(try tx.changes(in: "Bag", since: before).modified == [f.bag: ["ints"]])
        }
        let after = try f.db.snapshot()
        defer { after.close() }
        #expect(try after.changes(in: "Bag", since: before).modified == [f.bag: ["ints"]])
        try f.db.write { tx throws in try tx.dictionarySet(f.bag, Self.handle(tx, "pets"), key: "x", .link(f.dogs[1])) }
        let linked = try f.db.snapshot()
        defer { linked.close() }
        #expect(try linked.changes(in: "Bag", since: after).modified == [f.bag: ["pets"]])
        #expect(try linked.changes(in: "Dog", since: after).backlinksChanged == [f.dogs[1]: ["Bag.pets"]])
        // A deleted target nulls the value: the origin is modified.
        try f.db.write { tx throws in try tx.delete("Dog", f.dogs[1]) }
        let nulled = try f.db.snapshot()
        defer { nulled.close() }
        #expect(try nulled.changes(in: "Bag", since: linked).modified == [f.bag: ["pets"]])
    }
}
