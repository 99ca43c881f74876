import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Reading: Object {
    @Persisted var sensor = ""
    @Persisted(indexed: true) var value: AnyRealmValue
}

final class ReadingUnindexed: Object {
    @Persisted var sensor = ""
    @Persisted var value: AnyRealmValue
    override class func className() -> String { "Reading" }
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

    /// Opening a file with the index added (and then removed) by the model builds (and drops) it, as realm-swift
    /// does without a migration; the answers stay the same.
    @Test func theIndexFollowsTheModelAcrossOpens() throws {
        let dir = TempDir()
        do {
            let realm = try Realm(configuration: fileConfig(dir, [ReadingUnindexed.self]))
            try realm.write {
                for v: AnyRealmValue in [.int(2), .double(2), .decimal128(Decimal128(Int64(2))), .string("2"), .bool(true)] {
                    realm.create(ReadingUnindexed.self, value: ["sensor": "s", "value": v])
                }
            }
            #expect(realm.schema["Reading"]?["value"]?.isIndexed == false)
        }
        do {
            let realm = try Realm(configuration: fileConfig(dir, [Reading.self]))
            #expect(realm.schema["Reading"]?["value"]?.isIndexed == true)
            #expect(realm.objects(Reading.self).filter("value == 2").count == 3)
        }
        do {
            let realm = try Realm(configuration: fileConfig(dir, [ReadingUnindexed.self]))
            #expect(realm.schema["Reading"]?["value"]?.isIndexed == false)
            #expect(realm.objects(ReadingUnindexed.self).filter("value == 2").count == 3)
        }
    }
}
