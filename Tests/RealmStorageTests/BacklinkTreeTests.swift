import Foundation
import Testing
@testable import RealmStorage

/// Backlinks kept in one tree per backlink property (format 3, DECISIONS 50).
@Suite struct BacklinkTreeTests {
    typealias Kit = ErrorTestKit

    /// A file written by the build before backlink trees (format 2; `Fixtures/format2-backlinks.realm`):
    /// people and dogs with to-one links (2,990 dogs own person 0, so its set was a blob), lists that hold a
    /// dog twice, a class linking to itself, objects deleted. Its contents, dumped by that build with
    /// `dumpObjects`, were 3,539 lines hashing to this value.
    static let fixtureDumpHash: UInt64 = 0xf32d_bae4_6b00_b3cc
    static let fixtureDumpLines = 3539

    static func copyOfFixture(in dir: TempDir) throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/format2-backlinks.realm").path
        let path = dir.file("old.realm")
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        return path
    }

    @Test func aFormatTwoFileIsRefusedReadOnlyAndUpgradedWhenOpenedWritable() throws {
        let dir = TempDir()
        let path = try Self.copyOfFixture(in: dir)
        let before = Kit.bytes(path)
        do {
            _ = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
            Issue.record("a format-2 file with backlinks opened read-only")
        } catch let e as StorageError {
            guard case .olderFormat(_, 2, _) = e else { Issue.record("unexpected error \(e)"); return }
            #expect("\(e)".contains("open it once without read-only"))
        }
        #expect(Kit.bytes(path) == before, "a refused read-only open changed the file")

        let db = try Database.open(path: path)
        #expect(try db.latestMeta().format == Meta.formatVersion)
        let dump = try db.read { try dumpObjects($0) }
        #expect(dump.count == Self.fixtureDumpLines)
        #expect(hash64(Array(dump.joined(separator: "\n").utf8)) == Self.fixtureDumpHash)
        let report = try db.verify()
        #expect(report.isOK, "\(report)")

        // Deleting person 0 rewrites its cluster (dropping the old column and freeing the blob its set was)
        // and nulls the links of the dogs its tree entries name.
        let person0 = ObjectKey.fromPrimaryKey(0)
        let owned = try db.read { s in try s.backlinks(person0, in: s.table("Person"), from: "Dog", property: "owner") }
        #expect(owned.count == 2990)
        try db.write { tx in
            let person = try tx.table("Person")
            try tx.delete(person, person0)
            for k in try tx.keys(person) { try tx.set(k, try tx.property(person, "age"), .int(1)) }
        }
        try db.read { s in
            let dog = try s.table("Dog"), owner = try s.property(dog, "owner")
            for k in owned { #expect(try s.value(k, owner) == .null) }
        }
        let after = try db.verify()
        #expect(after.isOK, "\(after)")
        // A compacted copy holds the same objects and backlinks.
        try db.writeCopy(to: dir.file("copy.realm"))
        let copy = try Database.open(path: dir.file("copy.realm"))
        #expect(try copy.read { try dumpObjects($0) } == db.read { try dumpObjects($0) })
        #expect(try copy.verify().isOK)
    }

    /// Entries of one backlink tree as stored: (target, origin, count), count 0 for a pair entry.
    static func entries(_ s: Snapshot, _ className: String, _ backlink: String) throws -> [(UInt64, UInt64, UInt32)] {
        let c = s.catalogue.classInfo(named: className)!
        let bl = c.properties.first { $0.name == backlink }!
        var out: [(UInt64, UInt64, UInt32)] = []
        try s.backlinkTree(c.classID, bl).scan(from: [], source: s) { e in
            out.append((BacklinkEntry.target(e), BacklinkEntry.origin(e), e.count == BacklinkEntry.countedBytes ? BacklinkEntry.count(e) : 0))
            return true
        }
        return out
    }

    @Test func aListHoldingATargetSeveralTimesCountsEachLink() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir)
        var alice = ObjectKey(0), rex = ObjectKey(0)
        try db.write { tx in
            alice = try tx.createObject(tx.table("Person"), ["id": .int(1), "name": .string("Alice")])
            rex = try tx.createObject(tx.table("Dog"), ["name": .string("Rex")])
            let dogs = try tx.property(tx.table("Person"), "dogs")
            for _ in 0..<3 { try tx.listAppend(alice, dogs, .link(rex)) }
        }
        func origins() throws -> [ObjectKey] {
            try db.read { s in try s.backlinks(rex, in: s.table("Dog"), from: "Person", property: "dogs") }
        }
        #expect(try origins() == [alice, alice, alice])
        let stored = try db.read { try Self.entries($0, "Dog", "@links.Person.dogs") }
        #expect(stored.map(\.2) == [0, 3], "a pair entry and a count entry of 3")
        try db.write { tx in try tx.listRemove(alice, tx.property(tx.table("Person"), "dogs"), at: 1) }
        #expect(try origins() == [alice, alice])
        #expect(try db.read { try Self.entries($0, "Dog", "@links.Person.dogs") }.map(\.2) == [0, 2])
        try db.write { tx in try tx.listRemove(alice, tx.property(tx.table("Person"), "dogs"), at: 0) }
        #expect(try origins() == [alice])
        #expect(try db.read { try Self.entries($0, "Dog", "@links.Person.dogs") }.map(\.2) == [0])
        #expect(try db.verify().isOK)
        try db.write { tx in try tx.listRemoveAll(alice, tx.property(tx.table("Person"), "dogs")) }
        #expect(try origins() == [])
        #expect(try db.read { try Self.entries($0, "Dog", "@links.Person.dogs") }.isEmpty)
        #expect(try db.verify().isOK)
    }

    @Test func verifyReportsEntriesWithoutTheirLinks() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir)
        try db.write { tx in
            let alice = try tx.createObject(tx.table("Person"), ["id": .int(1), "name": .string("Alice")])
            let rex = try tx.createObject(tx.table("Dog"), ["name": .string("Rex"), "owner": .link(alice)])
            // An entry no link stands for, and a count that does not match the links.
            let dog = tx.catalogue.classInfo(named: "Dog")!, person = tx.catalogue.classInfo(named: "Person")!
            let viaOwner = person.properties.first { $0.name == "@links.Dog.owner" }!
            try tx.withIndex(person.classID, viaOwner) { tree in
                _ = try tree.insert(BacklinkEntry.counted(alice.rawValue, rex.rawValue, 2), sink: tx)
            }
            let viaDogs = dog.properties.first { $0.name == "@links.Person.dogs" }!
            try tx.withIndex(dog.classID, viaDogs) { tree in
                _ = try tree.insert(BacklinkEntry.pair(rex.rawValue, 999), sink: tx)
            }
        }
        let problems = try db.verify().problems
        #expect(problems.contains { $0.contains("2 backlink(s) from Dog #") && $0.contains("which holds 1 link(s)") }, "\(problems)")
        #expect(problems.contains { $0.contains("backlink from missing Person #999") }, "\(problems)")
    }

    /// A copy made in small batches (a commit every 7 objects or backlink entries) holds the same objects
    /// and backlinks: each batch's transaction continues the trees the previous one committed.
    @Test func aCopyInSmallBatchesKeepsEveryBacklink() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir)
        var rng = SplitMix64(seed: 12)
        try db.write { tx in
            let person = try tx.table("Person"), dog = try tx.table("Dog"), dogs = try tx.property(person, "dogs")
            var people: [ObjectKey] = [], pets: [ObjectKey] = []
            for i in 0..<30 { people.append(try tx.createObject(person, ["id": .int(Int64(i)), "name": .string("p\(i)")])) }
            for i in 0..<80 {
                pets.append(try tx.createObject(dog, ["name": .string("d\(i)"), "owner": i % 4 == 0 ? .null : .link(people[Int(rng.next() % 30)])]))
            }
            for p in people { for _ in 0..<Int(rng.next() % 5) { try tx.listAppend(p, dogs, .link(pets[Int(rng.next() % 80)])) } }
        }
        let target = try Database.open(path: dir.file("copy.realm"))
        try db.read { try Database.copy(from: $0, into: target, batch: 7) }
        #expect(try target.read { try dumpObjects($0) } == db.read { try dumpObjects($0) })
        let report = try target.verify()
        #expect(report.isOK, "\(report)")
    }

    /// Change sets of a class whose backlink tree spans many leaves read only the leaves the versions do not
    /// share, and still name exactly the objects whose backlinks changed: committed against committed, and a
    /// write transaction's dirty tree against the committed one, in both directions.
    @Test func backlinkChangesOfALargeTree() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir)
        var people: [ObjectKey] = [], dogs: [ObjectKey] = []
        var rng = SplitMix64(seed: 3)
        try db.write { tx in
            let person = try tx.table("Person"), dog = try tx.table("Dog")
            for i in 0..<500 { people.append(try tx.createObject(person, ["id": .int(Int64(i)), "name": .string("p\(i)")])) }
            for i in 0..<12_000 {
                dogs.append(try tx.createObject(dog, ["name": .string("d\(i)"), "owner": .link(people[Int(rng.next() % 500)])]))
            }
        }
        let leaves = try db.read { s in
            let c = s.catalogue.classInfo(named: "Person")!
            return try s.backlinkTree(c.classID, c.properties.first { $0.name == "@links.Dog.owner" }!).leaves(source: s).count
        }
        #expect(leaves > 20, "the tree should span many leaves")
        let s0 = try db.snapshot()
        let owner = { (s: Snapshot, d: ObjectKey) throws -> ObjectKey in
            guard case .link(let p) = try s.value(d, s.property(s.table("Dog"), "owner")) else { throw StorageError.noSuchObject(className: "Dog", key: d.rawValue) }
            return p
        }
        // Three dogs change owners: the old and the new owners' backlinks changed, nobody else's.
        let moved = [dogs[10], dogs[3000], dogs[5999]]
        var expected: Set<ObjectKey> = []
        try db.write { tx in
            for (j, d) in moved.enumerated() {
                expected.insert(try owner(tx, d))
                let to = people[(j * 97 + 13) % 500]
                expected.insert(to)
                try tx.set(d, tx.property(tx.table("Dog"), "owner"), .link(to))
            }
            let inside = try tx.changes(in: "Person", since: s0)
            #expect(Set(inside.backlinksChanged.keys) == expected)
            #expect(inside.backlinksChanged.values.allSatisfy { $0 == ["Dog.owner"] })
            #expect(Set(try s0.changes(in: "Person", since: tx).backlinksChanged.keys) == expected)
        }
        let s1 = try db.snapshot()
        let after = try s1.changes(in: "Person", since: s0)
        #expect(Set(after.backlinksChanged.keys) == expected)
        #expect(after.modified.isEmpty)
        #expect(Set(try s0.changes(in: "Person", since: s1).backlinksChanged.keys) == expected)
        #expect(try s1.changes(in: "Person", since: s1) == TableChanges())
    }
}

/// Nodes a transaction writes and then gives back (a tree dropped after `dropIndex` wrote its dirty nodes)
/// must not be handed to the next transaction as the nodes at those refs: the refs are reused.
@Suite struct DroppedTreeNodesTests {
    @Test func nodesOfADroppedTreeAreNotKeptForTheirReusedRefs() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir)
        var people: [ObjectKey] = []
        try db.write { tx in
            let person = try tx.table("Person")
            for i in 0..<3000 { people.append(try tx.createObject(person, ["id": .int(Int64(i)), "name": .string("name-\(i * 7919 % 3000)")])) }
        }
        var rng = SplitMix64(seed: 8)
        try db.write { tx in
            let dog = try tx.table("Dog"), person = try tx.table("Person")
            // A backlink tree of many dirty nodes, dropped whole by deleteAll (its nodes are written, then
            // given back), while the name index gets dirty nodes written at commit.
            for i in 0..<6000 { _ = try tx.createObject(dog, ["name": .string("d\(i)"), "owner": .link(people[Int(rng.next() % 3000)])]) }
            try tx.deleteAll(dog)
            for i in 3000..<3400 { _ = try tx.createObject(person, ["id": .int(Int64(i)), "name": .string("name-\(i * 7919 % 3400)")]) }
        }
        // The next transactions change the name index where that commit wrote it.
        for round in 0..<4 {
            try db.write { tx in
                let person = try tx.table("Person")
                for i in 0..<300 { _ = try tx.createObject(person, ["id": .int(Int64(10_000 + round * 300 + i)), "name": .string("name-\(i * 11)")]) }
            }
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }
}
