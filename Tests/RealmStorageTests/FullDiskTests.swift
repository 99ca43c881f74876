import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted on a new directory for one test, unmounted and removed afterwards: a disk that can be
/// filled in a moment. Needs the right to mount (root; CI runs as root).
final class SmallFileSystem {
    let path: String
    /// The file `fill()` wrote, and how many bytes.
    private(set) var fillerBytes = 0
    var filler: String { path + "/filler" }

    /// Whether a tmpfs can be mounted here (tried once).
    static let canMount: Bool = {
        guard let fs = try? SmallFileSystem(kilobytes: 64) else { return false }  // (any failure means "cannot")
        return access(fs.path, W_OK) == 0
    }()

    init(kilobytes: Int) throws {
        path = FileManager.default.temporaryDirectory.path + "/rbtest-smallfs-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let status = Self.run(["mount", "-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
        guard status == 0 else {
            rmdir(path)
            throw StorageTestFailure("mount -t tmpfs on \(path) failed (status \(status))")
        }
    }

    deinit {
        if Self.run(["umount", path]) != 0 { _ = Self.run(["umount", "-l", path]) }
        rmdir(path)
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Writes zeros to `filler` until the file system is full.
    func fill() throws {
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StorageTestFailure("cannot create \(filler): errno \(errno)") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 { fillerBytes += n; continue }
            if n < 0 && errno == EINTR { continue }
            guard n < 0 && errno == ENOSPC else { throw StorageTestFailure("filling \(filler): errno \(errno)") }
            return
        }
    }

    /// Gives `bytes` of the filler back.
    func free(_ bytes: Int) {
        fillerBytes = max(0, fillerBytes - bytes)
        _ = truncate(filler, off_t(fillerBytes))
    }

    /// Runs a command found on the usual paths; its exit status (-1 when it could not be run).
    @discardableResult
    static func run(_ arguments: [String]) -> Int32 {
        let directories = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        guard let exe = directories.map({ $0 + "/" + arguments[0] }).first(where: { access($0, X_OK) == 0 }) else { return -1 }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = Array(arguments.dropFirst())
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }
}

struct StorageTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A full disk is an error that names the file, never a crash (a store into a mapped page the file system has
/// no block for raises SIGBUS), and leaves nothing behind that stops the database from working once there is
/// space again.
@Suite(.serialized, .enabled(if: SmallFileSystem.canMount, "cannot mount a tmpfs here (needs root; CI runs as root): full-disk tests skipped"))
struct FullDiskTests {
    func options(encrypted: Bool) -> DatabaseOptions {
        DatabaseOptions(encryptionKey: encrypted ? (0..<64).map { UInt8(255 - $0) } : nil)
    }

    /// On a full disk, opening a new database fails with ENOSPC naming the file; with one more page free each
    /// time, the opens fail the same way until one succeeds (each failure leaves nothing in the way); the
    /// database then works once there is space.
    @Test(arguments: [false, true]) func openingANewDatabaseOnAFullDisk(encrypted: Bool) throws {
        let fs = try SmallFileSystem(kilobytes: 4096)
        defer { withExtendedLifetime(fs) {} }  // unmounted only after every database on it is closed
        let path = fs.file("a.realm")
        let options = options(encrypted: encrypted)
        try fs.fill()
        var failures: [String] = []
        var opened = false
        for _ in 0..<64 {
            do {
                _ = try Database.open(path: path, options: options)
                opened = true
                break
            } catch let e as StorageError {
                guard case .io(let p, _, let code) = e, code == ENOSPC, p.hasPrefix(path) else {
                    Issue.record("not an ENOSPC error naming the file: \(e)")
                    return
                }
                failures.append("\(e)")
            }
            fs.free(4096)
        }
        #expect(opened, "still failing with \(fs.fillerBytes) bytes of filler")
        #expect(!failures.isEmpty)
        for f in Set(failures).sorted() { print("  \(f)") }

        unlink(fs.filler)
        do {
            let db = try Database.open(path: path, options: options)
            try db.write { tx in
                try tx.createClasses(personDogSchema)
                _ = try tx.createObject("Dog", ["name": .string("rex")])
            }
        }
        let db = try Database.open(path: path, options: options)
        #expect(try db.read { try $0.count("Dog") } == 1)
        #expect(try db.verify().isOK)
    }

    /// Commits on a disk that fills up: one fails with ENOSPC (no crash on the way: the commit log grows by
    /// writing, the data file is only read through its map), and with space back commits work and the file
    /// verifies.
    @Test(arguments: [false, true]) func committingOnAFullDisk(encrypted: Bool) throws {
        let fs = try SmallFileSystem(kilobytes: 4096)
        defer { withExtendedLifetime(fs) {} }  // unmounted only after every database on it is closed
        let path = fs.file("a.realm")
        try runCommits(fs: fs, path: path, encrypted: encrypted)
    }

    func runCommits(fs: SmallFileSystem, path: String, encrypted: Bool) throws {
        var options = options(encrypted: encrypted)
        options.checkpointBytes = 64 << 10  // checkpoints write the data file while the disk is full too
        let db = try Database.open(path: path, options: options)
        try db.write { tx in try tx.createClasses(personDogSchema) }
        try fs.fill()
        var failure: StorageError?
        let name = String(repeating: "n", count: 300)
        for round in 0..<1000 where failure == nil {
            do {
                try db.write { tx in
                    for i in 0..<20 { _ = try tx.createObject("Dog", ["name": .string("\(round).\(i) \(name)")]) }
                }
            } catch let e as StorageError {
                failure = e
            }
        }
        guard case .io(let p, _, let code)? = failure else {
            Issue.record("expected an I/O error, got \(String(describing: failure))")
            return
        }
        #expect(code == ENOSPC && p.hasPrefix(path), "\(failure!)")
        print("  \(failure!)")
        unlink(fs.filler)
        try db.write { tx in _ = try tx.createObject("Dog", ["name": .string("after")]) }
        #expect(try db.verify().isOK)
    }

    /// A process killed with commits only in the log leaves holes in the data file where their pages go; a
    /// read-only first opener on a full disk compared them through the mapping and died of SIGBUS. And a
    /// compaction that ran out of space left its half-written copy behind, taking the space.
    @Test func readingAndCompactingAKilledWritersFileOnAFullDisk() throws {
        let fs = try SmallFileSystem(kilobytes: 4096)
        let path = fs.file("k.realm")
        let child = try WorkerProcess(["durability", "commit-and-hang", path], stderrPath: FileManager.default.temporaryDirectory.path + "/rbtest-fullhang.stderr")
        #expect(child.readLine(timeout: 60) == "committed 0")
        child.sendKill()
        try child.waitForExit(timeout: 10)
        try fs.fill()
        // Read-only first opener: compares the log's pages with the file, reads them, verifies.
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
            #expect(try db.read { try $0.count("Item") } == 1)
        } catch let e as StorageError {
            // Replaying needs space it does not have: a clear error is right too, never a crash.
            #expect("\(e)".contains("No space left"), "\(e)")
        }
        // Compaction cannot finish: it says so and leaves nothing behind.
        do {
            let db = try Database.open(path: path)
            #expect(throws: StorageError.self) { try db.compact() }
            #expect(access(path + ".compact", F_OK) != 0, "the failed compaction's copy was left behind")
            #expect(access(path + ".compact.lock", F_OK) != 0)
        } catch let e as StorageError {
            #expect("\(e)".contains("No space left"), "\(e)")
        }
        fs.free(1 << 20)
        let db = try Database.open(path: path)
        #expect(try db.read { try $0.count("Item") } == 1)
        #expect(try db.verify().isOK)
    }
}
