import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// Read-only opening, in-memory databases and several databases in one process.
@Suite struct OpeningTests {
    typealias Kit = ErrorTestKit

    func makeDatabase(_ path: String) throws {
        let db = try Database.open(path: path)
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            let ann = try tx.createObject("Person", ["id": .int(1), "name": .string("Ann")], lists: ["tags": [.string("a")]])
            try tx.createObject("Dog", ["name": .string("Rex"), "owner": .link(ann)])
        }
    }

    // MARK: Read-only

    @Test func readOnlyReadsWork() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        try makeDatabase(path)
        let expected = try Kit.contents(Database.open(path: path))
        let before = Kit.bytes(path)
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
            #expect(try Kit.contents(db) == expected)
            #expect(try db.verify().isOK)
            try db.read { (s: Snapshot) throws in
                let people = try s.table("Person")
                let ann = try #require(try s.object(people, primaryKey: .int(1)))
                #expect(try s.find(s.property(people, "name"), equalTo: .string("Ann")) == [ann])
            }
        }
        let unchanged = Kit.bytes(path) == before
        #expect(unchanged, "a read-only open changed the file")
    }

    @Test func readOnlyMissingFile() throws {
        let dir = TempDir()
        let path = dir.file("missing.realm")
        let e = Kit.storageError { _ = try Database.open(path: path, options: DatabaseOptions(readOnly: true)) }
        #expect(e == .io(path: path, operation: "open", errno: ENOENT))
        #expect(!Kit.exists(path) && !Kit.exists(path + ".lock"))
        if let e { print("  \(e)") }
        // Read-write creates it.
        _ = try Database.open(path: path)
        #expect(Kit.exists(path))
    }

    /// Tests run as root, which ignores permission bits, so the calling thread takes the file-system identity
    /// of `nobody` (setfsuid is per thread on Linux, and dropping fsuid 0 drops CAP_DAC_OVERRIDE): the
    /// database then sits in a directory it cannot write, with a lock file it cannot open for writing.
    @Test func readOnlyInAnUnwritableDirectory() throws {
        let dir = TempDir()
        let sub = dir.file("ro")
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: false)
        let path = sub + "/a.realm"
        try makeDatabase(path)
        let expected = try Kit.contents(Database.open(path: path))
        unlink(path + ".lock")
        chmod(sub, 0o555)
        defer { chmod(sub, 0o755) }
        typealias SetFsuid = @convention(c) (UInt32) -> Int32
        guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid") else {
            Issue.record("no setfsuid"); return
        }
        let setfsuid = unsafeBitCast(sym, to: SetFsuid.self)
        let nobody: UInt32 = 65534
        _ = setfsuid(nobody)
        defer { _ = setfsuid(0) }
        // Without the identity change (root, or a system without per-thread fsuid), the directory is writable
        // and this test proves nothing; say so rather than pass silently.
        let probe = open(sub + "/probe", O_RDWR | O_CREAT, 0o644)
        if probe >= 0 { close(probe); unlink(sub + "/probe"); Issue.record("cannot simulate an unwritable directory here"); return }

        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        #expect(try Kit.contents(db) == expected)
        #expect(try db.verify().isOK)
        #expect(!Kit.exists(path + ".lock"))
        #expect(throws: StorageError.readOnly(path: path)) { try db.write { _ in } }
        // Read-write cannot open it at all.
        let e = Kit.storageError { _ = try Database.open(path: sub + "/other.realm") }
        #expect(e == .io(path: sub + "/other.realm", operation: "open", errno: EACCES))
        if let e { print("  \(e)") }
    }

    /// A lock file that exists but cannot be opened for writing (as when another user owns the database):
    /// read-only opening still works.
    @Test func readOnlyWithAnUnwritableLockFile() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        try makeDatabase(path)
        let expected = try Kit.contents(Database.open(path: path))
        #expect(Kit.exists(path + ".lock"))
        chmod(dir.path, 0o555)
        defer { chmod(dir.path, 0o755) }
        typealias SetFsuid = @convention(c) (UInt32) -> Int32
        guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid") else { return }
        let setfsuid = unsafeBitCast(sym, to: SetFsuid.self)
        _ = setfsuid(65534)
        defer { _ = setfsuid(0) }
        let probe = open(path + ".lock", O_RDWR)
        if probe >= 0 { close(probe); Issue.record("cannot simulate an unwritable lock file here"); return }
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        #expect(try Kit.contents(db) == expected)
    }

    // MARK: In-memory

    @Test func inMemoryIdentifiersAreIndependent() throws {
        let id = "opening-\(UUID())"
        let a = try Database.inMemory(identifier: id + "-a")
        let b = try Database.inMemory(identifier: id + "-b")
        #expect(a !== b && a.isInMemory && !a.isReadOnly)
        try a.write { tx in try tx.createClasses(personDogSchema); try tx.createObject("Person", ["id": .int(1)]) }
        try b.write { tx in try tx.createClass(ClassSchema(name: "Other", properties: [PropertySchema(name: "x", type: .int)])) }
        try a.read { (s: Snapshot) throws in #expect(s.schema.map(\.name).sorted() == ["Dog", "Person"]); #expect(try s.count("Person") == 1) }
        try b.read { #expect($0.schema.map(\.name) == ["Other"]) }
    }

    @Test func inMemorySameIdentifierSharesDataWhileReferenced() throws {
        let id = "opening-shared-\(UUID())"
        let cwd = FileManager.default.currentDirectoryPath
        let tmp = FileManager.default.temporaryDirectory.path
        func filesNamedLikeIt() -> [String] {
            [cwd, tmp].flatMap { d in ((try? FileManager.default.contentsOfDirectory(atPath: d)) ?? []).filter { $0.contains(id) } }
        }
        weak var weakFirst: Database?
        do {
            let first = try Database.inMemory(identifier: id)
            weakFirst = first
            try first.write { tx in
                try tx.createClasses(personDogSchema)
                for i in 0..<300 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string(String(repeating: "x", count: 2000))]) }
            }
            let second = try Database.inMemory(identifier: id)
            #expect(second === first)
            try second.read { (s: Snapshot) throws in #expect(try s.count("Person") == 300) }
            try second.write { tx in try tx.createObject("Person", ["id": .int(1000)]) }
            try first.read { (s: Snapshot) throws in #expect(try s.count("Person") == 301) }
            #expect(try first.verify().isOK)
            #expect(filesNamedLikeIt().isEmpty)
        }
        #expect(weakFirst == nil, "the in-memory database outlived its last reference")
        let again = try Database.inMemory(identifier: id)
        try again.read { #expect($0.schema.isEmpty && $0.version == 1) }
        #expect(filesNamedLikeIt().isEmpty)
        // An open snapshot keeps its database, and so the data, alive.
        let snap: Snapshot
        do {
            let db = try Database.inMemory(identifier: id + "-snap")
            try db.write { tx in try tx.createClass(ClassSchema(name: "Kept", properties: [])) }
            snap = try db.snapshot()
        }
        #expect(try Database.inMemory(identifier: id + "-snap").read { $0.classSchema("Kept") != nil })
        snap.close()
    }

    @Test func inMemoryCopyAndCompact() throws {
        let dir = TempDir()
        let db = try Database.inMemory(identifier: "opening-copy-\(UUID())")
        try Kit.populate(db, people: 40)
        // compact() of an in-memory database has nothing to shrink on disk; it must not claim to be read-only.
        try db.compact()
        let copy = dir.file("copy.realm")
        try db.writeCopy(to: copy)
        let onDisk = try Database.open(path: copy)
        #expect(try Kit.contents(onDisk) == Kit.contents(db))
        #expect(try onDisk.verify().isOK)
    }

    // MARK: Several databases

    @Test func severalDatabasesAtOnce() throws {
        let dir = TempDir()
        let dbs = try (0..<6).map { try Database.open(path: dir.file("db\($0).realm")) }
        for (i, db) in dbs.enumerated() {
            try db.write { tx in
                try tx.createClass(ClassSchema(name: "C\(i)", properties: [PropertySchema(name: "n", type: .int)]))
                for j in 0...i { try tx.createObject("C\(i)", ["n": .int(Int64(j))]) }
            }
        }
        // Interleaved transactions on different databases from one thread: each has its own writer lock.
        let txs = try dbs.map { try $0.beginWrite() }
        for (i, tx) in txs.enumerated() { try tx.createObject("C\(i)", ["n": .int(100)]) }
        for tx in txs.reversed() { try tx.commit() }
        for (i, db) in dbs.enumerated() {
            try db.read { (s: Snapshot) throws in
                #expect(s.schema.map(\.name) == ["C\(i)"])
                #expect(try s.count("C\(i)") == i + 2)
            }
        }
    }

    @Test func samePathTwiceIsTheSameDatabase() throws {
        let dir = TempDir()
        try FileManager.default.createDirectory(atPath: dir.file("sub"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.file("link"), withDestinationPath: dir.path)
        // Spelled differently, before the file exists and after.
        let first = try Database.open(path: dir.file("sub/../a.realm"))
        let spellings = [dir.file("a.realm"), dir.file("sub/../a.realm"), dir.file("./a.realm"), dir.file("link/a.realm"),
                         dir.file("/a.realm")]
        for p in spellings {
            let again = try Database.open(path: p)
            #expect(again === first, "\(p)")
        }
        // Opening read-write something already open read-only in this process is refused.
        let roPath = dir.file("ro.realm")
        try makeDatabase(roPath)
        let ro = try Database.open(path: roPath, options: DatabaseOptions(readOnly: true))
        #expect(throws: StorageError.readOnly(path: roPath)) { _ = try Database.open(path: roPath) }
        _ = ro
        // Concurrent opens of one new path agree on one database.
        let racePath = dir.file("race.realm"), raceAlias = dir.file("sub/../race.realm")
        let opened = Kit.Locked<[Database]>([])  // kept alive until every thread has opened
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            let p = i % 2 == 0 ? racePath : raceAlias
            if let db = try? Database.open(path: p) { opened.withLock { $0.append(db) } }
        }
        let ids = opened.withLock { $0.map(ObjectIdentifier.init) }
        #expect(ids.count == 8)
        #expect(Set(ids).count == 1, "\(Set(ids).count) databases for one file")
    }
}
