import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// Fixes found by reading the code against the format, each with the test that failed before it.
@Suite struct ReaderFixTests {
    /// An empty file (top ref 0) of a format the reader does not know is that format's error, not zero classes.
    @Test func anEmptyFileOfAnUnknownFormatIsRefused() throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path("core/vacuum_no_history_type.realm"))))
        bytes[20] = 25
        let dir = TempDir()
        let path = dir.file("empty25.realm")
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        #expect(throws: RealmCoreFileError.self) { _ = try RealmCoreFile(path: path) }
    }

    /// Link columns inside a format ≤ 9 sub-table name their target by table slot like any other; they are
    /// mapped to positions too (left as slots they would index past the tables).
    @Test func linksInsideSubTablesAreResolved() throws {
        let memory = try CoreMemory(path: Fixtures.path("core/test_upgrade_database_1000_6_to_7.realm"), key: nil)
        let group = CoreGroup(reader: CoreNodeReader(memory: memory), format: 6, path: "")
        var link = CoreColumn(name: "owner", type: 12, attributes: 0)
        link.linkedTable = 7
        var sub = CoreColumn(name: "rows", type: 5, attributes: 0)
        sub.subColumns = [link]
        group.tables = [CoreTable(slot: 0, name: "a", key: 0, columns: [sub]), CoreTable(slot: 7, name: "b", key: 7)]
        group.tableByKey = [0: 0, 7: 1]
        try group.resolveLegacyLinks()
        #expect(group.tables[0].columns[0].subColumns[0].linkedTable == 1)
    }
}

extension ReaderFixTests {
    /// A class of one file handed to another is an error, not an index past its tables.
    @Test func aClassOfAnotherFileIsRefused() throws {
        let big = try Fixtures.open("core/test_upgrade_database_9_to_10_pk_table.realm")
        let small = try Fixtures.open("core/test_upgrade_database_1000_6_to_7.realm")
        let foreign = try #require(big.class(named: "metadata"))
        #expect(throws: RealmCoreFileError.self) { _ = try small.object(of: foreign, at: 0) }
        #expect(throws: RealmCoreFileError.self) { _ = try small.backlinks(of: foreign, at: 0) }
        #expect(throws: RealmCoreFileError.self) { _ = try small.position(of: foreign, key: 0) }
    }
}

extension ReaderFixTests {
    /// The old Mixed column (formats ≤ 9) keeps strings in a binary column, whose null flags mean "null" (a
    /// string column's mean "not null"); and a table whose first column is Mixed counts its rows by the types.
    @Test func oldMixedColumnValues() throws {
        var image = CoreFileImage()
        let offsets = image.ints([4])
        let blob = image.blob(Array("abc\0".utf8))
        let nulls = image.ints([0])
        let blobs = image.ints([Int64(offsets), Int64(blob), Int64(nulls)], hasRefs: true)
        let types = image.ints([2, 0, 12, 1])  // string, int, negative int, bool
        let data = image.ints([CoreFileImage.tagged(0), CoreFileImage.tagged(5), CoreFileImage.tagged(Int64.max >> 1 - 6), CoreFileImage.tagged(1)],
                              hasRefs: true)
        let mixed = image.ints([Int64(types), Int64(data), Int64(blobs)], hasRefs: true)
        let spec = image.ints([Int64(image.ints([6])), Int64(image.shortStrings(["m"])), Int64(image.ints([0]))], hasRefs: true)
        let tableTop = image.ints([Int64(spec), Int64(image.ints([Int64(mixed)], hasRefs: true))], hasRefs: true)
        let top = image.ints([Int64(image.shortStrings(["t"])), Int64(image.ints([Int64(tableTop)], hasRefs: true)), CoreFileImage.tagged(0)],
                             hasRefs: true)
        let dir = TempDir()
        let path = dir.file("mixed.realm")
        _ = FileManager.default.createFile(atPath: path, contents: Data(image.streaming(top: top, format: 9)))
        let f = try RealmCoreFile(path: path)
        let t = try #require(f.class(named: "t"))
        #expect(t.objectCount == 4)
        #expect(try f.column("t", "m") == [.string("abc"), .int(5), .int(Int64(bitPattern: 0xBFFF_FFFF_FFFF_FFF9)), .bool(true)])
    }
}

/// Layouts of formats ≥ 10 that no fixture has, in a file built node by node: narrow (BID64) Decimal128 leaves,
/// typed links, an enumerated string column, a big string split into chunks, and a list whose B+tree has an
/// inner node.
@Suite struct UncoveredLayoutTests {
    /// The file: one class `A` with two objects.
    static func layoutsImage() -> [UInt8] {
        var image = CoreFileImage()
        func ref(_ r: Int) -> Int64 { Int64(r) }
        let tagged = CoreFileImage.tagged
        // Column leaves for two objects.
        let decimals = image.node(flags: 0x08 | 4, count: 2, payload: [0x31C0_0000_0000_0001, 0xB1A0_0000_0000_007D].flatMap { (v: UInt64) in
            withUnsafeBytes(of: v.littleEndian) { Array($0) } })
        let typedLinks = image.ints([6, 2, 0, 0])  // (table key 5 + 1, object key 1 + 1), null
        let enumIndexes = image.ints([1, 0])
        let chunks = image.ints([ref(image.blob(Array("hello ".utf8))), ref(image.blob(Array("world\0".utf8)))], hasRefs: true)
        image.bytes[chunks + 4] |= 0x20  // a blob of chunks
        let big = image.node(flags: 0x40 | 0x20 | 7, count: 2, payload: [Int64(chunks), 0].flatMap { v in withUnsafeBytes(of: v.littleEndian) { Array($0) } })
        let leaf1 = image.ints([ref(image.ints([2, 5])), ref(image.blob(Array("abcde".utf8)))], hasRefs: true)
        let leaf2 = image.ints([ref(image.ints([1])), ref(image.blob(Array("z".utf8)))], hasRefs: true)
        let inner = image.ints([tagged(2), ref(leaf1), ref(leaf2), tagged(3)], hasRefs: true)
        image.bytes[inner + 4] |= 0x80
        let lists = image.ints([ref(inner), 0], hasRefs: true)
        let cluster = image.ints([tagged(2), ref(decimals), ref(typedLinks), ref(enumIndexes), ref(big), ref(lists)], hasRefs: true)
        // Spec: types, names, attributes, (vacant), enum keys, column keys.
        let types: [Int64] = [11, 16, 2, 2, 4]
        let enumKeys = image.ints([0, 0, ref(image.shortStrings(["red", "blue"])), 0, 0], hasRefs: true)
        let spec = image.ints([ref(image.ints(types)), ref(image.shortStrings(["d", "tl", "e", "big", "bins"])),
                               ref(image.ints([0, 16, 0, 0, 32])), 0, ref(enumKeys),
                               ref(image.ints(types.enumerated().map { Int64($0.offset) | $0.element << 16 }))], hasRefs: true)
        let tableTop = image.ints([ref(spec), 0, ref(cluster), tagged(5), 0, tagged(0), tagged(0), 0, 0, tagged(0), 0, 0, tagged(0), 0],
                                  hasRefs: true)
        let top = image.ints([ref(image.shortStrings(["class_A"])), ref(image.ints([ref(tableTop)], hasRefs: true)), tagged(0)], hasRefs: true)
        return image.streaming(top: top, format: 24)
    }

    @Test func format24LayoutsWithoutFixtures() throws {
        let dir = TempDir()
        let path = dir.file("layouts.realm")
        _ = FileManager.default.createFile(atPath: path, contents: Data(Self.layoutsImage()))

        let f = try RealmCoreFile(path: path)
        let a = try #require(f.class(named: "A"))
        #expect(a.properties.map(\.type) == [.decimal128, .typedLink, .string, .string, .binary])
        #expect(a.property(named: "bins")?.collection == .list)
        let first = try f.object(of: a, at: 0).values
        guard case let .decimal128(one) = first[0] else { Issue.record("\(first[0])"); return }
        #expect(one.description == "1")
        #expect(first[1] == .link(CoreLink(className: "A", key: 1)))
        #expect(first[2] == .string("blue"))
        #expect(first[3] == .string("hello world"))
        #expect(first[4] == .list([.binary(Array("ab".utf8)), .binary(Array("cde".utf8)), .binary(Array("z".utf8))]))
        let second = try f.object(of: a, at: 1).values
        guard case let .decimal128(d) = second[0] else { Issue.record("\(second[0])"); return }
        #expect(d.description == "-12.5")
        #expect(Array(second[1...4]) == [.null, .string("red"), .string(""), .list([])])
    }
}
