import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// writeCopy(to:), compact() and shouldCompactOnLaunch: contents kept exactly, space given back, and refusals
/// with clear errors when the file is in use.
@Suite struct MaintenanceTests {
    typealias Kit = ErrorTestKit

    /// A populated database with most objects deleted again, so most of the file is free space.
    func makeSparseDatabase(_ db: Database) throws {
        try Kit.populate(db, people: 150)
        try db.write { tx in
            try tx.setSchemaVersion(3)
            let people = try tx.table("Person"), dogs = try tx.table("Dog"), things = try tx.table("Thing")
            for (i, k) in try tx.keys(people).enumerated() where i % 4 != 0 { try tx.delete(people, k) }
            for (i, k) in try tx.keys(dogs).enumerated() where i % 3 == 0 { try tx.delete(dogs, k) }
            for (i, k) in try tx.keys(things).enumerated() where i % 2 == 0 { try tx.delete(things, k) }
        }
    }

    /// A sparse database closed again: its path, contents and size.
    func makeSparseFile(_ dir: TempDir) throws -> (path: String, contents: Kit.Contents, size: Int) {
        let path = dir.file("a.realm")
        let contents: Kit.Contents
        do {
            let db = try Database.open(path: path)
            try makeSparseDatabase(db)
            contents = try Kit.contents(db)
        }
        return (path, contents, Kit.fileSize(path))
    }

    func expectSameDatabase(_ a: Database, _ b: Database, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ca = try Kit.contents(a), cb = try Kit.contents(b)
        #expect(ca == cb, "contents differ: \(ca) vs \(cb)", sourceLocation: sourceLocation)
        #expect(try Kit.indexMismatches(b).isEmpty, sourceLocation: sourceLocation)
        let report = try b.verify()
        #expect(report.isOK, "\(report)", sourceLocation: sourceLocation)
    }

    // MARK: writeCopy

    @Test func writeCopyIsIdenticalAndSmaller() throws {
        let dir = TempDir()
        let path = dir.file("a.realm"), copyPath = dir.file("copy.realm")
        let db = try Database.open(path: path)
        try makeSparseDatabase(db)
        try db.writeCopy(to: copyPath)
        #expect(!Kit.exists(copyPath + ".lock"))
        let copy = try Database.open(path: copyPath)
        try expectSameDatabase(db, copy)
        #expect(Kit.fileSize(copyPath) < Kit.fileSize(path) / 2, "copy \(Kit.fileSize(copyPath)) bytes, original \(Kit.fileSize(path))")
        try db.read { (s: Snapshot) throws in #expect(s.schemaVersion == 3) }
        try copy.read { (s: Snapshot) throws in #expect(s.schemaVersion == 3) }
        // Object keys are never reused, in the copy either: both create the same next key.
        let next = try db.write { tx in try tx.createObject("Dog", ["name": .string("new")]) }
        let nextInCopy = try copy.write { tx in try tx.createObject("Dog", ["name": .string("new")]) }
        #expect(next == nextInCopy)
    }

    @Test func writeCopyRefusesAnExistingPath() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir, "a.realm")
        let existing = dir.file("existing.txt")
        Kit.write(Array("keep me".utf8), to: existing)
        let e = Kit.storageError { try db.writeCopy(to: existing) }
        guard case .io(let p, _, let code)? = e else { Issue.record("\(String(describing: e))"); return }
        #expect(p == existing && code == EEXIST)
        #expect(Kit.bytes(existing) == Array("keep me".utf8))
        #expect(!Kit.exists(existing + ".lock"))
        // Also the database's own file.
        #expect(throws: StorageError.self) { try db.writeCopy(to: db.path) }
        // A directory that does not exist.
        let nowhere = dir.file("no/such/dir/copy.realm")
        #expect(throws: StorageError.self) { try db.writeCopy(to: nowhere) }
        #expect(!Kit.exists(nowhere))
        if let e { print("  \(e)") }
    }

    // MARK: compact

    @Test func compactShrinksInPlaceAndKeepsEverything() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        let reference = try Database.inMemory(identifier: "maintenance-reference-\(UUID())")
        try makeSparseDatabase(reference)
        let before: Int
        do {
            let db = try Database.open(path: path)
            try makeSparseDatabase(db)
            before = Kit.fileSize(path)
            try db.compact()
            #expect(Kit.fileSize(path) < before / 2, "\(before) → \(Kit.fileSize(path)) bytes")
            try expectSameDatabase(reference, db)
            // Still usable: writes, reads, and compacting again.
            try db.write { tx in try tx.createObject("Person", ["id": .int(-1), "name": .string("after")]) }
            try reference.write { tx in try tx.createObject("Person", ["id": .int(-1), "name": .string("after")]) }
            try db.compact()
            try expectSameDatabase(reference, db)
        }
        let reopened = try Database.open(path: path)
        try expectSameDatabase(reference, reopened)
        #expect(!Kit.exists(path + ".compact"))
    }

    @Test func compactRefusesWhileThisProcessReads() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        let db = try Database.open(path: path)
        try makeSparseDatabase(db)
        let size = Kit.fileSize(path)
        let snapshot = try db.snapshot()
        let e = try #require(Kit.storageError { try db.compact() })
        // Not "in use by another process": this process holds the snapshot, and the message must say so.
        if case .inUseByAnotherProcess = e { Issue.record("reported as another process: \(e)") }
        #expect(e.description.contains(path) && e.description.contains("compact") && e.description.contains("1 snapshot"), "\(e)")
        #expect(!e.description.contains("another process"), "\(e)")
        print("  \(e)")
        #expect(Kit.fileSize(path) == size)
        #expect(try snapshot.count("Person") > 0)
        snapshot.close()
        try db.compact()
        #expect(Kit.fileSize(path) < size)
    }

    /// compact() from the thread that has a write transaction open used to wait for that transaction forever.
    @Test func compactRefusesDuringAWriteOnTheSameThread() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir, "a.realm")
        let tx = try db.beginWrite()
        try tx.createObject("Person", ["id": .int(1)])
        #expect(throws: StorageError.writeInProgress(path: db.path)) { try db.compact() }
        try tx.commit()
        try db.compact()
        try db.read { (s: Snapshot) throws in #expect(try s.count("Person") == 1) }
    }

    /// Another process holding the lock file shared (as every process with the database open does) blocks
    /// compaction; once it is gone, compaction works.
    @Test func compactRefusesWhileAnotherProcessHasTheFileOpen() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        let db = try Database.open(path: path)
        try makeSparseDatabase(db)
        let size = Kit.fileSize(path)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 9<\"$1\"; flock -s 9; echo locked; exec sleep 3", "sh", path + ".lock"]
        let out = Pipe()
        holder.standardOutput = out
        try holder.run()
        defer { if holder.isRunning { holder.terminate(); holder.waitUntilExit() } }
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        try #require(line.hasPrefix("locked"), "the helper did not take the lock: '\(line)'")

        let e = Kit.storageError { try db.compact() }
        #expect(e == .inUseByAnotherProcess(path: path, operation: "compact"))
        if let e { print("  \(e)") }
        #expect(Kit.fileSize(path) == size)
        // Reads and writes go on meanwhile.
        try db.write { tx in try tx.createObject("Person", ["id": .int(-5)]) }
        holder.terminate()
        holder.waitUntilExit()
        try db.compact()
        #expect(Kit.fileSize(path) < size)
        #expect(try db.verify().isOK)
    }

    // MARK: shouldCompactOnLaunch

    @Test func shouldCompactOnLaunch() throws {
        let dir = TempDir()
        let (path, expected, size) = try makeSparseFile(dir)
        let calls = Kit.Locked<[(Int, Int)]>([])
        // Declined: called once with the sizes, nothing changes.
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(shouldCompactOnLaunch: { total, used in
                calls.withLock { $0.append((total, used)) }
                return false
            }))
            #expect(db.launchCompaction == .declined)
            #expect(Kit.fileSize(path) == size)
            #expect(try Kit.contents(db) == expected)
        }
        var seen = calls.withLock { $0 }
        try #require(seen.count == 1)
        #expect(seen[0].0 == size && seen[0].1 > 0 && seen[0].1 <= seen[0].0 / 2, "\(seen[0])")
        // Accepted: compacted before the database is returned.
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(shouldCompactOnLaunch: { total, used in
                calls.withLock { $0.append((total, used)) }
                return true
            }))
            #expect(Kit.fileSize(path) < size / 2, "\(db.launchCompaction)")
            #expect(db.launchCompaction == .compacted(fromBytes: size, toBytes: Kit.fileSize(path)))
            #expect(try Kit.contents(db) == expected)
            #expect(try db.verify().isOK)
            // Only on launch: opening it again while it is open does not ask again.
            let again = try Database.open(path: path, options: DatabaseOptions(shouldCompactOnLaunch: { _, _ in
                calls.withLock { $0.append((-1, -1)) }
                return true
            }))
            #expect(again === db)
            #expect(again.launchCompaction == .compacted(fromBytes: size, toBytes: Kit.fileSize(path)))
        }
        seen = calls.withLock { $0 }
        #expect(seen.count == 2)
        if seen.count >= 2 { #expect(seen[1].0 == size && seen[1].1 <= seen[1].0) }
        // A compacted file has (almost) nothing left to give back.
        let compacted = Kit.fileSize(path)
        _ = try Database.open(path: path, options: DatabaseOptions(shouldCompactOnLaunch: { total, used in
            calls.withLock { $0.append((total, used)) }
            return false
        }))
        if let last = calls.withLock({ $0.last }) {
            #expect(last.0 == compacted && last.1 <= last.0 && last.1 > last.0 / 2, "\(last)")
        }
    }

    /// Another open description of the lock file holding its shared lock, as another process (or a process
    /// this one is starting, until it execs) does.
    final class LockHolder: @unchecked Sendable {
        // Safe: `fd` is set in init and closed once, by `release`, from one thread at a time.
        private var fd: Int32
        init(_ path: String) throws {
            fd = open(path + ".lock", O_RDWR | O_CLOEXEC)
            guard fd >= 0, flock(fd, LOCK_SH) == 0 else { throw StorageError.io(path: path, operation: "hold", errno: errno) }
        }
        func release() {
            if fd >= 0 { close(fd) }
            fd = -1
        }
        deinit { release() }
    }

    @Test func launchCompactionHeldByAnotherHolderIsSkippedWithItsReason() throws {
        let dir = TempDir()
        let (path, expected, size) = try makeSparseFile(dir)
        let holder = try LockHolder(path)
        defer { holder.release() }
        let db = try Database.open(path: path, options: DatabaseOptions(shouldCompactOnLaunch: { _, _ in true }))
        guard case .skipped(let reason) = db.launchCompaction else {
            Issue.record("expected a skipped compaction, got \(db.launchCompaction)")
            return
        }
        #expect(reason.contains("open in another process"), "\(reason)")
        #expect(Kit.fileSize(path) == size)
        #expect(try Kit.contents(db) == expected)
        #expect(try db.verify().isOK)
    }

    @Test func launchCompactionWaitsOutABriefHolder() throws {
        let dir = TempDir()
        let (path, expected, size) = try makeSparseFile(dir)
        let holder = try LockHolder(path)
        defer { holder.release() }
        // The holder lets go a moment after the compaction was accepted, as a starting process does when it execs.
        let db = try Database.open(path: path, options: DatabaseOptions(shouldCompactOnLaunch: { _, _ in
            Thread.detachNewThread {
                usleep(2_000)
                holder.release()
            }
            return true
        }))
        #expect(db.launchCompaction == .compacted(fromBytes: size, toBytes: Kit.fileSize(path)))
        #expect(Kit.fileSize(path) < size / 2)
        #expect(try Kit.contents(db) == expected)
    }
}
