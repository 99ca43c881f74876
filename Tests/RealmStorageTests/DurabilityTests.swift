import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage
@testable import realm_storage_worker

/// The outcome of a commit is exact: when `commit()` returns, the commit survives a crash at any later
/// instant; when it throws, nothing of it is visible, now or after reopening. Each test runs a short fixed
/// sequence in the worker (`durability ...`, `DurabilityScenarios`) and crashes or fails it at a chosen system
/// call with `strace` fault injection, then opens the file here as the next process would.
@Suite(.serialized) struct DurabilityTests {
    /// `strace`, which every test here needs (CI installs it).
    static var strace: String? {
        ["/usr/bin/strace", "/bin/strace", "/usr/local/bin/strace"].first { access($0, X_OK) == 0 }
    }

    /// What one run of the worker printed and how it ended.
    struct Run {
        var committed: Set<Int> = []
        var failed: Set<Int> = []
        var killed = false
        var status: Int32 = 0
        var lines: [String] = []
    }

    /// Runs `durability ARGS` under `strace` with `inject` (an `-e inject=` expression) and optional path
    /// filter, to its end (or its death).
    static func run(_ args: [String], inject: String?, onlyPath: String? = nil, dir: TempDir, tag: String,
                    extra: [String] = []) throws -> Run {
        let strace = try #require(Self.strace, "strace is not installed (apt-get install strace)")
        var launcher = [strace, "-f", "-qq", "-o", "/dev/null"]
        if let onlyPath { launcher += ["-P", onlyPath] }
        if let inject { launcher += ["-e", "inject=" + inject] } else { launcher += ["-e", "trace=none"] }
        let child = try WorkerProcess(["durability"] + args + extra, stderrPath: dir.file("\(tag).stderr"), launcher: launcher)
        var run = Run()
        while let line = child.readLine(timeout: 120) {
            run.lines.append(line)
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let n = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: ":"))) else { continue }
            if parts[0] == "committed" { run.committed.insert(n) }
            if parts[0] == "failed" { run.failed.insert(n) }
        }
        run.status = try child.waitForExit(timeout: 60)
        // Under strace the worker's death by SIGKILL shows as strace's own exit status 128 + 9 (or as the signal).
        run.killed = (run.status & 0x7f) == SIGKILL || (run.status >> 8) & 0xff == 128 + SIGKILL
        return run
    }

    /// How many objects of each commit number the file at `path` holds, opened as the next process would, and
    /// whether `verify` passed.
    static func contents(_ path: String) throws -> (counts: [Int: Int], verify: VerifyReport) {
        let db = try Database.open(path: path)
        for problem in try contentProblems(db) { Issue.record("\(path): \(problem)") }
        return (try itemCounts(db), try db.verify())
    }

    /// What is wrong with the contents of `db`'s items (`DurabilityScenarios.contents` of their commit numbers:
    /// sets, dictionary, embedded place, mixed value, links to the anchor) and its embedded places (one per
    /// item, none left over); empty when nothing is.
    static func contentProblems(_ db: Database) throws -> [String] {
        try db.read { s in
            guard s.classSchema("Item") != nil else { return [] }
            let t = try s.table("Item")
            func p(_ name: String) throws -> PropertyHandle { try s.property(t, name) }
            let anchorStandIn = Value.string("anchor")
            func canonical(_ v: Value) -> Value {
                switch v {
                case .typedLink(let c, _): s.className(classID: c) == "Anchor" ? anchorStandIn : v
                case .list(let l): .list(l.map(canonical))
                case .dictionary(let d): .dictionary(ValueDictionary(d.map { ($0.key, canonical($0.value)) }.sorted { $0.0 < $1.0 }))
                default: v
                }
            }
            let street = try s.property(s.table("Place"), "street")
            var wrong: [String] = []
            for k in try s.keys(t) {
                guard case .int(let n) = try s.value(k, p("n")) else { wrong.append("an item without n"); continue }
                let want = DurabilityScenarios.contents(Int(n), anchor: anchorStandIn)
                let tags = try s.list(k, p("tags")).compactMap { if case .string(let x) = $0 { x } else { nil } }
                let place: String? = if case .link(let pk) = try s.value(k, p("place")), case .string(let st) = try s.value(pk, street) { st } else { nil }
                let anchors = try s.list(k, p("anchors"))
                let scores = try s.dictionary(k, p("scores"))
                let mixed = canonical(try s.value(k, p("mixed")))
                if Set(tags) != Set(want.tags) || tags.count != want.tags.count || scores != want.scores
                    || place != want.street || mixed != canonical(want.mixed) || anchors.count != 1 {
                    wrong.append("item of commit \(n)")
                }
            }
            var problems = wrong.isEmpty ? [] : ["\(wrong.count) items with wrong contents, e.g. \(wrong.prefix(3))"]
            if try s.count("Place") != s.count(t) { problems.append("\(try s.count("Place")) places for \(try s.count(t)) items") }
            return problems
        }
    }

    /// How many `Item` objects of each commit number `db` holds (`DurabilityScenarios`).
    static func itemCounts(_ db: Database) throws -> [Int: Int] {
        try db.read { s in
            guard s.classSchema("Item") != nil else { return [:] }
            let t = try s.table("Item")
            let n = try s.property(t, "n")
            var out: [Int: Int] = [:]
            for k in try s.keys(t) {
                if case .int(let v) = try s.value(k, n) { out[Int(v), default: 0] += 1 }
            }
            return out
        }
    }

    /// Every commit reported as returned is in the file whole, every one reported as failed is absent, and
    /// nothing else is there but (whole) the one in flight when the process died.
    static func check(_ run: Run, _ counts: [Int: Int], sizes: (Int) -> Int, context: String) {
        for n in run.committed where counts[n] != sizes(n) {
            Issue.record("\(context): commit \(n) returned, but the file holds \(counts[n] ?? 0) of its \(sizes(n)) objects")
        }
        for n in run.failed where counts[n] != nil {
            Issue.record("\(context): commit \(n) threw, but the file holds \(counts[n]!) of its objects")
        }
        let inFlight = (run.committed.union(run.failed).max() ?? -1) + 1
        for (n, c) in counts where !run.committed.contains(n) {
            if n == inFlight && run.killed {
                if c != sizes(n) { Issue.record("\(context): the commit in flight (\(n)) is in the file partly: \(c) of \(sizes(n)) objects") }
            } else if !run.failed.contains(n) {
                Issue.record("\(context): the file holds commit \(n), which was never made")
            }
        }
    }

    static func smallThenLargeSize(_ n: Int) -> Int { n == 20 ? 300 : 1 }

    /// Defect: a direct commit after logged ones retired the log before its meta slot was durable, so a crash
    /// in between reopened the file at the version before the logged commits. Killed at every `fdatasync` of the
    /// sequence in turn (twenty logged commits, then one of ~1.2 MiB).
    @Test func aCrashAtAnySyncOfALargeCommitKeepsTheSmallCommitsBeforeIt() throws {
        var n = 1
        var sawCompleteRun = false
        while n <= 40 && !sawCompleteRun {
            let dir = TempDir()
            let path = dir.file("d.realm")
            let run = try Self.run(["small-then-large", path], inject: "fdatasync:signal=KILL:when=\(n)", dir: dir, tag: "kill\(n)")
            if !run.killed {
                #expect(run.status == 0, "run without a kill at fdatasync \(n) ended with status \(run.status): \(run.lines)")
                sawCompleteRun = true
            }
            let (counts, report) = try Self.contents(path)
            #expect(report.isOK, "killed at fdatasync \(n): \(report)")
            Self.check(run, counts, sizes: Self.smallThenLargeSize, context: "killed at fdatasync \(n)")
            n += 1
        }
        #expect(sawCompleteRun, "the sequence never ran to its end within 40 syncs")
    }

    /// Defect: records carried no identity of their log, so a log left beside a deleted file was replayed
    /// into a new file at the same path (after the new file's own records).
    @Test func aStaleLogIsNeverReplayedIntoANewFileAtTheSamePath() throws {
        let dir = TempDir()
        let path = dir.file("d.realm")
        let first = try Self.run(["commits", path, "10"], inject: nil, dir: dir, tag: "first")
        #expect(first.committed == Set(0..<10) && first.status == 0, "\(first.lines)")
        #expect(access(path + ".log", F_OK) == 0, "the first file left no log to be stale")
        unlink(path)
        unlink(path + ".lock")
        let child = try WorkerProcess(["durability", "commit-and-hang", path], stderrPath: dir.file("second.stderr"))
        #expect(child.readLine(timeout: 60) == "committed 0")
        child.sendKill()
        try child.waitForExit(timeout: 10)
        let (counts, report) = try Self.contents(path)
        #expect(report.isOK, "\(report)")
        #expect(counts == [0: 1], "the new file holds \(counts), expected only its own commit 0")
    }

    /// Defect: a checkpoint that failed after the commit's version was published made `commit()` throw, though
    /// the commit was durable and visible (a caller that retried wrote it twice). Every write to the data file
    /// fails with ENOSPC while the log still takes records: every commit returns, and every one survives.
    @Test func aFailingCheckpointIsNotTheCommitsFailure() throws {
        let dir = TempDir()
        let path = dir.file("d.realm")
        let setUp = try Self.run(["commits", path, "1"], inject: nil, dir: dir, tag: "setup")
        #expect(setUp.committed == [0])
        let run = try Self.run(["commits", path, "5"], inject: "pwrite64,pwritev:error=ENOSPC", onlyPath: path, dir: dir,
                               tag: "full", extra: ["--checkpoint-bytes", "0"])
        #expect(run.failed.isEmpty, "commits threw while only their checkpoints failed: \(run.lines)")
        #expect(run.committed == Set(1...5), "\(run.lines)")
        let (counts, report) = try Self.contents(path)
        #expect(report.isOK, "\(report)")
        #expect(counts == [0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1], "\(counts)")
    }

    /// Defect: EIO from the sync after a direct commit's meta slot made the commit throw while the version was
    /// already visible (and stayed so after reopening). Each `fdatasync` of the sequence fails in turn: every
    /// commit that returned is in the file, every one that threw is not, in the same process and after reopening.
    @Test func aFailedSyncLeavesNoTraceOfTheCommitThatThrew() throws {
        var n = 1
        var sawCleanRun = false
        while n <= 40 && !sawCleanRun {
            let dir = TempDir()
            let path = dir.file("d.realm")
            let run = try Self.run(["small-then-large", path], inject: "fdatasync:error=EIO:when=\(n)", dir: dir, tag: "eio\(n)")
            if run.failed.isEmpty && run.committed.count == 21 { sawCleanRun = true }
            let (counts, report) = try Self.contents(path)
            #expect(report.isOK, "EIO at fdatasync \(n): \(report)")
            Self.check(run, counts, sizes: Self.smallThenLargeSize, context: "EIO at fdatasync \(n)")
            n += 1
        }
        #expect(sawCleanRun, "every run within 40 syncs saw a failure")
    }
}
