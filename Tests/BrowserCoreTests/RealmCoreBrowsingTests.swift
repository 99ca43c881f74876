import Foundation
import RealmCoreFile
import RealmStorage
@testable import BrowserCore
import Testing
import TestSupport

/// The browser on a Realm Core file: read in place, read-only, with `:convert` to edit a copy.
@Suite struct RealmCoreBrowsingTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("RealmCoreFileTests/Fixtures/java/0.98.0-alltypes.realm").path

    @Test func aRealmCoreFileIsShownReadOnlyAndEditsNameConvert() throws {
        let core = try RealmCoreFile(path: Self.fixture)
        let data = try BrowserData(realmCore: core)
        #expect(data.isReadOnly && data.readOnlyRefusal == .realmCoreFile)
        #expect(data.path == Self.fixture)
        let terminal = VirtualTerminal(size: Size(width: 150, height: 16))
        let app = BrowserApp(terminal: terminal, data: data, theme: .dark)
        app.draw()
        #expect(terminal.text.contains("Realm Core file · format 3 (core 0.90-0.96) · read-only"), "\(terminal.text)")
        #expect(terminal.text.contains("IOSChild") && terminal.text.contains("110"))
        terminal.type("\te")
        app.processPendingInput()
        let message = try #require(app.state.message)
        #expect(message.text.contains("Realm Core file, open read-only") && message.text.contains(":convert OUT.realm"), "\(message.text)")
        #expect(throws: WriteRefusal.realmCoreFile) { try data.beginTransaction() }
    }

    /// `:info` describes the Realm Core file on disk (its format, size and classes).
    @Test func infoDescribesTheRealmCoreFile() throws {
        let data = try BrowserData(realmCore: try RealmCoreFile(path: Self.fixture))
        let terminal = VirtualTerminal(size: Size(width: 150, height: 30))
        let app = BrowserApp(terminal: terminal, data: data, theme: .dark)
        app.draw()
        terminal.type(":info\r")
        app.processPendingInput()
        app.draw()
        #expect(terminal.text.contains("Realm Core file · format 3") && terminal.text.contains("0.98.0-alltypes.realm"), "\(terminal.text)")
        #expect(!terminal.text.contains("realm-core-"), "\(terminal.text)")  // the in-memory copy's identifier
    }

    @Test func convertIsForRealmCoreFilesOnly() throws {
        let h = try Harness()
        h.type(":convert copy.realm\r")
        let message = try #require(h.state.message)
        #expect(message.isError && message.text.contains("already in this format"), "\(message.text)")
        #expect(h.state.task == nil)
    }
}
