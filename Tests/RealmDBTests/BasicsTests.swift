import Foundation
import Testing
@testable import RealmDB
import TestSupport

@Suite struct BasicsTests {
    @Test func addReadQuery() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "basics-\(UUID())", objectTypes: [Dog.self, Person.self]))
        let ann = Person(value: ["id": 1, "name": "Ann"])
        let rex = Dog()
        rex.name = "Rex"
        rex.age = 3
        rex.owner = ann
        try realm.write {
            realm.add(rex)
            ann.dogs.append(rex)
            ann.tags.append("x")
        }
        #expect(rex.realm != nil)
        #expect(ann.realm != nil)
        #expect(realm.objects(Dog.self).count == 1)
        #expect(realm.objects(Person.self).first?.name == "Ann")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 1)?.dogs.count == 1)
        #expect(rex.owner?.name == "Ann")
        #expect(ann.ownedDogs.count == 1)
        #expect(ann.tags.first == "x")
        let old = realm.objects(Dog.self).filter { $0.age > 2 }
        #expect(old.count == 1)
        try realm.write { rex.age = 1 }
        #expect(old.count == 0)
    }
}
