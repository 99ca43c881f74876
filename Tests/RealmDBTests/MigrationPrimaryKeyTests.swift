import Foundation
import Testing
@testable import RealmDB
import RealmStorage
import TestSupport

/// Primary keys chosen, moved, dropped and retyped by migrations: set after the block, when the values must
/// be unique; duplicates fail the migration and leave the file as it was.
@Suite struct MigrationPrimaryKeyTests {
    func seedKeyed(_ dir: TempDir, _ codes: [String]) throws {
        try withRealm(migrationConfig(dir, [KeyedV0.self], 0)) { r in
            try r.write { for (i, c) in codes.enumerated() { r.add(KeyedV0(value: ["code": c, "n": i * 10])) } }
        }
    }

    @Test func aPropertyWithUniqueValuesBecomesThePrimaryKey() throws {
        let dir = TempDir()
        try seedKeyed(dir, ["a", "b", "c"])
        let config = migrationConfig(dir, [KeyedV1.self], 1)
        try withRealm(config) { r in
            #expect(r.object(ofType: KeyedV1.self, forPrimaryKey: "b")?.n == 10)
            #expect(r.schema["Keyed"]?.primaryKeyProperty?.name == "code")
            #expect(throws: RealmError.self) { try r.write { try r.tryAdd(KeyedV1(value: ["code": "a"])) } }
            try r.write { r.add(KeyedV1(value: ["code": "d", "n": 30])) }
        }
        try expectSound(config, version: 1)
    }

    @Test func duplicateKeysFailTheMigrationAndLeaveTheFileAsItWas() throws {
        let dir = TempDir()
        try seedKeyed(dir, ["a", "a", "b"])
        do {
            _ = try Realm(configuration: migrationConfig(dir, [KeyedV1.self], 1))
            Issue.record("expected duplicate primary keys")
        } catch let e as RealmError {
            guard case .migrationFailed(_, 0, 1, let underlying) = e else { Issue.record("\(e)"); return }
            #expect(underlying == .storage(.duplicatePrimaryKey(className: "Keyed", property: "code")))
            #expect(e.description.contains("Keyed.code") && e.description.contains("left unchanged"), "\(e)")
        }
        try withRealm(migrationConfig(dir, [KeyedV0.self], 0)) { r in #expect(r.objects(KeyedV0.self).count == 3) }
        try expectSound(migrationConfig(dir, [KeyedV0.self], 0), version: 0)
    }

    @Test func theBlockCanMakeTheValuesUnique() throws {
        let dir = TempDir()
        try seedKeyed(dir, ["a", "a", "b"])
        let config = migrationConfig(dir, [KeyedV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "Keyed") { old, new in
                new!["code"] = "\(old!["code"] as! String)-\(old!["n"] as! Int)"
            }
        }
        try withRealm(config) { r in
            #expect(Set(r.objects(KeyedV1.self).map(\.code)) == ["a-0", "a-10", "b-20"])
            #expect(r.object(ofType: KeyedV1.self, forPrimaryKey: "a-10")?.n == 10)
        }
        try expectSound(config, version: 1)
    }

    @Test func theKeyMovesToAnotherProperty() throws {
        let dir = TempDir()
        try seedKeyed(dir, ["a", "b"])
        try withRealm(migrationConfig(dir, [KeyedV1.self], 1)) { _ in }
        let config = migrationConfig(dir, [KeyedV2.self], 2)
        try withRealm(config) { r in
            #expect(r.object(ofType: KeyedV2.self, forPrimaryKey: 10)?.code == "b")
            try r.write { r.add(KeyedV2(value: ["code": "b", "n": 99])) }  // code is a plain property again
            #expect(r.objects(KeyedV2.self).filter { $0.code == "b" }.count == 2)
        }
        try expectSound(config, version: 2)
    }

    @Test func anIntKeyIsDroppedAndANewKeyAdded() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [KeyedIntV0.self], 0)) { r in
            try r.write { for i in 1...3 { r.add(KeyedIntV0(value: ["id": i, "name": "n\(i)"])) } }
        }
        let v1 = migrationConfig(dir, [KeyedIntV1.self], 1)
        try withRealm(v1) { r in
            #expect(r.schema["KeyedInt"]?.primaryKeyProperty == nil)
            try r.write { r.add(KeyedIntV1(value: ["id": 2, "name": "n4"])) }
            #expect(r.objects(KeyedIntV1.self).filter { $0.id == 2 }.count == 2)
        }
        try expectSound(v1, version: 1)
        let v2 = migrationConfig(dir, [KeyedIntV2.self], 2) { m, _ in
            m.enumerateObjects(ofType: "KeyedInt") { _, new in new!["uid"] = "u-" + (new!["name"] as! String) }
        }
        try withRealm(v2) { r in
            #expect(r.object(ofType: KeyedIntV2.self, forPrimaryKey: "u-n4")?.id == 2)
            #expect(r.objects(KeyedIntV2.self).count == 4)
        }
        try expectSound(v2, version: 2)
    }

    @Test func theKeyChangesType() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [KeyTypeV0.self], 0)) { r in
            try r.write { for i in [5, -3, 1 << 40] { r.add(KeyTypeV0(value: ["id": i, "name": "n\(i)"])) } }
        }
        let config = migrationConfig(dir, [KeyTypeV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "KeyType") { old, new in new!["id"] = "k\(old!["id"] as! Int)" }
        }
        try withRealm(config) { r in
            #expect(r.object(ofType: KeyTypeV1.self, forPrimaryKey: "k-3")?.name == "n-3")
            #expect(r.schema["KeyType"]?["id"]?.typeName == "string")
            #expect(r.schema["KeyType"]?.primaryKeyProperty?.name == "id")
        }
        try expectSound(config, version: 1)
    }
}
