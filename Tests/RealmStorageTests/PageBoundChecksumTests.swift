import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// A node's checksum covers the page it lives on (format 6, DECISIONS 69): a whole node that is at another
/// page than its own (two nodes swapped, a write sent to the wrong page, a node duplicated over another) is
/// damage, reported as `corrupt` naming the page and the class, never read as the other node's data. Files
/// of format 5 are read by the old rule and upgraded when opened writable.
@Suite struct PageBoundChecksumTests {
    typealias Kit = ErrorTestKit
    typealias Docs = DamagedNodeTests

    /// The refs of every cluster of Doc and of every blob they reference, each with its length.
    static func docNodes(_ path: String) throws -> (clusters: [(ref: UInt64, length: Int)], blobs: [(ref: UInt64, length: Int)]) {
        let db = try Database.open(path: path)
        return try db.read { s in
            let c = try #require(s.catalogue.classInfo(named: "Doc"))
            let p = try #require(c.property(named: "blob"))
            var clusters: [(UInt64, Int)] = [], blobs: [(UInt64, Int)] = []
            try TableTree.forEachLeaf(s.root(of: c.classID), source: s) { leaf in
                guard case .clean(let view) = leaf else { return true }
                clusters.append((view.ref, view.node.count))
                if let reader = try view.reader(for: p, source: s) {
                    for row in 0..<view.count {
                        if let b = reader.blobReference(at: row) { blobs.append((b.ref, Int(b.length) + nodeHeaderSize)) }
                    }
                }
                return true
            }
            return (clusters, blobs)
        }
    }

    /// Copies `pages` pages of the file from page `from` over page `to` (the rest of the file unchanged).
    static func copyPages(_ path: String, from: UInt64, to: UInt64, pages: Int) {
        var bytes = Kit.bytes(path)
        let n = pages * pageSize
        let source = Array(bytes[Int(from) * pageSize..<Int(from) * pageSize + n])
        bytes.replaceSubrange(Int(to) * pageSize..<Int(to) * pageSize + n, with: source)
        Kit.write(bytes, to: path)
    }

    /// Swaps the `pages` pages at `a` with those at `b`.
    static func swapPages(_ path: String, _ a: UInt64, _ b: UInt64, pages: Int) {
        var bytes = Kit.bytes(path)
        let n = pages * pageSize
        let pa = Array(bytes[Int(a) * pageSize..<Int(a) * pageSize + n]), pb = Array(bytes[Int(b) * pageSize..<Int(b) * pageSize + n])
        bytes.replaceSubrange(Int(a) * pageSize..<Int(a) * pageSize + n, with: pb)
        bytes.replaceSubrange(Int(b) * pageSize..<Int(b) * pageSize + n, with: pa)
        Kit.write(bytes, to: path)
    }

    /// Reads every object of Doc (keys, every value, the index); each read either gives the stored data or
    /// throws `corrupt` naming Doc and one of `pages`. Returns how many threw.
    static func readAll(_ path: String, damaged pages: Set<UInt64>) throws -> Int {
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        var threw = 0
        func expectCorrupt(_ error: Error) {
            threw += 1
            guard case StorageError.corrupt(_, let location, let reason) = error else {
                Issue.record("expected a corrupt error, got \(error)"); return
            }
            #expect(pages.contains { location.contains("page \($0)") } && location.contains("Doc"), "\(error)")
            #expect(reason.contains("checksum"), "\(error)")
        }
        try db.read { s in
            let t = try s.table("Doc")
            let keys: [ObjectKey]
            do { keys = try s.keys(t) } catch { expectCorrupt(error); return }
            #expect(keys.count == Docs.objects, "keys of a damaged class read as \(keys.count)")
            let name = try s.property(t, "name"), n = try s.property(t, "n"), blob = try s.property(t, "blob")
            for k in keys {
                do {
                    guard case .int(let i) = try s.value(k, n) else { Issue.record("n of #\(k.rawValue) is not an int"); continue }
                    #expect(try s.value(k, name) == .string("doc \(i)"), "#\(k.rawValue) read another object's name")
                    #expect(try s.value(k, blob) == .data(Docs.blob(Int(i))), "#\(k.rawValue) read another object's bytes")
                } catch { expectCorrupt(error) }
            }
        }
        return threw
    }

    static func verifyNames(_ path: String, _ page: UInt64) throws {
        let report = try Database.open(path: path, options: DatabaseOptions(readOnly: true)).verify()
        #expect(report.problems.contains { $0.contains("page \(page)") && $0.contains("checksum") }, "\(report)")
    }

    @Test func twoSwappedBlobsAreReportedNeverReadAsEachOthersBytes() throws {
        let dir = TempDir()
        let path = try Docs.make(dir)
        let blobs = try Self.docNodes(path).blobs
        // Every blob is 10,000 bytes: two of them, far apart, swapped whole.
        let a = blobs[3], b = blobs[blobs.count - 3]
        try #require(a.length == b.length && a.ref != b.ref)
        Self.swapPages(path, a.ref, b.ref, pages: pagesFor(bytes: a.length))
        #expect(try Self.readAll(path, damaged: [a.ref, b.ref]) == 2)
        try Self.verifyNames(path, a.ref)
        try Self.verifyNames(path, b.ref)
    }

    @Test func aClusterCopiedOverAnotherIsReportedNeverReadAsItsObjects() throws {
        let dir = TempDir()
        let path = try Docs.make(dir)
        let clusters = try Self.docNodes(path).clusters
        try #require(clusters.count >= 2)
        // A write of the smaller cluster (44 objects) that went to the larger one's pages (256 objects) as
        // well: the node there is whole, and its own checksum alone matches it.
        let (a, b) = clusters[0].length < clusters[1].length ? (clusters[0], clusters[1]) : (clusters[1], clusters[0])
        try #require(pagesFor(bytes: a.length) <= pagesFor(bytes: b.length))
        Self.copyPages(path, from: a.ref, to: b.ref, pages: pagesFor(bytes: a.length))
        #expect(try Self.readAll(path, damaged: [b.ref]) >= 1)
        try Self.verifyNames(path, b.ref)
    }

    @Test func aBlobCopiedOverAnotherOfTheSameLengthIsReported() throws {
        let dir = TempDir()
        let path = try Docs.make(dir)
        let blobs = try Self.docNodes(path).blobs
        let a = blobs[1], b = blobs[2]
        try #require(a.length == b.length && a.ref != b.ref)
        Self.copyPages(path, from: a.ref, to: b.ref, pages: pagesFor(bytes: a.length))
        #expect(try Self.readAll(path, damaged: [b.ref]) == 1)
        try Self.verifyNames(path, b.ref)
    }

    // MARK: Format 5

    /// `Fixtures/format5-demo.realm`: `realm-browser demo --objects 40` written by the build of format 5
    /// (node checksums without their pages): its classes and their counts, as that build's `info` listed them.
    static let fixtureCounts = ["Company": 1, "Contact": 2, "Location": 3, "Venue": 3, "Person": 12, "Dog": 16, "AllTypes": 3]

    static func copyOfFormatFiveFixture(in dir: TempDir) throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/format5-demo.realm").path
        let path = dir.file("five.realm")
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        return path
    }

    /// Runs `body` with the format-5 fixture opened writable while another process has it open, so that it
    /// stays format 5 (a build that reads only format 5 may be that process).
    static func withSharedFormatFiveFixture(_ body: (Database) throws -> Void) throws {
        let dir = TempDir()
        let path = try copyOfFormatFiveFixture(in: dir)
        do { _ = try Database.open(path: path, options: DatabaseOptions(readOnly: true)) }  // makes the lock file
        try whileAnotherProcessHasItOpen(path) {
            let db = try Database.open(path: path)
            #expect(try db.latestMeta().format == 5)
            try body(db)
        }
    }

    static func counts(_ s: Snapshot) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for c in s.schema { out[c.name] = try s.count(c.name) }
        return out
    }

    @Test func aFormatFiveFileIsReadReadOnlyAndUpgradedWhenOpenedWritable() throws {
        let dir = TempDir()
        let path = try Self.copyOfFormatFiveFixture(in: dir)
        let before = Kit.bytes(path)
        var dump: [String] = []
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
            #expect(try db.latestMeta().format == 5)
            #expect(try db.read { try Self.counts($0) } == Self.fixtureCounts)
            dump = try db.read { try dumpObjects($0) }
            let report = try db.verify()
            #expect(report.isOK, "\(report)")
        }
        #expect(Kit.bytes(path) == before, "a read-only open changed the file")
        #expect(dump.count == Self.fixtureCounts.values.reduce(0, +))

        do {
            let db = try Database.open(path: path)
            #expect(try db.latestMeta().format == Meta.formatVersion)
            #expect(try db.read { try dumpObjects($0) } == dump)
            let report = try db.verify()
            #expect(report.isOK, "\(report)")
            try db.write { tx in try tx.createObject(tx.table("Location"), [:]) }
            #expect(try db.read { try Self.counts($0)["Location"] } == 4)
        }
        #expect(!Kit.exists(path + ".compact"), "the upgrade left its new file behind")
        // Every node of the upgraded file is bound to its page: the same swap as above is now reported.
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        #expect(try db.latestMeta().format == Meta.formatVersion)
        #expect(try db.verify().isOK)
    }

    /// `Fixtures/format5-encrypted.realm`: `realm-browser demo --objects 20` with this key (byte i is
    /// `i * 7 + 3`), written by the build of format 5.
    static let encryptedFixtureKey = (0..<64).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
    static let encryptedFixtureCounts = ["Company": 1, "Contact": 1, "Location": 1, "Venue": 1, "Person": 6, "Dog": 8, "AllTypes": 2]

    @Test func anEncryptedFormatFiveFileIsReadReadOnlyAndUpgradedWhenOpenedWritable() throws {
        let dir = TempDir()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/format5-encrypted.realm").path
        let path = dir.file("five-encrypted.realm")
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        let before = Kit.bytes(path)
        var dump: [String] = []
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true, encryptionKey: Self.encryptedFixtureKey))
            #expect(try db.latestMeta().format == 5)
            #expect(try db.read { try Self.counts($0) } == Self.encryptedFixtureCounts)
            dump = try db.read { try dumpObjects($0) }
            #expect(try db.verify().isOK)
        }
        #expect(Kit.bytes(path) == before, "a read-only open changed the file")
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.encryptedFixtureKey))
            #expect(try db.latestMeta().format == Meta.formatVersion)
            #expect(db.isEncrypted)
            #expect(try db.read { try dumpObjects($0) } == dump)
            let report = try db.verify()
            #expect(report.isOK, "\(report)")
        }
        // Still encrypted with the same key: opening without it is refused.
        #expect(Kit.storageError { _ = try Database.open(path: path, options: DatabaseOptions(readOnly: true)) }
                == .encryptionKeyRequired(path: path))
    }

    /// On a full disk the upgrade cannot write its new file: the file stays of format 5, whole and unchanged,
    /// the open still succeeds (a database that could not be opened could not be emptied to make room), nothing
    /// of the attempt is left behind, and the next writable open with room upgrades it.
    @Test(.enabled(if: SmallFileSystem.canMount, "cannot mount a tmpfs here (needs root; CI runs as root)"))
    func anUpgradeThatFindsNoRoomLeavesTheFileAsItWas() throws {
        let fs = try SmallFileSystem(kilobytes: 2048)
        let path = fs.file("five.realm")
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/format5-demo.realm").path
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        do { _ = try Database.open(path: path, options: DatabaseOptions(readOnly: true)) }  // makes the lock file
        // Opened writable once without upgrading, so that its commit log exists before the disk is full.
        try whileAnotherProcessHasItOpen(path) { _ = try Database.open(path: path) }
        let before = Kit.bytes(path)
        try fs.fill()
        do {
            let db = try Database.open(path: path)
            #expect(try db.latestMeta().format == 5)
            #expect(try db.read { try Self.counts($0) } == Self.fixtureCounts)
            let e = Kit.storageError { try db.upgradeFileFormat() }
            #expect("\(e.map { "\($0)" } ?? "")".contains("No space left"), "\(String(describing: e))")
        }
        #expect(Kit.bytes(path) == before, "a failed upgrade changed the file")
        #expect(!Kit.exists(path + ".compact") && !Kit.exists(path + ".compact.lock"), "the failed upgrade left its new file behind")
        fs.free(1 << 20)
        let db = try Database.open(path: path)
        #expect(try db.latestMeta().format == Meta.formatVersion)
        #expect(try db.read { try Self.counts($0) } == Self.fixtureCounts)
        #expect(try db.verify().isOK)
    }

    /// While another process has a format-5 file open (it may be a build that reads only format 5), a writable
    /// open leaves it of format 5 and commits keep to its rule; the first writable open that finds it alone
    /// upgrades it.
    @Test func aFormatFiveFileSharedWithAnotherProcessStaysFormatFiveUntilAlone() throws {
        let dir = TempDir()
        let path = try Self.copyOfFormatFiveFixture(in: dir)
        do { _ = try Database.open(path: path, options: DatabaseOptions(readOnly: true)) }  // makes the lock file
        try whileAnotherProcessHasItOpen(path) {
            do {
                let db = try Database.open(path: path)
                #expect(try db.latestMeta().format == 5)
                for _ in 0..<3 { try db.write { tx in try tx.createObject(tx.table("Location"), [:]) } }
                #expect(try db.latestMeta().format == 5)
                #expect(try db.read { try Self.counts($0)["Location"] } == 6)
                let report = try db.verify()
                #expect(report.isOK, "\(report)")
            }
            // What it wrote is read by the format-5 rule alone (as a build of format 5 reads it).
            try Database.open(path: path, options: DatabaseOptions(readOnly: true)).read { s in
                try TableTree.forEachLeaf(s.root(of: try #require(s.catalogue.classInfo(named: "Location")).classID), source: s) { leaf in
                    guard case .clean(let view) = leaf else { return true }
                    #expect(nodeChecksum(view.node) == view.node.u64(at: 8), "a node of a format-5 file holds a format-6 checksum")
                    return true
                }
            }
        }

        let db = try Database.open(path: path)
        #expect(try db.latestMeta().format == Meta.formatVersion)
        #expect(try db.read { try Self.counts($0)["Location"] } == 6)
        #expect(try db.verify().isOK)
    }

    /// Commits to a file kept at format 5 write only the node forms a build of format 5 reads: string columns
    /// never in dictionary form (format 8), index leaves of whole entries within one page and 256 entries
    /// (format 9 writes prefix leaves of up to 1,024).
    @Test func commitsToAFileKeptAtFormatFiveWriteItsNodeForms() throws {
        try Self.withSharedFormatFiveFixture { db in
            try db.write { tx in
                let dog = try tx.table("Dog")
                for i in 0..<3000 {
                    try tx.createObject(dog, ["name": .string("Rex-\(i % 5)"), "breed": .string("Labrador"), "age": .int(Int64(i % 9))])
                }
            }
            #expect(try db.latestMeta().format == 5)
            #expect(try db.verify().isOK)
            try db.read { s in
                let c = try #require(s.catalogue.classInfo(named: "Dog"))
                var indexNodes = 0
                for p in c.properties where p.indexRoot != 0 {
                    var refs: [UInt64] = []
                    try EntryTree(root: p.indexRoot).collectRefs(source: s, into: &refs)
                    for ref in refs {
                        let b = try s.node(ref, expected: nil)
                        #expect(b[1] == 0, "\(p.name): index node at page \(ref) is a prefix leaf")
                        #expect(b.count <= 4096 && b.u32(at: 16) <= 256, "\(p.name): index node at page \(ref) of \(b.count) bytes, \(b.u32(at: 16)) entries, level \(b.u32(at: 20)), flags \(b[1])")
                        indexNodes += 1
                    }
                }
                #expect(indexNodes > 12)
                var clusters = 0
                try TableTree.forEachLeaf(s.root(of: c.classID), source: s) { leaf in
                    guard case .clean(let view) = leaf else { return true }
                    for p in c.properties where p.type == .string {
                        guard let e = view.columnEntry(p.columnID), e.encoding == ColumnEncoding.bytes.rawValue else { continue }
                        #expect(view.node[e.offset + 1] == 0, "\(p.name): a string column in dictionary form")
                    }
                    clusters += 1
                    return true
                }
                #expect(clusters > 1)
                #expect(try s.count("Dog") == 3016)
            }
        }
    }
}
