import Foundation
import Testing
import TestSupport

/// The real browser on Realm Core files, in tmux: opened read-only through a conversion in memory, `:convert`
/// to edit, and the key prompt of an encrypted one.
@Suite(.serialized, .enabled(if: Tmux.isInstalled, "tmux is not installed (CI installs it): end-to-end tests skipped"))
struct RealmCoreFileEndToEndTests {
    static let fixtures: String = ProcessInfo.processInfo.environment["REALM_CORE_FIXTURES"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("RealmCoreFileTests/Fixtures").path

    @Test func aRealmCoreFileOpensReadOnlyAndConvertsToEdit() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try FileManager.default.copyItem(atPath: Self.fixtures + "/java/0.98.0-alltypes.realm", toPath: dir.file("app.realm"))
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.file("app.realm")))
        let t = try Tmux(command: "\(bin) app.realm", in: dir.path, width: 110, height: 24)
        defer { t.kill() }
        var screen = try t.waitFor { $0.contains("Classes") && $0.contains("IOSChild") }
        #expect(screen.contains("IOSAllTypes") && screen.contains("110") && screen.contains("10"), "\(screen)")
        #expect(screen.contains("Realm Core file · format 3 (core 0.90-0.96) · read-only"), "\(screen)")
        #expect(!screen.contains("metadata"))
        // An edit is refused, and the way to edit is named.
        t.send("Tab", "e")
        screen = try t.waitFor { $0.contains(":convert") }
        #expect(screen.contains("Realm Core file, open read-only"), "\(screen)")
        t.send(":", "convert copy.realm", "Enter")
        screen = try t.waitFor { $0.contains("Converted to copy.realm") }
        #expect(!screen.contains("Realm Core file ·"), "\(screen)")
        t.send("j")
        screen = try t.waitFor { $0.contains("writable") }
        #expect(screen.contains("copy.realm"), "\(screen)")
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
        let count = try runProcess(bin, ["query", "copy.realm", "IOSChild", "TRUEPREDICATE", "--format", "count"], in: dir.path)
        #expect(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "110", "\(count.stdout)\(count.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("app.realm"))) == before)
    }

    @Test func anEncryptedRealmCoreFileAsksForItsKey() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try FileManager.default.copyItem(atPath: Self.fixtures + "/java/0.98.0-alltypes-default-encrypted.realm", toPath: dir.file("e.realm"))
        let bad = try Tmux(command: "\(bin) e.realm", in: dir.path, width: 100, height: 20)
        _ = try bad.waitFor { $0.contains("is encrypted. Key") }
        bad.send(String(repeating: "02", count: 64), "Enter")
        var screen = try bad.waitFor { $0.contains("EXITED:1") }
        #expect(screen.contains("wrong key"), "\(screen)")
        bad.kill()
        let t = try Tmux(command: "\(bin) e.realm", in: dir.path, width: 100, height: 20)
        defer { t.kill() }
        _ = try t.waitFor { $0.contains("is encrypted. Key") }
        t.send(String(repeating: "01", count: 64), "Enter")
        screen = try t.waitFor { $0.contains("Classes") && $0.contains("IOSAllTypes") }
        #expect(screen.contains("Realm Core file · format 3"), "\(screen)")
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
    }
}
