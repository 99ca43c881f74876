import Foundation
import Testing
import TestSupport
@testable import RealmQuery
import RealmStorage

/// `[FIRST]`, `[LAST]`, `[SIZE]`, `[*]` and positions on lists, dictionaries and mixed values; properties of the
/// objects typed links in mixed values lead to; `obj(...)` against typed links; the null values of a dictionary
/// of links. Where Realm Core's `test/test_parser.cpp` has the same data, the test it comes from is named and
/// the counts are its.
@Suite struct CollectionSubscriptQueryTests {
    final class Fixture: @unchecked Sendable {
        let dir = TempDir()
        let db: Database

        init() throws {
            db = try Database.open(path: dir.file("q.realm"))
            try db.write { tx in
                try tx.createClasses([
                    ClassSchema(name: "Person", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        .dictionary("relations", of: "Person"),
                        .list("children", of: "Person"),
                        PropertySchema(name: "scores", type: .int, isList: true),
                        PropertySchema(name: "tags", type: .string, isSet: true),
                        PropertySchema(name: "spouse", type: .link, isOptional: true, objectClassName: "Person"),
                    ]),
                    ClassSchema(name: "Dog", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        PropertySchema(name: "age", type: .int),
                        PropertySchema(name: "buddy", type: .link, isOptional: true, objectClassName: "Dog"),
                    ]),
                    ClassSchema(name: "Keeper", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        .dictionary("pets", of: "Dog"),
                    ]),
                    ClassSchema(name: "Nested", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        PropertySchema(name: "properties", type: .mixed, isOptional: true),
                    ]),
                    ClassSchema(name: "Listed", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        PropertySchema(name: "properties", type: .mixed, isOptional: true, isList: true),
                    ]),
                    ClassSchema(name: "Ticketed", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        PropertySchema(name: "properties", type: .mixed, isOptional: true, isDictionary: true),
                    ]),
                    ClassSchema(name: "Holder", properties: [
                        PropertySchema(name: "name", type: .string, isPrimaryKey: true),
                        PropertySchema(name: "value", type: .mixed, isOptional: true),
                        PropertySchema(name: "anys", type: .mixed, isOptional: true, isList: true),
                        PropertySchema(name: "bag", type: .mixed, isOptional: true, isDictionary: true),
                    ]),
                ])

                // Parser_CollectionLinks.
                let person = try tx.table("Person")
                var p: [String: ObjectKey] = [:]
                for n in ["adam", "bernie", "charlie", "david", "elisabeth", "felix", "gary", "hutch"] {
                    p[n] = try tx.createObject("Person", ["name": .string(n)])
                }
                let relations = try tx.property(person, "relations")
                let children = try tx.property(person, "children")
                let scores = try tx.property(person, "scores")
                let tags = try tx.property(person, "tags")
                try tx.setDictionary(p["adam"]!, relations, ValueDictionary([("partner", .link(p["bernie"]!)), ("colleague", .link(p["charlie"]!))]))
                try tx.setDictionary(p["bernie"]!, relations, ValueDictionary([("partner", .link(p["charlie"]!)), ("colleague", .link(p["charlie"]!))]))
                try tx.setList(p["bernie"]!, scores, [.int(1), .int(2), .int(3)])
                try tx.setDictionary(p["charlie"]!, relations, ValueDictionary([("partner", .link(p["adam"]!)), ("colleague", .link(p["bernie"]!)),
                                                                                 ("uncle", .link(p["gary"]!))]))
                try tx.setList(p["charlie"]!, scores, [.int(3), .int(4), .int(5)])
                try tx.setList(p["adam"]!, children, [.link(p["david"]!)])
                try tx.setList(p["david"]!, children, [.link(p["gary"]!), .link(p["hutch"]!)])
                try tx.setList(p["bernie"]!, children, [.link(p["gary"]!), .link(p["david"]!)])
                try tx.setAssign(p["adam"]!, tags, [.string("a")])

                // Parser_DictionaryObjects, and two dogs for typed links.
                var dogs: [String: ObjectKey] = [:]
                for (n, a) in [("astro", 4), ("pluto", 5), ("lady", 5), ("snoopy", 3), ("rex", 5), ("fido", 3)] {
                    dogs[n] = try tx.createObject("Dog", ["name": .string(n), "age": .int(Int64(a))])
                }
                try tx.set(dogs["rex"]!, "Dog", "buddy", .link(dogs["fido"]!))
                let pets = try tx.property(try tx.table("Keeper"), "pets")
                for (n, entries) in [("adam", [("dog1", "pluto"), ("dog2", "lady"), ("none", nil)]),
                                     ("bernie", [("dog1", "astro"), ("dog2", "snoopy")]),
                                     ("charlie", [("dog1", "pluto")])] as [(String, [(String, String?)])] {
                    let k = try tx.createObject("Keeper", ["name": .string(n)])
                    try tx.setDictionary(k, pets, ValueDictionary(entries.map { ($0.0, $0.1.map { .link(dogs[$0]!) } ?? .null) }))
                }

                // Parser_NestedMixedDictionaryList.
                func d(_ entries: [(String, Value)]) -> Value { .dictionary(ValueDictionary(entries)) }
                func instrument(_ brand: String, _ strings: Int64, color: String? = nil) -> Value {
                    var e: [(String, Value)] = [("brand", .string(brand))]
                    if let color { e.append(("color", .string(color))) }
                    e.append(("strings", .int(strings)))
                    e.append(("electric", .bool(true)))
                    return d(e)
                }
                func pet(_ name: String, _ legs: Int64, _ age: Int64) -> Value {
                    d([("name", .string(name)), ("legs", .int(legs)), ("age", .int(age))])
                }
                let nested: [(String, Value)] = [
                    ("Paul", d([("instruments", .list([instrument("høfner", 4), instrument("gibson", 6), instrument("martin", 12)])),
                                ("pets", .list([pet("pipper", 2, 4), pet("fido", 4, 8)]))])),
                    ("John", d([("tickets", .list([])),
                                ("instruments", .list([instrument("fender", 6), instrument("gibson", 6, color: "red")])),
                                ("pets", .list([pet("Lady", 4, 6), pet("carl", 0, 20)]))])),
                    ("George", .list([.int(1), .int(2), .int(3)])),
                    ("Ringo", d([("Foo", .string("Bar"))])),
                ]
                for (n, v) in nested {
                    let k = try tx.createObject("Nested", ["name": .string(n)])
                    try tx.set(k, "Nested", "properties", v)
                }

                // Parser_NestedListDictionary.
                let listed = try tx.property(try tx.table("Listed"), "properties")
                for (n, v) in [("Paul", d([("one", .int(1)), ("two", .int(2)), ("foo", .int(5)), ("three", .int(3))])),
                               ("John", d([("two", .int(2)), ("bar", .int(5)), ("four", .int(4))]))] {
                    try tx.setList(try tx.createObject("Listed", ["name": .string(n)]), listed, [v])
                }

                // Parser_NestedDictionaryList.
                let ticketed = try tx.property(try tx.table("Ticketed"), "properties")
                for (n, t) in [("Paul", [0, 1, 4]), ("John", [2, 3, 4])] as [(String, [Int64])] {
                    try tx.setDictionary(try tx.createObject("Ticketed", ["name": .string(n)]), ticketed,
                                         ValueDictionary([("tickets", .list(t.map { .int($0) }))]))
                }

                // Typed links in mixed values.
                let dogID = try #require(tx.classID(named: "Dog"))
                func link(_ n: String) -> Value { .typedLink(classID: dogID, key: dogs[n]!) }
                let holder = try tx.table("Holder")
                let anys = try tx.property(holder, "anys")
                let bag = try tx.property(holder, "bag")
                let holders: [(String, Value, [Value], [(String, Value)])] = [
                    ("h1", link("rex"), [.int(1), link("fido")], [("d", link("rex")), ("n", .int(1))]),
                    ("h2", d([("d", link("fido")), ("list", .list([.int(1), .int(2), .int(3)]))]), [], [("d", .null)]),
                    ("h3", .list([link("rex"), .int(5)]), [link("rex")], []),
                    ("h4", .string("Rex"), [.int(2), .int(3), .int(4)], [("x", .list([.int(1), .int(2)]))]),
                ]
                for (n, v, l, b) in holders {
                    let k = try tx.createObject("Holder", ["name": .string(n)])
                    try tx.set(k, "Holder", "value", v)
                    try tx.setList(k, anys, l)
                    try tx.setDictionary(k, bag, ValueDictionary(b))
                }
            }
        }

        func names(_ query: String, on cls: String, _ arguments: [QueryArgument] = []) throws -> [String] {
            let s = try db.snapshot()
            defer { s.close() }
            let h = try s.property(try s.table(cls), "name")
            return try Query.evaluate(query, on: cls, in: s, arguments: arguments).map { k -> String in
                if case .string(let n) = try s.value(k, h) { return n }
                return "?"
            }.sorted()
        }
    }

    static let fixture = Result { try Fixture() }

    static let cases: [(String, String, [String])] = [
        // Parser_CollectionLinks.
        ("Person", "relations.partner.name == 'bernie'", ["adam"]),
        ("Person", "relations[SIZE] == 3", ["charlie"]),
        ("Person", "relations.partner.relations.partner.name == 'bernie'", ["charlie"]),
        ("Person", "relations.colleague.name == 'charlie'", ["adam", "bernie"]),
        ("Person", "relations.colleague.scores[FIRST] == 1", ["charlie"]),
        ("Person", "relations.colleague.scores[LAST] > 2", ["adam", "bernie", "charlie"]),
        ("Person", "relations['colleague'].scores[LAST] > 2", ["adam", "bernie", "charlie"]),
        ("Person", "children[FIRST].name == 'david'", ["adam"]),
        ("Person", "children[*].name == 'david'", ["adam", "bernie"]),
        ("Person", "children[SIZE] == 2", ["bernie", "david"]),
        ("Person", "children[FIRST].children[LAST].name == 'hutch'", ["adam"]),
        // Positions on lists of values and of links, beyond Realm's data above.
        ("Person", "scores[1] == 4", ["charlie"]),
        ("Person", "scores[LAST] == 3", ["bernie"]),
        ("Person", "scores[*] == 3", ["bernie", "charlie"]),
        ("Person", "scores[SIZE] == 0", ["adam", "david", "elisabeth", "felix", "gary", "hutch"]),
        ("Person", "children[1].name == 'david'", ["bernie"]),
        ("Person", "children[LAST] == obj('Person', 'hutch')", ["david"]),
        ("Person", "children[5].name == nil", []),  // no object there: no value, as Realm's LinkMap
        ("Person", "relations[*].name == 'gary'", ["charlie"]),
        ("Person", "relations.name == 'gary'", ["charlie"]),  // a property of the target before a key
        ("Person", "name[SIZE] == 4", ["adam", "gary"]),

        // Parser_DictionaryObjects: the null value of adam's 'none' key is among the values.
        ("Keeper", "pets.@values.age > 4", ["adam", "charlie"]),
        ("Keeper", "pets.@values == obj('Dog', 'pluto')", ["adam", "charlie"]),
        ("Keeper", "pets.@values != obj('Dog', 'pluto')", ["adam", "bernie"]),
        // Realm writes these two `pets.@values == ANY {...}`; both forms are read.
        ("Keeper", "pets.@values IN {obj('Dog', 'lady'), obj('Dog', 'astro')}", ["adam", "bernie"]),
        ("Keeper", "pets.@values IN {obj('Dog', 'astro'), NULL}", ["adam", "bernie"]),
        ("Keeper", "pets.@values == ANY {obj('Dog', 'lady'), obj('Dog', 'astro')}", ["adam", "bernie"]),
        ("Keeper", "pets.@values == ANY {obj('Dog', 'astro'), NULL}", ["adam", "bernie"]),
        ("Keeper", "pets.@values == nil", ["adam"]),
        ("Keeper", "ANY pets.@values == NULL", ["adam"]),
        ("Keeper", "pets == nil", ["adam"]),
        ("Keeper", "pets[*] == nil", ["adam"]),
        ("Keeper", "ALL pets.@values != nil", ["bernie", "charlie"]),
        ("Keeper", "pets[*].age == 3", ["bernie"]),

        // Parser_NestedMixedDictionaryList.
        ("Nested", "properties.instruments[0].strings == 6", ["John"]),
        ("Nested", "properties.instruments[0].strings > 5", ["John"]),
        ("Nested", "properties.instruments[*].strings == 6", ["John", "Paul"]),
        ("Nested", "properties.instruments[LAST].strings == 6", ["John"]),
        ("Nested", "properties.instruments[*].brand BEGINSWITH 'gi'", ["John", "Paul"]),
        ("Nested", "properties[*][0].legs == 2", ["Paul"]),
        ("Nested", "properties[*][0].legs == 4", ["John"]),
        ("Nested", "properties[*][*].legs == 0", ["John"]),
        ("Nested", "properties[*][*][*] > 10", ["John", "Paul"]),
        ("Nested", "properties[*] == {1, 2, 3}", ["George"]),
        ("Nested", "ANY properties[*] == 2", ["George"]),
        ("Nested", "NONE properties[*] == 2", ["John", "Paul", "Ringo"]),
        ("Nested", "properties.@size == 3", ["George", "John"]),
        ("Nested", "properties.instruments.@size == 2", ["John"]),
        ("Nested", "properties.Foo == 'Bar'", ["Ringo"]),
        ("Nested", "properties['instruments'][SIZE] == 3", ["Paul"]),
        // The keys of a dictionary in a mixed value, any of which may match (Collection::get_any's `@keys`).
        ("Nested", "properties.@keys == 'instruments'", ["John", "Paul"]),
        ("Nested", "properties.@keys == 'pets'", ["John", "Paul"]),
        ("Nested", "properties.@keys == 'tickets'", ["John"]),
        ("Nested", "properties.instruments[*].@keys == 'color'", ["John"]),
        ("Nested", "properties['instruments'][*].@keys == 'color'", ["John"]),
        ("Nested", "properties.@keys == 'Foo'", ["Ringo"]),
        ("Nested", "NONE properties.@keys == 'pets'", ["George", "Ringo"]),

        // Parser_NestedListDictionary.
        ("Listed", "properties[0].one == 1", ["Paul"]),
        ("Listed", "properties[*].one == 1", ["Paul"]),
        ("Listed", "properties[first].two == 2", ["John", "Paul"]),
        ("Listed", "properties[0][*] == 5", ["John", "Paul"]),
        ("Listed", "properties[0].@keys == 'foo'", ["Paul"]),
        ("Listed", "properties[*].@keys BEGINSWITH 'f'", ["John", "Paul"]),

        // Parser_NestedDictionaryList.
        ("Ticketed", "properties.tickets[0] == 0", ["Paul"]),
        ("Ticketed", "properties.tickets[last] == 4", ["John", "Paul"]),
        ("Ticketed", "properties[*][SIZE] == 3", ["John", "Paul"]),
        ("Ticketed", "properties[*] == nil", []),

        // Typed links in mixed values: a property after one follows it (Realm Core's `Collection::get_any`).
        ("Holder", "value.name == 'rex'", ["h1"]),
        ("Holder", "value['d'].name == 'fido'", ["h2"]),
        ("Holder", "value['d'].age > 2", ["h2"]),
        ("Holder", "value[0].name == 'rex'", ["h3"]),
        ("Holder", "value[FIRST] == obj('Dog', 'rex')", ["h3"]),
        ("Holder", "value[LAST] == 5", ["h3"]),
        ("Holder", "value.buddy.name == 'fido'", ["h1"]),
        ("Holder", "value.buddy == obj('Dog', 'fido')", ["h1"]),
        ("Holder", "value[*] == 5", ["h3"]),
        ("Holder", "value[*][*] == 2", ["h2"]),
        ("Holder", "value['list'][SIZE] == 3", ["h2"]),
        ("Holder", "value['list'][FIRST] == 1", ["h2"]),
        ("Holder", "value['list'][LAST] == 3", ["h2"]),
        ("Holder", "value.@size == 2", ["h2", "h3"]),
        ("Holder", "value.@size == 3", ["h4"]),
        // Parser_PrimaryKey (`mixed == obj("class_Int", 1)`): obj(...) against typed links.
        ("Holder", "value == obj('Dog', 'rex')", ["h1"]),
        ("Holder", "value != obj('Dog', 'rex')", ["h2", "h3", "h4"]),
        ("Holder", "obj('Dog', 'rex') == value", ["h1"]),
        ("Holder", "value[0] == obj('Dog', 'rex')", ["h3"]),
        ("Holder", "value IN {obj('Dog', 'fido'), obj('Dog', 'rex')}", ["h1"]),
        ("Holder", "anys == obj('Dog', 'fido')", ["h1"]),
        ("Holder", "obj('Dog', 'rex') IN anys", ["h3"]),
        ("Holder", "bag.@values == obj('Dog', 'rex')", ["h1"]),
        ("Holder", "bag['d'] == obj('Dog', 'rex')", ["h1"]),
        ("Holder", "bag == obj('Dog', 'nobody')", ["h2"]),  // no such object: null, and h2's 'd' is null
        // Lists and dictionaries of mixed values.
        ("Holder", "anys[FIRST] == 1", ["h1"]),
        ("Holder", "anys[LAST] == 4", ["h4"]),
        ("Holder", "anys[*] > 3", ["h4"]),
        ("Holder", "anys[SIZE] == 3", ["h4"]),
        ("Holder", "anys[LAST].name == 'rex'", ["h3"]),
        ("Holder", "bag[*] == 1", ["h1"]),
        ("Holder", "bag[*][*] == 2", ["h4"]),
        ("Holder", "bag['x'][LAST] == 2", ["h4"]),
        ("Holder", "bag['d'].age == 5", ["h1"]),
        // `@keys` and `@values` of a dictionary in a mixed value; a value that is no dictionary has none.
        ("Holder", "value.@keys == 'list'", ["h2"]),
        ("Holder", "value.@keys BEGINSWITH[c] 'L'", ["h2"]),
        ("Holder", "value.@keys == 'name'", []),  // h1 holds a typed link: no keys, not the object's properties
        ("Holder", "value.@allKeys == 'd'", ["h2"]),
        ("Holder", "bag['x'].@keys == 'a'", []),  // a list has no keys
        ("Holder", "value.@values.name == 'fido'", ["h2"]),
        ("Holder", "value.@values[1] == 2", ["h2"]),
        ("Holder", "value.@values == 5", []),  // h3's list: a list has no values by key
        ("Holder", "value['d'] == obj('Dog', 'fido')", ["h2"]),
    ]

    @Test(arguments: cases)
    func subscriptsAndTypedLinks(_ c: (String, String, [String])) throws {
        #expect(try Self.fixture.get().names(c.1, on: c.0) == c.2, "\(c.1)")
    }

    /// `dict[*]` is `dict.@values` (Parser_Dictionary: both give 50 there).
    @Test func starOnADictionaryIsItsValues() throws {
        let f = try Self.fixture.get()
        for (star, values) in [("bag[*] == 1", "bag.@values == 1"), ("pets[*].age > 4", "pets.@values.age > 4")] {
            let cls = star.hasPrefix("pets") ? "Keeper" : "Holder"
            #expect(try f.names(star, on: cls) == f.names(values, on: cls))
        }
    }

    /// Misuse is an error at the subscript, as Realm Core refuses it (Parser_CollectionLinks: `spouse[5].name`;
    /// Parser_Dictionary: `dict[FIRST]`, `dict[LAST]`; `Columns<Set<T>>::index` refuses every position).
    @Test(arguments: [
        ("Person", "spouse[5].name == 'elisabeth'", "[5]"),
        ("Person", "name[FIRST] == 'adam'", "[FIRST]"),
        ("Person", "relations[FIRST].name == 'adam'", "[FIRST]"),
        ("Person", "relations[LAST] == nil", "[LAST]"),
        ("Person", "tags[FIRST] == 'a'", "[FIRST]"),
        ("Person", "tags[*] == 'a'", "[*]"),
        ("Person", "scores['k'] == 1", "['k']"),
        ("Person", "children['k'].name == 'x'", "['k']"),
        ("Keeper", "pets['dog1'][0] == nil", "[0]"),
        ("Holder", "value[SIZE].name == 1", "name"),
        ("Holder", "value.@keys.name == 1", "name"),
        ("Nested", "properties.@keys[0] == 'a'", "[0]"),
    ])
    func misuseIsAnErrorAtTheSubscript(_ c: (String, String, String)) throws {
        let f = try Self.fixture.get()
        let s = try f.db.snapshot()
        defer { s.close() }
        let e = try #require(throws: QueryError.self, "\(c.1)") { try Query.parse(c.1).bind(to: c.0, in: s) }
        let b = Array(c.1.utf8)
        let at = String(decoding: b[e.range.start..<e.range.end], as: UTF8.self)
        #expect(at == c.2, "\(c.1): \(e)")
        #expect(e.description.contains("column \(e.column)"), "\(e)")
    }

    /// `dict[$0]`, `list[$1]`, `bag[%@]`: a subscript from an argument, a string a key and an integer a position,
    /// as Realm Core's grammar has them (`path '[' ARG ']'`, `ParserDriver::get_arg_for_index`).
    @Test(arguments: [
        ("Person", "relations[$0].name == 'bernie'", [QueryArgument.value(.string("partner"))], ["adam"]),
        ("Person", "scores[$0] == 4", [.value(.int(1))], ["charlie"]),
        ("Person", "children[$0].name == 'david'", [.value(.int(1))], ["bernie"]),
        ("Holder", "value[$0][$1] == 2", [.value(.string("list")), .value(.int(1))], ["h2"]),
        ("Holder", "bag[%@] == %@", [.value(.string("n")), .value(.int(1))], ["h1"]),
        // -1 is the last position, as Realm Core's size_t(-1) is `[LAST]`.
        ("Holder", "value[$1] == $0", [.value(.int(5)), .value(.int(-1))], ["h3"]),
        ("Holder", "value[$0] == 5", [.value(.int(-2))], []),
        ("Keeper", "pets[$0].age == 5", [.value(.string("dog2"))], ["adam"]),
    ])
    func argumentsAsSubscripts(_ c: (String, String, [QueryArgument], [String])) throws {
        #expect(try Self.fixture.get().names(c.1, on: c.0, c.2) == c.3, "\(c.1)")
    }

    @Test func anArgumentSubscriptIsAKeyOrAPosition() throws {
        let f = try Self.fixture.get()
        let s = try f.db.snapshot()
        defer { s.close() }
        for (args, message) in [([QueryArgument.value(.null)], "null"), ([.list([.string("a")])], "several values"),
                                ([.value(.double(1.5))], "double"), ([], "no value for argument $0")] {
            let e = try #require(throws: QueryError.self) {
                try Query.parse("relations[$0].name == 'x'").bind(to: "Person", in: s, arguments: args)
            }
            #expect(e.kind == .invalidArgument, "\(e)")
            #expect(e.description.contains(message), "\(e)")
        }
    }

    /// A prepared query binds an argument subscript afresh each time: the key is part of the path.
    @Test func aPreparedQueryReadsEachArgumentSubscript() throws {
        let f = try Self.fixture.get()
        let s = try f.db.snapshot()
        defer { s.close() }
        let p = try PreparedQuery("relations[$0].name == 'charlie'", on: "Person")
        #expect(try p.evaluate(in: s, arguments: [.value(.string("partner"))]).count == 1)
        #expect(try p.evaluate(in: s, arguments: [.value(.string("colleague"))]).count == 2)
    }

    @Test func subscriptsPrintAndReparse() throws {
        for (text, printed) in [
            ("items[FIRST].name == 'x'", "items[0].name == 'x'"),
            ("items[LAST].name == 'x'", "items[LAST].name == 'x'"),
            ("value['list'][SIZE] == 3", "value['list'].@size == 3"),
            ("dict[*] > 5", "dict[*] > 5"),
            ("mixed[*][*] == 2", "mixed[*][*] == 2"),
            ("value[last][first] == 1", "value[LAST][0] == 1"),
            ("value.@keys == 'a'", "value.@keys == 'a'"),
            ("value.@values[0] == 1", "value.@values[0] == 1"),
            ("dict[$0] == $1", "dict[$0] == $1"),
        ] {
            let q = try Query.parse(text)
            #expect(q.predicate.description == printed, "\(text)")
            #expect(try Query.parse(q.description) == q, "\(text)")
        }
    }

    @Test func malformedSubscriptsAreSyntaxErrors() throws {
        for bad in ["items[* == 1", "items[FIRST == 1", "items[SIZE.x] == 1"] {
            #expect(throws: QueryError.self, "\(bad)") { _ = try Query.parse(bad) }
        }
    }
}
