import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// What an observer received, in order.
final class ChangeLog<C> {
    enum Entry {
        case initial
        case update(deletions: [Int], insertions: [Int], modifications: [Int])
        case error
    }
    var entries: [Entry] = []

    func record(_ change: RealmCollectionChange<C>) {
        switch change {
        case .initial: entries.append(.initial)
        case .update(_, let d, let i, let m): entries.append(.update(deletions: d, insertions: i, modifications: m))
        case .error: entries.append(.error)
        }
    }

    var updates: [(deletions: [Int], insertions: [Int], modifications: [Int])] {
        entries.compactMap { if case .update(let d, let i, let m) = $0 { return (d, i, m) } else { return nil } }
    }

    var last: (deletions: [Int], insertions: [Int], modifications: [Int])? { updates.last }
}

/// `old` with `deletions` removed and the new elements at `insertions` inserted; equals `new` when the change
/// set is exact.
func apply<T>(_ old: [T], deletions: [Int], insertions: [Int], from new: [T]) -> [T] {
    var out = old
    for i in deletions.sorted(by: >) { out.remove(at: i) }
    for i in insertions.sorted() { out.insert(new[i], at: i) }
    return out
}

@Suite struct NotificationTests {
    // MARK: Results

    @Test func resultsGetInitialThenExactUpdates() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write { for n in 0..<6 { realm.create(Dog.self, value: ["name": "d\(n)", "age": n]) } }
        let dogs = realm.objects(Dog.self)
        let log = ChangeLog<Results<Dog>>()
        let token = dogs.observe { log.record($0) }
        defer { token.invalidate() }
        #expect(log.entries.count == 1)
        let before = dogs.map(\.name)
        // One commit: delete d1 and d4, modify d2 and d5, insert two.
        try realm.write {
            realm.delete(dogs.filter { $0.name == "d1" || $0.name == "d4" })
            for d in dogs where d.name == "d2" || d.name == "d5" { d.age += 100 }
            realm.create(Dog.self, value: ["name": "n1"])
            realm.create(Dog.self, value: ["name": "n2"])
        }
        let after = dogs.map(\.name)
        let u = try #require(log.last)
        #expect(u.deletions == [1, 4])
        #expect(u.insertions == [4, 5])
        #expect(u.modifications == [2, 5])
        #expect(apply(before, deletions: u.deletions, insertions: u.insertions, from: after) == after)
        // A commit that changes nothing the results show delivers nothing.
        try realm.write { realm.create(Person.self, value: ["id": 1]) }
        #expect(log.updates.count == 1)
    }

    @Test func sortedResultsReportMovesAsDeletionAndInsertion() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write { for n in 0..<5 { realm.create(Dog.self, value: ["name": "d\(n)", "age": n * 10]) } }
        let sorted = realm.objects(Dog.self).sorted(byKeyPath: "age")
        let log = ChangeLog<Results<Dog>>()
        let token = sorted.observe { log.record($0) }
        defer { token.invalidate() }
        let before = sorted.map(\.name)
        try realm.write {
            let all = realm.objects(Dog.self)
            all.first { $0.name == "d0" }!.age = 35      // moves from 0 to between d3 and d4
            all.first { $0.name == "d2" }!.owner = Person(value: ["id": 9])  // modified in place
            realm.delete(all.first { $0.name == "d3" }!)
            realm.create(Dog.self, value: ["name": "n", "age": 5])
        }
        let after = sorted.map(\.name)
        #expect(after == ["n", "d1", "d2", "d0", "d4"])
        let u = try #require(log.last)
        #expect(apply(before, deletions: u.deletions, insertions: u.insertions, from: after) == after)
        #expect(u.deletions == [0, 3])
        #expect(u.insertions == [0, 3])
        #expect(u.modifications == [2])
    }

    @Test func filteredResultsSeeObjectsEnterAndLeave() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write { for n in 0..<6 { realm.create(Dog.self, value: ["name": "d\(n)", "age": n]) } }
        let adults = realm.objects(Dog.self).filter { $0.age >= 3 }
        let log = ChangeLog<Results<Dog>>()
        let token = adults.observe { log.record($0) }
        defer { token.invalidate() }
        #expect(adults.map(\.name) == ["d3", "d4", "d5"])
        try realm.write {
            let all = realm.objects(Dog.self)
            all.first { $0.name == "d1" }!.age = 7  // enters
            all.first { $0.name == "d4" }!.age = 0  // leaves
            all.first { $0.name == "d5" }!.age = 9  // modified, stays
            all.first { $0.name == "d0" }!.age = 1  // changes, but not in the results
        }
        #expect(adults.map(\.name) == ["d1", "d3", "d5"])
        let u = try #require(log.last)
        #expect(u.deletions == [1])
        #expect(u.insertions == [0])
        #expect(u.modifications == [2])
        // Only objects outside the results change: nothing is delivered.
        try realm.write { realm.objects(Dog.self).first { $0.name == "d2" }!.age = -1 }
        #expect(log.updates.count == 1)
    }

    // MARK: Lists and linking objects

    @Test func listChangesAreExact() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let p = try realm.write {
            realm.create(Person.self, value: ["id": 1, "dogs": (0..<5).map { ["name": "d\($0)"] }])
        }
        let log = ChangeLog<List<Dog>>()
        let token = p.dogs.observe { log.record($0) }
        defer { token.invalidate() }
        var before = p.dogs.map(\.name)
        try realm.write {
            p.dogs.remove(at: 1)                              // d1 out
            p.dogs.append(Dog(value: ["name": "n"]))          // n in at the end
            p.dogs[0].age = 3                                 // d0 modified
            p.dogs.insert(p.dogs[2], at: 0)                   // d3 again, at the front
        }
        var after = p.dogs.map(\.name)
        #expect(after == ["d3", "d0", "d2", "d3", "d4", "n"])
        var u = try #require(log.last)
        #expect(apply(before, deletions: u.deletions, insertions: u.insertions, from: after) == after)
        #expect(u.deletions == [1])
        #expect(u.insertions == [0, 5])
        #expect(u.modifications == [0])
        before = after
        try realm.write { p.dogs.move(from: 5, to: 1) }
        after = p.dogs.map(\.name)
        u = try #require(log.last)
        #expect(apply(before, deletions: u.deletions, insertions: u.insertions, from: after) == after)
        #expect(u.deletions == [5] && u.insertions == [1] && u.modifications.isEmpty)
        // Deleting a dog drops it from the list.
        before = after
        try realm.write { realm.delete(p.dogs[2]) }
        after = p.dogs.map(\.name)
        u = try #require(log.last)
        #expect(u.deletions == [2] && u.insertions.isEmpty)
        #expect(apply(before, deletions: u.deletions, insertions: u.insertions, from: after) == after)
        // Deleting the owner empties the list.
        try realm.write { realm.delete(p) }
        u = try #require(log.last)
        #expect(u.deletions == Array(0..<after.count))
    }

    @Test func linkingObjectsChangesAreExact() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let (rex, a, b) = try realm.write {
            (realm.create(Dog.self, value: ["name": "Rex"]),
             realm.create(Person.self, value: ["id": 1, "name": "A"]),
             realm.create(Person.self, value: ["id": 2, "name": "B"]))
        }
        let log = ChangeLog<LinkingObjects<Person>>()
        let token = rex.owners.observe { log.record($0) }
        defer { token.invalidate() }
        try realm.write { a.dogs.append(rex); b.dogs.append(rex) }
        var u = try #require(log.last)
        #expect(u.insertions == [0, 1] && u.deletions.isEmpty)
        try realm.write { b.name = "B2" }
        u = try #require(log.last)
        #expect(u.modifications == [1] && u.insertions.isEmpty && u.deletions.isEmpty)
        try realm.write { a.dogs.removeAll() }
        u = try #require(log.last)
        #expect(u.deletions == [0] && u.insertions.isEmpty)
        #expect(rex.owners.map(\.name) == ["B2"])
    }

    @Test func changesToLinkedObjectsAreModifications() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let p = try realm.write {
            let p = realm.create(Person.self, value: ["id": 1, "name": "P", "dogs": [["name": "a"], ["name": "b"]]])
            realm.create(Person.self, value: ["id": 2, "name": "Q"])
            realm.create(Dog.self, value: ["name": "owned", "owner": p])
            return p
        }
        let people = realm.objects(Person.self)
        let dogs = realm.objects(Dog.self)
        let peopleLog = ChangeLog<Results<Person>>(), dogLog = ChangeLog<Results<Dog>>()
        let t1 = people.observe { peopleLog.record($0) }
        let t2 = dogs.observe { dogLog.record($0) }
        defer { t1.invalidate(); t2.invalidate() }
        // To-many: changing a dog in P's list modifies P, and "owned", whose owner P is (links are followed
        // several levels deep, as in Realm).
        try realm.write { p.dogs[1].age = 4 }
        #expect(peopleLog.last?.modifications == [0])
        #expect(dogLog.last?.modifications == [1, 2])
        // To-one: changing P modifies the dog whose owner P is (and P itself).
        try realm.write { p.nickname = "pp" }
        #expect(peopleLog.last?.modifications == [0])
        #expect(dogLog.last?.modifications == [2])
        // Backlinks do not count: Q gaining a dog changes Q, not the dog.
        let dogUpdates = dogLog.updates.count
        try realm.write { people[1].dogs.append(dogs[0]) }
        #expect(peopleLog.last?.modifications == [1])
        #expect(dogLog.updates.count == dogUpdates)
    }

    // MARK: Objects

    @Test func objectNotificationsCarryOldAndNewValues() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let (p, other) = try realm.write {
            (realm.create(Person.self, value: ["id": 1, "name": "Ann", "age": 30]),
             realm.create(Person.self, value: ["id": 2, "name": "Bob"]))
        }
        var changes: [[PropertyChange]] = []
        var deleted = 0
        let token = p.observe { (change: ObjectChange<Person>) in
            switch change {
            case .change(let o, let props):
                #expect(o.isSameObject(as: p))
                changes.append(props)
            case .deleted: deleted += 1
            case .error: Issue.record("unexpected error")
            }
        }
        defer { token.invalidate() }
        try realm.write { p.name = "Anne"; p.age = nil }
        #expect(changes.count == 1)
        let props = try #require(changes.last)
        #expect(props.map(\.name) == ["name", "age"])
        #expect(props[0].oldValue as? String == "Ann" && props[0].newValue as? String == "Anne")
        #expect(props[1].oldValue as? Int == 30 && props[1].newValue == nil)
        // Another object changing, or setting the same value, delivers nothing.
        try realm.write { other.name = "Rob"; p.name = "Anne" }
        #expect(changes.count == 1)
        try realm.write { p.tags.append("x") }
        #expect(changes.last?.map(\.name) == ["tags"])
        try realm.write { realm.delete(p) }
        #expect(deleted == 1)
        try realm.write { other.name = "R" }
        #expect(deleted == 1 && changes.count == 2)
    }

    // MARK: Realm

    @Test func realmNotificationsFollowEveryVersionChange() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let realm = try Realm(configuration: config)
        var seen: [Realm.Notification] = []
        let token = realm.observe { n, r in
            #expect(r == realm)
            seen.append(n)
        }
        defer { token.invalidate() }
        try realm.write { realm.create(Dog.self) }
        #expect(seen == [.didChange])
        // A commit on another thread is seen at refresh().
        let done = DispatchSemaphore(value: 0)
        Thread {
            let w = try! Realm(configuration: config)
            try! w.write { w.create(Dog.self) }
            done.signal()
        }.start()
        done.wait()
        #expect(seen.count == 1)
        #expect(realm.refresh())
        #expect(seen == [.didChange, .didChange])
        #expect(!realm.refresh())
        #expect(seen.count == 2)
    }

    @Test func commitWithoutNotifyingSkipsThoseTokensForGood() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let dogs = realm.objects(Dog.self)
        let quiet = ChangeLog<Results<Dog>>(), loud = ChangeLog<Results<Dog>>()
        let t1 = dogs.observe { quiet.record($0) }
        let t2 = dogs.observe { loud.record($0) }
        var realmCalls = 0
        let t3 = realm.observe { _, _ in realmCalls += 1 }
        defer { t1.invalidate(); t2.invalidate(); t3.invalidate() }
        realm.beginWriteOrFail()
        realm.create(Dog.self, value: ["name": "a"])
        try realm.commitWrite(withoutNotifying: [t1, t3])
        #expect(quiet.updates.isEmpty && realmCalls == 0)
        #expect(loud.last?.insertions == [0])
        // The skipped change is not reported later either.
        try realm.write { realm.create(Dog.self, value: ["name": "b"]) }
        #expect(quiet.updates.count == 1)
        #expect(quiet.last?.insertions == [1])
        #expect(realmCalls == 1)
    }

    // MARK: Tokens

    @Test func invalidatedOrReleasedTokensStopDelivery() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let dogs = realm.objects(Dog.self)
        var calls = 0
        var kept: NotificationToken? = dogs.observe { if case .update = $0 { calls += 1 } }
        do {
            _ = dogs.observe { if case .update = $0 { calls += 100 } }  // released at once
        }
        try realm.write { realm.create(Dog.self) }
        #expect(calls == 1)
        kept?.invalidate()
        kept?.invalidate()
        try realm.write { realm.create(Dog.self) }
        #expect(calls == 1)
        kept = nil
        // A token invalidated by another observer's callback gets nothing from that delivery on.
        var second: NotificationToken?
        var secondCalls = 0
        let first = realm.observe { _, _ in second?.invalidate() }
        second = realm.observe { _, _ in secondCalls += 1 }
        try realm.write { realm.create(Dog.self) }
        #expect(secondCalls == 0)
        first.invalidate()
    }

    @Test func observingInsideAWriteIsRefused() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write {
            #expect(throws: RealmError.self) { try realm.checkCanObserve() }
        }
    }

    // MARK: Random

    /// Random commits of inserts, deletes and modifications; every update, applied to the previous contents,
    /// gives the new contents, and its modifications are exactly the changed objects that kept their place.
    @Test(arguments: [1, 2, 3, 4]) func randomCommitsGiveExactChanges(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let realm = try memoryRealm([Dog.self, Person.self], "random\(seed)")
        let owner = try realm.write { realm.create(Person.self, value: ["id": 1]) }
        let all = realm.objects(Dog.self)
        let views: [(String, Results<Dog>)] = [
            ("all", all),
            ("sorted", all.sorted(byKeyPath: "age")),
            ("filtered", all.filter { $0.age % 3 != 0 }.sorted(by: [SortDescriptor(keyPath: "age", ascending: false)])),
            ("list", owner.dogs.results),
        ]
        var logs: [ChangeLog<Results<Dog>>] = []
        var tokens: [NotificationToken] = []
        for (_, r) in views {
            let log = ChangeLog<Results<Dog>>()
            tokens.append(r.observe { log.record($0) })
            logs.append(log)
        }
        defer { tokens.forEach { $0.invalidate() } }
        var nextName = 0
        for _ in 0..<60 {
            let before = views.map { $0.1.map(\.name) }
            let agesBefore = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.age) })
            try realm.write {
                for _ in 0..<(1 + rng.below(6)) {
                    let dogs = Array(all)
                    switch rng.below(5) {
                    case 0, 1:
                        let d = realm.create(Dog.self, value: ["name": "d\(nextName)", "age": rng.below(20)])
                        nextName += 1
                        if rng.below(2) == 0 { owner.dogs.insert(d, at: rng.below(owner.dogs.count + 1)) }
                    case 2 where !dogs.isEmpty:
                        realm.delete(dogs[rng.below(dogs.count)])
                    case 3 where !dogs.isEmpty:
                        dogs[rng.below(dogs.count)].age = rng.below(20)
                    case 4 where owner.dogs.count > 1:
                        owner.dogs.move(from: rng.below(owner.dogs.count), to: rng.below(owner.dogs.count))
                    default:
                        break
                    }
                }
            }
            let changed = Set(all.filter { d in agesBefore[d.name].map { $0 != d.age } ?? false }.map(\.name))
            for (v, (name, r)) in views.enumerated() {
                let after = r.map(\.name)
                guard let u = logs[v].last else {
                    #expect(before[v] == after, "\(name): changed without an update")
                    #expect(changed.isDisjoint(with: before[v]), "\(name): modified without an update")
                    continue
                }
                #expect(logs[v].updates.count == 1)
                #expect(apply(before[v], deletions: u.deletions, insertions: u.insertions, from: after) == after, "\(name)")
                let deleted = Set(u.deletions)
                let kept = before[v].indices.filter { !deleted.contains($0) }
                let expected = kept.filter { changed.contains(before[v][$0]) }
                #expect(u.modifications == expected, "\(name): modifications")
            }
            // Clear so that a view with nothing to report is checked against "no new update" next time.
            for log in logs { log.entries.removeAll() }
        }
    }
}

extension NotificationTests {
    /// Random changes to dogs, owners and lists; an object is reported modified exactly when it changed itself
    /// or something at most four links away changed (computed here by brute force over the links).
    @Test(arguments: [7, 8, 9]) func randomChangesThroughLinksAreExact(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let realm = try memoryRealm([Dog.self, Person.self], "links\(seed)")
        try realm.write {
            for i in 0..<6 { realm.create(Person.self, value: ["id": i]) }
            for i in 0..<16 { realm.create(Dog.self, value: ["name": "d\(i)", "age": i]) }
        }
        let people = realm.objects(Person.self), dogs = realm.objects(Dog.self)
        let peopleLog = ChangeLog<Results<Person>>(), dogLog = ChangeLog<Results<Dog>>()
        let t1 = people.observe { peopleLog.record($0) }
        let t2 = dogs.observe { dogLog.record($0) }
        defer { t1.invalidate(); t2.invalidate() }
        var nextDog = 16
        var throughLinks = 0
        for _ in 0..<50 {
            let ages = Dictionary(uniqueKeysWithValues: dogs.map { ($0.name, $0.age) })
            let owners = Dictionary(uniqueKeysWithValues: dogs.map { ($0.name, $0.owner?.id) })
            let lists = people.map { p in p.dogs.map(\.name) }
            let oldDogs = dogs.map(\.name)
            peopleLog.entries.removeAll()
            dogLog.entries.removeAll()
            try realm.write {
                for _ in 0..<(1 + rng.below(3)) {
                    let d = dogs[rng.below(dogs.count)], p = people[rng.below(people.count)]
                    switch rng.below(6) {
                    case 0: d.age = rng.below(4)
                    case 1: d.owner = rng.below(3) == 0 ? nil : p
                    case 2: p.dogs.append(d)
                    case 3 where !p.dogs.isEmpty: p.dogs.remove(at: rng.below(p.dogs.count))
                    case 4: p.dogs.append(realm.create(Dog.self, value: ["name": "d\(nextDog)"])); nextDog += 1
                    default: break
                    }
                }
            }
            func dogChanged(_ d: Dog) -> Bool { ages[d.name].map { $0 != d.age || owners[d.name]! != d.owner?.id } ?? false }
            func personChanged(_ i: Int) -> Bool { lists[i] != people[i].dogs.map(\.name) }
            func dogModified(_ d: Dog, _ depth: Int) -> Bool {
                if dogChanged(d) { return true }
                guard depth < 4, let o = d.owner else { return false }
                return personModified(o.id, depth + 1)
            }
            func personModified(_ i: Int, _ depth: Int) -> Bool {
                if personChanged(i) { return true }
                guard depth < 4 else { return false }
                return people[i].dogs.contains { dogModified($0, depth + 1) }
            }
            let expectedPeople = people.indices.filter { personModified($0, 0) }
            let expectedDogs = oldDogs.indices.filter { dogModified(dogs[$0], 0) }
            #expect((peopleLog.last?.modifications ?? []) == expectedPeople)
            #expect((dogLog.last?.modifications ?? []) == expectedDogs)
            #expect(peopleLog.updates.count <= 1 && dogLog.updates.count <= 1)
            throughLinks += expectedDogs.filter { !dogChanged(dogs[$0]) }.count
        }
        #expect(throughLinks > 10, "the sequence should exercise changes through links")
    }
}

extension Realm {
    fileprivate func beginWriteOrFail() {
        beginWrite()
    }
}
