import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage
@testable import realm_storage_worker

/// Several processes on one file: writers serialise through the lock file, readers see whole versions, and a
/// snapshot in one process pins its pages against reuse by writers in others.
@Suite(.serialized) struct MultiProcessTests {
    static let writers = 3
    static let perWriter = 200

    @Test func writersAndReadersInSeparateProcesses() throws {
        let total = Self.writers * Self.perWriter
        let dir = TempDir()
        let path = dir.file("shared.realm")
        let db = try Database.open(path: path)
        try SharedCounter.ensureSchema(db)

        // A snapshot taken before any other process writes: it must see its version to the end, whole.
        let before = try db.snapshot()
        let v0 = before.version
        let pinned = try reachableNodes(before)

        var children: [WorkerProcess] = []
        defer { for c in children { c.sendKill() } }
        func spawn(_ args: [String], _ name: String) throws -> WorkerProcess {
            let c = try WorkerProcess(args, stderrPath: dir.file("\(name).stderr"))
            children.append(c)
            return c
        }
        func expectLine(_ c: WorkerProcess, _ prefix: String, timeout: Double) throws -> String {
            guard let line = c.readLine(timeout: timeout), line.hasPrefix(prefix) else {
                c.sendKill()
                let status = try? c.waitForExit(timeout: 10)
                throw WorkerProcessError("\(c.arguments) did not print \"\(prefix)...\" within \(timeout) s "
                                         + "(\(status.map(WorkerProcess.describe) ?? "still running"))\(c.stderrTail())")
            }
            return line
        }

        // Readers first, running until they have seen the last increment, and a process that holds a snapshot of
        // the first version until it is killed mid-run, leaving a dead process's reader slot behind.
        let readers = try (0..<2).map { try spawn(["reader", path, "120", "\(total)"], "reader-\($0)") }
        let doomed = try spawn(["pin", path], "pin")
        for r in readers { _ = try expectLine(r, "start reader", timeout: 30) }
        #expect(try expectLine(doomed, "pinned", timeout: 30) == "pinned \(v0)")
        let started = monotonicNow()
        let ws = try (1...Self.writers).map { try spawn(["writer", path, "\($0)", "\(Self.perWriter)"], "writer-\($0)") }
        for w in ws { _ = try expectLine(w, "start", timeout: 30) }

        // Meanwhile this process reads too, with the same checks, and kills the pinning process part-way.
        var inProcessChecks = 0
        var lastSeen = 0
        var doomedKilled = false
        checking: while ws.contains(where: { !$0.hasExited() }) {
            let result = try db.read { try SharedCounter.check($0) }
            switch result {
            case .failure(let e):
                Issue.record("in-process reader: \(e)")
                break checking
            case .success(let c):
                #expect(c >= lastSeen, "in-process reader went back from counter \(lastSeen) to \(c)")
                lastSeen = c
            }
            inProcessChecks += 1
            if !doomedKilled && lastSeen >= total / 3 {
                doomed.sendKill(SIGKILL)
                try doomed.waitForExit(timeout: 30)  // reaped: a zombie would still count as alive
                doomedKilled = true
            }
            if monotonicNow() - started > 240 { break }
            usleep(5000)
        }
        for w in ws {
            let status = try w.waitForExit(timeout: 60)
            let out = w.remainingLines(timeout: 5)
            #expect(WorkerProcess.exitedNormally(status) && out.last?.hasPrefix("done ") == true,
                    "writer \(w.arguments) ended with \(WorkerProcess.describe(status)), output \(out)\(w.stderrTail())")
        }
        let writeSeconds = monotonicNow() - started
        var readerReports: [String] = []
        for r in readers {
            let status = try r.waitForExit(timeout: 60)
            let out = r.remainingLines(timeout: 5)
            readerReports += out
            #expect(WorkerProcess.exitedNormally(status) && out.count == 1 && out[0].hasPrefix("ok "),
                    "reader \(r.arguments) ended with \(WorkerProcess.describe(status)), output \(out)\(r.stderrTail())")
            #expect(out.last?.contains("max=\(total)") == true, "reader did not see the last increment: \(out)")
        }
        if !doomedKilled { doomed.sendKill(SIGKILL) }
        _ = try doomed.waitForExit(timeout: 30)
        print("MultiProcessTests: \(total) increments by \(Self.writers) processes in "
              + String(format: "%.2f s", writeSeconds) + ", \(inProcessChecks) in-process snapshot checks, readers: \(readerReports)")

        // The final state: every increment, every tagged entry, a sound file.
        let latest = try db.read { s -> (UInt64, Int) in
            guard case .success(let c) = try SharedCounter.check(s) else { throw WorkerProcessError("final state fails the invariants") }
            let entries = try s.table("Entry")
            let writerP = try s.property(entries, "writer")
            for w in 1...Self.writers {
                #expect(try s.find(writerP, equalTo: .int(Int64(w))).count == Self.perWriter, "entries of writer \(w)")
            }
            return (s.version, c)
        }
        #expect(latest.1 == total)
        #expect(latest.0 == v0 + UInt64(total), "one version per transaction")
        let report = try db.verify()
        #expect(report.isOK, "\(report)")

        // The old snapshot still reads its own version, and none of its pages was overwritten.
        #expect(before.version == v0)
        if case .success(let c) = try SharedCounter.check(before) {
            #expect(c == 0)
        } else {
            Issue.record("the snapshot taken before the writers no longer passes its invariants")
        }
        #expect(try before.count("Entry") == 0)
        for (ref, checksum) in pinned {
            let node = try before.node(ref, expected: nil)
            #expect(node.u64(at: 8) == checksum && checksumHolds(node, page: ref, pageBound: true),
                    "page \(ref), reachable from version \(v0), was overwritten while a snapshot of it was open")
        }

        // Once it is gone (and the killed reader's slot has been cleared), writers reuse the freed pages.
        before.close()
        #expect(db.coordinator.oldestReaderVersion() == nil, "a reader slot is still held after every reader ended")
        let pagesBefore = try db.latestMeta().pageCount
        for seq in 0..<20 { try db.write { try SharedCounter.increment($0, writer: 0, seq: seq) } }
        let pagesAfter = try db.latestMeta().pageCount
        #expect(pagesAfter == pagesBefore, "the file grew from \(pagesBefore) to \(pagesAfter) pages with free pages to reuse")
        let finalReport = try db.verify()
        #expect(finalReport.isOK, "\(finalReport)")
        let afterwards = try db.read { try SharedCounter.check($0) }
        if case .success(let c) = afterwards { #expect(c == total + 20) } else { Issue.record("\(afterwards)") }
    }

    /// In-place compaction needs every other process gone: refused (clearly, and harmlessly) while a reader
    /// process has the file open, done once it has closed it.
    @Test func compactionWaitsForOtherProcesses() throws {
        let dir = TempDir()
        let path = dir.file("compact.realm")
        let db = try Database.open(path: path)
        try SharedCounter.ensureSchema(db)
        for seq in 0..<30 { try db.write { try SharedCounter.increment($0, writer: 0, seq: seq) } }

        let reader = try WorkerProcess(["reader", path, "2"], stderrPath: dir.file("reader.stderr"))
        defer { reader.sendKill() }
        guard reader.readLine(timeout: 30) == "start reader" else {
            Issue.record("reader did not start\(reader.stderrTail())")
            return
        }
        #expect {
            try db.compact()
        } throws: { error in
            guard case StorageError.inUseByAnotherProcess = error else { return false }
            return true
        }
        // The failed attempt left this process a normal participant: it still writes, the reader still reads.
        for seq in 30..<40 { try db.write { try SharedCounter.increment($0, writer: 0, seq: seq) } }
        let status = try reader.waitForExit(timeout: 60)
        let out = reader.remainingLines(timeout: 5)
        #expect(WorkerProcess.exitedNormally(status) && out.first?.hasPrefix("ok ") == true,
                "reader: \(WorkerProcess.describe(status)), \(out)\(reader.stderrTail())")

        let before = try db.latestMeta().pageCount
        try db.compact()
        #expect(try db.latestMeta().pageCount <= before)
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
        let result = try db.read { try SharedCounter.check($0) }
        if case .success(let c) = result { #expect(c == 40) } else { Issue.record("\(result)") }
    }
}

/// Every node reachable from a snapshot (catalogue, table trees with their blobs and lists, indexes) with the
/// checksum stored in it.
func reachableNodes(_ s: Snapshot) throws -> [(UInt64, UInt64)] {
    var refs: [UInt64] = []
    if s.meta.catalogueRef != 0 { refs.append(s.meta.catalogueRef) }
    for c in s.catalogue.classes {
        try s.collectTableRefs(c.tableRoot, c, into: &refs)
        for p in c.properties where p.isIndexed && p.indexRoot != 0 {
            try EntryTree(root: p.indexRoot).collectRefs(source: s, into: &refs)
        }
    }
    return try refs.map { ref in
        let node = try s.node(ref, expected: nil)
        #expect(checksumHolds(node, page: ref, pageBound: true), "node at page \(ref) fails its checksum to begin with")
        return (ref, node.u64(at: 8))
    }
}

/// `tryBeginWrite`: an interactive program asks for the write lock without waiting for it.
@Suite struct TryBeginWriteTests {
    @Test func anotherProcessHoldingTheWriterMakesItReturnNil() throws {
        let dir = TempDir()
        let path = dir.file("w.realm")
        let db = try Database.open(path: path)
        try db.write { try $0.createClass(ClassSchema(name: "A", properties: [PropertySchema(name: "n", type: .int)])) }
        let holder = try WorkerProcess(["hold-writer", path], stderrPath: dir.file("holder.stderr"))
        defer { holder.sendKill(SIGKILL); _ = try? holder.waitForExit(timeout: 10) }
        #expect(holder.readLine(timeout: 30) == "holding")
        #expect(try db.tryBeginWrite() == nil)
        #expect(try db.tryBeginWrite() == nil)   // and again: a failed try leaves nothing held
        holder.sendKill(SIGKILL)
        _ = try holder.waitForExit(timeout: 10)
        // The dead process's lock is gone with it.
        let tx = try #require(try db.tryBeginWrite())
        _ = try tx.createObject("A", ["n": .int(1)])
        try tx.commit()
        #expect(try db.read { try $0.count("A") } == 1)
    }

    /// A worker that made the shared-counter file at `path`, committed once and now sits idle holding the
    /// writer lease (the caller kills it).
    static func idleLeaseHolder(_ path: String, _ dir: TempDir) throws -> WorkerProcess {
        do {
            let db = try Database.open(path: path)
            try SharedCounter.ensureSchema(db)
        }
        let holder = try WorkerProcess(["write-then-idle", path], stderrPath: dir.file("holder.stderr"))
        if holder.readLine(timeout: 30) != "idle" {
            holder.sendKill(SIGKILL)
            _ = try? holder.waitForExit(timeout: 10)
            try #require(Bool(false), "the worker never took the lease")
        }
        return holder
    }

    /// The writer lock is a lease a process keeps between its transactions (DECISIONS 55): another process that
    /// wants to write must get it from an idle holder, blocking (`beginWrite`) or not (`tryBeginWrite`).
    @Test(arguments: [false, true]) func anIdleLeaseIsHandedToAnotherProcess(trying: Bool) throws {
        let dir = TempDir()
        let path = dir.file("lease.realm")
        let holder = try Self.idleLeaseHolder(path, dir)
        defer { holder.sendKill(SIGKILL); _ = try? holder.waitForExit(timeout: 10) }
        // The worker's transaction is over, but it still holds byte 0 of the lock file.
        #expect(try otherProcessCanLockWriterByte(path + ".lock") == false)

        let db = try Database.open(path: path)
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedBox<Result<Bool, any Error>?>(nil)
        Thread.detachNewThread {
            do {
                if trying {
                    guard let tx = try db.tryBeginWrite() else { outcome.set(.success(false)); done.signal(); return }
                    try SharedCounter.increment(tx, writer: 1, seq: 0)
                    try tx.commit()
                } else {
                    try db.write { try SharedCounter.increment($0, writer: 1, seq: 0) }
                }
                outcome.set(.success(true))
            } catch {
                outcome.set(.failure(error))
            }
            done.signal()
        }
        try #require(done.wait(timeout: .now() + 30) == .success, "the idle holder never let the lease go")
        #expect(try outcome.get()?.get() == true)
        #expect(try db.read { try SharedCounter.check($0).get() } == 2)
        #expect(holder.hasExited() == false)
    }

    /// A writer that cannot take the waiter byte (`ENOLCK`: the kernel's lock table is full) must not count
    /// itself: a holder would find nobody behind the count, set it back and keep its idle lease, and the writer
    /// would wait for ever. It fails at once with the error instead, waiting or trying, and asks again fine
    /// once the byte can be taken.
    @Test(arguments: [false, true]) func aWaiterThatCannotTakeTheWaiterByteFailsInsteadOfWaitingForEver(trying: Bool) throws {
        let dir = TempDir()
        let path = dir.file("no-waiter-byte.realm")
        let holder = try Self.idleLeaseHolder(path, dir)
        defer { holder.sendKill(SIGKILL); _ = try? holder.waitForExit(timeout: 10) }

        let db = try Database.open(path: path)
        let lock = try #require(db.coordinator as? LockFile)
        lock.failWaiterByteForTesting = ENOLCK
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedBox<Result<Bool, any Error>?>(nil)
        Thread.detachNewThread {
            do {
                if trying {
                    outcome.set(.success(try db.tryBeginWrite().map { $0.rollback(); return true } ?? false))
                } else {
                    try db.beginWrite().rollback()
                    outcome.set(.success(true))
                }
            } catch {
                outcome.set(.failure(error))
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 10) != .success {
            Issue.record("the writer waited for a lease nobody would hand over")
            holder.sendKill(SIGKILL)  // its lease goes with it, and the waiting thread gets the lock
            _ = done.wait(timeout: .now() + 30)
            return
        }
        switch try #require(outcome.get()) {
        case .failure(StorageError.io(let errorPath, let operation, let errno)):
            #expect(errorPath == path + ".lock")
            #expect(operation == LockFile.requestLeaseOperation)
            #expect(errno == ENOLCK)
        case let other:
            Issue.record("expected the waiter byte's error, got \(other)")
        }
        #expect(lock.waitingWriterCount == 0, "nothing left counted")
        #expect(try otherProcessCanLockWriterByte(path + ".lock") == false, "the holder still has its lease")

        // Asked again with the byte, the idle holder hands the lease over (tried, so a count the failed request
        // had left wrong ends the test instead of hanging it).
        lock.failWaiterByteForTesting = nil
        let tx = try #require(try db.tryBeginWrite(), "the idle lease was not handed over")
        try SharedCounter.increment(tx, writer: 1, seq: 0)
        try tx.commit()
        #expect(try db.read { try SharedCounter.check($0).get() } == 2)
    }

    /// A writer killed while it waits for the lease leaves the waiting count raised. Lock format 3 then gave
    /// the lease up after every transaction, in every process, until the next first opener; now the holder asks
    /// the kernel whether anyone holds the waiter byte, finds nobody, sets the count back and keeps its lease.
    @Test func aWaiterKilledWhileCountedDoesNotCostTheHolderItsLease() throws {
        let dir = TempDir()
        let path = dir.file("killed-waiter.realm")
        let db = try Database.open(path: path)
        try SharedCounter.ensureSchema(db)
        let lock = try #require(db.coordinator as? LockFile)
        let tx = try db.beginWrite()  // this process writes: its lease cannot be handed over meanwhile
        let waiter = try WorkerProcess(["write-then-idle", path], stderrPath: dir.file("waiter.stderr"))
        defer { waiter.sendKill(SIGKILL) }  // also when a check below stops the test early
        let deadline = Date().addingTimeInterval(30)
        while lock.waitingWriterCount == 0 && Date() < deadline { usleep(2_000) }
        try #require(lock.waitingWriterCount == 1, "the worker never waited for the writer lock")
        waiter.sendKill(SIGKILL)
        _ = try? waiter.waitForExit(timeout: 10)
        #expect(lock.waitingWriterCount == 1, "a killed waiter cannot take itself off the count")

        try SharedCounter.increment(tx, writer: 1, seq: 0)
        try tx.commit()
        #expect(lock.waitingWriterCount == 0, "a count no live waiter stands behind is set back")
        #expect(try otherProcessCanLockWriterByte(path + ".lock") == false, "the lease is kept")
        try db.write { try SharedCounter.increment($0, writer: 1, seq: 1) }
        #expect(try otherProcessCanLockWriterByte(path + ".lock") == false, "and kept after the next transaction")

        // A live waiter is still handed the lease by the idle holder's watcher.
        let next = try WorkerProcess(["write-then-idle", path], stderrPath: dir.file("next.stderr"))
        defer { next.sendKill(SIGKILL); _ = try? next.waitForExit(timeout: 10) }
        #expect(next.readLine(timeout: 30) == "idle")
        #expect(try db.read { try SharedCounter.check($0).get() } == 3)
    }

    @Test func anotherThreadHoldingTheWriterMakesItReturnNil() throws {
        let db = try Database.inMemory(identifier: "try-begin-\(UUID())")
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let tx = try? db.beginWrite()
            held.signal()
            release.wait()
            tx?.rollback()
            done.signal()
        }
        held.wait()
        #expect(try db.tryBeginWrite() == nil)
        release.signal()
        done.wait()
        let tx = try #require(try db.tryBeginWrite())
        tx.rollback()
    }
}

/// Whether another process (`python3`, outside the engine's protocol) can take the writer lock's byte now.
func otherProcessCanLockWriterByte(_ lockPath: String) throws -> Bool {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
                          ? "/usr/bin/python3" : "/usr/bin/env")
    let script = """
        import fcntl,sys
        f=open(sys.argv[1],"r+")
        try: fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        except OSError: sys.exit(3)
        """
    p.arguments = (p.executableURL!.path.hasSuffix("env") ? ["python3"] : []) + ["-c", script, lockPath]
    try p.run()
    p.waitUntilExit()
    return p.terminationStatus == 0
}

final class LockedBox<Value>: @unchecked Sendable {
    private let mutex = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ v: Value) { mutex.lock(); value = v; mutex.unlock() }
    func get() -> Value { mutex.lock(); defer { mutex.unlock() }; return value }
}
