import ArgumentParser
import BrowserCore
import BrowserTerminal
import Foundation
import RealmStorage
import RealmTools
import RealmQuery

struct Browse: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "browse", abstract: "Open the terminal browser (the default).")

    @Argument(help: "The database file; without one, demo.realm here (generated when missing).")
    var path: String?

    @Flag(name: .customLong("read-only"), help: "Open the file read-only.")
    var readOnly = false

    @Option(help: ArgumentHelp("A theme: \(Theme.builtinNames.joined(separator: ", ")), a NAME.toml in ~/.config/realm-browser/themes, or a path to a .toml file (default: $REALM_BROWSER_THEME, else dark).", valueName: "name"))
    var theme: String?

    @Flag(name: .customLong("no-mouse"), help: "Leave the mouse to the terminal (selecting text); also REALM_BROWSER_NO_MOUSE=1.")
    var noMouse = false

    @OptionGroup var key: KeyOptions

    func run() throws {
        let keyBytes = try key.key()
        let env = ProcessInfo.processInfo.environment
        // The theme first: a mistake in it is reported before the screen is taken over.
        let themeName = theme ?? env["REALM_BROWSER_THEME"].flatMap { $0.isEmpty ? nil : $0 } ?? "dark"
        let home = env["XDG_CONFIG_HOME"].map { "\($0)/realm-browser/themes" }
            ?? env["HOME"].map { "\($0)/.config/realm-browser/themes" }
        let chosen: Theme
        do {
            chosen = try Theme.load(themeName, searchDirectories: home.map { [$0] } ?? [])
        } catch let e as ThemeError {
            throw CommandFailure(message: "theme: \(e)")
        }
        let file = path ?? "demo.realm"
        if path == nil && !FileManager.default.fileExists(atPath: file) {
            printError("realm-browser: generating the demo database \(file) …")
            let db = try Database.open(path: file, options: DatabaseOptions(encryptionKey: keyBytes))
            let bar = ProgressBar("demo")
            try DemoDatabase(progress: bar.update).generate(into: db)
            bar.finish()
        }
        let data = try openForBrowsing(file, readOnly: readOnly, key: keyBytes) {
            // An encrypted file and a person at the terminal: ask, without echoing what is typed.
            guard isatty(0) != 0 else { return nil }
            let typed = try readHiddenLine(prompt: "\(file) is encrypted. Key (128 hex digits, not shown): ")
            return try KeyOptions.parseHex(typed, source: "the key typed")
        }
        let terminal: NCursesTerminal
        do {
            terminal = try NCursesTerminal(theme: chosen, noColor: !(env["NO_COLOR"] ?? "").isEmpty,
                                           mouse: !noMouse && (env["REALM_BROWSER_NO_MOUSE"] ?? "").isEmpty)
        } catch let e as TerminalError {
            throw CommandFailure(message: e.description)
        }
        let app = BrowserApp(terminal: terminal, data: data, theme: chosen)
        app.run()
        terminal.close()
    }
}

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Generate the demo database.")

    @Argument(help: "The file to create.") var path: String
    @Option(help: "Objects in all (every class scales).") var objects = 10_000
    @Option(help: "Random seed; the same seed gives the same database.") var seed: UInt64 = 1
    @Flag(help: "Replace the file if it exists.") var force = false
    @OptionGroup var key: KeyOptions

    func validate() throws {
        guard objects > 0 else { throw ValidationError("--objects must be a positive number") }
    }

    func run() throws {
        let keyBytes = try key.key()
        if FileManager.default.fileExists(atPath: path) {
            guard force else { throw CommandFailure(message: "\(path) exists; give --force to replace it") }
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".lock")
            try? FileManager.default.removeItem(atPath: path + ".log")
        }
        let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: keyBytes))
        let bar = ProgressBar("demo")
        let demo = DemoDatabase(objects: objects, seed: seed, progress: bar.update)
        try demo.generate(into: db)
        bar.finish()
        printError("realm-browser: wrote \(demo.counts.values.reduce(0, +)) objects to \(path)")
    }
}

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "schema", abstract: "Print the schema.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, swift }

    @Argument(help: "The database file.") var path: String
    @Option(help: "text, json (the import --schema format) or swift (RealmDB model classes).") var format: Format = .text
    @Flag(name: .customLong("read-only"), help: "Open the file read-only (always the case for this subcommand).") var readOnly = false
    @OptionGroup var key: KeyOptions

    func run() throws {
        let keyBytes = try key.key()
        try readFile(path, key: keyBytes) { s in
            switch format {
            case .text:
                let counts = Dictionary(uniqueKeysWithValues: try s.schema.map { ($0.name, try s.count($0.name)) })
                print(SchemaFormats.text(s.schema, counts: counts), terminator: "")
            case .json: print(JSONWriter.write(SchemaFile(classes: s.schema).json()))
            case .swift: print(SchemaFormats.swift(s.schema), terminator: "")
            }
        }
    }
}

struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the objects of a class that match a predicate.",
        discussion: """
        The predicate is Realm's query language, e.g. "age > 30 AND name BEGINSWITH[c] 'a'", with SORT, \
        DISTINCT and LIMIT. --arg values fill $0, $1, ... and %@ in order (JSON literals when they parse as \
        JSON, tagged values such as {"$date": "2024-01-01T00:00:00Z"} or {"$oid": "…"} for other types, \
        strings otherwise).
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json, csv, count }

    @Argument(help: "The database file.") var path: String
    @Argument(help: "The class.") var className: String
    @Argument(help: "The predicate (TRUEPREDICATE for every object).") var predicate: String
    @Option(name: .customLong("arg"), help: "A value for $0, $1, ... (repeatable).") var args: [String] = []
    @Option(help: "Sort by a key path, KEYPATH or KEYPATH:desc (repeatable).") var sort: [String] = []
    @Option(help: "At most this many objects.") var limit: Int?
    @Option(help: "table, json, csv or count.") var format: Format = .table
    @Flag(name: .customLong("read-only"), help: "Open the file read-only (the default for queries).") var readOnly = false
    @OptionGroup var key: KeyOptions

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        for s in sort where s.isEmpty || s.hasPrefix(":") { throw ValidationError("--sort needs a key path, e.g. name or age:desc") }
    }

    /// The query text: the predicate, then SORT and LIMIT from the options (applied after the predicate's own).
    var queryText: String {
        var text = predicate
        if !sort.isEmpty {
            // Each name of the key path as a name, even a reserved word (`--sort any` sorts by a property `any`).
            let path = { (p: Substring) in p.split(separator: ".", omittingEmptySubsequences: false).map { RealmQuery.Query.escapedName(String($0)) }.joined(separator: ".") }
            let keys = sort.map { s -> String in
                if s.lowercased().hasSuffix(":desc") { return path(s.dropLast(5)) + " DESC" }
                if s.lowercased().hasSuffix(":asc") { return path(s.dropLast(4)) + " ASC" }
                return path(s[...]) + " ASC"
            }
            text += " SORT(\(keys.joined(separator: ", ")))"
        }
        if let limit { text += " LIMIT(\(limit))" }
        return text
    }

    func run() throws {
        let keyBytes = try key.key()
        try readFile(path, key: keyBytes) { s in
            guard s.classSchema(className) != nil else {
                throw CommandFailure(message: "no class named '\(className)' in \(path) (it has: \(s.schema.map(\.name).joined(separator: ", ")))")
            }
            let keys: [ObjectKey]
            do {
                keys = try RealmQuery.Query.evaluate(queryText, on: className, in: s, arguments: args.map(Query.argument))
            } catch let e as QueryError {
                throw CommandFailure(message: "invalid query: " + Query.diagnostic(e))
            }
            let export = try DataExport(snapshot: s, classes: [className])
            let sink = TextSink(fd: 1)
            switch format {
            case .count: print(keys.count)
            case .json: try export.writeJSONArray(className: className, keys: keys, to: sink)
            case .csv: try export.writeCSV(className: className, keys: keys, to: sink)
            case .table: try export.writeTable(className: className, keys: keys, to: sink)
            }
        }
    }

    /// The error with its column, the query and a caret under the offending part, measured in terminal cells
    /// (so it lines up under CJK and emoji text).
    static func diagnostic(_ e: QueryError) -> String {
        let line = e.query.map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : $0 }
        let bytes = Array(e.query.utf8)
        func cells(upTo offset: Int) -> Int {
            TextWidth.of(String(decoding: bytes[0..<min(max(offset, 0), bytes.count)], as: UTF8.self))
        }
        let start = cells(upTo: e.range.start), width = max(1, cells(upTo: e.range.end) - start)
        return "\(e.message) at column \(e.column)\n  \(String(line))\n  "
            + String(repeating: " ", count: start) + "^" + String(repeating: "~", count: width - 1)
    }

    /// `--arg` text as a value: a JSON literal when it parses as one (numbers, strings, true/false, null,
    /// arrays for IN, and the tagged values of the data files: `{"$date": "…"}`, `{"$oid": "…"}`,
    /// `{"$uuid": "…"}`, `{"$decimal": "…"}`, `{"$binary": "…"}`, `{"$float": …}`), the text itself otherwise.
    static func argument(_ text: String) -> QueryArgument {
        guard let j = try? JSONParser.parse(text) else { return .value(.string(text)) }
        func value(_ j: JSONValue) -> Value {
            switch j {
            case .null: return .null
            case .bool(let b): return .bool(b)
            case .number(let n): return Int64(n).map { .int($0) } ?? .double(Double(n) ?? .nan)
            case .string(let s): return .string(s)
            case .object:
                if case .success(let v) = ValueCodec.value(j, type: .mixed, optional: true) { return v }
                return .string(text)
            case .array: return .string(text)
            }
        }
        if case .array(let items) = j { return .list(items.map(value)) }
        return .value(value(j))
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import objects from a JSON data file or CSV files, in one transaction.",
        discussion: """
        JSON: one document {"Class": [ {...}, ... ]}. CSV (RFC 4180): a directory of files named after their \
        classes (Person.csv), as `export --format csv` writes them, or one file, of the class --class names (or \
        its file name says); each file's first line names the properties. CSV is chosen for a directory, a name \
        ending in .csv, or --format csv.
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, csv }

    @Argument(help: "The database file (created when missing).") var path: String
    @Argument(help: "The data: a JSON file, a CSV file or a directory of CSV files.") var data: String
    @Option(help: "A schema file (Realm JS convention) whose missing classes are created first.") var schema: String?
    @Option(help: "json or csv (default: csv for a directory or a .csv file, json otherwise).") var format: Format?
    @Option(name: .customLong("class"), help: "The class of a single CSV file's records (default: the file's name).") var className: String?
    @OptionGroup var key: KeyOptions

    func run() throws {
        let keyBytes = try key.key()
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: data, isDirectory: &isDirectory)
        let csv = format.map { $0 == .csv } ?? (isDirectory.boolValue || data.lowercased().hasSuffix(".csv"))
        if !csv && className != nil { throw ValidationError("--class is for CSV: a JSON document names its classes") }
        if !csv && exists && isDirectory.boolValue { throw ValidationError("\(data) is a directory: give --format csv for its CSV files, or a JSON file") }
        let dataBytes = csv ? nil : try readFile(data)
        let sources = csv ? try CSVImport.sources(at: data, className: className) : []
        let schemaFile = try schema.map { try SchemaFile.parse(try readFile($0), file: $0) }
        let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: keyBytes))
        let bar = ProgressBar("import")
        let report: DataImport.Report
        if let dataBytes {
            report = try DataImport(file: data, schema: schemaFile, progress: bar.update).run(dataBytes, into: db)
        } else {
            report = try CSVImport(sources: sources, schema: schemaFile, progress: bar.update).run(into: db)
        }
        bar.finish()
        var msg = "imported \(counted(report.total, "object"))"
        if !report.classesCreated.isEmpty { msg += "; created classes \(report.classesCreated.joined(separator: ", "))" }
        printError("realm-browser: \(msg)")
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Export objects as one JSON document or CSV files.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, csv }

    @Argument(help: "The database file.") var path: String
    @Option(name: .customLong("class"), help: "A class to export (repeatable); default: every class.") var classes: [String] = []
    @Option(help: "json (one document, which import reads back) or csv (one file per class).") var format: Format = .json
    @Option(help: "A file for json (default: stdout), a directory for csv (required).") var output: String?
    @Flag(name: .customLong("read-only"), help: "Open the file read-only (always the case for this subcommand).") var readOnly = false
    @OptionGroup var key: KeyOptions

    func run() throws {
        let keyBytes = try key.key()
        try readFile(path, key: keyBytes) { s in
            // Embedded objects are written inside their parents, so an export of everything leaves their classes out.
            let names = classes.isEmpty ? s.schema.filter { !$0.isEmbedded }.map(\.name) : classes
            for c in names where s.classSchema(c) == nil {
                throw CommandFailure(message: "no class named '\(c)' in \(path) (it has: \(s.schema.map(\.name).joined(separator: ", ")))")
            }
            let export = try DataExport(snapshot: s, classes: names)
            switch format {
            case .json:
                let sink = try output.map { try TextSink(path: $0) } ?? TextSink(fd: 1)
                let bar = ProgressBar("export", enabled: output != nil && isatty(2) != 0)
                try export.writeJSON(classes: names, to: sink, progress: bar.update)
                bar.finish()
            case .csv:
                guard let dir = output else { throw ValidationError("--format csv needs --output DIRECTORY") }
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                for c in names {
                    let sink = try TextSink(path: "\(dir)/\(c).csv")
                    try export.writeCSV(className: c, to: sink)
                }
            }
        }
    }
}

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Compact the file in place.")

    @Argument(help: "The database file.") var path: String
    @OptionGroup var key: KeyOptions

    func run() throws {
        let keyBytes = try key.key()
        let before = fileSize(path)
        let db = try openExisting(path, readOnly: false, key: keyBytes)
        try db.compact()
        let after = fileSize(path)
        print("\(path): \(InfoReport.bytes(before)) → \(InfoReport.bytes(after))")
    }
}

struct Upgrade: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Upgrade a file of an older format to the current one (opening it writable does the same).")

    @Argument(help: "The database file.") var path: String
    @OptionGroup var key: KeyOptions

    func run() throws {
        let keyBytes = try key.key()
        var from: UInt32
        do {
            from = try Database.open(path: path, options: DatabaseOptions(readOnly: true, encryptionKey: keyBytes)).fileFormat
        } catch let e as StorageError {
            guard case .olderFormat(_, let v, _) = e else { throw e }
            from = v
        }
        let db = try openExisting(path, readOnly: false, key: keyBytes)
        do {
            try db.upgradeFileFormat()
        } catch StorageError.inUseByAnotherProcess {
            // Upgrading a file of format 5 rewrites it whole, which needs it to itself.
            throw CommandFailure(message: "\(path): still file format \(try db.fileFormat): another process has the file open; "
                                 + "run this again once it is closed")
        }
        if from < Database.fileFormatVersion {
            print("\(path): upgraded from file format \(from) to \(Database.fileFormatVersion)")
        } else {
            print("\(path): nothing to upgrade (file format \(Database.fileFormatVersion))")
        }
    }
}

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print sizes, versions and classes.")

    @Argument(help: "The database file.") var path: String
    @Flag(name: .customLong("read-only"), help: "Open the file read-only (always the case for this subcommand).") var readOnly = false
    @Flag(help: "Also show where the file's space goes: pages of each structure, how full they are, and each column's bytes (walks every node).")
    var detail = false
    @OptionGroup var key: KeyOptions

    func run() throws {
        let db: Database
        switch try ReadableFile.open(path, key: try key.key()) {
        case .realmCore(let core):
            print(core.infoText, terminator: "")
            return
        case .own(let own): db = own
        }
        print(try InfoReport(database: db).text, terminator: "")
        if detail { print("\n" + (try SpaceReport(database: db).text), terminator: "") }
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check every structure of the file.")

    @Argument(help: "The database file.") var path: String
    @Flag(name: .customLong("read-only"), help: "Open the file read-only (always the case for this subcommand).") var readOnly = false
    @OptionGroup var key: KeyOptions

    func run() throws {
        let keyBytes = try key.key()
        let db: Database
        switch try ReadableFile.open(path, key: keyBytes) {
        case .realmCore(let core):
            print(try CoreFileVerification.run(core))
            return
        case .own(let own): db = own
        }
        let report = try db.verify()
        if report.isOK {
            print(report)
        } else {
            throw CommandFailure(message: "\(path): \(report.problems.first ?? "verification failed")" +
                                 (report.problems.count > 1 ? " (and \(report.problems.count - 1) more problems)" : ""))
        }
    }
}

func readFile(_ path: String) throws -> Data {
    guard let d = FileManager.default.contents(atPath: path) else {
        throw CommandFailure(message: "\(path): cannot read the file (missing or not readable)")
    }
    return d
}

func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}
