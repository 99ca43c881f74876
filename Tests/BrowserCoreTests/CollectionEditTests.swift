import Foundation
import Testing
import RealmStorage
@testable import BrowserCore
import TestSupport

/// Sets, dictionaries, embedded objects and mixed values: drilled into with Enter and edited, each change
/// checked in the file through a fresh snapshot.
@Suite struct CollectionEditTests {
    static let esc = "\u{1B}", clear = "\u{15}", null = "\u{0E}", commit = "\u{13}"

    /// `Item` 1 holds a bit of everything; `Item` 2 has no address and a list in its mixed value.
    static func fill(_ tx: WriteTransaction) throws {
        try tx.createClasses([
            ClassSchema(name: "Item", properties: [
                PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                PropertySchema(name: "nums", type: .int, isSet: true),
                .set("dogs", of: "Dog"),
                PropertySchema(name: "scores", type: .int, isOptional: true, isDictionary: true),
                PropertySchema(name: "anyMap", type: .mixed, isOptional: true, isDictionary: true),
                .dictionary("pets", of: "Dog"),
                .link("address", to: "Address"),
                PropertySchema(name: "any", type: .mixed, isOptional: true),
                .list("addresses", of: "Address"),
                .dictionary("places", of: "Address"),
                PropertySchema(name: "anyList", type: .mixed, isOptional: true, isList: true),
                PropertySchema(name: "anySet", type: .mixed, isOptional: true, isSet: true),
            ]),
            ClassSchema(name: "Dog", properties: [PropertySchema(name: "name", type: .string)]),
            ClassSchema(name: "Address", properties: [
                PropertySchema(name: "street", type: .string),
                PropertySchema(name: "city", type: .string),
            ], isEmbedded: true),
        ])
        let rex = try tx.createObject("Dog", ["name": .string("Rex")])
        let fido = try tx.createObject("Dog", ["name": .string("Fido")])
        let dogID = try #require(tx.classID(named: "Dog"))
        let t = try tx.table("Item")
        let one = try tx.createObject("Item", ["id": .int(1)])
        let two = try tx.createObject("Item", ["id": .int(2)])
        try tx.setAssign(one, tx.property(t, "nums"), [.int(1), .int(2), .int(3)])
        try tx.setAssign(one, tx.property(t, "dogs"), [.link(rex)])
        try tx.setDictionary(one, tx.property(t, "scores"), ValueDictionary([("math", .int(90)), ("art", .null)]))
        try tx.setDictionary(one, tx.property(t, "anyMap"), ValueDictionary([
            ("n", .int(1)),
            ("nested", .list([.int(1), .dictionary(ValueDictionary([("deep", .string("x"))]))])),
            ("dog", .typedLink(classID: dogID, key: rex)),
        ]))
        try tx.setDictionary(one, tx.property(t, "pets"), ValueDictionary([("first", .link(rex))]))
        try tx.createEmbeddedObject(in: one, tx.property(t, "address"), ["street": .string("1 Main St"), "city": .string("東京")])
        try tx.set(one, tx.property(t, "any"), .typedLink(classID: dogID, key: fido))
        try tx.set(two, tx.property(t, "any"), .list([.int(5), .string("s")]))
        try tx.setList(one, tx.property(t, "anyList"), [.int(1), .dictionary(ValueDictionary([("k", .string("v"))]))])
    }

    /// A property of an item as committed in the file (a fresh snapshot, not the browser's).
    private func stored(_ h: Harness, _ property: String, item: Int64 = 1) throws -> Value {
        try h.db.read { s in
            let t = try s.table("Item")
            let k = try #require(try s.object(t, primaryKey: .int(item)))
            let p = try s.property(t, property)
            let schema = try #require(s.classSchema("Item")?.property(named: property))
            if schema.isDictionary { return .dictionary(try s.dictionary(k, p)) }
            if schema.isSet || schema.isList { return .list(try s.list(k, p)) }
            return try s.value(k, p)
        }
    }

    private func dogKey(_ h: Harness, _ name: String) throws -> ObjectKey {
        try h.db.read { s in
            let t = try s.table("Dog")
            return try #require(try s.keys(t).first { try s.value($0, s.property(t, "name")) == .string(name) })
        }
    }

    /// Moves the table cursor to a column by name.
    private func column(_ h: Harness, _ name: String) throws {
        guard case .table(let t)? = h.state.stack.last else { Issue.record("no table"); return }
        let i = try #require(h.app.data.columns(t.source).firstIndex { $0.name == name })
        h.type("0" + String(repeating: "l", count: i))
    }

    private func source(_ h: Harness) -> TableSource? {
        if case .table(let t)? = h.state.stack.last { return t.source }
        return nil
    }

    @Test func aSetOpensAsOneColumnAndTakesAndLosesElements() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        try column(h, "nums")
        h.type("\r")
        guard case .list(_, "nums")? = source(h) else { Issue.record("no set table"); return }
        #expect(h.app.data.columns(try #require(source(h))).map(\.name) == ["value"])
        h.type("a4\r")
        #expect(try stored(h, "nums") == .list([.int(1), .int(2), .int(3), .int(4)]))
        // A duplicate is a message: nothing written, no error.
        h.type("a2\r")
        #expect(h.state.message?.text == "2 is already in nums: nothing was written")
        #expect(h.state.message?.isError == false)
        #expect(h.state.prompt == nil)
        #expect(try stored(h, "nums") == .list([.int(1), .int(2), .int(3), .int(4)]))
        // A wrong type is caught while typing.
        h.type("ax\r")
        #expect(h.state.prompt?.error?.message == "'x' is not an integer")
        h.type(Self.esc)
        // d removes the selected row's element, after a question.
        h.type("ggd")
        #expect(h.state.confirmation?.question == "Remove 1 from nums?")
        h.type("y")
        #expect(try stored(h, "nums") == .list([.int(2), .int(3), .int(4)]))
        // e replaces an element (removed and inserted in one write); onto another element it is a message.
        h.type("e")
        #expect(h.state.prompt?.editor.text == "2")
        h.type(Self.clear + "3\r")
        #expect(h.state.message?.text.contains("already in nums") == true)
        #expect(try stored(h, "nums") == .list([.int(2), .int(3), .int(4)]))
        h.type("e" + Self.clear + "9\r")
        #expect(try stored(h, "nums") == .list([.int(3), .int(4), .int(9)]))
        h.type("J")
        #expect(h.state.message?.text.contains("cannot be moved") == true)
    }

    @Test func aSetOfObjectsIsFilledFromThePicker() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        let rex = try dogKey(h, "Rex"), fido = try dogKey(h, "Fido")
        try column(h, "dogs")
        h.type("\r")
        // No index column: a set has no positions.
        #expect(h.app.data.columns(try #require(source(h))).map(\.name).first == "name")
        #expect(!h.app.data.columns(try #require(source(h))).map(\.name).contains("#"))
        h.type("a/name == 'Fido'\r\r")
        #expect(try stored(h, "dogs") == .list([.link(rex), .link(fido)]))
        h.type("a/name == 'Rex'\r\r")
        #expect(h.state.message?.text == "the object is already in dogs: nothing was written")
        h.type("ggdy")
        #expect(try stored(h, "dogs") == .list([.link(fido)]))
        #expect(try h.db.read { try $0.count("Dog") } == 2)   // removed from the set, not deleted
        // Enter on a row opens the object.
        h.type("\r")
        guard case .object(let o)? = h.state.stack.last else { Issue.record("no object view"); return }
        #expect(o.object == ObjectRef(className: "Dog", key: fido))
    }

    @Test func aDictionaryOpensAsKeysAndValuesAndIsEdited() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        try column(h, "scores")
        h.type("\r")
        guard case .entries(_, "scores", [])? = source(h) else { Issue.record("no dictionary table: \(String(describing: source(h)))"); return }
        #expect(h.app.data.columns(try #require(source(h))).map(\.name) == ["key", "value"])
        #expect(h.screen.contains("math"))
        #expect(h.screen.contains("90"))
        // Keys Realm refuses are messages under the prompt, and nothing is written.
        h.type("a$x\r")
        #expect(h.state.prompt?.error?.message == "'$x' is not a valid key: a key may not start with '$'")
        h.type(Self.clear + "a.b\r")
        #expect(h.state.prompt?.error?.message == "'a.b' is not a valid key: a key may not contain '.'")
        h.type(Self.clear + "\r")
        #expect(h.state.prompt?.error?.message == "'' is not a valid key: a key may not be empty")
        h.type(Self.clear + "math\r")
        #expect(h.state.prompt?.error?.message.contains("already a key") == true)
        // A new key, then its value, parsed by the dictionary's type.
        h.type(Self.clear + "music\r")
        #expect(h.state.prompt?.editor.text == "")
        h.type("loud\r")
        #expect(h.state.prompt?.error?.message == "'loud' is not an integer")
        h.type(Self.clear + "75\r")
        #expect(try stored(h, "scores") == .dictionary(ValueDictionary([("art", .null), ("math", .int(90)), ("music", .int(75))])))
        // e on a value edits it; on a key renames it (the value goes with it).
        h.type("ggj$e")
        #expect(h.state.prompt?.editor.text == "90")
        h.type(Self.clear + "91\r")
        h.type("0e" + Self.clear + "maths\r")
        #expect(try stored(h, "scores") == .dictionary(ValueDictionary([("art", .null), ("maths", .int(91)), ("music", .int(75))])))
        h.type("0e" + Self.clear + "art\r")
        #expect(h.state.prompt?.error?.message.contains("already a key") == true)
        h.type(Self.clear + "$art\r")
        #expect(h.state.prompt?.error?.message.contains("may not start with '$'") == true)
        h.type(Self.esc)
        // Ctrl-N on a value: null (the values are optional); d removes the key.
        h.type("$" + Self.null)
        h.type("ggdy")
        #expect(try stored(h, "scores") == .dictionary(ValueDictionary([("maths", .null), ("music", .int(75))])))
    }

    @Test func aDictionaryOfObjectsIsFilledFromThePicker() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        let rex = try dogKey(h, "Rex"), fido = try dogKey(h, "Fido")
        try column(h, "pets")
        h.type("\r")
        #expect(h.screen.contains("→ #\(rex.rawValue) Rex") || h.screen.contains("Rex"))
        h.type("asecond\r")
        #expect(h.state.picker != nil)
        h.type("/name == 'Fido'\r\r")
        #expect(try stored(h, "pets") == .dictionary(ValueDictionary([("first", .link(rex)), ("second", .link(fido))])))
        // Enter on a value follows the link.
        h.type("gg\r")
        guard case .object(let o)? = h.state.stack.last else { Issue.record("no object view"); return }
        #expect(o.object == ObjectRef(className: "Dog", key: rex))
    }

    @Test func editsWaitForTheExplicitTransaction() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        h.type("t")
        #expect(h.app.data.isInTransaction)
        try column(h, "nums")
        h.type("\ra7\r")
        h.type("a7\r")
        #expect(h.state.message?.text.contains("already in nums") == true)
        #expect(h.app.data.pendingEdits == 1)
        h.type(Self.esc)
        try column(h, "scores")
        h.type("\rafresh\r5\r")
        h.type("ggj0e" + Self.clear + "renamed\r")   // fresh → renamed
        #expect(h.app.data.pendingEdits == 3)
        // Nothing is in the file until Ctrl-S.
        #expect(try stored(h, "nums") == .list([.int(1), .int(2), .int(3)]))
        #expect(try stored(h, "scores") == .dictionary(ValueDictionary([("art", .null), ("math", .int(90))])))
        h.type(Self.commit)
        #expect(!h.app.data.isInTransaction)
        #expect(try stored(h, "nums") == .list([.int(1), .int(2), .int(3), .int(7)]))
        #expect(try stored(h, "scores") == .dictionary(ValueDictionary([("art", .null), ("math", .int(90)), ("renamed", .int(5))])))
    }

    @Test func embeddedObjectsAreOpenedCreatedReplacedAndEdited() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        func street(_ item: Int64) throws -> Value? {
            try h.db.read { s in
                let t = try s.table("Item")
                let k = try #require(try s.object(t, primaryKey: .int(item)))
                guard case .link(let a) = try s.value(k, s.property(t, "address")) else { return nil }
                return try s.value(a, s.property(s.table("Address"), "street"))
            }
        }
        try column(h, "address")
        h.type("\r")
        guard case .object(let o)? = h.state.stack.last else { Issue.record("no object view"); return }
        #expect(o.object.className == "Address")
        #expect(h.screen.contains("1 Main St"))
        // Its fields are edited in its object view; Esc goes back to the table.
        h.type("e" + Self.clear + "2 Side St\r")
        #expect(try street(1) == .string("2 Side St"))
        h.type(Self.esc)
        #expect(h.state.stack.count == 1)
        // Item 2 has none: Enter says so, e creates one and opens it.
        h.type("j\r")
        #expect(h.state.message?.text.contains("e creates") == true)
        h.type("e")
        guard case .object(let created)? = h.state.stack.last else { Issue.record("no new object view"); return }
        #expect(created.object.className == "Address")
        #expect(try street(2) == .string(""))
        h.type("e" + Self.clear + "3 New St\r")
        #expect(try street(2) == .string("3 New St"))
        h.type(Self.esc)
        #expect(try h.db.read { try $0.count("Address") } == 2)
        // e on an existing one replaces it after a question (the old one is deleted).
        h.type("e")
        #expect(h.state.confirmation?.question.contains("Replace address") == true)
        h.type("y")
        #expect(try street(2) == .string(""))
        #expect(try h.db.read { try $0.count("Address") } == 2)
        h.type(Self.esc)
        // Ctrl-N deletes it, after a question.
        h.type(Self.null)
        #expect(h.state.confirmation?.question.contains("Delete the embedded Address") == true)
        h.type("y")
        #expect(try street(2) == nil)
        #expect(try h.db.read { try $0.count("Address") } == 1)
        // In a list of embedded objects, a and A both create one in place.
        try column(h, "addresses")
        h.type("\ra")
        #expect(try h.db.read { try $0.count("Address") } == 2)
        #expect(try stored(h, "addresses", item: 2) != .list([]))
    }

    @Test func mixedValuesFollowLinksOpenNestedCollectionsAndTakeTypedInput() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        let fido = try dogKey(h, "Fido"), rex = try dogKey(h, "Rex")
        try column(h, "any")
        // A typed link is followed.
        h.type("\r")
        guard case .object(let o)? = h.state.stack.last else { Issue.record("no object view"); return }
        #expect(o.object == ObjectRef(className: "Dog", key: fido))
        h.type(Self.esc)
        // A nested list opens as a list; its elements take typed input.
        h.type("j\r")
        guard case .entries(_, "any", [])? = source(h) else { Issue.record("no nested list"); return }
        h.type("astring hello\r")
        #expect(try stored(h, "any", item: 2) == .list([.int(5), .string("s"), .string("hello")]))
        h.type("gge")
        #expect(h.state.prompt?.editor.text == "int 5")
        h.type(Self.clear + "double 2.5\r")
        #expect(try stored(h, "any", item: 2) == .list([.double(2.5), .string("s"), .string("hello")]))
        h.type("jdy")
        #expect(try stored(h, "any", item: 2) == .list([.double(2.5), .string("hello")]))
        h.type(Self.esc)
        // The type of a mixed value is chosen as it is typed; a link names its class and object.
        h.type("e")
        #expect(h.state.prompt?.editor.text == "")
        h.type("int 5\r")
        #expect(try stored(h, "any", item: 2) == .int(5))
        h.type("e")
        #expect(h.state.prompt?.editor.text == "int 5")
        h.type(Self.clear + "link Nope #1\r")
        #expect(h.state.prompt?.error?.message == "there is no class Nope")
        h.type(Self.clear + "link Dog #\(rex.rawValue)\r")
        let dogID = try #require(try h.db.read { $0.classID(named: "Dog") })
        #expect(try stored(h, "any", item: 2) == .typedLink(classID: dogID, key: rex))
        h.type("e" + Self.clear + "null\r")
        #expect(try stored(h, "any", item: 2) == .null)
        h.type("e" + Self.clear + "dictionary\r")
        #expect(try stored(h, "any", item: 2) == .dictionary(ValueDictionary()))
    }

    @Test func collectionsNestedInADictionaryAreDrilledAndEdited() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        try column(h, "anyMap")
        h.type("\r")   // dog, n, nested
        h.type("G\r")   // nested: [1, {deep: x}]
        guard case .entries(_, "anyMap", [.key("nested")])? = source(h) else { Issue.record("no nested list: \(String(describing: source(h)))"); return }
        h.type("j\r")   // {deep: x}
        guard case .entries(_, "anyMap", [.key("nested"), .index(1)])? = source(h) else { Issue.record("no nested dictionary"); return }
        #expect(h.screen.contains("Item › #1 › anyMap › [\"nested\"] › [1]"))
        h.type("$e")
        #expect(h.state.prompt?.editor.text == "string x")
        h.type(Self.clear + "int 3\r")
        h.type("awide\rbool true\r")
        guard case .dictionary(let d) = try stored(h, "anyMap"), case .list(let l)? = d["nested"] else { Issue.record("no nested list"); return }
        #expect(l == [.int(1), .dictionary(ValueDictionary([("deep", .int(3)), ("wide", .bool(true))]))])
        // A key inside a mixed value is checked as a dictionary property's is.
        h.type("a$no\r")
        #expect(h.state.prompt?.error?.message.contains("may not start with '$'") == true)
        h.type(Self.esc + Self.esc + Self.esc)
        // The typed link in the dictionary is followed.
        h.type("gg\r")
        guard case .object(let o)? = h.state.stack.last else { Issue.record("no object view"); return }
        #expect(o.object.className == "Dog")
    }

    @Test func aListOfMixedValuesOpensItsNestedDictionaries() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        try column(h, "anyList")
        h.type("\rj\r")
        guard case .entries(_, "anyList", [.index(1)])? = source(h) else { Issue.record("no nested dictionary: \(String(describing: source(h)))"); return }
        h.type("$e")
        #expect(h.state.prompt?.editor.text == "string v")
        h.type(Self.clear + "int 9\r")
        #expect(try stored(h, "anyList") == .list([.int(1), .dictionary(ValueDictionary([("k", .int(9))]))]))
        h.type("dy")
        #expect(try stored(h, "anyList") == .list([.int(1), .dictionary(ValueDictionary())]))
    }

    @Test func theEnginesRefusalIsShownUnderThePrompt() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        try column(h, "anySet")
        h.type("\r")
        // A set cannot hold a nested collection: the parser accepts `list` for a mixed value, the engine refuses.
        h.type("alist\r")
        #expect(h.state.prompt?.error?.message.contains("a set cannot hold a nested list or dictionary") == true)
        #expect(try stored(h, "anySet") == .list([]))
        h.type(Self.clear + "int 3\r")
        #expect(try stored(h, "anySet") == .list([.int(3)]))
        h.type("aint 3\r")
        #expect(h.state.message?.text == "3 is already in anySet: nothing was written")
    }

    @Test func refusalsAreMessagesAndTheBrowserGoesOn() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        try column(h, "anyMap")
        h.type("\rG\rj\r$")   // anyMap["nested"][1]
        h.type("e" + Self.clear + "int 4")
        // Another writer replaces the nested list before Enter.
        try h.db.write { tx in
            let t = try tx.table("Item")
            let k = try #require(try tx.object(t, primaryKey: .int(1)))
            try tx.dictionarySet(k, tx.property(t, "anyMap"), key: "nested", .string("gone"))
        }
        h.type("\r")
        #expect(h.state.message?.isError == true || h.state.prompt?.error != nil)
        let text = h.state.prompt?.error?.message ?? h.state.message?.text ?? ""
        #expect(text.contains("no longer there") || text.contains("no longer a list or dictionary"))
        guard case .dictionary(let d) = try stored(h, "anyMap") else { Issue.record("no dictionary"); return }
        #expect(d["nested"] == .string("gone"))
        // Once the browser reads the new version, the tables of what is gone close, saying why.
        h.type(Self.esc)
        h.app.checkForChanges()
        guard case .entries(_, "anyMap", [])? = source(h) else { Issue.record("not back at anyMap: \(String(describing: source(h)))"); return }
        #expect(h.state.message?.text.contains("cannot be shown any more") == true)
        #expect(h.state.message?.isError == true)
    }

    @Test func aDictionaryOfEmbeddedObjectsCreatesThemInPlace() throws {
        let h = try Harness(size: Size(width: 120, height: 20), fill: Self.fill)
        func addresses() throws -> Int { try h.db.read { try $0.count("Address") } }
        #expect(try addresses() == 1)
        try column(h, "places")
        h.type("\rahome\r")
        // The new key's embedded object is created and opened.
        guard case .object(let o)? = h.state.stack.last else { Issue.record("no object view"); return }
        #expect(o.object.className == "Address")
        #expect(try addresses() == 2)
        h.type("e" + Self.clear + "9 Home Rd\r" + Self.esc)
        guard case .dictionary(let d) = try stored(h, "places"), case .link(let home)? = d["home"] else { Issue.record("no home"); return }
        #expect(try h.db.read { try $0.value(home, $0.property($0.table("Address"), "street")) } == .string("9 Home Rd"))
        // Its key keeps its name (the engine links an embedded object only where it was created).
        h.type("0e")
        #expect(h.state.prompt == nil)
        #expect(h.state.message?.text.contains("stays under the key") == true)
        // e on the value replaces it after a question; d removes the key and deletes the object.
        h.type("$e")
        #expect(h.state.confirmation?.question.contains("Replace places[\"home\"]") == true)
        h.type("y" + Self.esc)
        guard case .dictionary(let d2) = try stored(h, "places"), case .link(let replaced)? = d2["home"] else { Issue.record("no home"); return }
        #expect(replaced != home)
        #expect(try addresses() == 2)
        h.type("dy")
        #expect(try stored(h, "places") == .dictionary(ValueDictionary()))
        #expect(try addresses() == 1)
    }

    @Test func aReadOnlyFileRefusesCollectionEdits() throws {
        let dir = TempDir()
        let path = dir.file("ro.realm")
        try Database.open(path: path).write { try Self.fill($0) }
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        let terminal = VirtualTerminal(size: Size(width: 120, height: 20))
        let app = BrowserApp(terminal: terminal, data: try BrowserData(database: db))
        // nums is the second column; Enter opens it, a and d are refused with a message.
        terminal.type("l\ra")
        app.processPendingInput()
        #expect(app.state.message?.text.contains("read-only") == true)
        terminal.type("d")
        app.processPendingInput()
        #expect(app.state.message?.text.contains("read-only") == true)
        terminal.type("\u{1B}$\u{0E}")   // Ctrl-N on the last column
        app.processPendingInput()
        #expect(app.state.message?.text.contains("read-only") == true)
    }

    @Test func screensOfSetsDictionariesAndNestedValues() throws {
        let h = try Harness(size: Size(width: 100, height: 36), fill: Self.fill)
        h.type("\r")
        expectScreen(h.screen, "collections-object")
        h.type(Self.esc)
        try column(h, "anyMap")
        h.type("\rG\r")
        expectScreen(h.screen, "collections-nested-list")
        h.type(Self.esc + Self.esc)
        try column(h, "scores")
        h.type("\r")
        expectScreen(h.screen, "collections-dictionary")
    }

    @Test func mixedTextNamesItsType() throws {
        #expect(try ValueParser.parse("int 5", as: .mixed).get() == .int(5))
        #expect(try ValueParser.parse("string  two spaces", as: .mixed).get() == .string(" two spaces"))
        #expect(try ValueParser.parse("string 5", as: .mixed).get() == .string("5"))
        #expect(try ValueParser.parse(" string 　x", as: .mixed).get() == .string("　x"))
        #expect(try ValueParser.parse("double 1.5", as: .mixed).get() == .double(1.5))
        #expect(try ValueParser.parse("bool true", as: .mixed).get() == .bool(true))
        #expect(try ValueParser.parse("null", as: .mixed).get() == .null)
        #expect(try ValueParser.parse("list", as: .mixed).get() == .list([]))
        #expect((try? ValueParser.parse("int x", as: .mixed).get()) == nil)
        for v: Value in [.int(-3), .string("a b"), .double(2.5), .bool(false), .null, .float(1.5),
                         .date(Timestamp(seconds: 86_400)), .objectId(ObjectId.generate()), .uuid(UUID())] {
            #expect(try ValueParser.parse(ValueParser.mixedEditText(v), as: .mixed).get() == v, "\(v)")
        }
    }
}
