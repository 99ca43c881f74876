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
