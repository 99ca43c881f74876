import Foundation
import Testing
@testable import RealmStorage

/// Format 7: the stored forms of sets, dictionaries, embedded classes, typed links and nested collections,
/// and the upgrade of format-6 files.
@Suite struct FormatSevenTests {
    // MARK: Codecs

    static func roundTripMixed(_ v: Value) throws -> Value {
        var w = ByteWriter()
        ColumnCodec.appendMixed(v, into: &w)
        let bytes = w.bytes
        return try bytes.withUnsafeBytes { try ColumnCodec.decodeMixed($0) }
    }

    @Test func nestedCollectionsAndTypedLinksRoundTrip() throws {
        let inner = ValueDictionary([("k", .int(2)), ("", .null), ("名前", .string("犬🐕")), ("a", .typedLink(classID: 3, key: ObjectKey(7)))])
        let v = Value.list([.int(1), .string("x"), .dictionary(inner), .list([]), .dictionary(ValueDictionary()),
                            .null, .decimal128(Decimal128(string: "1.10")!), .typedLink(classID: 9, key: ObjectKey(1 << 63))])
        #expect(try Self.roundTripMixed(v) == v)
        #expect(try Self.roundTripMixed(.typedLink(classID: 1, key: ObjectKey(0))) == .typedLink(classID: 1, key: ObjectKey(0)))
        // A list property of mixed elements holding collections.
        let list: [Value] = [.list([.int(1), .list([.bool(true)])]), .dictionary(inner), .null]
        #expect(try ListCoding.decode(ListCoding.encode(list, type: .mixed, nullable: true)) == list)
    }

    static func nested(_ depth: Int) -> Value {
        var v = Value.int(1)
        for _ in 0..<depth { v = .list([v]) }
        return v
    }

    @Test func nestingIsLimitedToOneHundredLevels() throws {
        #expect(try Self.roundTripMixed(Self.nested(99)) == Self.nested(99))
        // A value nested deeper than any writer makes (a damaged or hostile file) is an error, not a crash.
        #expect(throws: CodecError.self) { try Self.roundTripMixed(Self.nested(100)) }
        #expect(throws: CodecError.self) { try Self.roundTripMixed(Self.nested(150)) }
    }

    @Test func dictionaryCodingKeepsKeysInUTF8OrderAndRefusesDisorder() throws {
        var d = ValueDictionary()
        for k in ["é", "z", "a", "", "日本", "A", "🐕"] { d[k] = .string(k) }
        #expect(d.keys == ["", "A", "a", "z", "é", "日本", "🐕"])
        d["z"] = nil
        #expect(d.keys.contains("z") == false)
        let bytes = DictionaryCoding.encode(d, type: .string, nullable: false)
        #expect(try DictionaryCoding.decode(bytes) == d)
        let links = ValueDictionary([("x", .link(ObjectKey(5))), ("y", .null)])
        #expect(try DictionaryCoding.decode(DictionaryCoding.encode(links, type: .link, nullable: true)) == links)
        // The same keys stored out of order: swap the two one-byte keys "A" and "a".
        var swapped = bytes
        let i = try #require(swapped.indices.first { swapped[$0] == UInt8(ascii: "A") && swapped[$0 + 1] == UInt8(ascii: "a") })
        swapped.swapAt(i, i + 1)
        #expect(throws: (any Error).self) { try DictionaryCoding.decode(swapped) }
        #expect(throws: (any Error).self) { try DictionaryCoding.decode(Array(bytes.prefix(12))) }
    }

    @Test func setOrderIsRealmCoresMixedOrder() {
        let one: [Value] = [.int(1), .double(1), .float(1), .decimal128(Decimal128(Int64(1)))]
        for a in one { for b in one { #expect(SetOrder.compare(a, b) == 0) } }
        #expect(SetOrder.compare(.double(-0.0), .double(0.0)) == 0)
        #expect(SetOrder.compare(.double(.nan), .int(Int64.min)) == -1)
        #expect(SetOrder.compare(.int(Int64.max), .double(9_223_372_036_854_775_808.0)) == -1)
        let ascending: [Value] = [.null, .bool(false), .bool(true), .decimal128(Decimal128(Int64(-123))), .int(25), .float(56), .double(88),
                                  .string("Hello"), .string("ådsel"), .data([0]), .date(Timestamp(seconds: 1)),
                                  .objectId(ObjectId.zero), .uuid(UUID()), .typedLink(classID: 1, key: ObjectKey(2)), .link(ObjectKey(1))]
        for i in ascending.indices.dropLast() {
            #expect(SetOrder.compare(ascending[i], ascending[i + 1]) == -1, "\(ascending[i]) < \(ascending[i + 1])")
            #expect(SetOrder.compare(ascending[i + 1], ascending[i]) == 1)
        }
    }

    // MARK: Schema

    static let schema: [ClassSchema] = [
        ClassSchema(name: "Address", properties: [PropertySchema(name: "city", type: .string)], isEmbedded: true),
        ClassSchema(name: "Person", properties: [
            PropertySchema(name: "name", type: .string, isPrimaryKey: true),
            PropertySchema(name: "tags", type: .string, isSet: true),
            PropertySchema(name: "lucky", type: .int, isOptional: true, isSet: true),
            PropertySchema(name: "scores", type: .int, isOptional: true, isDictionary: true),
            PropertySchema(name: "extra", type: .mixed, isOptional: true),
            .set("friends", of: "Person"),
            .dictionary("pets", of: "Person"),
            .link("address", to: "Address"),
        ]),
    ]

    @Test func setsDictionariesAndEmbeddedClassesAreStoredInTheSchema() throws {
        let dir = try TempDir()
        do {
            let db = try Database.open(path: dir.file("a.realm"))
            try db.write { try $0.createClasses(Self.schema) }
        }
        let db = try Database.open(path: dir.file("a.realm"), options: DatabaseOptions(readOnly: true))
        #expect(try db.fileFormat == Meta.formatVersion)
        try db.read { s in
            let person = try #require(s.classSchema("Person"))
            #expect(person.property(named: "tags")?.isSet == true)
            #expect(person.property(named: "tags")?.isList == false)
            #expect(person.property(named: "lucky")?.isOptional == true)
            #expect(person.property(named: "scores")?.isDictionary == true)
            #expect(person.property(named: "friends").map { ($0.isSet, $0.objectClassName) } ?? (false, nil) == (true, "Person"))
            #expect(person.property(named: "pets").map { ($0.isDictionary, $0.isOptional) } ?? (false, false) == (true, true))
            #expect(s.classSchema("Address")?.isEmbedded == true)
            #expect(person.isEmbedded == false)
            // New objects read empty collections.
            let t = try s.table("Person")
            #expect(try s.keys(t).isEmpty)
        }
        #expect(try db.verify().problems.isEmpty)
    }

    @Test func invalidCollectionSchemasAreRefused() throws {
        let dir = try TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        func refused(_ c: [ClassSchema]) -> Bool {
            do { try db.write { try $0.createClasses(c) }; return false } catch StorageError.invalidSchema { return true } catch { return false }
        }
        let emb = ClassSchema(name: "E", properties: [PropertySchema(name: "v", type: .int)], isEmbedded: true)
        #expect(refused([emb, ClassSchema(name: "P", properties: [.set("es", of: "E")])]))
        #expect(refused([ClassSchema(name: "E", properties: [PropertySchema(name: "id", type: .int, isPrimaryKey: true)], isEmbedded: true)]))
        #expect(refused([ClassSchema(name: "P", properties: [PropertySchema(name: "x", type: .int, isList: true, isSet: true)])]))
        #expect(refused([ClassSchema(name: "P", properties: [PropertySchema(name: "x", type: .int, isIndexed: true, isDictionary: true)])]))
        #expect(refused([ClassSchema(name: "P", properties: [PropertySchema(name: "x", type: .string, isPrimaryKey: true, isDictionary: true)])]))
        #expect(try db.read { $0.schema.isEmpty })
    }

    // MARK: Upgrade from format 6

    /// Rewrites both meta slots of a closed file to say `format` (a file as a build of that format left it).
    static func setFormat(_ path: String, _ format: UInt32) throws {
        let fd = open(path, O_RDWR)
        #expect(fd >= 0)
        defer { close(fd) }
        for page in 0..<2 {
            var slot = [UInt8](repeating: 0, count: Meta.encodedSize)
            let offset = off_t(page * pageSize)
            #expect(pread(fd, &slot, slot.count, offset) == slot.count)
            withUnsafeBytes(of: format.littleEndian) { for i in 0..<4 { slot[8 + i] = $0[i] } }
            let sum = slot.withUnsafeBytes { hash64(UnsafeRawBufferPointer(rebasing: $0[0..<120])) }
            withUnsafeBytes(of: sum.littleEndian) { for i in 0..<8 { slot[120 + i] = $0[i] } }
            #expect(pwrite(fd, slot, slot.count, offset) == slot.count)
        }
    }

    @Test func aFormatSixFileIsUpgradedByItsFirstWritableOpen() throws {
        let dir = try TempDir()
        let path = dir.file("six.realm")
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClasses(personDogSchema)
                _ = try tx.createObject("Dog", ["name": .string("Rex"), "weight": .double(5)])
            }
        }
        try Self.setFormat(path, 6)
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
            #expect(try db.fileFormat == 6)
            #expect(try db.read { try $0.count(try $0.table("Dog")) } == 1)
        }
        do {
            let db = try Database.open(path: path)
            #expect(try db.fileFormat == Meta.formatVersion)
            #expect(try db.read { try $0.count(try $0.table("Dog")) } == 1)
            #expect(try db.verify().problems.isEmpty)
        }
        // The explicit upgrade does the same.
        try Self.setFormat(path, 6)
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        #expect(try db.fileFormat == 6)
        #expect(throws: StorageError.self) { try db.upgradeFileFormat() }
    }
}
