import Foundation
import Testing
@testable import RealmDB
import TestSupport

@Suite struct ResultsTests {
    func populated() throws -> Realm {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write {
            let ann = realm.create(Person.self, value: ["id": 1, "name": "Ann", "age": 30])
            let bob = realm.create(Person.self, value: ["id": 2, "name": "Bob", "age": 25])
            for (i, n) in ["Rex", "Fido", "Ace", "Bo", "Ace"].enumerated() {
                realm.create(Dog.self, value: ["name": n, "age": i + 1, "owner": i % 2 == 0 ? ann : bob])
            }
        }
        return realm
    }

    @Test func filterSortDistinctChain() throws {
        let realm = try populated()
        let dogs = realm.objects(Dog.self)
        #expect(dogs.count == 5)
        #expect(dogs.sorted(byKeyPath: "name").map(\.name) == ["Ace", "Ace", "Bo", "Fido", "Rex"])
        #expect(dogs.sorted(byKeyPath: "age", ascending: false).map(\.age) == [5, 4, 3, 2, 1])
        #expect(dogs.sorted(by: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "age", ascending: false)]).map(\.age) == [5, 3, 4, 2, 1])
        #expect(dogs.sorted(byKeyPath: "owner.name").map(\.owner!.name) == ["Ann", "Ann", "Ann", "Bob", "Bob"])
        #expect(dogs.distinct(by: ["name"]).count == 4)
        let young = dogs.filter { $0.age < 4 }.sorted(byKeyPath: "name")
        #expect(young.map(\.name) == ["Ace", "Fido", "Rex"])
        #expect(young.first?.name == "Ace" && young.last?.name == "Rex")
    }

    /// Through a null link, as Realm orders and drops: the objects without an owner sort after every owner's
    /// name ascending and before them descending; `distinct(by:)` leaves them out. The query language agrees.
    @Test func sortAndDistinctThroughANullLink() throws {
        let realm = try populated()
        try realm.write {
            realm.create(Dog.self, value: ["name": "Stray", "age": 9])
            realm.create(Dog.self, value: ["name": "Lost", "age": 8])
        }
        let dogs = realm.objects(Dog.self)
        #expect(dogs.sorted(byKeyPath: "owner.name").map(\.name) == ["Rex", "Ace", "Ace", "Fido", "Bo", "Stray", "Lost"])
        #expect(dogs.sorted(byKeyPath: "owner.name", ascending: false).map(\.name) == ["Stray", "Lost", "Fido", "Bo", "Rex", "Ace", "Ace"])
        #expect(dogs.sorted(by: [SortDescriptor(keyPath: "owner.name", ascending: false), SortDescriptor(keyPath: "age")]).map(\.name)
                == ["Lost", "Stray", "Fido", "Bo", "Rex", "Ace", "Ace"])
        #expect(dogs.distinct(by: ["owner.name"]).map(\.name) == ["Rex", "Fido"])
        #expect(dogs.filter("TRUEPREDICATE SORT(owner.name DESC)").map(\.name) == ["Stray", "Lost", "Fido", "Bo", "Rex", "Ace", "Ace"])
        #expect(dogs.filter("TRUEPREDICATE DISTINCT(owner.name)").map(\.name) == ["Rex", "Fido"])
    }

    @Test func aggregates() throws {
        let realm = try populated()
        let dogs = realm.objects(Dog.self)
        #expect(dogs.sum(ofProperty: "age") as Int == 15)
        #expect(dogs.min(ofProperty: "age") as Int? == 1)
        #expect(dogs.max(ofProperty: "name") as String? == "Rex")
        #expect(dogs.average(ofProperty: "age") as Double? == 3)
        let people = realm.objects(Person.self)
        #expect(people.average(ofProperty: "age") as Double? == 27.5)
        #expect(dogs.filter { _ in false }.average(ofProperty: "age") as Double? == nil)
        #expect(dogs.filter { _ in false }.sum(ofProperty: "age") as Int == 0)
    }

    @Test func resultsAutoUpdate() throws {
        let realm = try populated()
        let aces = realm.objects(Dog.self).filter { $0.name == "Ace" }
        #expect(aces.count == 2)
        try realm.write { realm.create(Dog.self, value: ["name": "Ace"]) }
        #expect(aces.count == 3)
        try realm.write { realm.delete(realm.objects(Dog.self).filter { $0.name == "Ace" }) }
        #expect(aces.isEmpty)
        #expect(realm.objects(Dog.self).count == 3)
    }

    @Test func listAndLinkingObjectsResults() throws {
        let realm = try populated()
        let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(ann.ownedDogs.count == 3)
        #expect(ann.ownedDogs.sorted(byKeyPath: "age").map(\.age) == [1, 3, 5])
        try realm.write { ann.dogs.append(objectsIn: ann.ownedDogs) }
        #expect(ann.dogs.filter { $0.age > 1 }.count == 2)
        #expect(ann.dogs.sorted(byKeyPath: "name").first?.name == "Ace")
        let rex = try #require(realm.objects(Dog.self).filter { $0.name == "Rex" }.first)
        #expect(rex.owners.map(\.id) == [1])
    }

    @Test func indexOfAndIteration() throws {
        let realm = try populated()
        let sorted = realm.objects(Dog.self).sorted(byKeyPath: "age")
        let third = sorted[2]
        #expect(sorted.index(of: third) == 2)
        var ages: [Int] = []
        for d in sorted { ages.append(d.age) }
        #expect(ages == [1, 2, 3, 4, 5])
    }
}
