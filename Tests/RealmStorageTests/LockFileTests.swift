import Foundation
import Synchronization
import Testing
@testable import RealmStorage
import CStorageSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tests of the lock file. Cross-process behaviour is checked against real child processes (`/bin/sh` with the
/// util-linux `flock` command, and `python3` for `fcntl` record locks). Serialized so the timing checks
/// ("still waiting after 300 ms") are not disturbed by the other tests of this suite.
@Suite(.serialized) struct LockFileTests {

    // MARK: - Process identity

    /// The lease belongs to the process that took it, known by a process id kept without a system call: a
    /// forked child must see its own id there, not its parent's (else it would think it held the parent's
    /// `fcntl` lock, which a child does not inherit).
    @Test func aForkedChildSeesItsOwnProcessId() {
        #expect(storage_process_id() == getpid())
        let child = fork()
        if child == 0 { _exit(storage_process_id() == getpid() && storage_process_id() != getppid() ? 0 : 1) }
        #expect(child > 0)
        var status: Int32 = 0
        #expect(waitpid(child, &status, 0) == child)
        #expect(status == 0, "the child saw its parent's id")
        #expect(storage_process_id() == getpid())
    }

    // MARK: - Opening

    @Test func initCreatesTheDocumentedHeaderAndReopenIsFirstOpenerAgain() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            var calls = 0
            let lock = try LockFile(path: path, firstOpener: { calls += 1 })
            #expect(lock.wasFirstOpener)
            #expect(calls == 1)
            #expect(lock.slotCount == 1024)

            let bytes = try #require(FileManager.default.contents(atPath: path))
            #expect(bytes.count == 384 + 16 * 1024)
            #expect(Array(bytes[0..<8]) == [0x52, 0x42, 0x4C, 0x4B, 0x00, 0x00, 0x00, 0x05])
            #expect(Array(bytes[8..<12]) == [0x00, 0x04, 0x00, 0x00])  // 1024, little-endian
            #expect(bytes[12...].allSatisfy { $0 == 0 })
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o600 } == 0o600)

            lock.close()
            lock.close()  // idempotent

            let again = try LockFile(path: path, firstOpener: { calls += 1 })
            #expect(again.wasFirstOpener)
            #expect(calls == 2)
            again.close()
        }
    }

    @Test func secondOpenWhileOpenIsNotFirstOpenerAndSharesTheTable() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            let first = try LockFile(path: path, firstOpener: {})
            var called = false
            // flock belongs to the open file description, so a second open in this process sees the first one
            // exactly as another process would.
            let second = try LockFile(path: path, firstOpener: { called = true })
            #expect(!second.wasFirstOpener)
            #expect(!called)

            let slot = try first.claimReaderSlot(version: 5)
            #expect(second.oldestReaderVersion() == 5)  // visible through the other mapping
            first.releaseReaderSlot(slot)
            #expect(second.oldestReaderVersion() == nil)
            second.close()
            first.close()
        }
    }

    @Test func firstOpenerReinitialisesGarbageAndStaleSlots() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            try Data(repeating: 0xAB, count: 100).write(to: URL(fileURLWithPath: path))
            let lock = try LockFile(path: path, firstOpener: {})
            #expect(lock.wasFirstOpener)
            #expect(lock.oldestReaderVersion() == nil)
            // A slot left behind by a process whose pid is now someone else's (here: ours) survives close...
            lock.testingStoreSlot(3, pid: UInt64(getpid()), version: 9)
            lock.close()
            // ...but the next first opener zeroes the whole table.
            let again = try LockFile(path: path, firstOpener: {})
            #expect(again.wasFirstOpener)
            #expect(again.testingSlot(3) == (0, 0))
            #expect(again.oldestReaderVersion() == nil)
            let bytes = try #require(FileManager.default.contents(atPath: path))
            #expect(Array(bytes[0..<4]) == Array("RBLK".utf8))
            again.close()
        }
    }

    @Test func firstOpenerErrorIsThrownAndReleasesTheFile() throws {
        struct ValidationFailed: Error {}
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            #expect(throws: ValidationFailed.self) {
                _ = try LockFile(path: path, firstOpener: { throw ValidationFailed() })
            }
            let lock = try LockFile(path: path, firstOpener: {})
            #expect(lock.wasFirstOpener)  // the failed open left no lock behind
            lock.close()
        }
    }

    /// The writer's next transaction takes the meta it published without decoding it again (DECISIONS 64) —
    /// only while the table holds exactly those bytes: a meta another process published in its place is read.
    @Test func aMetaPublishedByAnotherProcessIsReadNotTheOneThisProcessPublished() throws {
        try withTempDir { dir in
            let path = dir + "/q.realm.lock"
            let lock = try LockFile(path: path, firstOpener: {})
            defer { lock.close() }
            let mine = Meta(version: 7, catalogueRef: 3, freeListRef: 0, commitLogRef: 0, pageCount: 9, logID: 5)
            lock.publish(meta: mine.encode(), decoded: mine)
            #expect(lock.publishedMeta(current: true) == mine)
            // Another process's commit, written where the table's current meta is.
            let theirs = Meta(version: 8, catalogueRef: 4, freeListRef: 0, commitLogRef: 0, pageCount: 9, logID: 5)
            let fd = open(path, O_RDWR)
            defer { close(fd) }
            let inUse = try #require(FileManager.default.contents(atPath: path))[64]
            let bytes = theirs.encode()
            #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, 128, off_t(128 + 128 * Int(inUse))) } == 128)
            #expect(lock.publishedMeta(current: true) == theirs)
        }
    }

    /// The published meta (DECISIONS 53) is read whole or not at all: the writer fills the area not in use and
    /// then switches to it, so a writer that died half way (garbage in the other area) changes nothing.
    @Test func aPublishedMetaIsReadWholeOrNotAtAll() throws {
        try withTempDir { dir in
            let path = dir + "/p.realm.lock"
            let lock = try LockFile(path: path, firstOpener: {})
            defer { lock.close() }
            let accept: (UnsafeRawBufferPointer) -> [UInt8]? = { b in if case .valid = Meta.decode(b) { Array(b) } else { nil } }
            #expect(lock.publishedMeta(decode: accept) == nil)
            let meta1 = Meta(version: 7, catalogueRef: 0, freeListRef: 0, commitLogRef: 0, pageCount: 2, logID: 9)
            let m1 = meta1.encode()
            lock.publish(meta: m1, decoded: meta1)
            #expect(lock.publishedMeta(decode: accept) == m1)
            // Garbage in both areas' places but the one in use (what a writer killed while filling one leaves).
            let fd = open(path, O_RDWR)
            defer { close(fd) }
            let garbage = [UInt8](repeating: 0xA5, count: 128)
            let inUse = try #require(FileManager.default.contents(atPath: path))[64]
            let other = 128 + 128 * (1 - Int(inUse))
            #expect(garbage.withUnsafeBytes { pwrite(fd, $0.baseAddress, 128, off_t(other)) } == 128)
            #expect(lock.publishedMeta(decode: accept) == m1)
            let meta2 = Meta(version: 8, catalogueRef: 0, freeListRef: 0, commitLogRef: 0, pageCount: 3, logID: 9)
            let m2 = meta2.encode()
            lock.publish(meta: m2, decoded: meta2)
            #expect(lock.publishedMeta(decode: accept) == m2)
            #expect(lock.publishedMeta(current: false, decode: accept) == m1)
            // Another opener of the table (as another process) reads the same.
            let second = try LockFile(path: path, firstOpener: { Issue.record("the table was initialised again") })
            defer { second.close() }
            #expect(second.publishedMeta(decode: accept) == m2)
        }
    }

    @Test func badHeaderWhileAnotherProcessHoldsTheFileIsCorrupt() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            for contents in [Data(repeating: 0x55, count: 400), Data()] {
                try contents.write(to: URL(fileURLWithPath: path))
                let child = try Child.shell("exec 9<>'\(path)'; flock -s 9; echo locked; exec sleep 10")
                defer { child.kill() }
                try child.waitForLine("locked")
                do {
                    _ = try LockFile(path: path, firstOpener: {})
                    Issue.record("opening a lock file with a bad header should fail while it is held")
                } catch let StorageError.corrupt(errorPath, location, reason) {
                    #expect(errorPath == path)
                    #expect(location == "lock file header")
                    #expect(reason.contains(contents.isEmpty ? "too short" : "wrong magic"))
                }
                child.kill()
                let lock = try LockFile(path: path, firstOpener: {})  // alone again: reinitialised
                #expect(lock.wasFirstOpener)
                lock.close()
            }
        }
    }

    /// A lock file of another lock format held by another process is a process of another version of this
    /// software, not damage: the error says so (lock format 3's processes would not see this build's waiter
    /// byte, DECISIONS 59). Alone again, the file is made this format's.
    @Test func anotherLockFormatInUseIsReportedAsAnotherVersion() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            var old = Data(LockFile.magic)
            old[7] = 3
            old.append(contentsOf: [0x00, 0x04, 0x00, 0x00])  // 1024 slots
            old.append(Data(repeating: 0, count: LockFile.fileSize(slotCount: 1024) - old.count))
            try old.write(to: URL(fileURLWithPath: path))
            let child = try Child.shell("exec 9<>'\(path)'; flock -s 9; echo locked; exec sleep 10")
            defer { child.kill() }
            try child.waitForLine("locked")
            do {
                _ = try LockFile(path: path, firstOpener: {})
                Issue.record("opening a lock file of another format should fail while another process holds it")
            } catch let StorageError.inUse(errorPath, operation, reason) {
                #expect(errorPath == path)
                #expect(operation == "open the database")
                #expect(reason.contains("another version") && reason.contains("lock format 3"), "\(reason)")
            }
            child.kill()
            let lock = try LockFile(path: path, firstOpener: {})
            #expect(lock.wasFirstOpener)
            lock.close()
            #expect(try #require(FileManager.default.contents(atPath: path))[7] == LockFile.magic[7])
        }
    }

    @Test func anExclusiveHolderMakesOpenWait() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            // The child creates the (empty) file and holds it exclusively, as a process initialising would.
            let child = try Child.shell("exec 9<>'\(path)'; flock -x 9; echo locked; exec sleep 10")
            defer { child.kill() }
            try child.waitForLine("locked")

            let result = Locked<Result<LockFile, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                result.set(Result { try LockFile(path: path, firstOpener: {}) })
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "open must wait for the exclusive holder")
            child.kill()
            try #require(done.wait(timeout: .now() + 10) == .success, "open must finish once the holder exits")
            let lock = try #require(result.get()).get()
            // The file the child left is empty and nobody else holds it now: we initialise it.
            #expect(lock.wasFirstOpener)
            #expect(lock.slotCount == 1024)
            lock.close()
        }
    }

    @Test func openWaitsForTheOpenGuard() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            try LockFile(path: path, firstOpener: {}).close()  // the file must exist for the child to open it
            // A process deciding who is first opener (or upgrading to exclusive) holds fcntl byte 1.
            let child = try Child.shell("""
                exec \(python3) -c 'import fcntl,time,sys; f=open(sys.argv[1],"r+"); fcntl.lockf(f, fcntl.LOCK_EX, 1, 1); \
                print("locked", flush=True); time.sleep(10)' '\(path)'
                """)
            defer { child.kill() }
            try child.waitForLine("locked")
            let result = Locked<Result<LockFile, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                result.set(Result { try LockFile(path: path, firstOpener: {}) })
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "open must wait for the open guard")
            child.kill()
            try #require(done.wait(timeout: .now() + 10) == .success, "open must finish once the guard is free")
            let lock = try #require(result.get()).get()
            #expect(lock.wasFirstOpener)
            lock.close()
        }
    }

    // MARK: - Reader slots

    @Test func claimSetReleaseAndOldest() throws {
        try withTempDir { dir in
            let lock = try LockFile(path: dir + "/db.realm.lock", firstOpener: {})
            defer { lock.close() }
            #expect(lock.oldestReaderVersion() == nil)

            let a = try lock.claimReaderSlot(version: 10)
            let b = try lock.claimReaderSlot(version: 7)
            let c = try lock.claimReaderSlot(version: 30)
            #expect(Set([a, b, c]).count == 3)
            #expect(lock.testingSlot(a) == (UInt64(getpid()), 10))
            #expect(lock.oldestReaderVersion() == 7)

            lock.setReaderVersion(12, slot: b)
            #expect(lock.testingSlot(b).version == 12)
            #expect(lock.oldestReaderVersion() == 10)

            lock.releaseReaderSlot(a)
            #expect(lock.testingSlot(a) == (0, 0))
            #expect(lock.oldestReaderVersion() == 12)
            lock.releaseReaderSlot(b)
            #expect(lock.oldestReaderVersion() == 30)
            lock.releaseReaderSlot(c)
            #expect(lock.oldestReaderVersion() == nil)

            // A released slot is reused.
            let d = try lock.claimReaderSlot(version: 1)
            #expect([a, b, c].contains(d))
            lock.releaseReaderSlot(d)
        }
    }

    @Test func closeReleasesClaimedSlots() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            let first = try LockFile(path: path, firstOpener: {})
            let second = try LockFile(path: path, firstOpener: {})
            _ = try first.claimReaderSlot(version: 4)
            #expect(second.oldestReaderVersion() == 4)
            first.close()
            #expect(second.oldestReaderVersion() == nil)
            #expect(throws: StorageError.self) { _ = try first.claimReaderSlot(version: 1) }
            second.close()
        }
    }

    /// A slot is live exactly while its owner holds its liveness byte, whatever pid it shows: a reader in
    /// another PID namespace (a container sharing the volume) has a pid this process cannot see, and was
    /// taken for dead when liveness was asked of `kill(pid, 0)`.
    @Test func aSlotIsLiveExactlyWhileItsOwnerHoldsItsLivenessLock() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            let lock = try LockFile(path: path, firstOpener: {})
            defer { lock.close() }
            // Another holder of the file, with its own open file description as another process has.
            let other = try LockFile(path: path, firstOpener: {})
            let slot = try other.claimReaderSlot(version: 5)
            // Its pid as another PID namespace leaves it: one that does not exist here.
            lock.testingStoreSlot(slot, pid: try deadPid(), version: 5)
            let clearing: UInt64 = 1 << 63
            lock.testingStoreSlot(10, pid: 1, version: 1)                         // a pid that exists, no owner
            lock.testingStoreSlot(11, pid: clearing | UInt64(getpid()), version: 2)  // a format-4 clearer's marker
            lock.testingStoreSlot(12, pid: 1 << 40, version: 3)                   // not a pid at all

            #expect(lock.oldestReaderVersion() == 5)
            #expect(lock.testingSlot(slot).version == 5)
            for i in 10...12 { #expect(lock.testingSlot(i) == (0, 0), "slot \(i)") }
            // Its owner gone (the kernel drops the lock with its descriptor): the slot is free again.
            let mine = try lock.claimReaderSlot(version: 8)
            other.close()
            lock.testingStoreSlot(slot, pid: 12345, version: 5)
            #expect(lock.oldestReaderVersion() == 8)
            #expect(lock.testingSlot(slot) == (0, 0))
            lock.releaseReaderSlot(mine)
        }
    }

    @Test func fullTableCleansDeadSlotsThenThrows() throws {
        try withTempDir { dir in
            let lock = try LockFile(path: dir + "/db.realm.lock", firstOpener: {})
            defer { lock.close() }
            // Another holder of the file (its own open file description, as another process has) takes one.
            let other = try LockFile(path: dir + "/db.realm.lock", firstOpener: {})
            let theirs = try other.claimReaderSlot(version: 99)
            var slots: [Int] = [theirs]
            for v in 1..<lock.slotCount { slots.append(try lock.claimReaderSlot(version: UInt64(100 + v))) }
            #expect(Set(slots).count == 1024)
            do {
                _ = try lock.claimReaderSlot(version: 1)
                Issue.record("claiming slot 1025 should fail")
            } catch let StorageError.io(_, operation, errno) {
                #expect(errno == EAGAIN)
                #expect(operation.contains("1024"))
            }
            // A reader that died without releasing (its descriptor closed, its slot left as it was) frees its
            // slot for the next claim.
            other.close()
            lock.testingStoreSlot(theirs, pid: try deadPid(), version: 99)
            #expect(try lock.claimReaderSlot(version: 1) == theirs)
            #expect(lock.oldestReaderVersion() == 1)
        }
    }

    // MARK: - Exclusive access

    @Test func exclusiveAccessOnlyWhileNoOtherProcessHasTheFileOpen() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            let lock = try LockFile(path: path, firstOpener: {})
            defer { lock.close() }

            var othersCouldShare = true
            #expect(try lock.withExclusiveAccess {
                othersCouldShare = (try? Child.run("exec 9<>'\(path)'; flock -n -s 9")) == 0
            })
            #expect(!othersCouldShare, "body must run while holding the exclusive flock")
            #expect(try Child.run("exec 9<>'\(path)'; flock -n -x 9") != 0, "back to shared after the body")
            #expect(try Child.run("exec 9<>'\(path)'; flock -n -s 9") == 0, "and no longer exclusive")

            let child = try Child.shell("exec 9<>'\(path)'; flock -s 9; echo locked; exec sleep 10")
            defer { child.kill() }
            try child.waitForLine("locked")
            var ran = false
            #expect(try lock.withExclusiveAccess { ran = true } == false)
            #expect(!ran)
            // On Linux the failed upgrade dropped our shared lock; it must be held again now. Checked once the
            // child is gone, so only our lock can make a third process's exclusive attempt fail.
            child.kill()
            #expect(try Child.run("exec 9<>'\(path)'; flock -n -x 9") != 0, "shared lock re-acquired")

            #expect(try lock.withExclusiveAccess { ran = true })
            #expect(ran)

            struct BodyFailed: Error {}
            #expect(throws: BodyFailed.self) { _ = try lock.withExclusiveAccess { throw BodyFailed() } }
            #expect(try Child.run("exec 9<>'\(path)'; flock -n -x 9") != 0, "shared lock kept after a throw")
            #expect(try Child.run("exec 9<>'\(path)'; flock -n -s 9") == 0, "and no longer exclusive")
        }
    }

    // MARK: - Writer lock

    @Test func writerLockExcludesThreads() throws {
        try withTempDir { dir in
            let lock = try LockFile(path: dir + "/db.realm.lock", firstOpener: {})
            defer { lock.close() }
            let shared = Unprotected()
            let done = DispatchSemaphore(value: 0)
            for _ in 0..<2 {
                Thread.detachNewThread {
                    for _ in 0..<10_000 {
                        do { try lock.lockWriter() } catch { shared.failures.add(1, ordering: .relaxed); continue }
                        if shared.inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                            shared.overlaps.add(1, ordering: .relaxed)
                        }
                        let v = shared.counter  // a deliberately non-atomic read-modify-write
                        sched_yield()
                        shared.counter = v + 1
                        shared.inside.subtract(1, ordering: .sequentiallyConsistent)
                        lock.unlockWriter()
                    }
                    done.signal()
                }
            }
            try #require(done.wait(timeout: .now() + 30) == .success)
            try #require(done.wait(timeout: .now() + 30) == .success)
            #expect(shared.failures.load(ordering: .relaxed) == 0)
            #expect(shared.overlaps.load(ordering: .relaxed) == 0)
            #expect(shared.counter == 20_000)
        }
    }

    #if os(Linux)
    /// The thread that hands an idle lease over is named, so `top -H`, `ps -L` and debuggers tell what it is.
    @Test func theLeaseWatcherThreadIsNamed() throws {
        try withTempDir { dir in
            let lock = try LockFile(path: dir + "/db.realm.lock", firstOpener: {})
            defer { lock.close() }
            try lock.lockWriter()  // the first lease starts the watcher
            lock.unlockWriter()
            func names() -> [String] {
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
                return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
                    .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            }
            var seen = names()
            for _ in 0..<400 where !seen.contains("realm-lease") {
                usleep(5_000)  // it names itself as it starts
                seen = names()
            }
            #expect(seen.contains("realm-lease"), "threads: \(seen)")
        }
    }
    #endif

    @Test func writerLockIsAnFcntlLockOnByteZeroAcrossProcesses() throws {
        try withTempDir { dir in
            let path = dir + "/db.realm.lock"
            let tryLockByte = { (byte: Int) in
                try Child.run("""
                    exec \(python3) -c 'import fcntl,sys; f=open(sys.argv[1],"r+")
                    try: fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, \(byte))
                    except OSError: sys.exit(3)' '\(path)'
                    """)
            }

            // While we hold the writer lock, another process cannot lock byte 0 (but byte 2 is free); after the
            // transaction this process keeps byte 0 as its lease, until it closes.
            let lock = try LockFile(path: path, firstOpener: {})
            try lock.lockWriter()
            #expect(try tryLockByte(0) == 3)
            #expect(try tryLockByte(2) == 0)
            lock.unlockWriter()
            #expect(try tryLockByte(0) == 3, "the lease is kept between transactions")
            try lock.lockWriter()   // taken again without waiting
            lock.unlockWriter()
            lock.close()
            #expect(try tryLockByte(0) == 0)

            // While another process holds byte 0, lockWriter counts itself among the waiting writers and waits.
            let second = try LockFile(path: path, firstOpener: {})
            defer { second.close() }
            let child = try Child.shell("""
                exec \(python3) -c 'import fcntl,time,sys; f=open(sys.argv[1],"r+"); fcntl.lockf(f, fcntl.LOCK_EX, 1, 0); \
                print("locked", flush=True); time.sleep(10)' '\(path)'
                """)
            defer { child.kill() }
            try child.waitForLine("locked")
            let acquired = DispatchSemaphore(value: 0)
            let failed = Locked<(any Error)?>(nil)
            Thread.detachNewThread {
                do { try second.lockWriter() } catch { failed.set(error) }
                acquired.signal()
            }
            #expect(acquired.wait(timeout: .now() + 0.3) == .timedOut, "lockWriter must wait for the other process")
            #expect(try lockFileHeaderWord(path, at: LockFile.waitingWritersOffset) == 1)
            child.kill()
            try #require(acquired.wait(timeout: .now() + 10) == .success, "lockWriter must succeed once it exits")
            #expect(failed.get() == nil)
            #expect(try lockFileHeaderWord(path, at: LockFile.waitingWritersOffset) == 0)
            second.unlockWriter()
        }
    }
}

/// The `UInt32` at `offset` of the lock file, read from the file (another view of the shared mapping).
private func lockFileHeaderWord(_ path: String, at offset: Int) throws -> UInt32 {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    return bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
}

// MARK: - Helpers

/// The interpreter itself, not a version-manager shim that might run it as a grandchild (which `kill()` would
/// not reach, leaving its lock held).
private let python3 = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"

private func withTempDir(_ body: (String) throws -> Void) throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockfile-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try body(dir)
}

/// The pid of a process that has exited and been reaped.
private func deadPid() throws -> UInt64 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/true")
    try p.run()
    p.waitUntilExit()
    let pid = p.processIdentifier
    #expect(kill(pid, 0) == -1 && errno == ESRCH)
    return UInt64(pid)
}

/// A child process running a shell script, with its standard output readable line by line.
private final class Child: @unchecked Sendable {
    let process = Process()
    let output = Pipe()
    private var buffer = Data()

    static func shell(_ script: String) throws -> Child {
        let child = Child()
        child.process.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.process.arguments = ["-c", script]
        child.process.standardOutput = child.output
        try child.process.run()
        return child
    }

    /// Runs a script to completion and returns its exit status.
    static func run(_ script: String) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// Blocks until the child prints `line` (it does so once it holds its lock).
    func waitForLine(_ line: String) throws {
        let wanted = Data((line + "\n").utf8)
        while buffer.range(of: wanted) == nil {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw ChildFailed(message: "child exited before printing \(line)") }
            buffer.append(chunk)
        }
    }

    /// SIGKILL, not `terminate()`'s SIGTERM: children inherit the spawning thread's signal mask, which under
    /// the test runner can block SIGTERM.
    func kill() {
        if process.isRunning { sendKill(process.processIdentifier) }
        process.waitUntilExit()
    }

    struct ChildFailed: Error { let message: String }
}

/// `kill(2)` with SIGKILL, callable from inside `Child`, whose own `kill()` shadows it there.
private func sendKill(_ pid: pid_t) { _ = kill(pid, SIGKILL) }

/// State two threads share without protection, except for the atomics that detect overlap.
private final class Unprotected: @unchecked Sendable {
    var counter = 0
    let inside = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    let failures = Atomic<Int>(0)
}

private final class Locked<Value>: @unchecked Sendable {
    private let mutex = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ v: Value) { mutex.lock(); value = v; mutex.unlock() }
    func get() -> Value { mutex.lock(); defer { mutex.unlock() }; return value }
}
