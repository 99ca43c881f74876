import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage
@testable import realm_storage_worker

/// Every crash point and every I/O error of a workload that mixes small logged commits, large direct commits,
/// checkpoints, deletes, a schema change, a compaction and a `writeCopy` (`realm-storage-worker mixed`).
///
/// The workload runs once under `strace` to list the calls it makes on the database's files; then, for each
/// call in turn, it runs again from an empty directory with `strace -e inject=NAME:signal=KILL:when=K` (killed
/// as that call begins) or `...:error=EIO|ENOSPC:when=K` (that one call fails). After a kill the file must open,
/// verify, and hold every commit the worker reported and nothing beyond the one in flight; after a fault, each
/// commit either returned and is there, or threw, was invisible to the worker at once, and is absent after
/// reopening, and the steps after it worked.
///
/// `when=K` counts the calls of one name in one thread (all of the workload's file calls are on its main thread).
/// The sequence is the same from run to run but for one thing: a write from the file's own mapping can come back
/// short and be retried, one more call of its name; so each run reads the call it hit from its own trace, and takes
/// the step from what the worker printed.
///
/// Bounded by default: every sync, rename, unlink, truncation and creation, but a spread sample of those in small
/// commits (which repeat one pattern), and a spread sample of the writes. Soak modes: `REALM_CRASHPOINT_ALL=1`
/// (every call), `REALM_CRASHPOINT_STRIDE=N` (every N-th write and small commits' other calls);
/// `REALM_FAULT_ALL=1`, `REALM_FAULT_STRIDE=N` the same for faults; `REALM_CRASHPOINT_LIMIT`, `REALM_FAULT_LIMIT`
/// the default sample sizes.
@Suite(.serialized) struct CrashPointTests {
    static let environment = ProcessInfo.processInfo.environment
    static func flag(_ name: String) -> Bool { environment[name] == "1" }
    static func number(_ name: String) -> Int? { environment[name].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } }

    // MARK: Every crash point

    @Test(arguments: Scenario.allCases)
    func everyCrashPointKeepsEveryAcknowledgedCommit(_ scenario: Scenario) throws {
        let strace = try straceExecutablePath()
        let started = monotonicNow()
        let stale = scenario == .besideStaleLog ? try MixedRun.staleLog() : nil
        let listing = try MixedRun("crash-listing", scenario, staleLog: stale)
        let (calls, output) = try listing.listFileCalls(strace: strace)
        try expectWholeRun(listing, output)

        // Syncs, renames, unlinks, truncations and creations all, but those of small commits (one pattern
        // repeated: the record, and now and then a checkpoint) sampled; the writes sampled.
        let all = Self.flag("REALM_CRASHPOINT_ALL")
        let stride = Self.number("REALM_CRASHPOINT_STRIDE")
        let limit = Self.number("REALM_CRASHPOINT_LIMIT") ?? 16
        let writes = calls.indices.filter { calls[$0].isWrite }
        let repeated = calls.indices.filter { !calls[$0].isWrite && stepKind(calls[$0].step) == "small commit" }
        let sampled = Set(writes + repeated)
        let chosen = Set(sample(writes, all: all, stride: stride, limit: limit) + sample(repeated, all: all, stride: stride, limit: limit))
        let points = calls.indices.filter { chosen.contains($0) || !sampled.contains($0) }.map { calls[$0] }
        print("CrashPointTests: \(calls.count) crash points (\(writes.count) writes), trying \(points.count) "
              + "(REALM_CRASHPOINT_ALL=1 for every one, REALM_CRASHPOINT_STRIDE=N for every N-th write)")

        var findings: [Finding] = []
        var skipped = 0
        for call in points {
            let run = try MixedRun("crash-point", scenario, staleLog: stale)
            let trace = run.dir.file("trace")
            let (lines, status, stderr) = try run.run(strace: strace, [
                // Not `--seccomp-bpf`: strace 6.1 does not deliver an injected signal with it.
                "-f", "-qq", "-y", "-s", "48", "-o", trace,
                "-e", "trace=\(call.name)", "-e", "inject=\(call.name):signal=KILL:when=\(call.occurrence)",
            ])
            let out = MixedOutput(lines)
            // The call the kill landed on, as this run made it (a short write retried makes one more call of its
            // name, so the count can shift by one between runs), and the step the worker had reached.
            var call = call
            if let line = tracedCalls(trace).last { call.text = line }
            call.step = out.started ? out.inFlight : -1
            func found(_ symptom: Symptom, _ detail: String) {
                findings.append(Finding(call: call, fault: "SIGKILL", symptom: symptom, detail: detail))
            }
            guard let status else { found(.hung, "no exit within the time limit"); continue }
            guard WorkerProcess.killedBy(status) == SIGKILL else {
                // This run made fewer calls of the name than the listing run (a short write retried there).
                if WorkerProcess.exitedNormally(status) && tracedCalls(trace).count < call.occurrence { skipped += 1; continue }
                found(.notInjected, "the worker was not killed (\(WorkerProcess.describe(status)), output \(lines.suffix(3))): "
                      + "strace did not inject where the listing run found the call\(stderr.isEmpty ? "" : "; stderr: \(stderr.suffix(500))")")
                continue
            }
            if !out.failed.isEmpty { found(.stepFailed, "steps failed before the kill: \(out.failed)") }
            if !out.unexpected.isEmpty { found(.workerFailed, "unexpected output: \(out.unexpected.prefix(3))") }
            let (markers, problems) = mixedFileProblems(run.path)
            let lost = out.committed.subtracting(markers)
            let extra = markers.subtracting(out.committed).subtracting([out.inFlight])
            if !lost.isEmpty { found(.lostAcknowledged, "acknowledged commits missing: steps \(lost.sorted()) (file holds \(markers.count) of \(out.committed.count))") }
            if !extra.isEmpty { found(.unacknowledgedPresent, "steps never run or not in flight are present: \(extra.sorted())") }
            for p in problems { found(p.hasPrefix("verify") ? .verifyFailed : p.hasPrefix("cannot open") ? .openFailed : .contentsDiffer, p) }
            if let problem = copyProblem(run, out) { found(.copyWrong, problem) }
            // The file keeps working.
            if problems.isEmpty, let error = commitAfterReopening(run.path) { found(.cannotCommitAfter, "\(error)") }
        }
        report(findings, tried: points.count - skipped, of: calls.count, kind: "crash points", scenario: scenario, started: started)
    }

    // MARK: Every I/O error

    @Test(arguments: [Scenario.frequentCheckpoints, .defaultCheckpoints])
    func everyIOErrorLeavesACommitWholeOrAbsent(_ scenario: Scenario) throws {
        let strace = try straceExecutablePath()
        let started = monotonicNow()
        let listing = try MixedRun("fault-listing", scenario)
        let (calls, output) = try listing.listFileCalls(strace: strace)
        try expectWholeRun(listing, output)

        let candidates = calls.filter { faultSyscalls.contains($0.name) && !$0.isReport }
        let all = Self.flag("REALM_FAULT_ALL")
        let stride = Self.number("REALM_FAULT_STRIDE")
        let limit = Self.number("REALM_FAULT_LIMIT") ?? 16
        // Every sync (where a commit's outcome is decided) but those of small commits (one pattern repeated)
        // sampled, EIO and ENOSPC in turn (both in soak mode); the other calls sampled.
        // Every truncation too (growing the file is a step of every commit that needs room).
        let decisive = { (c: FileCall) in c.isSync || c.name == "ftruncate" || c.name == "fallocate" }
        let repeated = candidates.filter { $0.isSync && stepKind($0.step) == "small commit" }
        let syncs = candidates.filter { decisive($0) && !($0.isSync && stepKind($0.step) == "small commit") }
            + sample(repeated, all: all, stride: stride, limit: limit)
        let others = sample(candidates.filter { !decisive($0) }, all: all, stride: stride, limit: limit)
        let faults: [(FileCall, String)] = all
            ? (syncs + others).flatMap { [($0, "EIO"), ($0, "ENOSPC")] }
            : (syncs + others).enumerated().map { ($0.element, $0.offset % 2 == 0 ? "EIO" : "ENOSPC") }
        print("CrashPointTests: \(candidates.count) calls that can fail (\(syncs.count) syncs), injecting \(faults.count) faults "
              + "(REALM_FAULT_ALL=1 for every call, REALM_FAULT_STRIDE=N for every N-th)")

        var findings: [Finding] = []
        var skipped = 0
        var absorbed: [String] = []
        var failedSteps = 0
        for (call, error) in faults {
            let run = try MixedRun("fault", scenario)
            let trace = run.dir.file("trace")
            let (lines, status, stderr) = try run.run(strace: strace, [
                "-f", "-qq", "-y", "-s", "48", "--seccomp-bpf", "-o", trace,
                "-e", "trace=\(call.name)", "-e", "inject=\(call.name):error=\(error):when=\(call.occurrence)",
            ])
            let out = MixedOutput(lines)
            // The call that failed, as this run made it, and the step it failed.
            var call = call
            let injected = tracedCalls(trace).first { $0.hasSuffix("(INJECTED)") }
            if let injected { call.text = injected }
            if let step = out.failed.keys.min() { call.step = step }
            func found(_ symptom: Symptom, _ detail: String) {
                findings.append(Finding(call: call, fault: error, symptom: symptom, detail: detail))
            }
            guard let status else { found(.hung, "no exit within the time limit; output \(lines.suffix(3))"); continue }
            if injected == nil && WorkerProcess.exitedNormally(status) && tracedCalls(trace).count < call.occurrence { skipped += 1; continue }
            guard injected != nil else {
                found(.notInjected, "strace did not inject (\(WorkerProcess.describe(status)), output \(lines.suffix(3)))")
                continue
            }
            if let sig = WorkerProcess.killedBy(status) {
                let cause = stderr.split(separator: "\n").first { $0.contains("Fatal error") || $0.contains("failed:") }
                found(.crashed, "the worker died of signal \(sig): \(cause.map(String.init) ?? String(stderr.suffix(800)))")
                continue
            }
            let cannotOpen = out.openFailures.count == 2 && !out.started
            if !WorkerProcess.exitedNormally(status) && !cannotOpen {
                found(.workerFailed, "\(WorkerProcess.describe(status)), output \(lines.suffix(3)); stderr: \(stderr.suffix(800))")
                continue
            }
            if !cannotOpen && !out.done { found(.workerFailed, "the worker did not finish: \(lines.suffix(3))") }
            if !out.unexpected.isEmpty { found(.workerFailed, "unexpected output: \(out.unexpected.prefix(3))") }
            failedSteps += out.failed.count
            if out.failed.isEmpty && out.openFailures.isEmpty { absorbed.append(call.description) }
            for (n, seen) in out.afterFailure.sorted(by: { $0.key < $1.key }) where seen != "absent" {
                found(seen == "visible" ? .visibleAfterThrow : .unusableAfterFailure,
                      "step \(n) threw (\(out.failed[n] ?? "")) and then read back as \(seen)")
            }
            if out.failed.count > 1 {
                found(.laterStepsFailed, "\(out.failed.count) steps failed after one injected fault: \(out.failed.keys.sorted()) "
                      + "(\(out.failed.sorted { $0.key < $1.key }.dropFirst().first?.value ?? ""))")
            }
            let (markers, problems) = mixedFileProblems(run.path)
            let lost = out.committed.subtracting(markers)
            let extra = markers.subtracting(out.committed)
            if !lost.isEmpty { found(.lostAcknowledged, "acknowledged commits missing after reopening: steps \(lost.sorted())") }
            if !extra.isEmpty {
                found(out.failed.keys.contains { extra.contains($0) } ? .presentAfterThrow : .unacknowledgedPresent,
                      "steps \(extra.sorted()) are present after reopening but were not acknowledged (failed: \(out.failed.keys.sorted()))")
            }
            for p in problems { found(p.hasPrefix("verify") ? .verifyFailed : p.hasPrefix("cannot open") ? .openFailed : .contentsDiffer, p) }
            if let problem = copyProblem(run, out) { found(.copyWrong, problem) }
            if problems.isEmpty, let error = commitAfterReopening(run.path) { found(.cannotCommitAfter, "\(error)") }
        }
        print("CrashPointTests: \(faults.count - skipped) faults injected, \(failedSteps) steps failed, \(absorbed.count) absorbed without "
              + "a failed step\(absorbed.isEmpty ? "" : ":\n  " + absorbed.prefix(12).joined(separator: "\n  "))")
        report(findings, tried: faults.count - skipped, of: candidates.count * 2, kind: "faults", scenario: scenario, started: started)
    }

    // MARK: Helpers

    /// The listing run, which no fault touched, ran every step and left exactly the schedule's state.
    func expectWholeRun(_ run: MixedRun, _ output: MixedOutput) throws {
        let commits = Set((0..<run.scenario.limit).filter { Mixed.steps[$0].commits })
        #expect(output.committed == commits && output.failed.isEmpty, "listing run: committed \(output.committed.sorted()), failed \(output.failed)")
        let (markers, problems) = mixedFileProblems(run.path)
        #expect(markers == commits && problems.isEmpty, "listing run's file: markers \(markers.sorted()), \(problems)")
        let copyStep = try #require(Mixed.steps.firstIndex(of: .writeCopy))
        guard copyStep < run.scenario.limit else { return }
        let (copyMarkers, copyProblems) = mixedFileProblems(run.path + ".copy")
        #expect(copyMarkers == commits.filter { $0 < copyStep } && copyProblems.isEmpty, "the copy: \(copyMarkers.sorted()), \(copyProblems)")
    }

    /// The calls in a trace written with `-o`, without process ids and strace's own notes (`+++ killed by ...`);
    /// a call another thread's event split (`<unfinished ...>`, `<... NAME resumed>`) joined again.
    func tracedCalls(_ trace: String) -> [String] {
        guard let text = try? String(contentsOfFile: trace, encoding: .utf8) else { return [] }  // no trace: no calls
        var calls: [String] = []
        var unfinished: [Substring: String] = [:]
        for raw in text.split(separator: "\n") {
            let pid = raw.prefix { $0 != " " }
            let line = String(raw.dropFirst(pid.count).drop { $0 == " " })
            if line.hasPrefix("+++") || line.hasPrefix("---") { continue }
            if line.hasSuffix("<unfinished ...>") {
                unfinished[pid] = String(line.dropLast("<unfinished ...>".count))
            } else if line.hasPrefix("<..."), let end = line.range(of: "resumed>") {
                calls.append((unfinished.removeValue(forKey: pid) ?? "") + line[end.upperBound...])
            } else {
                calls.append(line)
            }
        }
        // A call the kill ended before it returned.
        calls += unfinished.values
        return calls
    }

    /// What is wrong with the copy the worker reported made (it holds exactly the commits acknowledged before
    /// it), or nil (also when no copy was reported).
    func copyProblem(_ run: MixedRun, _ out: MixedOutput) -> String? {
        guard let copied = out.maintained.first(where: { Mixed.steps[$0] == .writeCopy }) else { return nil }
        let (markers, problems) = mixedFileProblems(run.path + ".copy")
        let want = out.committed.filter { $0 < copied }
        if markers == want && problems.isEmpty { return nil }
        return "the copy holds steps \(markers.subtracting(want).sorted()) extra, \(want.subtracting(markers).sorted()) missing; \(problems.prefix(2))"
    }

    /// Opens the file and commits one more marker; the error if that fails.
    func commitAfterReopening(_ path: String) -> (any Error)? {
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                if tx.classSchema("Marker") == nil { try tx.createClass(Mixed.markerSchema) }
                try tx.createObject("Marker", ["step": .int(999)])
            }
            let there = try db.read { s in try s.object(s.table("Marker"), primaryKey: .int(999)) != nil }
            return there ? nil : WorkerProcessError("the commit after reopening is not visible")
        } catch {
            return error
        }
    }

    /// Prints every finding grouped by symptom, then records each as an issue.
    func report(_ findings: [Finding], tried: Int, of total: Int, kind: String, scenario: Scenario, started: Double) {
        let bySymptom = Dictionary(grouping: findings, by: \.symptom)
        var text = "CrashPointTests, \(scenario): \(tried) \(kind) tried (of \(total)), \(findings.count) findings, "
            + String(format: "%.0f s", monotonicNow() - started)
        for (symptom, list) in bySymptom.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            text += "\n  \(symptom.rawValue): \(list.count)"
            for f in list.prefix(12) { text += "\n    \(f)" }
            if list.count > 12 { text += "\n    ..." }
        }
        print(text)
        // Every finding, with the traced call, for whoever fixes them.
        if let file = Self.environment["REALM_CRASHPOINT_FINDINGS"], let out = FileHandle(forWritingAtPath: file) ?? {
            FileManager.default.createFile(atPath: file, contents: nil)
            return FileHandle(forWritingAtPath: file)
        }() {
            out.seekToEndOfFile()
            out.write(Data((text.components(separatedBy: "\n").first! + "\n" + findings.map { "\($0)\n      call: \($0.call.text)\n" }.joined()).utf8))
            out.closeFile()
        }
        for f in findings { Issue.record(Comment(rawValue: f.description)) }
    }
}

/// What went wrong at one crash point or fault.
enum Symptom: String {
    case notInjected = "strace did not inject"
    case hung = "hung"
    case crashed = "crashed"
    case workerFailed = "worker failed"
    case stepFailed = "a step failed without a fault"
    case lostAcknowledged = "acknowledged commit lost"
    case unacknowledgedPresent = "unacknowledged commit present"
    case presentAfterThrow = "commit threw but is present after reopening"
    case visibleAfterThrow = "commit threw but is visible at once"
    case unusableAfterFailure = "database unusable after a failure"
    case laterStepsFailed = "later steps failed after the fault was gone"
    case verifyFailed = "verify failed"
    case openFailed = "cannot open"
    case contentsDiffer = "contents differ from the steps present"
    case copyWrong = "writeCopy's copy wrong"
    case cannotCommitAfter = "cannot commit after reopening"
}

struct Finding: CustomStringConvertible {
    var call: FileCall
    var fault: String
    var symptom: Symptom
    var detail: String
    var description: String { "\(fault) at \(call.name) #\(call.occurrence), step \(call.step) (\(stepKind(call.step))): \(symptom.rawValue): \(detail)" }
}
