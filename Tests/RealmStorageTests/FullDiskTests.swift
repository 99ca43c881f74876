import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

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

    /// A logged commit that has to grow the commit log on a full disk writes nothing of its record, so it
    /// throws and the handle goes on writing once there is space. It used to overwrite the record's first block
    /// with zeros, the way a failed record write is made unreplayable; when the record began where the log
    /// ended, those zeros needed the missing space too, and failing to write them stopped the handle
    /// (`writesStopped`) until the database was reopened. Which records begin there depends on their sizes:
    /// these name lengths gave such a record with the build that had the fault.
    @Test(arguments: [20, 40, 240, 520, 820]) func aLogThatCannotGrowLeavesTheHandleWriting(nameLength: Int) throws {
        let fs = try SmallFileSystem(kilobytes: 4096)
        defer { withExtendedLifetime(fs) {} }  // unmounted only after every database on it is closed
        try runCommits(fs: fs, path: fs.file("a.realm"), encrypted: false, nameLength: nameLength)
    }

    func runCommits(fs: SmallFileSystem, path: String, encrypted: Bool, nameLength: Int = 300) throws {
        var options = options(encrypted: encrypted)
        options.checkpointBytes = 64 << 10  // checkpoints write the data file while the disk is full too
        let db = try Database.open(path: path, options: options)
        try db.write { tx in try tx.createClasses(personDogSchema) }
        try fs.fill()
        var failure: StorageError?
        let name = String(repeating: "n", count: nameLength)
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
