import Foundation
import Testing
@testable import RealmStorage

/// Schema definitions, values and transactions that must be refused, each with its own error, leaving the
/// database as it was.
@Suite struct SchemaErrorTests {
    typealias Kit = ErrorTestKit

    func memoryDB(_ name: String = #function) throws -> Database {
        try Database.inMemory(identifier: "schema-errors-\(name)-\(UUID())")
    }

    /// Runs `body` in a write transaction that must fail with a `StorageError`, and checks that nothing of the
    /// transaction reached the database (same version, same contents).
    func refusedWrite(_ db: Database, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation,
                      _ body: (WriteTransaction) throws -> Void) throws -> StorageError? {
        let before = try db.read { ($0.version, try Kit.contents($0)) }
        let e = Kit.storageError(comment, sourceLocation: sourceLocation) { try db.write(body) }
        let after = try db.read { ($0.version, try Kit.contents($0)) }
        #expect(after.0 == before.0, "a failed write committed a version \(comment)", sourceLocation: sourceLocation)
        #expect(after.1 == before.1, "a failed write changed the contents \(comment)", sourceLocation: sourceLocation)
        return e
    }

    // MARK: Names

    @Test func nameLengthLimits() throws {
        let db = try memoryDB()
        let c57 = String(repeating: "C", count: 57), c58 = String(repeating: "C", count: 58)
        let p63 = String(repeating: "p", count: 63), p64 = String(repeating: "p", count: 64)
        // Limits are in UTF-8 bytes: 28 × "é" (2 bytes) + "x" = 57 bytes, one more "é" is 59.
        let e57 = String(repeating: "é", count: 28) + "x", e59 = String(repeating: "é", count: 29) + "x"
        let k63 = String(repeating: "東", count: 21), k66 = String(repeating: "東", count: 22)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: c57, properties: [PropertySchema(name: p63, type: .int)]))
            try tx.createClass(ClassSchema(name: e57, properties: [PropertySchema(name: k63, type: .string)]))
        }
        try db.read { (s: Snapshot) throws in
            #expect(s.classSchema(c57)?.properties.map(\.name) == [p63])
            #expect(s.classSchema(e57)?.properties.map(\.name) == [k63])
        }
        for (name, kind) in [(c58, "class"), (e59, "class"), ("", "class")] {
            let e = try refusedWrite(db, name) { tx in
                try tx.createClass(ClassSchema(name: name, properties: [PropertySchema(name: "x", type: .int)]))
            }
            guard case .invalidName(let k, let n, _)? = e else { Issue.record("\(String(describing: e))"); continue }
            #expect(k == kind && n == name)
        }
        for name in [p64, k66, ""] {
            let e = try refusedWrite(db, name) { tx in
                try tx.createClass(ClassSchema(name: "Fine", properties: [PropertySchema(name: name, type: .int)]))
            }
            guard case .invalidName(let k, let n, _)? = e else { Issue.record("\(String(describing: e))"); continue }
            #expect(k == "property" && n == name)
        }
        let addLong = try refusedWrite(db) { tx in try tx.addProperty(c57, PropertySchema(name: p64, type: .int)) }
        if case .invalidName? = addLong {} else { Issue.record("addProperty: \(String(describing: addLong))") }
        let e = Kit.storageError { try db.write { tx in try tx.createClass(ClassSchema(name: c58, properties: [])) } }
        print("  \(e.map(\.description) ?? "-")")
        let empty = Kit.storageError { try db.write { tx in try tx.createClass(ClassSchema(name: "", properties: [])) } }
        print("  \(empty.map(\.description) ?? "-")")
    }

    @Test func duplicateNames() throws {
        let db = try memoryDB()
        try db.write { tx in try tx.createClasses(personDogSchema) }
        let twice = try refusedWrite(db) { tx in
            try tx.createClasses([ClassSchema(name: "A", properties: []), ClassSchema(name: "A", properties: [])])
        }
        #expect(twice == .classExists("A"))
        #expect(try refusedWrite(db) { tx in try tx.createClass(ClassSchema(name: "Person", properties: [])) } == .classExists("Person"))
        let dupProp = try refusedWrite(db) { tx in
            try tx.createClass(ClassSchema(name: "B", properties: [PropertySchema(name: "x", type: .int),
                                                                   PropertySchema(name: "x", type: .string)]))
        }
        #expect(dupProp == .propertyExists(className: "B", property: "x"))
        #expect(try refusedWrite(db) { tx in try tx.addProperty("Dog", PropertySchema(name: "name", type: .string)) }
                == .propertyExists(className: "Dog", property: "name"))
        // A failed class in a batch leaves none of the batch behind, and the transaction stays usable.
        try db.write { tx in
            #expect(throws: StorageError.classExists("Dog")) {
                try tx.createClasses([ClassSchema(name: "New", properties: []), ClassSchema(name: "Dog", properties: [])])
            }
            #expect(tx.classSchema("New") == nil)
            try tx.createClass(ClassSchema(name: "New", properties: [PropertySchema(name: "x", type: .int)]))
        }
        try db.read { #expect($0.classSchema("New")?.properties.count == 1) }
    }

    @Test func invalidPrimaryKeysIndexesAndLinks() throws {
        let db = try memoryDB()
        try db.write { tx in try tx.createClasses(personDogSchema) }
        func expectInvalidSchema(_ schema: ClassSchema, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let e = try refusedWrite(db, comment, sourceLocation: sourceLocation) { tx in try tx.createClass(schema) }
            guard case .invalidSchema(let message)? = e else {
                Issue.record("\(comment): expected .invalidSchema, got \(String(describing: e))", sourceLocation: sourceLocation)
                return
            }
            #expect(message.contains(schema.name), "\(message)", sourceLocation: sourceLocation)
        }
        for t in PropertyType.allCases where !t.canBePrimaryKey && t != .linkingObjects && t != .backlink && t != .link {
            try expectInvalidSchema(ClassSchema(name: "PK", properties: [PropertySchema(name: "k", type: t, isPrimaryKey: true)]), "pk \(t)")
        }
        try expectInvalidSchema(ClassSchema(name: "PK", properties: [PropertySchema(name: "k", type: .int, isList: true, isPrimaryKey: true)]), "pk list")
        try expectInvalidSchema(ClassSchema(name: "PK", properties: [PropertySchema(name: "k", type: .link, isPrimaryKey: true, objectClassName: "Dog")]), "pk link")
        try expectInvalidSchema(ClassSchema(name: "PK", properties: [PropertySchema(name: "a", type: .int, isPrimaryKey: true),
                                                                     PropertySchema(name: "b", type: .string, isPrimaryKey: true)]), "two pks")
        for t in [PropertyType.float, .double, .data, .decimal128] {
            try expectInvalidSchema(ClassSchema(name: "Idx", properties: [PropertySchema(name: "v", type: t, isIndexed: true)]), "index \(t)")
        }
        // A mixed property may be indexed (DECISIONS 87), a collection of mixed values may not.
        try expectInvalidSchema(ClassSchema(name: "Idx", properties: [PropertySchema(name: "v", type: .mixed, isList: true, isIndexed: true)]), "index mixed list")
        try expectInvalidSchema(ClassSchema(name: "Idx", properties: [PropertySchema(name: "v", type: .mixed, isIndexed: true, isSet: true)]), "index mixed set")
        try expectInvalidSchema(ClassSchema(name: "Idx", properties: [PropertySchema(name: "v", type: .mixed, isIndexed: true, isDictionary: true)]), "index mixed dictionary")
        try expectInvalidSchema(ClassSchema(name: "Idx", properties: [PropertySchema(name: "v", type: .int, isList: true, isIndexed: true)]), "index list")
        try expectInvalidSchema(ClassSchema(name: "Idx", properties: [PropertySchema(name: "v", type: .link, isIndexed: true, objectClassName: "Dog")]), "index link")
        try expectInvalidSchema(ClassSchema(name: "L", properties: [.link("cat", to: "Cat")]), "link to missing class")
        try expectInvalidSchema(ClassSchema(name: "L", properties: [.list("cats", of: "Cat")]), "list of missing class")
        try expectInvalidSchema(ClassSchema(name: "L", properties: [PropertySchema(name: "n", type: .int, objectClassName: "Dog")]), "int naming a class")
        try expectInvalidSchema(ClassSchema(name: "L", properties: [.linkingObjects("x", from: "Cat", property: "owner")]), "linkingObjects from missing class")
        try expectInvalidSchema(ClassSchema(name: "L", properties: [.linkingObjects("x", from: "Dog", property: "nothing")]), "linkingObjects of missing property")
        try expectInvalidSchema(ClassSchema(name: "L", properties: [.linkingObjects("x", from: "Dog", property: "name")]), "linkingObjects of a non-link")
        // Dog.owner links to Person, not to L.
        try expectInvalidSchema(ClassSchema(name: "L", properties: [.linkingObjects("x", from: "Dog", property: "owner")]), "linkingObjects of a link elsewhere")
        // The same rules apply when adding a property.
        for (p, comment) in [(PropertySchema(name: "k", type: .double, isPrimaryKey: true), "pk double"),
                             (PropertySchema(name: "v", type: .float, isIndexed: true), "index float"),
                             (PropertySchema.link("cat", to: "Cat"), "link to missing class"),
                             (PropertySchema.linkingObjects("x", from: "Person", property: "age"), "linkingObjects of an int")] {
            let e = try refusedWrite(db, comment) { tx in try tx.addProperty("Dog", p) }
            if case .invalidSchema? = e {} else { Issue.record("addProperty \(comment): \(String(describing: e))") }
        }
        let e = Kit.storageError { try db.write { tx in try tx.createClass(ClassSchema(name: "PK", properties: [PropertySchema(name: "k", type: .double, isPrimaryKey: true)])) } }
        print("  \(e.map(\.description) ?? "-")")
        let l = Kit.storageError { try db.write { tx in try tx.createClass(ClassSchema(name: "L", properties: [.linkingObjects("x", from: "Dog", property: "name")])) } }
        print("  \(l.map(\.description) ?? "-")")
    }

    // MARK: Values

    @Test func wrongValueTypes() throws {
        let db = try memoryDB()
        try db.write { tx in try tx.createClasses(Kit.schema) }
        let ann = try db.write { tx in try tx.createObject("Person", ["id": .int(1), "name": .string("Ann")]) }
        let cases: [(String, String, Value)] = [
            ("Person", "age", .string("31")), ("Person", "name", .int(5)), ("Person", "age", .double(1.5)),
            ("Person", "age", .null), ("Person", "name", .null), ("Thing", "flag", .int(1)), ("Thing", "bytes", .string("x")),
            ("Thing", "when", .int(0)), ("Thing", "u", .string("0000")), ("Thing", "oid", .uuid(UUID())),
            ("Thing", "dec", .string("1.5")), ("Thing", "f", .bool(true)), ("Thing", "any", .link(ann)),
            ("Thing", "person", .int(0)), ("Dog", "owner", .string("Ann")),
        ]
        for (cls, prop, v) in cases {
            let e = try refusedWrite(db, "\(cls).\(prop) = \(v)") { tx in
                var values: [String: Value] = [prop: v]
                if cls == "Thing" && prop != "oid" { values["oid"] = .objectId(.generate()) }
                try tx.createObject(cls, values)
            }
            guard case .typeMismatch(let c, let p, _, _)? = e else {
                Issue.record("\(cls).\(prop) = \(v): expected .typeMismatch, got \(String(describing: e))"); continue
            }
            #expect(c == cls && p == prop)
        }
        // A link to an object that does not exist.
        #expect(try refusedWrite(db) { tx in try tx.createObject("Dog", ["owner": .link(ObjectKey(999))]) }
                == .noSuchObject(className: "Person", key: 999))
        // Setting on an existing object: same errors, object unchanged.
        let t = try db.read { try $0.table("Person") }
        let set = try refusedWrite(db) { tx in try tx.set(ann, tx.property(t, "age"), .string("old")) }
        #expect(set == .typeMismatch(className: "Person", property: "age", expected: "int", got: "string"))
        let null = try refusedWrite(db) { tx in try tx.set(ann, "Person", "name", .null) }
        #expect(null == .typeMismatch(className: "Person", property: "name", expected: "string (not optional)", got: "null"))
        // Lists: wrong element type, null in a list of required values, list vs single value.
        for (prop, values) in [("tags", [Value.int(1)]), ("tags", [.string("ok"), .null]), ("dogs", [.int(0)])] {
            let e = try refusedWrite(db, "Person.\(prop)") { tx in try tx.createObject("Person", ["id": .int(99)], lists: [prop: values]) }
            if case .typeMismatch? = e {} else { Issue.record("list \(prop): \(String(describing: e))") }
        }
        #expect(try refusedWrite(db) { tx in try tx.createObject("Person", ["id": .int(98), "tags": .string("x")]) }
                .map { if case .typeMismatch = $0 { true } else { false } } == true)
        #expect(try refusedWrite(db) { tx in try tx.createObject("Person", ["id": .int(98)], lists: ["age": [.int(1)]]) }
                .map { if case .typeMismatch = $0 { true } else { false } } == true)
        #expect(try refusedWrite(db) { tx in try tx.createObject("Person", ["id": .int(98), "shoeSize": .int(44)]) }
                == .noSuchProperty(className: "Person", property: "shoeSize"))
        #expect(try refusedWrite(db) { tx in try tx.createObject("Cat", [:]) } == .noSuchClass("Cat"))
        // Lossless conversions are accepted.
        try db.write { tx in
            let k = try tx.createObject("Dog", ["name": .string("Rex"), "weight": .int(12)])
            #expect(try tx.value(k, "Dog", "weight") == .double(12))
        }
        let e = Kit.storageError { try db.write { tx in try tx.set(ann, "Person", "age", .string("31")) } }
        print("  \(e.map(\.description) ?? "-")")
        let n = Kit.storageError { try db.write { tx in try tx.set(ann, "Person", "name", .null) } }
        print("  \(n.map(\.description) ?? "-")")
    }

    /// Strings and data up to exactly 16 MB are stored and read back; one byte more is `.valueTooLarge`.
    @Test func valueSizeLimit() throws {
        let db = try memoryDB()
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Big", properties: [
                PropertySchema(name: "s", type: .string, isOptional: true), PropertySchema(name: "d", type: .data, isOptional: true),
                PropertySchema(name: "m", type: .mixed), PropertySchema(name: "ss", type: .string, isList: true),
            ]))
        }
        let limit = SchemaLimits.maxValueBytes
        #expect(limit == 16 * 1024 * 1024)
        // One value at a time, released before the next, to keep memory low.
        let cases: [(String, (Int) -> Value, Bool)] = [
            ("s", { .string(String(repeating: "a", count: $0)) }, false),
            ("d", { .data([UInt8](repeating: 7, count: $0)) }, false),
            ("m", { .data([UInt8](repeating: 9, count: $0)) }, false),
            ("ss", { .string(String(repeating: "z", count: $0)) }, true),
        ]
        for (prop, make, isList) in cases {
            do {
                let key = try db.write { tx in
                    isList ? try tx.createObject("Big", lists: [prop: [make(limit)]]) : try tx.createObject("Big", [prop: make(limit)])
                }
                try db.read { (s: Snapshot) throws in
                    let h = try s.property(s.table("Big"), prop)
                    let v = isList ? try s.list(key, h).first : try s.value(key, h)
                    switch v {
                    case .string(let str)?: #expect(str.utf8.count == limit)
                    case .data(let d)?: #expect(d.count == limit && d.first == d.last)
                    default: Issue.record("\(prop): read back \(String(describing: v))")
                    }
                }
                try db.write { tx in try tx.delete("Big", key) }
            }
            let e = try refusedWrite(db, prop) { tx in
                if isList { try tx.createObject("Big", lists: [prop: [make(limit + 1)]]) } else { try tx.createObject("Big", [prop: make(limit + 1)]) }
            }
            #expect(e == .valueTooLarge(className: "Big", property: prop, bytes: limit + 1, limit: limit), "\(prop)")
            if prop == "s", let e { print("  \(e)") }
        }
        // Multi-byte characters count in bytes: 4-byte emoji, one byte over.
        let emoji = String(repeating: "🐶", count: limit / 4) + "a"
        #expect(try refusedWrite(db) { tx in try tx.createObject("Big", ["s": .string(emoji)]) }
                == .valueTooLarge(className: "Big", property: "s", bytes: limit + 1, limit: limit))
        #expect(try db.verify().isOK)
    }

    // MARK: Primary keys

    @Test(arguments: [PropertyType.int, .string, .objectId, .uuid])
    func duplicatePrimaryKeyWritesNothing(_ type: PropertyType) throws {
        let dir = TempDir("duplicatePrimaryKey\(type)")
        let db = try Database.open(path: dir.file("pk.realm"))
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Keyed", properties: [
                PropertySchema(name: "k", type: type, isPrimaryKey: true), PropertySchema(name: "n", type: .int),
                PropertySchema(name: "tags", type: .string, isList: true)]))
        }
        func key(_ i: Int) -> Value {
            switch type {
            case .int: return .int(Int64(i) - 3)
            case .string: return .string(i == 9 ? String(repeating: "長い", count: 300) : "key \(i)")
            case .objectId: return .objectId(ObjectId(byteArray: (0..<12).map { UInt8(truncatingIfNeeded: $0 * i + 1) }))
            default: return .uuid(UUID(uuid: (UInt8(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))
            }
        }
        try db.write { tx in for i in 0..<10 { try tx.createObject("Keyed", ["k": key(i), "n": .int(Int64(i))]) } }
        let fileBefore = try db.read { $0.version }
        // A new object, then one with a key already in the file: the whole block is refused.
        let e = try refusedWrite(db, "\(type)") { tx in
            try tx.createObject("Keyed", ["k": key(100), "n": .int(100)], lists: ["tags": [.string("new")]])
            try tx.createObject("Keyed", ["k": key(9), "n": .int(-1)])
        }
        #expect(e == .duplicatePrimaryKey(className: "Keyed", property: "k"))
        // A key used twice within one transaction.
        #expect(try refusedWrite(db) { tx in
            try tx.createObject("Keyed", ["k": key(200)])
            try tx.createObject("Keyed", ["k": key(200)])
        } == .duplicatePrimaryKey(className: "Keyed", property: "k"))
        // Changing a key to one in use (a required int key is the object key and cannot change at all).
        #expect(try refusedWrite(db) { tx in
            let t = try tx.table("Keyed")
            let first = try #require(try tx.object(t, primaryKey: key(0)))
            try tx.set(first, tx.property(t, "k"), key(1))
        } == (type == .int ? .primaryKeyChange(className: "Keyed", property: "k")
                            : .duplicatePrimaryKey(className: "Keyed", property: "k")))
        // Nothing of it is in the file: a fresh look at the file sees the version and objects of before.
        try db.read { (s: Snapshot) throws in
            #expect(s.version == fileBefore)
            #expect(try s.count("Keyed") == 10)
            #expect(try s.object(s.table("Keyed"), primaryKey: key(100)) == nil)
        }
        #expect(try db.verify().isOK)
        // The duplicate's description does not include the value.
        if let e, case .string(let s) = key(9) { #expect(!e.description.contains(s)) }
        if type == .int, let e { print("  \(e)") }
        // After deleting the holder, the key is free again.
        try db.write { tx in
            let t = try tx.table("Keyed")
            try tx.delete(t, #require(try tx.object(t, primaryKey: key(9))))
            try tx.createObject(t, ["k": key(9), "n": .int(9)])
        }
        #expect(try db.verify().isOK)
    }

    /// A required int primary key is checked by the insert's own descent (DECISIONS 64): a refused duplicate
    /// has already made the path to its key the transaction's, and the transaction stays whole whether it goes
    /// on and commits or commits nothing else.
    @Test func aDuplicateRefusedInsideATransactionLeavesItWhole() throws {
        let dir = TempDir("duplicateInside")
        let db = try Database.open(path: dir.file("pk.realm"))
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Keyed", properties: [
                PropertySchema(name: "k", type: .int, isPrimaryKey: true), PropertySchema(name: "n", type: .int)]))
            for i in 0..<3_000 { try tx.createObject("Keyed", ["k": .int(Int64(i)), "n": .int(Int64(i))]) }
        }
        try db.write { tx in
            #expect(throws: StorageError.duplicatePrimaryKey(className: "Keyed", property: "k")) {
                try tx.createObject("Keyed", ["k": .int(1_500), "n": .int(-1)])
            }
            try tx.createObject("Keyed", ["k": .int(5_000), "n": .int(5)])
        }
        let tx = try db.beginWrite()
        #expect(throws: StorageError.duplicatePrimaryKey(className: "Keyed", property: "k")) {
            try tx.createObject("Keyed", ["k": .int(10), "n": .int(-1)])
        }
        try tx.commit()
        try db.read { s in
            let t = try s.table("Keyed"), n = try s.property(t, "n")
            #expect(try s.count(t) == 3_001)
            #expect(try s.value(try #require(try s.object(t, primaryKey: .int(1_500))), n) == .int(1_500))
            #expect(try s.value(try #require(try s.object(t, primaryKey: .int(10))), n) == .int(10))
            #expect(try s.object(t, primaryKey: .int(5_000)) != nil)
        }
        #expect(try db.verify().isOK)
    }

    @Test func optionalPrimaryKeyAllowsOneNull() throws {
        let db = try memoryDB()
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "O", properties: [PropertySchema(name: "k", type: .string, isOptional: true, isPrimaryKey: true)]))
            try tx.createObject("O", ["k": .null])
        }
        #expect(try refusedWrite(db) { tx in try tx.createObject("O", [:]) } == .duplicatePrimaryKey(className: "O", property: "k"))
        // Two long strings sharing their first 240 bytes are different keys (the index cuts them; equality is confirmed).
        let prefix = String(repeating: "p", count: 300)
        try db.write { tx in
            try tx.createObject("O", ["k": .string(prefix + "1")])
            try tx.createObject("O", ["k": .string(prefix + "2")])
        }
        #expect(try refusedWrite(db) { tx in try tx.createObject("O", ["k": .string(prefix + "2")]) }
                == .duplicatePrimaryKey(className: "O", property: "k"))
    }

    // MARK: Transactions

    @Test func throwingBodyWritesNothing() throws {
        struct Oops: Error {}
        let dir = TempDir()
        let path = dir.file("a.realm")
        let db = try Database.open(path: path)
        try db.write { tx in try tx.createClasses(personDogSchema) }
        let before = try db.read { ($0.version, try Kit.contents($0)) }
        let size = Kit.fileSize(path)
        #expect(throws: Oops.self) {
            try db.write { tx in
                for i in 0..<500 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string(String(repeating: "n", count: 2000))]) }
                try tx.createClass(ClassSchema(name: "Extra", properties: []))
                throw Oops()
            }
        }
        let after = try db.read { ($0.version, try Kit.contents($0)) }
        #expect(after.0 == before.0 && after.1 == before.1)
        #expect(Kit.fileSize(path) == size)
        // The writer lock was released: the next transaction runs.
        try db.write { tx in try tx.createObject("Person", ["id": .int(1)]) }
        #expect(try db.verify().isOK)
    }

    @Test func transactionAfterItEnded() throws {
        let db = try memoryDB()
        try db.write { tx in try tx.createClasses(personDogSchema) }
        let tx = try db.beginWrite()
        let k = try tx.createObject("Person", ["id": .int(1)])
        try tx.commit()
        #expect(throws: StorageError.transactionEnded) { try tx.createObject("Person", ["id": .int(2)]) }
        #expect(throws: StorageError.transactionEnded) { try tx.set(k, "Person", "age", .int(3)) }
        #expect(throws: StorageError.transactionEnded) { try tx.delete("Person", k) }
        #expect(throws: StorageError.transactionEnded) { try tx.createClass(ClassSchema(name: "X", properties: [])) }
        #expect(throws: StorageError.transactionEnded) { try tx.setList(k, tx.property(tx.table("Person"), "tags"), []) }
        #expect(throws: StorageError.transactionEnded) { try tx.commit() }
        tx.rollback()  // a no-op after commit
        let rolledBack = try db.beginWrite()
        try rolledBack.createObject("Person", ["id": .int(5)])
        rolledBack.rollback()
        #expect(throws: StorageError.transactionEnded) { try rolledBack.createObject("Person", ["id": .int(6)]) }
        #expect(throws: StorageError.transactionEnded) { try rolledBack.commit() }
        try db.read { (s: Snapshot) throws in #expect(try s.count("Person") == 1) }
        print("  \(StorageError.transactionEnded)")
    }

    @Test func secondWriteOnTheSameThread() throws {
        let dir = TempDir()
        for db in [try memoryDB(), try Database.open(path: dir.file("a.realm"))] {
            let tx = try db.beginWrite()
            #expect(throws: StorageError.writeInProgress(path: db.path)) { _ = try db.beginWrite() }
            #expect(throws: StorageError.writeInProgress(path: db.path)) { try db.write { _ in } }
            tx.rollback()
            try db.write { tx in
                try tx.createClass(ClassSchema(name: "A", properties: []))
                #expect(throws: StorageError.writeInProgress(path: db.path)) { try db.write { _ in } }
            }
            try db.read { #expect($0.classSchema("A") != nil) }
            if db.isInMemory { print("  \(StorageError.writeInProgress(path: db.path))") }
        }
    }

    @Test func writingThroughAReadOnlyDatabase() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        do {
            let db = try Database.open(path: path)
            try db.write { tx in try tx.createClasses(personDogSchema); try tx.createObject("Person", ["id": .int(1)]) }
        }
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        #expect(db.isReadOnly)
        #expect(throws: StorageError.readOnly(path: path)) { _ = try db.beginWrite() }
        #expect(throws: StorageError.readOnly(path: path)) { try db.write { tx in try tx.createObject("Person", ["id": .int(2)]) } }
        #expect(throws: StorageError.readOnly(path: path)) { try db.compact() }
        try db.read { (s: Snapshot) throws in #expect(try s.count("Person") == 1) }
        print("  \(StorageError.readOnly(path: path))")
    }
}
