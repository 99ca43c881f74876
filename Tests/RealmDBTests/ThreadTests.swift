import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// Runs `body` on a new thread and waits for it.
func onOtherThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    done.wait()
}

@Suite struct ThreadTests {
    @Test func eachThreadGetsItsOwnRealm() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let realm = try Realm(configuration: config)
        nonisolated(unsafe) var other: Realm?
        onOtherThread { other = try? Realm(configuration: config) }
        #expect(other != nil)
        #expect(other != realm)
    }

    @Test func threadSafeReferenceToAnObject() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let realm = try Realm(configuration: config)
        let rex = try realm.write { realm.create(Dog.self, value: ["name": "Rex", "age": 1]) }
        let ref = ThreadSafeReference(to: rex)
        onOtherThread {
            let realm = try! Realm(configuration: config)
            guard let dog = realm.resolve(ref) else { return }
            try! realm.write { dog.age = 2 }
            #expect(realm.resolve(ref) == nil, "a reference resolves once")
        }
        realm.refresh()
        #expect(rex.age == 2)
    }

    @Test func threadSafeReferenceToResults() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let realm = try Realm(configuration: config)
        try realm.write {
            for i in 0..<10 { realm.create(Dog.self, value: ["name": "d\(i)", "age": i]) }
        }
        let old = realm.objects(Dog.self).filter { $0.age >= 5 }.sorted(byKeyPath: "age", ascending: false)
        let ref = ThreadSafeReference(to: old)
        nonisolated(unsafe) var ages: [Int] = []
        onOtherThread {
            let realm = try! Realm(configuration: config)
            ages = realm.resolve(ref)?.map(\.age) ?? []
        }
        #expect(ages == [9, 8, 7, 6, 5])
    }

    @Test func usingARealmOnAnotherThreadIsAClearFatalError() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: .init(inMemoryIdentifier: "wrong-thread", objectTypes: [Dog.self, Person.self]))
            nonisolated(unsafe) let shared = realm
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = shared.objects(Dog.self).count
                done.signal()
            }.start()
            done.wait()
        }.map { result in
            let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(stderr.contains("accessed from a thread other than the one it was created on"))
        }
    }

    @Test func usingAnObjectOnAnotherThreadIsAClearFatalError() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: .init(inMemoryIdentifier: "wrong-thread-object", objectTypes: [Dog.self, Person.self]))
            let dog = try! realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
            nonisolated(unsafe) let shared = dog
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = shared.name
                done.signal()
            }.start()
            done.wait()
        }.map { result in
            let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(stderr.contains("Object accessed from a thread other than the one it was created on"))
        }
    }
}
