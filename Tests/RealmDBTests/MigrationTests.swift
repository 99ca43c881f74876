import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// A configuration for a migration test: the file `test.realm` in `dir`, the given models and version.
func migrationConfig(_ dir: TempDir, _ types: [Object.Type], _ version: UInt64,
                     _ block: Realm.MigrationBlock? = nil) -> Realm.Configuration {
    var c = fileConfig(dir, types, schemaVersion: version)
    c.migrationBlock = block
    return c
}

/// Opens the Realm, runs `body` and closes it again (so that the next open migrates).
func withRealm<T>(_ config: Realm.Configuration, _ body: (Realm) throws -> T) throws -> T {
    let realm = try Realm(configuration: config)
    return try body(realm)
}

/// The engine finds no problem in the file, it reopens with `config`, and its schema version is `version`.
func expectSound(_ config: Realm.Configuration, version: UInt64, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try withRealm(config) { realm in
        let report = try realm.rlm.database.verify()
        #expect(report.isOK, "\(report)", sourceLocation: sourceLocation)
        #expect(realm.rlm.reader.schemaVersion == version, sourceLocation: sourceLocation)
    }
    #expect(try schemaVersionAtURL(config.fileURL!) == version, sourceLocation: sourceLocation)
}

/// The seeds' linear migration block (realm-objc-docs, "Linear Migrations"): every step guarded by a
/// non-nested `if oldSchemaVersion < X`.
func seedMigration(_ migration: Migration, _ oldSchemaVersion: UInt64) {
    migration.enumerateObjects(ofType: SeedPersonV2.className()) { oldObject, newObject in
        // Add the 'fullName' property only to Realms with a schema version of 0
        if oldSchemaVersion < 1 {
            let firstName = oldObject!["firstName"] as! String
            let lastName = oldObject!["lastName"] as! String
            newObject!["fullName"] = "\(firstName) \(lastName)"
        }
        // Add the 'email' property to Realms with a schema version of 0 or 1
        if oldSchemaVersion < 2 {
            newObject!["email"] = ""
        }
    }
}

@Suite struct MigrationTests {
    /// Writes the seeds' two v0 people.
    func seedV0(_ dir: TempDir) throws {
        try withRealm(migrationConfig(dir, [SeedPersonV0.self], 0)) { r in
            try r.write {
                r.add(SeedPersonV0(value: ["firstName": "John", "lastName": "Smith", "age": 30]))
                r.add(SeedPersonV0(value: ["firstName": "Jane", "lastName": "Doe", "age": 25]))
            }
        }
    }

    /// A migration whose `enumerateObjects` cannot read the objects (a damaged node) fails with the corrupt
    /// error, leaving the file as it was, instead of committing with objects the block never saw.
    @Test func migrationOfADamagedClassFailsInsteadOfSkippingItsObjects() throws {
        let dir = TempDir()
        let v0 = migrationConfig(dir, [SeedPersonV0.self], 0)
        try withRealm(v0) { r in
            try r.write {
                for i in 0..<300 { r.add(SeedPersonV0(value: ["firstName": "p\(i)", "lastName": "L", "age": i])) }
            }
            // A later commit leaves the first cluster (objects 0..<256) as it was, so the damage below is in
            // an older commit's node.
            try r.write { r.add(SeedPersonV0(value: ["firstName": "q", "lastName": "L", "age": 1])) }
        }
        let path = dir.file("test.realm")
        var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        let marker = Array("p17".utf8)
        // The cluster (node type 2) holding "p17".
        let page = try #require((2..<bytes.count / 4096).first { p in
            let o = p * 4096
            let length = Int(bytes[o + 4]) | Int(bytes[o + 5]) << 8 | Int(bytes[o + 6]) << 16
            guard bytes[o] == 2, length > 16, o + length <= bytes.count else { return false }
            return (o..<o + length - marker.count).contains { bytes[$0..<$0 + marker.count].elementsEqual(marker) }
        })
        bytes[page * 4096 + 200] ^= 0x5A
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let v1 = migrationConfig(dir, [SeedPersonV1.self], 1) { migration, _ in
            migration.enumerateObjects(ofType: "SeedPerson") { _, new in
                new!["fullName"] = "migrated"
            }
        }
        #expect(throws: RealmError.self) { try Realm(configuration: v1) }
        #expect(try schemaVersionAtURL(v1.fileURL!) == 0)
    }

    @Test func seedsMinimalMigrationAddsAndRemovesPropertiesAutomatically() throws {
        let dir = TempDir()
        try seedV0(dir)
        var calls: [UInt64] = []
        let config = migrationConfig(dir, [SeedPersonV1.self], 1) { _, oldSchemaVersion in
            // Nothing to do! Realm detects new and removed properties and updates the schema on disk.
            calls.append(oldSchemaVersion)
        }
        try withRealm(config) { r in
            #expect(calls == [0])
            let people = r.objects(SeedPersonV1.self).sorted(byKeyPath: "age")
            #expect(people.map(\.fullName) == ["", ""])
            #expect(people.map(\.age) == [25, 30])
            #expect(r.schema["SeedPerson"]?["firstName"] == nil)
            #expect(r.schema["SeedPerson"]?["fullName"]?.typeName == "string")
        }
        try expectSound(config, version: 1)
        #expect(calls == [0], "a file at the configured version is not migrated again")
    }

    @Test func seedsFirstNameLastNameToFullName() throws {
        let dir = TempDir()
        try seedV0(dir)
        let config = migrationConfig(dir, [SeedPersonV1.self], 1) { migration, oldSchemaVersion in
            if oldSchemaVersion < 1 {
                migration.enumerateObjects(ofType: SeedPersonV1.className()) { oldObject, newObject in
                    let firstName = oldObject!["firstName"] as! String
                    let lastName = oldObject!["lastName"] as! String
                    newObject!["fullName"] = "\(firstName) \(lastName)"
                }
            }
        }
        try withRealm(config) { r in
            let names = Set(r.objects(SeedPersonV1.self).map(\.fullName))
            #expect(names == ["John Smith", "Jane Doe"])
        }
        try expectSound(config, version: 1)
    }

    @Test func seedsLinearMigrationFromZeroStraightToTwo() throws {
        let dir = TempDir()
        try seedV0(dir)
        var versions: [UInt64] = []
        let config = migrationConfig(dir, [SeedPersonV2.self], 2) { m, v in
            versions.append(v)
            seedMigration(m, v)
        }
        try withRealm(config) { r in
            let people = r.objects(SeedPersonV2.self).sorted(byKeyPath: "age")
            #expect(people.map(\.fullName) == ["Jane Doe", "John Smith"])
            #expect(people.map(\.email) == ["", ""])
            #expect(people.map(\.age) == [25, 30])
            #expect(Set(r.schema["SeedPerson"]!.properties.map(\.name)) == ["fullName", "email", "age"])
        }
        #expect(versions == [0])
        try expectSound(config, version: 2)
    }

    @Test func seedsLinearMigrationStepByStep() throws {
        let dir = TempDir()
        try seedV0(dir)
        var versions: [UInt64] = []
        // JP updates every time: 0 → 1 with the v1 app (its block has the first step only), then 1 → 2
        // with the v2 app and the seeds' full block.
        let v1Block: Realm.MigrationBlock = { m, v in
            versions.append(v)
            if v < 1 {
                m.enumerateObjects(ofType: "SeedPerson") { old, new in
                    new!["fullName"] = "\(old!["firstName"] as! String) \(old!["lastName"] as! String)"
                }
            }
        }
        let block: Realm.MigrationBlock = { m, v in
            versions.append(v)
            seedMigration(m, v)
        }
        try withRealm(migrationConfig(dir, [SeedPersonV1.self], 1, v1Block)) { r in
            #expect(Set(r.objects(SeedPersonV1.self).map(\.fullName)) == ["John Smith", "Jane Doe"])
            try r.write { r.add(SeedPersonV1(value: ["fullName": "Tim Added", "age": 40])) }
        }
        try expectSound(migrationConfig(dir, [SeedPersonV1.self], 1, v1Block), version: 1)
        let config = migrationConfig(dir, [SeedPersonV2.self], 2, block)
        try withRealm(config) { r in
            let people = r.objects(SeedPersonV2.self).sorted(byKeyPath: "age")
            #expect(people.map(\.fullName) == ["Jane Doe", "John Smith", "Tim Added"])
            #expect(people.map(\.email) == ["", "", ""])
        }
        #expect(versions == [0, 1])
        try expectSound(config, version: 2)
    }

    @Test func openingChangedModelsWithoutAHigherVersionNamesTheDifferences() throws {
        let dir = TempDir()
        try seedV0(dir)
        do {
            _ = try Realm(configuration: migrationConfig(dir, [SeedPersonV2.self], 0))
            Issue.record("expected a schema mismatch")
        } catch let e as RealmError {
            guard case .schemaMismatch(let path, let diffs) = e else { Issue.record("\(e)"); return }
            #expect(path.hasSuffix("test.realm"))
            #expect(diffs.contains { $0.contains("'SeedPerson.fullName'") && $0.contains("string") && $0.contains("added") }, "\(diffs)")
            #expect(diffs.contains { $0.contains("'SeedPerson.email'") && $0.contains("added") }, "\(diffs)")
            #expect(diffs.contains { $0.contains("'SeedPerson.firstName'") && $0.contains("(string)") && $0.contains("removed") }, "\(diffs)")
            #expect(diffs.contains { $0.contains("'SeedPerson.lastName'") && $0.contains("removed") }, "\(diffs)")
            #expect(e.description.contains("schemaVersion"))
        }
        // Nothing changed: the v0 models still open the file.
        try withRealm(migrationConfig(dir, [SeedPersonV0.self], 0)) { r in
            #expect(r.objects(SeedPersonV0.self).count == 2)
        }
        try expectSound(migrationConfig(dir, [SeedPersonV0.self], 0), version: 0)
    }

    @Test func typeChangesAreNamedWithOldAndNewTypes() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [ChangeV0.self], 0)) { r in
            try r.write { r.add(ChangeV0(value: ["code": 1])) }
        }
        do {
            _ = try Realm(configuration: migrationConfig(dir, [ChangeV1.self], 0))
            Issue.record("expected a schema mismatch")
        } catch let e as RealmError {
            guard case .schemaMismatch(_, let diffs) = e else { Issue.record("\(e)"); return }
            #expect(diffs.contains { $0.contains("'Change.code'") && $0.contains("from int to string") }, "\(diffs)")
            #expect(diffs.contains { $0.contains("'Change.count'") && $0.contains("from int? to int") }, "\(diffs)")
            #expect(diffs.contains { $0.contains("'Change.label'") && $0.contains("from string to string?") }, "\(diffs)")
            #expect(diffs.contains { $0.contains("'Change.scores'") && $0.contains("from [int?] to [int]") }, "\(diffs)")
            #expect(diffs.count == 4, "\(diffs)")
        }
    }

    @Test func lowerSchemaVersionThanTheFileIsAClearError() throws {
        let dir = TempDir()
        try seedV0(dir)
        try withRealm(migrationConfig(dir, [SeedPersonV1.self], 3)) { _ in }
        do {
            _ = try Realm(configuration: migrationConfig(dir, [SeedPersonV1.self], 2))
            Issue.record("expected an error")
        } catch let e as RealmError {
            #expect(e == .schemaVersionDecreased(path: dir.file("test.realm"), fileVersion: 3, configured: 2))
            #expect(e.description.contains("3") && e.description.contains("2") && e.description.contains("test.realm"), "\(e)")
        }
        try expectSound(migrationConfig(dir, [SeedPersonV1.self], 3), version: 3)
    }

    @Test func readOnlyOpenOfAFileNeedingAMigrationIsAClearError() throws {
        let dir = TempDir()
        try seedV0(dir)
        var config = migrationConfig(dir, [SeedPersonV1.self], 1) { _, _ in Issue.record("no migration when read-only") }
        config.readOnly = true
        do {
            _ = try Realm(configuration: config)
            Issue.record("expected an error")
        } catch let e as RealmError {
            guard case .schemaMismatch(_, let diffs) = e else { Issue.record("\(e)"); return }
            #expect(e.description.contains("read-only"), "\(e)")
            #expect(diffs.contains { $0.contains("'SeedPerson.fullName'") }, "\(diffs)")
        }
        // A version bump alone (same models) also needs a write, which a read-only Realm cannot do.
        var sameModels = migrationConfig(dir, [SeedPersonV0.self], 1)
        sameModels.readOnly = true
        #expect(throws: RealmError.self) { _ = try Realm(configuration: sameModels) }
        try expectSound(migrationConfig(dir, [SeedPersonV0.self], 0), version: 0)
    }

    @Test func versionBumpWithoutSchemaChangesRunsTheBlock() throws {
        let dir = TempDir()
        try seedV0(dir)
        var ran = false
        let config = migrationConfig(dir, [SeedPersonV0.self], 5) { m, v in
            ran = true
            #expect(v == 0)
            m.enumerateObjects(ofType: "SeedPerson") { _, new in new!["age"] = (new!["age"] as! Int) + 1 }
        }
        try withRealm(config) { r in
            #expect(ran)
            #expect(Set(r.objects(SeedPersonV0.self).map(\.age)) == [26, 31])
        }
        try expectSound(config, version: 5)
    }

    @Test func deleteRealmIfMigrationNeededStartsOverOnlyWhenNeeded() throws {
        let dir = TempDir()
        try seedV0(dir)
        var same = migrationConfig(dir, [SeedPersonV0.self], 0)
        same.deleteRealmIfMigrationNeeded = true
        try withRealm(same) { r in #expect(r.objects(SeedPersonV0.self).count == 2) }
        var changed = migrationConfig(dir, [SeedPersonV1.self], 0)
        changed.deleteRealmIfMigrationNeeded = true
        try withRealm(changed) { r in
            #expect(r.objects(SeedPersonV1.self).isEmpty)
            #expect(r.schema["SeedPerson"]?["firstName"] == nil)
        }
        try expectSound(changed, version: 0)
    }
}

/// Migrations while the file is in use in this process.
@Suite struct MigrationConcurrencyTests {
    @Test func openingWithAnotherVersionWhileTheFileIsOpenIsAClearError() throws {
        let dir = TempDir()
        let r0 = try Realm(configuration: migrationConfig(dir, [SeedPersonV0.self], 0))
        try r0.write { r0.add(SeedPersonV0(value: ["firstName": "A", "lastName": "B", "age": 1])) }
        do {
            _ = try Realm(configuration: migrationConfig(dir, [SeedPersonV1.self], 1))
            Issue.record("expected an error: the file is open with schema version 0")
        } catch let e as RealmError {
            #expect(e.description.contains("schemaVersion 0") && e.description.contains("test.realm"), "\(e)")
        }
        #expect(r0.objects(SeedPersonV0.self).first?.firstName == "A")
        // The same version from another thread is fine.
        let config = migrationConfig(dir, [SeedPersonV0.self], 0)
        let done = DispatchSemaphore(value: 0)
        let counted = Counter()
        Thread {
            if (try? Realm(configuration: config).objects(SeedPersonV0.self).count) == 1 { counted.add() }
            done.signal()
        }.start()
        done.wait()
        #expect(counted.value == 1)
    }

    @Test func twoThreadsOpeningTheNewVersionTogetherMigrateOnce() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [SeedPersonV0.self], 0)) { r in
            try r.write { r.add(SeedPersonV0(value: ["firstName": "A", "lastName": "B", "age": 1])) }
        }
        let calls = Counter()
        let inMigration = DispatchSemaphore(value: 0)
        let config = migrationConfig(dir, [SeedPersonV1.self], 1) { m, v in
            calls.add()
            inMigration.signal()
            Thread.sleep(forTimeInterval: 0.3)
            seedFirstStep(m, v)
        }
        let results = ResultBox()
        let group = DispatchGroup()
        group.enter()
        Thread {
            results.set(0, Result { try Realm(configuration: config).objects(SeedPersonV1.self).first?.fullName })
            group.leave()
        }.start()
        inMigration.wait()
        group.enter()
        Thread {
            // Opens while the first thread migrates: it must wait and then find nothing left to do.
            results.set(1, Result { try Realm(configuration: config).objects(SeedPersonV1.self).first?.fullName })
            group.leave()
        }.start()
        group.wait()
        #expect(calls.value == 1)
        for i in 0..<2 {
            switch results.get(i) {
            case .success(let name): #expect(name == "A B")
            case .failure(let e): Issue.record("thread \(i): \(e)")
            case nil: Issue.record("thread \(i) gave no result")
            }
        }
        try expectSound(config, version: 1)
    }
}

func seedFirstStep(_ m: Migration, _ v: UInt64) {
    if v < 1 {
        m.enumerateObjects(ofType: "SeedPerson") { old, new in
            new!["fullName"] = "\(old!["firstName"] as! String) \(old!["lastName"] as! String)"
        }
    }
}

final class Counter: @unchecked Sendable {
    // Safe: every access holds the lock.
    private let lock = NSLock()
    private var n = 0
    func add() { lock.withLock { n += 1 } }
    var value: Int { lock.withLock { n } }
}

final class ResultBox: @unchecked Sendable {
    // Safe: every access holds the lock.
    private let lock = NSLock()
    private var results: [Int: Result<String?, any Error>] = [:]
    func set(_ i: Int, _ r: Result<String?, any Error>) { lock.withLock { results[i] = r } }
    func get(_ i: Int) -> Result<String?, any Error>? { lock.withLock { results[i] } }
}
