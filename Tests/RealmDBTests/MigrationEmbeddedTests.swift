import Foundation
import Testing
@testable import RealmDB
import RealmStorage
import TestSupport

final class PlaceV0: Object {
    @Persisted var city = ""
    override class func className() -> String { "Place" }
}

final class HomeV0: Object {
    @Persisted var name = ""
    @Persisted var place: PlaceV0?
    override class func className() -> String { "Home" }
}

final class PlaceV1: EmbeddedObject {
    @Persisted var city = ""
    override class func className() -> String { "Place" }
}

final class HomeV1: Object {
    @Persisted var name = ""
    @Persisted var place: PlaceV1?
    override class func className() -> String { "Home" }
}

/// A model class that becomes an `EmbeddedObject` (or stops being one) is a schema change: named without a
/// higher schema version, applied by a migration.
@Suite struct MigrationEmbeddedTests {
    func seed(_ dir: TempDir, shared: Bool = false) throws {
        try withRealm(migrationConfig(dir, [HomeV0.self, PlaceV0.self], 0)) { r in
            try r.write {
                let a = HomeV0(value: ["name": "a", "place": ["city": "東京"]])
                r.add(a)
                r.add(HomeV0(value: ["name": "b", "place": shared ? a.place! : PlaceV0(value: ["city": "Seoul"])]))
                r.add(PlaceV0(value: ["city": "nowhere"]))
            }
        }
    }

    @Test func becomingEmbeddedWithoutAHigherVersionIsNamed() throws {
        let dir = TempDir()
        try seed(dir)
        #expect {
            _ = try Realm(configuration: migrationConfig(dir, [HomeV1.self, PlaceV1.self], 0))
        } throws: { e in
            "\(e)".contains("class 'Place' has become embedded")
        }
    }

    @Test func aMigrationMakesTheClassEmbeddedAndDeletesOrphans() throws {
        let dir = TempDir()
        try seed(dir)
        let config = migrationConfig(dir, [HomeV1.self, PlaceV1.self], 1)
        try withRealm(config) { r in
            #expect(r.schema["Place"]?.isEmbedded == true)
            #expect(r.dynamicObjects("Place").count == 2)
            let a = r.objects(HomeV1.self).filter("name == 'a'").first!
            #expect(a.place?.city == "東京")
            try r.write { r.delete(a) }
            #expect(r.dynamicObjects("Place").count == 1)
        }
        try expectSound(config, version: 1)
    }

    @Test func anObjectWithTwoOwnersFailsTheMigrationAndLeavesTheFile() throws {
        let dir = TempDir()
        try seed(dir, shared: true)
        #expect {
            _ = try Realm(configuration: migrationConfig(dir, [HomeV1.self, PlaceV1.self], 1))
        } throws: { e in
            "\(e)".contains("linked from 2 places") && "\(e)".contains("left unchanged")
        }
        try withRealm(migrationConfig(dir, [HomeV0.self, PlaceV0.self], 0)) { r in
            #expect(r.objects(PlaceV0.self).count == 2)
        }
    }

    @Test func anEmbeddedClassBecomesTopLevelAgain() throws {
        let dir = TempDir()
        try seed(dir)
        try withRealm(migrationConfig(dir, [HomeV1.self, PlaceV1.self], 1)) { _ in }
        let config = migrationConfig(dir, [HomeV0.self, PlaceV0.self], 2)
        try withRealm(config) { r in
            #expect(r.schema["Place"]?.isEmbedded == false)
            try r.write { r.delete(r.objects(HomeV0.self)) }
            #expect(r.objects(PlaceV0.self).count == 2)
        }
        try expectSound(config, version: 2)
    }
}
