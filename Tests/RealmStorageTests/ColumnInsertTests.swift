import Testing
@testable import RealmStorage

/// `createObject(_:columns:values:)`, the bulk-insert path: values it stores as given, the conversions and the
/// errors it leaves to full validation, and nothing half-written when a value is refused.
@Suite struct ColumnInsertTests {
    @Test func storesConvertsAndRefusesLikeTheNamedPath() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir, "c.realm")
        try db.write { tx in
            let people = try tx.table("Person"), dogs = try tx.table("Dog")
            let cols = try ["id", "name", "age", "nickname"].map { try tx.property(people, $0) }
            let ann = try tx.createObject(people, columns: cols, values: [.int(1), .string("東京 🐶"), .int(30), .null])
            #expect(try tx.value(ann, "Person", "name") == .string("東京 🐶"))
            #expect(try tx.value(ann, "Person", "nickname") == .null)
            // An int given for a double is converted, as `set` does.
            let dcols = try ["name", "weight", "owner"].map { try tx.property(dogs, $0) }
            let rex = try tx.createObject(dogs, columns: dcols, values: [.string("Rex"), .int(12), .link(ann)])
            #expect(try tx.value(rex, "Dog", "weight") == .double(12))
            #expect(try tx.backlinks(ann, in: people, from: "Dog", property: "owner") == [rex])

            // Refused: a string for an int, null for a required string, an oversized string, a link to nothing.
            let tooLong = String(repeating: "x", count: SchemaLimits.maxValueBytes + 1)
            let refused: [[Value]] = [
                [.int(2), .string("b"), .string("thirty"), .null],
                [.int(3), .null, .int(1), .null],
                [.int(4), .string(tooLong), .int(1), .null],
            ]
            for values in refused {
                #expect(throws: StorageError.self) { try tx.createObject(people, columns: cols, values: values) }
            }
            #expect(throws: StorageError.self) {
                try tx.createObject(dogs, columns: dcols, values: [.string("Ghost"), .double(1), .link(ObjectKey(999_999))])
            }
            // Nothing of a refused object was written: no rows, no index entries.
            #expect(try tx.count("Person") == 1)
            #expect(try tx.count("Dog") == 1)
            for name in ["b", tooLong] {
                #expect(try tx.find(tx.property(people, "name"), equalTo: .string(name)).isEmpty)
            }
        }
        #expect(try db.verify().isOK)
    }
}
