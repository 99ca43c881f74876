import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// A map's values as results: filter, sorted and aggregates, as realm-swift's `Map` has them.
@Suite struct MapQueryTests {
    @Test func valuesAreFilteredSortedAndAggregated() throws {
        let realm = try memoryRealm([Tagged.self, Pal.self])
        let t = Tagged(value: ["name": "t", "scores": ["math": 90, "art": 50, "日本語": 70], "notes": ["a": "x", "b": nil]])
        try realm.write { realm.add(t) }
        #expect(Array(t.scores.filter("self > 60")).sorted() == [70, 90])
        #expect(Array(t.scores.sorted()) == [50, 70, 90])
        #expect(Array(t.scores.sorted(ascending: false)) == [90, 70, 50])
        #expect(t.scores.min(ofProperty: "self") == 50 && t.scores.max(ofProperty: "self") == 90)
        #expect(t.scores.sum(ofProperty: "self") == 210)
        #expect(t.notes.filter("self == nil").count == 1)
        let high = t.scores.filter("self >= 70")
        #expect(high.count == 2)
        try realm.write { t.scores["music 🎵"] = 100 }
        #expect(high.count == 3)
    }
}
