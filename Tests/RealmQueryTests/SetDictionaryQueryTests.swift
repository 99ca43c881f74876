import Foundation
import Testing
import TestSupport
@testable import RealmQuery
import RealmStorage

/// Queries over sets and dictionaries, with the counts Realm Core gives for the same data (its
/// `test_parser.cpp` Parser_Set, Parser_SetLinks, Parser_Dictionary, Parser_DictionaryObjects).
@Suite struct SetDictionaryQueryTests {
    final class Fixture: @unchecked Sendable {
        let dir = TempDir()
        let db: Database
        var people: [String: ObjectKey] = [:]

        init() throws {
            db = try Database.open(path: dir.file("q.realm"))
            try db.write { tx in
                try tx.createClasses([
                    ClassSchema(name: "Dog", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        PropertySchema(name: "age", type: .int),
                    ]),
                    ClassSchema(name: "Person", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        PropertySchema(name: "age", type: .int),
                        PropertySchema(name: "tags", type: .string, isSet: true),
                        PropertySchema(name: "lucky", type: .int, isSet: true),
                        .set("friends", of: "Person"),
                        PropertySchema(name: "scores", type: .int, isOptional: true, isDictionary: true),
                        .dictionary("pets", of: "Dog"),
                        PropertySchema(name: "extra", type: .mixed, isOptional: true),
                    ]),
                ])
                var dogs: [String: ObjectKey] = [:]
                for (n, a) in [("Rex", 5), ("Fido", 3), ("Spot", 8)] {
                    dogs[n] = try tx.createObject("Dog", ["name": .string(n), "age": .int(Int64(a))])
                }
                let rows: [(String, Int, [String], [Int64], [(String, Value)], [(String, String?)])] = [
                    ("Ann", 30, ["a", "b"], [1, 2, 3], [("math", .int(90)), ("art", .int(70))], [("d1", "Rex"), ("d2", "Fido")]),
                    ("Bob", 25, ["b"], [], [("math", .int(60)), ("gym", .null)], [("d1", "Rex"), ("none", nil)]),
                    ("Cy", 40, [], [7], [], []),
                    ("Dee", 35, ["c", "a", "d"], [2], [("art", .int(95))], [("d3", "Spot")]),
                    ("Eve", 20, ["A"], [-1, 5], [("math", .int(80)), ("art", .int(80))], []),
                    ("Fay", 50, [], [], [], []),
                ]
                let person = try tx.table("Person")
                for r in rows {
                    let k = try tx.createObject("Person", ["name": .string(r.0), "age": .int(Int64(r.1))])
                    people[r.0] = k
                    try tx.setAssign(k, try tx.property(person, "tags"), r.2.map { .string($0) })
                    try tx.setAssign(k, try tx.property(person, "lucky"), r.3.map { .int($0) })
                    try tx.setDictionary(k, try tx.property(person, "scores"), ValueDictionary(r.4))
                    try tx.setDictionary(k, try tx.property(person, "pets"),
                                         ValueDictionary(r.5.map { ($0.0, $0.1.map { .link(dogs[$0]!) } ?? .null) }))
                }
                let dogID = try #require(tx.classID(named: "Dog"))
                let extras: [(String, Value)] = [
                    ("Ann", .int(3)), ("Bob", .string("hi")), ("Cy", .double(3.0)),
                    ("Dee", .typedLink(classID: dogID, key: dogs["Rex"]!)),
                    ("Eve", .list([.int(1), .string("x"), .dictionary(ValueDictionary([("k", .int(2))]))])),
                    ("Fay", .dictionary(ValueDictionary([("k", .int(5)), ("n", .list([.int(1), .int(2)])),
                                                         ("d", .typedLink(classID: dogID, key: dogs["Fido"]!))]))),
                ]
                for (n, v) in extras { try tx.set(people[n]!, "Person", "extra", v) }
                let friends = try tx.property(person, "friends")
                for (a, bs) in [("Ann", ["Bob"]), ("Bob", ["Ann", "Cy"]), ("Dee", ["Ann"])] {
                    try tx.setAssign(people[a]!, friends, bs.map { .link(people[$0]!) })
                }
            }
        }

        func names(_ query: String, on cls: String = "Person") throws -> [String] {
            let s = try db.snapshot()
            defer { s.close() }
            let t = try s.table(cls)
            let h = try s.property(t, "name")
            return try Query.evaluate(query, on: cls, in: s).map { k -> String in
                if case .string(let n) = try s.value(k, h) { return n }
                return "?"
            }.sorted()
        }
    }

    static let fixture = Result { try Fixture() }

    static let setCases: [(String, [String])] = [
        ("tags == 'a'", ["Ann", "Dee"]),
        ("ANY tags == 'b'", ["Ann", "Bob"]),
        ("ALL tags == 'b'", ["Bob", "Cy", "Fay"]),
        ("NONE tags == 'b'", ["Cy", "Dee", "Eve", "Fay"]),
        ("tags ==[c] 'a'", ["Ann", "Dee", "Eve"]),
        ("tags BEGINSWITH 'c'", ["Dee"]),
        ("'c' IN tags", ["Dee"]),
        ("tags.@count == 0", ["Cy", "Fay"]),
        ("tags.@size >= 2", ["Ann", "Dee"]),
        ("lucky.@max == 3", ["Ann"]),
        ("lucky.@min < 0", ["Eve"]),
        ("lucky.@sum == 6", ["Ann"]),
        ("lucky.@avg == 2", ["Ann", "Dee", "Eve"]),
        ("lucky.@sum == 0", ["Bob", "Fay"]),
        ("lucky.@avg == nil", ["Bob", "Fay"]),
        ("lucky > 6", ["Cy"]),
        ("ALL lucky > 0", ["Ann", "Bob", "Cy", "Dee", "Fay"]),
        ("friends.name == 'Ann'", ["Bob", "Dee"]),
        ("friends.@count == 2", ["Bob"]),
        ("SUBQUERY(friends, $f, $f.age > 28).@count > 0", ["Bob", "Dee"]),
        ("ALL friends.age > 26", ["Bob", "Cy", "Dee", "Eve", "Fay"]),
        ("@links.Person.friends.@count == 0", ["Dee", "Eve", "Fay"]),
    ]

    @Test(arguments: setCases)
    func sets(_ c: (String, [String])) throws {
        #expect(try Self.fixture.get().names(c.0) == c.1, "\(c.0)")
    }

    static let dictionaryCases: [(String, [String])] = [
        ("scores['math'] > 70", ["Ann", "Eve"]),
        ("scores.math > 70", ["Ann", "Eve"]),
        ("scores['math'] == nil", ["Cy", "Dee", "Fay"]),
        ("scores['gym'] == nil", ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]),
        ("scores['art'] IN {70, 95}", ["Ann", "Dee"]),
        ("scores.@keys == 'art'", ["Ann", "Dee", "Eve"]),
        ("ANY scores.@keys == 'gym'", ["Bob"]),
        ("NONE scores.@keys == 'math'", ["Cy", "Dee", "Fay"]),
        ("scores.@keys BEGINSWITH 'g'", ["Bob"]),
        ("scores.@allKeys == 'gym'", ["Bob"]),
        ("scores.@values > 85", ["Ann", "Dee"]),
        ("scores > 85", ["Ann", "Dee"]),
        ("ALL scores.@values >= 70", ["Ann", "Cy", "Dee", "Eve", "Fay"]),
        ("scores.@count == 2", ["Ann", "Bob", "Eve"]),
        ("scores.@size == 0", ["Cy", "Fay"]),
        ("scores.@max == 95", ["Dee"]),
        ("scores.@min == 60", ["Bob"]),
        ("scores.@sum == 160", ["Ann", "Eve"]),
        ("scores.@avg == 80", ["Ann", "Eve"]),
        ("scores.@type == 'int'", ["Ann", "Bob", "Dee", "Eve"]),
        ("pets.@values.age > 4", ["Ann", "Bob", "Dee"]),
        ("pets['d1'].name == 'Rex'", ["Ann", "Bob"]),
        ("pets.@values == obj('Dog', 'Fido')", ["Ann"]),
        ("SUBQUERY(pets, $d, $d.age < 4).@count == 1", ["Ann"]),
    ]

    @Test(arguments: dictionaryCases)
    func dictionaries(_ c: (String, [String])) throws {
        #expect(try Self.fixture.get().names(c.0) == c.1, "\(c.0)")
    }

    static let mixedCases: [(String, [String])] = [
        ("extra == 3", ["Ann", "Cy"]),
        ("extra[0] == 1", ["Eve"]),
        ("extra[2]['k'] == 2", ["Eve"]),
        ("extra['k'] == 5", ["Fay"]),
        ("extra['n'][1] == 2", ["Fay"]),
        ("extra['missing'] == nil", ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]),
        ("extra.@type == 'list'", ["Eve"]),
        ("extra.@type == 'dictionary'", ["Fay"]),
        ("extra.@type == 'object'", ["Fay"]),
        ("extra.@type == 'link'", ["Dee"]),
        ("extra.@type == 'collection'", ["Eve", "Fay"]),
        ("extra[1].@type == 'string'", ["Eve"]),
    ]

    @Test(arguments: mixedCases)
    func mixedValues(_ c: (String, [String])) throws {
        #expect(try Self.fixture.get().names(c.0) == c.1, "\(c.0)")
    }

    /// The set and dictionary comparisons scanned in place (`CollectionColumnNode`) answer as object by object
    /// (`evaluate(in:keys:)`, which tests each object through `matches`); inside a write transaction, whose
    /// changed sets and dictionaries are not in the leaves until commit, a scan sees those changes.
    @Test func scansAgreeWithObjectByObjectAndSeeUncommittedChanges() throws {
        let f = try Fixture()
        let cases = (Self.setCases + Self.dictionaryCases).map(\.0)
            + ["tags != 'a'", "ALL tags BEGINSWITH 'a'", "NONE tags CONTAINS 'd'", "tags LIKE '?'", "ANY tags > 'b'",
               "scores['art'] >= 80", "scores['math'] != nil", "scores['math'] BETWEEN {60, 85}"]
        func answers(_ s: Snapshot) throws -> [String: (scan: [ObjectKey], each: [ObjectKey])] {
            let all = try s.keys(s.table("Person"))
            var out: [String: ([ObjectKey], [ObjectKey])] = [:]
            for q in cases {
                let bound = try Query.parse(q).bind(to: "Person", in: s)
                out[q] = (try bound.evaluate(in: s), try bound.evaluate(in: s, keys: all))
            }
            return out
        }
        let s = try f.db.snapshot()
        for (q, a) in try answers(s) { #expect(a.scan == a.each, "\(q): scanned \(a.scan), object by object \(a.each)") }
        s.close()
        do {
            let tx = try f.db.beginWrite()
            defer { tx.rollback() }
            let person = try tx.table("Person")
            try tx.setInsert(f.people["Cy"]!, tx.property(person, "tags"), .string("a"))
            try tx.setRemove(f.people["Ann"]!, tx.property(person, "tags"), .string("a"))
            try tx.dictionarySet(f.people["Fay"]!, tx.property(person, "scores"), key: "math", .int(99))
            try tx.dictionaryRemove(f.people["Ann"]!, tx.property(person, "scores"), key: "math")
            for (q, a) in try answers(tx) { #expect(a.scan == a.each, "in the write transaction, \(q): scanned \(a.scan), object by object \(a.each)") }
            let tagged = try Query.evaluate("ANY tags == 'a'", on: "Person", in: tx)
            #expect(Set(tagged) == [f.people["Cy"]!, f.people["Dee"]!])
            let math = try Query.evaluate("scores['math'] > 70", on: "Person", in: tx)
            #expect(Set(math) == [f.people["Eve"]!, f.people["Fay"]!])
        }
    }

    @Test func backlinksThroughADictionary() throws {
        #expect(try Self.fixture.get().names("@links.Person.pets.@count == 2", on: "Dog") == ["Rex"])
    }

    @Test func keyPathsPrintAndReparse() throws {
        var args: [QueryArgument] = []
        let q = try Query.parse("scores['math'] > 70 AND pets['d\\'1'].name == 'Rex'", arguments: &args)
        #expect(q.description.contains("scores['math'] > 70"))
        var again: [QueryArgument] = []
        #expect(try Query.parse(q.description, arguments: &again).description == q.description)
    }

    @Test func misuseIsAnErrorAtItsPlace() throws {
        let f = try Self.fixture.get()
        for bad in ["age['x'] == 1", "scores.@keys.foo == 'a'", "scores['math'].foo == 1"] {
            #expect(throws: QueryError.self, "\(bad)") { _ = try f.names(bad) }
        }
    }
}
