import Foundation
import Testing
@testable import RealmStorage

/// Entries a write transaction adds to an index wait, and go into the tree sorted (DECISIONS 52): every
/// read and change of that index inside the transaction, and the commit, must see them.
@Suite struct PendingIndexEntriesTests {
    /// Names with long shared prefixes, CJK and emoji, so that many entries tie on their first eight bytes.
    static func name(_ i: Int, _ rng: inout SplitMix64) -> String {
        let stems = ["", "a", "高橋", "高橋 太郎", "Zürich-", "🐶🐶", "same-prefix-", "same-prefix-"]
        return stems[Int(rng.next() % UInt64(stems.count))] + String(rng.next() % 97) + (i % 3 == 0 ? "" : " \(i % 7)")
    }

    @Test func entriesAreSortedByTheirBytes() {
        var rng = SplitMix64(seed: 52)
        var pending = PendingIndexEntries(indexRoot: 0)
        var values: [Value] = []
        for i in 0..<3_000 {
            let v: Value = switch i % 4 {
            case 0: .string(Self.name(i, &rng))
            case 1: .int(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 60))
            case 2: .string(String(repeating: "x", count: Int(rng.next() % 12)))
            default: .null
            }
            values.append(v)
            _ = pending.append(v, UInt64(rng.next() % 50))
        }
        let sorted = pending.bytes.withUnsafeBytes { buf in
            Array(pending.sortedRanges(in: buf).map { Array(buf[$0]) })
        }
        var expected: [[UInt8]] = []
        var start = 0
        for end in pending.ends {
            expected.append(Array(pending.bytes[start..<end]))
            start = end
        }
        expected.sort { $0.lexicographicallyPrecedes($1) }
        #expect(sorted == expected)
    }

    @Test func readsAndChangesInsideTheTransactionSeeTheAddedEntries() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir)
        var rng = SplitMix64(seed: 7)
        var names: [ObjectKey: String] = [:]
        try db.write { tx in
            let people = try tx.table("Person")
            let name = try tx.property(people, "name")
            for i in 0..<2_000 {
                let n = Self.name(i, &rng)
                names[try tx.createObject(people, ["id": .int(Int64(i)), "name": .string(n), "age": .int(1)])] = n
            }
            // Deleting and renaming objects whose entries are still waiting.
            for (k, _) in names.prefix(300) {
                try tx.delete(people, k)
                names[k] = nil
            }
            for (k, n) in names.prefix(300) {
                try tx.set(k, name, .string(n + " renamed"))
                names[k] = n + " renamed"
            }
            // A lookup through the index, in the same transaction.
            let some = names.first!
            #expect(Set(try tx.find(name, equalTo: .string(some.value))) == Set(names.filter { $0.value == some.value }.keys))
            // Index order, in the same transaction.
            let ordered = try #require(try tx.keysInIndexOrder(name))
            #expect(ordered.keys.count == names.count)
            // More added after those changes, then one more lookup.
            for i in 2_000..<2_500 {
                let n = Self.name(i, &rng)
                names[try tx.createObject(people, ["id": .int(Int64(i)), "name": .string(n), "age": .int(2)])] = n
            }
            let last = names.first!
            #expect(Set(try tx.find(name, equalTo: .string(last.value))) == Set(names.filter { $0.value == last.value }.keys))
        }
        #expect(try db.verify().isOK)
        try db.read { s in
            let name = try s.property(s.table("Person"), "name")
            for n in Set(names.values).prefix(400) {
                #expect(Set(try s.find(name, equalTo: .string(n))) == Set(names.filter { $0.value == n }.keys), "\(n)")
            }
            let ordered = try #require(try s.keysInIndexOrder(name))
            #expect(Set(ordered.keys) == Set(names.keys))
            let inOrder = ordered.keys.map { Array(names[$0]!.utf8) }
            #expect(zip(inOrder, inOrder.dropFirst()).allSatisfy { !$1.lexicographicallyPrecedes($0) })
        }
    }

    @Test func anIndexDroppedInTheTransactionTakesItsWaitingEntriesWithIt() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir)
        try db.write { tx in
            for i in 0..<1_500 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("n\(i % 40)")]) }
            try tx.setIndexed("Person", "name", false)
        }
        #expect(try db.verify().isOK)
        try db.write { tx in
            for i in 1_500..<1_600 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("n\(i % 40)")]) }
            try tx.setIndexed("Person", "name", true)  // built from every object, through waiting entries
            try tx.removeProperty("Person", "nickname")
        }
        #expect(try db.verify().isOK)
        try db.write { tx in
            for i in 1_600..<1_700 { try tx.createObject("Person", ["id": .int(Int64(i)), "name": .string("gone")]) }
            try tx.removeProperty("Person", "name")
        }
        #expect(try db.verify().isOK)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Tag", properties: [PropertySchema(name: "label", type: .string, isIndexed: true)]))
            for i in 0..<500 { try tx.createObject("Tag", ["label": .string("t\(i % 9)")]) }
            try tx.removeClass("Tag")
        }
        #expect(try db.verify().isOK)
        let n = try db.read { s in try s.find(s.property(s.table("Person"), "id"), equalTo: .int(1_650)) }
        #expect(n.count == 1)
    }

    /// The same transaction on a database that puts every entry into its tree at once and on one that keeps
    /// every entry waiting: reads inside the transaction and the committed files must agree.
    @Test func backlinksWaitingToGoInAreSeenByEveryRead() throws {
        let dir = TempDir()
        var waiting = DatabaseOptions()
        waiting.directIndexEntries = 0
        var direct = DatabaseOptions()
        direct.directIndexEntries = Int.max
        var dumps: [[String]] = []
        for (name, options) in [("direct.realm", direct), ("waiting.realm", waiting)] {
            let db = try Database.open(path: dir.file(name), options: options)
            try db.write { try $0.createClasses(personDogSchema) }
            var rng = SplitMix64(seed: 52)
            var inside: [String] = []
            try db.write { tx in
                let people = try tx.table("Person"), dogs = try tx.table("Dog")
                let list = try tx.property(people, "dogs")
                var persons: [ObjectKey] = []
                for i in 0..<300 {
                    persons.append(try tx.createObject(people, ["id": .int(Int64(i)), "name": .string("p\(i % 17)")]))
                }
                var owners: [ObjectKey: [ObjectKey]] = [:]
                var dogKeys: [ObjectKey] = []
                for i in 0..<600 {
                    let owner = persons[Int(rng.next() % 300)]
                    let dog = try tx.createObject(dogs, ["name": .string("d\(i)"), "owner": .link(owner)])
                    owners[owner, default: []].append(dog)
                    dogKeys.append(dog)
                    // Some people list a dog two or three times (counted backlink entries).
                    let lister = persons[Int(rng.next() % 300)]
                    for _ in 0...(rng.next() % 3) { try tx.listAppend(lister, list, .link(dog)) }
                }
                // Backlinks through `owner`, in the transaction.
                for p in persons.prefix(40) {
                    let got = try tx.backlinks(of: [p], in: people, from: "Dog", property: "owner")
                    #expect(got.sorted() == (owners[p] ?? []).sorted(), "\(name): dogs owned by \(p)")
                }
                inside.append(contentsOf: try dumpObjects(tx))
                // Deleting targets and origins whose entries are still waiting.
                for p in persons.suffix(50) { try tx.delete(people, p) }
                for d in dogKeys.suffix(80) { try tx.delete(dogs, d) }
                for i in 0..<100 {
                    _ = try tx.createObject(dogs, ["name": .string("late \(i)"), "owner": .link(persons[i])])
                }
                inside.append(contentsOf: try dumpObjects(tx))
            }
            #expect(try db.verify().isOK, "\(name)")
            dumps.append(inside + (try db.read { try dumpObjects($0) }))
        }
        #expect(dumps[0] == dumps[1])
    }
}

/// A bulk insert's index entries go in as one sorted batch among the transaction's first few entries (which went
/// straight in); its nodes come out seven eighths full, where halving each overfull node left them half empty and
/// filling them whole made the next single insert into each one split it.
@Suite struct BulkIndexFillTests {
    static func bulkLoad(_ db: Database, _ rng: inout SplitMix64) throws {
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "P", properties: [PropertySchema(name: "name", type: .string, isIndexed: true)]))
            for _ in 0..<20_000 { try tx.createObject("P", ["name": .string("name \(rng.next() % 1_000_000_000)")]) }
        }
    }

    @Test func aBulkLoadedIndexFillsItsPagesLeavingRoom() throws {
        let db = try Database.inMemory(identifier: "bulk-fill-\(UUID())")
        var rng = SplitMix64(seed: 89)
        try Self.bulkLoad(db, &rng)
        let report = try db.verify()
        #expect(report.isOK, "\(report.problems)")
        let index = try #require(report.space["P.name: index"])
        let fill = Double(index.bytes) / Double(Int(index.pages) * Database.bytesPerPage)
        #expect(fill > 0.8 && fill < 0.92, "index pages \(index.pages), bytes \(index.bytes): \(fill)")
    }

    /// Single inserts after the bulk load land in nodes that have room: few of them split.
    @Test func singleInsertsAfterABulkLoadRarelySplit() throws {
        let db = try Database.inMemory(identifier: "bulk-then-single-\(UUID())")
        var rng = SplitMix64(seed: 102)
        try Self.bulkLoad(db, &rng)
        let before = try #require(try db.verify().space["P.name: index"]).pages
        for _ in 0..<100 {
            try db.write { tx in _ = try tx.createObject("P", ["name": .string("name \(rng.next() % 1_000_000_000)")]) }
        }
        let after = try #require(try db.verify().space["P.name: index"]).pages
        #expect(after - before < 20, "index pages \(before) → \(after) after 100 single inserts")
    }
}
