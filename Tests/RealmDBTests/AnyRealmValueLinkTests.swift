import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Holder: Object {
    @Persisted var name = ""
    @Persisted var value: AnyRealmValue
    @Persisted var values: List<AnyRealmValue>
}

final class Trinket: Object {
    @Persisted var name = ""
}

/// `AnyRealmValue` holding objects and nested collections, as realm-swift 10.51 apps use it.
@Suite struct AnyRealmValueLinkTests {
    func realm() throws -> Realm { try memoryRealm([Holder.self, Trinket.self]) }

    @Test func objectsInMixedValues() throws {
        let realm = try realm()
        let h = Holder()
        h.value = .object(Trinket(value: ["name": "ball"]))
        try realm.write { realm.add(h) }
        #expect(h.value.object(Trinket.self)?.name == "ball")
        #expect(realm.objects(Trinket.self).count == 1, "the object was added with its holder")
        #expect(h.value.dynamicObject?["name"] as? String == "ball")
        let toy = try #require(realm.objects(Trinket.self).first)
        try realm.write { realm.delete(toy) }
        #expect(h.value == .none, "a link to a deleted object becomes null")
    }

    @Test func nestedCollections() throws {
        let realm = try realm()
        let h = try realm.write { realm.create(Holder.self, value: ["name": "n"]) }
        let toy = try realm.write { realm.create(Trinket.self, value: ["name": "car"]) }
        try realm.write {
            h.value = .fromDictionary(["a": .int(1), "list": .fromArray([.string("x"), .object(toy), .fromArray([.bool(true)])])])
        }
        guard case .dictionary(let d) = h.value else { Issue.record("not a dictionary: \(h.value)"); return }
        #expect(d.keys == ["a", "list"])
        #expect(d["a"] == .int(1))
        let list = try #require(d["list"]?.listValue)
        #expect(list.count == 3)
        #expect(list[0] == .string("x"))
        #expect(list[1].object(Trinket.self)?.name == "car")
        #expect(list[2].listValue?.first == .bool(true))
        try realm.write { realm.delete(toy) }
        guard case .dictionary(let after) = h.value, let l2 = after["list"]?.listValue else { Issue.record("\(h.value)"); return }
        #expect(l2.count == 2, "a list element linking to a deleted object is erased, as in Realm Core")
    }

    @Test func nestedCollectionsReadAndWriteThrough() throws {
        let realm = try realm()
        let h = try realm.write { realm.create(Holder.self, value: ["name": "w"]) }
        try realm.write { h.value = .fromDictionary(["scores": .fromArray([.int(1)]), "meta": .fromDictionary(["k": .string("v")])]) }
        let scores = try #require(h.value.dictionaryValue?["scores"]?.listValue)
        try realm.write {
            scores.append(.int(2))
            h.value.dictionaryValue?["meta"]?.dictionaryValue?["新"] = .string("値")
            h.value.dictionaryValue?["extra"] = .fromArray([.bool(true)])
        }
        #expect(Array(scores) == [.int(1), .int(2)])
        guard case .dictionary(let d) = h.value else { Issue.record("\(h.value)"); return }
        #expect(d["meta"]?.dictionaryValue?["新"] == .string("値"))
        #expect(d["extra"]?.listValue?.first == .bool(true))
        // Another write of the same property is seen by the collection read before it.
        try realm.write { h.value = .fromDictionary(["scores": .fromArray([.int(9), .int(8), .int(7)])]) }
        #expect(scores.count == 3 && scores[0] == .int(9))
        try realm.write { scores.remove(at: 0) }
        #expect(h.value.dictionaryValue?["scores"]?.listValue.map(Array.init) == [.int(8), .int(7)])
        // Stored in the file: a fresh Realm reads it.
        #expect(realm.objects(Holder.self).filter("value['scores'][0] == 8").count == 1)
    }

    @Test func writingANestedCollectionOutsideAWriteStops() async throws {
        await #expect(processExitsWith: .failure) {
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "nested-\(UUID())", objectTypes: [Holder.self, Trinket.self]))
            let h = try! realm.write { realm.create(Holder.self, value: ["name": "x", "value": AnyRealmValue.fromArray([.int(1)])]) }
            h.value.listValue?.append(.int(2))
        }
    }

    @Test func tooDeepIsRefused() throws {
        let realm = try realm()
        let h = try realm.write { realm.create(Holder.self, value: ["name": "d"]) }
        var v = AnyRealmValue.int(1)
        for _ in 0..<120 { v = .fromArray([v]) }
        let deep = v
        #expect(throws: (any Error).self) { try realm.write { try h.setValue(deep, forProperty: "value") } }
        #expect(h.value == .none)
    }
}
