import Foundation
import Testing
@testable import RealmStorage

/// Engine bugs found by the bad-input and maintenance tests, each pinned by the smallest reproduction.
@Suite struct RegressionTests {
    /// A backlink set of two or more origins is a list node. Its ref used to be stored as is and told from an
    /// inline origin (`key << 1 | 1`) by the low bit, so a list node on an odd page read as one origin
    /// (`ref >> 1`), and the real origins were lost.
    @Test func backlinkListsOnOddPages() throws {
        let db = try Database.inMemory(identifier: "regression-backlinks-\(UUID())")
        try db.write { tx in
            try tx.createClasses([
                ClassSchema(name: "Dog", properties: [PropertySchema(name: "name", type: .string)]),
                ClassSchema(name: "Walker", properties: [PropertySchema(name: "n", type: .int), .list("dogs", of: "Dog"),
                                                         .link("favourite", to: "Dog")]),
            ])
        }
        var dogs: [ObjectKey] = []
        try db.write { tx in
            for i in 0..<12 { dogs.append(try tx.createObject("Dog", ["name": .string("d\(i)")])) }
            for i in 0..<12 {
                // Every dog gets three walkers (one twice through the same list), so every backlink set is a list node.
                try tx.createObject("Walker", ["n": .int(Int64(i)), "favourite": .link(dogs[i])],
                                    lists: ["dogs": [.link(dogs[i]), .link(dogs[(i + 1) % 12]), .link(dogs[i])]])
            }
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
        try db.read { s in
            let dogT = try s.table("Dog")
            for (i, d) in dogs.enumerated() {
                let walkers = try s.backlinks(d, in: dogT, from: "Walker", property: "dogs").map(\.rawValue)
                #expect(walkers == [UInt64((i + 11) % 12), UInt64(i), UInt64(i)].sorted(), "dog \(i)")
            }
        }
        // Removing links frees the list nodes again (the free path decodes the same tag).
        try db.write { tx in
            let w = try tx.table("Walker")
            for k in try tx.keys(w) { try tx.setList(k, tx.property(w, "dogs"), []) }
        }
        let after = try db.verify()
        #expect(after.isOK, "\(after)")
    }
}
