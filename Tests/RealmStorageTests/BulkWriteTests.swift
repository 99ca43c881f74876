import Foundation
import Testing
@testable import RealmStorage

/// The bulk write paths (DECISIONS 118, 119) store exactly what the general ones do: a row of values given in the
/// class's order is the row itself, `updateAll` changes a column a leaf at a time, an unchanged leaf's key array
/// is copied as committed, and a transaction's index entries are sorted on their first sixteen bytes. Each test
/// runs the fast path and the path it replaces side by side, over every stored type (nulls, conversions,
/// strings in dictionary form, long strings out of line, CJK and emoji), with primary keys, an index and links,
/// and with inserts, deletes and updates mixed in one transaction.
@Suite struct BulkWriteTests {
    static let schema = [
        ClassSchema(name: "Target", properties: [PropertySchema(name: "n", type: .int)]),
        ClassSchema(name: "Row", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "name", type: .string, isIndexed: true),
            PropertySchema(name: "city", type: .string),
            PropertySchema(name: "i", type: .int),
            PropertySchema(name: "oi", type: .int, isOptional: true),
            PropertySchema(name: "b", type: .bool, isOptional: true),
            PropertySchema(name: "f", type: .float, isOptional: true),
            PropertySchema(name: "d", type: .double),
            PropertySchema(name: "os", type: .string, isOptional: true),
            PropertySchema(name: "data", type: .data, isOptional: true),
            PropertySchema(name: "t", type: .date, isOptional: true),
            PropertySchema(name: "oid", type: .objectId, isOptional: true),
            PropertySchema(name: "u", type: .uuid, isOptional: true),
            PropertySchema(name: "dec", type: .decimal128, isOptional: true),
            PropertySchema(name: "m", type: .mixed, isOptional: true),
            .link("target", to: "Target"),
        ]),
    ]
    static var rowSchema: ClassSchema { schema[1] }
    static let cities = ["Zürich", "東京", "Москва", "São Paulo", "🐶 town", "e\u{301}", "\u{e9}", ""]

    /// The values of row `id` in the order of `Row`'s properties; some need converting (an int for the double
    /// `d`, a double for the float `f`).
    static func row(_ id: Int64, _ rng: inout SplitMix64, targets: [ObjectKey]) -> [Value] {
        let r = rng.next()
        return [
            .int(id),
            .string(id % 7 == 0 ? "名前 🐕 \(id % 50)" : "name-\(id % 50)"),
            .string(cities[Int(r % UInt64(cities.count))]),
            .int(r % 5 == 0 ? Int64(bitPattern: r) : Int64(id % 100)),
            r % 3 == 0 ? .null : .int(id - 30),
            r % 4 == 0 ? .null : .bool(r & 1 == 1),
            r % 6 == 0 ? .double(Double(id) / 4) : .float(Float(id) / 3),
            r % 2 == 0 ? .int(Int64(r % 1000)) : .double(Double(r % 1000) - 500.5),
            r % 4 == 0 ? .null : .string(id % 13 == 0 ? String(repeating: "長", count: 600) : "s\(id) 🐶"),
            r % 5 == 0 ? .null : .data(Array(repeating: UInt8(id & 0xFF), count: Int(r % 20))),
            r % 9 == 0 ? .null : .date(Timestamp(seconds: id * 86_400 - 4_000_000_000, nanoseconds: Int32(id % 1000))),
            r % 8 == 0 ? .null : .objectId(ObjectId(byteArray: (0..<12).map { UInt8((Int64($0) + id) & 0xFF) })),
            r % 10 == 0 ? .null : .uuid(UUID(uuid: (UInt8(id & 0xFF), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(r & 0xFF)))),
            r % 12 == 0 ? .null : .decimal128(Decimal128(id)),
            id % 5 == 0 ? .null : (id % 2 == 0 ? .int(id) : .string("m\(id)")),
            targets.isEmpty || r % 3 == 0 ? .null : .link(targets[Int(r % UInt64(targets.count))]),
        ]
    }

    /// Two databases with the schema and 20 targets each.
    static func pair(_ dir: TempDir) throws -> (Database, Database, [ObjectKey]) {
        var targets: [ObjectKey] = []
        let dbs = try ["a.realm", "b.realm"].map { name in
            let db = try Database.open(path: dir.file(name))
            try db.write { tx in
                try tx.createClasses(Self.schema)
                let t = try tx.table("Target")
                targets = try (0..<20).map { try tx.createObject(t, ["n": .int(Int64($0))]) }
            }
            return db
        }
        return (dbs[0], dbs[1], targets)
    }

    /// Inserts `ids` into `Row`, the values in the class's order (`inOrder`) or in reverse order, deleting and
    /// changing earlier rows now and then in the same transaction.
    static func insert(_ ids: [Int64], into tx: WriteTransaction, inOrder: Bool, targets: [ObjectKey], seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let t = try tx.table("Row")
        var columns = try Self.rowSchema.properties.map { try tx.property(t, $0.name) }
        if !inOrder { columns.reverse() }
        let i = try tx.property(t, "i"), os = try tx.property(t, "os")
        var done: [Int64] = []
        for (n, id) in ids.enumerated() {
            var values = Self.row(id, &rng, targets: targets)
            if !inOrder { values.reverse() }
            try tx.createObject(t, columns: columns, values: values)
            done.append(id)
            if n % 41 == 40, let k = try tx.object(t, primaryKey: .int(done[Int(rng.next() % UInt64(done.count))])) {
                try tx.delete(t, k)
            }
            if n % 29 == 28, let k = try tx.object(t, primaryKey: .int(done[Int(rng.next() % UInt64(done.count))])) {
                try tx.set(k, i, .int(-7))
                try tx.set(k, os, .string("changed 変更"))
            }
        }
    }

    /// What both databases answer: every object's values and backlinks, and lookups through the index and the
    /// primary key.
    static func answers(_ db: Database) throws -> [String] {
        try db.read { s in
            let t = try s.table("Row")
            let name = try s.property(t, "name"), id = try s.property(t, "id")
            var out = try dumpObjects(s)
            for n in ["name-3", "name-49", "名前 🐕 7", "name-0"] {
                out.append("\(n): \(try s.values(id, where: name, equalTo: .string(n)).map(\.description).sorted())")
            }
            for k in [0, 17, 499, 1_234, 2_999] {
                out.append("pk \(k): \(String(describing: try s.object(t, primaryKey: .int(Int64(k)))))")
            }
            return out
        }
    }

    @Test func aWholeRowInTheClassOrderStoresWhatAnyOrderStores() throws {
        let dir = TempDir()
        let (a, b, targets) = try Self.pair(dir)
        var rng = SplitMix64(seed: 125)
        // Ascending ids (past the end of the tree), then ids below them and between them (not past the end).
        let first = (0..<1_500).map { Int64($0 * 2) }
        var second = (0..<1_500).map { Int64($0 * 2 + 1) }
        for j in second.indices.reversed() { second.swapAt(j, Int(rng.next() % UInt64(j + 1))) }
        for (db, inOrder) in [(a, true), (b, false)] {
            try db.write { tx in try Self.insert(first, into: tx, inOrder: inOrder, targets: targets, seed: 1) }
            try db.write { tx in try Self.insert(second, into: tx, inOrder: inOrder, targets: targets, seed: 2) }
            #expect(try db.verify().isOK)
        }
        let answers = try Self.answers(a)
        #expect(answers.count > 2_800)
        #expect(answers == (try Self.answers(b)))
        // The values as given, converted where the property's type asks.
        try a.read { s in
            let t = try s.table("Row")
            let k = try #require(try s.object(t, primaryKey: .int(2)))
            var r = SplitMix64(seed: 1)
            _ = Self.row(0, &r, targets: targets)
            let given = Self.row(2, &r, targets: targets)
            let d = try s.value(k, s.property(t, "d"))
            if case .int(let x) = given[7] { #expect(d == .double(Double(x))) } else { #expect(d == given[7]) }
            #expect(try s.value(k, s.property(t, "os")) == given[8])
        }
    }

    static func incremented(_ v: Value) -> Value {
        switch v {
        case .int(let x): return .int(x &+ 1)
        case .double(let x): return .double(x * 2)
        case .string(let s): return .string(s.count % 3 == 0 ? String(repeating: s, count: 90) : s + " ✓")  // some go out of line
        case .date(let t): return .date(Timestamp(seconds: t.seconds + 1, nanoseconds: t.nanoseconds))
        default: return v
        }
    }

    @Test func updateAllStoresWhatSettingEachObjectStores() throws {
        let dir = TempDir()
        let (a, b, targets) = try Self.pair(dir)
        for db in [a, b] {
            try db.write { tx in try Self.insert((0..<3_000).map { Int64($0 * 3) }, into: tx, inOrder: true, targets: targets, seed: 3) }
        }
        var rng = SplitMix64(seed: 126)
        let removed = Set((0..<40).map { _ in Int64(rng.next() % 3_000) * 3 }).sorted()
        for (db, whole) in [(a, true), (b, false)] {
            try db.write { tx in
                let t = try tx.table("Row")
                for name in ["i", "d", "city", "os", "t", "oi", "m", "name"] {
                    let p = try tx.property(t, name)
                    if whole {
                        _ = try tx.updateAll(t, p, Self.incremented)
                    } else {
                        for k in try tx.keys(t) { try tx.set(k, p, Self.incremented(try tx.value(k, p))) }
                    }
                }
                // In the leaves just changed: rows deleted and others inserted between them, so that a leaf may hold
                // as many rows as it was decoded with, but other keys.
                let columns = try Self.rowSchema.properties.map { try tx.property(t, $0.name) }
                var r = SplitMix64(seed: 4)
                for id in removed {
                    if let k = try tx.object(t, primaryKey: .int(id)) { try tx.delete(t, k) }
                    try tx.createObject(t, columns: columns, values: Self.row(id + 1, &r, targets: targets))
                }
                _ = try tx.updateAll(t, try tx.property(t, "b")) { v in if case .bool(let x) = v { .bool(!x) } else { .bool(true) } }
            }
            // A second transaction changes one column of leaves committed by the first.
            try db.write { tx in
                let t = try tx.table("Row")
                let p = try tx.property(t, "f")
                if whole {
                    _ = try tx.updateAll(t, p) { v in if case .float(let x) = v { .float(x + 1) } else { v } }
                } else {
                    for k in try tx.keys(t) { if case .float(let x) = try tx.value(k, p) { try tx.set(k, p, .float(x + 1)) } }
                }
            }
            #expect(try db.verify().isOK)
        }
        let answers = try Self.answers(a)
        #expect(answers.count > 2_900)
        #expect(answers == (try Self.answers(b)))
        // And after reopening, read from the files alone.
        let paths = [dir.file("a.realm"), dir.file("b.realm")]
        let reopened = try paths.map { try Self.answers(try Database.open(path: $0)) }
        #expect(reopened[0] == answers && reopened[1] == answers)
    }

    /// A transform that throws leaves the rows before it changed, as setting each object would, and the
    /// transaction can still commit a sound file (the leaves changed so far replaced nodes it had freed).
    @Test func aThrowingTransformKeepsTheRowsItChanged() throws {
        let dir = TempDir()
        let (a, _, targets) = try Self.pair(dir)
        try a.write { tx in try Self.insert((0..<600).map { Int64($0) }, into: tx, inOrder: true, targets: targets, seed: 5) }
        struct Stop: Error {}
        try a.write { tx in
            let t = try tx.table("Row")
            let i = try tx.property(t, "i")
            var seen = 0
            #expect(throws: Stop.self) {
                try tx.updateAll(t, i) { _ in
                    seen += 1
                    if seen == 300 { throw Stop() }
                    return .int(-1)
                }
            }
            let keys = try tx.keys(t)
            for (n, k) in keys.enumerated() where n < 299 { #expect(try tx.value(k, i) == .int(-1)) }
            #expect(try tx.value(keys[299], i) != .int(-1))
        }
        let report = try a.verify()
        #expect(report.isOK, "\(report.problems)")
        try a.read { s in
            let t = try s.table("Row")
            let i = try s.property(t, "i")
            #expect(try s.keys(t).prefix(299).allSatisfy { try s.value($0, i) == .int(-1) })
        }
    }

    /// Entries that tie on their first eight and sixteen bytes, shorter than either, and holding zero bytes (which
    /// the zero padding of short entries must not confuse) come out in byte order.
    @Test func pendingEntriesSortByAllTheirBytes() {
        var rng = SplitMix64(seed: 16)
        var pending = PendingIndexEntries(indexRoot: 0)
        let alphabet: [UInt8] = [0, 1, 0x61, 0xFF]
        let stems: [[UInt8]] = [[], [0x05], Array("name-".utf8), Array("same-prefix-long-".utf8), [0, 0, 0, 0, 0, 0, 0, 0],
                                Array(repeating: 0xFF, count: 15)]
        var expected: [[UInt8]] = []
        for _ in 0..<5_000 {
            var e = stems[Int(rng.next() % UInt64(stems.count))]
            for _ in 0..<Int(rng.next() % 24) { e.append(alphabet[Int(rng.next() % 4)]) }
            pending.bytes += e
            pending.ends.append(pending.bytes.count)
            expected.append(e)
        }
        let sorted = pending.bytes.withUnsafeBytes { buf in Array(pending.sortedRanges(in: buf).map { Array(buf[$0]) }) }
        expected.sort { $0.lexicographicallyPrecedes($1) }
        #expect(sorted == expected)
    }

    /// The sample of the first rows decides a column is plain only when all of them are distinct as bytes.
    @Test func theSampleOfTheFirstRowsDecidesAsBefore() {
        func isDictionary(_ values: [Value]) -> Bool {
            var w = ByteWriter()
            ColumnCodec.encodeColumn(values[...], type: .string, nullable: true, into: &w, dictionary: true) { _ in 1 }
            return w.bytes[1] == 1
        }
        let n = StringDictionary.sampleRows
        let repeats = (0..<200).map { _ in Value.string("again") }
        #expect(!isDictionary((0..<n).map { .string("first \($0)") } + repeats))
        #expect(isDictionary((0..<(n - 2)).map { .string("first \($0)") } + repeats))
        #expect(isDictionary([.null] + (0..<(n - 1)).map { .string("first \($0)") } + repeats))
        #expect(isDictionary((0..<(n - 1)).map { .string("first \($0)") } + [.string("first 0")] + repeats))
        // More than half of the rows distinct: plain, wherever the repeats are.
        #expect(!isDictionary((0..<200).map { .string($0 % 3 == 0 ? "x" : "v\($0)") }))
    }

    static func entries(_ tree: EntryTree, _ store: FakeStore) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        try tree.scan(from: [], source: store) { out.append(Array($0)); return true }
        return out
    }

    /// A sorted batch built into an empty tree, or merged with the one leaf a transaction's first entries made,
    /// holds what inserting each entry gives: every entry once, in order, within the limits, and it reads back
    /// the same once committed. A committed tree is left to the inserts.
    @Test(arguments: [0, 64])
    func aSortedBatchBuildsTheTreeInsertsWouldBuild(first: Int) throws {
        var rng = SplitMix64(seed: 89)
        // The first entries, some above every entry of the batch (the leaf's entries after the batch's last).
        let early = (0..<first).map { i in i % 16 == 15 ? [UInt8](repeating: 0xFF, count: 41 + i) : randomEntry(&rng, maxLength: 40) }
        var batch = (0..<6_000).map { _ in randomEntry(&rng, maxLength: 40) } + early.prefix(10)
        batch.sort { $0.lexicographicallyPrecedes($1) }
        let store = FakeStore()
        var bulk = EntryTree(root: 0), single = EntryTree(root: 0)
        for e in early {
            _ = try bulk.insert(e, sink: store)
            _ = try single.insert(e, sink: store)
        }
        // The batch as the transaction holds it: one buffer, a range per entry.
        var flat: [UInt8] = []
        var ranges: [Range<Int>] = []
        for e in batch {
            ranges.append(flat.count..<flat.count + e.count)
            flat += e
        }
        let loaded = flat.withUnsafeBytes { buf in bulk.bulkLoad(ranges.lazy.map { UnsafeRawBufferPointer(rebasing: buf[$0]) }) }
        #expect(loaded)
        single.ascending = true
        for e in batch { _ = try single.insert(e, sink: store) }
        let expected = try Self.entries(single, store)
        #expect(expected.count > 5_000)
        #expect(try Self.entries(bulk, store) == expected)
        #expect(try bulk.checkInvariants(source: store) == expected.count)
        let root = try bulk.commit(sink: store)
        var reopened = EntryTree(root: root)
        #expect(try Self.entries(reopened, store) == expected)
        #expect(try reopened.checkInvariants(source: store) == expected.count)
        let committedLoaded = reopened.bulkLoad([UnsafeRawBufferPointer]())
        #expect(!committedLoaded)
    }
}
