import Foundation
import Synchronization
import Testing
@testable import RealmQuery
@testable import RealmStorage
import TestSupport

/// A query run with a `QueryProgress`: it reports how far it is, gives the same result as without, and stops
/// at its next check once cancelled.
@Suite struct QueryProgressTests {
    static let objects = 20_000

    func makeDatabase() throws -> Database {
        let db = try Database.inMemory(identifier: "query-progress-\(UUID())")
        var rng = SplitMix64(seed: 5)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Dog", properties: [
                PropertySchema(name: "name", type: .string),
                PropertySchema(name: "age", type: .int),
            ]))
            for _ in 0..<Self.objects {
                let name = String((0..<6).map { _ in Character(UnicodeScalar(UInt8(97 + rng.next() % 26))) })
                _ = try tx.createObject("Dog", ["name": .string(name), "age": .int(Int64(rng.next() % 20))])
            }
        }
        return db
    }

    /// Every status a checkpoint saw, in order.
    final class Recorder: Sendable {
        let seen = Mutex<[QueryProgress.Status]>([])
        var statuses: [QueryProgress.Status] { seen.withLock { $0 } }
    }

    @Test func progressCountsEveryObjectScannedThenTheSortAndLeavesTheResultAsItWas() throws {
        let db = try makeDatabase()
        try db.read { s in
            let text = "name CONTAINS[c] 'a' OR age > 15 SORT(name ASC)"
            let bound = try Query.parse(text).bind(to: "Dog", in: s)
            let recorder = Recorder()
            let progress = QueryProgress { p in
                let now = p.current
                recorder.seen.withLock { $0.append(now) }
            }
            let withProgress = try bound.evaluate(in: s, progress: progress)
            #expect(withProgress == (try bound.evaluate(in: s)))
            #expect(!withProgress.isEmpty)
            let scanning = recorder.statuses.filter { $0.phase == .scanning }
            let sorting = recorder.statuses.filter { $0.phase == .sorting }
            // A check per leaf of 256 objects at most, counting up to the whole class.
            #expect(scanning.count > Self.objects / 256)
            #expect(scanning.allSatisfy { $0.total == Self.objects })
            #expect(scanning.map(\.done) == scanning.map(\.done).sorted())
            #expect(scanning.last?.done == Self.objects - 1)
            // Then the sort: its values read, then comparisons, below the estimate until it ends.
            #expect(sorting.count > 2)
            #expect(sorting.allSatisfy { $0.done < $0.total })
            #expect((sorting.last?.done ?? 0) >= withProgress.count)
        }
    }

    /// A predicate that is false whatever the object answers without scanning (no leaf counted), alone, in an
    /// `AND` or sorted; `TRUEPREDICATE` still counts every object.
    @Test func aFalseConstantScansNothing() throws {
        let db = try makeDatabase()
        try db.read { s in
            for text in ["FALSEPREDICATE", "age > 3 AND FALSEPREDICATE", "FALSEPREDICATE AND name BEGINSWITH 'a' SORT(name ASC)"] {
                let recorder = Recorder()
                let progress = QueryProgress { p in
                    let now = p.current
                    recorder.seen.withLock { $0.append(now) }
                }
                let keys = try Query.parse(text).bind(to: "Dog", in: s).evaluate(in: s, progress: progress)
                #expect(keys == [], "\(text)")
                #expect(recorder.statuses.allSatisfy { $0.done == 0 }, "\(text): \(recorder.statuses.suffix(3))")
            }
            let progress = QueryProgress()
            let all = try Query.parse("TRUEPREDICATE").bind(to: "Dog", in: s).evaluate(in: s, progress: progress)
            #expect(all.count == Self.objects)
            #expect(progress.current.done == Self.objects - 1)  // as in the test above: one short of the total
        }
    }

    @Test func cancellingStopsTheScanAtTheNextLeaf() throws {
        let db = try makeDatabase()
        try db.read { s in
            let bound = try Query.parse("name CONTAINS[c] 'a'").bind(to: "Dog", in: s)
            let checks = Mutex(0)
            let progress = QueryProgress { p in
                let n = checks.withLock { $0 += 1; return $0 }
                if n == 3 { p.cancel() }
            }
            #expect { try bound.evaluate(in: s, progress: progress) } throws: { e in
                (e as? QueryError)?.isCancellation == true
            }
            // The check that saw the cancel was the last.
            #expect(checks.withLock { $0 } == 3)
            #expect(progress.current.done < Self.objects / 2)
        }
    }

    @Test func cancellingStopsALongSortBetweenItsSteps() throws {
        let db = try makeDatabase()
        try db.read { s in
            let bound = try Query.parse("TRUEPREDICATE SORT(name DESC)").bind(to: "Dog", in: s)
            // Cancelled once every sort value is read: only the sort's own checks (between passes of the radix
            // sort, or every 65,536 comparisons) can see it, and they see it before the sort ends.
            let progress = QueryProgress { p in
                let now = p.current
                if now.phase == .sorting && now.done > Self.objects { p.cancel() }
            }
            #expect { try bound.evaluate(in: s, progress: progress) } throws: { e in
                (e as? QueryError)?.isCancellation == true
            }
            #expect(progress.current.phase == .sorting)
            #expect(progress.current.done > Self.objects)
            #expect(progress.current.done < progress.current.total - 1)
        }
    }

    @Test func cancellingStopsAQueryOverTheObjectsOfAList() throws {
        let db = try makeDatabase()
        try db.read { s in
            let keys = try s.keys(s.table("Dog"))
            let bound = try Query.parse("age > 3 SORT(age ASC)").bind(to: "Dog", in: s)
            let progress = QueryProgress { p in
                if p.current.done >= 1000 { p.cancel() }
            }
            #expect { try bound.evaluate(in: s, keys: keys, progress: progress) } throws: { e in
                (e as? QueryError)?.isCancellation == true
            }
            #expect(progress.current.phase == .scanning)
            // A progress that is never cancelled gives the plain result.
            #expect(try bound.evaluate(in: s, keys: keys, progress: QueryProgress()) == bound.evaluate(in: s, keys: keys))
        }
    }
}
