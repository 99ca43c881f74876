import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage
@testable import realm_storage_worker

// Drives the worker's `mixed` workload under `strace`: once to list the file system calls it makes, then once per
// crash point or fault, with `strace -e inject=` killing it or failing that one call (CrashPointTests).

/// Where `strace` is, or an error saying how to get it: the crash-point tests never pass without running.
func straceExecutablePath() throws -> String {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let candidate = "\(dir)/strace"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    throw WorkerProcessError("strace is not installed (apt-get install strace; .ci/run installs it): the crash-point and "
        + "I/O-fault tests drive the worker under `strace -e inject=`")
}

/// The system calls that change files: a crash point is one of these (counted per name, as `strace` counts
/// invocations for `when=`).
let fileSyscalls = ["write", "writev", "pwrite64", "pwritev", "pwritev2", "fdatasync", "fsync", "sync_file_range",
                    "ftruncate", "fallocate", "msync", "rename", "renameat", "renameat2", "unlink", "unlinkat", "openat"]

/// The calls whose failure the I/O-fault test injects.
let faultSyscalls = ["write", "pwrite64", "pwritev", "fdatasync", "fsync", "ftruncate", "fallocate"]

/// One call the workload made on the database's files.
struct FileCall: CustomStringConvertible {
    /// The system call's name.
    var name: String
    /// Which call of that name it is in the process, from 1 (what `strace` counts for `when=`).
    var occurrence: Int
    /// The step of the workload in flight (-1: opening the database).
    var step: Int
    /// The traced line, shortened.
    var text: String
    /// The worker's report of a finished step on its standard output, not a call on the files.
    var isReport = false

    var description: String { "\(name) #\(occurrence) in step \(step) (\(stepKind(step))): \(text)" }
    var isSync: Bool { name == "fdatasync" || name == "fsync" || name == "sync_file_range" || name == "msync" }
    var isWrite: Bool { name.contains("write") }
}

func stepKind(_ step: Int) -> String {
    guard step >= 0 else { return "open" }
    guard step < Mixed.steps.count else { return "after the last step" }
    return switch Mixed.steps[step] {
    case .schema: "schema"
    case .small: "small commit"
    case .large: "large commit"
    case .delete: "delete"
    case .changeSchema: "schema change"
    case .checkpoint: "checkpoint"
    case .compact: "compaction"
    case .writeCopy: "writeCopy"
    }
}

/// What a worker run printed, parsed.
struct MixedOutput {
    var started = false
    var done = false
    /// Steps whose commit returned.
    var committed: Set<Int> = []
    /// Maintenance steps that returned.
    var maintained: Set<Int> = []
    /// Steps that threw: step → error.
    var failed: [Int: String] = [:]
    /// What the worker saw through its handle after a failed commit: step → "absent" / "visible" / "error ...".
    var afterFailure: [Int: String] = [:]
    var openFailures: [String] = []
    /// Steps refused because writes had stopped, run again on a new handle.
    var reopened: Set<Int> = []
    var unexpected: [String] = []

    /// The step after the last one that reported anything (the one in flight when killed).
    var inFlight: Int {
        let reported = committed.union(maintained).union(failed.keys)
        return (reported.max() ?? -1) + 1
    }

    init(_ lines: [String]) {
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            let n = parts.count > 1 ? Int(parts[1]) : nil
            switch (parts.first, n) {
            case ("start", _): started = true
            case ("done", _): done = true
            case ("committed", let n?): committed.insert(n)
            case ("checkpointed", let n?), ("compacted", let n?), ("copied", let n?): maintained.insert(n)
            case ("failed", let n?): failed[n] = parts.count > 2 ? parts[2] : ""
            case ("after-failure", let n?): afterFailure[n] = parts.count > 2 ? parts[2] : ""
            case ("open-failed", _): openFailures.append(String(line.dropFirst("open-failed ".count)))
            case ("reopen", let n?): reopened.insert(n)
            default: unexpected.append(line)
            }
        }
    }
}

/// How the workload runs.
enum Scenario: String, CaseIterable, CustomTestStringConvertible {
    /// Checkpoints every 64 KiB of log records (several during the small commits).
    case frequentCheckpoints
    /// The default checkpoint size (16 MiB): only the explicit checkpoint, and the large commits' own.
    case defaultCheckpoints
    /// Default checkpoints, starting beside the commit log another database at the same path left behind (its
    /// data file deleted); only the steps up to the first deletion.
    case besideStaleLog

    var testDescription: String { rawValue }

    var workerArguments: [String] {
        switch self {
        case .frequentCheckpoints: ["--checkpoint-bytes", "65536"]
        case .defaultCheckpoints: []
        case .besideStaleLog: ["--limit", "\(limit)"]
        }
    }

    /// The steps run: 0..<limit.
    var limit: Int { self == .besideStaleLog ? 26 : Mixed.steps.count }
}

/// A run of the workload in its own directory.
struct MixedRun {
    let dir: TempDir
    let scenario: Scenario
    var path: String { dir.file("db.realm") }

    /// A new directory; beside a stale log, that log is put there first.
    init(_ name: String, _ scenario: Scenario, staleLog: [UInt8]? = nil) throws {
        dir = TempDir(name)
        self.scenario = scenario
        if let staleLog { try Data(staleLog).write(to: URL(fileURLWithPath: path + ".log")) }
    }

    /// The commit log a database leaves when its process ends without closing it after 11 small commits (in
    /// namespace 1, so none of its markers can pass for the next database's).
    static func staleLog() throws -> [UInt8] {
        let source = TempDir("stale-source")
        let path = source.file("db.realm")
        let child = try WorkerProcess(["mixed", path, "--limit", "11", "--namespace", "1", "--exit-without-closing"],
                                      stderrPath: source.file("stderr"))
        let lines = child.remainingLines(timeout: 60)
        let status = try child.waitForExit(timeout: 60)
        guard WorkerProcess.exitedNormally(status), lines.last == "done" else {
            throw WorkerProcessError("making the stale log: \(WorkerProcess.describe(status)), \(lines.suffix(3))\(child.stderrTail())")
        }
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path + ".log")))
    }

    /// Runs the worker (under `strace` with `straceArguments` when given) to its end; returns its output and wait
    /// status. A run that outlives `timeout` is killed and reported as hung (status nil).
    func run(strace: String?, _ straceArguments: [String], extra: [String] = [], timeout: Double = 120)
        throws -> (output: [String], status: Int32?, stderr: String) {
        let workerArgs = ["mixed", path] + scenario.workerArguments + extra
        let child: WorkerProcess
        if let strace {
            child = try WorkerProcess(workerArgs, stderrPath: dir.file("stderr"), launcher: [strace] + straceArguments + ["--"])
        } else {
            child = try WorkerProcess(workerArgs, stderrPath: dir.file("stderr"))
        }
        var lines: [String] = []
        let deadline = monotonicNow() + timeout
        while let line = child.readLine(timeout: max(0, deadline - monotonicNow())) { lines.append(line) }
        let status: Int32?
        do {
            status = try child.waitForExit(timeout: max(1, deadline - monotonicNow()))
        } catch {
            status = nil
        }
        return (lines, status, child.stderrText)
    }

    /// Runs the workload once under `strace` and lists every call it made on the database's files, in order,
    /// with the step each belongs to. Throws if `strace` cannot trace (ptrace not permitted, ...).
    func listFileCalls(strace: String, extra: [String] = []) throws -> (calls: [FileCall], output: MixedOutput) {
        let trace = dir.file("trace")
        let (lines, status, stderr) = try run(strace: strace, ["-f", "-qq", "-y", "-s", "48", "--seccomp-bpf", "-o", trace,
                                                               "-e", "trace=" + fileSyscalls.joined(separator: ",")], extra: extra)
        let output = MixedOutput(lines)
        guard let status, WorkerProcess.exitedNormally(status), output.done else {
            throw WorkerProcessError("the workload did not run to its end under strace (\(status.map(WorkerProcess.describe) ?? "hung")); "
                + "output \(lines.suffix(5)); stderr:\n\(stderr.suffix(3000))")
        }
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        unlink(trace)
        return (try MixedRun.fileCalls(inTrace: text, dir: dir.path), output)
    }

    /// The calls on the files in `dir` in a trace of the workload written with `-f -y -o` (tracing `fileSyscalls`),
    /// in order, each with the step it belongs to.
    static func fileCalls(inTrace text: String, dir dirPath: String) throws -> [FileCall] {
        var counts: [String: Int] = [:]
        var step = -1
        var calls: [FileCall] = []
        var threads: Set<Substring> = []
        for raw in text.split(separator: "\n") {
            // "PID  name(args) = result"
            let afterPid = raw.drop { $0 != " " }.drop { $0 == " " }
            guard let paren = afterPid.firstIndex(of: "(") else { continue }
            let name = String(afterPid[..<paren])
            guard fileSyscalls.contains(name) else { continue }
            counts[name, default: 0] += 1
            let line = String(afterPid)
            // The worker's own output moves the step on: "write(1<pipe:[..]>, "committed 3\n", 12)".
            if name == "write", line.hasPrefix("write(1<") {
                // Killed as it reports a commit: the commit is durable but unacknowledged, as after the last call of
                // its own (a crash point of the file's state too).
                if let q = line.firstIndex(of: "\"") {
                    let words = line[line.index(after: q)...].split(separator: " ", maxSplits: 2)
                    if words.first?.hasPrefix("start\\n") == true { step = 0 }
                    if words.count > 1, let n = Int(words[1].prefix { $0.isNumber }), ["committed", "checkpointed", "compacted", "copied", "failed"].contains(words[0]) {
                        calls.append(FileCall(name: name, occurrence: counts[name]!, step: n, text: String(line.prefix(160)), isReport: true))
                        step = n + 1
                    }
                }
                continue
            }
            guard line.contains(dirPath) else { continue }
            if name == "openat" && !line.contains("O_CREAT") { continue }
            threads.insert(raw.prefix { $0 != " " })
            calls.append(FileCall(name: name, occurrence: counts[name]!, step: step, text: String(line.prefix(160))))
        }
        // `when=N` counts per thread: every call on the files must come from one thread for the counts to hold.
        if threads.count > 1 {
            throw WorkerProcessError("calls on the database's files came from \(threads.count) threads (\(threads.sorted())): "
                + "strace counts `when=` per thread, so the crash points would not be exact")
        }
        return calls
    }
}

/// A deterministic sample of `items`: every one when `all`, otherwise every `stride`-th (from the middle of the
/// first stride), or evenly spread to at most `limit` when no stride is given.
func sample<T>(_ items: [T], all: Bool, stride given: Int?, limit: Int) -> [T] {
    if all || items.count <= (given == nil ? limit : 0) { return items }
    let step = given ?? (items.count + limit - 1) / max(1, limit)
    if step <= 1 { return items }
    return Swift.stride(from: step / 2, to: items.count, by: step).map { items[$0] }
}

// MARK: - Checking a file against the schedule

/// Every difference between the database file at `path` and the workload's state after exactly the steps whose
/// markers it holds, plus the markers themselves: (markers found, problems). Opens the file (the first open
/// runs recovery) and runs `verify()`.
func mixedFileProblems(_ path: String, ns: Int = 0) -> (markers: Set<Int>, problems: [String]) {
    do {
        let db = try Database.open(path: path)
        let report = try db.verify()
        var problems: [String] = []
        if !report.isOK { problems.append("verify() failed: \(report.problems.prefix(3).joined(separator: "; "))") }
        let (markers, contents) = try db.read { s -> (Set<Int>, [String]) in
            let found = try mixedMarkers(s)
            let own = Set(found.filter { $0 / 1_000 == ns }.map { $0 % 1_000 })
            var problems = try mixedMismatches(s, expected: Mixed.model(applied: own, ns: ns))
            let foreign = found.filter { $0 / 1_000 != ns }
            if !foreign.isEmpty { problems.insert("\(foreignMarkersProblem) (namespace \(Set(foreign.map { $0 / 1_000 }).sorted())): \(foreign.sorted().prefix(8))", at: 0) }
            return (own, problems)
        }
        problems += contents
        return (markers, problems)
    } catch {
        return ([], ["cannot open or read: \(error)"])
    }
}

/// How `mixedFileProblems` begins the problem of a file holding another database's markers.
let foreignMarkersProblem = "markers of another database"

func mixedMarkers(_ s: Snapshot) throws -> [Int] {
    guard s.classSchema("Marker") != nil else { return [] }
    let t = try s.table("Marker")
    let p = try s.property(t, "step")
    return try s.keys(t).map { k in
        guard case .int(let n) = try s.value(k, p) else { throw WorkerProcessError("a marker without a number") }
        return Int(n)
    }
}

/// Differences between the snapshot and `expected` (items, extras, the schema change).
func mixedMismatches(_ s: Snapshot, expected m: Mixed.Model) throws -> [String] {
    var problems: [String] = []
    guard s.classSchema("Item") != nil else {
        if m.hasSchema { problems.append("no class Item, expected one") }
        return problems
    }
    let hasTag = s.classSchema("Item")?.properties.contains { $0.name == "tag" } ?? false
    if hasTag != m.schemaChanged || (s.classSchema("Extra") != nil) != m.schemaChanged {
        problems.append("schema change \(hasTag ? "present" : "absent") (Extra \(s.classSchema("Extra") != nil)), expected \(m.schemaChanged ? "present" : "absent")")
        return problems
    }
    let items = try s.table("Item")
    let idP = try s.property(items, "id"), nameP = try s.property(items, "name"), dataP = try s.property(items, "data")
    let tagP = hasTag ? try s.property(items, "tag") : nil
    var seen: Set<Int64> = []
    var wrong: [Int64] = []
    var wrongContents: [String] = []
    for key in try s.keys(items) {
        guard case .int(let id) = try s.value(key, idP) else { problems.append("item \(key) without an id"); continue }
        seen.insert(id)
        guard let want = m.items[id] else { continue }
        let tag: String? = switch try tagP.map({ try s.value(key, $0) }) {
        case .string(let t)?: t
        default: nil
        }
        if try s.value(key, nameP) != .string(want.name) || s.value(key, dataP) != .data(want.data) || tag != want.tag {
            wrong.append(id)
        } else if let got = try mixedContents(s, key), got != want.contents {
            wrong.append(id)
            if wrongContents.count < 2 { wrongContents.append("item \(id): \(got), expected \(want.contents)") }
        }
    }
    if !wrongContents.isEmpty { problems.append("collections differ: \(wrongContents.joined(separator: "; "))") }
    // No embedded object outlives its owner.
    let addresses = m.items.values.filter { $0.contents.address != nil }.count
    let geos = m.items.values.filter { $0.contents.address?.lat != nil }.count
    if try s.count("Address") != addresses || s.count("Geo") != geos {
        problems.append("\(try s.count("Address")) addresses and \(try s.count("Geo")) geos, expected \(addresses) and \(geos)")
    }
    let unexpected = seen.subtracting(m.items.keys), missing = Set(m.items.keys).subtracting(seen)
    if !unexpected.isEmpty { problems.append("\(unexpected.count) unexpected items, e.g. \(unexpected.sorted().prefix(5))") }
    if !missing.isEmpty { problems.append("\(missing.count) missing items, e.g. \(missing.sorted().prefix(5))") }
    if !wrong.isEmpty { problems.append("\(wrong.count) items with wrong values, e.g. \(wrong.sorted().prefix(5))") }
    if try s.count(items) != seen.count { problems.append("count(Item) \(try s.count(items)) but \(seen.count) keys") }
    if m.schemaChanged {
        let extras = try s.table("Extra")
        let eid = try s.property(extras, "id"), note = try s.property(extras, "note")
        var found: [Int64: String] = [:]
        for key in try s.keys(extras) {
            if case .int(let id) = try s.value(key, eid), case .string(let n) = try s.value(key, note) { found[id] = n }
        }
        if found != m.extras { problems.append("extras \(found.keys.sorted().prefix(8)), expected \(m.extras.keys.sorted().prefix(8))") }
    }
    return problems
}

/// An item's sets, dictionaries, embedded address and mixed values as `Mixed.Contents` writes them.
func mixedContents(_ s: Snapshot, _ key: ObjectKey) throws -> Mixed.Contents? {
    let items = try s.table("Item")
    func p(_ name: String) throws -> PropertyHandle { try s.property(items, name) }
    var tags: Set<String> = []
    for v in try s.list(key, p("tags")) {
        guard case .string(let t) = v else { return nil }
        tags.insert(t)
    }
    var scores: [String: Int64] = [:]
    for (k, v) in try s.dictionary(key, p("scores")) {
        guard case .int(let n) = v else { return nil }
        scores[k] = n
    }
    let markers = try s.table("Marker")
    let step = try s.property(markers, "step")
    var marks: Set<Int64> = []
    for v in try s.list(key, p("marks")) {
        guard case .link(let k) = v, case .int(let n) = try s.value(k, step) else { return nil }
        marks.insert(n)
    }
    var address: Mixed.Contents.Address?
    if case .link(let a) = try s.value(key, p("address")) {
        let at = try s.table("Address")
        guard case .string(let street) = try s.value(a, s.property(at, "street")),
              case .int(let number) = try s.value(a, s.property(at, "number")) else { return nil }
        var lat: Double?
        if case .link(let g) = try s.value(a, s.property(at, "geo")) {
            guard case .double(let d) = try s.value(g, s.property(s.table("Geo"), "lat")) else { return nil }
            lat = d
        }
        address = Mixed.Contents.Address(street: street, number: number, lat: lat)
    }
    var attrs: [String: Value] = [:]
    for (k, v) in try s.dictionary(key, p("attrs")) { attrs[k] = try Mixed.canonical(v, s) }
    return Mixed.Contents(tags: tags, scores: scores, marks: marks, address: address,
                          mixed: try Mixed.canonical(s.value(key, p("anyValue")), s), attrs: attrs)
}
