import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// How the files beside a database are made and given up: a new name (a created data, lock or log file, the
/// compacted file renamed over the database, a copy) is durable only once its directory is synced; an open
/// that fails keeps nothing allocated.
@Suite struct FileCreationTests {
    static let stracePath: String? = ["/usr/bin/strace", "/bin/strace"].first { (p: String) in access(p, X_OK) == 0 }
    static let straceInstalled = stracePath != nil

    /// The worker creates a database, compacts it and writes a copy under `strace`; every file it creates and
    /// the rename must be followed by an `fsync` of the directory before the step that made it returns (a
    /// power cut before that can undo the creation or the rename, and with it every commit made after).
    @Test(.enabled(if: straceInstalled, "strace is not installed (CI installs it): directory sync test skipped"))
    func everyNewNameIsSyncedInItsDirectory() throws {
        let dir = TempDir()
        let directory = URL(fileURLWithPath: dir.path).resolvingSymlinksInPath().path
        let path = directory + "/a.realm"
        let trace = dir.file("trace.txt")
        let strace = try #require(Self.stracePath)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: strace)
        p.arguments = ["-f", "-y", "-qq", "-s", "256", "-o", trace,
                       "-e", "trace=open,openat,rename,renameat,renameat2,fsync,fdatasync,write",
                       try workerExecutablePath(), "create-compact-copy", path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "worker under strace: status \(p.terminationStatus)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)

        func isDirectorySync(_ line: String) -> Bool {
            line.contains("fsync(") && line.contains("<\(directory)>)") && line.hasSuffix("= 0")
        }
        /// A step ends where the worker prints its marker.
        func marker(_ word: String) -> Int? { lines.firstIndex { $0.contains("write(1") && $0.contains("\"\(word)\\n\"") } }
        /// The line that created `name` in the directory: its first open with O_CREAT that succeeded.
        func creation(_ name: String) -> Int? {
            lines.firstIndex { $0.contains("\"\(directory)/\(name)\"") && $0.contains("O_CREAT") && !$0.contains("= -1") }
        }
        let rename = lines.firstIndex { $0.contains("rename") && $0.contains("\"\(path).compact\", ") && $0.hasSuffix("= 0") }
        let steps: [(what: String, at: Int?, end: String)] = [
            ("creating the data file", creation("a.realm"), "created"),
            ("creating the lock file", creation("a.realm.lock"), "created"),
            ("creating the commit log", creation("a.realm.log"), "created"),
            ("creating the compacted file", creation("a.realm.compact"), "compacted"),
            ("renaming the compacted file", rename, "compacted"),
            ("creating the copy", creation("a.realm.copy"), "copied"),
        ]
        for step in steps {
            guard let at = step.at, let end = marker(step.end) else {
                Issue.record("\(step.what): not found in the trace (\(lines.count) lines)")
                continue
            }
            let synced = lines[(at + 1)..<max(at + 1, end)].contains(where: isDirectorySync)
            #expect(synced, "\(step.what) (\(lines[at])) is not followed by an fsync of \(directory) before `\(step.end)`")
        }
    }

    /// An open that fails in the lock file (here: its path is a directory) kept 128 bytes allocated each time.
    @Test func aFailedOpenKeepsNothingAllocated() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        try FileManager.default.createDirectory(atPath: path + ".lock", withIntermediateDirectories: false)
        let worker = try WorkerProcess(["open-repeatedly", path, "10100"], stderrPath: dir.file("worker.err"))
        let status = try worker.waitForExit(timeout: 300)
        let lines = worker.remainingLines(timeout: 5)
        #expect(WorkerProcess.exitedNormally(status), "\(WorkerProcess.describe(status))\(worker.stderrTail())")
        #expect(lines.first == "opened 0", "\(lines)")
        let growth = lines.compactMap { l -> Int? in l.hasPrefix("heap-growth ") ? Int(l.dropFirst("heap-growth ".count)) : nil }.first
        // 10,000 opens: 128 bytes each (and the allocator's overhead) would be over 1,280,000; the heap grows in
        // steps of 128 KiB and more, so a few steps are allowed for whatever else moves it.
        #expect(growth.map { $0 < 400_000 } == true, "heap grew by \(growth.map(String.init) ?? "?") bytes over 10,000 failed opens")
    }
}
