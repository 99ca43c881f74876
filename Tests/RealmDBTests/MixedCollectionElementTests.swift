import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class MixedBag: Object {
    @Persisted var name = ""
    @Persisted var anys: List<AnyRealmValue>
    @Persisted var bag: Map<String, AnyRealmValue>
}

/// A list or dictionary read from an element of a list of mixed values, or from a value of a map of them,
/// reads and writes through, as one read from a mixed property does (realm-swift 10.51+).
@Suite struct MixedCollectionElementTests {
    func seeded() throws -> (Realm, MixedBag) {
        let realm = try memoryRealm([MixedBag.self])
        let o = try realm.write {
            realm.create(MixedBag.self, value: ["name": "o"])
        }
        try realm.write {
            o.anys.append(.fromArray([.int(1)]))
            o.anys.append(.string("x"))
            o.bag["d"] = .fromDictionary(["a": .int(1)])
            o.bag["n"] = .int(7)
        }
        return (realm, o)
    }

    @Test func aListInAListOfMixedWritesThrough() throws {
        let (realm, o) = try seeded()
        try realm.write { o.anys[0].listValue?.append(.int(2)) }
        #expect(o.anys[0].listValue.map(Array.init) == [.int(1), .int(2)])
        #expect(realm.objects(MixedBag.self).filter("anys[0][1] == 2").count == 1)
        // Deeper: a dictionary in the nested list, changed through the element read again.
        try realm.write { o.anys[0].listValue?.append(.fromDictionary(["k": .int(3)])) }
        try realm.write { o.anys[0].listValue?[2].dictionaryValue?["k"] = .int(4) }
        #expect(realm.objects(MixedBag.self).filter("anys[0][2].k == 4").count == 1)
        // Elements met while iterating write through too; the other element is untouched.
        try realm.write { for v in o.anys { v.listValue?.append(.bool(true)) } }
        #expect(o.anys[0].listValue?.count == 4)
        #expect(o.anys[1] == .string("x"))
    }

    @Test func aDictionaryInAMapOfMixedWritesThrough() throws {
        let (realm, o) = try seeded()
        try realm.write { o.bag["d"]?.dictionaryValue?["b"] = .int(2) }
        #expect(o.bag["d"]?.dictionaryValue?["b"] == .int(2))
        #expect(realm.objects(MixedBag.self).filter("bag['d'].b == 2").count == 1)
        try realm.write {
            for entry in o.bag { entry.value.dictionaryValue?["c"] = .string("値") }
        }
        #expect(realm.objects(MixedBag.self).filter("bag['d'].c == '値'").count == 1)
        #expect(o.bag["n"] == .int(7))
        // A collection read before another write of the map sees that write.
        let d = try #require(o.bag["d"]?.dictionaryValue)
        try realm.write { o.bag["d"] = .fromDictionary(["z": .int(9)]) }
        #expect(d.keys == ["z"])
    }

    @Test func changingANestedCollectionOutsideAWriteStops() async {
        await #expect(processExitsWith: .failure) {
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "element-\(UUID())", objectTypes: [MixedBag.self]))
            let o = try! realm.write { realm.create(MixedBag.self, value: ["name": "o"]) }
            try! realm.write { o.anys.append(.fromArray([.int(1)])) }
            o.anys[0].listValue?.append(.int(2))
        }
    }
}
