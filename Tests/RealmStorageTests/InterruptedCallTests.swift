import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage
@testable import realm_storage_worker

/// A system call interrupted by a signal (EINTR) is tried again, never taken for a failure: the worker's `mixed`
/// workload (small and large commits, deletes, checkpoints, a schema change, compaction, `writeCopy`) runs under
/// `strace -e inject=NAME:error=EINTR:when=1+2`, which interrupts every other call of that name on the database's
/// files (`-P`: the data file, its log and lock file, the files compaction, creation and `writeCopy` make, and
/// the directory). Every step must return as it does undisturbed, and the file must hold every commit.
///
/// Bounded by default: one scenario (frequent checkpoints), every other call; two contended writers of 150
/// increments each. `REALM_EINTR_ALL=1` adds the default checkpoint size and the calls in between (`when=2+2`)
/// and every third call (`when=1+3`), and 1,000 increments per writer.
@Suite(.serialized) struct InterruptedCallTests {
    /// The calls the storage layer makes on its files that can be interrupted (or that `strace` can make look
    /// so): each is retried where it is made.
    static let calls = ["openat", "pread64", "pwrite64", "pwritev", "fdatasync", "fsync", "ftruncate", "fallocate",
                        "fcntl", "flock"]

    static let soak = ProcessInfo.processInfo.environment["REALM_EINTR_ALL"] == "1"

    @Test(arguments: calls)
    func anInterruptedCallIsRetriedNotFailed(_ name: String) throws {
        let strace = try straceExecutablePath()
        let scenarios: [Scenario] = Self.soak ? [.frequentCheckpoints, .defaultCheckpoints] : [.frequentCheckpoints]
        let patterns = Self.soak ? ["1+2", "2+2", "1+3"] : ["1+2"]
        for scenario in scenarios {
            for when in patterns {
                let run = try MixedRun("eintr", scenario)
                let trace = run.dir.file("trace")
                let files = ["", ".log", ".lock", ".new", ".compact", ".compact.lock", ".compact.new", ".copy", ".copy.lock",
                             ".copy.new"].map { run.path + $0 } + [run.dir.path]
                let (lines, status, stderr) = try run.run(strace: strace, [
                    "-f", "-qq", "-y", "--seccomp-bpf", "-o", trace] + files.flatMap { ["-P", $0] } + [
                    "-e", "trace=\(name)", "-e", "inject=\(name):error=EINTR:when=\(when)",
                ])
                let out = MixedOutput(lines)
                let injected = ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "")  // no trace: counted as none
                    .split(separator: "\n").filter { $0.hasSuffix("(INJECTED)") }.count
                let label = "EINTR at every \(when) \(name), \(scenario)"
                print("InterruptedCallTests: \(label): \(injected) calls interrupted")
                #expect(injected > 0, "\(label): strace interrupted no call (the workload makes none on its files?)")
                guard let status else { Issue.record("\(label): no exit within the time limit; output \(lines.suffix(3))"); continue }
                #expect(WorkerProcess.exitedNormally(status) && out.done,
                        "\(label): \(WorkerProcess.describe(status)), output \(lines.suffix(3)); stderr: \(stderr.suffix(800))")
                #expect(out.openFailures.isEmpty, "\(label): opening failed: \(out.openFailures.prefix(2))")
                #expect(out.failed.isEmpty, "\(label): steps failed: \(out.failed.sorted { $0.key < $1.key }.prefix(3))")
                #expect(out.reopened.isEmpty, "\(label): writes stopped before steps \(out.reopened.sorted())")
                #expect(out.unexpected.isEmpty, "\(label): unexpected output \(out.unexpected.prefix(3))")
                let commits = Set((0..<scenario.limit).filter { Mixed.steps[$0].commits })
                #expect(out.committed == commits, "\(label): steps \(commits.subtracting(out.committed).sorted()) did not commit")
                let (markers, problems) = mixedFileProblems(run.path)
                #expect(markers == out.committed && problems.isEmpty,
                        "\(label): the file holds steps \(markers.sorted()) of \(out.committed.sorted()); \(problems.prefix(3))")
                if let problem = CrashPointTests().copyProblem(run, out) { Issue.record("\(label): \(problem)") }
            }
        }
    }

    /// Two writers in separate processes increment one counter, each under `strace` interrupting every other
    /// call of every kind above on the file (the lock waits among them, while the other process writes): every
    /// increment lands once, in order per writer, and the file verifies.
    @Test func contendedWritersInterruptedAtEveryOtherCallLoseNothing() throws {
        let strace = try straceExecutablePath()
        let dir = TempDir()
        let path = dir.file("shared.realm")
        let perWriter = Self.soak ? 1_000 : 150
        let db = try Database.open(path: path)
        try SharedCounter.ensureSchema(db)
        let files = ["", ".log", ".lock"].map { path + $0 } + [dir.path]
        let calls = Self.calls.joined(separator: ",")
        let writers = try (1...2).map { id in
            try WorkerProcess(["writer", path, "\(id)", "\(perWriter)"], stderrPath: dir.file("writer-\(id).stderr"), launcher: [
                strace, "-f", "-qq", "-y", "--seccomp-bpf", "-o", dir.file("trace-\(id)")] + files.flatMap { ["-P", $0] } + [
                "-e", "trace=\(calls)", "-e", "inject=\(calls):error=EINTR:when=1+2", "--",
            ])
        }
        defer { for w in writers { w.sendKill() } }
        for (i, w) in writers.enumerated() {
            let status = try w.waitForExit(timeout: 240)
            let out = w.remainingLines(timeout: 5)
            #expect(WorkerProcess.exitedNormally(status) && out.last == "done \(i + 1) \(perWriter)",
                    "writer \(i + 1) ended with \(WorkerProcess.describe(status)), output \(out.suffix(3))\(w.stderrTail())")
        }
        var interrupted: [String: Int] = [:]
        for id in 1...2 {
            let trace = (try? String(contentsOfFile: dir.file("trace-\(id)"), encoding: .utf8)) ?? ""  // no trace: counted as none
            for line in trace.split(separator: "\n") where line.hasSuffix("(INJECTED)") {
                let call = line.drop { $0 != " " }.drop { $0 == " " }.prefix { $0 != "(" }
                interrupted[String(call), default: 0] += 1
            }
        }
        print("InterruptedCallTests: two writers, \(2 * perWriter) increments, calls interrupted: "
              + interrupted.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        #expect(interrupted["fcntl", default: 0] > 0 && interrupted["pwrite64", default: 0] + interrupted["pwritev", default: 0] > 0,
                "strace interrupted too little: \(interrupted)")
        try db.read { s in
            guard case .success(let c) = try SharedCounter.check(s) else {
                Issue.record("the final version fails the shared counter's invariants")
                return
            }
            #expect(c == 2 * perWriter)
            let entries = try s.table("Entry")
            let writerP = try s.property(entries, "writer")
            for w in 1...2 { #expect(try s.find(writerP, equalTo: .int(Int64(w))).count == perWriter, "entries of writer \(w)") }
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }
}
