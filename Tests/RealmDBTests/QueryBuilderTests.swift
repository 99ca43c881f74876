import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// realm-swift's type-safe queries (`where { }`), each checked against the query string it stands for.
@Suite struct QueryBuilderTests {
    func seeded() throws -> Realm {
        let realm = try memoryRealm([Dog.self, Person.self, Tagged.self, Pal.self])
        try realm.write {
            let ann = Person(value: ["id": 1, "name": "Ann", "age": 30, "tags": ["x", "y"]])
            let bo = Person(value: ["id": 2, "name": "Bo", "nickname": "B", "age": 40])
            realm.add(Dog(value: ["name": "Rex", "age": 3, "owner": ann]))
            realm.add(Dog(value: ["name": "rover", "age": 7, "owner": bo]))
            realm.add(Dog(value: ["name": "Zoë", "age": 12]))
            ann.dogs.append(objectsIn: realm.objects(Dog.self).filter("age < 10"))
            bo.dogs.append(objectsIn: realm.objects(Dog.self).filter("age > 5"))
            realm.create(Tagged.self, value: ["name": "t1", "tags": ["a", "b"], "scores": ["math": 90, "art": 50]])
            realm.create(Tagged.self, value: ["name": "t2", "tags": ["c"], "scores": ["math": 40]])
        }
        return realm
    }

    func names(_ r: Results<Dog>) -> [String] { r.map(\.name).sorted() }

    @Test func comparisonsAndLogic() throws {
        let realm = try seeded()
        let dogs = realm.objects(Dog.self)
        #expect(names(dogs.where { $0.age > 5 }) == names(dogs.filter("age > 5")))
        #expect(names(dogs.where { $0.age >= 3 && $0.age < 10 }) == ["Rex", "rover"])
        #expect(names(dogs.where { $0.age == 3 || $0.name == "Zoë" }) == ["Rex", "Zoë"])
        #expect(names(dogs.where { !($0.age > 5) }) == ["Rex"])
        #expect(names(dogs.where { $0.age.in([3, 12]) }) == ["Rex", "Zoë"])
        #expect(names(dogs.where { $0.age.contains(3...7) }) == ["Rex", "rover"])
        #expect(names(dogs.where { $0.age.contains(3..<7) }) == ["Rex"])
        #expect(names(dogs.where { $0.owner == nil }) == ["Zoë"])
    }

    @Test func stringsWithOptions() throws {
        let realm = try seeded()
        let dogs = realm.objects(Dog.self)
        #expect(names(dogs.where { $0.name.starts(with: "r") }) == ["rover"])
        #expect(names(dogs.where { $0.name.starts(with: "r", options: .caseInsensitive) }) == ["Rex", "rover"])
        #expect(names(dogs.where { $0.name.contains("oe", options: [.caseInsensitive, .diacriticInsensitive]) }) == ["Zoë"])
        #expect(names(dogs.where { $0.name.ends(with: "er") }) == ["rover"])
        #expect(names(dogs.where { $0.name.like("R?x") }) == ["Rex"])
        #expect(names(dogs.where { $0.name.equals("REX", options: .caseInsensitive) }) == ["Rex"])
    }

    @Test func linksListsAndAggregates() throws {
        let realm = try seeded()
        let dogs = realm.objects(Dog.self), people = realm.objects(Person.self)
        #expect(names(dogs.where { $0.owner.name == "Ann" }) == ["Rex"])
        #expect(names(dogs.where { $0.owner.age > 35 }) == ["rover"])
        #expect(people.where { $0.dogs.count == 2 }.map(\.name).sorted() == ["Ann", "Bo"])
        #expect(people.where { $0.dogs.name == "Zoë" }.map(\.name) == ["Bo"])
        #expect(people.where { $0.dogs.age.max > 10 }.map(\.name) == ["Bo"])
        #expect(people.where { $0.dogs.age.sum == 10 }.map(\.name) == ["Ann"])
        #expect(people.where { $0.tags.contains("y") }.map(\.name) == ["Ann"])
        #expect(people.where { $0.tags.containsAny(in: ["z", "x"]) }.map(\.name) == ["Ann"])
        #expect(people.where { $0.nickname != nil }.map(\.name) == ["Bo"])
        let rex = dogs.filter("name == 'Rex'").first!
        #expect(people.where { $0.dogs.contains(rex) }.map(\.name) == ["Ann"])
        #expect(names(dogs.where { $0.owners.count == 2 }) == ["rover"])
    }

    @Test func setsAndMaps() throws {
        let realm = try seeded()
        let tagged = realm.objects(Tagged.self)
        #expect(tagged.where { $0.tags.contains("c") }.map(\.name) == ["t2"])
        #expect(tagged.where { $0.scores["math"] > 50 }.map(\.name) == ["t1"])
        #expect(tagged.where { $0.scores.keys == "art" }.map(\.name) == ["t1"])
        #expect(tagged.where { $0.scores.values < 45 }.map(\.name) == ["t2"])
        #expect(tagged.where { $0.scores.count == 1 }.map(\.name) == ["t2"])
    }

    @Test func theBuiltTextIsTheQueryLanguage() {
        let q = Query<Dog>(path: [])
        let built = (q.age > 3 && q.owner.name.starts(with: "A", options: .caseInsensitive))
        #expect(built.condition == "(age > %@) AND (owner.name BEGINSWITH[c] %@)")
        #expect(built.arguments.count == 2)
        #expect(Query<Person>(path: []).dogs.age.min.text == "dogs.@min.age")
    }
}
