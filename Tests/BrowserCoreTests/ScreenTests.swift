import Foundation
import Testing
import RealmStorage
@testable import BrowserCore
import TestSupport

/// Whole screens after key sequences, compared with golden files in `Snapshots/`.
@Suite struct ScreenTests {
    let esc = "\u{1B}"

    @Test func firstScreenShowsClassesAndTheFirstTable() throws {
        let h = try Harness()
        expectScreen(h.screen, "first-screen")
        #expect(h.state.focus == .table && h.state.stack.count == 1)
    }

    @Test func sidebarSelectsAClassAndTabSwitchesFocus() throws {
        let h = try Harness()
        h.type("\tj")
        #expect(h.state.focus == .sidebar && h.state.classes[h.state.classIndex].name == "Dog")
        expectScreen(h.screen, "dog-table-sidebar-focused")
        h.type("\t")
        #expect(h.state.focus == .table)
        // h at the first column goes back to the class list; l comes back.
        h.type("h")
        #expect(h.state.focus == .sidebar)
        h.type("l")
        #expect(h.state.focus == .table)
    }

    @Test func followALinkAndComeBack() throws {
        let h = try Harness()
        h.type("\tj\t")                 // Dog table
        h.type("ll\r")                   // owner column of Rex → Ann
        expectScreen(h.screen, "link-followed-to-object")
        guard case .object(let o)? = h.state.stack.last else { Issue.record("no object view"); return }
        #expect(o.object.className == "Person")
        h.type(esc)
        #expect(h.state.stack.count == 1)
        guard case .table(let t)? = h.state.stack.last else { return }
        #expect(t.row == 0 && t.column == 2)
    }

    @Test func listTableWithIndexColumnAndBreadcrumbs() throws {
        let h = try Harness()
        h.type("\r")                     // Ann's object view
        h.type("jjjjjjjj\r")             // dogs
        expectScreen(h.screen, "list-table")
        h.type("j\r")                    // Fido
        expectScreen(h.screen, "list-element-object")
        #expect(h.screen.hasPrefix(" Person › #1 Ann › dogs › Dog #1 Fido"))
        h.type("\u{7F}q\(esc)")
        #expect(h.state.stack.count == 1)
    }

    @Test func listOfPrimitives() throws {
        let h = try Harness()
        h.type("$hh\r")                  // tags of Ann
        expectScreen(h.screen, "primitive-list")
        h.type("\r")
        #expect(h.state.message?.text.contains("no object") == true)
    }

    @Test func backlinkTables() throws {
        let h = try Harness()
        // Declared LinkingObjects: Rex's owners (Ann and 김민준 list him).
        h.type("\tj\t$h\r")
        expectScreen(h.screen, "linking-objects-table")
        h.type(esc)
        // An incoming link no model declares: Person gets a "← Dog.owner" column.
        h.type("\tk\t$\r")
        #expect(h.screen.contains("← Dog.owner"))
        guard case .table(let t)? = h.state.stack.last, case .backlinks(_, "Dog", "owner") = t.source else {
            Issue.record("expected the Dog.owner backlinks of Ann"); return
        }
        expectScreen(h.screen, "incoming-links-table")
        // `i` on a row: incoming links of that object.
        h.type("\(esc)\(esc)0i")
        #expect(h.state.stack.count == 2)
    }

    @Test func objectViewWrapsAndScrollsLongValues() throws {
        let h = try Harness(size: Size(width: 60, height: 14))
        h.type("jj\r")                   // Zoë
        expectScreen(h.screen, "object-long-string")
        h.type("jj")                     // into the nickname, then scroll it
        h.type("jjj")
        expectScreen(h.screen, "object-long-string-scrolled")
        h.type("G")
        expectScreen(h.screen, "object-bottom")
    }

    @Test func objectViewShowsDataNullAndEmpty() throws {
        let h = try Harness(size: Size(width: 90, height: 24))
        h.type("\r")
        expectScreen(h.screen, "object-ann")
        h.type("\(esc)j\r")
        #expect(h.screen.contains("\"\" (empty)"))
        #expect(h.screen.contains("null"))
    }

    @Test func wideCharactersStayAlignedInNarrowColumns() throws {
        let h = try Harness(size: Size(width: 44, height: 10))
        expectScreen(h.screen, "narrow-cjk-emoji")
        for line in h.screen.split(separator: "\n") { #expect(Canvas.width(of: String(line)) == 44) }
        // Scrolling right keeps the primary key column.
        h.type("$")
        expectScreen(h.screen, "narrow-scrolled-right")
    }

    @Test func movementKeys() throws {
        let h = try Harness(fill: { tx in
            try tx.createClasses([ClassSchema(name: "Item", properties: [
                PropertySchema(name: "id", type: .int, isPrimaryKey: true), PropertySchema(name: "label", type: .string)])])
            for i in 0..<500 { try tx.createObject("Item", ["id": .int(Int64(i)), "label": .string("item \(i)")]) }
        })
        func row() -> Int { if case .table(let t)? = h.state.stack.last { return t.row } else { return -1 } }
        h.type("G"); #expect(row() == 499)
        h.type("gg"); #expect(row() == 0)
        h.type("\u{1B}[6~"); #expect(row() == 17)
        h.type("\u{4}"); #expect(row() == 25)
        h.type("\u{15}"); #expect(row() == 17)
        h.type("\u{1B}[5~"); #expect(row() == 0)
        h.type("jjj\u{1B}[B"); #expect(row() == 4)
        h.type("k\u{1B}[A"); #expect(row() == 2)
        h.type("G")
        expectScreen(h.screen, "items-bottom")
        h.type("z")
        #expect(h.state.message?.text.contains("? shows the keys") == true)
    }

    @Test func helpOverlayIsGeneratedFromTheKeyMap() throws {
        let h = try Harness(size: Size(width: 100, height: 26))
        h.type("?")
        expectScreen(h.screen, "help")
        // Every command and palette command is on some page of it.
        var seen = h.screen
        for _ in 0..<5 { h.type("\u{1B}[6~"); seen += h.screen }
        #expect(h.state.showHelp)
        for c in Command.allCases { #expect(seen.contains(c.rawValue), "\(c.rawValue)") }
        for c in PaletteCommand.allCases { #expect(seen.contains(":" + c.rawValue), "\(c.rawValue)") }
        h.type("x")
        #expect(!h.state.showHelp)
    }

    @Test func resizeAndTooSmall() throws {
        let h = try Harness()
        h.type("jj")
        h.resize(30, 6)
        expectScreen(h.screen, "too-small")
        h.type("j")                      // keys still work while too small
        h.resize(70, 12)
        expectScreen(h.screen, "resized")
        guard case .table(let t)? = h.state.stack.last else { return }
        #expect(t.row == 3)
        h.type("Q")
        #expect(h.state.shouldQuit)
    }

    @Test func quitKeys() throws {
        #expect(try Harness().type("q").state.shouldQuit)            // q on the first screen quits
        #expect(try Harness().type("\r").type("q").state.shouldQuit == false)
        #expect(try Harness().type("\r").type("Q").state.shouldQuit)
        #expect(try Harness().type("\u{3}").state.shouldQuit)         // Ctrl-C
        #expect(try Harness().type(esc).state.shouldQuit == false)
    }

    @Test func liveUpdatesKeepTheSelectedObject() throws {
        let h = try Harness()
        h.type("jj")                     // Zoë (id 3)
        try h.db.write { tx in
            // An object before her in key order, and a change of her age.
            _ = try tx.createObject("Person", ["id": .int(0), "name": .string("Before"), "height": .double(1), "born": .date(Timestamp(seconds: 0))])
            let t = try tx.table("Person")
            try tx.set(try #require(try tx.object(t, primaryKey: .int(3))), tx.property(t, "age"), .int(8))
        }
        #expect(h.app.checkForChanges())
        h.app.draw()
        guard case .table(let t)? = h.state.stack.last else { return }
        #expect(t.row == 3)
        #expect(h.state.classes.first { $0.name == "Person" }?.count == 5)
        expectScreen(h.screen, "live-update")
        #expect(!h.app.checkForChanges())
        // The object on screen is deleted: its view closes with a message.
        h.type("\r")
        try h.db.write { tx in
            let t = try tx.table("Person")
            try tx.delete(t, try #require(try tx.object(t, primaryKey: .int(3))))
        }
        h.app.checkForChanges()
        #expect(h.state.stack.count == 1)
        #expect(h.state.message?.text.contains("deleted") == true)
    }

    @Test func aFilterShowsOnlyItsKeysInItsOrder() throws {
        let h = try Harness()
        let keys = try h.db.read { s in try [12, 1].map { try #require(try s.object(s.table("Person"), primaryKey: .int($0))) } }
        var state = h.app.state
        state.stack = [.table(TableScreen(source: .objects(className: "Person", filter: KeyFilter(keys: keys, description: "age != 7"))))]
        state.normalize(h.app.data)
        let canvas = h.app.renderer.render(state, data: h.app.data)
        #expect(canvas.line(0).hasPrefix(" Person (age != 7)"))
        #expect(canvas.line(2).contains("김민준") && canvas.line(3).contains("Ann"))
        #expect(!canvas.text.contains("佐藤"))
    }
}
