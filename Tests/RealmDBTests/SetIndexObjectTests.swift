import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Labelled: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var tags: MutableSet<String>
}

final class LabelledUnindexed: Object {
    @Persisted var name = ""
    @Persisted var tags: MutableSet<String>
    override class func className() -> String { "Labelled" }
}

/// `@Persisted(indexed: true) var tags: MutableSet<String>`: the set's elements are indexed (a superset of
/// realm-swift, which indexes single values only), queries read the index, and the index follows the model
/// across opens as a single value's does.
@Suite struct SetIndexObjectTests {
    @Test func anIndexedSetIsIndexedQueriedAndKeptThroughChanges() throws {
        let realm = try memoryRealm([Labelled.self])
        #expect(realm.schema["Labelled"]?["tags"]?.isIndexed == true)
        try realm.write {
            for (n, tags) in [("a", ["x", "東京"]), ("b", ["y"]), ("c", ["x", "y", "🐕"]), ("d", [])] {
                let t = Labelled()
                t.name = n
                t.tags.insert(objectsIn: tags)
                realm.add(t)
            }
        }
        func names(_ q: String) -> [String] { realm.objects(Labelled.self).filter(q).map(\.name).sorted() }
        #expect(names("ANY tags == 'x'") == ["a", "c"])
        #expect(names("tags IN {'東京', '🐕'}") == ["a", "c"])
        let c = try #require(realm.objects(Labelled.self).filter("name == 'c'").first)
        try realm.write {
            c.tags.remove("x")
            c.tags.insert("東京")
        }
        #expect(names("ANY tags == 'x'") == ["a"])
        #expect(names("ANY tags == '東京'") == ["a", "c"])
        #expect(Array(realm.objects(Labelled.self).where { $0.tags.contains("y") }.map(\.name)).sorted() == ["b", "c"])
        try realm.write { realm.delete(realm.objects(Labelled.self).filter("name == 'a'")) }
        #expect(names("ANY tags == '東京'") == ["c"])
    }

    @Test func theSetIndexFollowsTheModelAcrossOpens() throws {
        let dir = TempDir()
        do {
            let realm = try Realm(configuration: fileConfig(dir, [LabelledUnindexed.self]))
            try realm.write {
                for i in 0..<20 { realm.create(LabelledUnindexed.self, value: ["name": "n\(i)", "tags": ["t\(i % 3)", "all"]]) }
            }
            #expect(realm.schema["Labelled"]?["tags"]?.isIndexed == false)
        }
        do {
            let realm = try Realm(configuration: fileConfig(dir, [Labelled.self]))
            #expect(realm.schema["Labelled"]?["tags"]?.isIndexed == true)
            #expect(realm.objects(Labelled.self).filter("ANY tags == 't1'").count == 7)
            #expect(realm.objects(Labelled.self).filter("ANY tags == 'all'").count == 20)
        }
    }
}
