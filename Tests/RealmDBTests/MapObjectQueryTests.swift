import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// `filter`, `where`, `sorted` and aggregates over a map's object values, as realm-swift has them on
/// `Map<String, Dog?>`.
@Suite struct MapObjectQueryTests {
    func seeded() throws -> (Realm, Tagged) {
        let realm = try memoryRealm([Tagged.self, Pal.self])
        let t = try realm.write {
            // A pal of another map, which no query over `t.pets` may find.
            realm.create(Tagged.self, value: ["name": "other", "pets": ["x": ["name": "Rex", "age": 7]]])
            return realm.create(Tagged.self, value: ["name": "t", "pets": [
                "b": ["name": "Max", "age": 9], "a": ["name": "Kit", "age": 2], "none": nil,
            ]])
        }
        return (realm, t)
    }

    @Test func filterAndWhereQueryTheObjectsProperties() throws {
        let (_, t) = try seeded()
        #expect(t.pets.filter("age > 5").map { $0?.name } == ["Max"])
        #expect(t.pets.filter("name BEGINSWITH %@", "K").map { $0?.name } == ["Kit"])
        #expect(t.pets.where { $0.age < 5 }.map { $0?.name } == ["Kit"])
        #expect(t.pets.where { $0.age > 100 }.isEmpty)
        // The objects in the keys' order; a nil value is no object.
        #expect(t.pets.valueResults.map { $0?.name } == ["Kit", "Max"])
    }

    @Test func sortedAndAggregates() throws {
        let (_, t) = try seeded()
        #expect(t.pets.sorted(byKeyPath: "age", ascending: false).map { $0?.name } == ["Max", "Kit"])
        #expect(t.pets.sorted(by: [SortDescriptor(keyPath: "name")]).map { $0?.name } == ["Kit", "Max"])
        #expect(t.pets.min(ofProperty: "age") as Int? == 2)
        #expect(t.pets.max(ofProperty: "age") as Int? == 9)
        #expect(t.pets.sum(ofProperty: "age") as Int == 11)
    }

    @Test func resultsFollowTheMap() throws {
        let (realm, t) = try seeded()
        let old = t.pets.filter("age > 5")
        #expect(old.count == 1)
        try realm.write { t.pets["c"] = Pal(value: ["name": "Old", "age": 15]) }
        #expect(old.map { $0?.name } == ["Max", "Old"])
        try realm.write { t.pets["b"] = nil }
        #expect(old.map { $0?.name } == ["Old"])
    }

    @Test func whereOverAMapOfValuesIsBySelf() throws {
        let realm = try memoryRealm([Tagged.self, Pal.self])
        let t = try realm.write { realm.create(Tagged.self, value: ["name": "s", "scores": ["math": 90, "art": 50, "gym": 70]]) }
        #expect(Array(t.scores.where { $0 > 60 }) == [70, 90])  // the keys' order: gym, math
        #expect(Array(t.scores.sorted(by: [SortDescriptor(keyPath: "self", ascending: false)])) == [90, 70, 50])
    }

    @Test func mapsOfEmbeddedObjects() throws {
        let realm = try memoryRealm([Traveller.self, Address.self, Geo.self, Resident.self])
        let t = try realm.write {
            realm.create(Traveller.self, value: ["name": "T", "places": ["home": ["city": "東京"], "work": ["city": "서울"]]])
        }
        #expect(t.places.where { $0.city == "서울" }.map { $0?.city } == ["서울"])
        #expect(t.places.sorted(byKeyPath: "city").map { $0?.city } == ["東京", "서울"])  // by code point
    }
}
