import Foundation
import Testing
@testable import RealmStorage

/// Set properties: Realm Core's element equality and order, backlinks of link sets, deletes, verify,
/// compaction and change sets.
@Suite struct SetTests {
    static let schema: [ClassSchema] = [
        ClassSchema(name: "Dog", properties: [PropertySchema(name: "name", type: .string)]),
        ClassSchema(name: "Bag", properties: [
            PropertySchema(name: "name", type: .string),
            PropertySchema(name: "ints", type: .int, isSet: true),
            PropertySchema(name: "optionalInts", type: .int, isOptional: true, isSet: true),
            PropertySchema(name: "doubles", type: .double, isSet: true),
            PropertySchema(name: "floats", type: .float, isSet: true),
            PropertySchema(name: "strings", type: .string, isSet: true),
            PropertySchema(name: "blobs", type: .data, isSet: true),
            PropertySchema(name: "mixed", type: .mixed, isOptional: true, isSet: true),
            PropertySchema(name: "mixedNotMarkedOptional", type: .mixed, isSet: true),
            .set("dogs", of: "Dog"),
        ]),
    ]

    struct Fixture {
        let dir: TempDir
        let db: Database
        let bag: ObjectKey
        let dogs: [ObjectKey]
    }

    /// A database with one bag (empty sets) and `dogs` dogs.
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

    static func handle(_ s: Snapshot, _ name: String, in c: String = "Bag") throws -> PropertyHandle {
        try s.property(s.table(c), name)
    }

    static func elements(_ db: Database, _ bag: ObjectKey, _ name: String) throws -> [Value] {
        try db.read { s throws in try s.list(bag, handle(s, name)) }
    }

    static func dogBacklinks(_ s: Snapshot, _ dog: ObjectKey) throws -> [ObjectKey] {
        try s.backlinks(dog, in: s.table("Dog"), from: "Bag", property: "dogs")
    }

    // MARK: Operations

    @Test func insertRemoveContainsAssignAndRemoveAll() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let ints = try Self.handle(tx, "ints")
            #expect(try tx.setInsert(f.bag, ints, .int(3)))
            #expect(try tx.setInsert(f.bag, ints, .int(1)))
            #expect(try tx.setInsert(f.bag, ints, .int(2)))
            #expect(try !tx.setInsert(f.bag, ints, .int(1)))
            #expect(try tx.list(f.bag, ints) == [.int(1), .int(2), .int(3)])
            #expect(try tx.setContains(f.bag, ints, .int(2)))
            #expect(try !tx.setContains(f.bag, ints, .int(5)))
            #expect(try tx.setRemove(f.bag, ints, .int(2)))
            #expect(try !tx.setRemove(f.bag, ints, .int(2)))
            #expect(try tx.list(f.bag, ints) == [.int(1), .int(3)])
        }
        #expect(try Self.elements(f.db, f.bag, "ints") == [.int(1), .int(3)])
        try f.db.write { tx throws in
            let ints = try Self.handle(tx, "ints")
            try tx.setAssign(f.bag, ints, [.int(9), .int(-4), .int(9), .int(0)])
            #expect(try tx.list(f.bag, ints) == [.int(-4), .int(0), .int(9)])
            let strings = try Self.handle(tx, "strings")
            try tx.setAssign(f.bag, strings, [.string("ørken"), .string("b"), .string("æbler"), .string("B"), .string("b")])
        }
        #expect(try Self.elements(f.db, f.bag, "ints") == [.int(-4), .int(0), .int(9)])
        // UTF-8 byte order: "B" < "b" < "æ" (C3 A6) < "ø" (C3 B8).
        #expect(try Self.elements(f.db, f.bag, "strings") == [.string("B"), .string("b"), .string("æbler"), .string("ørken")])
        try f.db.write { tx throws in try tx.setRemoveAll(f.bag, Self.handle(tx, "ints")) }
        #expect(try Self.elements(f.db, f.bag, "ints") == [])
        #expect(try f.db.verify().problems.isEmpty)
    }

    @Test func insertingAnElementAlreadyThereWritesNothing() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in _ = try tx.setInsert(f.bag, Self.handle(tx, "ints"), .int(7)) }
        let version = try f.db.read { $0.version }
        try f.db.write { tx throws in
            let ints = try Self.handle(tx, "ints")
            #expect(try !tx.setInsert(f.bag, ints, .int(7)))
            #expect(try !tx.setRemove(f.bag, ints, .int(8)))
            try tx.setAssign(f.bag, ints, [.int(7), .int(7)])
            #expect(!tx.hasChanges)
        }
        #expect(try f.db.read { $0.version } == version)
    }

    @Test func setsAreKeptAcrossReopening() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            try tx.setAssign(f.bag, Self.handle(tx, "doubles"), [.double(2.5), .int(1), .double(-1)])
            try tx.setAssign(f.bag, Self.handle(tx, "blobs"), [.data([2]), .data([1, 0]), .data([1])])
        }
        let path = f.dir.file("a.realm")
        let db = try Database.open(path: path)
        #expect(try Self.elements(db, f.bag, "doubles") == [.double(-1), .double(1), .double(2.5)])
        // memcmp, then length.
        #expect(try Self.elements(db, f.bag, "blobs") == [.data([1]), .data([1, 0]), .data([2])])
    }

    @Test func createObjectTakesSetsDeduplicatedAndOrdered() throws {
        let f = try Self.fixture()
        let b = try f.db.write { tx throws in
            try tx.createObject("Bag", ["name": .string("c")],
                                lists: ["ints": [.int(5), .int(1), .int(5), .int(3)], "dogs": [.link(f.dogs[2]), .link(f.dogs[0]), .link(f.dogs[2])]])
        }
        #expect(try Self.elements(f.db, b, "ints") == [.int(1), .int(3), .int(5)])
        #expect(try Self.elements(f.db, b, "dogs") == [.link(f.dogs[0]), .link(f.dogs[2])])
        try f.db.read { s throws in #expect(try Self.dogBacklinks(s, f.dogs[2]) == [b]) }
        #expect(try f.db.verify().problems.isEmpty)
    }

    /// Elements given to a set are sorted and deduplicated as Realm Core's set order has them, the first of
    /// equal ones kept (`1` before `1.0`): few elements take an insertion sort, many a sort by position.
    @Test func normalizingKeepsTheFirstOfEqualElementsInOrder() {
        var rng = SplitMix64(seed: 0x5E7)
        for count in [0, 1, 2, 5, 16, 17, 40] {
            for _ in 0..<50 {
                let values: [Value] = (0..<count).map { _ in
                    let n = Int64(rng.next() % 6)
                    switch rng.next() % 4 {
                    case 0: return .int(n)
                    case 1: return .double(Double(n))
                    case 2: return .string("s\(n)")
                    default: return rng.next() % 3 == 0 ? .null : .float(Float(n))
                    }
                }
                // Reference: each value in turn, kept unless an equal one came before; then ordered.
                var reference: [Value] = []
                for v in values where !reference.contains(where: { SetOrder.compare($0, v) == 0 }) { reference.append(v) }
                reference.sort { SetOrder.compare($0, $1) < 0 }
                let got = SetElements.normalized(values)
                #expect(got.count == reference.count && zip(got, reference).allSatisfy { $0.isStoredIdentically(to: $1) },
                        "\(values) → \(got), expected \(reference)")
            }
        }
    }

    // MARK: Realm Core's equality and order

    @Test func numbersEqualByValueAreOneElementInASetOfMixed() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let mixed = try Self.handle(tx, "mixed")
            #expect(try tx.setInsert(f.bag, mixed, .int(1)))
            #expect(try !tx.setInsert(f.bag, mixed, .double(1.0)))
            #expect(try !tx.setInsert(f.bag, mixed, .float(1)))
            #expect(try !tx.setInsert(f.bag, mixed, .decimal128(Decimal128(Int64(1)))))
            #expect(try tx.setContains(f.bag, mixed, .decimal128(Decimal128(Int64(1)))))
            #expect(try tx.setInsert(f.bag, mixed, .string("1")))
            #expect(try tx.setInsert(f.bag, mixed, .null))
            #expect(try !tx.setInsert(f.bag, mixed, .null))
        }
        // The first stored stays.
        #expect(try Self.elements(f.db, f.bag, "mixed") == [.null, .int(1), .string("1")])
        try f.db.write { tx throws in
            let mixed = try Self.handle(tx, "mixed")
            #expect(try tx.setRemove(f.bag, mixed, .double(1)))
        }
        #expect(try Self.elements(f.db, f.bag, "mixed") == [.null, .string("1")])
    }

    @Test func minusZeroAndZeroAreOneElementAndNaNSortsFirst() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let doubles = try Self.handle(tx, "doubles")
            #expect(try tx.setInsert(f.bag, doubles, .double(-0.0)))
            #expect(try !tx.setInsert(f.bag, doubles, .double(0.0)))
            #expect(try tx.setInsert(f.bag, doubles, .double(-5)))
            #expect(try tx.setInsert(f.bag, doubles, .double(.nan)))
            #expect(try !tx.setInsert(f.bag, doubles, .double(.nan)))
            let floats = try Self.handle(tx, "floats")
            #expect(try tx.setInsert(f.bag, floats, .float(0.0)))
            #expect(try !tx.setInsert(f.bag, floats, .float(-0.0)))
        }
        let doubles = try Self.elements(f.db, f.bag, "doubles")
        #expect(doubles.count == 3)
        guard case .double(let nan) = doubles[0], case .double(let minusZero) = doubles[2] else { Issue.record("\(doubles)"); return }
        #expect(nan.isNaN)
        #expect(doubles[1] == .double(-5))
        #expect(minusZero == 0 && minusZero.sign == .minus)  // the first stored
        let floats = try Self.elements(f.db, f.bag, "floats")
        guard case .float(let zero) = floats.first, floats.count == 1 else { Issue.record("\(floats)"); return }
        #expect(zero.sign == .plus)
    }

    @Test func aSetOfMixedFollowsRealmCoresReferenceOrder() throws {
        // realm-core test_set.cpp's reference order (without links).
        let date = Value.date(Timestamp(seconds: 1_000, nanoseconds: 5))
        let oid = Value.objectId(ObjectId(hexString: "000123450000000000000000")!)
        let uuid = Value.uuid(UUID(uuidString: "01234567-9abc-4def-9012-3456789abcde")!)
        let expected: [Value] = [.null, .bool(false), .bool(true), .decimal128(Decimal128(Int64(-123))), .int(25), .float(56),
                                 .double(88), .string("Hello, World!"), .string("ådsel"), .string("æbler"), .string("ørken"),
                                 .data([1, 2]), date, oid, uuid]
        let f = try Self.fixture()
        try f.db.write { tx throws in
            var g = SplitMix64(seed: 26)
            try tx.setAssign(f.bag, Self.handle(tx, "mixed"), expected.shuffled(using: &g))
        }
        #expect(try Self.elements(f.db, f.bag, "mixed") == expected)
        #expect(try f.db.verify().problems.isEmpty)
    }

    @Test func aSetOfMixedAlwaysTakesNull() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let p = try Self.handle(tx, "mixedNotMarkedOptional")
            #expect(try tx.setInsert(f.bag, p, .string("x")))
            #expect(try tx.setInsert(f.bag, p, .null))
        }
        let db = try Database.open(path: f.dir.file("a.realm"))
        #expect(try Self.elements(db, f.bag, "mixedNotMarkedOptional") == [.null, .string("x")])
        try db.read { s throws in
            // The stored list says its elements may be null.
            let c = try #require(s.catalogue.classInfo(named: "Bag"))
            let p = try #require(c.property(named: "mixedNotMarkedOptional"))
            let raw = try s.rawValue(#require(try s.locate(c.classID, f.bag.rawValue)), p)
            guard case .data(let bytes) = raw else { Issue.record("\(raw)"); return }
            #expect(bytes.count > 8 && bytes[5] == 1)
        }
        #expect(try db.verify().problems.isEmpty)
    }

    // MARK: Validation

    @Test func elementsAreValidatedAsListElements() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let ints = try Self.handle(tx, "ints"), optionalInts = try Self.handle(tx, "optionalInts")
            #expect(throws: StorageError.typeMismatch(className: "Bag", property: "ints", expected: "int", got: "string")) {
                try tx.setInsert(f.bag, ints, .string("x"))
            }
            #expect(throws: StorageError.self) { try tx.setInsert(f.bag, ints, .null) }
            #expect(try tx.setInsert(f.bag, optionalInts, .null))
            #expect(try tx.setInsert(f.bag, optionalInts, .int(-9)))
            #expect(try tx.list(f.bag, optionalInts) == [.null, .int(-9)])
            #expect(throws: StorageError.noSuchObject(className: "Dog", key: 999)) {
                try tx.setInsert(f.bag, Self.handle(tx, "dogs"), .link(ObjectKey(999)))
            }
            #expect(throws: StorageError.valueTooLarge(className: "Bag", property: "blobs", bytes: SchemaLimits.maxValueBytes + 1,
                                                       limit: SchemaLimits.maxValueBytes)) {
                try tx.setInsert(f.bag, Self.handle(tx, "blobs"), .data([UInt8](repeating: 1, count: SchemaLimits.maxValueBytes + 1)))
            }
            // Set operations on a list, and list operations on a set, are refused.
            #expect(throws: StorageError.self) { try tx.setInsert(f.bag, Self.handle(tx, "name"), .string("x")) }
            #expect(throws: StorageError.self) { try tx.listAppend(f.bag, ints, .int(1)) }
            #expect(throws: StorageError.self) { try tx.set(f.bag, ints, .int(1)) }
            #expect(throws: StorageError.noSuchObject(className: "Bag", key: 12345)) { try tx.setInsert(ObjectKey(12345), ints, .int(1)) }
        }
    }

    @Test func aSetOfMixedRefusesNestedCollections() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let mixed = try Self.handle(tx, "mixed")
            for nested in [Value.list([.int(1)]), .dictionary(ValueDictionary([("a", .int(1))]))] {
                do {
                    try tx.setInsert(f.bag, mixed, nested)
                    Issue.record("\(nested) was stored in a set")
                } catch let e as StorageError {
                    #expect("\(e)".contains("a set cannot hold a nested list or dictionary"))
                }
            }
            #expect(throws: StorageError.self) { try tx.setAssign(f.bag, mixed, [.int(1), .list([])]) }
            #expect(try tx.list(f.bag, mixed) == [])
        }
    }

    // MARK: Size

    @Test func aLargeSetIsStoredAsABlob() throws {
        let f = try Self.fixture()
        let values = (0..<400).map { Value.int(Int64($0 * 7919 % 1000)) }
        try f.db.write { tx throws in try tx.setAssign(f.bag, Self.handle(tx, "ints"), values) }
        let expected = Set(values.map { if case .int(let i) = $0 { return i } else { return 0 } }).sorted().map(Value.int)
        let db = try Database.open(path: f.dir.file("a.realm"))
        #expect(try Self.elements(db, f.bag, "ints") == expected)
        try db.write { tx throws in #expect(try tx.setInsert(f.bag, Self.handle(tx, "ints"), .int(-1))) }
        #expect(try Self.elements(db, f.bag, "ints") == [.int(-1)] + expected)
        #expect(try db.verify().problems.isEmpty)
    }

    // MARK: Links

    @Test func backlinksFollowInsertRemoveAndAssign() throws {
        let f = try Self.fixture()
        let d = f.dogs
        try f.db.write { tx throws in
            let dogs = try Self.handle(tx, "dogs")
            #expect(try tx.setInsert(f.bag, dogs, .link(d[1])))
            #expect(try tx.setInsert(f.bag, dogs, .link(d[0])))
            #expect(try !tx.setInsert(f.bag, dogs, .link(d[1])))
            #expect(try Self.dogBacklinks(tx, d[1]) == [f.bag])
        }
        try f.db.read { s throws in
            #expect(try s.list(f.bag, Self.handle(s, "dogs")) == [.link(d[0]), .link(d[1])])
            #expect(try Self.dogBacklinks(s, d[0]) == [f.bag])
            #expect(try Self.dogBacklinks(s, d[1]) == [f.bag])
        }
        #expect(try f.db.verify().problems.isEmpty)
        try f.db.write { tx throws in
            let dogs = try Self.handle(tx, "dogs")
            #expect(try tx.setRemove(f.bag, dogs, .link(d[0])))
            #expect(try Self.dogBacklinks(tx, d[0]) == [])
            try tx.setAssign(f.bag, dogs, [.link(d[2]), .link(d[1]), .link(d[2])])
        }
        try f.db.read { s throws in
            #expect(try Self.dogBacklinks(s, d[0]) == [])
            #expect(try Self.dogBacklinks(s, d[1]) == [f.bag])
            #expect(try Self.dogBacklinks(s, d[2]) == [f.bag])
        }
        #expect(try f.db.verify().problems.isEmpty)
        try f.db.write { tx throws in try tx.setRemoveAll(f.bag, Self.handle(tx, "dogs")) }
        try f.db.read { s throws in for dog in d { #expect(try Self.dogBacklinks(s, dog) == []) } }
        #expect(try f.db.verify().problems.isEmpty)
    }

    @Test func deletingATargetRemovesItFromSets() throws {
        let f = try Self.fixture()
        let other = try f.db.write { tx throws in
            try tx.setAssign(f.bag, Self.handle(tx, "dogs"), [.link(f.dogs[0]), .link(f.dogs[1])])
            return try tx.createObject("Bag", lists: ["dogs": [.link(f.dogs[1])]])
        }
        try f.db.write { tx throws in try tx.delete("Dog", f.dogs[1]) }
        #expect(try Self.elements(f.db, f.bag, "dogs") == [.link(f.dogs[0])])
        #expect(try Self.elements(f.db, other, "dogs") == [])
        #expect(try f.db.verify().problems.isEmpty)
    }

    @Test func deletingTheOriginRemovesItsBacklinks() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in try tx.setAssign(f.bag, Self.handle(tx, "dogs"), [.link(f.dogs[0]), .link(f.dogs[1])]) }
        try f.db.write { tx throws in
            // A change still pending when the object goes.
            _ = try tx.setInsert(f.bag, Self.handle(tx, "dogs"), .link(f.dogs[2]))
            try tx.delete("Bag", f.bag)
        }
        try f.db.read { s throws in for dog in f.dogs { #expect(try Self.dogBacklinks(s, dog) == []) } }
        #expect(try f.db.verify().problems.isEmpty)
    }

    @Test func deleteAllRemoveClassAndRemovePropertyHandleLinkSets() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in try tx.setAssign(f.bag, Self.handle(tx, "dogs"), [.link(f.dogs[0]), .link(f.dogs[1])]) }
        try f.db.write { tx throws in try tx.deleteAll(tx.table("Dog")) }
        #expect(try Self.elements(f.db, f.bag, "dogs") == [])
        #expect(try f.db.verify().problems.isEmpty)

        let dog = try f.db.write { tx throws in
            let dog = try tx.createObject("Dog", ["name": .string("n")])
            _ = try tx.setInsert(f.bag, Self.handle(tx, "dogs"), .link(dog))
            return dog
        }
        try f.db.write { tx throws in try tx.deleteAll(tx.table("Bag")) }
        try f.db.read { s throws in #expect(try Self.dogBacklinks(s, dog) == []) }
        #expect(try f.db.verify().problems.isEmpty)

        let bag = try f.db.write { tx throws in try tx.createObject("Bag", lists: ["dogs": [.link(dog)], "ints": [.int(1)]]) }
        try f.db.write { tx throws in
            _ = try tx.setInsert(bag, Self.handle(tx, "ints"), .int(2))  // pending when the property goes
            try tx.removeProperty("Bag", "dogs")
            try tx.removeProperty("Bag", "ints")
        }
        try f.db.read { s throws in
            #expect(try s.allBacklinks(dog, in: s.table("Dog")).allSatisfy { $0.keys.isEmpty })
            #expect(s.classSchema("Bag")?.property(named: "ints") == nil)
        }
        #expect(try f.db.verify().problems.isEmpty)
        try f.db.write { tx throws in try tx.removeClass("Bag") }
        #expect(try f.db.verify().problems.isEmpty)
    }

    // MARK: Verify, compaction, changes

    @Test func aCatalogueWithAPropertyOfTwoCollectionKindsIsRefused() throws {
        for kinds: PropertyInfo.Flags in [[.list, .set], [.set, .dictionary], [.list, .dictionary]] {
            var c = Catalogue()
            c.classes = [ClassInfo(classID: 1, name: "Bag", nextColumnID: 2, nextObjectKey: 0, objectCount: 0, tableRoot: 0,
                                   primaryKeyColumnID: 0,
                                   properties: [PropertyInfo(columnID: 1, name: "x", type: .int, flags: kinds, targetClassID: 0,
                                                             originColumnID: 0, indexRoot: 0)])]
            let node = CommitRoot.encode(catalogue: c.encodeSection(), free: [], log: [], pages: 1)
            #expect(throws: StorageError.corrupt(path: "f", location: "catalogue at page 3",
                                                 reason: "property Bag.x is more than one of list, set and dictionary")) {
                try node.withUnsafeBytes { try Catalogue.decode($0, ref: 3, path: "f") }
            }
        }
    }

    @Test func verifyReportsASetOutOfOrderOrWithDuplicates() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            let ints = try Self.handle(tx, "ints")
            try tx.storeRawCollection(f.bag, ints, ListCoding.encode([.int(1), .int(3), .int(3)], type: .int, nullable: false))
        }
        var problems = try f.db.verify().problems
        #expect(problems.contains { $0.contains("Bag #\(f.bag.rawValue).ints: set elements 1 and 2 are out of order or equal") })
        try f.db.write { tx throws in
            let mixed = try Self.handle(tx, "mixed")
            try tx.storeRawCollection(f.bag, Self.handle(tx, "ints"), [])
            // 1 and 1.0 are one element in a set of mixed.
            try tx.storeRawCollection(f.bag, mixed, ListCoding.encode([.int(1), .double(1)], type: .mixed, nullable: true))
        }
        problems = try f.db.verify().problems
        #expect(problems.count == 1)
        #expect(problems.first?.contains(".mixed: set elements 0 and 1") == true)
        try f.db.write { tx throws in
            try tx.storeRawCollection(f.bag, Self.handle(tx, "mixed"), ListCoding.encode([.int(2), .int(1)], type: .mixed, nullable: true))
        }
        #expect(try f.db.verify().problems.count == 1)
    }

    /// The scan readers (`ColumnCursor.firstStringElement`, `dictionaryValue`) read a set or dictionary where it
    /// lies and find what `list` and `dictionary` find; damaged bytes are `StorageError.corrupt`, never a trap.
    @Test func scanReadersFindElementsInPlaceAndReportDamage() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("s.realm"))
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Box", properties: [
                PropertySchema(name: "n", type: .int),
                PropertySchema(name: "tags", type: .string, isOptional: true, isSet: true),
                PropertySchema(name: "scores", type: .int, isDictionary: true),
            ]))
            try tx.createObject("Box", ["n": .int(0)], lists: ["tags": [.string("b"), .null, .string("a")]],
                                dictionaries: ["scores": ValueDictionary([("x", .int(1)), ("y", .int(2)), ("é", .int(3))])])
            try tx.createObject("Box", ["n": .int(1)])
        }
        func read(_ body: (ColumnCursor, ColumnCursor, Int) throws -> Void) throws {
            try db.read { s in
                let t = try s.table("Box")
                try s.scan(t) { leaf in
                    let tags = try leaf.column(s.property(t, "tags")), scores = try leaf.column(s.property(t, "scores"))
                    for row in 0..<leaf.count { try body(tags, scores, row) }
                    return true
                }
            }
        }
        var seen: [[String?]] = []
        var found: [[Value?]] = []
        try read { tags, scores, row in
            var elements: [String?] = []
            #expect(try !tags.firstStringElement(row) { e in elements.append(e.map { String(decoding: $0, as: UTF8.self) }); return false })
            seen.append(elements)
            found.append(try ["x", "y", "é", "z", ""].map { k in try Array(k.utf8).withUnsafeBytes { try scores.dictionaryValue(row, forKey: $0) } })
        }
        #expect(seen == [[nil, "a", "b"], []])
        #expect(found == [[.int(1), .int(2), .int(3), nil, nil], [nil, nil, nil, nil, nil]])

        var list = ListCoding.encode([.string("a"), .string("b")], type: .string, nullable: true)
        list[0] = 200  // more elements than the bytes hold
        var dictionary = DictionaryCoding.encode(ValueDictionary([("x", .int(1))]), type: .int, nullable: false)
        dictionary[8] = 0xF8  // a keys block longer than the dictionary
        try db.write { tx in
            let t = try tx.table("Box")
            let first = try #require(tx.keys(t).first)
            try tx.storeRawCollection(first, tx.property(t, "tags"), list)
            try tx.storeRawCollection(first, tx.property(t, "scores"), dictionary)
        }
        try read { tags, scores, row in
            guard row == 0 else { return }
            #expect(throws: StorageError.self) { try tags.firstStringElement(row) { _ in false } }
            #expect(throws: StorageError.self) { try Array("x".utf8).withUnsafeBytes { try scores.dictionaryValue(row, forKey: $0) } }
        }
    }

    @Test func compactionKeepsSets() throws {
        let f = try Self.fixture()
        try f.db.write { tx throws in
            try tx.setAssign(f.bag, Self.handle(tx, "ints"), (0..<300).map { .int(Int64($0)) })
            try tx.setAssign(f.bag, Self.handle(tx, "strings"), [.string("a"), .string("b")])
            try tx.setAssign(f.bag, Self.handle(tx, "dogs"), [.link(f.dogs[0]), .link(f.dogs[2])])
        }
        let before = try f.db.read { try dumpObjects($0) }
        try f.db.compact()
        #expect(try f.db.read { try dumpObjects($0) } == before)
        #expect(try f.db.verify().problems.isEmpty)
        let reopened = try Database.open(path: f.dir.file("a.realm"))
        #expect(try reopened.read { try dumpObjects($0) } == before)
    }

    @Test func aChangedSetMarksItsObjectModified() throws {
        let f = try Self.fixture()
        let before = try f.db.snapshot()
        defer { before.close() }
        try f.db.write { tx throws in
            #expect(try tx.setInsert(f.bag, Self.handle(tx, "ints"), .int(4)))
            // The writer sees its own pending change.
            #expect(try tx.changes(in: "Bag", since: before).modified == [f.bag: ["ints"]])
        }
        let after = try f.db.snapshot()
        defer { after.close() }
        #expect(try after.changes(in: "Bag", since: before).modified == [f.bag: ["ints"]])
        try f.db.write { tx throws in #expect(try !tx.setInsert(f.bag, Self.handle(tx, "ints"), .int(4))) }
        let same = try f.db.snapshot()
        defer { same.close() }
        #expect(try same.changes(in: "Bag", since: after).isEmpty)
        try f.db.write { tx throws in _ = try tx.setInsert(f.bag, Self.handle(tx, "dogs"), .link(f.dogs[0])) }
        let linked = try f.db.snapshot()
        defer { linked.close() }
        #expect(try linked.changes(in: "Bag", since: same).modified == [f.bag: ["dogs"]])
        #expect(try linked.changes(in: "Dog", since: same).backlinksChanged == [f.dogs[0]: ["Bag.dogs"]])
    }
}
