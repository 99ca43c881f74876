#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(Testing) @testable import RealmStorage
@testable import realm_storage_worker

/// `Snapshot.changes(in:since:)` and `changedClasses(since:)`: exact results, and only changed subtrees read.
@Suite struct SnapshotChangesTests {
    /// People 0..<n (no dogs) and dogs 0..<m owned by person 0.
    func peopleAndDogs(_ db: Database, people n: Int, dogs m: Int) throws -> (people: [ObjectKey], dogs: [ObjectKey]) {
        try db.write { tx in
            try tx.createClasses(personDogSchema)
            let people = try (0..<n).map {
                try tx.createObject("Person", ["id": .int(Int64($0)), "name": .string("p\($0)"), "age": .int(20)])
            }
            let dogs = try (0..<m).map {
                try tx.createObject("Dog", ["name": .string("d\($0)"), "weight": .double(10), "owner": .link(people[0])])
            }
            return (people, dogs)
        }
    }

    @Test func insertsDeletesAndModificationsInOneClassOnly() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        let (people, _) = try peopleAndDogs(db, people: 2000, dogs: 600)
        let before = try db.snapshot()
        let added = try db.write { tx -> [ObjectKey] in
            let a = try tx.createObject("Person", ["id": .int(5000), "name": .string("new")])
            let b = try tx.createObject("Person", ["id": .int(-1), "name": .string("first")])
            try tx.delete("Person", people[700])
            try tx.set(people[5], "Person", "age", .int(21))
            try tx.set(people[1500], "Person", "nickname", .string("x"))
            try tx.set(people[1501], "Person", "name", .string("p1501"))  // the same value: no change
            return [b, a]
        }
        let after = try db.snapshot()
        let (changes, _) = try after.diff("Person", since: before)
        #expect(changes == TableChanges(inserted: added, deleted: [people[700]],
                                        modified: [people[5]: ["age"], people[1500]: ["nickname"]]))
        #expect(!changes.isEmpty)
        let (dogs, dogNodes) = try after.diff("Dog", since: before)
        #expect(dogs.isEmpty)
        #expect(dogNodes == 0)
        #expect(try after.changedClasses(since: before) == ["Person"])
        #expect(try after.changedClasses(since: after).isEmpty)

        // The other way round: inserts become deletions.
        let back = try before.changes(in: "Person", since: after)
        #expect(back == TableChanges(inserted: [people[700]], deleted: added,
                                     modified: [people[5]: ["age"], people[1500]: ["nickname"]]))
        #expect(try after.changes(in: "Person", since: after).isEmpty)
    }

    @Test func largeTableWithThreeChangesReadsFewNodes() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("big.realm"))
        let n = 100_000
        let keys = try db.write { tx -> [ObjectKey] in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "value", type: .int),
                PropertySchema(name: "text", type: .string),
            ]))
            let t = try tx.table("Item")
            let cols = [try tx.property(t, "value"), try tx.property(t, "text")]
            return try (0..<n).map { try tx.createObject(t, columns: cols, values: [.int(Int64($0)), .string("item \($0 % 97)")]) }
        }
        let before = try db.snapshot()
        try db.write { tx in
            try tx.set(keys[0], "Item", "value", .int(-1))
            try tx.set(keys[n / 2], "Item", "text", .string(String(repeating: "long ", count: 400)))  // a blob
            try tx.set(keys[n - 1], "Item", "value", .int(-2))
        }
        let after = try db.snapshot()
        let (changes, nodes) = try after.diff("Item", since: before)
        #expect(changes == TableChanges(modified: [keys[0]: ["value"], keys[n / 2]: ["text"], keys[n - 1]: ["value"]]))
        // Two roots, at most two inner nodes and one leaf per change on each side: 2 × (1 + 3 × 2).
        #expect(nodes <= 14, "read \(nodes) nodes")

        // Blob against blob: a different blob with the same bytes is no change.
        let mid = try db.snapshot()
        try db.write { tx in
            try tx.set(keys[n / 2], "Item", "text", .string(String(repeating: "long ", count: 400) + "!"))
            try tx.set(keys[n / 2 + 1], "Item", "value", .int(0))
        }
        try db.write { tx in try tx.set(keys[n / 2], "Item", "text", .string(String(repeating: "long ", count: 400))) }
        let last = try db.snapshot()
        #expect(try last.changes(in: "Item", since: mid) == TableChanges(modified: [keys[n / 2 + 1]: ["value"]]))
    }

    @Test func listsLinksAndBacklinks() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("links.realm"))
        let (people, dogs) = try peopleAndDogs(db, people: 10, dogs: 4)
        let s0 = try db.snapshot()
        try db.write { tx in
            let p = try tx.property(tx.table("Person"), "dogs")
            try tx.listAppend(people[1], p, .link(dogs[2]))
            try tx.listAppend(people[2], tx.property(tx.table("Person"), "tags"), .string("t"))
        }
        let s1 = try db.snapshot()
        #expect(try s1.changes(in: "Person", since: s0)
                == TableChanges(modified: [people[1]: ["dogs"], people[2]: ["tags"]]))
        #expect(try s1.changes(in: "Dog", since: s0) == TableChanges(backlinksChanged: [dogs[2]: ["Person.dogs"]]))

        // Reordering a list changes it; its targets' backlink sets stay the same.
        try db.write { tx in
            let p = try tx.property(tx.table("Person"), "dogs")
            try tx.listAppend(people[1], p, .link(dogs[3]))
        }
        let s2 = try db.snapshot()
        try db.write { tx in try tx.listMove(people[1], tx.property(tx.table("Person"), "dogs"), from: 0, to: 1) }
        let s3 = try db.snapshot()
        #expect(try s3.changes(in: "Person", since: s2) == TableChanges(modified: [people[1]: ["dogs"]]))
        #expect(try s3.changes(in: "Dog", since: s2).isEmpty)

        // Deleting a person nulls the dogs' links to it and removes it from their backlink sets.
        try db.write { tx in try tx.delete("Person", people[0]) }
        let s4 = try db.snapshot()
        #expect(try s4.changes(in: "Person", since: s3) == TableChanges(deleted: [people[0]]))
        #expect(try s4.changes(in: "Dog", since: s3)
                == TableChanges(modified: Dictionary(uniqueKeysWithValues: dogs.map { ($0, ["owner"]) })))

        // Deleting a dog removes it from the list that holds it.
        try db.write { tx in try tx.delete("Dog", dogs[2]) }
        let s5 = try db.snapshot()
        #expect(try s5.changes(in: "Person", since: s4) == TableChanges(modified: [people[1]: ["dogs"]]))
        #expect(try s5.changes(in: "Dog", since: s4) == TableChanges(deleted: [dogs[2]]))
        #expect(try s5.changedClasses(since: s4) == ["Person", "Dog"])
    }

    @Test func schemaChanges() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("schema.realm"))
        let (people, _) = try peopleAndDogs(db, people: 300, dogs: 2)
        let s0 = try db.snapshot()
        try db.write { tx in
            try tx.addProperty("Person", PropertySchema(name: "email", type: .string, isOptional: true))
            try tx.set(people[3], "Person", "email", .string("a@b"))
            try tx.set(people[4], "Person", "age", .int(5))
            try tx.removeProperty("Person", "nickname")
        }
        let s1 = try db.snapshot()
        // Only properties in both versions are compared.
        #expect(try s1.changes(in: "Person", since: s0) == TableChanges(modified: [people[4]: ["age"]], schemaChanged: true))
        #expect(try s1.changes(in: "Dog", since: s0).isEmpty)
        #expect(try s1.changedClasses(since: s0) == ["Person"])

        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Tag", properties: [PropertySchema(name: "label", type: .string)]))
            try tx.createObject("Tag", ["label": .string("a")])
            try tx.createObject("Tag", ["label": .string("b")])
        }
        let s2 = try db.snapshot()
        let tags = try s2.keys(s2.table("Tag"))
        #expect(try s2.changes(in: "Tag", since: s1) == TableChanges(inserted: tags, schemaChanged: true))
        #expect(try s1.changes(in: "Tag", since: s2) == TableChanges(deleted: tags, schemaChanged: true))
        #expect(throws: StorageError.noSuchClass("Nope")) { try s2.changes(in: "Nope", since: s1) }

        // Removed and created again: a different class under the same name.
        try db.write { tx in
            try tx.removeClass("Tag")
            try tx.createClass(ClassSchema(name: "Tag", properties: [PropertySchema(name: "label", type: .string)]))
            try tx.createObject("Tag", ["label": .string("c")])
        }
        let s3 = try db.snapshot()
        let newTags = try s3.keys(s3.table("Tag"))
        #expect(try s3.changes(in: "Tag", since: s2) == TableChanges(inserted: newTags, deleted: tags, schemaChanged: true))
        #expect(try s3.changedClasses(since: s2) == ["Tag"])
    }

    @Test func writeTransactionSeesItsOwnChanges() throws {
        let db = try Database.inMemory(identifier: "changes-\(UUID())")
        let (people, dogs) = try peopleAndDogs(db, people: 600, dogs: 3)
        let s0 = try db.snapshot()
        let tx = try db.beginWrite()
        let made = try tx.createObject("Person", ["id": .int(9999), "name": .string("w")])
        try tx.set(people[42], "Person", "age", .int(99))
        // Lists are kept aside until commit, their leaves untouched.
        try tx.listAppend(people[500], tx.property(tx.table("Person"), "dogs"), .link(dogs[1]))
        try tx.listAppend(people[501], tx.property(tx.table("Person"), "tags"), .string("x"))
        try tx.listAppend(people[502], tx.property(tx.table("Person"), "tags"), .string("y"))
        try tx.listRemove(people[502], tx.property(tx.table("Person"), "tags"), at: 0)  // back to empty
        try tx.delete("Person", people[7])
        let expectedPeople = TableChanges(inserted: [made], deleted: [people[7]],
                                          modified: [people[42]: ["age"], people[500]: ["dogs"], people[501]: ["tags"]])
        #expect(try tx.changes(in: "Person", since: s0) == expectedPeople)
        #expect(try tx.changes(in: "Dog", since: s0) == TableChanges(backlinksChanged: [dogs[1]: ["Person.dogs"]]))
        #expect(try tx.changedClasses(since: s0) == ["Person", "Dog"])
        // Either side may be the transaction.
        #expect(try s0.changes(in: "Person", since: tx).inserted == [people[7]])
        try tx.commit()
        #expect(throws: StorageError.transactionEnded) { try tx.changes(in: "Person", since: s0) }
        let s1 = try db.snapshot()
        #expect(try s1.changes(in: "Person", since: s0) == expectedPeople)
    }

    @Test func refusals() throws {
        let dir = TempDir()
        let a = try Database.open(path: dir.file("a.realm"))
        let b = try Database.inMemory(identifier: "changes-\(UUID())")
        let sa = try a.snapshot(), sb = try b.snapshot()
        #expect(throws: StorageError.differentDatabases(path: a.path, otherPath: b.path)) { try sa.changedClasses(since: sb) }
        let closed = try a.snapshot()
        closed.close()
        #expect(throws: StorageError.snapshotClosed(path: a.path, version: closed.version)) {
            try sa.changedClasses(since: closed)
        }
    }

    @Test func changesCommittedByAnotherProcess() throws {
        let dir = TempDir()
        let path = dir.file("shared.realm")
        let db = try Database.open(path: path)
        try SharedCounter.ensureSchema(db)
        let before = try db.snapshot()
        let writer = try WorkerProcess(["writer", path, "7", "3"], stderrPath: dir.file("writer.stderr"))
        let status = try writer.waitForExit(timeout: 120)
        #expect(WorkerProcess.exitedNormally(status), "\(WorkerProcess.describe(status))\(writer.stderrTail())")
        let after = try db.snapshot()
        #expect(after.version == before.version + 3)
        #expect(try after.changedClasses(since: before) == ["Shared", "Entry", "Filler"])
        let shared = ObjectKey.fromPrimaryKey(0)
        #expect(try after.changes(in: "Shared", since: before) == TableChanges(modified: [shared: ["counter", "sum"]]))
        #expect(try after.changes(in: "Entry", since: before)
                == TableChanges(inserted: (0..<3).map { ObjectKey.fromPrimaryKey(Int64(7_000_000 + $0)) }))
        #expect(try after.changes(in: "Filler", since: before)
                == TableChanges(modified: Dictionary(uniqueKeysWithValues: (1...3).map { (ObjectKey.fromPrimaryKey(Int64($0)), ["text"]) })))
    }
}

// MARK: - Random operations against a plain model

/// Seeded random transactions on two linked classes; every diff between held snapshots (both directions), and
/// between an open write transaction and a snapshot, must equal the diff of the model's states.
@Suite struct SnapshotChangesModelTests {
    static let schema: [ClassSchema] = [
        ClassSchema(name: "A", properties: [
            PropertySchema(name: "n", type: .int),
            PropertySchema(name: "s", type: .string, isOptional: true),
            PropertySchema(name: "d", type: .double),
            PropertySchema(name: "tags", type: .int, isList: true),
            .link("b", to: "B"),
            .list("bs", of: "B"),
        ]),
        ClassSchema(name: "B", properties: [
            PropertySchema(name: "label", type: .string),
            .link("a", to: "A"),
        ]),
        // Objects keyed by a random int primary key: inserts land mid-tree and split leaves in halves.
        ClassSchema(name: "C", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "v", type: .int),
        ]),
    ]
    static let classes = ["A", "B", "C"]
    static let scalars = ["A": ["n", "s", "d", "b"], "B": ["label", "a"], "C": ["v"]]
    static let lists = ["A": ["tags", "bs"], "B": [], "C": []]

    struct Object: Equatable {
        var values: [String: Value] = [:]
        var lists: [String: [Value]] = [:]
    }
    typealias State = [String: [UInt64: Object]]

    struct Run {
        var rng: SplitMix64
        var state: State = ["A": [:], "B": [:], "C": [:]]

        mutating func below(_ n: Int) -> Int { rng.below(n) }
        mutating func string() -> String {
            let long = below(10) == 0
            let n = long ? 1000 + below(300) : below(12)
            return String((0..<n).map { _ in Character(Unicode.Scalar(UInt8(97 + below(26)))) })
        }
        mutating func value(_ c: String, _ p: String) -> Value {
            switch (c, p) {
            case ("A", "n"): return .int(Int64(below(5)))
            case ("A", "s"): return below(4) == 0 ? .null : .string(string())
            case ("A", "d"): return .double(Double(below(4)) / 2)
            case ("A", "b"): return link("B")
            case ("B", "label"): return .string(string())
            case ("C", "v"): return .int(Int64(below(3)))
            default: return link("A")
            }
        }
        mutating func link(_ c: String) -> Value {
            let keys = state[c]!.keys.sorted()
            return keys.isEmpty || below(4) == 0 ? .null : .link(ObjectKey(keys[below(keys.count)]))
        }
        mutating func pick(_ c: String) -> UInt64? {
            let keys = state[c]!.keys.sorted()
            return keys.isEmpty ? nil : keys[below(keys.count)]
        }

        /// One random operation, applied to the transaction and the model.
        mutating func step(_ tx: WriteTransaction) throws {
            let c = ["A", "A", "B", "C"][below(4)]
            switch below(10) {
            case 0, 1, 2:
                if c == "C" {
                    let id = Int64(below(1_000_000))
                    let key = ObjectKey.fromPrimaryKey(id)
                    guard state["C"]![key.rawValue] == nil else { return }
                    let v = value("C", "v")
                    #expect(try tx.createObject("C", ["id": .int(id), "v": v]) == key)
                    state["C"]![key.rawValue] = Object(values: ["v": v])
                    return
                }
                var o = Object()
                for p in Run.scalarNames(c) { o.values[p] = value(c, p) }
                for p in SnapshotChangesModelTests.lists[c]! { o.lists[p] = [] }
                let key = try tx.createObject(c, o.values)
                state[c]![key.rawValue] = o
            case 3:
                guard let k = pick(c) else { return }
                try tx.delete(c, ObjectKey(k))
                state[c]![k] = nil
                let gone = Value.link(ObjectKey(k))
                for (oc, p) in c == "A" ? [("B", "a")] : c == "B" ? [("A", "b")] : [] {
                    for (ok, o) in state[oc]! where o.values[p] == gone { state[oc]![ok]!.values[p] = .null }
                }
                if c == "B" { for ok in state["A"]!.keys { state["A"]![ok]!.lists["bs"]!.removeAll { $0 == gone } } }
            case 4, 5, 6:
                guard let k = pick(c) else { return }
                let names = Run.scalarNames(c)
                let p = names[below(names.count)]
                let v = value(c, p)
                try tx.set(ObjectKey(k), c, p, v)
                state[c]![k]!.values[p] = v
            default:
                guard let k = pick("A") else { return }
                let t = try tx.table("A")
                if below(2) == 0 {
                    let v = Value.int(Int64(below(3)))
                    if below(3) == 0, !state["A"]![k]!.lists["tags"]!.isEmpty {
                        try tx.listRemove(ObjectKey(k), tx.property(t, "tags"), at: 0)
                        state["A"]![k]!.lists["tags"]!.removeFirst()
                    } else {
                        try tx.listAppend(ObjectKey(k), tx.property(t, "tags"), v)
                        state["A"]![k]!.lists["tags"]!.append(v)
                    }
                } else {
                    let count = below(3)
                    let targets: [Value] = (0..<count).compactMap { _ in pick("B").map { .link(ObjectKey($0)) } }
                    try tx.setList(ObjectKey(k), tx.property(t, "bs"), targets)
                    state["A"]![k]!.lists["bs"] = targets
                }
            }
        }

        static func scalarNames(_ c: String) -> [String] { SnapshotChangesModelTests.scalars[c]! }
    }

    /// target class → key → "Origin.property" → origin keys, sorted.
    static func backlinks(_ s: State) -> [String: [UInt64: [String: [UInt64]]]] {
        var out: [String: [UInt64: [String: [UInt64]]]] = [:]
        for (k, o) in s["A"]! {
            if case .link(let t) = o.values["b"]! { out["B", default: [:]][t.rawValue, default: [:]]["A.b", default: []].append(k) }
            for case .link(let t) in o.lists["bs"]! { out["B", default: [:]][t.rawValue, default: [:]]["A.bs", default: []].append(k) }
        }
        for (k, o) in s["B"]! {
            if case .link(let t) = o.values["a"]! { out["A", default: [:]][t.rawValue, default: [:]]["B.a", default: []].append(k) }
        }
        return out.mapValues { $0.mapValues { $0.mapValues { $0.sorted() } } }
    }

    static func expected(_ c: String, from old: State, to new: State) -> TableChanges {
        var out = TableChanges()
        let o = old[c]!, n = new[c]!
        out.inserted = n.keys.filter { o[$0] == nil }.sorted().map(ObjectKey.init)
        out.deleted = o.keys.filter { n[$0] == nil }.sorted().map(ObjectKey.init)
        let bo = backlinks(old)[c] ?? [:], bn = backlinks(new)[c] ?? [:]
        for (k, a) in o {
            guard let b = n[k] else { continue }
            var names = scalars[c]!.filter { !a.values[$0]!.isStoredIdentically(to: b.values[$0]!) }
            names += lists[c]!.filter { a.lists[$0]! != b.lists[$0]! }
            if !names.isEmpty { out.modified[ObjectKey(k)] = names.sorted() }
            let lo = bo[k] ?? [:], ln = bn[k] ?? [:]
            let labels = Set(lo.keys).union(ln.keys).filter { (lo[$0] ?? []) != (ln[$0] ?? []) }
            if !labels.isEmpty { out.backlinksChanged[ObjectKey(k)] = labels.sorted() }
        }
        return out
    }

    static func normalized(_ t: TableChanges) -> TableChanges {
        var t = t
        t.modified = t.modified.mapValues { $0.sorted() }
        t.backlinksChanged = t.backlinksChanged.mapValues { $0.sorted() }
        return t
    }

    @Test(arguments: [(UInt64(1), false), (2, false), (3, true)])
    func randomTransactionsMatchTheModel(seed: UInt64, inMemory: Bool) throws {
        let dir = TempDir()
        let db = inMemory ? try Database.inMemory(identifier: "changes-model-\(seed)-\(UUID())")
                          : try Database.open(path: dir.file("model.realm"))
        try db.write { try $0.createClasses(Self.schema) }
        var run = Run(rng: SplitMix64(seed: seed))
        var held: [(Snapshot, State)] = [(try db.snapshot(), run.state)]
        var checks = 0
        func check(_ newer: Snapshot, _ newState: State, _ older: Snapshot, _ oldState: State) throws {
            for c in Self.classes {
                let got = Self.normalized(try newer.changes(in: c, since: older))
                let want = Self.expected(c, from: oldState, to: newState)
                #expect(got == want, "seed \(seed), class \(c), version \(older.version) → \(newer.version)")
                if got != want { throw CancellationError() }
                // changedClasses may list a class with no changes, never leave out one with changes.
                if !want.isEmpty { #expect(try newer.changedClasses(since: older).contains(c)) }
                checks += 1
            }
        }
        for round in 0..<40 {
            let tx = try db.beginWrite()
            // Bulk rounds grow the tables past one leaf.
            let steps = round % 10 == 0 ? 1500 : 1 + run.below(8)
            for _ in 0..<steps { try run.step(tx) }
            if run.below(3) == 0 {
                let (old, oldState) = held[run.below(held.count)]
                try check(tx, run.state, old, oldState)
            }
            try tx.commit()
            let s = try db.snapshot()
            let (prev, prevState) = held.last!
            held.append((s, run.state))
            try check(s, run.state, prev, prevState)
            let (old, oldState) = held[run.below(held.count)]
            try check(s, run.state, old, oldState)
            try check(old, oldState, s, run.state)
        }
        #expect(checks > 300)
    }
}
