import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage
@testable import realm_storage_worker

/// A commit that throws is invisible to every other process: the worker runs the first 26 steps of `mixed` (small
/// logged commits, a direct commit of 1.2 MiB, deletes) while this process holds the same file open as a reader,
/// and `strace` fails one of the worker's writes or syncs (`EIO` or `ENOSPC`, `-e inject=NAME:error=E:when=K`).
/// Throughout, this process reads the newest version again and again (and holds one snapshot, which must keep
/// its version): it must never see a step whose commit threw (its marker, or data the file's markers do not
/// account for), must see every step from the moment the worker reported it returned, and must see the steps
/// after the failure (the worker opens the file again when the failure stopped its writes,
/// `StorageError.writesStopped`). After the worker ends, the file reopened here holds exactly the steps that
/// returned.
@Suite(.serialized) struct FailedCommitVisibilityTests {
    static let limit = 26
    static let smallSteps = Set((0..<limit).filter { Mixed.steps[$0] == .small })
    static let largeStep = 21

    /// What one run with a reader beside it showed.
    struct Watched {
        var output: MixedOutput
        var lines: [String]
        var status: Int32?
        var stderr: String
        /// Everything the reader saw that it must not have.
        var violations: [String] = []
        /// How many times it read the newest version.
        var reads = 0
    }

    /// Runs the worker's first `limit` steps of `mixed` on `path` (under `launcher`), reading the file from this
    /// process between every line the worker writes and while it is quiet.
    static func runWatched(dir: TempDir, launcher: [String]) throws -> Watched {
        let path = dir.file("db.realm")
        var reader: Database? = try Database.open(path: path)
        let child = try WorkerProcess(["mixed", path, "--limit", "\(limit)"], stderrPath: dir.file("stderr"), launcher: launcher)
        var lines: [String] = []
        var acknowledged: Set<Int> = []
        var failed: Set<Int> = []
        var seen: Set<Int> = []
        var violations: [String] = []
        var reads = 0
        // A snapshot held from the third step's commit to the end: it keeps its version throughout.
        var pinned: (snapshot: Snapshot, markers: Set<Int>)?
        func look(_ when: String) {
            do {
                let (markers, problems) = try reader!.read { s -> (Set<Int>, [String]) in
                    let markers = Set(try mixedMarkers(s))
                    return (markers, try mixedMismatches(s, expected: Mixed.model(applied: markers)))
                }
                reads += 1
                seen.formUnion(markers)
                let failedSeen = markers.intersection(failed), missed = acknowledged.subtracting(markers)
                if !failedSeen.isEmpty { violations.append("\(when): sees steps \(failedSeen.sorted()), whose commits threw") }
                if !missed.isEmpty { violations.append("\(when): does not see steps \(missed.sorted()), whose commits returned") }
                if !problems.isEmpty { violations.append("\(when): the data differs from its markers \(markers.sorted()): \(problems.prefix(2))") }
            } catch {
                violations.append("\(when): reading failed: \(error)")
            }
        }
        let deadline = monotonicNow() + 180
        while monotonicNow() < deadline {
            look("while the worker runs (after \(lines.last ?? "nothing"))")
            if let line = child.readLine(timeout: 0.002) {
                lines.append(line)
                let parts = line.split(separator: " ")
                if parts.count > 1, let n = Int(parts[1]) {
                    if parts[0] == "committed" { acknowledged.insert(n) }
                    if parts[0] == "failed" { failed.insert(n) }
                }
                if pinned == nil, acknowledged.contains(3) {
                    let s = try reader!.snapshot()
                    pinned = (s, Set(try mixedMarkers(s)))
                }
            } else if child.hasExited() {
                lines += child.remainingLines(timeout: 5)
                break
            }
        }
        let status = try? child.waitForExit(timeout: 5)  // nil: it outlived the deadline (killed; reported below)
        let output = MixedOutput(lines)
        acknowledged = output.committed
        failed = Set(output.failed.keys)
        look("after the worker ended")
        // A step that threw is never run again, so its marker may never have been seen at any moment.
        let everFailed = seen.intersection(failed)
        if !everFailed.isEmpty { violations.append("at some moment the reader saw steps \(everFailed.sorted()), whose commits threw") }
        if let (snapshot, markers) = pinned {
            let now = Set(try mixedMarkers(snapshot))
            if now != markers { violations.append("a snapshot held throughout read \(markers.sorted()) at first, \(now.sorted()) at the end") }
            snapshot.close()
        } else {
            violations.append("the worker never reported step 3, so no snapshot was held")
        }
        let final = try reader!.read { s in Set(try mixedMarkers(s)) }
        if final != acknowledged { violations.append("after the worker ended the reader sees \(final.sorted()), not the steps that returned \(acknowledged.sorted())") }
        reader = nil
        let (markers, problems) = mixedFileProblems(path)
        if markers != acknowledged || !problems.isEmpty {
            violations.append("reopened, the file holds \(markers.sorted()) (returned: \(acknowledged.sorted())); \(problems.prefix(2))")
        }
        return Watched(output: output, lines: lines, status: status, stderr: (try? String(contentsOfFile: dir.file("stderr"), encoding: .utf8)) ?? "",  // (no stderr: none written)
                       violations: violations, reads: reads)
    }

    /// The calls to fail, from a run of the same steps without faults, with the reader beside it as in the runs
    /// that fail them: a small commit's first write and sync (its record), and the large commit's first vector
    /// write and each of its syncs.
    static func faults(strace: String) throws -> [(call: FileCall, error: String, kind: String)] {
        let dir = TempDir("visibility-listing")
        let trace = dir.file("trace")
        let listing = try runWatched(dir: dir, launcher: [strace, "-f", "-qq", "-y", "-s", "48", "--seccomp-bpf", "-o", trace,
                                                          "-e", "trace=" + fileSyscalls.joined(separator: ","), "--"])
        guard listing.output.failed.isEmpty, listing.output.committed.count == limit, listing.violations.isEmpty else {
            throw WorkerProcessError("the listing run did not commit every step as the reader saw it: \(listing.output.committed.sorted()), "
                + "failed \(listing.output.failed), \(listing.violations.prefix(3))")
        }
        let calls = try MixedRun.fileCalls(inTrace: String(contentsOfFile: trace, encoding: .utf8), dir: dir.path)
        let files = calls.filter { !$0.isReport && ["pwrite64", "pwritev", "fdatasync"].contains($0.name) }
        var chosen: [(FileCall, String, String)] = []
        for (step, error) in [(5, "EIO"), (12, "ENOSPC")] {
            if let write = files.first(where: { $0.step == step && $0.isWrite }) { chosen.append((write, error, "logged")) }
            if let sync = files.first(where: { $0.step == step && $0.isSync }) { chosen.append((sync, "EIO", "logged")) }
        }
        if let write = files.first(where: { $0.step == largeStep && $0.name == "pwritev" }) { chosen.append((write, "ENOSPC", "direct")) }
        // The large commit's syncs: of the data file (its nodes, then its slots), and of the log as it is retired
        // afterwards, whose failure is not the commit's (the commit returns and is seen; `checkpointFailure`).
        for sync in files.filter({ $0.step == largeStep && $0.isSync }) {
            chosen.append((sync, "EIO", sync.text.contains(".log>") ? "retire" : "direct"))
        }
        return chosen
    }

    @Test func aCommitThatThrowsIsInvisibleToAReaderInAnotherProcess() throws {
        let strace = try straceExecutablePath()
        let faults = try Self.faults(strace: strace)
        #expect(faults.contains { $0.kind == "logged" } && faults.contains { $0.kind == "direct" }, "faults chosen: \(faults.map(\.call))")
        var failedKinds: Set<String> = []
        for (call, error, kind) in faults {
            let dir = TempDir("visibility")
            let watched = try Self.runWatched(dir: dir, launcher: [
                strace, "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null",
                "-e", "trace=\(call.name)", "-e", "inject=\(call.name):error=\(error):when=\(call.occurrence)", "--",
            ])
            let label = "\(error) at \(call) (\(kind))"
            let out = watched.output
            print("FailedCommitVisibilityTests: \(label): failed \(out.failed.keys.sorted()), reopened before \(out.reopened.sorted()), "
                  + "\(watched.reads) reads by the other process")
            guard let status = watched.status else { Issue.record("\(label): the worker did not end; output \(watched.lines.suffix(3))"); continue }
            #expect(WorkerProcess.exitedNormally(status) && out.done && out.unexpected.isEmpty,
                    "\(label): \(WorkerProcess.describe(status)), output \(watched.lines.suffix(3)); stderr: \(watched.stderr.suffix(800))")
            for v in watched.violations { Issue.record("\(label): \(v)") }
            // The fault hit a commit of the kind chosen (the reader does not change the worker's calls before it).
            if kind == "retire" {
                #expect(out.failed.isEmpty && out.committed.contains(Self.largeStep),
                        "\(label): retiring the log failed after the slots were synced, and the commit did not return (failed: \(out.failed))")
                continue
            }
            let hit = out.failed.keys.filter { kind == "direct" ? $0 == Self.largeStep : Self.smallSteps.contains($0) }
            #expect(!hit.isEmpty, "\(label): no \(kind) commit failed (failed: \(out.failed))")
            if !hit.isEmpty { failedKinds.insert(kind) }
            // After the failure the worker went on, and its later steps returned.
            if let first = out.failed.keys.min() {
                let later = Set((first + 1)..<Self.limit).filter { Mixed.steps[$0].commits }
                #expect(later.isSubset(of: out.committed), "\(label): steps \(later.subtracting(out.committed).sorted()) after the failure did not return")
            }
        }
        #expect(failedKinds == ["logged", "direct"])
    }
}
