import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
import RealmStorage
@testable import BrowserCore
import TestSupport

/// An edit whose commit fails (the disk is full) says so, and the screen shows what is stored, not what was
/// typed; once there is room again the edit goes through, and the file reopens with it.
@Suite(.serialized, .enabled(if: SmallFileSystem.canMount, "cannot mount a tmpfs here (needs root; CI runs as root): full-disk tests skipped"))
struct FullDiskEditTests {
    static let clear = "\u{15}"

    private func storedAge(_ h: Harness) throws -> Value? {
        try h.db.read { s in
            let t = try s.table("Person")
            guard let k = try s.object(t, primaryKey: .int(1)) else { return nil }
            return try s.value(k, s.property(t, "age"))
        }
    }

    @Test func anEditWhoseCommitFailsSaysSoAndTheScreenShowsWhatIsStored() throws {
        let fs = try SmallFileSystem(kilobytes: 4096)
        defer { withExtendedLifetime(fs) {} }  // unmounted only after the database on it is closed
        do {
            let h = try Harness(path: fs.file("full.realm"))
            guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
            let age = try #require(h.app.data.columns(t.source).firstIndex { $0.name == "age" })
            h.type("0" + String(repeating: "l", count: age))
            try fs.fill()
            // Commits land in space the commit log already holds until it runs out: edit until one fails. A
            // failed edit keeps its editor open with the reason.
            var typed = 0, before: Value?, failed = false
            for attempt in 0..<2_000 {
                before = try storedAge(h)
                typed = 5_000 + attempt
                h.type("e" + Self.clear + "\(typed)\r")
                if h.state.prompt != nil { failed = true; break }
                #expect(try storedAge(h) == .int(Int64(typed)), "\(String(describing: h.state.message))")
            }
            try #require(failed, "no edit failed on a full disk")
            let reason = h.state.prompt?.error?.message ?? ""
            #expect(reason.contains("Not written") && reason.contains("No space left on device"), "\(reason)")
            #expect(h.screen.contains("Not written"), "\(h.screen)")
            guard case .int(let old)? = before else { Issue.record("age was \(String(describing: before))"); return }
            #expect(try storedAge(h) == before)
            h.type("\u{1B}")
            #expect(h.state.prompt == nil)
            #expect(h.screen.contains(" \(old) "), "\(h.screen)")
            #expect(!h.screen.contains("\(typed)"), "\(h.screen)")

            // Room again. The commit failed growing the commit log, before any byte of it was written, so the
            // same handle takes the edit (DECISIONS 124).
            unlink(fs.filler)
            h.type("e" + Self.clear + "\(typed)\r")
            #expect(h.state.prompt == nil, "\(String(describing: h.state.prompt?.error?.message))")
            #expect(try storedAge(h) == .int(Int64(typed)))
            #expect(h.screen.contains(" \(typed) "), "\(h.screen)")
        }
        // Reopened, the file holds the last stored value and takes the edit.
        let h = try Harness(path: fs.file("full.realm"), fill: { _ in })
        guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
        let age = try #require(h.app.data.columns(t.source).firstIndex { $0.name == "age" })
        h.type("0" + String(repeating: "l", count: age))
        h.type("e" + Self.clear + "4242\r")
        #expect(h.state.prompt == nil, "\(String(describing: h.state.prompt?.error?.message))")
        #expect(try storedAge(h) == .int(4242))
        #expect(h.screen.contains(" 4242 "), "\(h.screen)")
        #expect(try h.db.verify().isOK)
    }
}
