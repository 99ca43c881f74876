import Testing
@testable import RealmStorage

/// A property removed after its cluster became dirty in the same transaction: the out-of-line values of its
/// column (long strings, data, lists) must be freed with the column, not left as pages neither used nor free.
/// Found by the random model soak (`REALM_SOAK=1`, in-memory seed 1001: "6 page(s) neither used nor free").
@Suite struct RemovedColumnBlobTests {
    private let schema = ClassSchema(name: "Plain", properties: [
        PropertySchema(name: "code", type: .int),
        PropertySchema(name: "note", type: .string, isOptional: true),
        PropertySchema(name: "tags", type: .string, isList: true),
    ])

    @Test(arguments: ["note", "tags"], [true, false])
    func removingAPropertyFreesItsBlobs(removed: String, touchFirst: Bool) throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("r.realm"))
        let long = String(repeating: "長い値 ", count: 2_000)  // ~20 KB: stored out of line
        try db.write { tx in
            try tx.createClass(schema)
            for i in 0..<3 {
                _ = try tx.createObject("Plain", ["code": .int(Int64(i)), "note": .string(long)],
                                        lists: ["tags": [.string(long), .string("short")]])
            }
        }
        #expect(try db.verify().isOK)
        try db.write { tx in
            let t = try tx.table("Plain")
            if touchFirst {
                // The cluster becomes dirty (its columns read lazily) before the property goes.
                try tx.set(#require(try tx.key(at: 1, in: t)), "Plain", "code", .int(42))
            }
            try tx.removeProperty("Plain", removed)
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
        try db.read { s in
            let t = try s.table("Plain")
            #expect(try s.count(t) == 3)
            #expect(s.classSchema("Plain")?.properties.contains { $0.name == removed } == false)
        }
    }

    /// The same for the hidden backlink column a removed link property leaves in its target class: a person
    /// linked from 3,000 dogs has an out-of-line backlink set.
    @Test(arguments: [true, false])
    func removingALinkFreesTheTargetsBacklinkSets(touchFirst: Bool) throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("b.realm"))
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            let ann = try tx.createObject("Person", ["id": .int(1), "name": .string("Ann")])
            for i in 0..<3_000 { _ = try tx.createObject("Dog", ["name": .string("d\(i)"), "owner": .link(ann)]) }
        }
        #expect(try db.verify().isOK)
        try db.write { tx in
            if touchFirst {
                let people = try tx.table("Person")
                try tx.set(#require(try tx.object(people, primaryKey: .int(1))), "Person", "age", .int(40))
            }
            try tx.removeProperty("Dog", "owner")
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }
}
