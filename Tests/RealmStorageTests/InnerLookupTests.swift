import Foundation
import Testing
@testable import RealmStorage

/// Lookups by key keep the committed inner nodes they pass, decoded, for the rest of the snapshot or
/// transaction (DECISIONS 63). Through a tree of three levels, in any order, before and after a transaction
/// changes part of it, every lookup finds exactly the object it asks for.
@Suite struct InnerLookupTests {
    static let count = 40_000

    static func itemDatabase(_ path: String) throws -> Database {
        let db = try Database.open(path: path)
        try db.write { tx in
            try tx.createClasses([
                ClassSchema(name: "Item", properties: [
                    PropertySchema(name: "id", type: .int, isPrimaryKey: true), PropertySchema(name: "n", type: .int),
                ]),
                ClassSchema(name: "Tag", properties: [PropertySchema(name: "label", type: .string), .link("item", to: "Item")]),
            ])
            let t = try tx.table("Item")
            let columns = try ["id", "n"].map { try tx.property(t, $0) }
            for i in 0..<count { try tx.createObject(t, columns: columns, values: [.int(Int64(i * 2)), .int(Int64(i * 3))]) }
        }
        return db
    }

    /// The levels of the class's tree (1: a single leaf).
    static func levels(_ s: Snapshot, _ className: String) throws -> Int {
        let c = try #require(s.catalogue.classes.first { $0.name == className })
        let node = try s.node(c.tableRoot, expected: nil)
        return node[0] == NodeType.tableInner.rawValue ? Int(node.u32(at: 20)) + 1 : 1
    }

    /// Looks up `ids` (even ones exist, as `n` = 3/2 id; odd ones do not).
    static func expectLookups(_ s: Snapshot, _ ids: [Int], deleted: Set<Int> = []) throws {
        let t = try s.table("Item")
        let n = try s.property(t, "n")
        for id in ids {
            let key = try s.object(t, primaryKey: .int(Int64(id)))
            if id % 2 != 0 || deleted.contains(id) || id >= 2 * count {
                #expect(key == nil, "id \(id) found")
            } else {
                let k = try #require(key, "id \(id) not found")
                #expect(try s.value(k, n) == .int(Int64(id / 2 * 3)))
            }
        }
    }

    /// A lookup that is alone in its snapshot (a single-object commit's check of its new key) decodes nothing;
    /// the second one entering the same tree decodes what it passes.
    @Test func aTreeIsDecodedWhenASecondLookupEntersIt() throws {
        let dir = TempDir()
        let db = try Self.itemDatabase(dir.file("second.realm"))
        try db.read { s in
            let t = try s.table("Item")
            #expect(try s.object(t, primaryKey: .int(2)) != nil)
            #expect(s.innerLookups.isEmpty, "one lookup decoded nodes")
            #expect(try s.object(t, primaryKey: .int(40_002)) != nil)
            #expect(s.innerLookups.count == 1, "the second lookup kept nothing")
        }
    }

    /// Every place where lookups enter committed nodes is decoded the second time a lookup enters it, whichever
    /// place it was offered as (the first two are kept in fields of their own, later ones in a list: a
    /// single-object commit offers two, and allocates nothing for them).
    @Test func eachPlaceIsDecodedTheSecondTimeItIsOffered() throws {
        let dir = TempDir()
        let db = try Self.itemDatabase(dir.file("places.realm"))
        try db.read { s in
            let root = try #require(s.catalogue.classes.first { $0.name == "Item" }).tableRoot
            let rootView = try InnerView(node: s.node(root, expected: .tableInner), ref: root, source: s)
            #expect(rootView.count >= 3)
            let places = [root] + (0..<3).map { UInt64(rootView.refs[$0]) }
            let views = try places.map { try InnerView(node: s.node($0, expected: .tableInner), ref: $0, source: s) }
            for (ref, view) in zip(places, views) { #expect(s.keepInnerLookup(ref, view) == nil, "decoded when first offered") }
            #expect(s.innerLookups.isEmpty)
            for (i, (ref, view)) in zip(places, views).enumerated() {
                #expect(s.keepInnerLookup(ref, view) != nil, "place \(i) not decoded when offered again")
            }
            #expect(s.innerLookups.map(\.ref) == places)
        }
    }

    @Test func lookupsThroughAThreeLevelTreeFindEveryObject() throws {
        let dir = TempDir()
        let db = try Self.itemDatabase(dir.file("lookups.realm"))
        var rng = SplitMix64(seed: 63)
        let ids = (0..<6_000).map { _ in Int(rng.next() % UInt64(2 * Self.count + 100)) }
        try db.read { s in
            #expect(try Self.levels(s, "Item") == 3)
            try Self.expectLookups(s, ids)
            // Again, now through the decoded nodes.
            try Self.expectLookups(s, ids.reversed())
        }
        // A transaction looks objects up, links to them (each link checks its target), deletes some and
        // looks up again through the tree it changed.
        var deleted: Set<Int> = []
        try db.write { tx in
            let items = try tx.table("Item"), tags = try tx.table("Tag")
            try Self.expectLookups(tx, ids)
            for (j, id) in ids.prefix(2_000).enumerated() where id % 2 == 0 && id < 2 * Self.count {
                let item = try #require(try tx.object(items, primaryKey: .int(Int64(id))))
                try tx.createObject(tags, ["label": .string("tag \(j)"), "item": .link(item)])
            }
            for id in ids.suffix(300) where id % 2 == 0 && id < 2 * Self.count && !deleted.contains(id) {
                try tx.delete(items, try #require(try tx.object(items, primaryKey: .int(Int64(id)))))
                deleted.insert(id)
            }
            try Self.expectLookups(tx, ids, deleted: deleted)
        }
        try db.read { s in try Self.expectLookups(s, ids, deleted: deleted) }
        #expect(try db.verify().isOK)
    }
}
