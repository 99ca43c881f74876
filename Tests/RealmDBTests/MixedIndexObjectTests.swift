import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Reading: Object {
    @Persisted var sensor = ""
    @Persisted(indexed: true) var value: AnyRealmValue
}

/// `@Persisted(indexed: true) var value: AnyRealmValue`, as realm-swift accepts it: the property is indexed
/// and queries through the index find numbers across types.
@Suite struct MixedIndexObjectTests {
    @Test func anIndexedAnyRealmValueIsIndexedAndQueried() throws {
        let realm = try memoryRealm([Reading.self])
        #expect(realm.schema["Reading"]?["value"]?.isIndexed == true)
        try realm.write {
            for v: AnyRealmValue in [.int(1), .double(1), .float(1.5), .string("1"), .none, .object(Reading(value: ["sensor": "inner"]))] {
                let r = Reading()
                r.sensor = "s"
                r.value = v
                realm.add(r)
            }
        }
        #expect(realm.objects(Reading.self).filter("value == 1").count == 2)
        #expect(realm.objects(Reading.self).filter("value IN {1.5, '1'}").count == 2)
        #expect(realm.objects(Reading.self).filter("value == nil").count == 2)  // the inner object's value and .none
        let r = try #require(realm.objects(Reading.self).filter("value == 1.5").first)
        try realm.write { r.value = .decimal128(Decimal128(Int64(1))) }
        #expect(realm.objects(Reading.self).filter("value == 1").count == 3)
    }
}
