import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage

/// A power cut keeps what was synced and any part of what was not: unsynced writes dropped, kept out of order,
/// or torn at 512-byte sectors, and creations, renames and unlinks undone unless the directory was synced (the
/// states ALICE and CrashMonkey build for real file systems). Each test runs a worker scenario once under
/// `strace`, which records every file operation with its bytes (`PowerLossTrace`), builds the states a power
/// cut after each operation can leave (`PowerLossState`), and opens each as the next process would: it opens,
/// `verify()` passes, every commit that had returned is there whole, and nothing else is there but, whole, the
/// commit in flight.
///
/// Bounded by default (a sample of the states at each point); `REALM_POWERLOSS_ALL=1` checks every state the
/// generator makes (each unsynced write dropped alone, kept alone and torn, and more random subsets).
@Suite(.serialized) struct PowerLossTests {
    static let key = (0..<64).map { UInt8(($0 * 7 + 3) & 0xFF) }

    static var exhaustive: Bool { ProcessInfo.processInfo.environment["REALM_POWERLOSS_ALL"].map { $0 != "0" } ?? false }

    static func smallThenLargeSize(_ n: Int) -> Int { n == 20 ? 300 : 1 }

    /// Twenty logged commits, then a direct one of ~1.2 MiB, then the checkpoint at exit.
    @Test func everyPowerLossStateOfSmallThenLargeCommitsKeepsEveryReturnedCommit() throws {
        try Self.check(scenario: "small-then-large", extra: [], options: DatabaseOptions(), sizes: Self.smallThenLargeSize)
    }

    /// The same with a checkpoint after every logged commit (data file writes, syncs and log resets each time).
    @Test func everyPowerLossStateWithACheckpointAfterEachCommitKeepsEveryReturnedCommit() throws {
        try Self.check(scenario: "small-then-large", extra: ["--checkpoint-bytes", "0"], options: DatabaseOptions(),
                       sizes: Self.smallThenLargeSize)
    }

    /// An encrypted file, where every commit is direct.
    @Test func everyPowerLossStateOfAnEncryptedFileKeepsEveryReturnedCommit() throws {
        let hex = Self.key.map { String(format: "%02x", $0) }.joined()
        try Self.check(scenario: "small-then-large", extra: ["--key", hex], options: DatabaseOptions(encryptionKey: Self.key),
                       sizes: Self.smallThenLargeSize)
    }

    /// The instrument itself: with the syncs that make the log's records durable left out of the trace (as if
    /// the log were written without `O_DSYNC`), the states show returned commits lost; with the sync of the
    /// data file before a direct commit's meta slot left out, they show its slot naming nodes that never
    /// reached the disk.
    @Test func theStatesShowTheLossWhenASyncIsLeftOut() throws {
        let (trace, _, _) = try Self.record(scenario: "small-then-large", extra: [])
        let recordSyncs = trace.ops.indices.filter { if case .syncWrite = trace.ops[$0] { true } else { false } }
        let a = try Self.checkStates(trace.without(syncsAt: Set(recordSyncs)), lockCopy: nil, options: DatabaseOptions(),
                                     sizes: Self.smallThenLargeSize, samples: 0, randomSubsets: 0, exhaustive: false)
        let lost = a.failures.filter { $0.contains("had returned, but the file holds 0") }
        #expect(lost.count > 0, "\(a.checked) states without the records' syncs, and none lost a returned commit")
        // The direct commit's first sync: the first sync of the data file after commit 19 returned.
        let ack19 = try #require(trace.ops.firstIndex { if case .ack(19) = $0 { true } else { false } })
        // (Two files are the data file in the trace: the empty one the first open made, and the new file, first
        // called d.realm.new, renamed over it; only the second is synced after the commits.)
        let dataFiles = Set(trace.names.filter { $0.value == "d.realm" || $0.value == "d.realm.new" }.map(\.key))
        let nodesSync = try #require(trace.ops.indices.first { i in
            guard i > ack19, case .sync(let f) = trace.ops[i] else { return false }
            return dataFiles.contains(f)
        })
        let b = try Self.checkStates(trace.without(syncsAt: [nodesSync]), lockCopy: nil, options: DatabaseOptions(),
                                     sizes: Self.smallThenLargeSize, samples: 0, randomSubsets: 0, exhaustive: false)
        print("power loss, the instrument: without the records' syncs \(lost.count) of \(a.checked) states lost a returned commit; "
              + "without the sync before the direct commit's slot \(b.failures.count) of \(b.checked) failed")
        for f in b.failures.prefix(3) { print("  \(f)") }
        #expect(b.failures.count > 0, "\(b.checked) states without the sync before the slot, and none failed")
    }

    // MARK: -

    /// Runs `durability SCENARIO PATH EXTRA` once under `strace`, then checks the states a power cut after each
    /// of its file operations can leave: none may fail.
    static func check(scenario: String, extra: [String], options: DatabaseOptions, sizes: (Int) -> Int,
                      tag: String = #function) throws {
        let (trace, lockCopy, lines) = try record(scenario: scenario, extra: extra, tag: tag)
        #expect(trace.failedCommits.isEmpty, "commits failed in a run without faults: \(lines)")
        let acks = trace.ops.compactMap { if case .ack(let n) = $0 { n } else { nil } }
        #expect(acks == Array(0...20), "the trace shows commits \(acks) returned; the worker printed \(lines)")
        let samples = ProcessInfo.processInfo.environment["REALM_POWERLOSS_SAMPLES"].flatMap { Int($0) } ?? 10
        let r = try checkStates(trace, lockCopy: lockCopy, options: options, sizes: sizes, samples: samples,
                                randomSubsets: exhaustive ? 8 : 4)
        print("power loss, \(tag): \(r.checked) distinct states checked (\(r.generated) generated) at \(r.points) crash points "
              + "of \(trace.ops.count) file operations\(exhaustive ? ", exhaustive" : ""); \(r.failures.count) failed, "
              + "\(r.creationFailures.count) while the file was created, \(r.unsyncedNameFailures.count) without the file's name")
        for f in r.creationFailures.prefix(20) { print("  created in part, refused: \(f)") }
        for f in r.unsyncedNameFailures.prefix(20) { print("  the file's name lost: \(f)") }
        for f in r.failures.prefix(100) { print("  FAILED: \(f)") }
        // (A new file is made under another name and renamed into place: a power cut leaves no file in part.)
        for f in r.creationFailures.prefix(10) { Issue.record("\(f)") }
        // (The data file's directory is synced when the file is made: losing its name is a failure like any other.)
        for f in r.unsyncedNameFailures.prefix(10) { Issue.record("\(f)") }
        for f in r.failures.prefix(10) { Issue.record("\(f)") }
        #expect(r.failures.count == 0, "\(r.failures.count) of \(r.checked) power-loss states failed")
        #expect(r.checked > r.points, "too few states were checked to mean anything")
    }

    /// Runs `durability SCENARIO PATH EXTRA` once under `strace` and reads what it did to its directory; also
    /// the lock file it left.
    static func record(scenario: String, extra: [String], tag: String = #function) throws
        -> (trace: PowerLossTrace, lockCopy: [UInt8]?, lines: [String]) {
        let strace = try #require(DurabilityTests.strace, "strace is not installed (apt-get install strace)")
        let dir = TempDir(tag)
        try FileManager.default.createDirectory(atPath: dir.file("run"), withIntermediateDirectories: true)
        let runDir = realPath(dir.file("run"))
        let path = runDir + "/d.realm"
        let traceFile = dir.file("trace")
        let launcher = [strace, "-f", "-qq", "-X", "raw", "-yy", "-s", "0", "-e", "abbrev=none", "-e", "write=all",
                        "-e", "trace=open,openat,creat,write,pwrite64,writev,pwritev,pwritev2,ftruncate,fallocate,fsync,"
                            + "fdatasync,rename,renameat,renameat2,unlink,unlinkat,close,dup,dup2,dup3",
                        "-o", traceFile]
        let child = try WorkerProcess(["durability", scenario, path] + extra, stderrPath: dir.file("worker.stderr"), launcher: launcher)
        var lines: [String] = []
        while let line = child.readLine(timeout: 300) { lines.append(line) }
        let status = try child.waitForExit(timeout: 60)
        try #require(WorkerProcess.exitedNormally(status), "the worker ended with \(WorkerProcess.describe(status)): \(lines)\(child.stderrTail())")
        let trace = try PowerLossTrace.parse(tracePath: traceFile, directory: runDir)
        #expect(trace.unsupported.count == 0, "the trace holds operations the model does not follow: \(trace.unsupported.prefix(3))")
        return (trace, FileManager.default.contents(atPath: path + ".lock").map { [UInt8]($0) }, lines)
    }

    struct Outcome {
        var generated = 0, checked = 0, points = 0
        var failures: [String] = []
        /// Before the data file's first sync nothing was committed: a new file torn there (its first meta page
        /// in part, or its size without its bytes) is refused as truncated or foreign (a known defect: the
        /// file is created in place, not written under another name and renamed into place).
        var creationFailures: [String] = []
        /// A data file whose directory was never synced after its creation (an encrypted file has no commit
        /// log, whose creation syncs the directory): a power cut may take its name, and every commit with it
        /// (a known defect).
        var unsyncedNameFailures: [String] = []
    }

    /// Builds the states a power cut after each operation of `trace` can leave and checks each distinct one.
    static func checkStates(_ trace: PowerLossTrace, lockCopy: [UInt8]?, options: DatabaseOptions, sizes: (Int) -> Int,
                            samples: Int, randomSubsets: Int, exhaustive: Bool = PowerLossTests.exhaustive) throws -> Outcome {
        let acks = trace.ops.compactMap { if case .ack(let n) = $0 { n } else { nil } }
        let durableAt = trace.durableAt()
        // The highest commit number reported as returned before each point.
        var lastAck = [Int](repeating: -1, count: trace.ops.count + 1)
        for i in 0..<trace.ops.count {
            if case .ack(let n) = trace.ops[i] { lastAck[i + 1] = max(lastAck[i], n) } else { lastAck[i + 1] = lastAck[i] }
        }
        var rng = SplitMix64(seed: 25)
        var seen: Set<Int> = []
        var r = Outcome()
        let firstSync = trace.ops.firstIndex { if case .sync = $0 { true } else { false } } ?? 0
        let stateRoot = try StateRoot()
        for point in 0...trace.ops.count {
            // A point just before a `committed N` line leaves the same files as the one after it, where more
            // is expected of them.
            if point < trace.ops.count, case .ack = trace.ops[point] { continue }
            r.points += 1
            var states = trace.states(at: point, durableAt: durableAt, exhaustive: exhaustive, samples: samples,
                                      randomSubsets: randomSubsets, using: &rng)
            if point == trace.ops.count, let lockCopy {
                states.append(PowerLossState(point: point, kept: states[0].kept, lockFile: .copy(lockCopy),
                                             label: "every write kept, the lock file left by the process"))
            }
            if point % 20 == 0, let size = lockCopy?.count {
                states.append(PowerLossState(point: point, kept: states[0].kept, lockFile: .zeros(size),
                                             label: "every unsynced write kept, a lock file of zeros"))
            }
            let bases = trace.baseImages(at: point, durableAt: durableAt)
            for state in states {
                r.generated += 1
                let files = trace.files(state, durableAt: durableAt, bases: bases)
                var hasher = Hasher()
                hasher.combine(lastAck[point])
                for f in files {
                    hasher.combine(f.name)
                    f.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
                }
                switch state.lockFile {
                case .absent: hasher.combine(0)
                case .zeros(let n): hasher.combine(1); hasher.combine(n)
                case .copy: hasher.combine(2)
                }
                guard seen.insert(hasher.finalize()).inserted else { continue }
                r.checked += 1
                let where_ = "power cut after \(trace.describe(point - 1)) (\(point) operations done), \(state.label)"
                guard let problem = try checkState(files, lockFile: state.lockFile, in: stateRoot.path + "/state\(r.checked)",
                                                   options: options, returned: lastAck[point], last: acks.last ?? 0, sizes: sizes)
                else { continue }
                if point <= firstSync && lastAck[point] < 0 {
                    r.creationFailures.append("\(where_): \(problem)")
                } else if state.undone.contains(where: { if case .create("d.realm", _) = trace.ops[$0] { true } else { false } }) {
                    r.unsyncedNameFailures.append("\(where_): \(problem)")
                } else {
                    r.failures.append("\(where_): \(problem)")
                }
            }
        }
        return r
    }

    /// Writes `files` into `dir`, opens the database there as the next process would, and says what is wrong
    /// with it (nil when nothing is): commits up to `returned` must be there whole, the next one (if the
    /// scenario makes it: `last` is its last commit) whole or not at all, and no other.
    static func checkState(_ files: [(name: String, bytes: [UInt8])], lockFile: PowerLossState.LockFileContents, in dir: String,
                           options: DatabaseOptions, returned: Int, last: Int, sizes: (Int) -> Int) throws -> String? {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for f in files {
            try #require(FileManager.default.createFile(atPath: dir + "/" + f.name, contents: Data(f.bytes)))
        }
        switch lockFile {
        case .absent: break
        case .zeros(let n): try #require(FileManager.default.createFile(atPath: dir + "/d.realm.lock", contents: Data(count: n)))
        case .copy(let b): try #require(FileManager.default.createFile(atPath: dir + "/d.realm.lock", contents: Data(b)))
        }
        var problems: [String] = []
        do {
            let db = try Database.open(path: dir + "/d.realm", options: options)
            let report = try db.verify()
            if !report.isOK { problems.append("verify: \(report)") }
            problems += try DurabilityTests.contentProblems(db)
            let counts = try DurabilityTests.itemCounts(db)
            for n in 0..<(returned + 1) where counts[n] != sizes(n) {
                problems.append("commit \(n) had returned, but the file holds \(counts[n] ?? 0) of its \(sizes(n)) objects")
            }
            for (n, c) in counts.sorted(by: { $0.key < $1.key }) where n > returned {
                if n != returned + 1 || n > last {
                    problems.append("the file holds commit \(n), which had not begun")
                } else if c != sizes(n) {
                    problems.append("the commit in flight (\(n)) is in the file partly: \(c) of \(sizes(n)) objects")
                }
            }
        } catch {
            problems.append("opening failed: \(error)")
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// Where the states are written: a directory on a RAM file system when there is one (the states are
    /// built from the trace, so the file system they are checked on does not matter, and opening each one
    /// syncs), else the temporary directory. Removed when let go.
    final class StateRoot {
        let path: String
        init() throws {
            let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : FileManager.default.temporaryDirectory.path
            path = "\(base)/rbtest-powerloss-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static func realPath(_ path: String) -> String {
        guard let p = realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }
}
