import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// realm-swift's Swift key-path forms: `sorted(by: \.age)`, `min(of:)`, `distinct(by:)`, `observe(keyPaths:)`.
@Suite struct KeyPathFormTests {
    @Test func keyPathsNameTheirProperties() {
        #expect(KeyPathNames.name(\Dog.age) == "age")
        #expect(KeyPathNames.name(\Dog.owner) == "owner")
        #expect(KeyPathNames.name(\Dog.owner?.name) == "owner.name")
        #expect(KeyPathNames.name(\Person.dogs) == "dogs")
        #expect(KeyPathNames.name(\AllTypes.decimal) == "decimal")
        #expect(KeyPathNames.name(\Tagged.scores) == "scores")
    }

    @Test func sortingAggregatesAndDistinctByKeyPath() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write {
            let ann = Person(value: ["id": 1, "name": "Ann"]), bo = Person(value: ["id": 2, "name": "Bo"])
            for (i, name) in ["c", "a", "b", "a"].enumerated() {
                realm.add(Dog(value: ["name": name, "age": i + 1, "owner": i % 2 == 0 ? bo : ann]))
            }
        }
        let dogs = realm.objects(Dog.self)
        #expect(dogs.sorted(by: \.name).map(\.name) == ["a", "a", "b", "c"])
        #expect(dogs.sorted(by: \.age, ascending: false).map(\.age) == [4, 3, 2, 1])
        #expect(dogs.sorted(by: \.owner?.name).first?.owner?.name == "Ann")
        #expect(dogs.sorted(by: [SortDescriptor(keyPath: \Dog.name), SortDescriptor(keyPath: \Dog.age, ascending: false)]).map(\.age) == [4, 2, 3, 1])
        #expect(dogs.min(of: \.age) == 1 && dogs.max(of: \.age) == 4 && dogs.sum(of: \.age) == 10)
        #expect(dogs.filter("age <= 3").average(of: \.age) == 2)
        #expect(dogs.distinct(by: [\Dog.name]).count == 3)
        #expect(AnyRealmCollection(dogs).sorted(by: \.name).first?.name == "a")
    }

    @Test func observeByKeyPath() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let rex = Dog(value: ["name": "Rex"])
        try realm.write { realm.add(rex) }
        var results = 0, object = 0
        let a = realm.objects(Dog.self).observe(keyPaths: [\Dog.age]) { if case .update = $0 { results += 1 } }
        let b = rex.observe(keyPaths: [\Dog.age]) { (change: ObjectChange<Dog>) in if case .change = change { object += 1 } }
        try realm.write { rex.name = "Max" }
        #expect(results == 0 && object == 0)
        try realm.write { rex.age = 3 }
        #expect(results == 1 && object == 1)
        a.invalidate()
        b.invalidate()
    }

    @Test func aComputedPropertyIsNotAKeyPathOfTheModel() async throws {
        await #expect(processExitsWith: .failure) {
            _ = KeyPathNames.name(\Dog.description)
        }
    }
}
