import Foundation
import Testing
@testable import RealmQuery
@testable import RealmStorage
import TestSupport

/// A prepared query reuses its binding with new argument values (DECISIONS 40): it must give exactly what
/// binding afresh gives, for every argument, after commits, after schema changes and with arguments of
/// other kinds.
@Suite struct PreparedQueryTests {
    static let queries: [(String, String)] = [
        ("name == $0", "Person"),
        ("name ==[c] $0 OR nickname BEGINSWITH $1", "Person"),
        ("age BETWEEN {$0, $1}", "Person"),
        ("age IN $0", "Person"),
        ("age IN {1, $0, 30}", "Person"),
        ("$0 IN scores", "Person"),
        ("ANY dogs.age > $0 AND height < $1", "Person"),
        ("SUBQUERY(dogs, $x, $x.age >= $0).@count > 1", "Person"),
        ("owner.name == $0", "Dog"),
        ("ageOpt == $0", "Person"),
        ("age > $0 SORT(name ASC) LIMIT(5)", "Person"),
    ]

    /// Arguments of the same kinds for each query, drawn from the fixture's values.
    static func arguments(_ i: Int, _ rng: inout SplitMix64) -> [QueryArgument] {
        func int(_ n: UInt64) -> Value { .int(Int64(rng.next() % n)) }
        func name() -> Value { .string(fixtureNames[Int(rng.next() % UInt64(fixtureNames.count))]) }
        switch i {
        case 0: return [.value(name())]
        case 1: return [.value(name()), .value(.string(String(fixtureNames[Int(rng.next() % 5)].prefix(2))))]
        case 2: let a = int(90); return [.value(a), .value(.int(Int64(rng.next() % 90)))]
        case 3: return [.list([int(90), int(90), int(90)])]
        case 4: return [.value(int(90))]
        case 5: return [.value(int(100))]
        case 6: return [.value(int(15)), .value(.double(Double(rng.next() % 100) - 50))]
        case 7: return [.value(int(15))]
        case 8: return [.value(name())]
        case 9: return [.value(rng.next() % 3 == 0 ? .null : .int(Int64(rng.next() % 10) - 5))]
        default: return [.value(int(90))]
        }
    }

    @Test func preparedMatchesBindingAfreshForRandomArgumentsAndAfterCommits() throws {
        let f = try Fixture()
        var rng = SplitMix64(seed: 40)
        let prepared = Self.queries.map { PreparedQuery(try! Query.parse($0.0), on: $0.1) }
        for round in 0..<3 {
            let s = try f.db.snapshot()
            for (i, (text, cls)) in Self.queries.enumerated() {
                for _ in 0..<40 {
                    let args = Self.arguments(i, &rng)
                    let fresh = try Query.parse(text).bind(to: cls, in: s, arguments: args).evaluate(in: s)
                    let reused = try prepared[i].evaluate(in: s, arguments: args)
                    #expect(reused == fresh, "\(text) with \(args), round \(round)")
                }
            }
            s.close()
            // Change the data between rounds: the same prepared queries follow.
            try f.db.write { tx in
                let people = try tx.table("Person")
                for k in try tx.keys(people).prefix(5) {
                    try tx.set(k, tx.property(people, "name"), .string(fixtureNames[Int(rng.next() % UInt64(fixtureNames.count))]))
                    try tx.set(k, tx.property(people, "age"), .int(Int64(rng.next() % 90)))
                }
            }
        }
    }

    @Test func argumentsOfAnotherKindAreCheckedAgain() throws {
        let f = try Fixture()
        let s = try f.db.snapshot()
        defer { s.close() }
        let p = try PreparedQuery("age == $0", on: "Person")
        #expect(try p.evaluate(in: s, arguments: [.value(.int(30))]) == f.expectedPeople { $0.age == 30 })
        // A string for an int property: the same error binding afresh gives, with its place.
        do {
            _ = try p.evaluate(in: s, arguments: [.value(.string("thirty"))])
            Issue.record("a string argument for an int property was accepted")
        } catch let e as QueryError {
            #expect(e.kind == .typeMismatch)
            #expect(e.range == SourceRange(7, 9))
        }
        // Too few arguments.
        #expect(throws: QueryError.self) { try p.evaluate(in: s, arguments: []) }
        // And back.
        #expect(try p.evaluate(in: s, arguments: [.value(.int(31))]) == f.expectedPeople { $0.age == 31 })
        // A double for the same int property is another kind: bound again, compared numerically.
        #expect(try p.evaluate(in: s, arguments: [.value(.double(31))]) == f.expectedPeople { $0.age == 31 })
    }

    @Test func aSchemaChangeBindsAgain() throws {
        let f = try Fixture()
        let p = try PreparedQuery("nickname == $0", on: "Person")
        let before = try f.db.read { try p.evaluate(in: $0, arguments: [.value(.string("Bob"))]) }
        #expect(before == f.expectedPeople { $0.nickname == "Bob" })
        try f.db.write { tx in try tx.removeProperty("Person", "nickname") }
        do {
            _ = try f.db.read { try p.evaluate(in: $0, arguments: [.value(.string("Bob"))]) }
            Issue.record("a removed property was still queried")
        } catch let e as QueryError {
            #expect(e.kind == .unknownProperty)
        }
        // Added back (a new, empty column): found again, and empty.
        try f.db.write { tx in try tx.addProperty("Person", PropertySchema(name: "nickname", type: .string, isOptional: true)) }
        #expect(try f.db.read { try p.evaluate(in: $0, arguments: [.value(.string("Bob"))]) } == [])
        #expect(try f.db.read { try p.evaluate(in: $0, arguments: [.value(.null)]) }.count == f.people.count)
    }

    /// A write transaction keeps its version while its schema changes: a prepared query evaluated in it
    /// checks the schema every time.
    @Test func aSchemaChangeInsideOneWriteTransactionBindsAgain() throws {
        let f = try Fixture()
        let p = try PreparedQuery("nickname == $0", on: "Person")
        let tx = try f.db.beginWrite()
        defer { tx.rollback() }
        #expect(try p.evaluate(in: tx, arguments: [.value(.string("Bob"))]) == f.expectedPeople { $0.nickname == "Bob" })
        try tx.removeProperty("Person", "nickname")
        do {
            _ = try p.evaluate(in: tx, arguments: [.value(.string("Bob"))])
            Issue.record("a property removed in the same transaction was still queried")
        } catch let e as QueryError {
            #expect(e.kind == .unknownProperty)
        }
    }

    /// Evaluated again and again in one read snapshot (the schema check is skipped there), the results
    /// still follow the arguments.
    @Test func repeatedEvaluationInOneSnapshotFollowsTheArguments() throws {
        let f = try Fixture()
        let p = try PreparedQuery("owner.name == $0", on: "Dog")
        try f.db.read { s in
            for _ in 0..<3 {
                for name in fixtureNames.prefix(12) {
                    let fresh = try Query.parse("owner.name == $0").bind(to: "Dog", in: s, arguments: [.value(.string(name))]).evaluate(in: s)
                    #expect(try p.evaluate(in: s, arguments: [.value(.string(name))]) == fresh)
                }
            }
        }
    }

    @Test func aQueryBuiltInCodeWithoutTextStillGetsItsArguments() throws {
        let f = try Fixture()
        // Built in code, without positions: both arguments (and the literal) are at the same place, so the
        // prepared query must not put one argument's value in the other's place.
        let q = Query(predicate: .or([
            .comparison(Comparison(lhs: .keyPath(KeyPath("age")), op: .equal, rhs: .argument(0, SourceRange(0, 0)))),
            .comparison(Comparison(lhs: .keyPath(KeyPath("age")), op: .equal, rhs: .argument(1, SourceRange(0, 0)))),
            .comparison(Comparison(lhs: .keyPath(KeyPath("age")), op: .equal, rhs: .literal(.int(200), SourceRange(0, 0)))),
        ]))
        let p = PreparedQuery(q, on: "Person")
        try f.db.read { s in
            for (a, b) in [(30, 40), (41, 12), (7, 7)] {
                let got = try p.evaluate(in: s, arguments: [.value(.int(Int64(a))), .value(.int(Int64(b)))])
                #expect(got == f.expectedPeople { $0.age == Int64(a) || $0.age == Int64(b) })
            }
        }
    }

    /// A query with several constants (arguments and literals at different places) is bound once and then
    /// reused with each new argument value; the answers still follow the values.
    @Test(arguments: [
        "age > $0 AND name != $1",
        "age > $0 AND age < 200",
        "age IN {1, $0, 30} OR name == $1",
        "ANY dogs.age > $0 AND height < 1000",
    ])
    func severalConstantsAreBoundOnce(_ text: String) throws {
        let f = try Fixture()
        let p = try PreparedQuery(text, on: "Person")
        var answers: Set<[ObjectKey]> = []
        try f.db.read { s in
            for n in [10, 40, 70, 10] {
                let args: [QueryArgument] = [.value(.int(Int64(n))), .value(.string(fixtureNames[n % fixtureNames.count]))]
                let used = Array(args.prefix(text.contains("$1") ? 2 : 1))
                let fresh = try Query.parse(text).bind(to: "Person", in: s, arguments: used).evaluate(in: s)
                let got = try p.evaluate(in: s, arguments: used)
                #expect(got == fresh, "\(text) with \(n)")
                answers.insert(got)
            }
        }
        #expect(p.bindings == 1, "\(text)")
        #expect(answers.count > 1, "\(text): every argument gave the same answer")
    }

    // MARK: One `==` on an indexed property (DECISIONS 112)

    /// Evaluates `p` with each value as its argument, twice over in one snapshot (the first evaluation binds,
    /// later ones may take a direct lookup), expecting what binding `text` afresh gives; returns the answers.
    static func answersMatchingFreshBindings(_ p: PreparedQuery, _ text: String, on cls: String, _ values: [Value],
                                             in db: Database) throws -> Set<[ObjectKey]> {
        var answers: Set<[ObjectKey]> = []
        try db.read { s in
            for round in 0..<2 {
                for v in values {
                    let fresh = try Query.parse(text).bind(to: cls, in: s, arguments: [.value(v)]).evaluate(in: s)
                    let got = try p.evaluate(in: s, arguments: [.value(v)])
                    #expect(got == fresh, "\(text) with \(v), round \(round)")
                    answers.insert(got)
                }
            }
        }
        return answers
    }

    /// Answered by the index directly after the first evaluation in a snapshot: the same keys as binding
    /// afresh, for strings (present, absent, CJK, emoji), ints, the int primary key, numbers of other types
    /// (converted, or matching nothing), and null (left to the scan).
    @Test(arguments: [
        ("name == $0", [Value.string("Bob"), .string("Zoë"), .string("nobody"), .string("東京タワー"), .string("🦄 unicorn"),
                        .string(""), .null, .string("Ann")]),
        ("age == $0", [Value.int(30), .int(31), .int(-1), .double(30), .double(30.5), .float(41), .null, .int(12)]),
        ("id == $0", [Value.int(1), .int(-20), .int(7), .int(1_000), .double(4), .double(-5), .double(4.5), .int(-17)]),
        ("$0 == name", [Value.string("Bob"), .string("nobody"), .string("Émile")]),
    ])
    func indexedEqualityAnswersAsBindingAfresh(_ text: String, _ values: [Value]) throws {
        let f = try Fixture()
        let p = try PreparedQuery(text, on: "Person")
        // Ages the fixture holds (drawn at random), as ints and as doubles (after the first of a kind, the
        // index is asked directly).
        let held: [Value] = text == "age == $0"
            ? f.people.prefix(3).map { .int($0.age) } + f.people[3..<6].map { .double(Double($0.age)) } : []
        let answers = try Self.answersMatchingFreshBindings(p, text, on: "Person", values + held, in: f.db)
        #expect(answers.count > 2, "\(text): the values gave too few different answers")
        if !text.hasPrefix("$0") { #expect(p.indexedLookups > values.count / 2, "\(text): the index was not asked directly") }
    }

    @Test func aLiteralIsLookedUpDirectlyToo() throws {
        let f = try Fixture()
        let p = try PreparedQuery("name == 'Zoë'", on: "Person")
        try f.db.read { s in
            for _ in 0..<3 {
                let got = try p.evaluate(in: s)
                #expect(got == f.expectedPeople { $0.name == "Zoë" })
            }
        }
        #expect(p.indexedLookups == 2)
    }

    /// Between two uses of the same prepared query the indexed property is removed and added again as an
    /// indexed int, and its objects change: each use answers in its own schema and version.
    @Test func aSchemaChangeBetweenTwoIndexedLookupsGivesTheNewAnswer() throws {
        let f = try Fixture()
        let p = try PreparedQuery("name == $0", on: "Person")
        try f.db.read { s in
            for _ in 0..<2 {
                let got = try p.evaluate(in: s, arguments: [.value(.string("Bob"))])
                #expect(got == f.expectedPeople { $0.name == "Bob" })
            }
        }
        // A new version, same schema: a renamed object follows.
        let first = f.expectedPeople { $0.name == "Bob" }[0]
        try f.db.write { tx in try tx.set(first, tx.property(tx.table("Person"), "name"), .string("Robert")) }
        try f.db.read { s in
            for _ in 0..<2 {
                let got = try p.evaluate(in: s, arguments: [.value(.string("Bob"))])
                #expect(got == Array(f.expectedPeople { $0.name == "Bob" }.dropFirst()))
            }
        }
        try f.db.write { tx in
            try tx.removeProperty("Person", "name")
            try tx.addProperty("Person", PropertySchema(name: "name", type: .int, isIndexed: true))
            let t = try tx.table("Person")
            let name = try tx.property(t, "name")
            for (i, k) in try tx.keys(t).enumerated() where i % 3 == 0 { try tx.set(k, name, .int(7)) }
        }
        try f.db.read { s in
            let t = try s.table("Person")
            let sevens = try s.keys(t).enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
            do {
                _ = try p.evaluate(in: s, arguments: [.value(.string("Bob"))])
                Issue.record("a string was compared with the new int property")
            } catch let e as QueryError {
                #expect(e.kind == .typeMismatch)
            }
            for _ in 0..<2 {
                let got = try p.evaluate(in: s, arguments: [.value(.int(7))])
                #expect(got == sevens)
            }
            let none = try p.evaluate(in: s, arguments: [.value(.int(8))])
            #expect(none == [])
        }
        // The index removed: the same answers from a scan.
        try f.db.write { tx in try tx.setIndexed("Person", "name", false) }
        try f.db.read { s in
            let before = p.indexedLookups
            for _ in 0..<2 {
                let got = try p.evaluate(in: s, arguments: [.value(.int(7))])
                #expect(got.count == (f.people.count + 2) / 3)
            }
            #expect(p.indexedLookups == before)
        }
    }

    // MARK: One `==` on an indexed property through a link

    /// `owner.name == $0` and the like are answered by the index and the backlinks of its matches after the
    /// first evaluation in a snapshot: the same keys as binding afresh, for names several people share, absent
    /// ones, null (left to the general path), and numbers converted or matching nothing.
    @Test(arguments: [
        ("owner.name == $0", [Value.string("Bob"), .string("Zoë"), .string("nobody"), .string("東京タワー"), .string("🦄 unicorn"),
                              .string(""), .null, .string("Ann")]),
        ("owner.age == $0", [Value.int(30), .int(-1), .double(30.5), .null]),
        ("owner.id == $0", [Value.int(1), .int(-20), .int(7), .double(4), .double(4.5), .int(-17)]),
    ])
    func linkedIndexedEqualityAnswersAsBindingAfresh(_ text: String, _ values: [Value]) throws {
        let f = try Fixture()
        let p = try PreparedQuery(text, on: "Dog")
        // Values the owners hold, drawn from the fixture, so that most lookups find dogs.
        let owned = f.dogs.compactMap(\.owner).prefix(6).map { f.people[$0] }
        let held: [Value] = text.hasPrefix("owner.name") ? owned.map { .string($0.name) }
            : text.hasPrefix("owner.age") ? owned.map { .int($0.age) } : owned.map { .int($0.id) }
        let answers = try Self.answersMatchingFreshBindings(p, text, on: "Dog", values + held, in: f.db)
        #expect(answers.count > 2, "\(text): the values gave too few different answers")
        #expect(p.indexedLookups > values.count / 2, "\(text): the index was not asked directly")
    }

    /// Through a list of links: a post that holds a tag twice, or two tags of the label, comes once, in key
    /// order; a label on more tags than the backwards plan follows is answered by the general path, the same.
    @Test func linkedIndexedEqualityThroughAListGivesEachOriginOnce() throws {
        let dir = TempDir("linkedindexed")
        let db = try Database.open(path: dir.file("f.realm"))
        let (posts, tags) = try db.write { tx -> ([ObjectKey], [ObjectKey]) in
            try tx.createClasses([
                ClassSchema(name: "Tag", properties: [PropertySchema(name: "label", type: .string, isIndexed: true)]),
                ClassSchema(name: "Post", properties: [PropertySchema(name: "n", type: .int), .list("tags", of: "Tag")]),
            ])
            // Tags 0 and 1 are both "swift"; tags 10..<30 are all "common"; the rest have labels of their own.
            let tags = try (0..<40).map { i in
                try tx.createObject("Tag", ["label": .string(i < 2 ? "swift" : (10..<30).contains(i) ? "common" : "t\(i)")])
            }
            var posts: [ObjectKey] = []
            for i in 0..<12 {
                // Created in the reverse order of their tags, so that backlinks do not come out in key order.
                let held: [ObjectKey] = i == 0 ? [tags[0], tags[0], tags[1]] : i == 1 ? [tags[1], tags[5]]
                    : [tags[(i * 7) % 40], tags[10 + i], tags[39 - i]]
                posts.append(try tx.createObject("Post", ["n": .int(Int64(i))], lists: ["tags": held.map(Value.link)]))
            }
            return (posts, tags)
        }
        #expect(tags.count == 40)
        let p = try PreparedQuery("tags.label == $0", on: "Post")
        try db.read { s in
            for label in ["swift", "t5", "common", "nothing", "t5", "swift", "common"] {
                let fresh = try Query.parse("tags.label == $0").bind(to: "Post", in: s, arguments: [.value(.string(label))]).evaluate(in: s)
                let got = try p.evaluate(in: s, arguments: [.value(.string(label))])
                #expect(got == fresh, "\(label)")
                #expect(got == got.sortedUnique(), "\(label): not each once in key order")
            }
            #expect(try p.evaluate(in: s, arguments: [.value(.string("swift"))]) == [posts[0], posts[1]])
        }
        // "swift" and "t5" twice each after the first evaluation; "common" (20 tags for 12 posts) never.
        #expect(p.indexedLookups == 5)
    }
}
