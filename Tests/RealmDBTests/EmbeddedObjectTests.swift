import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Geo: EmbeddedObject {
    @Persisted var lat = 0.0
}

final class Address: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var street: String?
    @Persisted var geo: Geo?
    @Persisted(originProperty: "address") var residents: LinkingObjects<Resident>
}

final class Resident: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var address: Address?
    @Persisted var previous: List<Address>
}

/// `EmbeddedObject` as realm-swift apps use it.
@Suite struct EmbeddedObjectTests {
    func realm() throws -> Realm { try memoryRealm([Resident.self, Address.self, Geo.self]) }

    @Test func assigningCreatesAndReplacingDeletes() throws {
        let realm = try realm()
        let c = Resident()
        c.name = "Ann"
        c.address = Address(value: ["city": "Tokyo", "geo": ["lat": 35.6]])
        try realm.write { realm.add(c) }
        #expect(c.address?.city == "Tokyo")
        #expect(c.address?.geo?.lat == 35.6)
        #expect(realm.objects(Address.self).count == 1)
        #expect(realm.objects(Geo.self).count == 1)
        #expect((c.address?.parent as? DynamicObject)?["name"] as? String == "Ann")
        try realm.write { c.address = Address(value: ["city": "Osaka"]) }
        #expect(c.address?.city == "Osaka")
        #expect(realm.objects(Address.self).count == 1, "the old address went with its replacement")
        #expect(realm.objects(Geo.self).count == 0, "and its own embedded objects with it")
        try realm.write { c.address = nil }
        #expect(realm.objects(Address.self).count == 0)
    }

    @Test func listsOfEmbeddedObjects() throws {
        let realm = try realm()
        let c = try realm.write { realm.create(Resident.self, value: ["name": "Bob", "previous": [["city": "A"], ["city": "B"]]]) }
        #expect(c.previous.map(\.city) == ["A", "B"])
        try realm.write {
            c.previous.append(Address(value: ["city": "C"]))
            c.previous[0] = Address(value: ["city": "A2"])
            c.previous.remove(at: 1)
        }
        #expect(c.previous.map(\.city) == ["A2", "C"])
        #expect(realm.objects(Address.self).count == 2)
        try realm.write { realm.delete(c) }
        #expect(realm.objects(Address.self).count == 0, "deleting the parent deletes its embedded objects")
    }

    @Test func embeddedObjectsCannotStandAloneOrBeShared() throws {
        let realm = try realm()
        let a = try realm.write { realm.create(Resident.self, value: ["name": "A", "address": ["city": "X"]]) }
        let b = try realm.write { realm.create(Resident.self, value: ["name": "B"]) }
        #expect(throws: (any Error).self) { try realm.write { try realm.tryAdd(Address(value: ["city": "Y"])) } }
        #expect(throws: (any Error).self) { try realm.write { try realm.tryCreate(Address.self, value: ["city": "Y"]) } }
        #expect(throws: (any Error).self) {
            try realm.write { try realm.tryCreate(Resident.self, value: ["name": "B", "address": a.address!], update: .all) }
        }
        #expect(b.address == nil)
        #expect(realm.objects(Address.self).count == 1)
    }

    @Test func deletingAnEmbeddedObjectNullsItsParentsLink() throws {
        let realm = try realm()
        let c = try realm.write { realm.create(Resident.self, value: ["name": "C", "address": ["city": "Z"]]) }
        try realm.write { realm.delete(c.address!) }
        #expect(c.address == nil)
    }

    @Test func queriesFollowEmbeddedKeyPathsAndSortByThem() throws {
        let realm = try realm()
        try realm.write {
            for (n, city) in [("a", "Tokyo"), ("b", "Kyoto"), ("c", "Osaka")] {
                realm.create(Resident.self, value: ["name": n, "address": ["city": city, "geo": ["lat": Double(n.unicodeScalars.first!.value)]]])
            }
        }
        #expect(realm.objects(Resident.self).filter("address.city == 'Tokyo'").map(\.name) == ["a"])
        #expect(realm.objects(Resident.self).filter("address.geo.lat > 97.5").count == 2)
        #expect(realm.objects(Resident.self).sorted(byKeyPath: "address.city").map(\.name) == ["b", "c", "a"])
        #expect(realm.objects(Address.self).filter("ANY residents.name == 'b'").first?.city == "Kyoto")
    }

    @Test func anEmbeddedClassWithAPrimaryKeyIsRefused() throws {
        final class Keyed: EmbeddedObject {
            @Persisted(primaryKey: true) var id = 0
        }
        #expect(throws: (any Error).self) { _ = try memoryRealm([Keyed.self]) }
    }
}
