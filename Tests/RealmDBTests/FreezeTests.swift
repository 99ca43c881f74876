import Foundation
import Synchronization
import Testing
@testable import RealmDB
import TestSupport

/// `freeze()` and `thaw()` of Realms, objects and collections, as realm-swift has them.
@Suite struct FreezeTests {
    func seeded(_ dir: TempDir) throws -> (Realm.Configuration, Realm) {
        let config = fileConfig(dir, [Dog.self, Person.self, Tagged.self, Pal.self])
        let realm = try Realm(configuration: config)
        try realm.write {
            let ann = realm.create(Person.self, value: ["id": 1, "name": "Ann", "tags": ["a", "b"]])
            for i in 0..<100 { ann.dogs.append(Dog(value: ["name": "d\(i)", "age": i])) }
            let t = realm.create(Tagged.self, value: ["name": "t", "tags": ["x"], "scores": ["math": 90]])
            t.friends.insert(Pal(value: ["name": "P"]))
        }
        return (config, realm)
    }

    @Test func aFrozenRealmKeepsItsVersionWhileTheLiveOneMovesOn() throws {
        let dir = TempDir()
        let (_, realm) = try seeded(dir)
        let frozen = realm.freeze()
        #expect(frozen.isFrozen && !realm.isFrozen)
        #expect(realm.freeze() == frozen)
        try realm.write { realm.delete(realm.objects(Dog.self).filter("age < 50")) }
        #expect(realm.objects(Dog.self).count == 50)
        #expect(frozen.objects(Dog.self).count == 100)
        #expect(frozen.objects(Dog.self).filter("age < 10").count == 10)
        #expect(!frozen.refresh())
        #expect(frozen.objects(Dog.self).count == 100)
        #expect(throws: RealmError.frozen(operation: "begin a write transaction")) { try frozen.tryBeginWrite() }
        #expect(throws: RealmError.self) { try frozen.checkCanObserve() }
        #expect(frozen.thaw() == realm)
        #expect(frozen.thaw().objects(Dog.self).count == 50)
    }

    @Test func frozenObjectsAndResultsAreReadOnOtherThreadsAtOnce() throws {
        let dir = TempDir()
        let (_, realm) = try seeded(dir)
        let dogs = realm.objects(Dog.self).sorted(byKeyPath: "age").freeze()
        nonisolated(unsafe) let ann = realm.objects(Person.self).first!.freeze()  // frozen: readable on any thread
        #expect(dogs.isFrozen && ann.isFrozen)
        try realm.write { realm.deleteAll() }
        let sums = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var sum = 0
            for d in dogs { sum += d.age }
            sum += ann.dogs.count + dogs.filter("age >= 90").count
            sums.withLock { $0.append(sum) }
        }
        #expect(sums.withLock { $0 } == Array(repeating: 4950 + 100 + 10, count: 8))
    }

    @Test func thawFindsTheLiveObjectOrNilWhenItWasDeleted() throws {
        let dir = TempDir()
        let (_, realm) = try seeded(dir)
        let first = realm.objects(Dog.self).sorted(byKeyPath: "age").first!
        let frozenDog = first.freeze()
        #expect(frozenDog.name == "d0")
        let live = try #require(frozenDog.thaw())
        #expect(!live.isFrozen && live.name == "d0")
        try realm.write { live.name = "zero" }
        #expect(frozenDog.name == "d0")
        try realm.write { realm.delete(live) }
        #expect(frozenDog.thaw() == nil)
        #expect(frozenDog.name == "d0")
    }

    @Test func listsSetsMapsAndLinkingObjectsFreezeAndThaw() throws {
        let dir = TempDir()
        let (_, realm) = try seeded(dir)
        let ann = realm.objects(Person.self).first!
        let t = realm.objects(Tagged.self).first!
        let dogs = ann.dogs.freeze(), tags = ann.tags.freeze(), set = t.tags.freeze(), map = t.scores.freeze()
        let owners = realm.objects(Dog.self).first!.owners.freeze()
        let friends = AnyRealmCollection(t.friends).freeze()
        #expect(dogs.isFrozen && set.isFrozen && map.isFrozen && owners.isFrozen && friends.isFrozen)
        try realm.write {
            ann.dogs.removeAll()
            ann.tags.append("c")
            t.tags.insert("y")
            t.scores["art"] = 70
            t.friends.removeAll()
        }
        #expect(dogs.count == 100 && Array(tags) == ["a", "b"] && Array(set) == ["x"] && map.count == 1)
        #expect(owners.count == 1 && friends.count == 1)
        #expect(dogs.thaw()?.count == 0 && tags.thaw().map(Array.init) == ["a", "b", "c"])
        #expect(set.thaw()?.count == 2 && map.thaw()?["art"] == 70 && owners.thaw()?.count == 0 && friends.thaw()?.count == 0)
        try realm.write { realm.delete(ann) }
        #expect(dogs.thaw() == nil)
    }

    @Test func writingAFrozenObjectStopsWithAMessage() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "frozen-\(UUID())", objectTypes: [Dog.self, Person.self]))
            try! realm.write { realm.add(Dog(value: ["name": "Rex"])) }
            let dog = realm.objects(Dog.self).first!.freeze()
            try! realm.write { dog.name = "Max" }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("frozen"), "\(stderr)")
    }
}
