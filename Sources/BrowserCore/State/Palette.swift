import Foundation
import RealmQuery
import RealmStorage
import RealmTools

/// Work the reducer asks the app to do outside it, because it takes long enough to show progress or
/// replaces the database (the reducer itself never blocks on anything but reads).
public enum AppTask: Equatable, Sendable {
    /// `:demo PATH [N]`: generate a demo database, then offer to open it.
    case demo(path: String, objects: Int)
    /// `:compact`: compact the open file in place.
    case compact
    /// Open another database (after `:demo`, or `:open PATH`).
    case open(path: String)
    /// `:convert PATH`: write the Realm Core file shown as a file of this format, then open that, writable.
    case convert(path: String)
    /// Run a table's query or sort (`BrowserApp` runs it off the main loop).
    case query(QueryJob)
}

/// How far a long task has come.
public struct TaskProgress: Equatable, Sendable {
    public var label: String
    public var done: Int
    public var total: Int
}

/// A yes/no question shown in the status bar (`y` or Enter answers yes).
public struct Confirmation: Equatable, Sendable {
    public var question: String
    public var action: ConfirmedAction
    public init(_ question: String, task: AppTask) {
        self.question = question
        action = .task(task)
    }
    public init(_ question: String, action: ConfirmedAction) {
        self.question = question
        self.action = action
    }
}

/// The commands the palette knows besides the key map's: those that take arguments or show reports.
public enum PaletteCommand: String, CaseIterable, Sendable {
    case schema, info, verify, compact, export, demo, open, convert

    public var usage: String {
        switch self {
        case .schema: return "schema — the classes and properties, as text"
        case .info: return "info — file size, versions, classes and counts"
        case .verify: return "verify — check every structure of the file"
        case .compact: return "compact — rewrite the file without free space (no other process may have it open)"
        case .export: return "export PATH — the current table (with its query) as .json or .csv"
        case .demo: return "demo PATH [OBJECTS] — generate a demo database, then offer to open it"
        case .open: return "open PATH — browse another database file"
        case .convert: return "convert PATH — write the Realm Core file shown as a file of this format, and open it to edit"
        }
    }

    /// Every name the palette completes: these, then the key map's long names.
    public static var allNames: [String] { allCases.map(\.rawValue) + Command.allCases.map(\.rawValue) }

    /// Names starting with what was typed (the first word only).
    public static func completions(_ typed: String) -> [String] {
        let word = typed.trimmingCharacters(in: .whitespaces)
        if word.contains(" ") { return [] }
        return allNames.filter { $0.hasPrefix(word.lowercased()) }
    }
}

extension AppState {
    /// Runs a line typed in the palette.
    mutating func runPalette(_ line: String, data: BrowserData) {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let name = words.first?.lowercased() else { return }
        let args = Array(words.dropFirst())
        let rest = line.trimmingCharacters(in: .whitespaces).dropFirst(words[0].count).trimmingCharacters(in: .whitespaces)
        if let c = Command(rawValue: name) {
            run(c, data: data)
            return
        }
        guard let pc = PaletteCommand(rawValue: name) else {
            let close = PaletteCommand.allNames.filter { $0.hasPrefix(String(name.prefix(2))) }
            message = StatusMessage("Unknown command '\(name)'" + (close.isEmpty ? " — Tab completes, ? lists keys" : ": did you mean \(close.prefix(3).joined(separator: ", "))?"),
                                    isError: true)
            return
        }
        do {
            switch pc {
            case .schema:
                let counts = Dictionary(uniqueKeysWithValues: classes.map { ($0.name, $0.count) })
                pager = Pager(title: "Schema", lines: SchemaFormats.text(data.snapshot.schema, counts: counts).split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
            case .info:
                // A Realm Core file is described as it is on disk, not as the in-memory copy the browser shows.
                let text = try data.realmCore.map { data.isSnapshotOfOpenFile ? $0.infoText(snapshotOf: data.path) : $0.infoText }
                    ?? InfoReport(database: data.database).text
                pager = Pager(title: "Info", lines: text.split(separator: "\n").map(String.init))
            case .verify:
                if let core = data.realmCore {
                    // The file's structure, read in place; its conversion is `realm-browser verify`'s (it needs memory).
                    let text = try CoreFileVerification.run(core, convert: false)
                    pager = Pager(title: "Verify: no problems", lines: text.split(separator: "\n").map(String.init))
                    break
                }
                let report = try data.database.verify()
                pager = Pager(title: report.isOK ? "Verify: no problems" : "Verify: \(report.problems.count) problems",
                              lines: report.description.split(separator: "\n").map(String.init))
            case .compact:
                if data.isReadOnly { throw PaletteFailure("The file is open read-only: compacting needs it writable") }
                if data.isInTransaction { throw PaletteFailure("A write transaction is open: commit (Ctrl-S) or roll back (Ctrl-Z) first") }
                task = .compact
            case .export:
                guard !rest.isEmpty else { throw PaletteFailure("export needs a file: :export people.json (or .csv)") }
                guard case .table(let t)? = stack.last else { throw PaletteFailure("Exporting writes the current table: go back to one") }
                start(.export(try data.prepareExport(t.source, to: rest)), query: t.query, sort: t.sort, purpose: .export(path: rest))
            case .demo:
                guard let path = args.first else { throw PaletteFailure("demo needs a file: :demo /tmp/demo.realm [objects]") }
                var objects = 10_000
                if args.count > 1 {
                    guard let n = Int(args[1].replacingOccurrences(of: "_", with: "")), n > 0, n <= 10_000_000 else {
                        throw PaletteFailure("'\(args[1])' is not a number of objects (1 to 10,000,000)")
                    }
                    objects = n
                }
                if FileManager.default.fileExists(atPath: path) { throw PaletteFailure("\(path) already exists: choose a new file") }
                task = .demo(path: path, objects: objects)
            case .open:
                if data.isInTransaction { throw PaletteFailure("A write transaction is open: commit (Ctrl-S) or roll back (Ctrl-Z) first") }
                guard !rest.isEmpty else { throw PaletteFailure("open needs a file: :open other.realm") }
                guard FileManager.default.fileExists(atPath: rest) else { throw PaletteFailure("\(rest): no such file") }
                task = .open(path: rest)
            case .convert:
                guard data.realmCore != nil else { throw PaletteFailure("The file is already in this format: convert is for Realm Core files") }
                guard !rest.isEmpty else { throw PaletteFailure("convert needs a file: :convert copy.realm") }
                if FileManager.default.fileExists(atPath: rest) { throw PaletteFailure("\(rest) already exists: choose a new file") }
                task = .convert(path: rest)
            }
        } catch {
            message = StatusMessage("\(pc.rawValue): \(error)", isError: true)
        }
    }

    /// Keys while a question waits for its answer.
    mutating func handleConfirmationKey(_ key: Key, data: BrowserData) {
        guard let c = confirmation else { return }
        confirmation = nil
        switch key {
        case .char("y"), .char("Y"), .enter:
            switch c.action {
            case .task(let t): task = t
            case .write(let w): perform(w, data: data)
            case .quit: shouldQuit = true
            }
        default: message = StatusMessage("Cancelled")
        }
    }
}

/// An export of a table's objects to a JSON or CSV file (`:export`), runnable off the main loop.
public struct TableExport: Sendable, Equatable {
    public let className: String
    let keys: [ObjectKey]?
    public let path: String
    let csv: Bool

    /// Writes the file; the number of objects written. With `progress`, counts the objects and stops when it
    /// is cancelled, removing the unfinished file.
    public func run(in snapshot: any ObjectReader, progress: QueryProgress? = nil) throws -> Int {
        let keys = try self.keys ?? snapshot.keys(snapshot.table(className))
        if let progress { try progress.begin(.scanning, total: keys.count) }
        let export = try DataExport(snapshot: snapshot, classes: [className])
        let sink = try TextSink(path: path)
        let report: ((Int) throws -> Void)? = progress.map { p in { _ in try p.advance(by: 256) } }
        do {
            if csv {
                try export.writeCSV(className: className, keys: keys, to: sink, progress: report)
            } else {
                try export.writeJSONArray(className: className, keys: keys, to: sink, progress: report)
            }
        } catch let e as QueryError where e.isCancellation {
            unlink(path)
            throw e
        }
        sink.flush()
        return keys.count
    }
}

/// A palette command that cannot run as typed.
struct PaletteFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

extension BrowserData {
    /// Writes a table's objects (its query result when it has one) to `path`: JSON (an array, as
    /// `realm-browser query --format json`) or CSV by the extension. Returns the number of objects.
    public func export(_ source: TableSource, to path: String) throws -> Int {
        try prepareExport(source, to: path).run(in: snapshot)
    }

    /// What an export of a table writes, checked (the file's kind) and ready to run on any thread against a
    /// snapshot of this version: the class and the keys (nil: every object of the class, read by the export).
    public func prepareExport(_ source: TableSource, to path: String) throws -> TableExport {
        guard let cls = rowClass(source) else { throw PaletteFailure("a list of values has no objects to export") }
        let lower = path.lowercased()
        guard lower.hasSuffix(".json") || lower.hasSuffix(".csv") else {
            throw PaletteFailure("\(path): the file name must end in .json or .csv")
        }
        var keys: [ObjectKey]?
        switch source {
        case .objects(_, nil): keys = nil
        case .objects(_, let f?), .filtered(_, let f): keys = f.keys
        default:
            let count = try rowCount(source)
            var ks: [ObjectKey] = []
            ks.reserveCapacity(count)
            for r in 0..<count { if let k = try key(row: r, in: source) { ks.append(k) } }
            keys = ks
        }
        return TableExport(className: cls, keys: keys, path: path, csv: lower.hasSuffix(".csv"))
    }

    /// Compacts the file in place: the browser's own snapshot is closed for it and taken again afterwards.
    /// Returns the sizes before and after.
    public func compact() throws -> (before: Int, after: Int) {
        let before = BrowserData.size(of: database)
        try withSnapshotClosed { try database.compact() }
        return (before, fileBytes)
    }
}
