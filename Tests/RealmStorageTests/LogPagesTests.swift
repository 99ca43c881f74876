import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage

/// Pages of logged commits live only in the commit log until a checkpoint (DECISIONS 53): readers of every
/// process find them through the log, checkpoints fold them into the data file, and the log's records are
/// only overwritten once no reader can still read them.
@Suite struct LogPagesTests {
    typealias Kit = ErrorTestKit

    /// A database that checkpoints every 48 KiB of records, after at least eight small commits and until its
    /// newest version has pages only in the log; the seeded generator and the next step's number come along.
    static func loggedDatabase(_ path: String, seed: UInt64) throws -> (Database, SplitMix64, Int) {
        var o = DatabaseOptions()
        o.checkpointBytes = 48 << 10
        let db = try Database.open(path: path, options: o)
        try db.write { try $0.createClasses(personDogSchema) }
        var rng = SplitMix64(seed: seed)
        var i = 0
        while try i < 8 || !Database.hasLoggedPages(db.latestMeta()) {
            try db.write { try CommitLogTests.step($0, i, &rng) }
            i += 1
        }
        return (db, rng, i)
    }

    /// `loggedDatabase` with a snapshot of its newest version taken, which reads pages from the log, and
    /// what that snapshot holds.
    static func pinnedLoggedDatabase(_ path: String, seed: UInt64) throws
        -> (Database, SplitMix64, Int, Snapshot, [String]) {
        let (db, rng, i) = try loggedDatabase(path, seed: seed)
        let pinned = try db.snapshot()
        #expect(pinned.logIndex != nil, "the snapshot reads pages from the log")
        return (db, rng, i, pinned, try CommitLogTests.dump(pinned))
    }

    @Test func aLoggedCommitWritesNothingToTheDataFile() throws {
        let dir = TempDir()
        let path = dir.file("quiet.realm")
        let db = try Database.open(path: path)
        try db.write { try $0.createClasses(personDogSchema) }
        var rng = SplitMix64(seed: 53)
        try db.write { try CommitLogTests.step($0, 0, &rng) }
        try db.checkpoint()
        let before = Kit.bytes(path)
        for i in 1..<6 { try db.write { try CommitLogTests.step($0, i, &rng) } }
        let after = Kit.bytes(path)
        // The file may have grown (holes for the pages the log holds) but no byte it had changed, meta slots
        // included; the commits are visible all the same.
        #expect(after.count >= before.count)
        #expect(Array(after[0..<before.count]) == before, "a logged commit wrote into the data file")
        #expect(after[before.count...].allSatisfy { $0 == 0 })
        let meta = try db.latestMeta()
        #expect(Database.hasLoggedPages(meta))
        #expect(try db.read { try $0.count(try $0.table("Person")) } == 6)
        // Another process reads them from the log.
        let worker = try WorkerProcess(["append-objects", path, "Dog", "name", "3"], stderrPath: dir.file("worker.err"))
        #expect(worker.readLine(timeout: 60) == "committed")
        #expect(try worker.waitForExit(timeout: 30) == 0)
        #expect(try db.read { try $0.count(try $0.table("Dog")) } == 9)
    }

    /// A snapshot taken while the log holds its pages keeps reading them while later commits checkpoint
    /// several times: the records it reads are not overwritten. Once it is closed the log starts again at
    /// its front, so it stays as long as the records between two checkpoints.
    @Test func aReaderKeepsTheRecordsItReadsUntilItCloses() throws {
        let dir = TempDir()
        let path = dir.file("pinned.realm")
        var (db, rng, i, pinned, seen) = try Self.pinnedLoggedDatabase(path, seed: 54)
        let firstGeneration = try db.latestMeta().logGeneration
        var sawFrontWhilePinned = false
        while try db.latestMeta().logGeneration < firstGeneration + 4 {
            try db.write { try CommitLogTests.step($0, i, &rng) }
            let m = try db.latestMeta()
            if Database.hasLoggedPages(m) && m.logStart == UInt64(CommitLog.headerSize) && m.logGeneration > firstGeneration {
                sawFrontWhilePinned = true
            }
            i += 1
            try #require(i < 5_000, "no checkpoint after \(i) commits")
        }
        #expect(!sawFrontWhilePinned, "a generation started at the front of the log while a reader could read it")
        #expect(try CommitLogTests.dump(pinned) == seen)
        #expect(try db.verify().isOK)
        pinned.close()
        // Nothing holds the old records now: the next checkpoint's generation moves to the front.
        let generation = try db.latestMeta().logGeneration
        while try db.latestMeta().logGeneration < generation + 2 {
            try db.write { try CommitLogTests.step($0, i, &rng) }
            i += 1
        }
        try db.write { try CommitLogTests.step($0, i, &rng) }
        let m = try db.latestMeta()
        #expect(m.logStart == UInt64(CommitLog.headerSize) && Database.hasLoggedPages(m))
        #expect(Kit.bytes(path + ".log").count <= 2 << 20, "the log kept growing")
        #expect(try db.verify().isOK)
    }

    /// The writer's index serves the nodes of its own records from the memory they were built in (DECISIONS
    /// 62). A snapshot keeps that memory while the writer goes on through records filling several blocks and
    /// through checkpoints, so blocks the pool hands out again are never ones it still reads.
    @Test func aReaderKeepsTheMemoryTheWriterBuiltItsRecordsIn() throws {
        let dir = TempDir()
        var (db, rng, i, pinned, seen) = try Self.pinnedLoggedDatabase(dir.file("blocks.realm"), seed: 62)
        var last = try db.latestMeta()
        let firstGeneration = last.logGeneration
        var recordBytes: UInt64 = 0
        while recordBytes < 3 * UInt64(RecordBlock.standardSize) {
            try db.write { try CommitLogTests.step($0, i, &rng) }
            let m = try db.latestMeta()
            if Database.hasLoggedPages(m) {
                recordBytes += m.logGeneration == last.logGeneration && Database.hasLoggedPages(last)
                    ? m.logEnd - last.logEnd : m.logEnd - m.logRecordsStart
            }
            last = m
            i += 1
            try #require(i < 20_000, "records stopped growing after \(i) commits")
        }
        #expect(last.logGeneration > firstGeneration + 2, "no checkpoints while the records filled the blocks")
        #expect(try CommitLogTests.dump(pinned) == seen)
        pinned.close()
        #expect(try db.verify().isOK)
    }

    /// With no reader holding an old generation, the memory of its records is let go once the next generation
    /// starts: the writer keeps the block it builds in and the blocks of the generation it is in, no more.
    @Test func theMemoryOfOldRecordsIsLetGo() throws {
        struct Seen { weak var block: RecordBlock? }
        let dir = TempDir()
        var (db, rng, i) = try Self.loggedDatabase(dir.file("let-go.realm"), seed: 63)
        let log = try #require(db.commitLog)
        var seen: [Seen] = []
        let firstGeneration = try db.latestMeta().logGeneration
        while seen.count < 6 {
            try db.write { try CommitLogTests.step($0, i, &rng) }
            if let b = log.currentBlockForTesting, !seen.contains(where: { $0.block === b }) { seen.append(Seen(block: b)) }
            i += 1
            try #require(i < 20_000, "the writer stopped making blocks after \(i) commits")
        }
        #expect(try db.latestMeta().logGeneration > firstGeneration + 10, "no checkpoints while the blocks filled")
        #expect(seen.filter { $0.block != nil }.count <= 2, "blocks of earlier generations are still held")
        #expect(try db.verify().isOK)
    }

    /// A reader in another process holds the records as well; when that process dies, its slot is cleared
    /// and the log moves to the front again.
    @Test func aReaderInAnotherProcessKeepsTheRecordsUntilItDies() throws {
        let dir = TempDir()
        let path = dir.file("pinned2.realm")
        var (db, rng, i) = try Self.loggedDatabase(path, seed: 55)
        let worker = try WorkerProcess(["pin", path], stderrPath: dir.file("pin.err"))
        let line = worker.readLine(timeout: 60)
        #expect(line == "pinned \(try db.latestVersion())")
        let firstGeneration = try db.latestMeta().logGeneration
        while try db.latestMeta().logGeneration < firstGeneration + 3 {
            try db.write { try CommitLogTests.step($0, i, &rng) }
            let m = try db.latestMeta()
            #expect(!(Database.hasLoggedPages(m) && m.logStart == UInt64(CommitLog.headerSize) && m.logGeneration > firstGeneration),
                    "commit \(i) went to the front of the log while another process could read the records there")
            i += 1
            try #require(i < 5_000)
        }
        worker.sendKill()
        _ = try worker.waitForExit(timeout: 30)
        let generation = try db.latestMeta().logGeneration
        while try db.latestMeta().logGeneration < generation + 2 {
            try db.write { try CommitLogTests.step($0, i, &rng) }
            i += 1
        }
        try db.write { try CommitLogTests.step($0, i, &rng) }
        #expect(try db.latestMeta().logStart == UInt64(CommitLog.headerSize))
    }

    /// The data file holds everything by itself once the database is let go of, and once a process that
    /// used it exits normally (without closing it).
    @Test func theDataFileStandsAloneAfterCloseAndAtExit() throws {
        let dir = TempDir()
        let path = dir.file("alone.realm")
        var expected: [String] = []
        do {
            let db = try Database.open(path: path)
            try db.write { try $0.createClasses(personDogSchema) }
            var rng = SplitMix64(seed: 56)
            for i in 0..<10 { try db.write { try CommitLogTests.step($0, i, &rng) } }
            #expect(Database.hasLoggedPages(try db.latestMeta()))
            expected = try db.read { try CommitLogTests.dump($0) }
        }
        Kit.write(Kit.bytes(path), to: dir.file("copy.realm"))
        #expect(try Database.open(path: dir.file("copy.realm")).read { try CommitLogTests.dump($0) } == expected)

        // A process that commits through the log and returns from main.
        let worker = try WorkerProcess(["append-objects", path, "Dog", "name", "25"], stderrPath: dir.file("worker.err"))
        #expect(worker.readLine(timeout: 60) == "committed")
        #expect(try worker.waitForExit(timeout: 30) == 0)
        Kit.write(Kit.bytes(path), to: dir.file("copy2.realm"))
        let copy = try Database.open(path: dir.file("copy2.realm"))
        #expect(try copy.read { try $0.count(try $0.table("Dog")) } == 35)
        #expect(try copy.verify().isOK)
    }

    /// Records are written with direct I/O where the file system allows it, and otherwise through the page
    /// cache and synced; either way a power loss keeps every logged commit.
    @Test(arguments: [true, false])
    func recordsWrittenEitherWaySurviveAPowerLoss(direct: Bool) throws {
        let dir = TempDir()
        let path = dir.file("either.realm")
        var o = DatabaseOptions()
        o.directLogWrites = direct
        let db = try Database.open(path: path, options: o)
        try db.write { try $0.createClasses(personDogSchema) }
        try db.checkpoint()
        let base = Kit.bytes(path)
        var rng = SplitMix64(seed: 57)
        for i in 0..<12 { try db.write { try CommitLogTests.step($0, i, &rng) } }
        #expect(Database.hasLoggedPages(try db.latestMeta()))
        let expected = try db.read { try CommitLogTests.dump($0) }
        // Power loss: the data file as of the checkpoint, the log as it is.
        Kit.write(base, to: dir.file("crashed.realm"))
        Kit.write(Kit.bytes(path + ".log"), to: dir.file("crashed.realm.log"))
        #expect(try Database.open(path: dir.file("crashed.realm")).read { try CommitLogTests.dump($0) } == expected)
    }

    /// A checkpoint writes, of the last copies of pages, those no newer copy overlaps, in page order: a node
    /// partly or wholly under a newer one was freed before its pages were taken again. (Written in page
    /// order with every copy, the older node at page 11 would land after the newer two-page node at 10.)
    @Test func aCheckpointLeavesOutCopiesANewerNodeOverlaps() {
        let copies: [(page: UInt64, pages: UInt64, offset: Int)] = [
            (page: 10, pages: 2, offset: 100),  // newer, covers 10 and 11
            (page: 11, pages: 1, offset: 50),   // older, under the node at 10: left out
            (page: 12, pages: 1, offset: 200),
            (page: 20, pages: 2, offset: 10),   // older, its second page taken by the node at 21: left out
            (page: 21, pages: 1, offset: 300),
            (page: 3, pages: 3, offset: 5),     // alone
        ]
        let kept = LogIndex.checkpointSelection(copies)
        #expect(kept.map { copies[$0].page } == [3, 10, 12, 21])
        #expect(LogIndex.checkpointSelection([]) == [])
    }
}
