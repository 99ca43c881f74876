import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class BadLink: Object {
    @Persisted var target: Dog
}
final class BadPrimaryKey: Object {
    @Persisted(primaryKey: true) var score = 0.0
}
final class BadIndex: Object {
    @Persisted(indexed: true) var score = 0.0
}
final class BadBacklink: Object {
    @Persisted(originProperty: "nothing") var owners: LinkingObjects<Person>
}
final class TwoKeys: Object {
    @Persisted(primaryKey: true) var a = 0
    @Persisted(primaryKey: true) var b = 0
}

@Suite struct SchemaTests {
    @Test(arguments: [
        (BadLink.self as Object.Type, "must be optional"),
        (BadPrimaryKey.self, "cannot be a primary key"),
        (BadIndex.self, "cannot be indexed"),
        (BadBacklink.self, "does not have"),
        (TwoKeys.self, "more than one primary key"),
    ])
    func invalidModelsAreClearErrors(type: Object.Type, message: String) throws {
        do {
            _ = try memoryRealm([type])
            Issue.record("expected an error for \(type)")
        } catch let e as RealmError {
            #expect(e.description.contains(message), "\(e)")
            #expect(e.description.contains(type.className()), "\(e)")
        }
    }

    @Test func schemaIsDiscovered() throws {
        let realm = try memoryRealm([Person.self])
        let s = realm.schema
        #expect(s["Person"] != nil && s["Dog"] != nil)
        let p = try #require(s["Person"])
        #expect(p.primaryKeyProperty?.name == "id")
        #expect(p["name"]?.isIndexed == true)
        #expect(p["nickname"]?.isOptional == true)
        #expect(p["dogs"]?.typeName == "[Dog]")
        #expect(p["ownedDogs"]?.type == .linkingObjects)
        #expect(p["age"]?.typeName == "int?")
    }

    @Test func fileRealmPersistsAndReopens() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        try {
            let realm = try Realm(configuration: config)
            try realm.write { realm.create(Person.self, value: ["id": 1, "name": "Ann", "dogs": [["name": "Rex"]]]) }
        }()
        let realm = try Realm(configuration: config)
        #expect(realm.objects(Person.self).first?.dogs.first?.name == "Rex")
    }

    @Test func changedModelsWithoutNewVersionAreAClearError() throws {
        final class Item: Object {
            @Persisted var name = ""
        }
        let dir = TempDir()
        try {
            let r = try Realm(configuration: fileConfig(dir, [Item.self]))
            try r.write { r.create(Item.self, value: ["name": "x"]) }
        }()
        // Open the same file with the engine's schema of another shape: a property added.
        final class ItemV2: Object {
            @Persisted var name = ""
            @Persisted var price = 0
            override class func className() -> String { "Item" }
        }
        do {
            _ = try Realm(configuration: fileConfig(dir, [ItemV2.self]))
            Issue.record("expected a schema mismatch")
        } catch let e as RealmError {
            guard case .schemaMismatch(_, let diffs) = e else { Issue.record("\(e)"); return }
            #expect(diffs.contains { $0.contains("Item.price") && $0.contains("added") })
        }
        // With a higher schema version, the property is added automatically.
        let r = try Realm(configuration: fileConfig(dir, [ItemV2.self], schemaVersion: 1))
        #expect(r.objects(ItemV2.self).first?.price == 0)
        #expect(r.objects(ItemV2.self).first?.name == "x")
    }

    @Test func deleteRealmIfMigrationNeeded() throws {
        final class Thing: Object {
            @Persisted var a = 0
        }
        final class ThingV2: Object {
            @Persisted var b = ""
            override class func className() -> String { "Thing" }
        }
        let dir = TempDir()
        try {
            let r = try Realm(configuration: fileConfig(dir, [Thing.self]))
            try r.write { r.create(Thing.self, value: ["a": 1]) }
        }()
        var c = fileConfig(dir, [ThingV2.self])
        c.deleteRealmIfMigrationNeeded = true
        let r = try Realm(configuration: c)
        #expect(r.objects(ThingV2.self).isEmpty)
        try r.write { r.create(ThingV2.self, value: ["b": "x"]) }
        #expect(r.objects(ThingV2.self).first?.b == "x")
    }
}
