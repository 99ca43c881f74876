import Testing
import RealmStorage
@testable import RealmTools
import TestSupport

/// Links to objects without a primary key are written as their position in the class (`$index`), and the
/// positions are read only when such a link is written.
@Suite struct DataExportTests {
    static let schema = [
        ClassSchema(name: "Dog", properties: [PropertySchema(name: "name", type: .string)]),
        ClassSchema(name: "Person", properties: [
            PropertySchema(name: "name", type: .string),
            PropertySchema(name: "dog", type: .link, isOptional: true, objectClassName: "Dog"),
        ]),
    ]

    /// Five dogs, the second deleted; Ann has the fourth (position 2 of the four left), Bob none.
    func database(_ dir: TempDir) throws -> Database {
        let db = try Database.open(path: dir.file("d.realm"))
        try db.write { tx in
            try tx.createClasses(Self.schema)
            let dogs = try (0..<5).map { try tx.createObject("Dog", ["name": .string("dog \($0)")]) }
            try tx.delete("Dog", dogs[1])
            _ = try tx.createObject("Person", ["name": .string("Ann"), "dog": .link(dogs[3])])
            _ = try tx.createObject("Person", ["name": .string("Bob")])
        }
        return db
    }

    @Test func anExportReadsNoClassUntilItWritesALinkIntoIt() throws {
        let dir = TempDir()
        let db = try database(dir)
        try db.read { s in
            let export = try DataExport(snapshot: s, classes: ["Dog", "Person"])
            #expect(export.classesNumberedForTesting.isEmpty)
            let people = try s.keys(s.table("Person"))
            let ann = try export.object(people[0], #require(s.classSchema("Person")), export.handles(#require(s.classSchema("Person"))))
            #expect(export.classesNumberedForTesting == ["Dog"])
            guard case .object(let members) = ann, let dog = members.first(where: { $0.0 == "dog" })?.1 else {
                Issue.record("Ann as JSON: \(ann)"); return
            }
            var text = ""
            JSONWriter.emit(dog, indent: 0, pretty: false, into: &text)
            #expect(text.replacingOccurrences(of: " ", with: "") == #"{"$class":"Dog","$index":2}"#)
        }
    }

    @Test func aLinkIntoAClassNotExportedNamesTheKey() throws {
        let dir = TempDir()
        let db = try database(dir)
        try db.read { s in
            let export = try DataExport(snapshot: s, classes: ["Person"])
            let dogs = try s.keys(s.table("Dog"))
            var text = ""
            JSONWriter.emit(try export.link(dogs[2], "Dog"), indent: 0, pretty: false, into: &text)
            #expect(text.replacingOccurrences(of: " ", with: "") == #"{"$class":"Dog","$key":\#(dogs[2].rawValue)}"#)
            #expect(export.classesNumberedForTesting.isEmpty)
        }
    }
}
