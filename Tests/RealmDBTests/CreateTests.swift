import Foundation
import Testing
@testable import RealmDB
import TestSupport

@Suite struct CreateTests {
    @Test func createFromNestedDictionaries() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let dog = try realm.write {
            realm.create(Dog.self, value: ["name": "Rex", "age": 2, "owner": ["id": 1, "name": "Ann", "tags": ["t"]]])
        }
        #expect(dog.owner?.name == "Ann")
        #expect(dog.owner?.tags.first == "t")
        #expect(realm.objects(Person.self).count == 1)
        // An array in property order.
        let d2 = try realm.write { realm.create(Dog.self, value: ["Fido", 5]) }
        #expect(d2.name == "Fido" && d2.age == 5 && d2.owner == nil)
    }

    @Test func updatePolicies() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write { realm.create(Person.self, value: ["id": 1, "name": "Ann", "nickname": "A"]) }
        // .error: a duplicate primary key is an error and nothing changes.
        #expect(throws: RealmError.self) {
            try realm.write { try realm.tryCreate(Person.self, value: ["id": 1, "name": "Other"]) }
        }
        #expect(realm.objects(Person.self).count == 1)
        // .modified: only the given keys change.
        try realm.write { realm.create(Person.self, value: ["id": 1, "name": "Ann B"], update: .modified) }
        let p = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(p.name == "Ann B" && p.nickname == "A")
        // add(update:) with an unmanaged object overwrites everything and binds the object.
        let replacement = Person(value: ["id": 1, "name": "Ann C"])
        try realm.write { realm.add(replacement, update: .all) }
        #expect(replacement.realm != nil)
        #expect(p.name == "Ann C" && p.nickname == nil)
        #expect(realm.objects(Person.self).count == 1)
        let dup = Person(value: ["id": 1])
        #expect(throws: RealmError.self) { try realm.write { try realm.tryAdd(dup) } }
        #expect(dup.realm == nil)
    }

    @Test func modelDefaultsApplyToCreate() throws {
        final class Defaults: Object {
            @Persisted var title = "untitled"
            @Persisted var count = 7
        }
        let realm = try memoryRealm([Defaults.self])
        let o = try realm.write { realm.create(Defaults.self) }
        #expect(o.title == "untitled" && o.count == 7)
    }

    @Test func wrongValuesAreClearErrors() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        do {
            try realm.write { try realm.tryCreate(Dog.self, value: ["name": 5]) }
            Issue.record("expected an error")
        } catch let e as RealmError {
            #expect(e.description.contains("Dog.name"))
        }
        #expect(throws: RealmError.self) { try realm.write { try realm.tryCreate(Dog.self, value: ["owner": "Ann"]) } }
        #expect(realm.objects(Dog.self).isEmpty)
        // Keys that are not properties are ignored, as the seeds describe for JSON import.
        let d = try realm.write { realm.create(Dog.self, value: ["name": "Rex", "breed": "unknown"]) }
        #expect(d.name == "Rex")
    }

    @Test func cyclesBetweenUnmanagedObjects() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let ann = Person(value: ["id": 1, "name": "Ann"])
        let rex = Dog(value: ["name": "Rex"])
        rex.owner = ann
        ann.dogs.append(rex)
        try realm.write { realm.add(ann) }
        #expect(realm.objects(Dog.self).count == 1)
        #expect(ann.dogs.first?.owner?.id == 1)
    }

    @Test func copyingBetweenRealms() throws {
        let a = try memoryRealm([Dog.self, Person.self], "copyA")
        let b = try memoryRealm([Dog.self, Person.self], "copyB")
        let dog = try a.write { a.create(Dog.self, value: ["name": "Rex", "age": 4, "owner": ["id": 9, "name": "Zed"]]) }
        #expect(throws: RealmError.self) { try b.write { try b.tryAdd(dog) } }
        let copy = try b.write { b.create(Dog.self, value: dog) }
        #expect(copy.name == "Rex" && copy.age == 4 && copy.owner?.name == "Zed")
        #expect(copy.realm == b)
        #expect(b.objects(Person.self).count == 1)
    }
}

/// Another model class named "Dog" (as a nested class with className overridden) must not be picked for
/// nested dictionaries in a Realm whose models are the Dog of Models.swift.
@Suite struct ModelNameClashTests {
    final class OtherDog: Object {
        @Persisted var name = ""
        override class func className() -> String { "Dog" }
    }

    @Test func nestedValuesUseThisRealmsModels() throws {
        _ = try memoryRealm([OtherDog.self], "clash-other")
        let realm = try memoryRealm([Dog.self, Person.self], "clash")
        let p = try realm.write { realm.create(Person.self, value: ["id": 1, "dogs": [["name": "Rex"]]]) }
        #expect(p.dogs.first?.name == "Rex")
        #expect(p.dogs.first?.owners.count == 1)
    }
}
