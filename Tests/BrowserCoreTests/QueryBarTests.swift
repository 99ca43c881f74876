import Foundation
import Testing
import RealmStorage
import RealmQuery
@testable import BrowserCore
import TestSupport

/// The query bar, column sorting and the command palette, typed as a person would.
@Suite struct QueryBarTests {
    /// The names shown in the table's rows, top to bottom (the second column of the fixture's Person table).
    private func names(_ h: Harness) throws -> [String] {
        guard case .table(let t)? = h.state.stack.last else { return [] }
        let n = try h.app.data.rowCount(t.source)
        return try (0..<n).map { row in
            let key = try #require(try h.app.data.key(row: row, in: t.source))
            guard case .string(let s) = try h.app.data.value(ObjectRef(className: "Person", key: key), "name") else { return "" }
            return s
        }
    }

    @Test func aQueryFiltersTheTableAndSaysHowMuchMatches() throws {
        let h = try Harness()
        h.type("/")
        #expect(h.state.prompt?.kind == .query)
        h.type("age > 5 AND name != 'Zoë 👩‍👩‍👧'\r")
        #expect(h.state.prompt == nil)
        #expect(try names(h) == ["Ann"])
        #expect(h.state.message?.text == "1 of 4 match")
        #expect(h.screen.contains("row 1/1 of 4"))
        // `/` again holds the query, to be edited; Ctrl-U and an empty Enter clear it.
        h.type("/")
        #expect(h.state.prompt?.editor.text == "age > 5 AND name != 'Zoë 👩‍👩‍👧'")
        h.type("\u{15}\r")
        #expect(try names(h).count == 4)
        #expect(h.state.message?.text == "Showing all 4")
    }

    /// Esc on the first screen with a query shown clears the query (the sort stays); with none it says Q quits.
    @Test func escClearsTheQueryOnTheFirstScreen() throws {
        let h = try Harness()
        h.type("/age > 5\r")
        #expect(try names(h).count < 4)
        h.type("\u{1B}")
        #expect(try names(h).count == 4)
        #expect(h.state.message?.text == "Showing all 4")
        guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
        #expect(t.query.isEmpty)
        h.type("\u{1B}")
        #expect(h.state.message?.text == "This is the first screen: Q quits")
        #expect(!h.state.shouldQuit)
    }

    @Test func anInvalidQueryChangesNothingAndPointsAtTheMistake() throws {
        let h = try Harness(size: Size(width: 100, height: 20))
        h.type("/name == '日本語😀' AND agee > 3\r")
        let p = try #require(h.state.prompt)
        let e = try #require(p.error)
        #expect(e.message.contains("did you mean 'age'"))
        // `name == '` is 9 cells, 日本語 6, 😀 2, `' AND ` 6: the caret starts 23 cells into the text.
        #expect(e.start == 23)
        #expect(e.width == 4)
        #expect(try names(h).count == 4)
        expectScreen(h.screen, "query-error-caret")
        // Typing clears the error; Esc leaves the table as it was.
        h.type("x")
        #expect(h.state.prompt?.error == nil)
        h.type("\u{1B}")
        #expect(h.state.prompt == nil)
        #expect(try names(h).count == 4)
    }

    @Test func unterminatedStringsAndParenthesesAreErrorsToo() throws {
        let h = try Harness()
        for bad in ["name == 'Ann", "(age > 3", "age >", "name > 5", "@@@", "SUBQUERY(", "age IN {1, 2"] {
            h.type("/")
            h.type(bad + "\r")
            #expect(h.state.prompt?.error != nil, "\(bad)")
            h.type("\u{1B}")
        }
        #expect(try names(h).count == 4)
    }

    @Test func historyWalksBackAndForward() throws {
        let h = try Harness()
        h.type("/age > 1\r")
        h.type("/\u{15}age > 30\r")
        h.type("/\u{15}draft")
        h.type("\u{1B}[A")
        #expect(h.state.prompt?.editor.text == "age > 30")
        h.type("\u{1B}[A")
        #expect(h.state.prompt?.editor.text == "age > 1")
        h.type("\u{1B}[A")
        #expect(h.state.prompt?.editor.text == "age > 1")
        h.type("\u{1B}[B")
        h.type("\u{1B}[B")
        #expect(h.state.prompt?.editor.text == "draft")
    }

    @Test func orderingClausesAloneWork() throws {
        let h = try Harness()
        h.type("/SORT(name DESC) LIMIT(2)\r")
        #expect(h.state.prompt == nil)
        #expect(try names(h) == ["김민준", "佐藤 花子"])
    }

    /// Typed text that starts with a property named like a clause (`sortOrder`) is a condition, not a bare
    /// clause; a column named like a reserved word (`any`) is sorted by with its name escaped.
    @Test func propertiesNamedLikeKeywordsAreQueriedAndSorted() throws {
        let condition = try #require(TableQuery(query: "sortOrder > 1", sort: nil))
        #expect(condition.text == "sortOrder > 1")
        #expect(try #require(TableQuery(query: "limitValue == 2 SORT(x ASC)", sort: nil)).text == "limitValue == 2 SORT(x ASC)")
        #expect(try #require(TableQuery(query: "SORT (name ASC)", sort: nil)).text == "TRUEPREDICATE SORT (name ASC)")
        #expect(try #require(TableQuery(query: "limit(3)", sort: nil)).text == "TRUEPREDICATE limit(3)")
        let sorted = try #require(TableQuery(query: "", sort: ColumnSort(property: "any", ascending: false)))
        #expect(sorted.text == "TRUEPREDICATE SORT(#any DESC)")
        for q in [condition, sorted] { _ = try Query.parse(q.text) }
    }

    @Test func aColumnWhoseNameIsNotAnIdentifierIsSortedAndQueried() throws {
        // Realm files written by other SDKs may name a property `first name`: the column sort quotes it.
        let h = try Harness(size: Size(width: 80, height: 12), fill: { tx in
            try tx.createClasses([ClassSchema(name: "Item", properties: [
                PropertySchema(name: "first name", type: .string),
            ])])
            for name in ["Mia", "Ada", "Zoë", "Bo"] { _ = try tx.createObject("Item", ["first name": .string(name)]) }
        })
        func names() throws -> [String] {
            guard case .table(let t)? = h.state.stack.last else { return [] }
            return try (0..<h.app.data.rowCount(t.source)).map { row in
                let k = try #require(try h.app.data.key(row: row, in: t.source))
                guard case .string(let v) = try h.app.data.value(ObjectRef(className: "Item", key: k), "first name") else { return "" }
                return v
            }
        }
        h.type("l[")
        #expect(h.state.message?.isError != true, "\(h.state.message?.text ?? "")")
        #expect(try names() == ["Ada", "Bo", "Mia", "Zoë"])
        #expect(try #require(TableQuery(query: "", sort: ColumnSort(property: "first name", ascending: true))).text
                == "TRUEPREDICATE SORT(#\"first name\" ASC)")
        h.type("/#'first name' BEGINSWITH 'M'\r")
        #expect(try names() == ["Mia"])
    }

    @Test func anErrorWiderThanTheScreenWrapsAboveTheQuery() throws {
        // The hint at the end of the message is the part that says how to mend the text: it must be on screen.
        let h = try Harness(size: Size(width: 60, height: 14))
        h.type("/first name == 'Ada'\r")
        let e = try #require(h.state.prompt?.error)
        #expect(e.message.hasSuffix("#\"first name\""))
        let lines = h.screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let query = try #require(lines.lastIndex { $0.hasPrefix("/ first name") })
        // The message's lines, then the caret's line, then the query.
        let shown = lines[(query - 3)..<(query - 1)].map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(shown == e.message, "\(lines[(query - 4)...query])")
        #expect(lines[query - 1].contains("^~~~"))
        #expect(!lines[query - 4].contains("expected"))
    }

    @Test func sortingByAColumnSortsEveryObjectInTheEngine() throws {
        // More objects than the screen shows: the sort must order all of them, not the visible rows.
        let n = 500
        let h = try Harness(size: Size(width: 80, height: 12), fill: { tx in
            try tx.createClasses([ClassSchema(name: "Item", properties: [
                PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                PropertySchema(name: "score", type: .int),
                .list("parts", of: "Item"),
            ])])
            var rng = SplitMix64(seed: 7)
            for i in 0..<n {
                _ = try tx.createObject("Item", ["id": .int(Int64(i)), "score": .int(Int64(rng.next() % 10_000))])
            }
        })
        func scores() throws -> [Int64] {
            guard case .table(let t)? = h.state.stack.last else { return [] }
            return try (0..<h.app.data.rowCount(t.source)).map { row in
                let k = try #require(try h.app.data.key(row: row, in: t.source))
                guard case .int(let v) = try h.app.data.value(ObjectRef(className: "Item", key: k), "score") else { return -1 }
                return v
            }
        }
        let unsorted = try scores()
        h.type("l[")
        #expect(try scores() == unsorted.sorted())
        #expect(h.screen.contains("score Int ▲"))
        h.type("]")
        #expect(try scores() == unsorted.sorted(by: >))
        #expect(h.screen.contains("score Int ▼"))
        // The same key again: back to key order.
        h.type("]")
        #expect(try scores() == unsorted)
        #expect(h.state.message?.text.contains("Sort removed") == true)
        // A list column cannot be sorted: the message says how to sort by its size instead.
        h.type("l[")
        #expect(h.state.message?.text.contains("@count") == true)
        #expect(try scores() == unsorted)
    }

    @Test func aSortComposesWithTheQuery() throws {
        let h = try Harness()
        h.type("/age >= 0\r")
        h.type("l[")   // name
        #expect(try names(h) == ["Ann", "Zoë 👩‍👩‍👧"])
        h.type("]")
        #expect(try names(h) == ["Zoë 👩‍👩‍👧", "Ann"])
        expectScreen(h.screen, "query-and-sort")
    }

    @Test func listsAndBacklinksCanBeQueried() throws {
        let h = try Harness()
        // Ann's dogs: Rex (3) and Fido (11).
        guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
        let columns = h.app.data.columns(t.source)
        let dogsColumn = try #require(columns.firstIndex { $0.name == "dogs" })
        h.type(String(repeating: "l", count: dogsColumn) + "\r")
        h.type("/age > 5\r")
        guard case .table(let lt)? = h.state.stack.last else { Issue.record("no table"); return }
        let keys = try (0..<h.app.data.rowCount(lt.source)).compactMap { try h.app.data.key(row: $0, in: lt.source) }
        let dogNames = try keys.map { k -> String in
            guard case .string(let s) = try h.app.data.value(ObjectRef(className: "Dog", key: k), "name") else { return "" }
            return s
        }
        #expect(dogNames == ["Fido"])
        #expect(lt.source.crumb.contains("age > 5"))
    }

    @Test func aQueryIsEvaluatedAgainWhenAnotherProcessCommits() throws {
        let h = try Harness()
        h.type("/age > 10\r")
        #expect(try names(h) == ["Ann"])
        // Another handle (as another process would) adds a match.
        let other = try Database.open(path: h.dir.file("test.realm"))
        try other.write { tx in
            _ = try tx.createObject("Person", ["id": .int(40), "name": .string("Olga"), "age": .int(70), "height": .double(1.7),
                                               "active": .bool(true), "born": .date(Timestamp(seconds: 0))])
        }
        #expect(h.app.checkForChanges())
        #expect(try names(h) == ["Ann", "Olga"])
    }

    @Test func theLineEditorMovesByCharactersAndMeasuresCells() {
        var e = LineEditor("ab日本")
        #expect(e.cursorCell == 6)
        _ = e.handle(.left)
        #expect(e.cursorCell == 4)
        _ = e.handle(.backspace)
        #expect(e.text == "ab本")
        _ = e.handle(.home)
        _ = e.handle(.char("😀"))
        #expect(e.text == "😀ab本")
        #expect(e.cursorCell == 2)
        _ = e.handle(.end)
        _ = e.handle(.char(" "))
        _ = e.handle(.char("x"))
        _ = e.handle(.ctrl("w"))
        #expect(e.text == "😀ab本 ")
        _ = e.handle(.ctrl("a"))
        _ = e.handle(.ctrl("k"))
        #expect(e.text.isEmpty)
        // A long text scrolls so the cursor stays in view.
        let long = LineEditor(String(repeating: "日", count: 30))
        let v = long.visible(width: 11)
        #expect(v.cursorX == 10)
        #expect(Canvas.width(of: v.text) == 10)
    }

    @Test func thePaletteRunsCommandsAndShowsReports() throws {
        let h = try Harness(size: Size(width: 100, height: 24))
        h.type(":sch\t")
        #expect(h.state.prompt?.editor.text == "schema ")
        h.type("\r")
        let pager = try #require(h.state.pager)
        #expect(pager.lines.contains { $0.contains("Person") })
        h.type("q")
        #expect(h.state.pager == nil)
        h.type(":verify\r")
        #expect(h.state.pager?.title == "Verify: no problems")
        h.type("x")
        h.type(":go-bottom\r")
        guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
        #expect(t.row == 3)
        h.type(":frobnicate\r")
        #expect(h.state.message?.isError == true)
        #expect(h.state.message?.text.contains("Unknown command 'frobnicate'") == true)
        h.type(":demo\r")
        #expect(h.state.message?.text.contains("demo needs a file") == true)
        h.type(":demo \(h.dir.file("d.realm")) lots\r")
        #expect(h.state.message?.text.contains("'lots' is not a number") == true)
    }

    @Test func exportWritesTheQueryResult() throws {
        let h = try Harness()
        h.type("/age > 5\r")
        let json = h.dir.file("out.json"), csv = h.dir.file("out.csv")
        h.type(":export \(json)\r")
        #expect(h.state.message?.text == "Exported 2 objects to \(json)")
        let text = try String(contentsOfFile: json, encoding: .utf8)
        #expect(text.contains("\"Ann\""))
        #expect(!text.contains("김민준"))
        h.type(":export \(csv)\r")
        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(whereSeparator: \.isNewline)
        #expect(lines.count == 3)   // header + 2
        h.type(":export \(h.dir.file("out.txt"))\r")
        #expect(h.state.message?.isError == true)
    }

    @Test func compactAndDemoRunAsTasks() throws {
        let h = try Harness()
        h.type(":compact\r")
        #expect(h.state.message?.text.hasPrefix("Compacted: ") == true, "\(String(describing: h.state.message))")
        #expect(try h.app.data.database.verify().isOK)
        #expect(try names(h).count == 4)
        let demo = h.dir.file("demo.realm")
        h.type(":demo \(demo) 300\r")
        #expect(h.state.confirmation != nil)
        #expect(FileManager.default.fileExists(atPath: demo))
        h.type("y")
        #expect(h.app.data.path == demo)
        #expect(h.state.classes.map(\.name).contains("Company"))
        // A file that exists is never overwritten.
        h.type(":demo \(demo)\r")
        #expect(h.state.message?.text.contains("already exists") == true)
    }
}
