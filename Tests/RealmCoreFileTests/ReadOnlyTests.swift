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
