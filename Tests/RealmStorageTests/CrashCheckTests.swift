import Foundation
import Testing
@testable import RealmStorage
@testable import realm_storage_worker

/// The checks the crash, fault and power-loss tests make of what a file holds see the sets, dictionaries,
/// embedded objects and mixed values the workloads write: each workload's steps applied in this process leave
/// no problem, and one element changed afterwards (as a torn or half-applied commit would leave it) is reported.
@Suite struct CrashCheckTests {
    @Test func theMixedWorkloadsCheckSeesItsCollections() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("m.realm"))
        let steps = (0..<28).filter { Mixed.steps[$0].commits }
        for i in steps { try db.write { tx in try Mixed.apply(i, ns: 0, tx) } }
        let expected = Mixed.model(applied: Set(steps))
        #expect(try db.read { try mixedMismatches($0, expected: expected) } == [])
        #expect(try db.verify().isOK)

        func problems(after change: (WriteTransaction, ObjectKey, TableHandle) throws -> Void) throws -> [String] {
            let tx = try db.beginWrite()
            defer { tx.rollback() }
            let items = try tx.table("Item")
            let item = try #require(try tx.object(items, primaryKey: .int(Mixed.itemID(23, 0, ns: 0))))
            try change(tx, item, items)
            return try mixedMismatches(tx, expected: expected)
        }
        #expect(try !problems { tx, k, t in try tx.setInsert(k, tx.property(t, "tags"), .string("extra")) }.isEmpty)
        #expect(try !problems { tx, k, t in try tx.dictionarySet(k, tx.property(t, "scores"), key: "b", .int(-5)) }.isEmpty)
        #expect(try !problems { tx, k, t in try tx.dictionarySet(k, tx.property(t, "attrs"), key: "n", .int(-1)) }.isEmpty)
        #expect(try !problems { tx, k, t in try tx.set(k, tx.property(t, "anyValue"), .int(1)) }.isEmpty)
        #expect(try !problems { tx, k, t in try tx.setRemoveAll(k, tx.property(t, "marks")) }.isEmpty)
        #expect(try !problems { tx, k, t in try tx.set(k, tx.property(t, "address"), .null) }.isEmpty)
        #expect(try !problems { tx, k, t in
            guard case .link(let a) = try tx.value(k, tx.property(t, "address")) else { return }
            try tx.set(a, tx.property(tx.table("Address"), "geo"), .null)
        }.isEmpty)
    }

    @Test func theCommitLoopsCheckSeesItsCollections() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("c.realm"))
        for i in 0..<60 { try db.write { tx in try CommitLoop.apply(i, tx) } }
        #expect(try db.read { try commitLoopMismatches($0) } == [])
        func problems(after change: (WriteTransaction, ObjectKey, TableHandle) throws -> Void) throws -> [String] {
            let tx = try db.beginWrite()
            defer { tx.rollback() }
            let counters = try tx.table("Counter")
            try change(tx, try #require(try tx.object(counters, primaryKey: .int(55))), counters)
            return try commitLoopMismatches(tx)
        }
        #expect(try !problems { tx, k, t in try tx.setInsert(k, tx.property(t, "marks"), .string("x")) }.isEmpty)
        #expect(try !problems { tx, k, t in try tx.dictionarySet(k, tx.property(t, "attrs"), key: "rev", .int(0)) }.isEmpty)
        #expect(try !problems { tx, k, t in try tx.dictionarySet(k, tx.property(t, "attrs"), key: "bucket", .null) }.isEmpty)
        #expect(try !problems { tx, k, t in try tx.set(k, tx.property(t, "place"), .null) }.isEmpty)
        #expect(try !problems { tx, k, _ in
            let buckets = try tx.table("Bucket")
            let b = try #require(try tx.object(buckets, primaryKey: .int(55 % Int64(CommitLoop.bucketCount))))
            try tx.setRemove(b, tx.property(buckets, "members"), .link(k))
        }.isEmpty)
    }

    @Test func theDurabilityScenariosCheckSeesItsCollections() throws {
        let dir = TempDir()
        let path = dir.file("d.realm")
        do {
            let db = try DurabilityScenarios.open(path)
            for n in 0..<4 { try db.write { tx in try DurabilityScenarios.create(tx, tx.table("Item"), n, payload: [1]) } }
            #expect(try DurabilityTests.contentProblems(db) == [])
            try db.write { tx in
                let t = try tx.table("Item")
                let k = try #require(try tx.keys(t).last)
                try tx.dictionarySet(k, tx.property(t, "scores"), key: "n", .int(77))
            }
            #expect(try DurabilityTests.contentProblems(db).count == 1)
            try db.write { tx in
                let t = try tx.table("Item")
                try tx.set(try #require(try tx.keys(t).first), tx.property(t, "place"), .null)
            }
            #expect(try DurabilityTests.contentProblems(db).count == 2)
        }
    }
}
