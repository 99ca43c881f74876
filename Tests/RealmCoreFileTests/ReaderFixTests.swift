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
