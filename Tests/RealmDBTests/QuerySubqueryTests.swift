import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// realm-swift's subqueries from the type-safe query builder: `($0.dogs.age > 3 && $0.dogs.name == "x").count`.
@Suite struct QuerySubqueryTests {
    func seeded() throws -> Realm {
        let realm = try memoryRealm([Dog.self, Person.self, Tagged.self, Pal.self])
        try realm.write {
            let ann = Person(value: ["id": 1, "name": "Ann", "age": 30])
            let bo = Person(value: ["id": 2, "name": "Bo", "age": 40])
            realm.add(Dog(value: ["name": "Rex", "age": 3, "owner": ann]))
            realm.add(Dog(value: ["name": "rover", "age": 7, "owner": bo]))
            realm.add(Dog(value: ["name": "Zoë", "age": 12]))
            ann.dogs.append(objectsIn: realm.objects(Dog.self).filter("age < 10"))
            bo.dogs.append(objectsIn: realm.objects(Dog.self).filter("age > 5"))
            let kit = Pal(value: ["name": "Kit", "age": 2]), max = Pal(value: ["name": "Max", "age": 9])
            realm.create(Tagged.self, value: ["name": "t1", "friends": [kit, max]])
            realm.create(Tagged.self, value: ["name": "t2", "friends": [Pal(value: ["name": "Kit", "age": 11])]])
        }
        return realm
    }

    @Test func conditionsOfASubqueryHoldForTheSameElement() throws {
        let realm = try seeded()
        let people = realm.objects(Person.self)
        // Ann has a dog under 5 (Rex) and a dog named rover, but no one dog that is both.
        #expect(people.where { $0.dogs.age < 5 && $0.dogs.name == "rover" }.map(\.name) == ["Ann"])
        #expect(people.where { ($0.dogs.age < 5 && $0.dogs.name == "rover").count > 0 }.isEmpty)
        #expect(people.where { ($0.dogs.age > 5 && $0.dogs.name.starts(with: "r")).count > 0 }.map(\.name).sorted() == ["Ann", "Bo"])
    }

    @Test func theCountIsCompared() throws {
        let realm = try seeded()
        let people = realm.objects(Person.self)
        #expect(people.where { ($0.dogs.age > 5).count == 2 }.map(\.name) == ["Bo"])
        #expect(people.where { ($0.dogs.age > 5).count >= 1 }.map(\.name).sorted() == ["Ann", "Bo"])
        #expect(people.where { ($0.dogs.age > 5).count == 2 }.map(\.name)
                == people.filter("SUBQUERY(dogs, $d, $d.age > 5).@count == 2").map(\.name))
        // Combined with other conditions, and negated.
        #expect(people.where { ($0.dogs.age > 5).count > 0 && $0.age < 35 }.map(\.name) == ["Ann"])
        #expect(people.where { !(($0.dogs.name == "Zoë").count > 0) }.map(\.name) == ["Ann"])
    }

    @Test func overLinkingObjectsAndSets() throws {
        let realm = try seeded()
        let dogs = realm.objects(Dog.self)
        #expect(dogs.where { ($0.owners.age > 35 && $0.owners.name == "Bo").count > 0 }.map(\.name).sorted() == ["Zoë", "rover"])
        #expect(dogs.where { ($0.owners.age < 35).count == 0 }.map(\.name) == ["Zoë"])
        let tagged = realm.objects(Tagged.self)
        #expect(tagged.where { ($0.friends.name == "Kit" && $0.friends.age > 10).count > 0 }.map(\.name) == ["t2"])
        #expect(tagged.where { $0.friends.name == "Kit" && $0.friends.age > 5 }.map(\.name).sorted() == ["t1", "t2"])
    }

    @Test func theTextIsTheQueryLanguagesSubquery() {
        let dogs = Query<Person>(path: []).dogs
        let sub = (dogs.age > 3 && dogs.name == "x").count > 0
        #expect(Query<Bool>.unmarked(sub.condition) == "SUBQUERY(dogs, $col1, ($col1.age > %@) AND ($col1.name == %@)).@count > %@")
        #expect(sub.arguments.count == 3)
    }
}
