import Foundation
import Testing
import TestSupport

/// `realm-browser info` on Realm Core files: recognised by their contents, opened read-only.
@Suite struct CoreFileInfoTests {
    static let fixtures: String = ProcessInfo.processInfo.environment["REALM_CORE_FIXTURES"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("RealmCoreFileTests/Fixtures").path

    @Test func infoNamesTheFormatAndTheClasses() throws {
        let dir = TempDir()
        try FileManager.default.copyItem(atPath: Self.fixtures + "/core/test_upgrade_database_4_24.realm", toPath: dir.file("app.data"))
        let info = try cli(dir, "info", "app.data")
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("Realm Core file · format 24 (core 14.0-14.14 and 20.x) · read-only"))
        #expect(info.stdout.contains("streaming"))
        #expect(info.stdout.contains("table   41  (internal, primary key _id)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["app.data"])
    }

    @Test func infoOnAnEncryptedRealmCoreFileWithItsKey() throws {
        let dir = TempDir()
        try FileManager.default.copyItem(atPath: Self.fixtures + "/java/0.98.0-alltypes-default-encrypted.realm", toPath: dir.file("e.realm"))
        let info = try cli(dir, "info", "e.realm", "--key", String(repeating: "01", count: 64))
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("format 3") && info.stdout.contains("encrypted       yes"))
        #expect(info.stdout.contains("IOSAllTypes  1  (primary key id)"))
        #expect(info.stdout.contains("metadata     1  (internal)"))
    }

    @Test func infoOnAnInterruptedUpgradeSaysSo() throws {
        let dir = TempDir()
        try FileManager.default.copyItem(atPath: Self.fixtures + "/core/test_upgrade_progress_3.realm", toPath: dir.file("p.realm"))
        let info = try cli(dir, "info", "p.realm")
        #expect(info.status == 1)
        #expect(info.stderr.contains("half-way through an upgrade from format 9"))
    }
}
