import Foundation
import Synchronization
import Testing
@testable import RealmQuery
@testable import RealmStorage
import TestSupport

/// The table of parsed query texts shared by every thread (DECISIONS 114): it gives what parsing gives, for
/// each text, stays within its bound, is safe to use from many threads at once, and a schema change between
/// two uses of one text is met when the query is bound.
@Suite struct ParsedQueriesTests {
    static let texts = [
        "age > 1", "age > 2", "age >= 1", "name == $0", "name ==[c] $0", "name == 'x' OR age < 3",
        "ANY dogs.age > $0 SORT(name ASC) LIMIT(5)", "name BEGINSWITH %@", "%@ IN scores", "TRUEPREDICATE",
        "名前 == 'é'", "nickname == nil",
    ]

    @Test func eachTextGivesWhatParsingGives() throws {
        for _ in 0..<2 {
            for t in Self.texts {
                let fresh = try Query.uncachedParse(t)
                #expect(try Query.parse(t) == fresh, "\(t)")
                var args: [QueryArgument] = [.value(.int(1))]
                #expect(try Query.parse(t, arguments: &args) == fresh, "\(t)")
                #expect(args == [.value(.int(1))], "\(t)")
            }
        }
        // Texts that differ in one character are different queries.
        #expect(try Query.parse("age > 1") != Query.parse("age > 2"))
    }

    /// `%K` takes its key path from the arguments: the same text with other arguments is another query.
    @Test func keyPathsFromArgumentsAreNotTakenFromTheTable() throws {
        var a: [QueryArgument] = [.value(.string("name")), .value(.string("x"))]
        var b: [QueryArgument] = [.value(.string("nickname")), .value(.string("x"))]
        let qa = try Query.parse("%K == %@", arguments: &a)
        let qb = try Query.parse("%K == %@", arguments: &b)
        #expect(qa != qb)
        #expect(a == [.value(.string("x"))] && b == [.value(.string("x"))])
        #expect(qa.predicate.description.contains("nickname") == false)
        #expect(qb.predicate.description.contains("nickname"))
    }

    @Test func errorsAreReportedEveryTime() {
        for _ in 0..<2 {
            #expect(throws: QueryError.self) { try Query.parse("age >") }
        }
    }

    @Test func theTableStaysBounded() throws {
        for i in 0..<(ParsedQueries.limit * 2 + 3) {
            let t = "age > \(i)"
            #expect(try Query.parse(t) == Query.uncachedParse(t))
            #expect(ParsedQueries.count <= ParsedQueries.limit)
        }
    }

    /// Eight threads parse texts from a set larger than the table (so it is emptied while others read it):
    /// every answer is the text's own query.
    @Test func manyThreadsShareTheTable() throws {
        let texts = (0..<(ParsedQueries.limit + 50)).map { "age > \($0) AND name == $0" } + Self.texts
        let expected = try texts.map { try Query.uncachedParse($0) }
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var rng = SplitMix64(seed: UInt64(thread) + 1)
            for _ in 0..<2_000 {
                let i = Int(rng.next() % UInt64(texts.count))
                if (try? Query.parse(texts[i])) != expected[i] { wrong.withLock { $0 += 1 } }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
        #expect(ParsedQueries.count <= ParsedQueries.limit)
    }

    /// The same text, evaluated before and after its property is removed and added again: the error, then
    /// the new answer.
    @Test func aSchemaChangeBetweenTwoUsesOfOneText() throws {
        let f = try Fixture()
        let text = "nickname == $0"
        #expect(try f.run(text, [.value(.string("Bob"))]) == f.expectedPeople { $0.nickname == "Bob" })
        try f.db.write { tx in try tx.removeProperty("Person", "nickname") }
        do {
            _ = try f.run(text, [.value(.string("Bob"))])
            Issue.record("a removed property was still queried")
        } catch let e as QueryError {
            #expect(e.kind == .unknownProperty)
        }
        try f.db.write { tx in try tx.addProperty("Person", PropertySchema(name: "nickname", type: .int, isOptional: true)) }
        #expect(try f.run(text, [.value(.int(3))]) == [])
        do {
            _ = try f.run(text, [.value(.string("Bob"))])
            Issue.record("a string was compared with the new int property")
        } catch let e as QueryError {
            #expect(e.kind == .typeMismatch)
        }
    }
}
