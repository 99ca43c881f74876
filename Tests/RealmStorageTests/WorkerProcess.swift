import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the `realm-storage-worker` executable is, or a clear error naming every place looked at.
func workerExecutablePath() throws -> String {
    do {
        return try productExecutablePath("realm-storage-worker", environmentVariable: "REALM_STORAGE_WORKER")
    } catch let e as ProductNotFound {
        throw WorkerProcessError(e.description)
    }
}

struct WorkerProcessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A child process running the worker: its standard output is read line by line through a pipe, its standard
/// error goes to a file (read on failure, so a chatty child can never block on a full pipe).
final class WorkerProcess {
    let pid: pid_t
    let arguments: [String]
    private let stdoutFD: Int32
    private let stderrPath: String
    private var buffer: [UInt8] = []
    private var eof = false
    private var exitStatus: Int32?

    /// `launcher`: a program and its arguments that run the worker (e.g. `strace -f -e inject=...`); the
    /// worker's path and `arguments` follow them.
    init(_ arguments: [String], stderrPath: String, launcher: [String] = []) throws {
        let worker = try workerExecutablePath()
        let exe = launcher.first ?? worker
        self.arguments = arguments
        self.stderrPath = stderrPath
        // The pipe is created and made close-on-exec under a lock every spawn here takes, so no other child
        // spawned meanwhile by a test running in parallel inherits its write end (and keeps it open).
        spawnLock.lock()
        defer { spawnLock.unlock() }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw WorkerProcessError("pipe failed: errno \(errno)") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let errFD = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard errFD >= 0 else {
            close(fds[0]); close(fds[1])
            throw WorkerProcessError("cannot create \(stderrPath): errno \(errno)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies, so the child gets exactly fds 1 and 2 from these.
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errFD, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = (launcher + [worker] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, exe, &actions, nil, argv, environ)
        close(fds[1])
        close(errFD)
        guard rc == 0 else {
            close(fds[0])
            throw WorkerProcessError("posix_spawn \(exe) failed: errno \(rc)")
        }
        pid = child
        stdoutFD = fds[0]
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = try? waitForExit(timeout: 10)
        }
        close(stdoutFD)
    }

    /// The next line of standard output, or nil at end of file (the child closed it or died) or on timeout.
    func readLine(timeout: Double) -> String? {
        let deadline = monotonicNow() + timeout
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            if eof {
                if buffer.isEmpty { return nil }
                let line = String(decoding: buffer, as: UTF8.self)
                buffer.removeAll()
                return line
            }
            let left = deadline - monotonicNow()
            if left <= 0 { return nil }
            var p = pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, Int32(min(left * 1000, 1000).rounded(.up)))
            if r < 0 && errno != EINTR { eof = true; continue }
            if r <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(stdoutFD, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { eof = true; continue }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Every remaining line up to end of file (call after the child died or was killed).
    func remainingLines(timeout: Double) -> [String] {
        var out: [String] = []
        let deadline = monotonicNow() + timeout
        while let line = readLine(timeout: max(0, deadline - monotonicNow())) { out.append(line) }
        return out
    }

    /// Sends `signal` unless the child has been reaped already (its pid may belong to someone else by then).
    func sendKill(_ signal: Int32 = SIGKILL) {
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Whether the child has ended (reaps it if so; never blocks).
    func hasExited() -> Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status; return true }
        return false
    }

    /// Waits for the child to end; returns its wait status. Throws after `timeout` seconds (the child is then
    /// killed, so a hung child fails the test instead of hanging it).
    @discardableResult
    func waitForExit(timeout: Double) throws -> Int32 {
        if let s = exitStatus { return s }
        let deadline = monotonicNow() + timeout
        while true {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { exitStatus = status; return status }
            if r < 0 && errno != EINTR { throw WorkerProcessError("waitpid(\(pid)) failed: errno \(errno)") }
            if monotonicNow() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                exitStatus = status
                throw WorkerProcessError("worker \(arguments) did not finish within \(timeout) s (killed it)\(stderrTail())")
            }
            usleep(2000)
        }
    }

    /// The child's standard error so far, for failure messages.
    var stderrText: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func stderrTail() -> String {
        let s = stderrText
        return s.isEmpty ? "" : "; its stderr:\n" + String(s.suffix(4000))
    }

    /// How a wait status reads in a message.
    static func describe(_ status: Int32) -> String {
        let sig = status & 0x7f
        if sig == 0 { return "exit code \((status >> 8) & 0xff)" }
        return "signal \(sig)"
    }

    static func exitedNormally(_ status: Int32) -> Bool { status & 0x7f == 0 && (status >> 8) & 0xff == 0 }
    static func killedBy(_ status: Int32) -> Int32? { status & 0x7f == 0 ? nil : status & 0x7f }
}

private let spawnLock = NSLock()

func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
