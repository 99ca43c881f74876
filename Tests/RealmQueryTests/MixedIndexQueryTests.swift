import Foundation
import Testing
@testable import RealmQuery
@testable import RealmStorage
import TestSupport

/// `mixed == constant` and `mixed IN {…}` through the index of a mixed property answer exactly what a scan
/// of the same values answers: numbers equal across types, a float and a double at float precision, a decimal
/// and a double at 15 digits, NaNs, strings by their bytes, null.
@Suite struct MixedIndexQueryTests {
    /// Values where the comparisons across types differ from one another and from bit identity.
    static let pool: [Value] = [
        .null, .bool(true), .bool(false), .int(0), .int(1), .int(-1), .int(2), .int(.max), .int(.min), .int(1 << 53 + 1),
        .double(0), .double(-0.0), .double(1), .double(0.5), .double(0.1), .double(Double(Float(0.1))), .double(1e-50),
        .double(.nan), .double(.infinity), .double(-.infinity), .double(1e39), .double(Double(1 << 53)),
        .double(9_223_372_036_854_775_807.0), .double(Double(Float.greatestFiniteMagnitude)),
        .float(0), .float(1), .float(0.5), .float(0.1), .float(.nan), .float(.infinity), .float(-0.0),
        .float(.leastNonzeroMagnitude), .float(.greatestFiniteMagnitude),
        .decimal128(Decimal128(Int64(0))), .decimal128(Decimal128(Int64(1))), .decimal128(Decimal128(0.5, significantDigits: 15)),
        .decimal128(Decimal128(0.1, significantDigits: 15)), .decimal128(Decimal128(0.1, significantDigits: 7)),
        .decimal128(Decimal128(Double(Float(0.1)), significantDigits: 7)), .decimal128(Decimal128(Int64(1 << 53 + 1))),
        .string(""), .string("a"), .string("1"), .string("a\u{0}b"), .string("é"), .string("e\u{301}"),
        .string(String(repeating: "x", count: 240) + "a"), .string(String(repeating: "x", count: 240) + "b"),
        .data([]), .data(Array("a".utf8)), .data([0, 1]), .date(Timestamp(seconds: 1)), .date(Timestamp(seconds: -1, nanoseconds: -5)),
        .objectId(ObjectId.zero), .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
        .list([.int(1)]), .dictionary(ValueDictionary([("k", .int(1))])),
    ]

    func makeDatabase(seed: UInt64, count: Int) throws -> Database {
        let db = try Database.inMemory(identifier: "mixed-index-\(UUID())")
        var rng = SplitMix64(seed: seed)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "ix", type: .mixed, isIndexed: true),
                PropertySchema(name: "plain", type: .mixed),
            ]))
            for _ in 0..<count {
                let v = Self.pool[Int(rng.next() % UInt64(Self.pool.count))]
                _ = try tx.createObject("Item", ["ix": v, "plain": v])
            }
        }
        return db
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func indexedAndScannedAnswersAreTheSame(seed: UInt64) throws {
        let db = try makeDatabase(seed: seed, count: 600)
        var rng = SplitMix64(seed: seed &+ 100)
        try db.read { s in
            let t = try s.table("Item")
            for c in Self.pool where SetOrder.rank(c) < 8 {
                let indexed = try Query.evaluate("ix == $0", on: "Item", in: s, arguments: [.value(c)])
                let scanned = try Query.evaluate("plain == $0", on: "Item", in: s, arguments: [.value(c)])
                #expect(indexed == scanned, "ix == \(c)")
                // The engine's lookup: SetOrder's equality, with and without the index.
                let found = try s.find(s.property(t, "ix"), equalTo: c)
                let foundByScan = try s.find(s.property(t, "plain"), equalTo: c)
                #expect(found == foundByScan, "find \(c)")
                // The index takes part: the query is answered from candidates, not a scan.
                #expect(try s.indexCandidates(s.property(t, "ix"), mayEqual: c) != nil)
            }
            for _ in 0..<40 {
                let list = (0..<(1 + Int(rng.next() % 4))).map { _ in Self.pool[Int(rng.next() % UInt64(Self.pool.count - 2))] }
                let indexed = try Query.evaluate("ix IN $0", on: "Item", in: s, arguments: [.list(list)])
                let scanned = try Query.evaluate("plain IN $0", on: "Item", in: s, arguments: [.list(list)])
                #expect(indexed == scanned, "ix IN \(list)")
            }
        }
    }

    @Test func numbersOfEveryTypeAreFoundByOneLookup() throws {
        let db = try Database.inMemory(identifier: "mixed-index-\(UUID())")
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [PropertySchema(name: "ix", type: .mixed, isIndexed: true)]))
            for v: Value in [.int(1), .double(1), .float(1), .decimal128(Decimal128(Int64(1))), .string("1"), .double(1.5), .null] {
                _ = try tx.createObject("Item", ["ix": v])
            }
        }
        try db.read { s in
            let p = try s.property(s.table("Item"), "ix")
            for c: Value in [.int(1), .double(1), .float(1), .decimal128(Decimal128(Int64(1)))] {
                let queried = try Query.evaluate("ix == $0", on: "Item", in: s, arguments: [.value(c)])
                let found = try s.find(p, equalTo: c)
                #expect(queried.count == 4, "\(c)")
                #expect(found == queried, "\(c)")
            }
            let text = try Query.evaluate("ix == '1'", on: "Item", in: s)
            let null = try Query.evaluate("ix == nil", on: "Item", in: s)
            let list = try Query.evaluate("ix IN {1.5, '1'}", on: "Item", in: s)
            #expect(text.count == 1)
            #expect(null.count == 1)
            #expect(list.count == 2)
        }
    }
}
