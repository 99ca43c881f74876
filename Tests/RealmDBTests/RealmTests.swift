import Foundation
import Testing
@testable import RealmDB
import TestSupport

struct Boom: Error {}

@Suite struct RealmTests {
    @Test func writeRollsBackWhenTheBlockThrows() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        #expect(throws: Boom.self) {
            try realm.write {
                try realm.tryCreate(Dog.self, value: ["name": "Rex"])
                throw Boom()
            }
        }
        #expect(realm.objects(Dog.self).isEmpty)
        #expect(!realm.isInWriteTransaction)
    }

    @Test func explicitTransactions() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        realm.beginWrite()
        #expect(realm.isInWriteTransaction)
        #expect(throws: RealmError.alreadyInWriteTransaction) { try realm.tryBeginWrite() }
        realm.create(Dog.self, value: ["name": "A"])
        realm.cancelWrite()
        #expect(realm.objects(Dog.self).isEmpty)
        realm.beginWrite()
        realm.create(Dog.self, value: ["name": "B"])
        try realm.commitWrite()
        #expect(realm.objects(Dog.self).map(\.name) == ["B"])
    }

    @Test func writesOutsideATransactionAreErrors() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        #expect(throws: RealmError.self) { try realm.tryAdd(Dog()) }
        #expect(throws: RealmError.self) { try realm.tryCreate(Dog.self) }
        #expect(throws: RealmError.self) { try realm.tryDeleteAll() }
    }

    @Test func sameThreadSameConfigurationSameRealm() throws {
        let config = Realm.Configuration(inMemoryIdentifier: "same-\(UUID())", objectTypes: [Dog.self, Person.self])
        let a = try Realm(configuration: config)
        let b = try Realm(configuration: config)
        #expect(a == b)
    }

    @Test func otherRealmsSeeCommitsAfterRefresh() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let reader = try Realm(configuration: config)
        let count = reader.objects(Dog.self)
        #expect(count.isEmpty)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let writer = try! Realm(configuration: config)
            try! writer.write { writer.create(Dog.self, value: ["name": "Rex"]) }
            done.signal()
        }.start()
        done.wait()
        // Reads stay on their version until refresh.
        #expect(count.isEmpty)
        #expect(reader.refresh())
        #expect(count.count == 1)
    }

    @Test func readOnlyRealms() throws {
        let dir = TempDir()
        var config = fileConfig(dir, [Dog.self, Person.self])
        try {
            let r = try Realm(configuration: config)
            try r.write { r.create(Dog.self, value: ["name": "Rex"]) }
        }()
        config.readOnly = true
        let r = try Realm(configuration: config)
        #expect(r.objects(Dog.self).first?.name == "Rex")
        #expect(throws: RealmError.self) { try r.write {} }
    }

    @Test func badConfigurationsAreClearErrors() throws {
        #expect(throws: RealmError.self) {
            _ = try Realm(configuration: .init(inMemoryIdentifier: "k-\(UUID())", encryptionKey: Data(count: 10), objectTypes: [Dog.self, Person.self]))
        }
        let dir = TempDir()
        let path = dir.file("garbage.realm")
        try Data("this is not a realm file at all, just text".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [Dog.self, Person.self]))
            Issue.record("expected an error")
        } catch let e as RealmError {
            #expect(e.description.contains("garbage.realm"))
        }
    }

    @Test func writeCopyMakesAnOpenableFile() throws {
        let dir = TempDir()
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let url = URL(fileURLWithPath: dir.file("copy.realm"))
        try realm.writeCopy(toFile: url)
        let copy = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self, Person.self]))
        #expect(copy.objects(Dog.self).first?.name == "Rex")
    }

    @Test func dynamicAPI() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write { realm.create(Dog.self, value: ["name": "Rex", "age": 3, "owner": ["id": 4, "name": "Ann"]]) }
        let dogs = realm.dynamicObjects("Dog")
        #expect(dogs.count == 1)
        let d = try #require(dogs.first)
        #expect(d.className == "Dog")
        #expect(d["name"] as? String == "Rex")
        #expect(d["age"] as? Int == 3)
        let owner = try #require(d["owner"] as? DynamicObject)
        #expect(owner["name"] as? String == "Ann")
        let links = try owner.allLinkingObjects()
        #expect(links.count == 1 && links[0].className == "Dog" && links[0].property == "owner")
        try realm.write { try d.setValue(9, forProperty: "age") }
        #expect(realm.objects(Dog.self).first?.age == 9)
        #expect(throws: RealmError.self) { try realm.write { try d.setValue("nine", forProperty: "age") } }
        let p = try #require(realm.dynamicObject(ofType: "Person", forPrimaryKey: 4))
        #expect(p["name"] as? String == "Ann")
        try realm.write { realm.dynamicCreate("Person", value: ["id": 5, "name": "Bo"]) }
        #expect(realm.objects(Person.self).count == 2)
        #expect(realm.dynamicObjects("Dog").sorted(byKeyPath: "owner.name").count == 1)
    }
}

@Suite struct RealmLifecycleTests {
    @Test func defaultConfigurationIsUsedByRealm() throws {
        let dir = TempDir()
        var c = Realm.Configuration.defaultConfiguration
        let saved = c
        c.fileURL = URL(fileURLWithPath: dir.file("default.realm"))
        c.objectTypes = [Dog.self, Person.self]
        Realm.Configuration.defaultConfiguration = c
        defer { Realm.Configuration.defaultConfiguration = saved }
        let realm = try Realm()
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        #expect(FileManager.default.fileExists(atPath: dir.file("default.realm")))
        #expect(realm.configuration.fileURL?.path == dir.file("default.realm"))
    }

    @Test func defaultPathIsDefaultRealmInTheWorkingDirectory() {
        let c = Realm.Configuration()
        #expect(c.resolvedPath == FileManager.default.currentDirectoryPath + "/default.realm")
        var m = Realm.Configuration(fileURL: URL(fileURLWithPath: "/tmp/x.realm"))
        m.inMemoryIdentifier = "mem"
        #expect(m.fileURL == nil && m.resolvedPath == nil)
    }

    @Test func shouldCompactOnLaunchCompacts() throws {
        let dir = TempDir()
        var config = fileConfig(dir, [Dog.self, Person.self])
        try {
            let r = try Realm(configuration: config)
            try r.write {
                for i in 0..<3000 { r.create(Dog.self, value: ["name": String(repeating: "x", count: 200) + "\(i)"]) }
            }
            try r.write { r.delete(r.objects(Dog.self)) }
        }()
        let before = try FileManager.default.attributesOfItem(atPath: dir.file("test.realm"))[.size] as! Int
        nonisolated(unsafe) var asked: (Int, Int)?
        config.shouldCompactOnLaunch = { total, used in
            asked = (total, used)
            return true
        }
        let r = try Realm(configuration: config)
        #expect(r.objects(Dog.self).isEmpty)
        let after = try FileManager.default.attributesOfItem(atPath: dir.file("test.realm"))[.size] as! Int
        #expect(asked != nil)
        #expect(after < before)
    }

    @Test func invalidateReleasesTheVersionAndReadsResume() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let dogs = realm.objects(Dog.self)
        realm.invalidate()
        #expect(dogs.count == 1)
    }

    @Test func touchingADeletedObjectIsAClearFatalError() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: .init(inMemoryIdentifier: "deleted", objectTypes: [Dog.self, Person.self]))
            let dog = try! realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
            try! realm.write { realm.delete(dog) }
            _ = dog.name
        }.map { result in
            let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(stderr.contains("object of class 'Dog' has been deleted or invalidated"))
        }
    }

    @Test func modifyingOutsideAWriteIsAClearFatalError() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: .init(inMemoryIdentifier: "nowrite", objectTypes: [Dog.self, Person.self]))
            let dog = try! realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
            dog.name = "Ace"
        }.map { result in
            let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(stderr.contains("outside a write transaction"))
        }
    }
}

/// The seeds' encryption: a 64-byte key on every open, a wrong key an error.
@Suite struct EncryptedRealmTests {
    @Test func aKeyOpensTheRealmAndAWrongOneDoesNot() throws {
        let dir = TempDir()
        let url = URL(fileURLWithPath: dir.file("enc.realm"))
        var key = Data(count: 64)
        for i in 0..<64 { key[i] = UInt8(i * 3 & 0xFF) }
        var config = Realm.Configuration(fileURL: url, encryptionKey: key, objectTypes: [Dog.self, Person.self])
        try {
            let r = try Realm(configuration: config)
            try r.write { r.create(Dog.self, value: ["name": "秘密の犬 Rex"]) }
        }()
        #expect(try Realm(configuration: config).objects(Dog.self).first?.name == "秘密の犬 Rex")
        let raw = try Data(contentsOf: url)
        #expect(raw.range(of: Data("秘密の犬".utf8)) == nil)
        var wrong = key
        wrong[0] ^= 1
        config.encryptionKey = wrong
        do {
            _ = try Realm(configuration: config)
            Issue.record("a wrong key opened the file")
        } catch let e as RealmError {
            #expect(e.description.contains("invalid key"))
        }
        config.encryptionKey = nil
        do {
            _ = try Realm(configuration: config)
            Issue.record("no key opened the file")
        } catch let e as RealmError {
            #expect(e.description.contains("encrypted"))
        }
        // A decrypted copy opens without a key; a copy with another key needs that key.
        config.encryptionKey = key
        let r = try Realm(configuration: config)
        let plainURL = URL(fileURLWithPath: dir.file("plain.realm"))
        try r.writeCopy(toFile: plainURL, encryptionKey: nil)
        #expect(try Realm(configuration: .init(fileURL: plainURL, objectTypes: [Dog.self, Person.self])).objects(Dog.self).count == 1)
        #expect(try schemaVersionAtURL(url, encryptionKey: key) == 0)
    }
}
