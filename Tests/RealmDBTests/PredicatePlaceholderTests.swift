import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// Query strings as realm-swift code writes them, with NSPredicate's `%@` placeholders.
@Suite struct PredicatePlaceholderTests {
    func populated() throws -> Realm {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write {
            let ann = realm.create(Person.self, value: ["id": 1, "name": "Ann", "age": 30, "tags": ["a", "東京"]])
            let bob = realm.create(Person.self, value: ["id": 2, "name": "Bob", "nickname": "Bobby", "age": 25])
            for (i, n) in ["Rex", "Fido", "Ace", "Bo", "Ace"].enumerated() {
                let d = realm.create(Dog.self, value: ["name": n, "age": i + 1, "owner": i % 2 == 0 ? ann : bob])
                (i < 3 ? ann : bob).dogs.append(d)
            }
        }
        return realm
    }

    @Test func percentPlaceholdersAsRealmSwiftWritesThem() throws {
        let realm = try populated()
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("age > %@ AND name BEGINSWITH %@", 2, "A").map(\.name) == ["Ace", "Ace"])
        #expect(dogs.filter("name IN %@", ["Rex", "Bo"]).count == 2)
        #expect(dogs.filter("owner == %@", realm.object(ofType: Person.self, forPrimaryKey: 2)!).map(\.name) == ["Fido", "Bo"])
        #expect(dogs.filter("age BETWEEN %@", [2, 4]).map(\.age) == [2, 3, 4])
        #expect(dogs.filter("age BETWEEN {%@, %@}", 4, 5).map(\.age) == [4, 5])
        #expect(realm.objects(Person.self).filter("%@ IN tags", "東京").map(\.name) == ["Ann"])
    }

    @Test func percentKNamesAKeyPath() throws {
        let realm = try populated()
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("%K > %@ AND %K BEGINSWITH %@", "age", 2, "name", "A").map(\.name) == ["Ace", "Ace"])
        #expect(dogs.filter("%K == %@", "owner.name", "Bob").map(\.name) == ["Fido", "Bo"])
        #expect(realm.objects(Person.self).filter("%K > 2", "dogs.@count").map(\.name) == ["Ann"])
        #expect(throws: RealmError.self) { try dogs.filter(query: "%K == 1", arguments: [3]) }
        #expect(throws: RealmError.self) { try dogs.filter(query: "%K == 1", arguments: ["age; x"]) }
        #expect(throws: RealmError.self) { try dogs.filter(query: "%K == $0", arguments: ["age", 1]) }
    }
}
