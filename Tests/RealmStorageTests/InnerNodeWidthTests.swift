import Foundation
import Testing
@testable import RealmStorage

/// Table inner nodes split above 64 children (DECISIONS 56); files written before hold nodes of up to 256.
@Suite struct InnerNodeWidthTests {
    /// The widest table inner node reachable from the newest version of `db`.
    static func widestInnerNode(_ db: Database) throws -> Int {
        try db.read { s in
            var refs: [UInt64] = []
            for c in s.catalogue.classes { try s.collectTableRefs(c.tableRoot, c, into: &refs) }
            return try refs.map { ref -> Int in
                let node = try s.node(ref, expected: nil)
                return node[0] == NodeType.tableInner.rawValue ? Int(node.u32(at: 16)) : 0
            }.max() ?? 0
        }
    }

    static func sumOfN(_ db: Database) throws -> Int64 {
        try db.read { s in
            let t = try s.table("Item")
            let n = try s.property(t, "n")
            // Object by object (through the tree's leaves in key order) and by the column scan: both agree.
            let byObject = try s.keys(t).reduce(Int64(0)) { sum, key in
                guard case .int(let v) = try s.value(key, n) else { return sum }
                return sum + v
            }
            #expect(try s.sum(n).sum == byObject)
            return byObject
        }
    }

    /// `Fixtures/wide-inner.realm`, written by the build before DECISIONS 56: 20,480 objects of `Item` (one int
    /// `n`, 0..<20480) in 80 clusters under one inner node of 80 children.
    @Test func aFileWithAWideInnerNodeReadsAndItsNodeIsSplitWhenWritten() throws {
        let dir = TempDir()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/wide-inner.realm").path
        let path = dir.file("wide.realm")
        try FileManager.default.copyItem(atPath: fixture, toPath: path)

        do {
            let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
            #expect(try Self.widestInnerNode(db) == 80)
            #expect(try db.read { try $0.count("Item") } == 20_480)
            #expect(try Self.sumOfN(db) == 20_479 * 20_480 / 2)
            #expect(try db.verify().isOK)
        }
        // Opened writable alone, a file of that format is upgraded by compaction (format 6), which leaves no
        // wide node; while another process has it open it stays as it is, and commits write into it.
        try whileAnotherProcessHasItOpen(path) {
            let db = try Database.open(path: path)
            #expect(try Self.widestInnerNode(db) == 80)
            // One more object: the wide node is written again, split to the width writers now keep.
            try db.write { tx in _ = try tx.createObject("Item", ["n": .int(20_480)]) }
            #expect(try Self.widestInnerNode(db) <= 64)
            #expect(try db.read { try $0.count("Item") } == 20_481)
            #expect(try Self.sumOfN(db) == 20_480 * 20_481 / 2)
            #expect(try db.verify().isOK)
        }
    }

    /// Objects inserted one transaction at a time, as single commits do, never make a node wider than 64.
    @Test func singleCommitsKeepInnerNodesWithinTheirCapacity() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("narrow.realm"))
        try db.write { try $0.createClass(ClassSchema(name: "Item", properties: [PropertySchema(name: "n", type: .int)])) }
        try db.write { tx in for n in 0..<(256 * 70) { _ = try tx.createObject("Item", ["n": .int(Int64(n))]) } }
        for n in (256 * 70)..<(256 * 70 + 300) {
            try db.write { tx in _ = try tx.createObject("Item", ["n": .int(Int64(n))]) }
        }
        let widest = try Self.widestInnerNode(db)
        #expect(widest > 1 && widest <= 64)
        let total = 256 * 70 + 300
        #expect(try db.read { try $0.count("Item") } == total)
        #expect(try Self.sumOfN(db) == Int64((total - 1) * total / 2))
        #expect(try db.verify().isOK)
    }
}
