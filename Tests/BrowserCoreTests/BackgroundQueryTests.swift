import Foundation
import Synchronization
import Testing
import RealmQuery
import RealmStorage
@testable import BrowserCore
import TestSupport

/// Queries and sorts run off the main loop: the status bar shows them running and how far, keys and resizing
/// keep working, Esc stops them, and the result arrives as an action. The worker is held at a known check
/// of its query (a gate), so every screen is deterministic.
@Suite(.serialized) struct BackgroundQueryTests {
    static let dogs = 3000

    /// 3,000 dogs: about a dozen leaves of objects, so a query checks a dozen times.
    static func fill(_ tx: WriteTransaction) throws {
        try tx.createClass(ClassSchema(name: "Dog", properties: [
            PropertySchema(name: "name", type: .string),
            PropertySchema(name: "age", type: .int),
        ]))
        for i in 0..<dogs {
            _ = try tx.createObject("Dog", ["name": .string(["Rex", "Fido", "Luna", "Max"][i % 4] + " \(i)"), "age": .int(Int64(i % 20))])
        }
    }

    /// Holds the worker at the `at`-th check of its query (of the first job only when `once`), until released.
    final class Gate: Sendable {
        let reached = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let checks = Mutex(0)
        /// How far the query was when it was held.
        let held = Mutex<QueryProgress.Status?>(nil)
        let at: @Sendable (QueryProgress.Status, Int) -> Bool

        init(at: @escaping @Sendable (QueryProgress.Status, Int) -> Bool) { self.at = at }

        func checkpoint(_ p: QueryProgress) {
            let n = checks.withLock { $0 += 1; return $0 }
            guard at(p.current, n) else { return }
            held.withLock { $0 = p.current }
            reached.signal()
            _ = release.wait(timeout: .now() + 30)
        }

        /// Waits until the worker is held (bounded: a broken test fails instead of hanging).
        func waitUntilHeld() throws {
            try #require(reached.wait(timeout: .now() + 30) == .success, "the query never reached the gate")
        }
    }

    func harness(_ gate: Gate, _ name: String = #function) throws -> Harness {
        let h = try Harness(name, size: Size(width: 100, height: 20), fill: Self.fill)
        h.app.quickJobMilliseconds = 0
        h.app.jobCheckpoint = { gate.checkpoint($0) }
        return h
    }

    func table(_ h: Harness) throws -> TableScreen {
        guard case .table(let t)? = h.state.stack.last else { throw HarnessFailure("no table shown") }
        return t
    }

    func statusLine(_ h: Harness) -> String {
        String(h.screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast().last ?? "")
    }

    @Test func aSlowQueryShowsItsProgressKeysAndResizingWorkAndEscCancelsIt() throws {
        // The third check: the scan's start, then two leaves of dogs done.
        let gate = Gate { _, n in n == 3 }
        let h = try harness(gate)
        h.type("/name CONTAINS 'x' OR age > 10\r")
        try gate.waitUntilHeld()
        defer { gate.release.signal() }
        let held = try #require(gate.held.withLock { $0 })
        #expect(held.phase == .scanning && held.total == Self.dogs && held.percent > 0 && held.percent < 100)
        let running = "querying… \(held.percent) %"
        h.app.pollJob()
        h.app.draw()
        #expect(h.state.prompt == nil)
        #expect(statusLine(h).contains(running + " · Esc cancels"), "\(statusLine(h))")
        // The table is as it was, and keys move in it.
        h.type("jj")
        #expect(try table(h).row == 2)
        #expect(try table(h).source.filter == nil)
        #expect(h.state.running != nil)
        #expect(statusLine(h).contains(running))
        // Resizing too.
        h.resize(80, 14)
        #expect(h.screen.split(separator: "\n").count == 14)
        #expect(statusLine(h).contains(running), "\(statusLine(h))")
        // Esc stops it: the table as before, with a word in the status bar.
        h.type("\u{1B}")
        #expect(h.state.running == nil)
        #expect(h.state.message?.text == "Query cancelled: the table is as it was")
        #expect(try table(h).source.filter == nil && table(h).query.isEmpty && table(h).row == 2)
        #expect(try h.app.data.rowCount(table(h).source) == Self.dogs)
        #expect(statusLine(h).contains("Query cancelled") && !statusLine(h).contains("Esc cancels"))
        // The query stays in the history, to be run again.
        #expect(h.state.queryHistory.last == "name CONTAINS 'x' OR age > 10")
    }

    @Test func theResultArrivesWhenTheQueryEnds() throws {
        let gate = Gate { _, n in n == 2 }
        let h = try harness(gate)
        h.type("/age >= 15\r")
        try gate.waitUntilHeld()
        h.type("j")
        gate.release.signal()
        #expect(h.app.waitForJob())
        let t = try table(h)
        #expect(h.state.running == nil)
        #expect(t.query == "age >= 15")
        #expect(try h.app.data.rowCount(t.source) == Self.dogs / 4)
        #expect(h.state.message?.text == "750 of 3,000 match")
        #expect(statusLine(h).contains("750 of 3,000 match") && !statusLine(h).contains("Esc cancels"))
    }

    @Test func aNewQueryWhileOneRunsReplacesIt() throws {
        let gate = Gate { _, n in n == 2 }
        let h = try harness(gate)
        h.type("/age >= 15\r")
        try gate.waitUntilHeld()
        let first = try #require(h.state.running?.id)
        h.type("/age < 2\r")
        // The first one is cancelled (still held); the second may end at once, the gate holds only the first.
        #expect(h.state.nextJobID > first)
        gate.release.signal()
        h.app.waitForJob()
        let t = try table(h)
        #expect(t.query == "age < 2")
        #expect(try h.app.data.rowCount(t.source) == Self.dogs / 10)
        #expect(h.state.message?.text == "300 of 3,000 match")
    }

    @Test func aSortRunsInTheBackgroundToo() throws {
        // Held when the sort starts (its values not read yet: 0 %).
        let gate = Gate { status, _ in status.phase == .sorting }
        let h = try harness(gate)
        h.type("]")
        try gate.waitUntilHeld()
        h.app.pollJob()
        h.app.draw()
        #expect(statusLine(h).contains("sorting… 0 % · Esc cancels"), "\(statusLine(h))")
        h.type("\u{1B}")
        #expect(h.state.message?.text == "Sorting cancelled: the table is as it was")
        #expect(try table(h).sort == nil)
        gate.release.signal()
        // Again, let through: the table sorted by name, descending.
        h.app.jobCheckpoint = nil
        h.type("]")
        h.app.waitForJob()
        let t = try table(h)
        #expect(t.sort == ColumnSort(property: "name", ascending: false))
        #expect(h.state.message?.text == "Sorted by name descending")
        let first = try #require(try h.app.data.key(row: 0, in: t.source))
        #expect(try h.app.data.value(ObjectRef(className: "Dog", key: first), "name") == .string("Rex 996"))
    }

    @Test func anExportRunsInTheBackgroundAndEscRemovesTheUnfinishedFile() throws {
        // Held after 512 objects are written.
        let gate = Gate { status, _ in status.done >= 512 }
        let h = try harness(gate)
        let path = h.dir.file("dogs.csv")
        h.type(":export \(path)\r")
        try gate.waitUntilHeld()
        h.app.pollJob()
        h.app.draw()
        #expect(statusLine(h).contains("exporting… 17 % · Esc cancels"), "\(statusLine(h))")
        h.type("j")
        #expect(try table(h).row == 1)
        h.type("\u{1B}")
        #expect(h.state.message?.text == "Export cancelled: \(path) was not written")
        gate.release.signal()
        // The worker removes what it wrote once it sees the cancel.
        let deadline = Date().addingTimeInterval(10)
        while FileManager.default.fileExists(atPath: path) && Date() < deadline { usleep(10_000) }
        #expect(!FileManager.default.fileExists(atPath: path))
        // Again, to its end.
        h.app.jobCheckpoint = nil
        h.type(":export \(path)\r")
        h.app.waitForJob()
        #expect(h.state.message?.text == "Exported 3,000 objects to \(path)")
        let csv = try String(contentsOfFile: path, encoding: .utf8)
        #expect(csv.split(whereSeparator: \.isNewline).count == Self.dogs + 1)
    }

    @Test func aCommitElsewhereRestartsTheRunningQueryOnTheNewVersion() throws {
        let gate = Gate { _, n in n == 2 }
        let h = try harness(gate)
        h.type("/age >= 15\r")
        try gate.waitUntilHeld()
        let first = try #require(h.state.running?.id)
        // Another writer adds a matching dog while the query runs on the old version.
        try h.db.write { tx in _ = try tx.createObject("Dog", ["name": .string("New"), "age": .int(19)]) }
        #expect(h.app.checkForChanges())
        // Started again on the new version (the old run, still held, is cancelled).
        #expect(h.state.nextJobID > first)
        gate.release.signal()
        h.app.waitForJob()
        let t = try table(h)
        #expect(try h.app.data.rowCount(t.source) == Self.dogs / 4 + 1)
        #expect(h.state.message?.text == "751 of 3,001 match")
    }

    @Test func insideAWriteTransactionAQueryRunsAtOnceAndSeesTheEdits() throws {
        // A worker would be held at its first check: the query must not go to one.
        let gate = Gate { _, n in n == 1 }
        let h = try harness(gate)
        h.type("t")
        #expect(h.app.data.isInTransaction)
        let tx = try #require(h.app.data.transaction)
        _ = try tx.createObject("Dog", ["name": .string("Uncommitted"), "age": .int(18)])
        h.type("/name == 'Uncommitted'\r")
        #expect(h.state.running == nil)
        #expect(h.state.message?.text == "1 of 3,001 match")
        #expect(gate.checks.withLock { $0 } == 0)
    }

    @Test func aResultForATableUnderAnotherScreenShowsWhenGoingBack() throws {
        let gate = Gate { _, n in n == 2 }
        let h = try harness(gate)
        h.type("/age >= 15\r")
        try gate.waitUntilHeld()
        // An object opened while the query runs: the query goes on for the table under it.
        h.type("\r")
        #expect(h.state.stack.count == 2)
        #expect(h.state.running != nil)
        gate.release.signal()
        #expect(h.app.waitForJob())
        #expect(h.state.stack.count == 2)
        h.type("q")
        let t = try table(h)
        #expect(t.query == "age >= 15")
        #expect(try h.app.data.rowCount(t.source) == Self.dogs / 4)
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
