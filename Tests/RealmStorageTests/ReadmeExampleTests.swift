import Testing
@testable import RealmStorage

/// The README's example, kept compiling and true.
@Suite struct ReadmeExampleTests {
    @Test func readmeExampleWorks() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("people.realm"))
        try db.write { tx in
            try tx.createClasses([
                ClassSchema(name: "Person", properties: [
                    PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                    PropertySchema(name: "name", type: .string, isIndexed: true),
                    .list("dogs", of: "Dog"),
                ]),
                ClassSchema(name: "Dog", properties: [
                    PropertySchema(name: "name", type: .string),
                    .link("owner", to: "Person"),
                    .linkingObjects("owners", from: "Person", property: "dogs"),
                ]),
            ])
            let ann = try tx.createObject("Person", ["id": .int(1), "name": .string("Ann")])
            try tx.createObject("Dog", ["name": .string("Rex"), "owner": .link(ann)])
        }
        try db.read { snapshot in
            let people = try snapshot.table("Person")
            let ann = try #require(try snapshot.object(people, primaryKey: .int(1)))
            #expect(try snapshot.backlinks(ann, in: people, from: "Dog", property: "owner").count == 1)
        }
        #expect(try db.verify().isOK)
    }
}
