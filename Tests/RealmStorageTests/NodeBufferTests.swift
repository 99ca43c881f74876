import Testing
@testable import RealmStorage

/// A commit builds its index nodes and its cluster in the byte arrays of nodes the process's earlier commits
/// built (DECISIONS 64), and never in an array someone still holds.
@Suite struct NodeBufferTests {
    /// A database whose name index has more than one level (3,000 names in shuffled order).
    static func indexedPeople(_ dir: TempDir) throws -> Database {
        let db = try Database.open(path: dir.file("buffers.realm"))
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Person", properties: [
                PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                PropertySchema(name: "name", type: .string, isIndexed: true),
            ]))
            for i in 0..<3_000 {
                try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("名前 \(i * 7_919 % 3_000) 🐕")])
            }
        }
        return db
    }

    static func add(_ db: Database, id: Int64, name: String) throws -> WriteTransaction {
        let tx = try db.beginWrite()
        try tx.createObject("Person", ["id": .int(id), "name": .string(name)])
        try tx.commit()
        return tx
    }

    static func address(_ bytes: [UInt8]) -> UInt { bytes.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) } }

    static func indexNodes(_ tx: WriteTransaction) -> [[UInt8]] {
        tx.logEntries.map(\.bytes).filter {
            $0.first == NodeType.indexLeaf.rawValue || $0.first == NodeType.indexInner.rawValue
        }
    }

    @Test func aSmallCommitBuildsItsIndexNodesInThePreviousCommitsArrays() throws {
        let dir = TempDir()
        let db = try Self.indexedPeople(dir)
        do { _ = try Self.add(db, id: 10_000, name: "名前 1500 🐕 b") }
        let recycled = Set(db.recycled.indexNodes.map(Self.address))
        #expect(recycled.count >= 2, "the leaf's and its parent's arrays are handed on")
        #expect(db.recycled.indexNodes.allSatisfy { $0.capacity >= EntryTree.nodeBufferCapacity })

        // Near the same name: the same path of the index changes.
        let tx = try Self.add(db, id: 10_001, name: "名前 1500 🐕 c")
        let built = Self.indexNodes(tx)
        #expect(built.count >= 2)
        #expect(Set(built.map(Self.address)).isSubset(of: recycled), "index nodes built in new arrays")

        let s = try db.snapshot()
        let name = try s.property(s.table("Person"), "name")
        #expect(try s.find(name, equalTo: .string("名前 1500 🐕 b")).count == 1)
        #expect(try s.find(name, equalTo: .string("名前 1500 🐕 c")).count == 1)
        #expect(try s.find(name, equalTo: .string("名前 1500 🐕")).count == 1)
        #expect(try db.verify().problems.isEmpty)
    }

    @Test func aSmallCommitBuildsItsClusterInTheArrayOfTheClusterBeforeIt() throws {
        let dir = TempDir()
        let db = try Self.indexedPeople(dir)
        // Two commits appending to the last cluster: the second extends the first's node and lets go of it.
        for id in Int64(10_000)...10_001 { _ = try Self.add(db, id: id, name: "名前 \(id)") }
        let recycled = Self.address(db.recycled.cluster)
        #expect(db.recycled.cluster.capacity >= 4_096, "the cluster's array is kept")
        let tx = try Self.add(db, id: 10_002, name: "名前 10002")
        let clusters = tx.logEntries.map(\.bytes).filter { $0.first == NodeType.cluster.rawValue }
        #expect(clusters.count == 1)
        #expect(clusters.map(Self.address) == [recycled], "the cluster was built in a new array")
        let s = try db.snapshot()
        let people = try s.table("Person")
        #expect(try s.keys(people).count == 3_003)
        #expect(try db.verify().problems.isEmpty)
    }

    @Test func aSmallCommitBuildsItsCommitRootAndTableInnerNodesInThePreviousCommitsArrays() throws {
        let dir = TempDir()
        let db = try Self.indexedPeople(dir)
        do { _ = try Self.add(db, id: 10_000, name: "名前 a") }
        let recycled = Set(db.recycled.smallNodes.map(Self.address))
        #expect(db.recycled.smallNodes.allSatisfy { $0.capacity >= smallNodeCapacity })
        let tx = try Self.add(db, id: 10_001, name: "名前 b")
        let smallEntries = tx.logEntries.filter {
            $0.bytes.first == NodeType.catalogue.rawValue || $0.bytes.first == NodeType.tableInner.rawValue
        }
        let small = smallEntries.map(\.bytes)
        #expect(small.contains { $0.first == NodeType.catalogue.rawValue })
        #expect(small.contains { $0.first == NodeType.tableInner.rawValue }, "3,000 objects: a two-level table")
        #expect(Set(small.map(Self.address)).isSubset(of: recycled), "built in new arrays")
        #expect(smallEntries.allSatisfy { CommitLog.isWholeNode($0, pageBound: true) })
        let s = try db.snapshot()
        #expect(try s.object(s.table("Person"), primaryKey: .int(10_001)) != nil)
        #expect(try db.verify().problems.isEmpty)
    }

    @Test func aLoggedCommitEncodesItsMetaInTheArrayOfTheCommitBefore() throws {
        let dir = TempDir()
        let db = try Self.indexedPeople(dir)
        for id in Int64(10_000)...10_001 { _ = try Self.add(db, id: id, name: "名前 \(id)") }
        let address = Self.address(db.recycled.meta)
        _ = try Self.add(db, id: 10_002, name: "名前 10002")
        #expect(Self.address(db.recycled.meta) == address, "the meta was encoded in a new array")
        let decoded = db.recycled.meta.withUnsafeBytes { Meta.decode($0) }
        guard case .valid(let meta) = decoded else { Issue.record("the kept meta does not decode"); return }
        #expect(meta.version == (try db.snapshot().version))
    }

    @Test func theCatalogueSectionIsBuiltInTheArrayItIsGiven() throws {
        let dir = TempDir()
        let db = try Self.indexedPeople(dir)
        for id in Int64(10_000)...10_002 { _ = try Self.add(db, id: id, name: "名前 \(id)") }
        // The cache gave back an earlier commit's section for the next commit to build its own in.
        #expect(db.recycled.section.count > 16)
        let catalogue = try db.snapshot().catalogue
        let fresh = catalogue.encodeSection()
        var buffer = [UInt8](repeating: 0xEE, count: 7)
        buffer.reserveCapacity(fresh.count + 100)
        let address = Self.address(buffer)
        let built = catalogue.encodeSection(reusing: consume buffer)
        #expect(built == fresh)
        #expect(Self.address(built) == address, "the section was built in a new array")
        let tooSmall = catalogue.encodeSection(reusing: [1, 2, 3])
        #expect(tooSmall == fresh)
    }

    @Test func anArrayAFinishedTransactionStillHoldsIsNotWrittenOver() throws {
        let dir = TempDir()
        let db = try Self.indexedPeople(dir)
        let kept = try Self.add(db, id: 10_000, name: "名前 700 🐕 b")
        let before = kept.logEntries.map { Array($0.bytes) }
        #expect(before.contains { $0.first == NodeType.cluster.rawValue })
        #expect(before.contains { $0.first == NodeType.indexLeaf.rawValue })
        for i in 1...3 { _ = try Self.add(db, id: 10_000 + Int64(i), name: "名前 700 🐕 \(i)") }
        let after = kept.logEntries.map(\.bytes)
        let changed = zip(after, before).filter { $0 != $1 }.count
        #expect(after.count == before.count && changed == 0,
                "a later commit built its nodes in arrays the first transaction still holds (\(changed) changed)")
        #expect(kept.logEntries.allSatisfy { CommitLog.isWholeNode($0, pageBound: true) })
        #expect(try db.verify().problems.isEmpty)
    }
}
