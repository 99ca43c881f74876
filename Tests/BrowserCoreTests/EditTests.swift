import Foundation
import Testing
import RealmStorage
@testable import BrowserCore
import TestSupport

/// Editing in the browser, checked in the file through a second look at the database after each step.
@Suite struct EditTests {
    /// Ctrl-U, Ctrl-N, Ctrl-S, Ctrl-Z as the terminal sends them.
    static let clear = "\u{15}", null = "\u{0E}", commit = "\u{13}", rollback = "\u{1A}"

    /// A value as committed in the file (a fresh snapshot, not the browser's).
    private func stored(_ h: Harness, _ className: String, pk: Value, _ property: String) throws -> Value? {
        try h.db.read { s in
            let t = try s.table(className)
            guard let k = try s.object(t, primaryKey: pk) else { return nil }
            return try s.value(k, s.property(t, property))
        }
    }

    /// Moves the table cursor to a column by name.
    private func column(_ h: Harness, _ name: String) throws {
        guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
        let i = try #require(h.app.data.columns(t.source).firstIndex { $0.name == name })
        h.type("0" + String(repeating: "l", count: i))
    }

    @Test func typedValuesAreCheckedBeforeAnythingIsWritten() throws {
        let h = try Harness()
        try column(h, "age")
        h.type("e")
        #expect(h.state.prompt?.editor.text == "34")
        h.type(Self.clear + "abc\r")
        #expect(h.state.prompt?.error?.message == "'abc' is not an integer")
        expectScreen(h.screen, "edit-error")
        h.type(Self.clear + "99999999999999999999\r")
        #expect(h.state.prompt?.error?.message.contains("out of range") == true)
        #expect(try stored(h, "Person", pk: .int(1), "age") == .int(34))
        h.type(Self.clear + "35\r")
        #expect(h.state.prompt == nil)
        #expect(try stored(h, "Person", pk: .int(1), "age") == .int(35))
        #expect(h.screen.contains("   35 │"))
    }

    @Test func everyTypeHasItsEditor() throws {
        let h = try Harness()
        try column(h, "born")
        h.type("e" + Self.clear + "2024-13-45\r")
        #expect(h.state.prompt?.error?.message.contains("not an ISO 8601 date") == true)
        h.type(Self.clear + "2038-01-19T03:14:08.5Z\r")
        #expect(try stored(h, "Person", pk: .int(1), "born") == .date(Timestamp(seconds: 2_147_483_648, nanoseconds: 500_000_000)))
        try column(h, "height")
        h.type("e" + Self.clear + "1,5\r")
        #expect(h.state.prompt?.error != nil)
        h.type(Self.clear + "-inf\r")
        #expect(try stored(h, "Person", pk: .int(1), "height") == .double(-.infinity))
        // A bool: Space toggles the text, Enter writes it.
        try column(h, "active")
        h.type("e")
        #expect(h.state.prompt?.editor.text == "true")
        h.type(" ")
        #expect(h.state.prompt?.editor.text == "false")
        h.type("\r")
        #expect(try stored(h, "Person", pk: .int(1), "active") == .bool(false))
        // Text, CJK included, written as typed.
        try column(h, "name")
        h.type("e" + Self.clear + "アン 🐱\r")
        #expect(try stored(h, "Person", pk: .int(1), "name") == .string("アン 🐱"))
        // Data is loaded from a file, never typed.
        try column(h, "photo")
        h.type("e" + Self.clear + "hello\r")
        #expect(h.state.prompt?.error?.message.contains("@/path/to/file") == true)
        let file = h.dir.file("blob.bin")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: file))
        h.type(Self.clear + "@" + file + "\r")
        #expect(try stored(h, "Person", pk: .int(1), "photo") == .data([1, 2, 3]))
    }

    @Test func nullOnlyWhereTheTypeAllowsIt() throws {
        let h = try Harness()
        try column(h, "nickname")
        h.type("e" + Self.null)
        #expect(try stored(h, "Person", pk: .int(1), "nickname") == .null)
        try column(h, "name")
        h.type("e" + Self.null)
        #expect(h.state.prompt?.error?.message.contains("required") == true)
        h.type("\u{1B}")
        #expect(try stored(h, "Person", pk: .int(1), "name") == .string("Ann"))
    }

    @Test func primaryKeysStayUnique() throws {
        let h = try Harness(fill: { tx in
            try tx.createClasses([ClassSchema(name: "Tag", properties: [
                PropertySchema(name: "code", type: .string, isPrimaryKey: true),
                PropertySchema(name: "label", type: .string),
            ])])
            _ = try tx.createObject("Tag", ["code": .string("a"), "label": .string("first")])
            _ = try tx.createObject("Tag", ["code": .string("b"), "label": .string("second")])
        })
        h.type("e" + Self.clear + "b\r")
        #expect(h.state.prompt?.error?.message.contains("duplicate primary key") == true)
        #expect(try stored(h, "Tag", pk: .string("a"), "label") == .string("first"))
        h.type(Self.clear + "z\r")
        #expect(try stored(h, "Tag", pk: .string("z"), "label") == .string("first"))
        // `a` suggests a key no object has.
        h.type("a")
        #expect(try h.db.read { try $0.count("Tag") } == 3)
        #expect(try stored(h, "Tag", pk: .string("new-3"), "label") == .string(""))
    }

    @Test func aCreatesAnObjectWithTheNextIntegerKey() throws {
        let h = try Harness()
        h.type("a")
        #expect(try stored(h, "Person", pk: .int(13), "name") == .string(""))
        guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
        #expect(t.selectedKey == (try h.db.read { try $0.object($0.table("Person"), primaryKey: .int(13)) }))
    }

    @Test func linksArePickedFromATableWithItsQueryBar() throws {
        let h = try Harness()
        h.type("\tj\t")   // Dog
        try column(h, "owner")
        h.type("e")
        #expect(h.state.picker != nil)
        h.type("/name == '김민준'\r\r")
        #expect(h.state.picker == nil)
        let minjun = try h.db.read { try $0.object($0.table("Person"), primaryKey: .int(12)) }
        #expect(try h.db.read { s in try s.value(try #require(try s.keys(s.table("Dog")).first), s.property(s.table("Dog"), "owner")) }
                == .link(try #require(minjun)))
        // Ctrl-N in the picker: null. Esc: nothing.
        h.type("e" + Self.null)
        #expect(try h.db.read { s in try s.value(try #require(try s.keys(s.table("Dog")).first), s.property(s.table("Dog"), "owner")) } == .null)
        h.type("e\u{1B}")
        #expect(h.state.picker == nil)
        #expect(h.state.message?.text.contains("nothing was written") == true)
    }

    @Test func listsGetElementsAddedCreatedMovedAndRemoved() throws {
        let h = try Harness()
        try column(h, "dogs")
        h.type("e")   // opens Ann's dogs: Rex, Fido
        guard case .table(let lt)? = h.state.stack.last, case .list = lt.source else { Issue.record("no list"); return }
        func dogs() throws -> [String] {
            try h.db.read { s in
                let people = try s.table("Person"), dogs = try s.table("Dog")
                let ann = try #require(try s.object(people, primaryKey: .int(1)))
                return try s.list(ann, s.property(people, "dogs")).map { v -> String in
                    guard case .link(let k) = v, case .string(let n) = try s.value(k, s.property(dogs, "name")) else { return "?" }
                    return n
                }
            }
        }
        #expect(try dogs() == ["Rex", "Fido"])
        h.type("a/name == 'ポチ'\r\r")
        #expect(try dogs() == ["Rex", "Fido", "ポチ"])
        h.type("A")
        #expect(try dogs() == ["Rex", "Fido", "ポチ", ""])
        h.type("gg")
        h.type("J")
        #expect(try dogs() == ["Fido", "Rex", "ポチ", ""])
        h.type("K")
        #expect(try dogs() == ["Rex", "Fido", "ポチ", ""])
        h.type("Gd")
        #expect(h.state.confirmation != nil)
        h.type("y")
        #expect(try dogs() == ["Rex", "Fido", "ポチ"])
        #expect(try h.db.read { try $0.count("Dog") } == 5)   // removed from the list, not deleted
    }

    @Test func primitiveListsAreEditedElementByElement() throws {
        let h = try Harness()
        try column(h, "tags")
        h.type("e")
        h.type("a" + "新しい\r")
        h.type("e" + Self.clear + "root\r")
        let tags = try h.db.read { s -> [Value] in
            let t = try s.table("Person")
            return try s.list(try #require(try s.object(t, primaryKey: .int(1))), s.property(t, "tags"))
        }
        #expect(tags == [.string("root"), .string("日本"), .string("新しい")])
    }

    @Test func deletingAsksFirstAndFixesLinks() throws {
        let h = try Harness()
        h.type("\tj\t")   // Dog: Rex, Fido, ポチ, Luna
        h.type(" j ")     // mark Rex and ポチ (Space moves down)
        #expect(h.state.marked.count == 2)
        h.type("d")
        #expect(h.state.confirmation?.question.contains("2 Dog objects") == true)
        h.type("n")
        #expect(try h.db.read { try $0.count("Dog") } == 4)
        h.type("dy")
        #expect(try h.db.read { try $0.count("Dog") } == 2)
        // Ann's list lost Rex, and her `best` (Rex) is null now.
        let (dogs, best) = try h.db.read { s -> (Int, Value) in
            let t = try s.table("Person")
            let ann = try #require(try s.object(t, primaryKey: .int(1)))
            return (try s.list(ann, s.property(t, "dogs")).count, try s.value(ann, s.property(t, "best")))
        }
        #expect(dogs == 1)
        #expect(best == .null)
        #expect(h.state.marked.isEmpty)
    }

    @Test func anExplicitTransactionCommitsOrRollsBackEverything() throws {
        let h = try Harness()
        h.type("t")
        #expect(h.app.data.isInTransaction)
        try column(h, "age")
        h.type("e" + Self.clear + "50\r")
        h.type("j" + "e" + Self.clear + "51\r")
        #expect(h.screen.contains("TX 2 edits"))
        // Uncommitted: the browser shows them, the file does not have them.
        #expect(h.screen.contains("   50 │"))
        #expect(try stored(h, "Person", pk: .int(1), "age") == .int(34))
        // Changed cells are marked.
        let canvas = h.app.renderer.render(h.state, data: h.app.data)
        #expect((0..<canvas.width).contains { canvas[$0, 2].role == .warning })
        h.type(Self.rollback)
        #expect(!h.app.data.isInTransaction)
        #expect(try stored(h, "Person", pk: .int(1), "age") == .int(34))
        #expect(!h.screen.contains("   50 │"))
        h.type("k" + "t" + "e" + Self.clear + "60\r" + Self.commit)
        #expect(try stored(h, "Person", pk: .int(1), "age") == .int(60))
        #expect(h.state.message?.text == "Committed 1 edit")
    }

    @Test func quittingAsksWhenEditsAreUncommitted() throws {
        let h = try Harness()
        h.type("Q")
        #expect(h.state.shouldQuit)
        let h2 = try Harness("quit2")
        h2.type("t")
        try column(h2, "age")
        h2.type("e" + Self.clear + "70\r")
        h2.type("Q")
        #expect(!h2.state.shouldQuit)
        #expect(h2.state.confirmation?.question == "Quit and discard 1 uncommitted edit?")
        h2.type("n")
        #expect(!h2.state.shouldQuit)
        h2.type("Qy")
        #expect(h2.state.shouldQuit)
    }

    @Test func aWriteWaitsWhileAnotherWriterHoldsTheLockAndWritesNothing() throws {
        let h = try Harness()
        try column(h, "age")
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let db = h.db
        Thread.detachNewThread {
            let tx = try? db.beginWrite()
            held.signal()
            release.wait()
            tx?.rollback()
            done.signal()
        }
        held.wait()
        h.type("e" + Self.clear + "80\r")
        #expect(h.state.pendingWrite != nil)
        #expect(h.state.message?.text.contains("Waiting for the write lock") == true)
        h.app.retryPendingWrite()   // still held: still waiting
        #expect(h.state.pendingWrite != nil)
        release.signal()
        done.wait()
        h.app.retryPendingWrite()
        #expect(h.state.pendingWrite == nil)
        #expect(try stored(h, "Person", pk: .int(1), "age") == .int(80), "\(h.state.message?.text ?? "")")
        // Giving up writes nothing.
        let held2 = DispatchSemaphore(value: 0), release2 = DispatchSemaphore(value: 0), done2 = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let tx = try? db.beginWrite()
            held2.signal()
            release2.wait()
            tx?.rollback()
            done2.signal()
        }
        held2.wait()
        h.type("e" + Self.clear + "81\r")
        h.type("\u{1B}")
        #expect(h.state.pendingWrite == nil)
        release2.signal()
        done2.wait()
        #expect(try stored(h, "Person", pk: .int(1), "age") == .int(80))
    }

    @Test func aReadOnlyFileRefusesEdits() throws {
        let dir = TempDir()
        let path = dir.file("ro.realm")
        try Database.open(path: path).write { try Fixture.fill($0) }
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        let terminal = VirtualTerminal(size: Size(width: 100, height: 20))
        let app = BrowserApp(terminal: terminal, data: try BrowserData(database: db))
        terminal.type("e")
        app.processPendingInput()
        #expect(app.state.message?.text.contains("read-only") == true)
        terminal.type("a")
        app.processPendingInput()
        #expect(app.state.message?.text.contains("read-only") == true)
        #expect(try db.read { try $0.count("Person") } == 4)
    }

    @Test func valueParserRejectsWhatDoesNotFit() throws {
        #expect((try? ValueParser.parse("1e39", as: .float).get()) == nil)
        #expect((try? ValueParser.parse("not-hex-not-hex-not-hex!", as: .objectId).get()) == nil)
        #expect((try? ValueParser.parse("1234", as: .uuid).get()) == nil)
        #expect((try? ValueParser.parse("12.5.1", as: .decimal128).get()) == nil)
        #expect((try? ValueParser.parse("maybe", as: .bool).get()) == nil)
        #expect(try ValueParser.parse("1_000", as: .int).get() == .int(1000))
        #expect(try ValueParser.parse("\"42\"", as: .mixed).get() == .string("42"))
        #expect(try ValueParser.parse("42", as: .mixed).get() == .int(42))
        if case .objectId = try ValueParser.parse("new", as: .objectId).get() {} else { Issue.record("new objectId") }
    }
}

/// A decimal128 shown in a cell and edited keeps all 34 digits and its exponent.
@Suite struct DecimalCellTests {
    @Test func displayAndEditRoundTripEveryDigit() throws {
        for t in ["1234567890123456789012345678901234", "-12345678901234567890.10", "1.000000000000000000000000000000001",
                  "9.999999999999999999999999999999999E+6144", "1E-6176", "0.00", "NaN"] {
            let d = try #require(Decimal128(string: t))
            let cell = ValueFormat().cell(.decimal128(d))
            #expect(cell.text == d.description)
            #expect(Decimal128(string: cell.text).map { $0.low == d.low && $0.high == d.high } == true, "\(t) shown as \(cell.text)")
            let text = ValueParser.editText(.decimal128(d))
            guard case .decimal128(let back) = try ValueParser.parse(text, as: .decimal128).get() else {
                Issue.record("\(t) edited as \(text)"); continue
            }
            #expect(back.low == d.low && back.high == d.high, "\(t) edited as \(text)")
        }
        #expect(ValueFormat().cell(.decimal128(Decimal128(string: "12345678901234567890.10")!)).text == "12345678901234567890.10")
    }
}
