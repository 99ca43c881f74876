import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage
@testable import BrowserCore

/// A checkpoint (copying the commit log's pages into the data file) that fails after its commit returned is
/// not the edit's failure: the edit is stored, and the status line says that the checkpoint failed and why,
/// until a later commit's checkpoint succeeds. The failure is the engine's (a data-file write failing with
/// `ENOSPC`, `Database.checkpointWriteErrorForTesting`); every commit checkpoints (`checkpointBytes = 0`).
@Suite struct CheckpointStatusTests {
    /// Ctrl-U and Ctrl-S as the terminal sends them.
    static let clear = "\u{15}", commit = "\u{13}"

    private func storedAge(_ h: Harness) throws -> Value? {
        try h.db.read { s in
            let t = try s.table("Person")
            guard let k = try s.object(t, primaryKey: .int(1)) else { return nil }
            return try s.value(k, s.property(t, "age"))
        }
    }

    @Test func aFailedCheckpointShowsInTheStatusLineUntilOneSucceeds() throws {
        var options = DatabaseOptions()
        options.checkpointBytes = 0
        let h = try Harness(options: options)
        guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
        let age = try #require(h.app.data.columns(t.source).firstIndex { $0.name == "age" })
        h.type("0" + String(repeating: "l", count: age))

        h.db.checkpointWriteErrorForTesting = ENOSPC
        h.type("e" + Self.clear + "35\r")
        #expect(try storedAge(h) == .int(35))
        // The edit is stored: its editor closes (it stays open, with the reason, only for an edit not written).
        #expect(h.state.prompt == nil)
        #expect(h.screen.contains("   35 │"))
        #expect(h.db.checkpointFailure != nil)
        let failed = try #require(h.state.message)
        #expect(failed.isError && failed.text.hasPrefix("age set — but the checkpoint failed"), "\(failed)")
        #expect(failed.text.contains("\(StorageError.io(path: h.db.path, operation: "write", errno: ENOSPC))"), "\(failed)")
        #expect(h.screen.contains("age set — but the checkpoint failed"), "\(h.screen)")

        // Committed with Ctrl-S from a write transaction: the same.
        h.type("t" + "e" + Self.clear + "36\r" + Self.commit)
        #expect(try storedAge(h) == .int(36))
        let committed = try #require(h.state.message)
        #expect(committed.isError && committed.text.hasPrefix("Committed 1 edit — but the checkpoint failed"), "\(committed)")
        #expect(h.screen.contains("Committed 1 edit — but the checkpoint failed"), "\(h.screen)")

        // Space again: the next commit's checkpoint succeeds, and the status line says only what was done.
        h.db.checkpointWriteErrorForTesting = nil
        h.type("e" + Self.clear + "37\r")
        #expect(try storedAge(h) == .int(37))
        #expect(h.db.checkpointFailure == nil)
        #expect(h.state.message == StatusMessage("age set"))
        #expect(!h.screen.contains("checkpoint failed"))
    }
}
