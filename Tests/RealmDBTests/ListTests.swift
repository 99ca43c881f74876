import Foundation
import Testing
@testable import RealmDB
import TestSupport

@Suite struct ListTests {
    @Test func managedListOperations() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let p = try realm.write { realm.create(Person.self, value: ["id": 1]) }
        try realm.write {
            p.tags.append("a")
            p.tags.append(objectsIn: ["b", "c", "d"])
            p.tags.insert("z", at: 0)
            p.tags.remove(at: 2)
            p.tags.move(from: 0, to: 3)
            p.tags[0] = "A"
        }
        #expect(Array(p.tags) == ["A", "c", "d", "z"])
        try realm.write { p.tags.swapAt(0, 3) }
        #expect(Array(p.tags) == ["z", "c", "d", "A"])
        try realm.write { p.tags.removeAll() }
        #expect(p.tags.isEmpty)
        try realm.write {
            let d = Dog(value: ["name": "Rex"])
            p.dogs.append(d)
            p.dogs.append(d)
        }
        #expect(p.dogs.count == 2)
        #expect(realm.objects(Dog.self).count == 1)
        // Realm counts every link: the dog is in the list twice.
        #expect(p.dogs[0].owners.count == 2)
        try realm.write { p.dogs.replace(index: 1, object: Dog(value: ["name": "Ace"])) }
        #expect(p.dogs.map(\.name) == ["Rex", "Ace"])
        #expect(p.dogs.index(of: p.dogs[1]) == 1)
        try realm.write { p.dogs = List() }
        #expect(p.dogs.isEmpty)
    }

    @Test func oldStyleDeclarations() throws {
        let realm = try memoryRealm([OldStyleOwner.self, OldStylePet.self])
        let schema = try #require(realm.schema["OldStyleOwner"])
        #expect(schema.primaryKeyProperty?.name == "code")
        #expect(schema["title"]?.isIndexed == true)
        #expect(schema["transient"] == nil)
        #expect(schema["pets"]?.isArray == true)
        let o = OldStyleOwner()
        o.code = "A"
        o.pets.append(OldStylePet(value: ["name": "Tom"]))
        try realm.write { realm.add(o) }
        let again = try #require(realm.object(ofType: OldStyleOwner.self, forPrimaryKey: "A"))
        #expect(again.pets.count == 1)
        #expect(again.pets[0].owners.count == 1)
        try realm.write { again.pets.append(OldStylePet(value: ["name": "Kit"])) }
        #expect(o.pets.map(\.name) == ["Tom", "Kit"])
    }
}
