import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Traveller: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var places: Map<String, Address?>
}

/// `update: .modified` updates an embedded object in place; `.all` replaces it; maps of embedded objects are
/// made from nested dictionaries.
@Suite struct EmbeddedUpdateTests {
    @Test func modifiedUpdatesTheEmbeddedObjectInPlace() throws {
        let realm = try memoryRealm([Resident.self, Address.self, Geo.self])
        try realm.write { realm.create(Resident.self, value: ["name": "A", "address": ["city": "X", "street": "S", "geo": ["lat": 1.5]]]) }
        let a = realm.object(ofType: Resident.self, forPrimaryKey: "A")!
        let before = a.address!
        try realm.write { realm.create(Resident.self, value: ["name": "A", "address": ["city": "Y"]], update: .modified) }
        #expect(!before.isInvalidated)
        #expect(before.city == "Y" && before.street == "S" && before.geo?.lat == 1.5)
        #expect(realm.dynamicObjects("Address").count == 1)

        try realm.write { realm.create(Resident.self, value: ["name": "A", "address": ["city": "Z"]], update: .all) }
        #expect(before.isInvalidated)
        #expect(a.address?.city == "Z" && a.address?.street == nil)
        #expect(realm.dynamicObjects("Address").count == 1 && realm.dynamicObjects("Geo").count == 0)
    }

    @Test func mapsOfEmbeddedObjectsFromNestedDictionaries() throws {
        let realm = try memoryRealm([Traveller.self, Address.self, Geo.self, Resident.self])
        try realm.write {
            realm.create(Traveller.self, value: ["name": "T", "places": ["home": ["city": "東京"], "work": ["city": "서울"], "none": nil]])
        }
        let t = realm.object(ofType: Traveller.self, forPrimaryKey: "T")!
        #expect(t.places["home"]??.city == "東京" && t.places["work"]??.city == "서울")
        #expect(t.places.keys.sorted() == ["home", "none", "work"])
        let unmanaged = Traveller(value: ["name": "U"])
        unmanaged.places["x"] = Address(value: ["city": "Oslo"])
        try realm.write { realm.add(unmanaged) }
        #expect(unmanaged.places["x"]??.city == "Oslo")
        try realm.write { realm.create(Traveller.self, value: ["name": "T", "places": ["home": ["city": "京都"]]], update: .all) }
        #expect(Array(t.places.keys) == ["home"] && t.places["home"]??.city == "京都")
        #expect(realm.dynamicObjects("Address").count == 2)
    }
}
