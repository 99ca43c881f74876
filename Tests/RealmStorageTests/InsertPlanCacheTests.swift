import Foundation
import Testing
@testable import RealmStorage

/// A write transaction takes the insert plan of the last one when the class's schema is unchanged
/// (`Database.insertPlans`): the plan must then read the index roots of the version the transaction starts
/// from, and give way to a new plan when the schema changed.
@Suite struct InsertPlanCacheTests {
    private let schema = ClassSchema(name: "User", properties: [
        PropertySchema(name: "email", type: .string, isPrimaryKey: true),
        PropertySchema(name: "age", type: .int, isIndexed: true),
    ])

    @Test func aKeptPlanSeesTheIndexesOfEachNewVersion() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("plans.realm"))
        try db.write { try $0.createClass(schema) }
        // One object per transaction, through handles resolved once (as a prepared insert would be).
        let (table, columns) = try db.read { s in
            let t = try s.table("User")
            return (t, [try s.property(t, "email"), try s.property(t, "age")])
        }
        for i in 0..<50 {
            try db.write { tx in _ = try tx.createObject(table, columns: columns, values: [.string("u\(i)@x"), .int(Int64(i % 7))]) }
        }
        // Each earlier key is in the primary-key index the next transaction starts from.
        for i in [0, 1, 25, 49] {
            #expect(throws: StorageError.self) {
                try db.write { tx in _ = try tx.createObject(table, columns: columns, values: [.string("u\(i)@x"), .int(1)]) }
            }
        }
        // Emptying the class frees its index trees; the next transaction's plan must not use the old roots.
        try db.write { tx in try tx.deleteAll(try tx.table("User")) }
        try db.write { tx in _ = try tx.createObject(table, columns: columns, values: [.string("u0@x"), .int(3)]) }
        #expect(throws: StorageError.self) {
            try db.write { tx in _ = try tx.createObject(table, columns: columns, values: [.string("u0@x"), .int(4)]) }
        }
        try db.read { s in
            let t = try s.table("User")
            #expect(try s.count(t) == 1)
            #expect(try s.find(try s.property(t, "age"), equalTo: .int(3)).count == 1)
        }
        #expect(try db.verify().isOK)
    }

    @Test func aChangedSchemaGetsANewPlan() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("plans.realm"))
        try db.write { try $0.createClass(schema) }
        try db.write { tx in _ = try tx.createObject("User", ["email": .string("a@x"), "age": .int(30)]) }
        try db.write { tx in try tx.addProperty("User", PropertySchema(name: "nick", type: .string, isOptional: true)) }
        try db.write { tx in _ = try tx.createObject("User", ["email": .string("b@x"), "age": .int(31), "nick": .string("bee")]) }
        try db.read { s in
            let t = try s.table("User")
            let b = try #require(try s.object(t, primaryKey: .string("b@x")))
            #expect(try s.value(b, try s.property(t, "nick")) == .string("bee"))
            #expect(try s.value(b, try s.property(t, "age")) == .int(31))
        }
        #expect(try db.verify().isOK)
    }
}
