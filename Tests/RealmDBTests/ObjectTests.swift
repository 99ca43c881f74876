import Foundation
import Testing
@testable import RealmDB
import TestSupport

@Suite struct ObjectTests {
    @Test func unmanagedObjectsArePlainObjects() {
        let d = Dog()
        #expect(d.realm == nil)
        #expect(d.name == "")
        d.name = "Rex"
        d.age = 4
        #expect(d.name == "Rex" && d.age == 4)
        let p = Person(value: ["id": 7, "name": "Ann", "dogs": [d], "tags": ["a", "b"]])
        #expect(p.id == 7 && p.name == "Ann" && p.nickname == nil)
        #expect(p.dogs.count == 1 && p.dogs[0] === d)
        #expect(Array(p.tags) == ["a", "b"])
        #expect(p.ownedDogs.isEmpty)
        let fromArray = Dog(value: ["Fido", 2])
        #expect(fromArray.name == "Fido" && fromArray.age == 2)
        #expect(!d.isInvalidated)
    }

    @Test func everyValueTypeRoundTrips() throws {
        let realm = try memoryRealm([AllTypes.self])
        let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
        let uuid = UUID()
        let oid = ObjectId.generate()
        let o = AllTypes()
        o.bool = true
        o.int = Int.max
        o.int8 = -8
        o.int16 = 1600
        o.int32 = -320_000
        o.int64 = Int64.min
        o.float = 1.5
        o.double = -2.25
        o.string = "日本語 🐶 é"
        o.data = Data([0, 1, 2, 255])
        o.date = date
        o.objectId = oid
        o.uuid = uuid
        o.decimal = Decimal128(string: "123.456")!
        o.mixed = .string("mixed")
        o.optInt = 5
        o.optString = "s"
        o.optDate = date
        o.ints.append(objectsIn: [3, 1, 2])
        o.optStrings.append(objectsIn: ["x", nil])
        try realm.write { realm.add(o) }
        let r = try #require(realm.objects(AllTypes.self).first)
        #expect(r.bool && r.int == Int.max && r.int8 == -8 && r.int16 == 1600 && r.int32 == -320_000 && r.int64 == Int64.min)
        #expect(r.float == 1.5 && r.double == -2.25)
        #expect(r.string == "日本語 🐶 é")
        #expect(r.data == Data([0, 1, 2, 255]))
        #expect(abs(r.date.timeIntervalSince(date)) < 1e-6)
        #expect(r.objectId == oid && r.uuid == uuid)
        #expect(r.decimal == Decimal128(string: "123.456")!)
        #expect(r.mixed == .string("mixed"))
        #expect(r.optBool == nil && r.optInt == 5 && r.optString == "s" && r.optDouble == nil)
        #expect(r.optDate.map { abs($0.timeIntervalSince(date)) < 1e-6 } == true)
        #expect(Array(r.ints) == [3, 1, 2])
        #expect(Array(r.optStrings) == ["x", nil])
        try realm.write {
            r.optInt = nil
            r.mixed = .int(42)
            r.optUUID = uuid
        }
        #expect(r.optInt == nil && r.mixed == .int(42) && r.optUUID == uuid)
    }

    /// Realm's Swift SDK stores NaN as the epoch and a date past 64-bit seconds as the first or last timestamp;
    /// so does this one, where the conversion trapped before (and a fraction that rounds to a whole second is
    /// that second).
    @Test func aDatePastWhatATimestampHoldsIsStoredAsRealmStoresIt() throws {
        let realm = try memoryRealm([AllTypes.self])
        let last = 9_223_372_036_854_775_807.0 + 0.999_999_999, first = -9_223_372_036_854_775_808.0 - 0.999_999_999
        let cases: [(stored: Double, read: Double)] = [
            (.nan, 0), (.infinity, last), (1e30, last), (-.infinity, first), (-1e300, first), (0.999_999_999_9, 1),
        ]
        try realm.write {
            for (i, c) in cases.enumerated() {
                realm.add(AllTypes(value: ["int": i, "date": Date(timeIntervalSince1970: c.stored)]))
            }
        }
        for (i, c) in cases.enumerated() {
            let o = try #require(realm.objects(AllTypes.self).filter("int == %@", i).first)
            #expect(o.date == Date(timeIntervalSince1970: c.read), "\(c.stored)")
            // A query's date is converted the same way, so it finds what was stored.
            #expect(realm.objects(AllTypes.self).filter("date == %@ AND int == %@", Date(timeIntervalSince1970: c.stored), i).count == 1,
                    "\(c.stored)")
        }
    }

    @Test func managedObjectsReadThrough() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let rex = Dog(value: ["name": "Rex", "age": 3])
        try realm.write { realm.add(rex) }
        let again = try #require(realm.objects(Dog.self).first)
        #expect(again !== rex)
        #expect(again == rex)
        #expect(again.isSameObject(as: rex))
        try realm.write { again.age = 10 }
        #expect(rex.age == 10)
    }

    @Test func deletedObjectsAreInvalidatedAndLinksCleared() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let ann = Person(value: ["id": 1, "name": "Ann"])
        let rex = Dog(value: ["name": "Rex", "owner": ann])
        try realm.write {
            realm.add(rex)
            ann.dogs.append(rex)
        }
        #expect(ann.ownedDogs.count == 1)
        #expect(rex.owners.count == 1)
        try realm.write { realm.delete(ann) }
        #expect(ann.isInvalidated)
        #expect(!rex.isInvalidated)
        #expect(rex.owner == nil)
        #expect(rex.owners.isEmpty)
        try realm.write { realm.delete(rex) }
        #expect(rex.isInvalidated)
        #expect(realm.objects(Dog.self).isEmpty)
    }

    @Test func keyValueAccess() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let p = Person()
        p["name"] = "Bo"
        p["id"] = 3
        #expect(p["name"] as? String == "Bo")
        #expect(throws: RealmError.self) { try p.setValue("x", forProperty: "nope") }
        #expect(throws: RealmError.self) { try p.setValue("not a number", forProperty: "id") }
        try realm.write { realm.add(p) }
        try realm.write {
            p["nickname"] = "B"
            try p.setValue(41, forProperty: "age")
        }
        #expect(p.nickname == "B" && p.age == 41)
        #expect(p["age"] as? Int == 41)
        #expect(throws: RealmError.self) { try realm.write { try p.setValue("x", forProperty: "age") } }
        #expect(p.age == 41)
    }

    @Test func descriptionShowsProperties() throws {
        let d = Dog(value: ["name": "Rex", "age": 3])
        #expect(d.description.contains("name = \"Rex\""))
        #expect(d.description.contains("age = 3"))
    }
}
