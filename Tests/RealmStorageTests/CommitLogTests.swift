import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage

/// The commit log (DECISIONS 39): small commits are durable once their log record is synced, before the
/// data file is. A power loss is simulated by taking the data file as it was at a checkpoint (what the disk
/// surely holds) with the log as it was later, whole or cut anywhere.
@Suite struct CommitLogTests {
    typealias Kit = ErrorTestKit

    static func dump(_ s: Snapshot) throws -> [String] { try dumpObjects(s) }

    /// One small transaction of a seeded mix: creates, updates, links, list edits and deletes.
    static func step(_ tx: WriteTransaction, _ i: Int, _ rng: inout SplitMix64) throws {
        let people = try tx.table("Person"), dogs = try tx.table("Dog")
        let person = try tx.createObject(people, ["id": .int(Int64(1_000 + i)), "name": .string("p\(i) 東京 🐶"),
                                                  "age": .int(Int64(i % 90))], lists: ["tags": [.string("t\(i)")]])
        let dog = try tx.createObject(dogs, ["name": .string("d\(i)"), "weight": .double(Double(i) / 3), "owner": .link(person)])
        try tx.listAppend(person, tx.property(people, "dogs"), .link(dog))
        let keys = try tx.keys(people)
        let other = keys[Int(rng.next() % UInt64(keys.count))]
        try tx.set(other, tx.property(people, "nickname"), .string(String(repeating: "n", count: Int(rng.next() % 300))))
        if i % 5 == 4, keys.count > 3 {
            let victim = keys[Int(rng.next() % UInt64(keys.count))]
            if victim != person { try tx.delete(people, victim) }
        }
    }

    @Test func replayAfterPowerLossKeepsEveryLoggedCommitAndCutsAtATornRecord() throws {
        let dir = TempDir()
        let path = dir.file("live.realm")
        let db = try Database.open(path: path)
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            for i in 0..<200 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("base \(i)"), "age": .int(7)]) }
        }
        try db.checkpoint()
        let base = Kit.bytes(path)  // what the disk surely holds

        var rng = SplitMix64(seed: 39)
        var dumps: [[String]] = []
        var ends: [UInt64] = []
        for i in 0..<40 {
            try db.write { try Self.step($0, i, &rng) }
            let meta = try db.latestMeta()
            #expect(meta.logEnd > UInt64(CommitLog.headerSize), "commit \(i) was not logged")
            ends.append(meta.logEnd)
            dumps.append(try db.read { try Self.dump($0) })
        }
        let log = Kit.bytes(path + ".log")
        #expect(Kit.exists(path + ".log"))

        // The whole log: every commit is back, on the file as of the checkpoint.
        func crashed(_ name: String, log cut: [UInt8]) throws -> Database {
            let p = dir.file(name)
            Kit.write(base, to: p)
            Kit.write(cut, to: p + ".log")
            return try Database.open(path: p)
        }
        let whole = try crashed("whole.realm", log: log)
        #expect(try whole.read { try Self.dump($0) } == dumps.last!)
        #expect(try whole.verify().isOK)
        // The next commit lands on top and survives another crash.
        try whole.write { try Self.step($0, 40, &rng) }
        let afterNext = try whole.read { try Self.dump($0) }
        try whole.checkpoint()
        #expect(try Database.open(path: dir.file("whole.realm")).read { try Self.dump($0) } == afterNext)

        // Records start on whole blocks (DECISIONS 53): where the one starting at `start` ends, padding aside.
        func recordEnd(_ start: Int) -> Int { start + Int(log.withUnsafeBytes { $0.u64(at: start + 24) }) }
        // Cut inside record k + 1 (or at its start): the file opens at commit k, whole.
        for k in [0, 1, 7, 20, 38] {
            let end = Int(ends[k])
            let next = recordEnd(end)
            for cut in [end, end + 1, (end + next) / 2, next - 1] {
                let db = try crashed("cut-\(k)-\(cut).realm", log: Array(log[0..<cut]))
                #expect(try db.read { try Self.dump($0) } == dumps[k], "log cut at \(cut), inside the record of commit \(k + 1)")
                #expect(try db.verify().isOK)
            }
        }
        // A flipped byte in record k + 1: the same.
        var flipped = log
        flipped[Int(ends[9]) + 100] ^= 0x40
        let damaged = try crashed("flipped.realm", log: flipped)
        #expect(try damaged.read { try Self.dump($0) } == dumps[9])
        #expect(try damaged.verify().isOK)

        // A flipped byte inside a node of record k + 1, past its header: the record's checksum covers only the
        // nodes' headers, so the node's own checksum must catch it.
        let record = Int(ends[14])
        let entryCount = Int(log[record + 4]) | Int(log[record + 5]) << 8
        let firstNode = record + CommitLog.recordHeaderSize + entryCount * CommitLog.entrySize + Meta.encodedSize
        for offset in [firstNode + nodeHeaderSize + 3, recordEnd(record) - 8 - 1] {
            var torn = log
            torn[offset] ^= 0x01
            let db = try crashed("torn-node-\(offset).realm", log: torn)
            #expect(try db.read { try Self.dump($0) } == dumps[14], "byte \(offset - record) of record 16 flipped")
            #expect(try db.verify().isOK)
        }

        // Records of the earlier format (one checksum over every byte) are replayed too.
        var older = log
        let generation = older.withUnsafeBytes { $0.u64(at: 24) }
        for k in ends.indices {
            let start = k == 0 ? CommitLog.headerSize : Int(ends[k - 1])
            let end = recordEnd(start)
            older.withUnsafeMutableBytes { b in
                b.storeBytes(of: CommitLog.wholeHashRecordMagic.littleEndian, toByteOffset: start, as: UInt32.self)
                let sum = hash64(UnsafeRawBufferPointer(rebasing: b[start..<end - 8]), seed: generation)
                b.storeBytes(of: sum.littleEndian, toByteOffset: end - 8, as: UInt64.self)
            }
        }
        let fromOlder = try crashed("older-records.realm", log: older)
        #expect(try fromOlder.read { try Self.dump($0) } == dumps.last!)
        #expect(try fromOlder.verify().isOK)
    }

    @Test func aReadOnlyFirstOpenerReplaysThroughItsOwnDescriptor() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        var expected: [String] = []
        do {
            let db = try Database.open(path: path)
            try db.write { try $0.createClasses(personDogSchema) }
            try db.checkpoint()
            let base = Kit.bytes(path)
            var rng = SplitMix64(seed: 7)
            for i in 0..<5 { try db.write { try Self.step($0, i, &rng) } }
            expected = try db.read { try Self.dump($0) }
            let log = Kit.bytes(path + ".log")
            Kit.write(base, to: dir.file("b.realm"))
            Kit.write(log, to: dir.file("b.realm.log"))
        }
        let ro = try Database.open(path: dir.file("b.realm"), options: DatabaseOptions(readOnly: true))
        #expect(try ro.read { try Self.dump($0) } == expected)
    }

    /// After a clean exit the file holds every logged commit: a read-only first opener (a database copied to
    /// read-only media) needs no replay and writes nothing.
    @Test func aReadOnlyOpenAfterACleanExitWritesNothing() throws {
        let dir = TempDir()
        let path = dir.file("clean.realm")
        var expected: [String] = []
        do {
            let db = try Database.open(path: path)
            try db.write { try $0.createClasses(personDogSchema) }
            var rng = SplitMix64(seed: 12)
            for i in 0..<8 { try db.write { try Self.step($0, i, &rng) } }
            #expect(try db.latestMeta().logEnd > UInt64(CommitLog.headerSize))
            expected = try db.read { try Self.dump($0) }
        }
        let data = Kit.bytes(path), log = Kit.bytes(path + ".log")
        let ro = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        #expect(try ro.read { try Self.dump($0) } == expected)
        #expect(Kit.bytes(path) == data)
        #expect(Kit.bytes(path + ".log") == log, "the read-only open rewrote the log")
    }

    @Test func aLogOfAnotherFileIsIgnored() throws {
        let dir = TempDir()
        let a = dir.file("a.realm"), b = dir.file("b.realm")
        var rng = SplitMix64(seed: 8)
        let dbA = try Database.open(path: a)
        try dbA.write { try $0.createClasses(personDogSchema) }
        for i in 0..<6 { try dbA.write { try Self.step($0, i, &rng) } }
        let dbB = try Database.open(path: b)
        try dbB.write { try $0.createClasses(personDogSchema) }
        for i in 10..<13 { try dbB.write { try Self.step($0, i, &rng) } }
        let expected = try dbB.read { try Self.dump($0) }
        try dbB.checkpoint()
        // b's file, beside a's log (a stale log left by another database at this path).
        Kit.write(Kit.bytes(b), to: dir.file("c.realm"))
        Kit.write(Kit.bytes(a + ".log"), to: dir.file("c.realm.log"))
        let c = try Database.open(path: dir.file("c.realm"))
        #expect(try c.read { try Self.dump($0) } == expected)
        // Its next logged commit replaces the stale log, and survives a crash.
        try c.write { try Self.step($0, 20, &rng) }
        let after = try c.read { try Self.dump($0) }
        Kit.write(Kit.bytes(b), to: dir.file("d.realm"))
        Kit.write(Kit.bytes(dir.file("c.realm.log")), to: dir.file("d.realm.log"))
        // d = b's checkpointed file + c's log: c had b's identity, so its record replays onto it.
        #expect(try Database.open(path: dir.file("d.realm")).read { try Self.dump($0) } == after)
    }

    @Test func aCommitAfterAnotherProcessRetiredTheLogLandsInTheNewGeneration() throws {
        let dir = TempDir()
        let path = dir.file("two.realm")
        let a = try Database.open(path: path)
        try a.write { try $0.createClasses(personDogSchema) }
        var rng = SplitMix64(seed: 51)
        for i in 0..<5 { try a.write { try Self.step($0, i, &rng) } }  // this process has read the log header
        let before = try a.latestMeta()
        // Another process's large commit goes straight to the data file and starts a new log generation.
        let worker = try WorkerProcess(["append-objects", path, "Dog", "name", "100000"], stderrPath: dir.file("worker.err"))
        #expect(worker.readLine(timeout: 60) == "committed")
        _ = try worker.waitForExit(timeout: 30)
        let retired = try a.latestMeta()
        #expect(retired.logGeneration > before.logGeneration)
        let synced = Kit.bytes(path)  // the data file as that commit synced it
        // This process's next commit is logged in the generation the header now names.
        try a.write { try Self.step($0, 5, &rng) }
        let expected = try a.read { try Self.dump($0) }
        let after = try a.latestMeta()
        // (No reader of this process holds a version before the worker's: the generation moved to the front.)
        #expect(after.logGeneration > retired.logGeneration && Database.hasLoggedPages(after))
        // Power loss: the data file as synced, the log as it is now.
        Kit.write(synced, to: dir.file("crashed.realm"))
        Kit.write(Kit.bytes(path + ".log"), to: dir.file("crashed.realm.log"))
        #expect(try Database.open(path: dir.file("crashed.realm")).read { try Self.dump($0) } == expected)
    }

    @Test func aLargeCommitRetiresTheLogBeforeItReusesPages() throws {
        let dir = TempDir()
        let path = dir.file("big.realm")
        let db = try Database.open(path: path)
        try db.write { try $0.createClasses(personDogSchema) }
        var rng = SplitMix64(seed: 9)
        for i in 0..<30 { try db.write { try Self.step($0, i, &rng) } }
        // Delete and rewrite most objects in one commit of several MiB: it reuses pages the logged commits wrote.
        try db.write { tx in
            let people = try tx.table("Person")
            for k in try tx.keys(people).prefix(20) { try tx.delete(people, k) }
            for i in 0..<30_000 {
                try tx.createObject(people, ["id": .int(Int64(100_000 + i)), "name": .string("bulk \(i) " + String(repeating: "x", count: 40)), "age": .int(1)])
            }
        }
        let meta = try db.latestMeta()
        #expect(!Database.hasLoggedPages(meta) && meta.logGeneration > 1, "the large commit went through the log")
        for i in 30..<33 { try db.write { try Self.step($0, i, &rng) } }
        let expected = try db.read { try Self.dump($0) }
        // The file now, with the log: replaying must not write the old records over the large commit's pages.
        Kit.write(Kit.bytes(path), to: dir.file("copy.realm"))
        Kit.write(Kit.bytes(path + ".log"), to: dir.file("copy.realm.log"))
        let copy = try Database.open(path: dir.file("copy.realm"))
        #expect(try copy.read { try Self.dump($0) } == expected)
        #expect(try copy.verify().isOK)
    }

    @Test func aFileOfFormatOneGetsItsLogIdentityOnItsFirstCommit() throws {
        let dir = TempDir()
        let path = dir.file("old.realm")
        var expected: [String] = []
        do {
            let db = try Database.open(path: path)
            try db.write { try $0.createClasses(personDogSchema) }
            var rng = SplitMix64(seed: 10)
            try db.write { try Self.step($0, 0, &rng) }
            try db.checkpoint()
            expected = try db.read { try Self.dump($0) }
        }
        unlink(path + ".log")
        // Rewrite both meta slots as format 1: no log fields, and node checksums without their pages.
        var bytes = Kit.bytes(path)
        unbindNodeChecksums(&bytes)
        for s in 0..<2 {
            let o = s * pageSize
            guard bytes[o] == Meta.magic[0] else { continue }
            bytes.replaceSubrange(o + 8..<o + 12, with: [1, 0, 0, 0])
            bytes.replaceSubrange(o + 64..<o + 88, with: [UInt8](repeating: 0, count: 24))
            let sum = bytes.withUnsafeBytes { hash64(UnsafeRawBufferPointer(rebasing: $0[o..<o + 120])) }
            withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(o + 120..<o + 128, with: $0) }
        }
        Kit.write(bytes, to: path)
        // The file has backlinks, so opening it writable upgrades it (format 3): that is its first commit.
        let db = try Database.open(path: path)
        #expect(try db.latestMeta().logID != 0)
        #expect(try db.latestMeta().logEnd == 0, "the first commit of a format-1 file is synced in the file")
        #expect(try db.read { try Self.dump($0) } == expected)
        var rng = SplitMix64(seed: 11)
        try db.write { try Self.step($0, 1, &rng) }
        #expect(try db.latestMeta().logEnd > UInt64(CommitLog.headerSize))
        try db.write { try Self.step($0, 2, &rng) }
        #expect(try db.latestMeta().logEnd > UInt64(CommitLog.headerSize))
        #expect(try db.verify().isOK)
    }

    @Test func commitLogBytesCountsWhatNoCheckpointFoldedIn() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("n.realm"))
        try db.write { try $0.createClasses(personDogSchema) }
        var rng = SplitMix64(seed: 13)
        try db.write { try Self.step($0, 0, &rng) }
        let one = try #require(db.commitLogBytes)
        #expect(one > 0)
        try db.write { try Self.step($0, 1, &rng) }
        #expect(try #require(db.commitLogBytes) > one)
        try db.checkpoint()
        #expect(db.commitLogBytes == 0)
    }

    @Test func encryptedAndInMemoryDatabasesHaveNoLog() throws {
        let dir = TempDir()
        let path = dir.file("enc.realm")
        let key = [UInt8](repeating: 7, count: 64)
        let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: key))
        try db.write { try $0.createClasses(personDogSchema) }
        #expect(!Kit.exists(path + ".log"))
        #expect(try db.latestMeta().logID == 0)
        #expect(db.commitLogBytes == nil)
        let memory = try Database.inMemory(identifier: "commit-log-test")
        try memory.write { try $0.createClasses(personDogSchema) }
        #expect(try memory.latestMeta().logID == 0)
    }

    /// A new database at `path` with the person/dog schema and `count` people (ids from 0), in one commit.
    private static func people(_ count: Int, at path: String) throws -> Database {
        let db = try Database.open(path: path)
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            for i in 0..<count { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("p \(i)"), "age": .int(1)]) }
        }
        return db
    }

    /// A commit hands the next write transaction of its process the catalogue and free list it wrote into its
    /// commit root (DECISIONS 64): exactly what reading the root back gives.
    @Test func aCommitHandsItsCatalogueAndFreeListToTheNextTransaction() throws {
        let dir = TempDir()
        let db = try Self.people(300, at: dir.file("handover.realm"))
        for i in 300..<310 {
            try db.write { tx in
                try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("東京 \(i)"), "age": .int(2)])
                if i % 3 == 0 { try tx.delete(tx.table("Person"), try #require(try tx.object(tx.table("Person"), primaryKey: .int(Int64(i - 290))))) }
            }
        }
        let handed = try #require(db.writerHandover)
        let s = try db.snapshot()
        let root = s.meta.catalogueRef
        #expect(handed.version == s.version && handed.root == root)
        let node = try s.node(root, expected: .catalogue)
        #expect(handed.catalogue == (try Catalogue.decode(node, ref: root, path: "")))
        let stored = try CommitRoot.freeList(node, ref: root, source: s, pageCount: s.meta.pageCount)
        #expect(handed.freeList.map(\.0) == stored.map(\.0) && handed.freeList.map(\.1) == stored.map(\.1))
        #expect(!stored.isEmpty, "deletes and rewrites freed pages")
        let tx = try db.beginWrite()
        #expect(db.writerHandover == nil, "taken by the transaction")
        #expect(tx.catalogue == handed.catalogue)
        tx.rollback()
        #expect(try db.verify().isOK)
    }

    /// A commit whose record cannot be written hands nothing on: a transaction starting from the version it
    /// would have made (another process may commit that version) must not take its leaves or catalogue.
    @Test func aFailedRecordWriteHandsNothingOn() throws {
        let dir = TempDir()
        let db = try Self.people(50, at: dir.file("nothing.realm"))
        try db.write { try $0.createObject("Person", ["id": .int(100), "name": .string("kept"), "age": .int(2)]) }
        #expect(db.writerHandover != nil)
        let log = try #require(db.commitLog)
        log.failNextWriteForTesting = true
        #expect(throws: StorageError.self) {
            try db.write { try $0.createObject("Person", ["id": .int(200), "name": .string("lost"), "age": .int(3)]) }
        }
        #expect(db.writerHandover == nil)
        #expect(db.decodedLeaves.leaves.isEmpty && db.decodedLeaves.version == 0)
    }

    /// A logged commit puts its record's pages into this process's index of the log before writing the record
    /// (DECISIONS 58). When the write fails, those entries must go: the next commit starts from the same meta,
    /// takes the same pages and writes its record at the same place, and an index still holding the failed
    /// record's nodes would hand them out for the new commit's pages.
    @Test func aFailedRecordWriteLeavesNothingOfItInTheLogIndex() throws {
        let dir = TempDir()
        let path = dir.file("failed.realm")
        var after: [String] = []
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClasses(personDogSchema)
                for i in 0..<50 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("base \(i)"), "age": .int(1)]) }
            }
            try db.checkpoint()
            try db.write { try $0.createObject("Person", ["id": .int(100), "name": .string("kept 東京"), "age": .int(2)]) }
            let before = try db.read { try Self.dump($0) }

            let log = try #require(db.commitLog)
            log.failNextWriteForTesting = true
            #expect(throws: StorageError.self) {
                try db.write { try $0.createObject("Person", ["id": .int(200), "name": .string("lost"), "age": .int(3)]) }
            }
            #expect(try db.read { try Self.dump($0) } == before, "the failed commit is not visible")

            try db.write { try $0.createObject("Person", ["id": .int(201), "name": .string("after 🐶"), "age": .int(4)]) }
            after = try db.read { try Self.dump($0) }
            #expect(after.contains { $0.contains("after 🐶") })
            #expect(!after.contains { $0.contains("lost") })
            #expect(after.count == before.count + 1)
            #expect(try db.verify().isOK)
        }
        // Opened again, the file and its log read from scratch: the same objects.
        let again = try Database.open(path: path)
        #expect(try again.read { try Self.dump($0) } == after)
    }
}
