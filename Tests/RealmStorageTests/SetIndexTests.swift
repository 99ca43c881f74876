import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// The element index of an indexed set: one entry per element of each object's set, exact through every way a
/// set changes (insert, remove, assign, create, delete, delete all, index added later, compaction), inside a
/// write transaction as after its commit, and found by `objects(_:withElement:)`.
@Suite struct SetIndexTests {
    static let schema = ClassSchema(name: "Item", properties: [
        PropertySchema(name: "n", type: .int),
        PropertySchema(name: "tags", type: .string, isOptional: true, isIndexed: true, isSet: true),
        PropertySchema(name: "plain", type: .string, isOptional: true, isSet: true),
        PropertySchema(name: "nums", type: .int, isIndexed: true, isSet: true),
    ])

    /// Strings the random changes draw from: short, empty, null, CJK, and two longer than an index key keeps
    /// (240 bytes) that share that prefix.
    static let pool: [Value] = [
        .null, .string(""), .string("a"), .string("b"), .string("東京"), .string("🐕"), .string("a\u{0}b"),
        .string(String(repeating: "x", count: 300) + "1"), .string(String(repeating: "x", count: 300) + "2"),
    ]

    /// The objects whose unindexed `plain` holds `v`, by a scan: what the index of `tags` must answer, since
    /// every change writes both sets alike.
    func scanned(_ s: Snapshot, _ v: Value) throws -> [ObjectKey] {
        let t = try s.table("Item")
        let plain = try s.property(t, "plain")
        return try s.keys(t).filter { try s.setContains($0, plain, v) }
    }

    func expectIndexAnswersAsScan(_ s: Snapshot, _ context: String) throws {
        let tags = try s.property(s.table("Item"), "tags")
        for v in Self.pool {
            let found = try #require(try s.objects(tags, withElement: v))
            #expect(found == (try scanned(s, v)), "\(context): \(v)")
        }
    }

    @Test func randomChangesKeepTheIndexExact() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("sets.realm"))
        try db.write { tx in try tx.createClass(Self.schema) }
        var rng = SplitMix64(seed: 0x5E7_1DE5)
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        func someTags() -> [Value] { (0..<pick(4)).map { _ in Self.pool[pick(Self.pool.count)] } }
        for round in 0..<12 {
            try db.write { tx in
                let t = try tx.table("Item")
                let tags = try tx.property(t, "tags"), plain = try tx.property(t, "plain")
                for step in 0..<40 {
                    let keys = try tx.keys(t)
                    let op = keys.isEmpty ? 1 : pick(8)
                    if round == 7 && step == 20 {
                        try tx.deleteAll(t)
                    } else if op <= 1 {
                        let v = someTags()
                        _ = try tx.createObject("Item", ["n": .int(Int64(step))], lists: ["tags": v, "plain": v])
                    } else if op == 2 {
                        try tx.delete(t, keys[pick(keys.count)])
                    } else if op == 3 {
                        let k = keys[pick(keys.count)], v = someTags()
                        try tx.setAssign(k, tags, v)
                        try tx.setAssign(k, plain, v)
                    } else if op <= 5 {
                        let k = keys[pick(keys.count)], v = Self.pool[pick(Self.pool.count)]
                        #expect(try tx.setInsert(k, tags, v) == tx.setInsert(k, plain, v))
                    } else {
                        let k = keys[pick(keys.count)], v = Self.pool[pick(Self.pool.count)]
                        #expect(try tx.setRemove(k, tags, v) == tx.setRemove(k, plain, v))
                    }
                    if step % 10 == 9 { try expectIndexAnswersAsScan(tx, "round \(round) step \(step), uncommitted") }
                }
            }
            try db.read { s in try expectIndexAnswersAsScan(s, "after round \(round)") }
            let report = try db.verify()
            #expect(report.isOK, "round \(round): \(report.problems)")
        }
        try db.compact()
        let report = try db.verify()
        #expect(report.isOK, "after compaction: \(report.problems)")
        try db.read { s in try expectIndexAnswersAsScan(s, "after compaction") }
    }

    @Test func anIndexAddedLaterHoldsTheElementsAlreadyStored() throws {
        let db = try Database.inMemory(identifier: "set-index-\(UUID())")
        var keys: [ObjectKey] = []
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [PropertySchema(name: "nums", type: .int, isSet: true)]))
            for i in 0..<50 {
                keys.append(try tx.createObject("Item", [:], lists: ["nums": [.int(Int64(i % 7)), .int(100)]]))
            }
        }
        try db.read { s in
            let nums = try s.property(s.table("Item"), "nums")
            #expect(try s.objects(nums, withElement: .int(3)) == nil)
        }
        try db.write { tx in try tx.setIndexed("Item", "nums", true) }
        try db.read { s in
            let nums = try s.property(s.table("Item"), "nums")
            #expect(try s.objects(nums, withElement: .int(3)) == keys.indices.filter { $0 % 7 == 3 }.map { keys[$0] })
            #expect(try s.objects(nums, withElement: .int(100)) == keys)
            #expect(try s.objects(nums, withElement: .int(8)) == [])
            #expect(s.classSchema("Item")?.properties.first?.isIndexed == true)
        }
        #expect(try db.verify().isOK)
        try db.write { tx in try tx.setIndexed("Item", "nums", false) }
        try db.read { s in
            let nums = try s.property(s.table("Item"), "nums")
            #expect(try s.objects(nums, withElement: .int(3)) == nil)
        }
        #expect(try db.verify().isOK)
    }

    @Test func onlySetsOfIndexableTypesTakeAnIndex() throws {
        let db = try Database.inMemory(identifier: "set-index-schema-\(UUID())")
        let refused: [(PropertySchema, String)] = [
            (PropertySchema(name: "m", type: .mixed, isOptional: true, isIndexed: true, isSet: true), "mixed set"),
            (PropertySchema(name: "d", type: .double, isIndexed: true, isSet: true), "double set"),
            (PropertySchema(name: "l", type: .string, isList: true, isIndexed: true), "string list"),
            (PropertySchema(name: "s", type: .string, isIndexed: true, isDictionary: true), "string dictionary"),
        ]
        for (p, what) in refused {
            #expect(throws: StorageError.self, "\(what)") {
                try db.write { tx in try tx.createClass(ClassSchema(name: "C", properties: [p])) }
            }
        }
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "C", properties: [
                PropertySchema(name: "m", type: .mixed, isOptional: true, isSet: true),
                PropertySchema(name: "ids", type: .uuid, isIndexed: true, isSet: true),
            ]))
            do {
                try tx.setIndexed("C", "m", true)
                Issue.record("a set of mixed values was indexed")
            } catch let e as StorageError {
                #expect("\(e)".contains("cannot be indexed"), "\(e)")
            }
        }
    }
}
