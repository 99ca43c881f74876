import Foundation
import Testing
@testable import RealmDB
import RealmStorage
import TestSupport

/// Migrations of each kind of schema change: renames, lists and links, type and optionality changes, indexes,
/// new and removed classes, objects created and deleted by the block, and refused changes.
@Suite struct MigrationSchemaChangeTests {
    func seedRenames(_ dir: TempDir) throws {
        try withRealm(migrationConfig(dir, [RenOwnerV0.self], 0)) { r in
            try r.write {
                let rex = RenPetV0(value: ["name": "Rex"])
                let tom = RenPetV0(value: ["name": "Tom"])
                r.add(RenOwnerV0(value: ["name": "Ann", "yearsSinceBirth": 30, "friend": rex, "pets": [rex, tom]]))
                r.add(RenOwnerV0(value: ["name": "Bob", "yearsSinceBirth": 41, "pets": [tom]]))
            }
        }
    }

    @Test func renamePropertyKeepsValuesIndexesLinksAndBacklinks() throws {
        let dir = TempDir()
        try seedRenames(dir)
        let config = migrationConfig(dir, [RenOwnerV1.self], 1) { m, v in
            if v < 1 {
                m.renameProperty(onType: "RenOwner", from: "yearsSinceBirth", to: "age")
                m.renameProperty(onType: "RenOwner", from: "friend", to: "buddy")
                m.renameProperty(onType: "RenOwner", from: "pets", to: "animals")
            }
        }
        try withRealm(config) { r in
            let owners = r.objects(RenOwnerV1.self).sorted(byKeyPath: "name")
            #expect(owners.map(\.age) == [30, 41])
            #expect(owners.map { $0.buddy?.name } == ["Rex", nil])
            #expect(owners.map { Array($0.animals.map(\.name)) } == [["Rex", "Tom"], ["Tom"]])
            let tom = try #require(r.objects(RenPetV1.self).first { $0.name == "Tom" })
            #expect(Set(tom.keepers.map(\.name)) == ["Ann", "Bob"])
            let s = try #require(r.schema["RenOwner"])
            #expect(s["age"]?.isIndexed == true)
            #expect(s["yearsSinceBirth"] == nil && s["friend"] == nil && s["pets"] == nil)
            #expect(r.schema["RenPet"]?["keepers"]?.linkOriginPropertyName == "animals")
            // The index answers for the renamed property.
            let info = try #require(try r.rlm.info(for: RenOwnerV1.self))
            let age = info.properties[info.index(of: "age")!].handle
            #expect(try r.rlm.reader.find(age, equalTo: .int(41)).count == 1)
        }
        try expectSound(config, version: 1)
    }

    @Test func renameAppliesTheNewOptionalityAndIndex() throws {
        let dir = TempDir()
        try seedRenames(dir)
        let config = migrationConfig(dir, [RenOwnerV2.self], 2) { m, _ in
            m.renameProperty(onType: "RenOwner", from: "yearsSinceBirth", to: "age")
            m.renameProperty(onType: "RenOwner", from: "friend", to: "buddy")
            m.renameProperty(onType: "RenOwner", from: "pets", to: "animals")
        }
        try withRealm(config) { r in
            #expect(r.objects(RenOwnerV2.self).sorted(byKeyPath: "name").map(\.age) == [30, 41])
            let s = try #require(r.schema["RenOwner"])
            #expect(s["age"]?.typeName == "int?")
            #expect(s["age"]?.isIndexed == false)
            try r.write { r.objects(RenOwnerV2.self).first!.age = nil }
        }
        try expectSound(config, version: 2)
    }

    @Test func enumerateObjectsSeesOldAndNewListsAndLinks() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [MigOwnerV0.self], 0)) { r in
            try r.write {
                let a = MigDogV0(value: ["name": "A"])
                let b = MigDogV0(value: ["name": "B"])
                r.add(MigOwnerV0(value: ["name": "Ann", "dogs": [a, b], "best": b, "tags": ["x", "y"], "tag": "solo"]))
                r.add(MigOwnerV0(value: ["name": "Bob"]))
            }
        }
        var seen: [String] = []
        let config = migrationConfig(dir, [MigOwnerV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "MigOwner") { old, new in
                guard let old, let new else { Issue.record("both objects expected"); return }
                let dogs = old["dogs"] as! [DynamicObject]
                let best = old["best"] as? DynamicObject
                let tags = old["tags"] as! [String]
                let tag = old["tag"] as! String
                seen.append("\(old["name"] as! String):\(dogs.map { $0["name"] as! String }):\(best?["name"] as? String ?? "-"):\(tags):\(tag)")
                // The new object: the changed `tag` starts empty, unchanged lists and links keep their values.
                #expect((new["tag"] as! [String]).isEmpty)
                #expect((new["dogs"] as! [DynamicObject]).count == dogs.count)
                #expect((new["best"] as? DynamicObject)?["name"] as? String == best?["name"] as? String)
                new["tag"] = (tag.isEmpty ? [] : [tag]) + tags
                new["dogCount"] = dogs.count
                new["bestName"] = best?["name"] as? String ?? ""
            }
        }
        try withRealm(config) { r in
            let owners = r.objects(MigOwnerV1.self).sorted(byKeyPath: "name")
            #expect(owners.map { Array($0.tag) } == [["solo", "x", "y"], []])
            #expect(owners.map(\.dogCount) == [2, 0])
            #expect(owners.map(\.bestName) == ["B", ""])
            #expect(owners.first?.dogs.map(\.name) == ["A", "B"])
            #expect(owners.first?.best?.name == "B")
            #expect(r.schema["MigOwner"]?["tags"] == nil)
        }
        #expect(seen.sorted() == ["Ann:[\"A\", \"B\"]:B:[\"x\", \"y\"]:solo", "Bob:[]:-:[]:"])
        try expectSound(config, version: 1)
    }

    @Test func typeChangeIsConvertedByTheBlockAndOptionalityChangesAreAutomatic() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [ChangeV0.self], 0)) { r in
            try r.write {
                r.add(ChangeV0(value: ["code": 7, "label": "a", "scores": [1, NSNull(), 3]]))
                r.add(ChangeV0(value: ["code": 8, "count": 5, "label": ""]))
            }
        }
        let config = migrationConfig(dir, [ChangeV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "Change") { old, new in
                #expect(new!["code"] as? String == "")
                new!["code"] = "#\(old!["code"] as! Int)"
            }
        }
        try withRealm(config) { r in
            let all = r.objects(ChangeV1.self).sorted(byKeyPath: "code")
            #expect(all.map(\.code) == ["#7", "#8"])
            #expect(all.map(\.count) == [0, 5])  // null becomes the type's default
            #expect(all.map(\.label) == ["a", ""])
            // Nulls in a list that becomes required become the default too: positions are kept.
            #expect(all.map { Array($0.scores) } == [[1, 0, 3], []])
            #expect(r.schema["Change"]?["code"]?.typeName == "string")
            #expect(r.schema["Change"]?["label"]?.typeName == "string?")
        }
        try expectSound(config, version: 1)
    }

    @Test func oldObjectsLinkToOldObjects() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [LinkerV0.self], 0)) { r in
            try r.write {
                let a = ChangeV0(value: ["code": 7]), b = ChangeV0(value: ["code": 8])
                r.add(LinkerV0(value: ["target": a, "targets": [a, b]]))
            }
        }
        let config = migrationConfig(dir, [LinkerV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "Change") { old, new in new!["code"] = "#\(old!["code"] as! Int)" }
            m.enumerateObjects(ofType: "Linker") { old, new in
                let one = (old!["target"] as? DynamicObject)?["code"]
                let all = (old!["targets"] as! [DynamicObject]).map { $0["code"] }
                new!["codes"] = "\(one as? Int ?? -1) \(all.map { $0 as? Int ?? -1 })"
                // The new object's links lead to new objects.
                #expect((new!["target"] as? DynamicObject)?["code"] as? String == "#7")
            }
        }
        try withRealm(config) { r in #expect(r.objects(LinkerV1.self).first?.codes == "7 [7, 8]") }
        try expectSound(config, version: 1)
    }

    @Test func indexChangesNeedNoVersionBump() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [IdxV0.self], 0)) { r in
            try r.write { for i in 0..<50 { r.add(IdxV0(value: ["name": "n\(i)", "city": "c\(i % 5)"])) } }
        }
        try withRealm(migrationConfig(dir, [IdxV1.self], 0)) { r in
            #expect(r.schema["Idx"]?["name"]?.isIndexed == true)
            #expect(r.schema["Idx"]?["city"]?.isIndexed == false)
            let info = try #require(try r.rlm.info(for: IdxV1.self))
            #expect(try r.rlm.reader.find(info.properties[0].handle, equalTo: .string("n7")).count == 1)
            try r.write { r.add(IdxV1(value: ["name": "n7", "city": "x"])) }
            #expect(try r.rlm.reader.find(info.properties[0].handle, equalTo: .string("n7")).count == 2)
        }
        try expectSound(migrationConfig(dir, [IdxV1.self], 0), version: 0)
        try withRealm(migrationConfig(dir, [IdxV0.self], 0)) { r in
            #expect(r.schema["Idx"]?["city"]?.isIndexed == true)
            #expect(r.objects(IdxV0.self).count == 51)
        }
        try expectSound(migrationConfig(dir, [IdxV0.self], 0), version: 0)
    }

    @Test func anIndexedPropertyChangesType() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [IdxV0.self], 0)) { r in
            try r.write { for i in 0..<40 { r.add(IdxV0(value: ["name": "n\(i)", "city": "c\(i % 4)"])) } }
        }
        let config = migrationConfig(dir, [IdxV2.self], 1) { m, _ in
            m.enumerateObjects(ofType: "Idx") { old, new in new!["city"] = Int((old!["city"] as! String).dropFirst())! }
        }
        try withRealm(config) { r in
            #expect(r.schema["Idx"]?["city"]?.typeName == "int")
            #expect(r.schema["Idx"]?["city"]?.isIndexed == true)
            let info = try #require(try r.rlm.info(for: IdxV2.self))
            #expect(try r.rlm.reader.find(info.properties[info.index(of: "city")!].handle, equalTo: .int(3)).count == 10)
        }
        try expectSound(config, version: 1)
    }

    @Test func aNewClassNeedsNoVersionBump() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [KeptV0.self], 0)) { r in try r.write { r.add(KeptV0(value: ["x": 1])) } }
        let config = migrationConfig(dir, [KeptV0.self, Extra.self], 0)
        try withRealm(config) { r in
            #expect(r.objects(Extra.self).isEmpty)
            try r.write { r.add(Extra(value: ["note": "hi"])) }
            #expect(r.objects(KeptV0.self).count == 1)
        }
        try expectSound(config, version: 0)
    }

    @Test func aNewClassLinkedBothWaysInTheSameMigration() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [ToyOwnerV0.self], 0)) { r in
            try r.write { for n in ["Ann", "Bob"] { r.add(ToyOwnerV0(value: ["name": n])) } }
        }
        let config = migrationConfig(dir, [ToyOwnerV1.self, Toy.self], 1) { m, _ in
            #expect(m.oldSchema["Toy"] == nil && m.newSchema["Toy"]?["owners"] != nil)
            #expect(m.oldSchema["ToyOwner"]?["toys"] == nil)
            m.enumerateObjects(ofType: "ToyOwner") { old, new in
                new!["toys"] = [m.create("Toy", value: ["label": "ball of \(old!["name"] as! String)"])]
            }
        }
        try withRealm(config) { r in
            #expect(r.objects(Toy.self).count == 2)
            #expect(Set(r.objects(Toy.self).map { $0.owners.first?.name ?? "-" }) == ["Ann", "Bob"])
            #expect(r.objects(ToyOwnerV1.self).allSatisfy { $0.toys.first?.label == "ball of \($0.name)" })
        }
        try expectSound(config, version: 1)
    }

    @Test func deleteDataRemovesAClassGoneFromTheModels() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [KeptV0.self, GoneV0.self], 0)) { r in
            try r.write {
                r.add(KeptV0(value: ["x": 1]))
                for i in 0..<3 { r.add(GoneV0(value: ["x": i])) }
            }
        }
        var olds: [Int] = []
        var news = 0
        let config = migrationConfig(dir, [KeptV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "Gone") { old, new in
                olds.append(old!["x"] as! Int)
                if new != nil { news += 1 }
            }
            #expect(m.deleteData(forType: "Gone"))
            #expect(!m.deleteData(forType: "NeverExisted"))
            m.enumerateObjects(ofType: "Gone") { _, _ in Issue.record("deleted data is not enumerated") }
        }
        try withRealm(config) { r in
            #expect(r.schema["Gone"] == nil)
            #expect(r.objects(KeptV1.self).map(\.x) == [1])
        }
        #expect(olds.sorted() == [0, 1, 2])
        #expect(news == 0, "a class the models no longer have has no new object")
        try expectSound(config, version: 1)
    }

    @Test func deleteDataOfAKeptClassEmptiesIt() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [KeptV0.self], 0)) { r in
            try r.write { for i in 0..<3 { r.add(KeptV0(value: ["x": i])) } }
        }
        let config = migrationConfig(dir, [KeptV1.self], 1) { m, _ in
            m.deleteData(forType: "Kept")
            m.create("Kept", value: ["x": 9, "y": 10])
        }
        try withRealm(config) { r in
            #expect(r.objects(KeptV1.self).map { [$0.x, $0.y] } == [[9, 10]])
            #expect(r.schema["Kept"]?["y"] != nil)
        }
        try expectSound(config, version: 1)
    }

    @Test func deleteDataOfALinkedClassClearsTheLinks() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [MigOwnerV0.self], 0)) { r in
            try r.write {
                let a = MigDogV0(value: ["name": "A"])
                r.add(MigOwnerV0(value: ["name": "Ann", "dogs": [a, MigDogV0(value: ["name": "B"])], "best": a]))
            }
        }
        let config = migrationConfig(dir, [MigOwnerV1.self], 1) { m, _ in
            #expect(m.deleteData(forType: "MigDog"))
            m.enumerateObjects(ofType: "MigOwner") { _, new in
                #expect((new!["dogs"] as! [DynamicObject]).isEmpty)
                #expect(new!["best"] == nil)
            }
            m.create("MigDog", value: ["name": "C"])
        }
        try withRealm(config) { r in
            let ann = try #require(r.objects(MigOwnerV1.self).first)
            #expect(ann.dogs.isEmpty && ann.best == nil)
            #expect(r.objects(MigDogV1.self).map(\.name) == ["C"])
        }
        try expectSound(config, version: 1)
    }

    @Test func aClassGoneFromTheModelsStaysWithoutDeleteData() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [KeptV0.self, GoneV0.self], 0)) { r in
            try r.write { r.add(GoneV0(value: ["x": 5])) }
        }
        let config = migrationConfig(dir, [KeptV1.self], 1)
        try withRealm(config) { r in
            #expect(r.dynamicObjects("Gone").map { $0["x"] as! Int } == [5])
        }
        try expectSound(config, version: 1)
    }

    @Test func createAndDeleteInTheBlock() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [SeedPersonV0.self], 0)) { r in
            try r.write {
                for (f, a) in [("Old", 90), ("Young", 9), ("Mid", 40)] {
                    r.add(SeedPersonV0(value: ["firstName": f, "lastName": "X", "age": a]))
                }
            }
        }
        let config = migrationConfig(dir, [SeedPersonV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "SeedPerson") { old, new in
                if (old!["age"] as! Int) < 18 {
                    m.delete(new!)
                } else {
                    new!["fullName"] = old!["firstName"] as! String
                }
            }
            let created = m.create("SeedPerson", value: ["fullName": "Created", "age": 1])
            #expect(created["fullName"] as? String == "Created")
            var count = 0
            m.enumerateObjects(ofType: "SeedPerson") { _, _ in count += 1 }
            #expect(count == 2, "objects created in the migration are not old objects")
        }
        try withRealm(config) { r in
            #expect(Set(r.objects(SeedPersonV1.self).map(\.fullName)) == ["Old", "Mid", "Created"])
        }
        try expectSound(config, version: 1)
    }

    @Test func aChangeTheEngineRefusesLeavesTheFileAsItWas() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [KeptV0.self], 0)) { r in try r.write { r.add(KeptV0(value: ["x": 3])) } }
        var ran = false
        do {
            _ = try Realm(configuration: migrationConfig(dir, [TooLongV1.self], 1) { _, _ in ran = true })
            Issue.record("expected an error")
        } catch let e as RealmError {
            #expect(e.description.contains("aPropertyNameThatIsFarTooLong"), "\(e)")
            #expect(e.description.contains("63 bytes"), "\(e)")
        }
        #expect(!ran)
        #expect(try schemaVersionAtURL(URL(fileURLWithPath: dir.file("test.realm"))) == 0)
        try withRealm(migrationConfig(dir, [KeptV0.self], 0)) { r in #expect(r.objects(KeptV0.self).map(\.x) == [3]) }
        try expectSound(migrationConfig(dir, [KeptV0.self], 0), version: 0)
    }
}

@Suite struct MigrationMoreTests {
    @Test func aListOfLinksBecomesALinkAndItsBacklinksFollow() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [ShapeOwnerV0.self], 0)) { r in
            try r.write {
                let a = ShapeDogV0(value: ["name": "A"])
                r.add(ShapeOwnerV0(value: ["name": "Ann", "nickname": "an", "dogs": [a, ShapeDogV0(value: ["name": "B"])]]))
                r.add(ShapeOwnerV0(value: ["name": "Bob", "dogs": [a]]))
            }
        }
        let config = migrationConfig(dir, [ShapeOwnerV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "ShapeOwner") { old, new in
                new!["dogs"] = (old!["dogs"] as! [DynamicObject]).last
            }
        }
        try withRealm(config) { r in
            let owners = r.objects(ShapeOwnerV1.self).sorted(byKeyPath: "name")
            #expect(owners.map { $0.dogs?.name } == ["B", "A"])
            let a = try #require(r.objects(ShapeDogV1.self).first { $0.name == "A" })
            #expect(a.owners.map(\.name) == ["Bob"])
            #expect(r.schema["ShapeOwner"]?["nickname"] == nil)
            #expect(r.schema["ShapeOwner"]?["dogs"]?.typeName == "ShapeDog?")
        }
        try expectSound(config, version: 1)
    }

    /// The seeds' warning: a property removed in v2 and added again in v3 keeps its v1 values for a user who
    /// jumps from v1 to v3, unless the block resets it under `if oldSchemaVersion < 3`.
    @Test func aPropertyRemovedAndAddedAgainKeepsItsValuesWhenVersionsAreSkipped() throws {
        for (stepByStep, reset) in [(false, false), (false, true), (true, false)] {
            let dir = TempDir()
            try withRealm(migrationConfig(dir, [SeedPersonV2.self], 1)) { r in
                try r.write { r.add(SeedPersonV2(value: ["fullName": "Tim", "email": "tim@v1", "age": 1])) }
            }
            if stepByStep { try withRealm(migrationConfig(dir, [SeedPersonV1.self], 2)) { _ in } }
            let config = migrationConfig(dir, [SeedPersonV2.self], 3) { m, v in
                if reset && v < 3 { m.enumerateObjects(ofType: "SeedPerson") { _, new in new!["email"] = "" } }
            }
            try withRealm(config) { r in
                #expect(r.objects(SeedPersonV2.self).first?.email == (stepByStep || reset ? "" : "tim@v1"))
            }
            try expectSound(config, version: 3)
        }
    }

    @Test func deleteRealmIfMigrationNeededDeletesInsteadOfMigrating() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [KeyedV0.self], 0)) { r in
            try r.write { for _ in 0..<2 { r.add(KeyedV0(value: ["code": "same"])) } }
        }
        // Even with a higher version: realm-swift deletes whenever a migration would be needed.
        var config = migrationConfig(dir, [KeyedV1.self], 1)
        config.deleteRealmIfMigrationNeeded = true
        try withRealm(config) { r in #expect(r.objects(KeyedV1.self).isEmpty) }
        try expectSound(config, version: 1)
        // A version bump without schema changes needs no migration: the data stays.
        try withRealm(config) { r in try r.write { r.add(KeyedV1(value: ["code": "kept"])) } }
        var bumped = migrationConfig(dir, [KeyedV1.self], 2)
        bumped.deleteRealmIfMigrationNeeded = true
        try withRealm(bumped) { r in #expect(r.objects(KeyedV1.self).map(\.code) == ["kept"]) }
        try expectSound(bumped, version: 2)
        // And a migration block cannot be combined with it.
        var both = migrationConfig(dir, [KeyedV1.self], 3) { _, _ in }
        both.deleteRealmIfMigrationNeeded = true
        #expect(throws: RealmError.self) { _ = try Realm(configuration: both) }
    }

    @Test func manyObjectsMigrateInOneTransaction() throws {
        let dir = TempDir()
        try withRealm(migrationConfig(dir, [BulkV0.self], 0)) { r in
            try r.write { for i in 0..<3000 { r.add(BulkV0(value: ["n": i, "s": "s\(i)", "tag": "t\(i % 7)"])) } }
        }
        let config = migrationConfig(dir, [BulkV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "Bulk") { old, new in
                new!["n"] = String(old!["n"] as! Int)
                if (old!["n"] as! Int) % 2 == 0 { new!["s"] = nil }
                new!["extra"] = Double(old!["n"] as! Int) / 2
            }
        }
        try withRealm(config) { r in
            let all = r.objects(BulkV1.self)
            #expect(all.count == 3000)
            #expect(all.filter { $0.s == nil }.count == 1500)
            #expect(all.filter { $0.n == "2999" }.first?.extra == 1499.5)
            #expect(all.filter { $0.tag == "t3" }.count == 429)
        }
        try expectSound(config, version: 1)
    }
}
