import Foundation
import Testing
import RealmStorage
@testable import BrowserCore
import TestSupport

/// What golden text cannot show: styles, focus, how much is read.
@Suite struct BehaviourTests {
    @Test func theCursorAndTheFocusShowInTheRoles() throws {
        let h = try Harness()
        h.type("j")
        let canvas = h.app.renderer.render(h.state, data: h.app.data)
        // Line 2 of the screen is the first object; the second (line 3) is selected, its first cell most of all.
        let area = Layout.tableArea(h.state)
        #expect(canvas[area.x + 1, 3].role == .cursorCell)
        #expect(canvas[area.x + area.width - 2, 3].role == .cursorRow)
        #expect(canvas[area.x + 1, 2].role != .cursorRow)
        #expect(canvas[1, 2].role == .sidebarSelectedInactive)   // Person, table focused
        h.type("\t")
        let sidebar = h.app.renderer.render(h.state, data: h.app.data)
        #expect(sidebar[1, 2].role == .sidebarSelected)
        #expect(sidebar[area.x + 1, 3].role == .cursorRowInactive)
        // Values keep their roles outside the cursor: null, numbers, the primary key's header.
        let cells = (0..<canvas.width).map { canvas[$0, 2] }
        #expect(cells.contains { $0.role == .null })
        #expect(cells.contains { $0.role == .number })
        #expect((0..<canvas.width).contains { canvas[$0, 1].role == .headerKey })
    }

    @Test func onlyTheRowsOnScreenAreRead() throws {
        let n = 20_000
        let h = try Harness(size: Size(width: 80, height: 30), fill: { tx in
            try tx.createClasses([ClassSchema(name: "Item", properties: [PropertySchema(name: "value", type: .int)])])
            let t = try tx.table("Item")
            let p = try tx.property(t, "value")
            for i in 0..<n { _ = try tx.createObject(t, columns: [p], values: [.int(Int64(i))]) }
        })
        let visible = Layout.visibleRows(h.state)
        // Opening, a page down, the last row: a few lookups per visible row, never a scan.
        #expect(h.app.data.positionLookups <= 4 * visible)
        h.app.data.positionLookups = 0
        h.type("\u{1B}[6~")
        #expect(h.app.data.positionLookups <= 4 * visible)
        h.app.data.positionLookups = 0
        h.type("G")
        #expect(h.app.data.positionLookups <= 4 * visible)
        #expect(h.screen.contains("20,000/20,000"))
    }

    @Test func aThemeChoosesHowBoolsRead() throws {
        let symbols = try Harness(size: Size(width: 140, height: 10))
        #expect(symbols.screen.contains("✓") && !symbols.screen.contains("true"))
        let words = try Harness(size: Size(width: 140, height: 10), theme: try #require(try Theme.builtin("high-contrast")))
        #expect(words.screen.contains("true") && words.screen.contains("false") && !words.screen.contains("✓"))
    }

    @Test func readOnlyShowsInTheStatusBar() throws {
        let dir = TempDir()
        let path = dir.file("ro.realm")
        try Database.open(path: path).write { try Fixture.fill($0) }
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        let terminal = VirtualTerminal(size: Size(width: 80, height: 10))
        let app = BrowserApp(terminal: terminal, data: try BrowserData(database: db))
        app.draw()
        #expect(terminal.screen.line(9).contains("ro.realm") && terminal.screen.line(9).contains("read-only"))
    }

    @Test func anEmptyDatabaseAndAnEmptyClass() throws {
        let empty = try Harness(fill: { _ in })
        #expect(empty.screen.contains("This database has no classes."))
        empty.type("jj\r")
        #expect(!empty.state.shouldQuit)
        let noObjects = try Harness(fill: { tx in try tx.createClasses([ClassSchema(name: "Thing", properties: [PropertySchema(name: "x", type: .int)])]) })
        #expect(noObjects.screen.contains("No Thing objects"))
        noObjects.type("\r")
        #expect(noObjects.state.message?.text == "The table is empty")
    }

    @Test func commandsByNameDoWhatTheirKeysDo() throws {
        let byKey = try Harness().type("jj\r")
        let byName = try Harness()
        for c in [Command.moveDown, .moveDown, .open] { byName.app.perform(c) }
        #expect(byKey.state.stack == byName.state.stack)
    }
}

/// Seeded random key sequences and resizes: the browser never traps, cursors stay on something that
/// exists, and every line of every screen is exactly as wide as the terminal.
@Suite struct RandomKeysTests {
    static let keys: [String] = ["j", "k", "h", "l", "\r", "\u{1B}", "\u{7F}", "q", "\t", "G", "gg", "0", "$", "i", "?",
                                 "\u{1B}[6~", "\u{1B}[5~", "\u{4}", "\u{15}", "\u{1B}[A", "\u{1B}[B", "\u{1B}[C", "\u{1B}[D", "x", "\u{C}"]

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomSessions(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let h = try Harness("random\(seed)", size: Size(width: 70, height: 16))
        for step in 0..<600 {
            if rng.below(40) == 0 {
                h.resize(20 + rng.below(100), 4 + rng.below(40))
            } else {
                let key = Self.keys[rng.below(Self.keys.count)]
                // `q` on the first screen quits: only go back with it.
                if key == "q" && h.state.stack.count <= 1 { continue }
                h.type(key)
            }
            #expect(!h.state.shouldQuit)
            let lines = h.screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(lines.count == h.state.size.height, "step \(step)")
            for line in lines { #expect(Canvas.width(of: String(line)) == h.state.size.width, "step \(step): \(line)") }
            if case .table(let t)? = h.state.stack.last {
                let n = try h.app.data.rowCount(t.source)
                #expect(t.row >= 0 && (n == 0 || t.row < n) && t.top <= t.row, "step \(step)")
                #expect(t.column >= 0 && t.column < max(1, h.app.data.columns(t.source).count), "step \(step)")
            }
        }
    }
}

/// The mouse: clicks select, the wheel scrolls.
@Suite struct MouseTests {
    @Test func clicksSelectClassesRowsAndCellsAndTheWheelScrolls() throws {
        let n = 200
        let h = try Harness(size: Size(width: 80, height: 20), fill: { tx in
            try Fixture.fill(tx)
            try tx.createClasses([ClassSchema(name: "Item", properties: [PropertySchema(name: "value", type: .int)])])
            for i in 0..<n { _ = try tx.createObject("Item", ["value": .int(Int64(i))]) }
        })
        func row() -> Int { if case .table(let t)? = h.state.stack.last { return t.row }; return -1 }
        func column() -> Int { if case .table(let t)? = h.state.stack.last { return t.column }; return -1 }
        // The class list: Person, Dog, Item (row 2 of the list is y 4).
        h.terminal.mouse(.click(x: 2, y: 4))
        h.app.processPendingInput()
        #expect(h.state.classes[h.state.classIndex].name == "Item")
        #expect(h.state.focus == .sidebar)
        // A row of the table: y 5 is the fourth row (header at y 1).
        let area = Layout.tableArea(h.state)
        h.terminal.mouse(.click(x: area.x + 2, y: 5))
        h.app.processPendingInput()
        #expect(row() == 3)
        #expect(h.state.focus == .table)
        h.terminal.mouse(.wheelDown(x: area.x + 2, y: 5))
        h.app.processPendingInput()
        #expect(row() == 6)
        h.terminal.mouse(.wheelUp(x: area.x + 2, y: 5))
        h.terminal.mouse(.wheelUp(x: area.x + 2, y: 5))
        h.app.processPendingInput()
        #expect(row() == 0)
        // A click past the last row selects nothing new; a click on a cell picks its column.
        h.type("\t")   // back to the class list, then Person
        h.terminal.mouse(.click(x: 2, y: 2))
        h.app.processPendingInput()
        h.terminal.mouse(.click(x: area.x + 2, y: 15))
        h.app.processPendingInput()
        #expect(row() == 0)
        let placed = try #require({ () -> [Layout.PlacedColumn]? in
            guard case .table(let t)? = h.state.stack.last else { return nil }
            return Layout.placeColumns(widths: t.widths, frozen: 1, left: t.left, width: area.width)
        }())
        let second = try #require(placed.dropFirst().first)
        h.terminal.mouse(.click(x: area.x + second.x + 1, y: 3))
        h.app.processPendingInput()
        #expect(column() == second.index)
        #expect(row() == 1)
        // The wheel in the help scrolls it; a click does not close a prompt.
        h.type("?")
        h.terminal.mouse(.wheelDown(x: 10, y: 10))
        h.app.processPendingInput()
        #expect(h.state.helpTop == 3)
    }
}

/// On an encrypted file the browser gives decrypted pages back past its budget, and shows the same screen.
@Suite struct EncryptedBrowsingTests {
    @Test func decryptedPagesAreTrimmedPastTheBudget() throws {
        let dir = TempDir()
        let key = (0..<64).map { UInt8($0) }
        let db = try Database.open(path: dir.file("e.realm"), options: DatabaseOptions(encryptionKey: key))
        try db.write { try Fixture.fill($0) }
        let terminal = VirtualTerminal(size: Size(width: 100, height: 20))
        let app = BrowserApp(terminal: terminal, data: try BrowserData(database: db))
        app.draw()
        let before = terminal.text
        #expect(db.decryptedBytes > 0)
        #expect(!app.trimDecryptedPagesIfOverBudget())   // under the default budget
        let held = db.decryptedBytes
        app.decryptedBudgetBytes = 0
        #expect(app.trimDecryptedPagesIfOverBudget())
        // Only what the fresh snapshot read back (the meta slots and the catalogue) is decrypted now.
        #expect(db.decryptedBytes < held && db.decryptedBytes <= 4 * 4096, "\(held) → \(db.decryptedBytes)")
        app.draw()
        #expect(terminal.text == before)
        terminal.type("j\r")
        app.processPendingInput()
        #expect(terminal.text.contains("佐藤 花子"))
    }
}
