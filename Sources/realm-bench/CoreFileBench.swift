// `realm-bench --core-file PATH`: a Realm Core file read in place against its conversion into our format —
// opening it with the first screen of its biggest class drawn, paging, queries and sorts over that class (the
// same query text on both, every answer compared), the memory the in-place reads hold, and `convert` against
// `import` of the same data from JSON. See docs/PERFORMANCE.md, "Realm Core files".

import BrowserCore
import Foundation
import RealmCoreFile
import RealmQuery
import RealmStorage
import RealmTools

enum CoreFileBench {
    static func run(options: Options, path: String, directory: String) throws {
        let clock = ContinuousClock()
        let key = try options.coreKeyFile.map { try CoreFileBench.key(fromFile: $0) }
        Output.line("Realm Core file: \(path)")

        func time(_ label: String, repeats: Int = options.repeats, _ body: () throws -> Void) rethrows -> Double {
            var samples: [Double] = []
            for _ in 0..<repeats {
                let start = clock.now
                try body()
                samples.append(Timing.milliseconds(clock.now - start))
            }
            return Timing.median(samples)
        }
        func row(_ label: String, _ core: Double, _ ours: Double?) {
            let tail = ours.map { "  \(Format.ms($0).leftPad(10)) ms  \(String(format: "%.2f", core / max($0, 0.001)).leftPad(6))" } ?? ""
            Output.line("  \(label.padding(toLength: 56, withPad: " ", startingAt: 0)) \(Format.ms(core).leftPad(10)) ms\(tail)")
        }

        let core = try RealmCoreFile(path: path, key: key)
        let reader = try CoreFileReader(file: core)
        // Counts are read when the file is opened: nothing left to fail here.
        let biggest = reader.schema.filter { !$0.isEmbedded }.max { ((try? reader.count($0.name)) ?? 0) < ((try? reader.count($1.name)) ?? 0) }
        guard let biggest else { throw ToolError.invalidArgument("\(path) has no classes") }
        let objects = try reader.count(biggest.name)
        Output.line("  biggest class: \(biggest.name), \(ValueFormat.grouped(objects)) objects; file \(Format.bytes(core.fileSize))")

        // The browser: open, draw the class list and the biggest class's first screen; page down; jump to the end.
        // The file read in place first, so that the memory it holds is measured before anything else runs.
        let size = Size(width: 200, height: 50)
        let index = reader.schema.firstIndex { $0.name == biggest.name } ?? 0
        func openApp(_ data: () throws -> BrowserData) rethrows -> (BrowserApp, VirtualTerminal) {
            let terminal = VirtualTerminal(size: size)
            let app = BrowserApp(terminal: terminal, data: try data())
            app.quickJobMilliseconds = Int(Int32.max)
            app.draw()
            terminal.type("\t" + String(repeating: "j", count: index) + "\t")
            app.processPendingInput()
            return (app, terminal)
        }
        func browse(_ open: () throws -> BrowserData) throws -> [Double] {
            let first = try time("") { _ = try openApp(open) }
            let (app, terminal) = try openApp(open)
            let page = time("", repeats: 100) {
                terminal.type("\u{1B}[6~")
                app.processPendingInput()
            }
            let jump = time("", repeats: 10) {
                terminal.type("Ggg")
                app.processPendingInput()
            }
            return [first, page, jump]
        }
        let browsing = !options.coreQueriesOnly
        let inPlace = browsing ? try browse { try BrowserData(realmCore: try RealmCoreFile(path: path, key: key)) } : []
        if browsing { Output.line("  memory after the in-place browser's reads: \(MemoryUse.current())") }

        let converted = directory + "/converted.realm"
        let convertMs = try time("convert", repeats: 1) {
            let db = try Database.open(path: converted)
            try CoreConversion(file: core).run(into: db)
        }
        Output.line("  " + "".padding(toLength: 56, withPad: " ", startingAt: 0) + "   in place".leftPad(13) + "  converted".leftPad(15) + "  ratio")
        if browsing {
            let ours = try browse { try BrowserData(database: try Database.open(path: converted, options: DatabaseOptions(readOnly: true))) }
            row("open, first screen of \(biggest.name) drawn", inPlace[0], ours[0])
            row("page down, drawn", inPlace[1], ours[1])
            row("jump to the last row and back, drawn", inPlace[2], ours[2])
        }

        // Queries over the biggest class, generated from its first object's values.
        let db = try Database.open(path: converted, options: DatabaseOptions(readOnly: true))
        try db.read { s in
            for (q, arguments) in try queries(biggest, reader) {
                var a: [ObjectKey] = [], b: [ObjectKey] = []
                let inPlace = try time("") { a = try Query.evaluate(q, on: biggest.name, in: reader, arguments: arguments) }
                let ours = try time("") { b = try Query.evaluate(q, on: biggest.name, in: s, arguments: arguments) }
                guard a.count == b.count else {
                    throw ToolError.invalidArgument("`\(q)`: \(a.count) objects in place, \(b.count) in the conversion")
                }
                row("query `\(q)` (\(ValueFormat.grouped(a.count)))", inPlace, ours)
            }
        }
        Output.line("  memory after the queries: \(MemoryUse.current())")
        guard browsing else { return }

        // convert against import of the same data from JSON (written from the converted copy).
        let json = directory + "/export.json"
        try db.read { s in
            let names = s.schema.filter { !$0.isEmbedded }.map(\.name)
            try DataExport(snapshot: s, classes: names).writeJSON(classes: names, to: try TextSink(path: json))
        }
        let schema = try db.read { SchemaFile(classes: $0.schema) }
        let imported = directory + "/imported.realm"
        let importMs = try time("import", repeats: 1) {
            let target = try Database.open(path: imported)
            let data = try Data(contentsOf: URL(fileURLWithPath: json))
            _ = try DataImport(file: json, schema: schema).run(data, into: target)
        }
        row("convert (against import of its JSON export)", convertMs, importMs)
    }

    /// Queries over `cls` made from the values of its first object: each comparison the query bar would make on
    /// its column type, and the sorts.
    static func queries(_ cls: ClassSchema, _ reader: CoreFileReader) throws -> [(String, [QueryArgument])] {
        let t = try reader.table(cls.name)
        guard let first = try reader.key(at: 0, in: t) else { return [] }
        var out: [(String, [QueryArgument])] = []
        for p in cls.properties where !p.isList && !p.isSet && !p.isDictionary && !p.name.hasPrefix("!") {
            let v = try reader.value(first, try reader.property(t, p.name))
            switch (p.type, v) {
            case (.int, .int(let x)):
                out += [("\(p.name) == $0", [.value(v)]), ("\(p.name) > \(x)", []), ("\(p.name) BETWEEN {\(x), \(x + 10)}", [])]
            case (.string, .string(let x)):
                out += [("\(p.name) == $0", [.value(v)]), ("\(p.name) CONTAINS[c] $0", [.value(.string(String(x.prefix(2))))]),
                        ("TRUEPREDICATE SORT(\(p.name) ASC)", [])]
            case (.double, .double(let x)): out.append(("\(p.name) < \(x)", []))
            case (.bool, _): out.append(("\(p.name) == true", []))
            case (.link, _): out.append(("\(p.name) != nil", []))
            default: continue
            }
        }
        return out
    }

    /// A 64-byte key written as 128 hex digits in a file.
    static func key(fromFile path: String) throws -> [UInt8] {
        let hex = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
            guard let b = UInt8(hex[i..<j], radix: 16) else { throw ToolError.invalidArgument("\(path): not a hex key") }
            bytes.append(b)
            i = j
        }
        guard bytes.count == 64 else { throw ToolError.invalidArgument("\(path): a key of \(bytes.count) bytes, not 64") }
        return bytes
    }
}

/// The process's resident memory, from /proc/self/status: anonymous (what the process made) and file-backed (the
/// mapped files' pages, which the kernel may drop and read again).
struct MemoryUse: CustomStringConvertible {
    var anonymous = 0, file = 0

    static func current() -> MemoryUse {
        var m = MemoryUse()
        // (no /proc: zeros, printed as such)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return m }
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let kb = Int(parts[1]) else { continue }
            if parts[0] == "RssAnon:" { m.anonymous = kb * 1024 }
            if parts[0] == "RssFile:" { m.file = kb * 1024 }
        }
        return m
    }

    var description: String { "\(Format.bytes(anonymous)) anonymous, \(Format.bytes(file)) of mapped files" }
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}
