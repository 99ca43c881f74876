import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Tagged: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var tags: MutableSet<String>
    @Persisted var lucky: MutableSet<Int?>
    @Persisted var anything: MutableSet<AnyRealmValue>
    @Persisted var friends: MutableSet<Pal>
    @Persisted var scores: Map<String, Int>
    @Persisted var notes: Map<String, String?>
    @Persisted var pets: Map<String, Pal?>
}

final class Pal: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

/// The older declaration style.
final class OldStyleTagged: Object {
    @Persisted var name = ""
    let tags = MutableSet<String>()
    let scores = Map<String, Double>()
}

/// `MutableSet` and `Map` as realm-swift apps use them.
@Suite struct SetAndMapTests {
    func realm() throws -> Realm { try memoryRealm([Tagged.self, Pal.self]) }

    @Test func mutableSetOperations() throws {
        let realm = try realm()
        let t = Tagged()
        t.name = "a"
        t.tags.insert("x")
        t.tags.insert("x")
        #expect(t.tags.count == 1, "an unmanaged set is a set too")
        try realm.write { realm.add(t) }
        try realm.write {
            t.tags.insert(objectsIn: ["b", "a", "b", "c"])
            t.tags.remove("c")
            t.lucky.insert(nil)
            t.lucky.insert(7)
            t.lucky.insert(7)
        }
        #expect(Array(t.tags) == ["a", "b", "x"], "stored sets iterate in Realm Core's order")
        #expect(t.tags.contains("b") && !t.tags.contains("c"))
        #expect(t.lucky.count == 2)
        #expect(Array(t.tags.sorted(ascending: false)) == ["x", "b", "a"])
        #expect(Array(t.tags.filter("self BEGINSWITH %@", "a")) == ["a"])
        #expect(t.lucky.max() == 7)
        let other = MutableSet<String>()
        other.insert(objectsIn: ["a", "z"])
        #expect(t.tags.intersects(other))
        #expect(!t.tags.isSubset(of: other))
        try realm.write {
            t.tags.formUnion(other)
            t.tags.subtract(other)
        }
        #expect(Array(t.tags) == ["b", "x"])
        try realm.write { t.tags.formIntersection(other) }
        #expect(t.tags.isEmpty)
        // Numbers of every type are one element of a set of mixed values, as in Realm Core.
        try realm.write {
            t.anything.insert(.int(1))
            t.anything.insert(.double(1.0))
            t.anything.insert(.decimal128(Decimal128(string: "1")!))
            t.anything.insert(.string("1"))
        }
        #expect(t.anything.count == 2)
    }

    @Test func setsOfObjectsKeepBacklinksAndLoseDeletedObjects() throws {
        let realm = try realm()
        let t = try realm.write { realm.create(Tagged.self, value: ["name": "a", "friends": [["name": "Rex"], ["name": "Ace"]]]) }
        #expect(t.friends.count == 2)
        let rex = try #require(realm.objects(Pal.self).filter("name == 'Rex'").first)
        try realm.write {
            t.friends.insert(rex)
            realm.delete(rex)
        }
        #expect(t.friends.map(\.name) == ["Ace"])
        #expect(throws: Never.self) { try realm.write { t.friends.removeAll() } }
        #expect(t.friends.isEmpty)
    }

    @Test func mapOperations() throws {
        let realm = try realm()
        let t = Tagged()
        t.name = "m"
        t.scores["math"] = 90
        try realm.write { realm.add(t) }
        try realm.write {
            t.scores["art"] = 70
            t.scores.updateValue(95, forKey: "math")
            t.scores["gym"] = 10
            t.scores["gym"] = nil
            t.notes["n"] = .some(nil)
            t.notes["日本"] = "語"
            t.pets["d1"] = Pal(value: ["name": "Rex"])
            t.pets["none"] = .some(nil)
        }
        #expect(t.scores.keys == ["art", "math"], "keys in UTF-8 order")
        #expect(t.scores.values == [70, 95])
        #expect(t.scores["math"] == 95)
        #expect(t.scores["gym"] == nil)
        #expect(t.notes.count == 2)
        #expect(t.notes["n"] == .some(nil), "a stored nil is a key with a nil value")
        #expect(t.pets["d1"]??.name == "Rex")
        #expect(t.pets["none"] == .some(nil))
        var seen: [String] = []
        for e in t.scores { seen.append("\(e.key)=\(e.value)") }
        #expect(seen == ["art=70", "math=95"])
        #expect(t.scores.asKeyValueSequence().map(\.key) == ["art", "math"])
        try realm.write { t.scores.merge(["art": 1, "new": 5], uniquingKeysWith: +) }
        #expect(t.scores["art"] == 71 && t.scores["new"] == 5)
        try realm.write { t.scores.removeObject(for: "new") }
        #expect(t.scores.count == 2)
        // Deleting a value object nulls its value; the key stays (Realm Core's Dictionary::nullify).
        try realm.write { realm.delete(t.pets["d1"]!!) }
        #expect(t.pets.keys == ["d1", "none"])
        #expect(t.pets["d1"] == .some(nil))
        try realm.write { t.scores.removeAll() }
        #expect(t.scores.isEmpty)
    }

    @Test func invalidMapKeysAreRefused() throws {
        let realm = try realm()
        let t = try realm.write { realm.create(Tagged.self, value: ["name": "k"]) }
        for bad in ["", "$x", "a.b"] {
            #expect(throws: (any Error).self) {
                try realm.write { try realm.tryCreate(Tagged.self, value: ["name": "k\(bad)", "scores": [bad: 1]]) }
            }
        }
        #expect(t.scores.isEmpty)
    }

    @Test func createWithNestedValuesAndReadBackDynamically() throws {
        let realm = try realm()
        try realm.write {
            realm.create(Tagged.self, value: ["name": "c", "tags": ["q", "p", "q"], "scores": ["a": 1, "b": 2],
                                                  "pets": ["x": ["name": "Kit", "age": 3]]])
        }
        let t = try #require(realm.object(ofType: Tagged.self, forPrimaryKey: "c"))
        #expect(Array(t.tags) == ["p", "q"])
        #expect(t.scores["b"] == 2)
        #expect(t.pets["x"]??.age == 3)
        #expect(realm.schema["Tagged"]?["tags"]?.isSet == true)
        #expect(realm.schema["Tagged"]?["scores"]?.isMap == true)
        let dyn = try #require(realm.dynamicObjects("Tagged").first)
        #expect((dyn["scores"] as? [String: Any?])?.count == 2)
    }

    @Test func oldStyleDeclarationsWork() throws {
        let realm = try memoryRealm([OldStyleTagged.self])
        let o = OldStyleTagged()
        o.tags.insert("t")
        o.scores["pi"] = 3.14
        try realm.write { realm.add(o) }
        #expect(Array(o.tags) == ["t"])
        #expect(o.scores["pi"] == 3.14)
        try realm.write { o.scores["e"] = 2.72 }
        #expect(o.scores.keys == ["e", "pi"])
    }

    @Test func mapAndSetNotifications() throws {
        let realm = try realm()
        let t = try realm.write { realm.create(Tagged.self, value: ["name": "n", "scores": ["a": 1, "b": 2]]) }
        var mapChanges: [String] = []
        let mapToken = t.scores.observe { change in
            switch change {
            case .initial(let m): mapChanges.append("initial \(m.count)")
            case .update(_, let d, let i, let m): mapChanges.append("d\(d) i\(i) m\(m)")
            case .error(let e): mapChanges.append("error \(e)")
            }
        }
        var setChanges: [String] = []
        let setToken = t.tags.observe { change in
            switch change {
            case .initial(let s): setChanges.append("initial \(s.count)")
            case .update(_, let d, let i, _): setChanges.append("d\(d) i\(i)")
            case .error(let e): setChanges.append("error \(e)")
            }
        }
        try realm.write {
            t.scores["a"] = nil
            t.scores["b"] = 3
            t.scores["c"] = 4
            t.tags.insert("x")
        }
        realm.refresh()
        #expect(mapChanges == ["initial 2", "d[\"a\"] i[\"c\"] m[\"b\"]"])
        #expect(setChanges == ["initial 0", "d[] i[0]"])
        mapToken.invalidate()
        setToken.invalidate()
    }
}

extension SetAndMapTests {
    static func countMatching<C: RealmCollection>(_ c: C, _ query: String) -> Int { c.filter(query).count }

    @Test func aMutableSetIsARealmCollection() throws {
        let realm = try realm()
        let t = try realm.write {
            realm.create(Tagged.self, value: ["name": "r", "lucky": [3, 1, 2], "friends": [["name": "Rex", "age": 5], ["name": "Ace", "age": 2]]])
        }
        #expect(Self.countMatching(t.lucky, "self >= 2") == 2)
        #expect(Self.countMatching(t.friends, "age > 3") == 1)
        #expect(AnyRealmCollection(t.friends).sorted(byKeyPath: "age").map(\.name) == ["Ace", "Rex"])
        #expect(t.friends.max(ofProperty: "age") as Int? == 5)
        #expect(t.lucky.sum() == 6)
    }
}
