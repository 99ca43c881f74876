import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// realm-swift's calling conventions: `add`, `create`, `delete` and `beginWrite` that do not throw (misuse stops
/// the program with a message), their `try…` forms for tools, asynchronous writes and opens, and file helpers.
/// What the blocks of an asynchronous write did, in order: touched only on the Realm's queue, and read by the
/// test after `queue.sync` (so `@unchecked Sendable`).
final class AsyncWriteLog: @unchecked Sendable {
    var order: [String] = []
    var completion: [String] = []
}

@Suite struct SourceCompatibilityTests {
    /// Code as realm-swift apps write it: no `try` before `add`, `create`, `delete`, `deleteAll`, `beginWrite`.
    @Test func writesWithoutTry() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let dog = Dog()
        dog.name = "Rex"
        try realm.write {
            realm.add(dog)
            realm.add([Dog(value: ["name": "A"]), Dog(value: ["name": "B"])])
            realm.create(Person.self, value: ["id": 1, "name": "Ann"])
            realm.dynamicCreate("Person", value: ["id": 2, "name": "Bo"])
        }
        #expect(realm.objects(Dog.self).count == 3 && realm.objects(Person.self).count == 2)
        realm.beginWrite()
        realm.delete(dog)
        realm.delete(realm.objects(Dog.self).filter("name == 'A'"))
        try realm.commitWrite()
        #expect(realm.objects(Dog.self).map(\.name) == ["B"])
        try realm.write { realm.deleteAll() }
        #expect(realm.isEmpty)
    }

    @Test func tryFormsReportErrors() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        #expect(throws: RealmError.notInWriteTransaction(operation: "add an object")) { try realm.tryAdd(Dog()) }
        #expect(throws: RealmError.self) { try realm.tryDeleteAll() }
        try realm.write { realm.create(Person.self, value: ["id": 1, "name": "Ann"]) }
        #expect(throws: RealmError.self) {
            try realm.write { try realm.tryCreate(Person.self, value: ["id": 1, "name": "Other"]) }
        }
        #expect(realm.objects(Person.self).first?.name == "Ann")
        try realm.tryBeginWrite()
        #expect(throws: RealmError.alreadyInWriteTransaction) { try realm.tryBeginWrite() }
        realm.cancelWrite()
    }

    @Test func addOutsideAWriteStopsWithAMessage() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "stop-\(UUID())", objectTypes: [Dog.self, Person.self]))
            realm.add(Dog())
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("cannot add an object of class 'Dog'") && stderr.contains("outside a write transaction"), "\(stderr)")
    }

    @Test func aDuplicatePrimaryKeyStopsWithTheClassAndKey() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "dup-\(UUID())", objectTypes: [Dog.self, Person.self]))
            try! realm.write {
                realm.create(Person.self, value: ["id": 7, "name": "Ann"])
                realm.create(Person.self, value: ["id": 7, "name": "Bo"])
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("cannot create an object of class 'Person'") && stderr.contains("7"), "\(stderr)")
    }

    @Test func deletingAMapDeletesItsObjectsAndKeepsItsKeys() throws {
        let realm = try memoryRealm([Tagged.self, Pal.self])
        let t = Tagged(value: ["name": "t"])
        try realm.write {
            realm.add(t)
            t.pets["a"] = Pal(value: ["name": "A"])
            t.pets["b"] = Pal(value: ["name": "B"])
            t.pets["none"] = .some(nil)
        }
        #expect(realm.objects(Pal.self).count == 2)
        try realm.write { realm.delete(t.pets) }
        #expect(realm.objects(Pal.self).isEmpty)
        #expect(Set(t.pets.keys) == ["a", "b", "none"])
    }

    @Test func writeWithoutNotifyingSkipsThatToken() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        var seen = 0, skipped = 0
        let a = realm.objects(Dog.self).observe { if case .update = $0 { seen += 1 } }
        let b = realm.objects(Dog.self).observe { if case .update = $0 { skipped += 1 } }
        try realm.write(withoutNotifying: [b]) { realm.add(Dog()) }
        #expect(seen == 1 && skipped == 0)
        a.invalidate()
        b.invalidate()
    }

    @Test func autoreleasepoolRunsItsBody() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "background").async {
            autoreleasepool {
                let realm = try! Realm(configuration: config)
                try! realm.write { realm.add(Dog(value: ["name": "bg"])) }
            }
            done.signal()
        }
        done.wait()
        let value = autoreleasepool { 42 }
        #expect(value == 42)
        #expect(try Realm(configuration: config).objects(Dog.self).first?.name == "bg")
    }

    @Test func writeAsyncRunsOnTheRealmsQueueAndCommits() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let queue = DispatchQueue(label: "writer")
        let done = DispatchSemaphore(value: 0)
        let log = AsyncWriteLog()
        queue.async {
            let realm = try! Realm(configuration: config, queue: queue)
            realm.writeAsync({ realm.add(Dog(value: ["name": "first"])); log.order.append("first") }) { error in
                log.completion.append(error == nil ? "ok" : "\(error!)")
            }
            let cancelled = realm.writeAsync { realm.add(Dog(value: ["name": "never"])) }
            realm.writeAsync({ realm.add(Dog(value: ["name": "second"])); log.order.append("second") }) { _ in
                done.signal()
            }
            #expect(realm.isPerformingAsynchronousWriteOperations)
            try! realm.cancelAsyncWrite(cancelled)
            #expect(throws: RealmError.self) { try realm.cancelAsyncWrite(cancelled) }
            log.order.append("queued")
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        queue.sync {}
        #expect(log.order == ["queued", "first", "second"])
        #expect(log.completion == ["ok"])
        let names = Set(try Realm(configuration: config).objects(Dog.self).map(\.name))
        #expect(names == ["first", "second"])
    }

    @Test func asyncOpenCallsBackOnTheQueueWithARealmConfinedToIt() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let queue = DispatchQueue(label: "callback")
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var count = -1
        Realm.asyncOpen(configuration: config, callbackQueue: queue) { result in
            dispatchPrecondition(condition: .onQueue(queue))
            let realm = try! result.get()
            try! realm.write { realm.add(Dog()) }
            count = realm.objects(Dog.self).count
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(count == 1)

        // A configuration that cannot be opened reaches the callback as the error.
        var bad = config
        bad.encryptionKey = Data(count: 3)
        nonisolated(unsafe) var failure: Error?
        Realm.asyncOpen(configuration: bad, callbackQueue: queue) { result in
            if case .failure(let e) = result { failure = e }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect("\(failure.map { "\($0)" } ?? "no error")".contains("64 bytes"))
    }

    @Test func fileExistsAndDeleteFiles() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        #expect(!Realm.fileExists(for: config))
        do {
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Dog()) }
            #expect(Realm.fileExists(for: config))
            #expect(throws: RealmError.self) { try Realm.deleteFiles(for: config) }
        }
        #expect(try Realm.deleteFiles(for: config))
        #expect(!Realm.fileExists(for: config))
        #expect(!FileManager.default.fileExists(atPath: config.fileURL!.path + ".lock"))
        #expect(try !Realm.deleteFiles(for: config))
    }
}
