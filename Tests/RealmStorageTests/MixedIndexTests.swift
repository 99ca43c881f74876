import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// The index of a mixed property: every scalar kind keyed, numbers equal across types found by one lookup,
/// links and nested collections present but not searched, the index exact through every change.
@Suite struct MixedIndexTests {
    static let schema = ClassSchema(name: "Doc", properties: [
        PropertySchema(name: "any", type: .mixed, isIndexed: true),
        PropertySchema(name: "n", type: .int),
    ])
    static let target = ClassSchema(name: "Target", properties: [PropertySchema(name: "n", type: .int)])

    static let values: [Value] = [
        .null, .bool(false), .bool(true), .int(-3), .int(1), .int(.max), .float(1), .float(.nan), .double(1), .double(-0.0),
        .double(0.25), .double(.infinity), .decimal128(Decimal128(Int64(1))), .decimal128(Decimal128(Int64(0))), .string("1"),
        .string(""), .string("a\u{0}b"), .string(String(repeating: "長", count: 100)), .data([]), .data(Array("1".utf8)),
        .date(Timestamp(seconds: -5, nanoseconds: -1)), .objectId(ObjectId.zero),
        .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
        .list([.int(1), .string("x")]), .dictionary(ValueDictionary([("k", .double(1))])),
    ]

    func find(_ db: Database, _ v: Value) throws -> [ObjectKey] {
        try db.read { s in try s.find(s.property(s.table("Doc"), "any"), equalTo: v) }
    }

    func expectVerified(_ db: Database, _ context: String) throws {
        let report = try db.verify()
        #expect(report.isOK, "\(context): \(report.problems)")
    }

    @Test func encodingsAreSelfDelimitingAndSpansHoldEqualNumbers() {
        // Every value has an encoding (none traps), and no encoding is a proper prefix of another.
        let encoded = Self.values.map { IndexKey.encode($0) }
        for (i, a) in encoded.enumerated() {
            for (j, b) in encoded.enumerated() where i != j && a != b {
                #expect(!(b.count > a.count && Array(b.prefix(a.count)) == a), "\(Self.values[i]) prefixes \(Self.values[j])")
            }
        }
        // Doubles keep their order; NaN is below every number; -0.0 is 0.0.
        let doubles: [Double] = [-.infinity, -1e300, -1, -Double.leastNonzeroMagnitude, 0, Double.leastNonzeroMagnitude, 0.5, 1, 1e300, .infinity]
        let keys = doubles.map(IndexKey.orderedBits)
        #expect(keys == keys.sorted() && Set(keys).count == keys.count)
        #expect(IndexKey.orderedBits(.nan) < IndexKey.orderedBits(-.infinity))
        #expect(IndexKey.orderedBits(-0.0) == IndexKey.orderedBits(0))
        // Links and nested collections are not searched.
        #expect(IndexKey.mixedSpans(for: .list([])) == nil)
        #expect(IndexKey.mixedSpans(for: .typedLink(classID: 1, key: ObjectKey(1))) == nil)
    }

    @Test func everyScalarKindIsFoundAndNumbersAcrossTypes() throws {
        let db = try Database.inMemory(identifier: "mixed-index-\(UUID())")
        var keys: [ObjectKey] = []
        try db.write { tx in
            try tx.createClass(Self.schema)
            for v in Self.values { keys.append(try tx.createObject("Doc", ["any": v])) }
        }
        try expectVerified(db, "after insert")
        for (i, v) in Self.values.enumerated() where SetOrder.rank(v) < 8 {
            let want = keys.indices.filter { SetOrder.rank(Self.values[$0]) < 8 && SetOrder.compare(Self.values[$0], v) == 0 }.map { keys[$0] }
            #expect(try find(db, v) == want, "find \(v)")
            #expect(want.contains(keys[i]))
        }
        // 1, 1.0, 1.0f and decimal 1 are one value; 0 and -0.0 too; the string "1" and data "1" are not numbers.
        #expect(try find(db, .int(1)).count == 4)
        #expect(try find(db, .decimal128(Decimal128(Int64(0)))) == [keys[9], keys[13]])
        #expect(try find(db, .string("1")) == [keys[14]])
        #expect(try find(db, .data(Array("1".utf8))) == [keys[19]])
        // A nested collection is found by a scan (the index does not search it) and does not disturb the rest.
        #expect(try find(db, .list([.int(1), .string("x")])) == [keys[23]])
    }

    @Test func theIndexStaysExactThroughEveryChange() throws {
        let dir = TempDir()
        let path = dir.file("mixed.realm")
        let db = try Database.open(path: path)
        var keys: [ObjectKey] = []
        var targets: [ObjectKey] = []
        try db.write { tx in
            try tx.createClasses([Self.schema, Self.target])
            for i in 0..<200 { keys.append(try tx.createObject("Doc", ["any": Self.values[i % Self.values.count], "n": .int(Int64(i))])) }
            for i in 0..<3 { targets.append(try tx.createObject("Target", ["n": .int(Int64(i))])) }
        }
        try expectVerified(db, "insert")
        let targetID = try db.read { try $0.table("Target").classID }
        try db.write { tx in
            // Updates across kinds, a typed link and a nested collection holding one.
            for (i, k) in keys.enumerated() where i % 3 == 0 { try tx.set(k, "Doc", "any", .double(Double(i % 5))) }
            try tx.set(keys[1], "Doc", "any", .typedLink(classID: targetID, key: targets[0]))
            try tx.set(keys[2], "Doc", "any", .list([.typedLink(classID: targetID, key: targets[1])]))
            for (i, k) in keys.enumerated() where i % 7 == 0 { try tx.delete("Doc", k) }
        }
        try expectVerified(db, "update and delete")
        #expect(try find(db, .int(2)) == find(db, .decimal128(Decimal128(Int64(2)))))
        // Deleting a link's target nulls the value, and its index entry follows.
        let nullsBefore = try find(db, .null).count
        try db.write { tx in try tx.delete("Target", targets[0]) }
        try expectVerified(db, "a link's target deleted")
        #expect(try find(db, .null).count == nullsBefore + 1)
        // Removing and adding the index back.
        try db.write { tx in try tx.setIndexed("Doc", "any", false) }
        try expectVerified(db, "index removed")
        let byScan = try find(db, .double(3))
        try db.write { tx in try tx.setIndexed("Doc", "any", true) }
        try expectVerified(db, "index added")
        #expect(try find(db, .double(3)) == byScan)
        #expect(!byScan.isEmpty)
        // A new indexed mixed property on objects that exist, then compaction and a reopen.
        try db.write { tx in try tx.addProperty("Doc", PropertySchema(name: "extra", type: .mixed, isIndexed: true)) }
        try expectVerified(db, "indexed property added")
        try db.compact()
        try expectVerified(db, "compacted")
        #expect(try find(db, .double(3)) == byScan)
        try db.write { tx in try tx.deleteAll(tx.table("Doc")) }
        try expectVerified(db, "deleteAll")
        #expect(try find(db, .null).isEmpty)
        try db.write { tx in _ = try tx.createObject("Doc", ["any": .float(3)]) }
        try expectVerified(db, "insert after deleteAll")
        #expect(try find(db, .int(3)).count == 1)
    }

    @Test func verifyReportsAMissingEntry() throws {
        let db = try Database.inMemory(identifier: "mixed-index-\(UUID())")
        try db.write { tx in
            try tx.createClass(Self.schema)
            let k = try tx.createObject("Doc", ["any": .double(0.5)])
            let t = try tx.table("Doc")
            let info = try tx.property(t, "any").info
            try tx.removeFromIndex(t.classID, info, .double(0.5), k.rawValue)
        }
        let report = try db.verify()
        #expect(report.problems.contains { $0.contains("index Doc.any") }, "\(report.problems)")
    }

    /// A format-5 file another process has open stays format 5, which a build that reads only format 5 may be
    /// writing: an index it would not know how to keep is refused, as sets are.
    @Test func aFileThatStaysFormatFiveRefusesAMixedIndex() throws {
        try PageBoundChecksumTests.withSharedFormatFiveFixture { db in
            do {
                try db.write { tx in try tx.createClass(Self.schema) }
                Issue.record("a format-5 file took an index on a mixed property")
            } catch StorageError.invalidSchema(let m) {
                #expect(m.hasPrefix("Doc.any needs file format 7; this file is format 5"), "\(m)")
            }
        }
    }
}
