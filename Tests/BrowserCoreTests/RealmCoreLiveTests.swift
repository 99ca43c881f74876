import Foundation
import RealmCoreFile
import RealmStorage
@testable import BrowserCore
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A Realm Core file that changes while the browser shows it, and one an app has open (its `.lock` locked).
@Suite struct RealmCoreLiveTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("RealmCoreFileTests/Fixtures").path

    /// A scratch directory holding a copy of `fixture` as `app.realm`.
    static func copy(_ fixture: String) throws -> (dir: String, path: String) {
        let dir = NSTemporaryDirectory() + "/core-live-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/app.realm"
        try FileManager.default.copyItem(atPath: fixtures + "/" + fixture, toPath: path)
        return (dir, path)
    }

    /// Replacing the file (as an app's compaction or a copy over it does) shows the new contents at the next
    /// check; an unchanged file is not opened again.
    @Test func aChangedFileIsOpenedAgain() throws {
        let (dir, path) = try Self.copy("core/test_upgrade_database_1000_24.realm")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let data = try BrowserData(realmCorePath: path, key: nil)
        let terminal = VirtualTerminal(size: Size(width: 150, height: 20))
        let app = BrowserApp(terminal: terminal, data: data, theme: .dark)
        app.draw()
        #expect(!app.checkForChanges())
        let before = data.classNames
        let replacement = dir + "/next.realm"
        try FileManager.default.copyItem(atPath: Self.fixtures + "/java/0.98.0-alltypes.realm", toPath: replacement)
        #expect(rename(replacement, path) == 0)
        #expect(app.checkForChanges())
        #expect(data.classNames != before)
        #expect(data.classNames.contains("IOSChild"), "\(data.classNames)")
        app.draw()
        #expect(terminal.text.contains("IOSChild") && terminal.text.contains("format 3"), "\(terminal.text)")
        #expect(!app.checkForChanges())
    }

    /// A lock held on `NAME.lock` (as a running app holds it) makes the file open as a snapshot copy, said in
    /// the status bar and `:info`; the file, its lock file and its directory are left as they were.
    @Test func aFileAnAppHoldsOpensAsASnapshot() throws {
        let (dir, path) = try Self.copy("java/0.98.0-alltypes.realm")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(!RealmCoreFile.isOpenByAnApp(path: path))
        let lock = open(path + ".lock", O_RDWR | O_CREAT, 0o644)
        #expect(lock >= 0)
        defer { close(lock) }
        #expect(!RealmCoreFile.isOpenByAnApp(path: path))   // a lock file nobody locks: no app
        #expect(flock(lock, LOCK_SH) == 0)
        #expect(RealmCoreFile.isOpenByAnApp(path: path))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let listing = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        let temporary = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("realm-browser-snapshot-") }

        let data = try BrowserData(realmCorePath: path, key: nil)
        #expect(data.isSnapshotOfOpenFile && data.path == path)
        let terminal = VirtualTerminal(size: Size(width: 180, height: 30))
        let app = BrowserApp(terminal: terminal, data: data, theme: .dark)
        app.draw()
        #expect(terminal.text.contains("read-only · snapshot (open in an app)"), "\(terminal.text)")
        #expect(terminal.text.contains("IOSChild") && terminal.text.contains("110"), "\(terminal.text)")
        terminal.type(":info\r")
        app.processPendingInput()
        #expect(terminal.text.contains("a snapshot") && terminal.text.contains(path), "\(terminal.text)")

        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == listing)
        // The copy is removed as soon as it is mapped.
        #expect(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("realm-browser-snapshot-") } == temporary)
        #expect(flock(lock, LOCK_UN) == 0)
        #expect(!RealmCoreFile.isOpenByAnApp(path: path))
    }

    /// The snapshot copy is the file, byte for byte.
    @Test func aSnapshotCopyIsTheFile() throws {
        let (dir, path) = try Self.copy("core/test_upgrade_database_1000_24.realm")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try RealmCoreFile.snapshotCopy(of: path, to: dir + "/copy.realm")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/copy.realm")) == Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
