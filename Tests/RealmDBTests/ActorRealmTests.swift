import Foundation
import Testing
import RealmDB
import TestSupport

// Actor-isolated Realms as realm-swift 10.39+ has them, used as its users write them.

/// A global actor of the application's own, as realm-swift's documentation has users declare one.
@globalActor actor RealmActor: GlobalActor {
    static let shared = RealmActor()
}

/// An actor that keeps its Realm in a property, as realm-swift's documentation shows.
actor DogStore {
    var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    var count: Int { realm.objects(Dog.self).count }
    var names: [String] { realm.objects(Dog.self).sorted(byKeyPath: "name").map(\.name) }

    func add(_ name: String) async throws {
        try await realm.asyncWrite {
            realm.create(Dog.self, value: ["name": name])
        }
    }

    /// Writes across suspension points: the task may resume on another thread after each `await`.
    func addSeveral(_ names: [String]) async throws {
        for n in names {
            await Task.yield()
            try await realm.asyncWrite {
                realm.add(Dog(value: ["name": n]))
            }
            try await Task.sleep(nanoseconds: 100_000)
        }
    }

    func sameRealmAgain() async throws -> Bool {
        let again = try await Realm(configuration: realm.configuration, actor: self)
        return again == realm
    }

    func refreshed() async -> (Bool, Int) {
        let changed = await realm.asyncRefresh()
        return (changed, realm.objects(Dog.self).count)
    }

    func failingWrite() async -> Bool {
        struct Stop: Error {}
        do {
            try await realm.asyncWrite {
                realm.create(Dog.self, value: ["name": "Never"])
                throw Stop()
            }
            return false
        } catch {
            return error is Stop
        }
    }

    var tokens: [NotificationToken] = []

    func observeDogs(on recorder: Recorder) async {
        let token = await realm.objects(Dog.self).observe(on: recorder) { recorder, change in
            switch change {
            case .initial(let dogs): recorder.record("initial \(dogs.count)")
            case .update(let dogs, let d, let i, let m): recorder.record("update \(dogs.count) \(d) \(i) \(m)")
            case .error(let e): recorder.record("error \(e)")
            }
        }
        tokens.append(token)
    }

    func observeFirstDog(on recorder: Recorder) async {
        guard let dog = realm.objects(Dog.self).first else { return }
        let token = await dog.observe(on: recorder) { (recorder, change: ObjectChange<Dog>) in
            switch change {
            case .change(let dog, let props): recorder.record("change \(dog.name) \(props.map(\.name))")
            case .deleted: recorder.record("deleted")
            case .error(let e): recorder.record("error \(e)")
            }
        }
        tokens.append(token)
    }

    /// Observes the dogs of a new person on `recorder`, then gives the person a dog.
    func observeAListThenAppend(on recorder: Recorder) async throws {
        let ann = try await realm.asyncWrite { realm.create(Person.self, value: ["id": 1, "name": "Ann"]) }
        let token = await ann.dogs.observe(on: recorder) { recorder, change in
            switch change {
            case .initial(let dogs): recorder.record("initial \(dogs.count)")
            case .update(let dogs, let d, let i, let m): recorder.record("update \(dogs.map(\.name)) \(d) \(i) \(m)")
            case .error(let e): recorder.record("error \(e)")
            }
        }
        tokens.append(token)
        try await realm.asyncWrite { ann.dogs.append(Dog(value: ["name": "Rex"])) }
    }

    func rename(from old: String, to new: String) async throws {
        try await realm.asyncWrite {
            realm.objects(Dog.self).where { $0.name == old }.first?.name = new
        }
    }

    /// The Realm carried out of the actor, for the test of what using it there does.
    func leakedRealm() -> Leaked { Leaked(realm: realm) }
    struct Leaked: @unchecked Sendable { let realm: Realm }

    func stopObserving() {
        for t in tokens { t.invalidate() }
        tokens = []
    }
}

/// Records what notification blocks saw, isolated to itself; the blocks run isolated to it.
actor Recorder {
    private(set) var seen: [String] = []
    func record(_ s: String) { seen.append(s) }

    /// Waits (30 s at most) until `n` events arrived; the events then.
    func waitFor(_ n: Int) async -> [String] {
        for _ in 0..<30_000 where seen.count < n {
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return seen
    }
}

@RealmActor func countOnTheGlobalActor(_ configuration: Realm.Configuration) async throws -> Int {
    let realm = try await Realm.open(configuration: configuration)
    try await realm.asyncWrite {
        realm.add(Dog(value: ["name": "Global"]))
    }
    await Task.yield()
    return realm.objects(Dog.self).count
}

@Suite struct ActorRealmTests {
    func config(_ dir: TempDir) -> Realm.Configuration { fileConfig(dir, [Dog.self, Person.self]) }

    @Test func anActorKeepsItsRealmAcrossSuspensions() async throws {
        let dir = TempDir()
        let store = try await DogStore(configuration: config(dir))
        try await store.addSeveral(["a", "b", "c", "d", "e"])
        try await store.add("f")
        #expect(await store.count == 6)
        #expect(await store.names == ["a", "b", "c", "d", "e", "f"])
        #expect(try await store.sameRealmAgain())
    }

    @Test func aGlobalActorFunctionOpensItsRealmWithOpen() async throws {
        let dir = TempDir()
        #expect(try await countOnTheGlobalActor(config(dir)) == 1)
        #expect(try await countOnTheGlobalActor(config(dir)) == 2)
    }

    /// realm-swift's `try await Realm()` in main-actor code: a Realm of the main actor, written with
    /// `asyncWrite` and read there after suspensions.
    @MainActor @Test func awaitRealmOnTheMainActorIsTheMainActorsRealm() async throws {
        let dir = TempDir()
        let c = config(dir)
        let realm = try await Realm(configuration: c)
        try await realm.asyncWrite { realm.add(Dog(value: ["name": "Main"])) }
        try await Task.sleep(nanoseconds: 1_000_000)
        #expect(realm.objects(Dog.self).count == 1)
        let again = try await Realm(configuration: c, actor: MainActor.shared)
        #expect(again.objects(Dog.self).first?.name == "Main")
        let opened = try await Realm(configuration: c, downloadBeforeOpen: .always)
        #expect(opened.objects(Dog.self).count == 1)
    }

    @Test func aThrowingBlockWritesNothing() async throws {
        let dir = TempDir()
        let store = try await DogStore(configuration: config(dir))
        #expect(await store.failingWrite())
        #expect(await store.count == 0)
    }

    @Test func asyncRefreshSeesAnotherThreadsCommit() async throws {
        let dir = TempDir()
        let c = config(dir)
        let store = try await DogStore(configuration: c)
        #expect(await store.count == 0)
        try writeOnAnotherThread(c, "Other")
        let (changed, count) = await store.refreshed()
        #expect(changed)
        #expect(count == 1)
        #expect(await store.refreshed() == (false, 1))
    }

    @Test func asyncWriteWaitsForAnotherWriterWithoutBlocking() async throws {
        let dir = TempDir()
        let c = config(dir)
        let store = try await DogStore(configuration: c)
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let writer = Thread {
            let realm = try! Realm(configuration: c)
            realm.beginWrite()
            realm.add(Dog(value: ["name": "First"]))
            started.signal()
            release.wait()
            try! realm.commitWrite()
        }
        writer.start()
        started.wait()
        let write = Task { try await store.add("Second") }
        // The actor is free while its write waits for the lock: it still answers.
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(await store.count == 0)
        release.signal()
        try await write.value
        #expect(await store.names == ["First", "Second"])
    }

    @Test func resultsNotificationsArriveOnTheActor() async throws {
        let dir = TempDir()
        let c = config(dir)
        let store = try await DogStore(configuration: c)
        let recorder = Recorder()
        await store.observeDogs(on: recorder)
        #expect(await recorder.waitFor(1) == ["initial 0"])
        try await store.add("Rex")
        #expect(await recorder.waitFor(2) == ["initial 0", "update 1 [] [0] []"])
        // A commit of another thread reaches the actor with no refresh.
        try writeOnAnotherThread(c, "Zed")
        #expect(await recorder.waitFor(3).last == "update 2 [] [1] []")
        await store.stopObserving()
        try await store.add("After")
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(await recorder.seen.count == 3)
    }

    @Test func objectNotificationsArriveOnTheActor() async throws {
        let dir = TempDir()
        let store = try await DogStore(configuration: config(dir))
        try await store.add("Rex")
        let recorder = Recorder()
        await store.observeFirstDog(on: recorder)
        try await store.rename(from: "Rex", to: "Max")
        #expect(await recorder.waitFor(1) == ["change Max [\"name\"]"])
        await store.stopObserving()
    }

    @Test func listNotificationsArriveOnTheActor() async throws {
        let dir = TempDir()
        let store = try await DogStore(configuration: config(dir))
        let recorder = Recorder()
        try await store.observeAListThenAppend(on: recorder)
        #expect(await recorder.waitFor(2) == ["initial 0", "update [\"Rex\"] [] [0] []"])
        await store.stopObserving()
    }

    @Test func anActorIsolatedRealmUsedOutsideItsActorIsAClearFatalError() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let c = Realm.Configuration(inMemoryIdentifier: "outside-actor", objectTypes: [Dog.self, Person.self])
            let store = try! await DogStore(configuration: c)
            let leaked = await store.leakedRealm()
            _ = leaked.realm.objects(Dog.self).count
        }.map { result in
            let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
            // The runtime's own message, naming the actor the Realm belongs to.
            #expect(stderr.contains("expected 'RealmDBTests.DogStore' executor"))
        }
    }
}

/// Adds a dog in a Realm of a thread of its own, and waits for it.
func writeOnAnotherThread(_ c: Realm.Configuration, _ name: String) throws {
    let done = DispatchSemaphore(value: 0)
    Thread {
        let realm = try! Realm(configuration: c)
        try! realm.write { realm.add(Dog(value: ["name": name])) }
        done.signal()
    }.start()
    done.wait()
}
