// realm-bench: the same workloads against the engine and against SQLite in one
// run, with equal durability, printing median times and SQLite/engine ratios.
// See docs/PERFORMANCE.md.

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Options

struct Options {
    var objects = 1_000_000
    var quick = false
    var only: Set<String>?
    /// With `--core-file`: the queries only (no browser, memory or `convert`/`import` rows).
    var coreQueriesOnly = false
    var repeats = 5
    var directory: String?
    var changes = false
    var encryption = false
    var browser = false
    var browserFile: String?
    var space = false
    var coreFile: String?
    var coreKeyFile: String?

    var singleCommits: Int { quick ? 1_000 : 10_000 }

    static let usage = """
        usage: realm-bench [options]

        Runs the same workloads against the engine and against SQLite (WAL,
        synchronous=FULL) and prints the median time of each, and the ratio
        sqlite/engine (> 1 means the engine is faster).

        options:
          --objects N        objects inserted by `insert` (default 1000000)
          --quick            1,000 single commits instead of 10,000
          --only NAME[,NAME] run only these workloads (`insert` always runs,
                             the others need its data); names:
                             \(Options.wrappedNames(indent: 21))
          --repeat K         runs of each read workload, median reported (default 5)
          --dir PATH         directory for the database files (default
                             ./.build/bench-tmp, else $TMPDIR); a fresh
                             subdirectory is made and removed afterwards
          --encryption       instead of SQLite: the same workloads on an encrypted
                             engine file against a plain one (the cost of AES)
          --changes          instead: time Snapshot.changes(in:since:) on a table of
                             --objects objects (engine only)
          --browser          instead: time the terminal browser on one class of
                             --objects objects (first screen, paging)
          --file PATH        with --browser: an existing database instead (a demo
                             from `realm-browser demo` adds big values)
          --core-file PATH   instead: a Realm Core file read in place against its
                             conversion (browser, queries, memory, convert)
          --key-file PATH    with --core-file: its key, 128 hex digits
          --queries-only     with --core-file: only the queries
          --space            after the insert, where the engine file's space goes
                             (as `realm-browser info --detail` prints it)
          --help             this text
        """

    /// The workload names, comma-separated, in lines of at most 76 columns after the first's `indent`.
    static func wrappedNames(indent: Int) -> String {
        var lines: [String] = [""]
        for (i, name) in Workloads.keys.enumerated() {
            let item = name + (i == Workloads.keys.count - 1 ? "" : ",")
            if !lines[lines.count - 1].isEmpty && indent + lines[lines.count - 1].count + 1 + item.count > 76 { lines.append("") }
            lines[lines.count - 1] += (lines[lines.count - 1].isEmpty ? "" : " ") + item
        }
        return lines.joined(separator: "\n" + String(repeating: " ", count: indent))
    }

    struct ParseError: Error { var message: String }

    /// Parses the arguments after the program name; nil means `--help`.
    static func parse(_ arguments: [String]) throws(ParseError) -> Options? {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            // Accept both `--name value` and `--name=value`.
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(ParseError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = rest.popFirst() else { throw ParseError(message: "\(flag) needs a value") }
                return next
            }
            func positive() throws(ParseError) -> Int {
                let text = try value()
                guard let n = Int(text.replacingOccurrences(of: "_", with: "")), n > 0 else {
                    throw ParseError(message: "\(flag) needs a positive integer, got '\(text)'")
                }
                return n
            }
            func noValue() throws(ParseError) {
                if inlineValue != nil { throw ParseError(message: "\(flag) takes no value") }
            }
            switch flag {
            case "--help", "-h":
                try noValue()
                return nil
            case "--quick":
                try noValue()
                options.quick = true
            case "--encryption":
                options.encryption = true
            case "--changes":
                try noValue()
                options.changes = true
            case "--browser":
                try noValue()
                options.browser = true
            case "--file":
                options.browserFile = try value()
            case "--space":
                options.space = true
            case "--core-file":
                options.coreFile = try value()
            case "--key-file":
                options.coreKeyFile = try value()
            case "--objects":
                options.objects = try positive()
            case "--repeat":
                options.repeats = try positive()
            case "--dir":
                let dir = try value()
                guard !dir.isEmpty else { throw ParseError(message: "--dir needs a path") }
                options.directory = dir
            case "--queries-only":
                options.coreQueriesOnly = true
            case "--only":
                var names = Set<String>()
                for raw in try value().split(separator: ",") {
                    let name = Workloads.normalise(String(raw))
                    guard Workloads.keys.contains(name) else {
                        throw ParseError(message: "unknown workload '\(raw)'; known: \(Workloads.keys.joined(separator: ", "))")
                    }
                    names.insert(name)
                }
                guard !names.isEmpty else { throw ParseError(message: "--only needs at least one workload name") }
                options.only = names
            default:
                throw ParseError(message: "unknown argument '\(argument)'")
            }
        }
        return options
    }
}

// MARK: - Workloads

struct Workload {
    /// The name for `--only`.
    let key: String
    /// The name in the table.
    let title: String
    /// Timed runs; the median is reported. Writes run once.
    let repeats: Int
    /// The timed work; its result must be equal for both targets.
    let run: (any BenchTarget) throws -> Int
    /// An untimed query of the state a write left behind, also compared.
    let check: (label: String, query: (any BenchTarget) throws -> Int)?
    /// Pieces a write workload is cut into, run alternately on the two targets (their times summed), so that
    /// a machine that slows down for a while slows both sides; `runPiece` does piece `i` of `pieces`.
    var pieces = 1
    var runPiece: ((any BenchTarget, Int) throws -> Int)? = nil
}

enum Workloads {
    static let keys = [
        "insert", "single-commits", "count-range", "sum-range", "indexed-eq",
        "non-indexed-eq", "pk-lookup", "iterate-all", "insert-dogs", "q-count-range", "q-contains", "q-indexed-eq",
        "q-link", "q-sort", "insert-items", "q-any-tag", "q-dict-value", "delete-items", "update-all", "delete-all",
    ]

    /// The workloads that need the items of `insert-items` (which runs with any of them).
    static let itemWorkloads: Set<String> = ["q-any-tag", "q-dict-value", "delete-items"]

    /// "Count Range" and "count range" both name `count-range`.
    static func normalise(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: " ", with: "-")
    }

    static let ageRange = 20...40
    static let indexedLookups = 10_000
    static let primaryKeyLookups = 100_000
    static let everyAge = 0...Int.max

    /// The workloads in the order they run, with their inputs built up front.
    static func make(options: Options, seed: UInt64) -> [Workload] {
        let generator = PeopleGenerator(seed: seed)
        let n = options.objects
        let bulk = generator.people(0..<n)
        let singles = generator.people(n..<(n + options.singleCommits))
        let singlePieces = min(10, options.singleCommits)
        let singlesPiece = { (i: Int) in
            Array(singles[singles.count * i / singlePieces..<singles.count * (i + 1) / singlePieces])
        }

        var rng = SplitMix64(seed: seed ^ 0x0123_4567_89AB_CDEF)
        let names = (0..<indexedLookups).map { _ in "name-\(rng.next(below: PeopleGenerator.nameCount))" }
        let ids = (0..<primaryKeyLookups).map { _ in rng.next(below: n) }
        let reads = options.repeats
        // Dogs for the query through a link: one per four people, owners spread over the ids.
        let dogOwners = (0..<max(1, n / 4)).map { ($0 &* 7919) % n }
        let ownerNames = Array(names.prefix(1_000))
        // Items with a set, a dictionary and an embedded object: as many as the people, at most 100,000 (the
        // size the comparison is made at), generated only when they are inserted.
        let wantItems = options.only.map { !$0.isDisjoint(with: itemWorkloads.union(["insert-items"])) } ?? true
        let items = wantItems ? ItemGenerator(seed: seed ^ 0x17E3_5E75).items(0..<min(n, 100_000)) : []
        let queriedTags = (0..<10).map { "tag-\($0 * 5)" }
        let scoreThresholds = [100, 500, 900]
        let singlesTitle = options.singleCommits % 1_000 == 0
            ? "\(options.singleCommits / 1_000)k single commits" : "\(options.singleCommits) single commits"

        let all: [Workload] = [
            Workload(key: "insert", title: "insert \(n)", repeats: 1,
                     run: { try $0.insertAll(bulk) },
                     check: ("sum(age)", { try $0.sumAge(in: everyAge) })),
            Workload(key: "single-commits", title: singlesTitle, repeats: 1,
                     run: { try $0.insertOneByOne(singles) },
                     check: ("count", { try $0.countAge(in: everyAge) }),
                     pieces: singlePieces, runPiece: { try $0.insertOneByOne(singlesPiece($1)) }),
            Workload(key: "count-range", title: "count range", repeats: reads,
                     run: { try $0.countAge(in: ageRange) }, check: nil),
            Workload(key: "sum-range", title: "sum range", repeats: reads,
                     run: { try $0.sumAge(in: ageRange) }, check: nil),
            Workload(key: "indexed-eq", title: "indexed string eq", repeats: reads,
                     run: { try $0.lookupNames(names) }, check: nil),
            Workload(key: "non-indexed-eq", title: "non-indexed string eq", repeats: reads,
                     run: { try $0.countCity(Cities.zurich) }, check: nil),
            Workload(key: "pk-lookup", title: "primary key lookup", repeats: reads,
                     run: { try $0.lookupAges(ids: ids) }, check: nil),
            Workload(key: "iterate-all", title: "iterate all", repeats: reads,
                     run: { try $0.iterateAll() }, check: nil),
            Workload(key: "insert-dogs", title: "insert \(dogOwners.count) dogs", repeats: 1,
                     run: { try $0.insertDogs(owners: dogOwners) }, check: nil),
            Workload(key: "q-count-range", title: "query age BETWEEN", repeats: reads,
                     run: { try $0.queryAgeRange(ageRange) }, check: nil),
            Workload(key: "q-contains", title: "query CONTAINS[c]", repeats: reads,
                     run: { try $0.queryCityContains("ON") }, check: nil),
            Workload(key: "q-indexed-eq", title: "query indexed ==", repeats: reads,
                     run: { try $0.queryNames(names) }, check: nil),
            Workload(key: "q-link", title: "query owner.name ==", repeats: reads,
                     run: { try $0.queryDogsByOwnerName(ownerNames) }, check: nil),
            Workload(key: "q-sort", title: "query SORT(name)", repeats: reads,
                     run: { try $0.querySortByName() }, check: nil),
            Workload(key: "insert-items", title: "insert \(items.count) items", repeats: 1,
                     run: { try $0.insertItems(items) },
                     check: ("checksum", { try $0.itemChecksum() })),
            Workload(key: "q-any-tag", title: "query ANY tags ==", repeats: reads,
                     run: { try $0.queryAnyTag(queriedTags) }, check: nil),
            Workload(key: "q-dict-value", title: "query scores['k3'] >", repeats: reads,
                     run: { try $0.queryScores(key: "k3", above: scoreThresholds) }, check: nil),
            Workload(key: "delete-items", title: "delete items", repeats: 1,
                     run: { try $0.deleteItems() },
                     check: ("checksum", { try $0.itemChecksum() })),
            Workload(key: "update-all", title: "update all", repeats: 1,
                     run: { try $0.incrementAllAges() },
                     check: ("sum(age)", { try $0.sumAge(in: everyAge) })),
            Workload(key: "delete-all", title: "delete all", repeats: 1,
                     run: { try $0.deleteAll() },
                     check: ("count", { try $0.countAge(in: everyAge) })),
        ]
        return all.filter { w in
            // The link query needs the dogs.
            w.key == "insert" || options.only?.contains(w.key) ?? true
                || (w.key == "insert-dogs" && options.only?.contains("q-link") == true)
                || (w.key == "insert-items" && !(options.only?.isDisjoint(with: itemWorkloads) ?? true))
        }
    }
}

// MARK: - Measuring

enum Outcome {
    case measured(ms: Double, result: Int, check: Int?)
    case failed(String)
    case notRun

    var ms: Double? {
        if case .measured(let ms, _, _) = self { return ms }
        return nil
    }
}

struct TargetRun {
    var outcomes: [Outcome]
    var fileSize: Int?
    var unavailable: String?
}

enum Timing {
    static func milliseconds(_ d: Duration) -> Double {
        let (seconds, attoseconds) = d.components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}

/// Runs every workload against two targets side by side, each in a fresh directory: both are set up, then
/// each workload runs on one and then the other, the repeats of a read workload and the pieces of a cut-up
/// write alternating which goes first, so that the ratio of their times is taken over the same minutes of a
/// shared machine. Prints a progress line per workload and target. After a target's first failure the rest are
/// not run on it: its database state is no longer known. A target that cannot be set up is reported
/// unavailable and the other runs alone.
func runSideBySide(_ targets: [any BenchTarget], workloads: [Workload], directories: [String], space: Bool = false) -> [TargetRun] {
    var runs = targets.map { _ in TargetRun(outcomes: Array(repeating: .notRun, count: workloads.count)) }
    var live: [Int] = []
    for (t, target) in targets.enumerated() {
        do {
            try FileManager.default.createDirectory(atPath: directories[t], withIntermediateDirectories: true)
            try target.setUp(directory: directories[t])
            live.append(t)
            if let settings = target.settingsDescription() { Output.line("[\(target.name)] \(settings)") }
        } catch {
            runs[t].unavailable = "\(error)"
            Output.line("[\(target.name)] not available: \(error)")
        }
    }
    defer { for t in live { targets[t].tearDown() } }

    let clock = ContinuousClock()
    for (index, workload) in workloads.enumerated() {
        let rounds = workload.runPiece != nil ? workload.pieces : workload.repeats
        var times = targets.map { _ in [Double]() }
        var values = targets.map { _ in [Int]() }
        var cpu = targets.map { _ in CPUTime(user: 0, system: 0) }
        var failed = Set<Int>()
        for round in 0..<rounds {
            // Who goes first alternates between rounds, and between workloads of one round.
            let order = (round + index) % 2 == 0 ? live : live.reversed()
            for t in order where !failed.contains(t) {
                do {
                    let before = CPUTime.now()
                    let start = clock.now
                    let v = try workload.runPiece.map { try $0(targets[t], round) } ?? workload.run(targets[t])
                    times[t].append(Timing.milliseconds(clock.now - start))
                    cpu[t] = cpu[t].plus(CPUTime.now().minus(before))
                    if workload.runPiece == nil, let first = values[t].first, first != v {
                        throw BenchFailure(description: "result changed between runs: \(first) then \(v)")
                    }
                    values[t].append(v)
                } catch {
                    failed.insert(t)
                    runs[t].outcomes[index] = .failed("\(error)")
                    Output.line("[\(targets[t].name)] \(workload.title): FAILED: \(error)")
                }
            }
        }
        for t in live where !failed.contains(t) {
            do {
                let value = workload.runPiece != nil ? values[t].reduce(0, +) : values[t].first ?? 0
                let ms = workload.runPiece != nil ? times[t].reduce(0, +) : Timing.median(times[t])
                let check = try workload.check.map { try $0.query(targets[t]) }
                runs[t].outcomes[index] = .measured(ms: ms, result: value, check: check)
                var line = "[\(targets[t].name)] \(workload.title.padded(24)) \(Format.ms(ms).leftPadded(10)) ms   result \(value)"
                if let check, let label = workload.check?.label { line += ", \(label) \(check)" }
                // CPU per run besides wall time: for single commits, what is work and what is waiting on the disk.
                let perRun = cpu[t].divided(by: workload.runPiece != nil ? 1 : rounds)
                line += String(format: "   (cpu per run: user %.1f ms, system %.1f ms)", perRun.user, perRun.system)
                Output.line(line)
                if workload.key == "insert" {
                    runs[t].fileSize = try targets[t].fileSize()
                    if space, let text = try targets[t].spaceReport() { Output.line(text) }
                }
            } catch {
                failed.insert(t)
                runs[t].outcomes[index] = .failed("\(error)")
                Output.line("[\(targets[t].name)] \(workload.title): FAILED: \(error)")
            }
        }
        if workload.runPiece != nil, live.count == 2, !live.contains(where: failed.contains) {
            let ratios = zip(times[live[1]], times[live[0]]).map { $0 / $1 }.sorted()
            Output.line(String(format: "[side by side] %@ in %d alternating pieces: %@/%@ per piece median %.2f (%.2f–%.2f)",
                               workload.title, rounds, targets[live[1]].name, targets[live[0]].name,
                               Timing.median(ratios), ratios.first ?? 0, ratios.last ?? 0))
        }
        live.removeAll(where: failed.contains)
    }
    return runs
}

/// This process's CPU time (`getrusage`), in milliseconds.
struct CPUTime {
    var user: Double
    var system: Double

    static func now() -> CPUTime {
        var r = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &r)
        func ms(_ t: timeval) -> Double { Double(t.tv_sec) * 1e3 + Double(t.tv_usec) / 1e3 }
        return CPUTime(user: ms(r.ru_utime), system: ms(r.ru_stime))
    }

    /// The time since `earlier`.
    func minus(_ earlier: CPUTime) -> CPUTime { CPUTime(user: user - earlier.user, system: system - earlier.system) }

    func plus(_ other: CPUTime) -> CPUTime { CPUTime(user: user + other.user, system: system + other.system) }

    func divided(by runs: Int) -> CPUTime { CPUTime(user: user / Double(max(runs, 1)), system: system / Double(max(runs, 1))) }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

// MARK: - Output

enum Output {
    /// Unbuffered, so progress shows while a long workload runs.
    static func line(_ text: String, toStandardError: Bool = false) {
        let bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(toStandardError ? 2 : 1, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            offset += written
        }
    }
}

enum Format {
    static func ms(_ value: Double) -> String {
        String(format: value < 1 ? "%.3f" : value < 10 ? "%.2f" : "%.1f", value)
    }

    static func bytes(_ value: Int) -> String {
        let mib = Double(value) / 1_048_576
        return String(format: "%.1f MiB (%d bytes)", mib, value)
    }
}

extension String {
    func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

/// The closing table. Returns false when a result differed between the
/// targets or SQLite failed.
func printTable(workloads: [Workload], engine: TargetRun, sqlite: TargetRun, names: (String, String) = ("engine", "sqlite")) -> Bool {
    var ok = true
    var mismatches = 0
    var ratios: [Double] = []
    var rows: [[String]] = [["workload", "\(names.0) ms", "\(names.1) ms", "\(names.1)/\(names.0)", "result"]]
    for (index, workload) in workloads.enumerated() {
        let e = engine.outcomes[index], s = sqlite.outcomes[index]
        var ratio = "n/a"
        if let em = e.ms, let sm = s.ms, em > 0 {
            ratios.append(sm / em)
            ratio = String(format: "%.2f", sm / em)
        }
        let note: String
        switch (e, s) {
        case let (.measured(_, er, ec), .measured(_, sr, sc)):
            if er == sr && ec == sc {
                note = describe(sr, sc, workload)
            } else {
                ok = false
                mismatches += 1
                note = "MISMATCH engine \(describe(er, ec, workload)) vs sqlite \(describe(sr, sc, workload))"
            }
        case let (_, .measured(_, sr, sc)):
            note = describe(sr, sc, workload)
        case (_, .failed):
            ok = false
            note = "sqlite FAILED"
        case (.measured, .notRun):
            note = "sqlite not run"
        case (_, .notRun):
            note = ""
        }
        if case .failed = e { ok = false }
        rows.append([workload.title, cell(e), cell(s), ratio, note])
    }

    let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
    for (r, row) in rows.enumerated() {
        let cells = row.enumerated().map { column, text in
            column == 0 || column == row.count - 1 ? text.padded(widths[column]) : text.leftPadded(widths[column])
        }
        var line = cells.joined(separator: " | ")
        while line.hasSuffix(" ") { line.removeLast() }
        Output.line(line)
        if r == 0 {
            Output.line(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        }
    }

    Output.line("")
    let size = { (run: TargetRun) in run.fileSize.map(Format.bytes) ?? "n/a" }
    Output.line("file size after insert: \(names.0) \(size(engine)), \(names.1) \(size(sqlite))")
    if ratios.isEmpty {
        Output.line("geometric mean of \(names.1)/\(names.0): n/a (\(names.0) not measured)")
    } else {
        let mean = exp(ratios.map { log($0) }.reduce(0, +) / Double(ratios.count))
        Output.line(String(format: "geometric mean of \(names.1)/\(names.0) over %d workloads: %.2f", ratios.count, mean)
            + (mean >= 1 ? " (\(names.0) faster)" : " (\(names.1) faster)"))
    }
    if mismatches > 0 {
        Output.line("MISMATCH in \(mismatches) workload(s): the targets disagree, so their times are not comparable")
    }
    return ok
}

private func cell(_ outcome: Outcome) -> String {
    switch outcome {
    case .measured(let ms, _, _): Format.ms(ms)
    case .failed: "error"
    case .notRun: "n/a"
    }
}

private func describe(_ result: Int, _ check: Int?, _ workload: Workload) -> String {
    guard let check, let label = workload.check?.label else { return "\(result)" }
    return "\(result); \(label) \(check)"
}

// MARK: - Directory

enum Scratch {
    /// --dir, else ./.build/bench-tmp when run from the package, else $TMPDIR.
    static func base(_ requested: String?) -> String {
        if let requested { return requested }
        let cwd = FileManager.default.currentDirectoryPath
        if FileManager.default.fileExists(atPath: cwd + "/.build") { return cwd + "/.build/bench-tmp" }
        if let tmp = ProcessInfo.processInfo.environment["TMPDIR"], !tmp.isEmpty { return tmp }
        return "/tmp"
    }

    /// The type of the file system holding `path` ("ext4", "tmpfs", ...),
    /// from the longest matching mount point in /proc/self/mounts.
    static func fileSystemType(_ path: String) -> String? {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (mountPoint: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            // Mount points escape spaces as \040.
            let mountPoint = fields[1].replacingOccurrences(of: "\\040", with: " ")
            let prefix = mountPoint.hasSuffix("/") ? mountPoint : mountPoint + "/"
            guard resolved == mountPoint || resolved.hasPrefix(prefix) else { continue }
            if mountPoint.count >= (best?.mountPoint.count ?? -1) { best = (mountPoint, String(fields[2])) }
        }
        return best?.type
    }
}

// MARK: - Main

@main
struct BenchMain {
    static func main() {
        let options: Options
        do throws(Options.ParseError) {
            guard let parsed = try Options.parse(Array(CommandLine.arguments.dropFirst())) else {
                Output.line(Options.usage)
                return
            }
            options = parsed
        } catch {
            Output.line("realm-bench: \(error.message)\nrun 'realm-bench --help' for usage", toStandardError: true)
            exit(2)
        }

        let base = Scratch.base(options.directory)
        let runDirectory = base + "/realm-bench-\(getpid())"
        let files = FileManager.default
        do {
            try? files.removeItem(atPath: runDirectory)
            try files.createDirectory(atPath: runDirectory, withIntermediateDirectories: true)
        } catch {
            Output.line("realm-bench: cannot create \(runDirectory): \(error)", toStandardError: true)
            exit(1)
        }
        defer { try? files.removeItem(atPath: runDirectory) }

        if let coreFile = options.coreFile {
            do {
                try CoreFileBench.run(options: options, path: coreFile, directory: runDirectory)
            } catch {
                Output.line("realm-bench: \(error)", toStandardError: true)
                try? files.removeItem(atPath: runDirectory)
                exit(1)
            }
            return
        }

        if options.browser {
            do {
                try BrowserBench.run(options: options, directory: runDirectory)
            } catch {
                Output.line("realm-bench: \(error)", toStandardError: true)
                try? files.removeItem(atPath: runDirectory)
                exit(1)
            }
            return
        }

        if options.changes {
            do {
                try ChangesBench.run(options: options, directory: runDirectory)
            } catch {
                Output.line("realm-bench: \(error)", toStandardError: true)
                try? files.removeItem(atPath: runDirectory)
                exit(1)
            }
            return
        }

        let clock = ContinuousClock()
        let start = clock.now
        let workloads = Workloads.make(options: options, seed: 0x5EED_0FBE_7C4A_1100)
        Output.line("realm-bench: \(options.objects) objects, \(options.singleCommits) single commits, "
            + "\(options.repeats) runs per read workload (median)")
        let fileSystem = Scratch.fileSystemType(runDirectory)
        Output.line("directory: \(runDirectory) (\(fileSystem ?? "file system unknown"), removed afterwards)")
        if let fileSystem, ["tmpfs", "ramfs"].contains(fileSystem) {
            Output.line("warning: the directory is on \(fileSystem), where fsync costs nothing; use --dir on a disk")
        }
        Output.line("data generated in \(Format.ms(Timing.milliseconds(clock.now - start))) ms")
        Output.line("")

        if options.encryption {
            // The same workloads on an encrypted and a plain file: the cost of encryption, side by side.
            let key = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let runs = runSideBySide([EngineTarget(encryptionKey: key, name: "encrypted"), EngineTarget(name: "plain")],
                                     workloads: workloads,
                                     directories: [runDirectory + "/encrypted", runDirectory + "/plain"])
            try? files.removeItem(atPath: runDirectory + "/encrypted")
            try? files.removeItem(atPath: runDirectory + "/plain")
            Output.line("")
            let ok = printTable(workloads: workloads, engine: runs[0], sqlite: runs[1], names: ("encrypted", "plain"))
            Output.line("(plain/encrypted of 0.83 means the encrypted file took 20 % longer)")
            if !ok { exit(1) }
            return
        }
        let runs = runSideBySide([EngineTarget(), SQLiteTarget()], workloads: workloads,
                                 directories: [runDirectory + "/engine", runDirectory + "/sqlite"], space: options.space)
        try? files.removeItem(atPath: runDirectory + "/engine")
        try? files.removeItem(atPath: runDirectory + "/sqlite")

        Output.line("")
        let ok = printTable(workloads: workloads, engine: runs[0], sqlite: runs[1])
        if !ok {
            Output.line("realm-bench: FAILED (mismatch or error above)", toStandardError: true)
            try? files.removeItem(atPath: runDirectory)
            exit(1)
        }
    }
}
