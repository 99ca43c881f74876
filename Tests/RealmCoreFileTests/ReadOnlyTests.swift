import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// Opening never writes: no companion file appears, the file's bytes and modification time stay, and a file
/// nobody may write (in a directory nobody may write) opens all the same.
@Suite struct ReadOnlyTests {
    @Test(arguments: ["core/test_upgrade_database_4_24.realm", "java/0.98.0-alltypes-default-encrypted.realm", "core/client_schema_version_011.realm"])
    func openingLeavesTheFileAndItsDirectoryAlone(_ name: String) throws {
        let dir = TempDir()
        let sub = dir.file("ro")
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        let path = sub + "/default.realm"
        try FileManager.default.copyItem(atPath: Fixtures.path(name), toPath: path)
        let past = Date(timeIntervalSince1970: 1_600_000_000)
        try FileManager.default.setAttributes([.modificationDate: past, .posixPermissions: 0o444], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: sub)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sub) }  // (cleanup only)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let f = try RealmCoreFile(path: path, key: Fixtures.key(name))
        #expect(try f.readEverything() > 0)

        #expect(try FileManager.default.contentsOfDirectory(atPath: sub) == ["default.realm"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.modificationDate] as? Date == past)
    }

    @Test func aFileWithoutTheMnemonicIsNotARealmFile() throws {
        let dir = TempDir()
        let path = dir.file("notes.realm")
        _ = FileManager.default.createFile(atPath: path, contents: Data("just some text, not a database at all".utf8))
        #expect(throws: RealmCoreFileError.notARealmCoreFile(path: path, reason: "no T-DB mnemonic at byte 16")) {
            _ = try RealmCoreFile(path: path)
        }
        #expect(!RealmCoreFile.looksLikeRealmCoreFile(path: path))
        #expect(RealmCoreFile.looksLikeRealmCoreFile(path: Fixtures.path("core/foo.realm")))
    }

    @Test func aMissingFileIsAnIOError() {
        #expect(throws: RealmCoreFileError.io(path: "/nonexistent/x.realm", operation: "open", errno: ENOENT)) {
            _ = try RealmCoreFile(path: "/nonexistent/x.realm")
        }
    }

    @Test func unknownFormatsAreNamed() throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path("core/test_upgrade_database_4_24.realm"))))
        let dir = TempDir()
        let path = dir.file("future.realm")
        for (format, words) in [(25, "newer than format 24"), (15, "never wrote formats 12-19"), (1, "older than format 2")] {
            bytes[20] = UInt8(format)
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            #expect {
                _ = try RealmCoreFile(path: path)
            } throws: { error in
                guard case .unsupportedFormat(format, _) = error as? RealmCoreFileError else { return false }
                return "\(error)".contains("format \(format)") && "\(error)".contains(words)
            }
        }
    }
}

/// Decimal128: the BID encodings of format 24's narrow leaves widen to the same values.
@Suite struct DecimalTests {
    @Test func narrowEncodingsWiden() {
        // 1 in BID32 (exponent bias 101) and BID64 (bias 398).
        #expect(CoreDecimal128.fromBID32(0x3280_0001).description == "1")
        #expect(CoreDecimal128.fromBID64(0x31C0_0000_0000_0001).description == "1")
        // -12.5 = -125E-1
        #expect(CoreDecimal128.fromBID64(0xB1A0_0000_0000_007D).description == "-12.5")
        // Realm's narrow nulls widen to its 128-bit null.
        #expect(CoreDecimal128.fromBID32(0x7C00_00AA) == .realmNull)
        #expect(CoreDecimal128.fromBID64(0x7C00_0000_0000_00AA) == .realmNull)
        #expect(CoreDecimal128.zero.description == "0")
        #expect(CoreDecimal128(low: 125, high: 0x3040_0000_0000_0000 - (2 << 49)).description == "1.25")
        #expect(CoreDecimal128(low: 15, high: 0x3040_0000_0000_0000 + (39 << 49)).description == "1.5E+40")
    }
}

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
