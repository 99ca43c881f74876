import Foundation
import Testing
@testable import RealmStorage

/// A damaged meta slot is never answered by silently opening an older version (docs/FILE_FORMAT.md, "Meta
/// slots"): when the commit log's header shows that the damaged slot held a committed version, opening fails
/// and says so; otherwise the file opens at the other slot and says which slot is damaged.
@Suite struct MetaSlotDamageTests {
    /// A file whose last version was checkpointed (both slots synced, then the log's header pinned at it),
    /// with its newest slot's number and version.
    func checkpointedFile(_ dir: TempDir) throws -> (path: String, newestSlot: Int, newest: UInt64) {
        let path = dir.file("a.realm")
        let db = try personDogDatabase(in: dir)
        for i in 0..<5 { try db.write { tx in try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("p\(i)")]) } }
        try db.checkpoint()
        let meta = try db.latestMeta()
        return (path, Int(meta.version % 2), meta.version)
    }

    func flip(_ path: String, at offset: Int) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[offset] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    @Test func aDamagedSlotThatHeldACommittedVersionIsAnError() throws {
        let dir = TempDir()
        let (path, slot, newest) = try checkpointedFile(dir)
        try flip(path, at: slot * pageSize + 20)  // inside the version field
        #expect {
            _ = try Database.open(path: path)
        } throws: { error in
            guard case .corrupt(_, let location, let reason)? = error as? StorageError else { return false }
            return location.contains("meta slot \(slot == 0 ? "A" : "B")") && reason.contains("version \(newest)")
        }
    }

    @Test func aDamagedOlderSlotOpensTheNewestVersionAndIsReported() throws {
        let dir = TempDir()
        let (path, slot, newest) = try checkpointedFile(dir)
        try flip(path, at: (1 - slot) * pageSize + 20)
        let db = try Database.open(path: path)
        #expect(try db.read { $0.version } == newest)
        #expect(try db.read { try $0.count("Person") } == 5)
        #expect(db.metaSlotProblems == ["meta slot \(slot == 0 ? "B (page 1)" : "A (page 0)") fails its checksum"])
    }

    @Test func aNewFilesEmptySlotIsNoProblem() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("new.realm"))
        #expect(db.metaSlotProblems == [])
    }

    /// A reader descheduled between reading the two slots can find each caught half written by a commit of
    /// another process. Neither valid is read again before it is called damage: here both slots read as torn
    /// until a commit's write completes 30 ms later, and the snapshot taken meanwhile sees the version.
    @Test func bothSlotsCaughtHalfWrittenAreReadAgain() throws {
        let dir = TempDir()
        let (path, _, newest) = try checkpointedFile(dir)
        let db = try Database.open(path: path)
        let fd = open(path, O_RDWR)
        #expect(fd >= 0)
        defer { close(fd) }
        var saved = [[UInt8]](repeating: [UInt8](repeating: 0, count: Meta.encodedSize), count: 2)
        for slot in 0..<2 {
            #expect(pread(fd, &saved[slot], Meta.encodedSize, off_t(slot * pageSize)) == Meta.encodedSize)
            var torn = saved[slot]
            torn[20] ^= 0x40  // a version field half written: the checksum fails
            #expect(pwrite(fd, torn, torn.count, off_t(slot * pageSize)) == torn.count)
        }
        let good = saved
        let restore = Thread {
            usleep(30_000)
            for slot in 0..<2 { _ = pwrite(fd, good[slot], good[slot].count, off_t(slot * pageSize)) }
        }
        restore.start()
        #expect(try db.read { $0.version } == newest)
        #expect(try db.read { try $0.count("Person") } == 5)
    }
}
