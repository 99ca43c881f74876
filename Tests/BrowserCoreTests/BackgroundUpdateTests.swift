import Foundation
import Testing
import RealmQuery
import RealmStorage
@testable import BrowserCore
import TestSupport

/// The two pieces of work that come to the screen without a query being typed run off the main loop too: the
/// tables shown, read again after another process commits, and a large list read when it is opened. The
/// worker is held at a known check (`BackgroundQueryTests.Gate`): meanwhile the screen shows the version it
/// showed, whole, with its progress in the status bar, keys and resizing work, and Esc leaves it as it was.
@Suite(.serialized) struct BackgroundUpdateTests {
    typealias Gate = BackgroundQueryTests.Gate
    static let dogs = BackgroundQueryTests.dogs

    /// The 3,000 dogs, and one person whose `dogs` list holds every one of them.
    static func fillWithOwner(_ tx: WriteTransaction) throws {
        try BackgroundQueryTests.fill(tx)
        try tx.createClass(ClassSchema(name: "Person", properties: [
            PropertySchema(name: "name", type: .string),
            .list("dogs", of: "Dog"),
        ]))
        let ann = try tx.createObject("Person", ["name": .string("Ann")])
        let dogs = try tx.keys(tx.table("Dog")).map { Value.link($0) }
        try tx.setList(ann, tx.property(tx.table("Person"), "dogs"), dogs)
    }

    func harness(_ gate: Gate, fill: (WriteTransaction) throws -> Void = BackgroundQueryTests.fill, _ name: String = #function) throws -> Harness {
        let h = try Harness(name, size: Size(width: 100, height: 20), fill: fill)
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

    /// Runs `/age >= 15` to its end, unheld (750 of the 3,000 dogs).
    func query(_ h: Harness, _ gate: Gate) throws {
        h.app.jobCheckpoint = nil
        h.type("/age >= 15\r")
        h.app.waitForJob()
        try #require(try h.app.data.rowCount(table(h).source) == Self.dogs / 4)
        h.app.jobCheckpoint = { gate.checkpoint($0) }
    }

    /// Another process renames the first dog the query shows and adds a matching one.
    func commitElsewhere(_ h: Harness, name: String = "Renamed") throws {
        try h.db.write { tx in
            let dogs = try tx.table("Dog")
            let first = try #require(try tx.find(tx.property(dogs, "age"), equalTo: .int(15)).first)
            try tx.set(first, tx.property(dogs, "name"), .string(name))
            _ = try tx.createObject("Dog", ["name": .string("New \(name)"), "age": .int(19)])
        }
    }

    @Test func aCommitElsewhereIsReadOffTheMainLoopAndShownWhole() throws {
        // The update's first check: its query has started on the new version.
        let gate = Gate { _, n in n == 1 }
        let h = try harness(gate)
        try query(h, gate)
        let before = h.app.data.version
        try commitElsewhere(h)
        #expect(h.app.checkForChanges())
        try gate.waitUntilHeld()
        defer { gate.release.signal() }
        h.app.pollJob()
        h.app.draw()
        // The version shown stays, whole: the old rows, the old name, its progress in the status bar.
        #expect(h.app.data.version == before)
        #expect(try h.app.data.rowCount(table(h).source) == Self.dogs / 4)
        #expect(h.screen.contains("Max 15") && !h.screen.contains("Renamed"))
        #expect(statusLine(h).contains("updating… ") && statusLine(h).contains(" % · Esc cancels"), "\(statusLine(h))")
        // Keys and resizing work meanwhile.
        h.type("jj")
        #expect(try table(h).row == 2)
        let selected = try table(h).selectedKey
        h.resize(80, 14)
        #expect(h.screen.split(separator: "\n").count == 14 && statusLine(h).contains("Esc cancels"))
        // Let through: the new version, its query's result, the row still on its object.
        gate.release.signal()
        #expect(h.app.waitForJob())
        #expect(h.app.data.version > before)
        #expect(h.state.running == nil && !statusLine(h).contains("Esc cancels"))
        let t = try table(h)
        #expect(try h.app.data.rowCount(t.source) == Self.dogs / 4 + 1)
        #expect(t.query == "age >= 15" && t.selectedKey == selected)
        h.type("gg")
        #expect(h.screen.contains("Renamed"))
    }

    @Test func escDuringAnUpdateKeepsTheVersionShownUntilTheNextCommit() throws {
        let gate = Gate { _, n in n == 1 }
        let h = try harness(gate)
        try query(h, gate)
        let before = h.app.data.version
        try commitElsewhere(h)
        #expect(h.app.checkForChanges())
        try gate.waitUntilHeld()
        h.type("\u{1B}")
        gate.release.signal()
        #expect(h.state.running == nil)
        #expect(h.state.message?.text == "Update cancelled: the older version stays until the next commit")
        #expect(h.app.data.version == before && !h.screen.contains("Renamed"))
        #expect(try h.app.data.rowCount(table(h).source) == Self.dogs / 4)
        // The version declined is not taken at the next poll; the next commit brings both.
        #expect(!h.app.checkForChanges())
        try commitElsewhere(h, name: "Again")
        #expect(h.app.checkForChanges())
        h.app.waitForJob()
        #expect(try h.app.data.rowCount(table(h).source) == Self.dogs / 4 + 2)
        #expect(h.app.data.version == (try h.db.latestVersion()))
        #expect(h.state.message == nil)
    }

    @Test func aNewerCommitDuringAnUpdateStartsItAgainOnTheNewest() throws {
        let gate = Gate { _, n in n == 1 }
        let h = try harness(gate)
        try query(h, gate)
        try commitElsewhere(h)
        #expect(h.app.checkForChanges())
        try gate.waitUntilHeld()
        let first = try #require(h.state.running?.id)
        try commitElsewhere(h, name: "Again")
        #expect(h.app.checkForChanges())
        // Started again (it may have ended already: only the first run is held).
        #expect(h.state.nextJobID > first)
        gate.release.signal()
        h.app.waitForJob()
        #expect(h.app.data.version == (try h.db.latestVersion()))
        #expect(try h.app.data.rowCount(table(h).source) == Self.dogs / 4 + 2)
    }

    @Test func aTransactionBegunDuringAnUpdateDropsItAndShowsItsOwnVersion() throws {
        let gate = Gate { _, n in n == 1 }
        let h = try harness(gate)
        try query(h, gate)
        try commitElsewhere(h)
        #expect(h.app.checkForChanges())
        try gate.waitUntilHeld()
        // `t`: the transaction reads the newest version; the update, for the version before, is dropped and
        // never shown over it.
        h.type("t")
        gate.release.signal()
        #expect(h.app.data.isInTransaction)
        #expect(h.state.running == nil && h.app.updating == nil)
        h.app.waitForJob()
        #expect(h.app.data.isInTransaction)
        #expect(try h.app.data.rowCount(table(h).source) == Self.dogs / 4 + 1)
        h.type("gg")
        #expect(h.screen.contains("Renamed"))
        #expect(!h.app.checkForChanges())
    }

    @Test func aListColumnIsReadOncePerVersionNotAtEveryKey() throws {
        let h = try Harness(size: Size(width: 100, height: 20), fill: Self.fillWithOwner)
        h.type("\tj\t")
        let reads = h.app.data.collectionCellReads
        #expect(reads > 0 && h.screen.contains("[3000]"))
        h.type("lhlh")
        #expect(h.app.data.collectionCellReads == reads)
        // A new version reads it again.
        try h.db.write { tx in
            let people = try tx.table("Person")
            let dog = try tx.createObject("Dog", ["name": .string("Newcomer"), "age": .int(1)])
            try tx.listAppend(try #require(try tx.keys(people).first), tx.property(people, "dogs"), .link(dog))
        }
        h.app.checkForChanges()
        h.app.draw()
        #expect(h.screen.contains("[3001]"))
    }

    @Test func aQueryClearedDuringAnUpdateThatCarriesItStaysCleared() throws {
        // The query is held at its first check; the update that carries it is not held.
        let gate = Gate { _, n in n == 1 }
        let h = try harness(gate)
        h.type("/age >= 15\r")
        try gate.waitUntilHeld()
        try commitElsewhere(h)
        #expect(h.app.checkForChanges())
        // The query bar emptied and submitted: the table shows all of it, in the new version.
        h.type("/\u{15}\r")
        gate.release.signal()
        h.app.waitForJob()
        for _ in 0..<3 where h.app.checkForChanges() { h.app.waitForJob() }
        let t = try table(h)
        #expect(t.query.isEmpty && t.source.filter == nil)
        #expect(h.app.data.version == (try h.db.latestVersion()))
        #expect(try h.app.data.rowCount(t.source) == Self.dogs + 1)
    }

    /// Tab, j, Tab: the Person table; Enter: Ann; j: her `dogs` field.
    func openAnn(_ h: Harness) throws {
        h.type("\tj\t\rj")
        guard case .object(let o)? = h.state.stack.last else { throw HarnessFailure("Ann is not shown") }
        #expect(o.field == 1)
    }

    @Test func aLargeListOpensOffTheMainLoopAndEscLeavesTheObjectShown() throws {
        // The open's one check, before the list is read.
        let gate = Gate { _, n in n == 1 }
        let h = try harness(gate, fill: Self.fillWithOwner)
        try openAnn(h)
        h.type("\r")
        try gate.waitUntilHeld()
        defer { gate.release.signal() }
        h.app.pollJob()
        h.app.draw()
        #expect(h.state.stack.count == 2)
        #expect(statusLine(h).contains("opening dogs… · Esc cancels"), "\(statusLine(h))")
        // Keys act on the object shown meanwhile.
        h.type("k")
        guard case .object(let o)? = h.state.stack.last else { throw HarnessFailure("Ann is not shown") }
        #expect(o.field == 0)
        // Esc: the object stays, the list does not open.
        h.type("\u{1B}")
        #expect(h.state.stack.count == 2 && h.state.running == nil)
        #expect(h.state.message?.text == "Opening dogs cancelled")
        gate.release.signal()
        // Again, let through: the list's table.
        h.app.jobCheckpoint = nil
        h.type("j\r")
        h.app.waitForJob()
        let t = try table(h)
        #expect(h.state.stack.count == 3 && t.source.collectionProperty == "dogs")
        #expect(try h.app.data.rowCount(t.source) == Self.dogs)
    }

    @Test func aListShownIsReadAgainOffTheMainLoopAfterACommitElsewhere() throws {
        // The open passes the first check; the update's first check is held.
        let gate = Gate { _, n in n == 2 }
        let h = try harness(gate, fill: Self.fillWithOwner)
        try openAnn(h)
        h.type("\r")
        h.app.waitForJob()
        #expect(h.state.stack.count == 3)
        try h.db.write { tx in
            let people = try tx.table("Person")
            let ann = try #require(try tx.keys(people).first)
            let dog = try tx.createObject("Dog", ["name": .string("Newcomer"), "age": .int(1)])
            try tx.listAppend(ann, tx.property(people, "dogs"), .link(dog))
        }
        #expect(h.app.checkForChanges())
        try gate.waitUntilHeld()
        defer { gate.release.signal() }
        h.app.pollJob()
        h.app.draw()
        #expect(try h.app.data.rowCount(table(h).source) == Self.dogs)
        #expect(statusLine(h).contains("updating… · Esc cancels"), "\(statusLine(h))")
        h.type("j")
        #expect(try table(h).row == 1)
        gate.release.signal()
        h.app.waitForJob()
        #expect(try h.app.data.rowCount(table(h).source) == Self.dogs + 1)
        h.type("G")
        #expect(h.screen.contains("Newcomer"))
    }
}
