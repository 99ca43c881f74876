import Foundation
import Testing
import RealmStorage
@testable import BrowserCore
import TestSupport

/// A browser on a virtual terminal over a database in a temporary directory.
final class Harness {
    let dir: TempDir
    let db: Database
    let terminal: VirtualTerminal
    let app: BrowserApp

    init(_ name: String = #function, size: Size = Size(width: 100, height: 20), theme: Theme = .dark,
         options: DatabaseOptions = DatabaseOptions(), path: String? = nil,
         fill: (WriteTransaction) throws -> Void = Fixture.fill) throws {
        dir = TempDir(name)
        db = try Database.open(path: path ?? dir.file("test.realm"), options: options)
        try db.write { try fill($0) }
        terminal = VirtualTerminal(size: size)
        app = BrowserApp(terminal: terminal, data: try BrowserData(database: db), theme: theme)
        // Queries and sorts run off the main loop: here they are waited for, so every screen is the same on
        // a busy machine (BackgroundQueryTests hold them at a known point instead).
        app.quickJobMilliseconds = 60_000
        app.draw()
    }

    /// Types keys as terminal bytes (`"jj\r"`, `"\u{1B}"` for Esc) and lets the browser handle them.
    @discardableResult
    func type(_ keys: String) -> Harness {
        terminal.type(keys)
        app.processPendingInput()
        return self
    }

    func resize(_ width: Int, _ height: Int) {
        terminal.resize(to: Size(width: width, height: height))
        app.processPendingInput()
    }

    var screen: String { terminal.text }
    var state: AppState { app.state }
}

/// Compares a screen with `Snapshots/NAME.txt`; `REALM_RECORD_SNAPSHOTS=1` writes the file instead (as does
/// a missing file, which then fails the test once so that nothing is recorded unseen).
func expectScreen(_ screen: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
    let file = dir.appendingPathComponent("\(name).txt")
    // Each line ends in a bar so trailing spaces stay visible (and no editor strips them).
    let framed = screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0 + "|" }.joined(separator: "\n") + "\n"
    let record = ProcessInfo.processInfo.environment["REALM_RECORD_SNAPSHOTS"] == "1"
    guard !record, let old = try? String(contentsOf: file, encoding: .utf8) else {
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try? framed.write(to: file, atomically: true, encoding: .utf8)
        if !record { Issue.record("recorded a new snapshot \(name).txt: check it and run again", sourceLocation: sourceLocation) }
        return
    }
    if old != framed {
        let a = old.split(separator: "\n", omittingEmptySubsequences: false)
        let b = framed.split(separator: "\n", omittingEmptySubsequences: false)
        var diff = ""
        for i in 0..<max(a.count, b.count) where (i < a.count ? a[i] : "") != (i < b.count ? b[i] : "") {
            diff += "line \(i + 1)\n  expected: \(i < a.count ? a[i] : "")\n  actual:   \(i < b.count ? b[i] : "")\n"
        }
        Issue.record("screen differs from Snapshots/\(name).txt (REALM_RECORD_SNAPSHOTS=1 re-records):\n\(diff)",
                     sourceLocation: sourceLocation)
    }
}

/// A small database with every kind of value and relation, with names in several scripts.
enum Fixture {
    static let schema: [ClassSchema] = [
        ClassSchema(name: "Person", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "name", type: .string, isIndexed: true),
            PropertySchema(name: "nickname", type: .string, isOptional: true),
            PropertySchema(name: "age", type: .int, isOptional: true),
            PropertySchema(name: "height", type: .double),
            PropertySchema(name: "active", type: .bool),
            PropertySchema(name: "born", type: .date),
            PropertySchema(name: "photo", type: .data, isOptional: true),
            .list("dogs", of: "Dog"),
            PropertySchema(name: "tags", type: .string, isList: true),
            .link("best", to: "Dog"),
        ]),
        ClassSchema(name: "Dog", properties: [
            PropertySchema(name: "name", type: .string),
            PropertySchema(name: "age", type: .int),
            .link("owner", to: "Person"),
            .linkingObjects("owners", from: "Person", property: "dogs"),
        ]),
    ]

    static let longNote = String(repeating: "A long note 長い文字列🐶 ", count: 12) + "end"

    static func fill(_ tx: WriteTransaction) throws {
        try tx.createClasses(schema)
        func date(_ s: Int64) -> Value { .date(Timestamp(seconds: s)) }
        let ann = try tx.createObject("Person", ["id": .int(1), "name": .string("Ann"), "age": .int(34), "height": .double(1.68),
                                                 "active": .bool(true), "born": date(631_249_445), "photo": .data([0xDE, 0xAD, 0xBE, 0xEF])])
        let hanako = try tx.createObject("Person", ["id": .int(2), "name": .string("佐藤 花子"), "nickname": .string(""),
                                                    "height": .double(1.55), "active": .bool(false), "born": date(0)])
        let zoe = try tx.createObject("Person", ["id": .int(3), "name": .string("Zoë 👩‍👩‍👧"), "nickname": .string(longNote),
                                                 "age": .int(7), "height": .double(1.2), "active": .bool(true), "born": date(1_700_000_000)])
        let minjun = try tx.createObject("Person", ["id": .int(12), "name": .string("김민준"), "nickname": .string("MJ"),
                                                    "age": .int(-1), "height": .double(-0.5), "active": .bool(false), "born": date(-86_400)])
        let rex = try tx.createObject("Dog", ["name": .string("Rex"), "age": .int(3), "owner": .link(ann)])
        let fido = try tx.createObject("Dog", ["name": .string("Fido"), "age": .int(11), "owner": .link(ann)])
        let pochi = try tx.createObject("Dog", ["name": .string("ポチ"), "age": .int(5), "owner": .link(hanako)])
        _ = try tx.createObject("Dog", ["name": .string("Luna 🐶"), "age": .int(1)])
        let people = try tx.table("Person")
        try tx.setList(ann, tx.property(people, "dogs"), [.link(rex), .link(fido)])
        try tx.setList(ann, tx.property(people, "tags"), [.string("admin"), .string("日本")])
        try tx.setList(hanako, tx.property(people, "dogs"), [.link(pochi)])
        try tx.setList(minjun, tx.property(people, "dogs"), [.link(rex)])
        try tx.set(ann, tx.property(people, "best"), .link(rex))
        try tx.set(zoe, tx.property(people, "best"), .link(pochi))
    }
}
