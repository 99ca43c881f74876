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
/// Bounded by default: one scenario (frequent checkpoints), every other call. `REALM_EINTR_ALL=1` adds the
/// default checkpoint size and the calls in between (`when=2+2`) and every third call (`when=1+3`).
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
}
