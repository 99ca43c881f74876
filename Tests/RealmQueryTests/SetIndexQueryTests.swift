import Foundation
import Testing
import TestSupport
@testable import RealmQuery
import RealmStorage

/// `ANY tags == x` and `IN` over an indexed set are answered from the set's element index, with the answers of
/// the same queries over an unindexed copy of the set: in a snapshot, and inside a write transaction whose
/// changes are not committed yet.
@Suite struct SetIndexQueryTests {
    static let words = ["a", "b", "東京", "🐕", "", String(repeating: "長", count: 90) + "1", String(repeating: "長", count: 90) + "2"]

    static let queries: [String] = [
        "ANY tags == 'a'", "tags == 'b'", "tags == '東京'", "ANY tags == ''", "tags == 'zz'", "ANY tags == nil",
        "tags == '\(words[5])'", "tags IN {'a', '🐕'}", "ANY tags IN {'b', nil, 'q'}", "ANY nums == 3", "nums == 3.0",
        "nums == 2.5", "nums IN {1, 4}", "ALL tags == 'a'", "NONE tags == 'a'", "tags != 'a'",
        "tags ==[c] 'A'", "ANY tags == 'a' AND n > 10", "ANY tags == 'a' OR ANY nums == 1", "NOT tags == 'b'",
    ]

    /// Builds Item objects whose indexed `tags`/`nums` and unindexed `tagsPlain`/`numsPlain` hold the same.
    static func fill(_ tx: WriteTransaction, _ rng: inout SplitMix64, count: Int, from start: Int) throws {
        for i in 0..<count {
            var tags: [Value] = (0..<Int(rng.next() % 4)).map { _ in .string(words[Int(rng.next() % UInt64(words.count))]) }
            if rng.next() % 10 == 0 { tags.append(.null) }
            let nums: [Value] = (0..<Int(rng.next() % 3)).map { _ in .int(Int64(rng.next() % 6)) }
            _ = try tx.createObject("Item", ["n": .int(Int64(start + i))],
                                    lists: ["tags": tags, "tagsPlain": tags, "nums": nums, "numsPlain": nums])
        }
    }

    func expectSameAnswers(_ s: Snapshot, _ context: String) throws {
        for q in Self.queries {
            let plain = q.replacingOccurrences(of: "tags", with: "tagsPlain").replacingOccurrences(of: "nums", with: "numsPlain")
            let got = try Query.evaluate(q, on: "Item", in: s)
            #expect(got == (try Query.evaluate(plain, on: "Item", in: s)), "\(context): \(q)")
        }
    }

    @Test func indexedSetsAnswerAsUnindexedOnes() throws {
        let db = try Database.inMemory(identifier: "set-index-query-\(UUID())")
        var rng = SplitMix64(seed: 26)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "n", type: .int),
                PropertySchema(name: "tags", type: .string, isOptional: true, isIndexed: true, isSet: true),
                PropertySchema(name: "tagsPlain", type: .string, isOptional: true, isSet: true),
                PropertySchema(name: "nums", type: .int, isIndexed: true, isSet: true),
                PropertySchema(name: "numsPlain", type: .int, isSet: true),
            ]))
            try Self.fill(tx, &rng, count: 300, from: 0)
        }
        try db.read { s in try expectSameAnswers(s, "snapshot") }
        try db.write { tx in
            let t = try tx.table("Item")
            let tags = try tx.property(t, "tags"), plain = try tx.property(t, "tagsPlain")
            for k in try tx.keys(t).prefix(40) {
                try tx.setInsert(k, tags, .string("a"))
                try tx.setInsert(k, plain, .string("a"))
                try tx.setRemove(k, tags, .string("b"))
                try tx.setRemove(k, plain, .string("b"))
            }
            try Self.fill(tx, &rng, count: 50, from: 300)
            try expectSameAnswers(tx, "write transaction")
        }
    }

    @Test func equalityAndInOverAnIndexedSetUseTheIndex() throws {
        let db = try Database.inMemory(identifier: "set-index-plan-\(UUID())")
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "tags", type: .string, isIndexed: true, isSet: true),
                PropertySchema(name: "plain", type: .string, isSet: true),
            ]))
        }
        try db.read { s in
            let ex = Executor(s)
            func usesIndex(_ q: String) throws -> Bool {
                let bound = try Query.parse(q).bind(to: "Item", in: s)
                return try compile(bound.resolvedPredicate(ex), on: "Item", ex).indexed() != nil
            }
            let indexed = ["ANY tags == 'a'", "tags IN {'a', 'b'}", "tags == 'a' AND plain == 'b'"]
            let scanned = ["plain == 'a'", "ALL tags == 'a'", "tags ==[c] 'a'", "tags BEGINSWITH 'a'"]
            for q in indexed {
                let uses = try usesIndex(q)
                #expect(uses, "\(q)")
            }
            for q in scanned {
                let uses = try usesIndex(q)
                #expect(!uses, "\(q)")
            }
        }
    }
}
