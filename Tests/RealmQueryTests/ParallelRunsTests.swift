import Foundation
import Testing
import TestSupport
@testable import RealmQuery
@testable import RealmStorage

/// Reads split into runs of leaves on several threads (`scanRuns`, DECISIONS 104) give what one run gives: the
/// runs tile the table in key order, each leaf once; queries, counts and sums agree with one run; a failure
/// or a cancellation in any run is what the caller gets; write transactions and encrypted files read one run.
@Suite struct ParallelRunsTests {
    static let runCounts = [1, 2, 3, 5, 8, 64]

    /// 12,000 objects, every 7th deleted again (leaves of uneven sizes), with dogs linking to some of them.
    static func makeDatabase(_ path: String, key: [UInt8]? = nil) throws -> Database {
        let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: key))
        var rng = SplitMix64(seed: 104)
        try db.write { tx in
            try tx.createClasses([
                ClassSchema(name: "T", properties: [
                    PropertySchema(name: "n", type: .int, isOptional: true),
                    PropertySchema(name: "s", type: .string, isOptional: true),
                    PropertySchema(name: "m", type: .int),
                ]),
                ClassSchema(name: "Dog", properties: [
                    PropertySchema(name: "name", type: .string),
                    PropertySchema(name: "owner", type: .link, isOptional: true, objectClassName: "T"),
                ]),
            ])
            try LeafKernelTests.fill(tx, &rng, count: 12_000)
            let t = try tx.table("T")
            let keys = try tx.keys(t)
            for (i, k) in keys.enumerated() where i % 7 == 3 { try tx.delete(t, k) }
            for i in 0..<2_000 {
                let owner = keys[(i * 13) % keys.count]
                let alive = try tx.exists(t, owner)
                _ = try tx.createObject("Dog", ["name": .string("dog \(i % 40)"), "owner": alive ? .link(owner) : .null])
            }
        }
        return db
    }

    static func leafCount(_ s: Snapshot) throws -> Int {
        var leaves = 0
        try s.scan(try s.table("T")) { _ in
            leaves += 1
            return true
        }
        return leaves
    }

    @Test func runsTileTheTableInKeyOrder() throws {
        let dir = TempDir()
        let db = try Self.makeDatabase(dir.file("a.realm"))
        try db.read { s in
            // Enough leaves for runs of several leaves, and for inner nodes to be skipped by their counts.
            let leaves = try Self.leafCount(s)
            #expect(leaves >= 24, "\(leaves) leaves")
            let t = try s.table("T")
            let all = try s.keys(t)
            for k in Self.runCounts {
                let runs = try s.scanRuns(t, runs: k) { run, reader, scan -> (Int, [ObjectKey], Bool) in
                    var keys: [ObjectKey] = []
                    try scan { leaf in
                        for r in 0..<leaf.count { keys.append(leaf.key(r)) }
                        return true
                    }
                    return (run, keys, reader === s)
                }
                #expect(runs.count == k, "\(k) runs")
                #expect(runs.map(\.0) == Array(0..<runs.count))
                // Only the first run reads through the caller's snapshot; the others through siblings.
                #expect(runs.map(\.2) == (0..<runs.count).map { $0 == 0 }, "\(k) runs")
                #expect(Array(runs.map(\.1).joined()) == all, "\(k) runs")
                if k <= 8 { #expect(runs.allSatisfy { !$0.1.isEmpty }, "\(k) runs: an empty run") }
            }
        }
        // Siblings are closed when the read ends.
        try db.compact()
    }

    /// A run takes the leaves whose first object's position lies in it: cut at every leaf's start, and just
    /// after it, the two sides hold exactly the leaves before and from that leaf.
    @Test func aRunTakesTheLeavesStartingInIt() throws {
        let dir = TempDir()
        let db = try Self.makeDatabase(dir.file("a.realm"))
        try db.read { s in
            let t = try s.table("T")
            guard case .clean(let root) = s.root(of: t.classID) else { throw StorageError.readOnly(path: "not committed") }
            var starts: [Int] = []
            var position = 0
            try s.scan(t) { leaf in
                starts.append(position)
                position += leaf.count
                return true
            }
            let n = position
            func leaves(_ firsts: Range<Int>) throws -> [Int] {
                var found: [Int] = []
                var at = 0
                _ = try TableTree.forEachLeaf(committed: root, source: s, firsts: firsts) { leaf in
                    // Identify a leaf by its first key's position.
                    let key = leaf.key(at: 0)
                    while at < starts.count, try s.key(at: starts[at], in: t)?.rawValue != key { at += 1 }
                    found.append(at)
                    return true
                }
                return found
            }
            for (i, p) in starts.enumerated() {
                #expect(try leaves(0..<p) == Array(0..<i), "cut at \(p)")
                #expect(try leaves(p..<n) == Array(i..<starts.count), "cut at \(p)")
                #expect(try leaves((p + 1)..<n) == Array((i + 1)..<starts.count), "cut after \(p)")
            }
        }
    }

    @Test func queriesAgreeWithOneRun() throws {
        let dir = TempDir()
        let db = try Self.makeDatabase(dir.file("a.realm"))
        let queries = LeafKernelTests.cases.map(\.0) + [
            "n > 0 OR s BEGINSWITH 'Z'", "@links.Dog.owner.@count > 0", "SUBQUERY(@links.Dog.owner, $d, $d.name == 'dog 3').@count > 0",
            "m > 500 SORT(s ASC, m DESC)", "TRUEPREDICATE DISTINCT(n)", "n == 3 LIMIT(5)",
        ]
        try db.read { s in
            for q in queries {
                let bound = try Query.parse(q).bind(to: "T", in: s)
                let one = try bound.evaluate(in: s, executor: Executor(s), runs: 1)
                for k in Self.runCounts.dropFirst() {
                    let many = try bound.evaluate(in: s, executor: Executor(s), runs: k)
                    #expect(many == one, "\(q): \(k) runs")
                }
            }
        }
    }

    @Test func aggregatesAgreeWithOneRun() throws {
        let dir = TempDir()
        let db = try Self.makeDatabase(dir.file("a.realm"))
        try db.read { s in
            let t = try s.table("T")
            let n = try s.property(t, "n"), m = try s.property(t, "m"), str = try s.property(t, "s")
            for k in Self.runCounts {
                #expect(try s.aggregate(m, in: 100...600, runs: k) == s.aggregate(m, in: 100...600, runs: 1), "\(k) runs")
                #expect(try s.aggregate(n, in: -5...5, runs: k) == s.aggregate(n, in: -5...5, runs: 1), "\(k) runs")
                #expect(try s.count(str, equalTo: "Zürich", runs: k) == s.count(str, equalTo: "Zürich", runs: 1), "\(k) runs")
            }
            // And one run agrees with the values.
            var sum: Int64 = 0, count = 0, zurich = 0
            for key in try s.keys(t) {
                if case .int(let v) = try s.value(key, m), (100...600).contains(v) { sum += v; count += 1 }
                if case .string("Zürich") = try s.value(key, str) { zurich += 1 }
            }
            let one = try s.aggregate(m, in: 100...600, runs: 1)
            #expect(one.sum == sum && one.count == count)
            #expect(try s.count(str, equalTo: "Zürich", runs: 1) == zurich)
            #expect(zurich > 0 && count > 0)
        }
    }

    @Test func aCancellationInAnyRunStopsTheQuery() throws {
        let dir = TempDir()
        let db = try Self.makeDatabase(dir.file("a.realm"))
        let checks = Locked(0)
        // The fifth check, in whichever run makes it, cancels: every run stops at its next leaf.
        let progress = QueryProgress { p in
            if checks.withLock({ $0 += 1; return $0 }) == 5 { p.cancel() }
        }
        try db.read { s in
            let leaves = try Self.leafCount(s)
            let bound = try Query.parse("n > 0").bind(to: "T", in: s)
            do {
                _ = try bound.evaluate(in: s, executor: Executor(s), progress: progress, runs: 4)
                Issue.record("a cancelled query gave a result")
            } catch let error as QueryError {
                #expect(error.isCancellation, "\(error)")
            }
            // The runs stopped long before the end.
            #expect(checks.withLock { $0 } < leaves / 2, "\(leaves) leaves")
        }
    }

    @Test func aFailureInOneRunIsThrown() throws {
        let dir = TempDir()
        let db = try Self.makeDatabase(dir.file("a.realm"))
        struct Stop: Error {}
        try db.read { s in
            let t = try s.table("T")
            #expect(throws: Stop.self) {
                _ = try s.scanRuns(t, runs: 4) { run, _, scan -> Int in
                    var leaves = 0
                    try scan { _ in
                        leaves += 1
                        if run == 2 { throw Stop() }
                        return true
                    }
                    return leaves
                }
            }
        }
    }

    @Test func writeTransactionsAndEncryptedFilesReadOneRun() throws {
        let dir = TempDir()
        let db = try Self.makeDatabase(dir.file("a.realm"))
        try db.write { tx in
            let runs = try tx.scanRuns(try tx.table("T"), runs: 4) { _, reader, _ in reader === tx }
            #expect(runs == [true])
        }
        let encrypted = try Self.makeDatabase(dir.file("e.realm"), key: [UInt8](repeating: 7, count: 64))
        try encrypted.read { s in
            let runs = try s.scanRuns(try s.table("T"), runs: 4) { _, reader, _ in reader === s }
            #expect(runs == [true])
        }
    }
}

/// A value shared by test threads.
final class Locked<T>: @unchecked Sendable {
    // Safe: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func withLock<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
