import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// A node that fails its checksum is damage: reading it throws `corrupt` naming the page and the class, and
/// `verify()` reports it; it never reads as other values, as no objects, or as nothing found.
@Suite struct DamagedNodeTests {
    typealias Kit = ErrorTestKit

    static let objects = 300
    static let schema = [ClassSchema(name: "Doc", properties: [
        PropertySchema(name: "name", type: .string, isIndexed: true),
        PropertySchema(name: "n", type: .int),
        PropertySchema(name: "blob", type: .data),
    ])]

    static func blob(_ i: Int) -> [UInt8] { (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) } }

    /// A database of `objects` documents, each with a 10,000-byte data value (one direct commit), then one
    /// small commit after it (so the damaged nodes belong to an older commit than the newest), closed.
    static func make(_ dir: TempDir) throws -> String {
        let path = dir.file("docs.realm")
        let db = try Database.open(path: path)
        try db.write { tx in try tx.createClasses(schema) }
        try db.write { tx in
            let t = try tx.table("Doc")
            for i in 0..<objects {
                try tx.createObject(t, ["name": .string("doc \(i)"), "n": .int(Int64(i)), "blob": .data(blob(i))])
            }
        }
        try db.write { tx in try tx.setSchemaVersion(2) }
        return path
    }

    /// The refs of the first cluster of Doc, of one blob it references, and of Doc.name's index root.
    static func nodes(_ path: String) throws -> (cluster: UInt64, blob: UInt64, index: UInt64) {
        let db = try Database.open(path: path)
        return try db.read { s in
            let c = try #require(s.catalogue.classInfo(named: "Doc"))
            let ref = try firstCluster(c, in: s)
            let view = try ClusterView(node: try s.node(ref, expected: nil), ref: ref, source: s)
            let p = try #require(c.property(named: "blob"))
            let reader = try #require(try view.reader(for: p, source: s))
            let blob = try #require(reader.blobReference(at: view.count / 2)).ref
            let index = try #require(c.property(named: "name")).indexRoot
            return (ref, blob, index)
        }
    }

    /// The ref of the first cluster of class `c` in snapshot `s`.
    static func firstCluster(_ c: ClassInfo, in s: Snapshot) throws -> UInt64 {
        var ref = c.tableRoot
        var node = try s.node(ref, expected: nil)
        while !TableTree.isLeafNode(node) {
            ref = try InnerView(node: node, ref: ref, source: s).ref(0)
            node = try s.node(ref, expected: nil)
        }
        return ref
    }

    /// XORs the byte at `offset` of page `page` of the file.
    static func flip(_ path: String, page: UInt64, offset: Int) {
        var bytes = Kit.bytes(path)
        bytes[Int(page) * pageSize + offset] ^= 0x5A
        Kit.write(bytes, to: path)
    }

    static func length(_ path: String, page: UInt64) -> Int {
        Kit.bytes(path).withUnsafeBytes { Int($0.u32(at: Int(page) * pageSize + 4)) }
    }

    /// Every read of Doc: keys, every value, the index. Each either gives the stored data or throws `corrupt`
    /// naming `page` and the class; returns how many threw.
    static func readAll(_ path: String, damaged page: UInt64) throws -> Int {
        let db = try Database.open(path: path)
        var threw = 0
        func expectCorrupt(_ error: Error) {
            threw += 1
            guard case StorageError.corrupt(_, let location, _) = error else {
                Issue.record("expected a corrupt error, got \(error)"); return
            }
            #expect(location.contains("page \(page)") && location.contains("Doc"), "\(error)")
        }
        try db.read { s in
            let t = try s.table("Doc")
            #expect(try s.count(t) == objects)
            let keys: [ObjectKey]
            do { keys = try s.keys(t) } catch { expectCorrupt(error); return }
            #expect(keys.count == objects, "keys of a damaged class read as \(keys.count)")
            let name = try s.property(t, "name"), n = try s.property(t, "n"), blob = try s.property(t, "blob")
            for k in keys {
                do {
                    guard case .int(let i) = try s.value(k, n) else { Issue.record("n of #\(k.rawValue) is not an int"); continue }
                    #expect(try s.value(k, name) == .string("doc \(i)"))
                    #expect(try s.value(k, blob) == .data(Self.blob(Int(i))), "#\(k.rawValue) read other bytes")
                } catch { expectCorrupt(error) }
            }
            for i in [0, objects / 3, objects - 1] {
                do {
                    #expect(try s.find(name, equalTo: .string("doc \(i)")).count == 1, "doc \(i) not found by its index")
                } catch { expectCorrupt(error) }
            }
        }
        return threw
    }

    static func problems(_ path: String) throws -> VerifyReport { try Database.open(path: path).verify() }

    @Test func damagedBlobIsReportedNeverReadAsOtherBytes() throws {
        let dir = TempDir()
        let path = try Self.make(dir)
        let ref = try Self.nodes(path).blob
        #expect(Self.length(path, page: ref) > 10_000)
        Self.flip(path, page: ref, offset: 5_000)
        #expect(try Self.readAll(path, damaged: ref) > 0)
        let report = try Self.problems(path)
        #expect(report.problems.contains { $0.contains("page \(ref)") && $0.contains("checksum") }, "\(report)")
    }

    @Test func damagedClusterColumnIsReportedNeverReadAsOtherValues() throws {
        let dir = TempDir()
        let path = try Self.make(dir)
        let ref = try Self.nodes(path).cluster
        // Inside the column blocks, past the directory.
        Self.flip(path, page: ref, offset: Self.length(path, page: ref) - 40)
        #expect(try Self.readAll(path, damaged: ref) > 0)
        let report = try Self.problems(path)
        #expect(report.problems.contains { $0.contains("page \(ref)") && $0.contains("checksum") }, "\(report)")
    }

    @Test func damagedIndexNodeIsReportedNeverReadAsNothingFound() throws {
        let dir = TempDir()
        let path = try Self.make(dir)
        let ref = try Self.nodes(path).index
        Self.flip(path, page: ref, offset: Self.length(path, page: ref) / 2)
        #expect(try Self.readAll(path, damaged: ref) > 0)
        let report = try Self.problems(path)
        #expect(report.problems.contains { $0.contains("page \(ref)") && $0.contains("checksum") }, "\(report)")
    }

    /// A primary-key lookup and a diff of two versions that meet a damaged node name its class, as every other
    /// read does.
    @Test func primaryKeyLookupAndChangesNameTheDamagedClass() throws {
        let dir = TempDir()
        let path = dir.file("acct.realm")
        let db = try Database.open(path: path)
        try db.write { tx in
            try tx.createClasses([ClassSchema(name: "Acct", properties: [
                PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                PropertySchema(name: "blob", type: .data),
            ])])
        }
        // One direct commit, so the clusters lie in the data file.
        try db.write { tx in
            let t = try tx.table("Acct")
            for i in 0..<200 { try tx.createObject(t, ["id": .int(Int64(i)), "blob": .data(Self.blob(i))]) }
        }
        let old = try db.snapshot()
        let c = try #require(old.catalogue.classInfo(named: "Acct"))
        let ref = try Self.firstCluster(c, in: old)
        try db.write { tx in try tx.set(ObjectKey.fromPrimaryKey(1), "Acct", "blob", .data([1, 2, 3])) }
        // The first cluster of the older version: its checksum field, so no check this process made of it counts.
        let fd = open(path, O_RDWR)
        try #require(fd >= 0)
        var byte: UInt8 = 0
        #expect(pread(fd, &byte, 1, off_t(Int(ref) * pageSize + 9)) == 1)
        byte ^= 0x5A
        #expect(pwrite(fd, &byte, 1, off_t(Int(ref) * pageSize + 9)) == 1)
        close(fd)
        func expectNamed(_ body: () throws -> Void) {
            do {
                try body()
                Issue.record("a read of the damaged cluster at page \(ref) succeeded")
            } catch StorageError.corrupt(_, let location, _) {
                #expect(location.contains("Acct") && location.contains("page \(ref)"), "\(location)")
            } catch { Issue.record("expected a corrupt error, got \(error)") }
        }
        expectNamed { _ = try old.object(try old.table("Acct"), primaryKey: .int(0)) }
        let new = try db.snapshot()
        expectNamed { _ = try new.changes(in: "Acct", since: old) }
    }

    /// `verify()` hashes every node again: damage after this process read (and checked) a node is reported.
    @Test func verifyFindsDamageAfterTheNodeWasRead() throws {
        let dir = TempDir()
        let path = try Self.make(dir)
        let ref = try Self.nodes(path).blob
        let db = try Database.open(path: path)
        #expect(try db.verify().isOK)
        let fd = open(path, O_RDWR)
        try #require(fd >= 0)
        var byte: UInt8 = 0
        #expect(pread(fd, &byte, 1, off_t(Int(ref) * pageSize + 5_000)) == 1)
        byte ^= 0x5A
        #expect(pwrite(fd, &byte, 1, off_t(Int(ref) * pageSize + 5_000)) == 1)
        close(fd)
        let report = try db.verify()
        #expect(report.problems.contains { $0.contains("page \(ref)") && $0.contains("checksum") }, "\(report)")
    }

    /// The rest of a node's last page carries nothing: damage there leaves the data intact, and `verify()`
    /// warns of it without calling the file unsound.
    @Test func damageAfterTheEndOfANodeIsAWarning() throws {
        let dir = TempDir()
        let path = try Self.make(dir)
        let ref = try Self.nodes(path).blob
        let length = Self.length(path, page: ref)
        let last = ref + UInt64(length / pageSize)
        Self.flip(path, page: last, offset: length % pageSize + 100)
        #expect(try Self.readAll(path, damaged: ref) == 0)
        let report = try Self.problems(path)
        #expect(report.isOK, "\(report)")
        #expect(report.warnings.count == 1 && report.warnings.first?.contains("page \(last)") == true, "\(report)")
    }
}
