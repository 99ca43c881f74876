import Foundation
import Synchronization
import Testing
@testable import RealmDB
import TestSupport

/// What blocks running on another queue saw, for the test thread to read (under a lock).
final class SeenOnQueue: Sendable {
    let events = Mutex<[String]>([])
    let arrived = DispatchSemaphore(value: 0)

    func add(_ e: String) {
        events.withLock { $0.append(e) }
        arrived.signal()
    }

    /// Waits for `n` more events (30 s at most each).
    func wait(_ n: Int) -> Bool {
        (0..<n).allSatisfy { _ in arrived.wait(timeout: .now() + 30) == .success }
    }

    var all: [String] { events.withLock { $0 } }
}

/// `observe(keyPaths:)` and `observe(on:)` as realm-swift has them, on results, lists, sets, maps and objects.
@Suite struct ObserveKeyPathsAndQueueTests {
    @Test func resultsCountOnlyChangesOfTheGivenKeyPaths() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let rex = Dog(value: ["name": "Rex", "age": 1])
        try realm.write { realm.add(rex) }
        var updates: [[Int]] = []
        let token = realm.objects(Dog.self).observe(keyPaths: ["age"]) { change in
            if case .update(_, let d, let i, let m) = change { updates.append(d + [-1] + i + [-1] + m) }
        }
        try realm.write { rex.name = "Rexy" }
        #expect(updates.isEmpty)
        try realm.write { rex.age = 2 }
        #expect(updates == [[-1, -1, 0]])
        try realm.write { realm.add(Dog(value: ["name": "New"])) }
        #expect(updates.last == [-1, 1, -1])
        token.invalidate()
    }

    @Test func aKeyPathThroughALinkCountsTheLinkedObjectsProperty() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let ann = Person(value: ["id": 1, "name": "Ann", "age": 30])
        try realm.write { realm.add(Dog(value: ["name": "Rex", "owner": ann])) }
        var modifications: [[Int]] = []
        let token = realm.objects(Dog.self).observe(keyPaths: ["owner.name"]) { change in
            if case .update(_, _, _, let m) = change { modifications.append(m) }
        }
        try realm.write { ann.age = 31 }
        #expect(modifications.isEmpty)
        try realm.write { ann.name = "Anna" }
        #expect(modifications == [[0]])
        token.invalidate()
    }

    @Test func objectNotificationsReportOnlyTheGivenKeyPaths() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let ann = Person(value: ["id": 1, "name": "Ann"])
        let rex = Dog(value: ["name": "Rex", "owner": ann])
        try realm.write { realm.add(rex) }
        var seen: [[String]] = []
        let token = rex.observe(keyPaths: ["name", "owner.name"]) { (change: ObjectChange<Dog>) in
            if case .change(_, let props) = change { seen.append(props.map(\.name)) }
        }
        try realm.write { rex.age = 4 }
        #expect(seen.isEmpty)
        try realm.write {
            rex.age = 5
            rex.name = "Rexy"
        }
        #expect(seen == [["name"]])
        try realm.write { ann.name = "Anna" }
        #expect(seen.last == ["owner"])
        token.invalidate()
    }

    @Test func aSetOfObjectsCountsOnlyTheGivenKeyPaths() throws {
        let realm = try memoryRealm([Tagged.self, Pal.self])
        let t = Tagged(value: ["name": "t"])
        let pal = Pal(value: ["name": "P", "age": 1])
        try realm.write {
            realm.add(t)
            t.friends.insert(pal)
        }
        var modifications: [[Int]] = []
        let token = t.friends.observe(keyPaths: ["name"]) { change in
            if case .update(_, _, _, let m) = change { modifications.append(m) }
        }
        try realm.write { pal.age = 2 }
        #expect(modifications.isEmpty)
        try realm.write { pal.name = "Q" }
        #expect(modifications == [[0]])
        token.invalidate()
    }

    @Test func resultsObservedOnAQueueAreDeliveredThere() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let realm = try Realm(configuration: config)
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        let queue = DispatchQueue(label: "observer")
        let seen = SeenOnQueue()
        let token = realm.objects(Dog.self).filter("age > 0").observe(on: queue) { change in
            dispatchPrecondition(condition: .onQueue(queue))
            switch change {
            case .initial(let r): seen.add("initial \(r.count)")
            case .update(let r, let d, let i, _): seen.add("update \(r.count) -\(d) +\(i)")
            case .error(let e): seen.add("error \(e)")
            }
        }
        #expect(seen.wait(1))
        try realm.write { realm.add(Dog(value: ["name": "Old", "age": 9])) }
        #expect(seen.wait(1))
        #expect(seen.all == ["initial 0", "update 1 -[] +[0]"])
        token.invalidate()
        queue.sync {}
        try realm.write { realm.add(Dog(value: ["name": "Older", "age": 10])) }
        Thread.sleep(forTimeInterval: 0.3)
        queue.sync {}
        #expect(seen.all.count == 2)
    }

    @Test func objectsListsSetsAndMapsObservedOnAQueue() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self, Tagged.self, Pal.self])
        let realm = try Realm(configuration: config)
        let ann = Person(value: ["id": 1, "name": "Ann"])
        let t = Tagged(value: ["name": "t"])
        try realm.write {
            realm.add(ann)
            realm.add(t)
        }
        let queue = DispatchQueue(label: "observer")
        let seen = SeenOnQueue()
        let tokens = [
            ann.observe(on: queue) { (change: ObjectChange<Person>) in
                if case .change(let p, let props) = change { seen.add("object \(p.name) \(props.map(\.name))") }
            },
            ann.dogs.observe(on: queue) { change in
                if case .update(let l, _, let i, _) = change { seen.add("list \(l.count) +\(i)") }
            },
            t.tags.observe(on: queue) { change in
                if case .update(let s, _, let i, _) = change { seen.add("set \(s.count) +\(i)") }
            },
            t.scores.observe(on: queue) { change in
                if case .update(_, _, let i, _) = change { seen.add("map +\(i)") }
            },
        ]
        // Each observation starts on the queue; let them all begin before the change.
        queue.sync {}
        try realm.write {
            ann.name = "Anna"
            ann.dogs.append(Dog(value: ["name": "Rex"]))
            t.tags.insert("x")
            t.scores["math"] = 90
        }
        #expect(seen.wait(4))
        #expect(Set(seen.all) == ["object Anna [\"name\", \"dogs\"]", "list 1 +[0]", "set 1 +[0]", "map +[\"math\"]"])
        tokens.forEach { $0.invalidate() }
    }

    @Test func anObjectDeletedBeforeTheQueueResolvesItIsReportedDeleted() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let realm = try Realm(configuration: config)
        let rex = Dog(value: ["name": "Rex"])
        try realm.write { realm.add(rex) }
        let queue = DispatchQueue(label: "observer")
        let seen = SeenOnQueue()
        let hold = DispatchSemaphore(value: 0)
        queue.async { hold.wait() }
        let token = rex.observe(on: queue) { (change: ObjectChange<Dog>) in
            if case .deleted = change { seen.add("deleted") }
        }
        try realm.write { realm.delete(rex) }
        hold.signal()
        #expect(seen.wait(1))
        #expect(seen.all == ["deleted"])
        token.invalidate()
    }
}
