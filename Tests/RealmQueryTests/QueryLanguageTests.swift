import Foundation
import Testing
import RealmStorage
@testable import RealmQuery
import TestSupport

/// Forms of Realm's query language beyond the corpus's comparisons: NSPredicate's `%@` placeholders, `@type`,
/// and the diagnostics of their wrong uses.
@Suite(.serialized) struct QueryLanguageTests {
    let fixture = try! Fixture(people: 24)

    func bindError(_ text: String, _ args: [QueryArgument] = []) -> QueryError? {
        let s = try! fixture.db.snapshot()
        defer { s.close() }
        do {
            _ = try Query.parse(text).bind(to: "Person", in: s, arguments: args)
            return nil
        } catch {
            return error
        }
    }

    @Test func percentPlaceholdersTakeTheArgumentsInOrder() throws {
        let f = fixture
        #expect(try f.run("age > %@ AND name BEGINSWITH %@", [.value(.int(40)), .value(.string("J"))])
            == f.expectedPeople { $0.age > 40 && $0.name.hasPrefix("J") })
        #expect(try f.run("name IN %@", [.list([.string("Ann"), .string("Bob")])]) == f.expectedPeople { ["Ann", "Bob"].contains($0.name) })
        #expect(try f.run("age BETWEEN {%@, %@}", [.value(.int(10)), .value(.int(20))]) == f.expectedPeople { (10...20).contains($0.age) })
        #expect(try f.run("buddy == %@", [.value(.link(f.personKeys[1]))]) == f.expectedPeople { $0.buddy == 1 })
        // The n-th `%@` is `$n-1`: the printed query says so and means the same.
        let q = try Query.parse("age > %@ || name ==[c] %@")
        #expect(q.description == "age > $0 OR name ==[c] $1")
        #expect(try Query.parse(q.description) == q)
    }

    @Test func percentPlaceholderDiagnostics() throws {
        let missing = try #require(bindError("age > %@ AND age < %@", [.value(.int(1))]))
        #expect(missing.kind == .invalidArgument)
        #expect(missing.column == 20)
        #expect(throws: QueryError.self) { try Query.parse("age > %") }
        do {
            _ = try Query.parse("%K == 3")
            Issue.record("%K parsed")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.column == 1)
            #expect(error.message.contains("%K"))
        }
        do {
            _ = try Query.parse("age > %d")
            Issue.record("%d parsed")
        } catch {
            #expect(error.column == 7)
            #expect(error.message.contains("%@"))
        }
    }

    @Test func typeDiagnostics() throws {
        let unknown = try #require(bindError("mixed.@type == 'strng'"))
        #expect(unknown.kind == .typeMismatch)
        #expect(unknown.column == 16)
        #expect(unknown.message.contains("unknown type name 'strng'"))
        #expect(unknown.message.contains("'string'"))
        let order = try #require(bindError("mixed.@type > 'int'"))
        #expect(order.column == 13)
        #expect(order.message.contains("@type"))
        #expect(bindError("mixed.@type == 5")?.kind == .typeMismatch)
        #expect(bindError("mixed.@type BEGINSWITH 'in'")?.kind == .typeMismatch)
        let after = try #require(bindError("mixed.@type.@count == 1"))
        #expect(after.column == 13)
        #expect(bindError("mixed.@type == $0", [.value(.string("double"))]) == nil)
        #expect(bindError("mixed.@type == $0", [.value(.string("doubel"))])?.kind == .typeMismatch)
        #expect(try fixture.run("mixed.@type == $0", [.value(.string("double"))]) == fixture.expectedPeople { Ref.typeName($0.mixed) == "double" })
        #expect(bindError("name == mixed.@type")?.kind == .invalidQuery)
        #expect(bindError("mixed.@type == name")?.kind == .typeMismatch)
        #expect(bindError("TRUEPREDICATE SORT(mixed.@type ASC)")?.kind == .invalidQuery)
    }

    @Test func aPreparedTypeQueryFollowsItsArgument() throws {
        let f = fixture
        let prepared = try PreparedQuery("mixed.@type == $0", on: "Person")
        let s = try f.db.snapshot()
        defer { s.close() }
        for name in ["double", "string", "numeric", "null", "double"] {
            let types = try #require(Ref.typeNames.first { $0.0 == name }?.1)
            #expect(try prepared.evaluate(in: s, arguments: [.value(.string(name))]) == f.expectedPeople { types.contains(Ref.typeName($0.mixed)) })
        }
        #expect(throws: QueryError.self) { try prepared.evaluate(in: s, arguments: [.value(.string("strng"))]) }
    }

    @Test func listLiteralDiagnostics() throws {
        // A list of values on both sides compares nothing stored.
        #expect(bindError("{1, 2} == {1, 3}")?.kind == .invalidQuery)
        // Still no key paths inside braces.
        #expect(bindError("age == {1, age}")?.kind == .invalidQuery)
        // A type mismatch in a list literal on the left names the element.
        let e = try #require(bindError("{1, 'x'} == age"))
        #expect(e.kind == .typeMismatch)
    }

    @Test func literalForms() throws {
        #expect(try Query.parse("weight == 70.5f") == Query.parse("weight == 70.5"))
        #expect(try Query.parse("blob == bin('Ann')") == Query.parse("blob == bin(B64\"QW5u\")"))
        #expect(try Query.parse("name == 'Ann'") == Query.parse("name == B64\"QW5u\""))
        // Printed, binary data reads back as binary data.
        let q = try Query.parse("blob == bin('Ann') OR blob == B64\"/w==\"")
        #expect(try Query.parse(q.description) == q)
        #expect(throws: QueryError.self) { try Query.parse("blob == bin('Ann'") }
    }
}

extension QueryLanguageTests {
    @Test func betweenTakesAnArgumentHoldingTwoValues() throws {
        let f = fixture
        #expect(try f.run("age BETWEEN $0", [.list([.int(10), .int(40)])]) == f.expectedPeople { (10...40).contains($0.age) })
        #expect(try f.run("age BETWEEN %@", [.list([.int(40), .int(10)])]).isEmpty)
        #expect(try Query.parse("age BETWEEN $0").description == "age BETWEEN $0")
        let one = try #require(bindError("age BETWEEN $0", [.value(.int(3))]))
        #expect(one.message.contains("BETWEEN needs two values"))
        #expect(one.column == 13)
        #expect(bindError("age BETWEEN $0", [.list([.int(1), .int(2), .int(3)])])?.message.contains("BETWEEN needs two values") == true)
    }
}

extension QueryLanguageTests {
    @Test func percentKTakesAKeyPathFromTheArguments() throws {
        var args: [QueryArgument] = [.value(.string("buddy.age")), .value(.int(40)), .value(.string("name")), .value(.string("J"))]
        let q = try Query.parse("%K > %@ AND %K BEGINSWITH %@", arguments: &args)
        #expect(q.description == "buddy.age > $0 AND name BEGINSWITH $1")
        #expect(args == [.value(.int(40)), .value(.string("J"))])
        let s = try fixture.db.snapshot()
        defer { s.close() }
        let P = fixture.people
        #expect(try q.bind(to: "Person", in: s, arguments: args).evaluate(in: s)
            == fixture.expectedPeople { x in x.buddy.map { P[$0].age > 40 } == true && x.name.hasPrefix("J") })
        func error(_ text: String, _ a: [QueryArgument]) -> QueryError? {
            var a = a
            do { _ = try Query.parse(text, arguments: &a); return nil } catch { return error }
        }
        #expect(error("%K == 1", [.value(.int(3))])?.column == 1)
        #expect(error("%K == 1", [.value(.int(3))])?.message.contains("%K needs a key path") == true)
        #expect(error("age == 1 AND %K == 1", [])?.column == 14)
        // A name with a space is a name (DECISIONS 131); an empty one, or an aggregate that is not a word, is not.
        #expect(error("%K == 1", [.value(.string("a b"))]) == nil)
        #expect(error("%K == 1", [.value(.string("buddy..age"))])?.message.contains("not a key path") == true)
        #expect(error("%K == 1", [.value(.string("dogs.@a b"))])?.message.contains("not a key path") == true)
        #expect(error("%K == $0", [.value(.string("age")), .value(.int(1))])?.column == 7)
        // Without arguments (the plain parse) %K stays an error.
        #expect(throws: QueryError.self) { try Query.parse("%K == 1") }
    }
}

extension QueryLanguageTests {
    @Test func arithmeticDiagnosticsAndPrinting() throws {
        let name = try #require(bindError("name + 1 > 3"))
        #expect(name.kind == .typeMismatch)
        #expect(name.column == 1)
        #expect(name.message.contains("needs numbers"))
        #expect(bindError("scores + 1 > 3")?.kind == .invalidQuery)
        #expect(bindError("balance * 2 > 1") == nil)  // decimal128 arithmetic (`DecimalQueryTests`)
        #expect(bindError("age + 1 == 'x'")?.kind == .typeMismatch)
        #expect(bindError("SUBQUERY(dogs, $d, $d.age > 1).@count + 1 > 1")?.kind == .invalidQuery)
        #expect(throws: QueryError.self) { try Query.parse("age + > 3") }
        #expect(throws: QueryError.self) { try Query.parse("age * (1 + 2 > 3") }
        for text in ["age * (ageOpt + 1) > 20", "age - (ageOpt - 1) > 2", "age - ageOpt - 1 > 2", "age + 2 * 3 == 10", "age - -5 > 0",
                     "height / (2 * 3) < 1"] {
            let q = try Query.parse(text)
            #expect(q.description == text)
            #expect(try Query.parse(q.description) == q)
        }
        #expect(try fixture.run("age / $0 == $1", [.value(.int(10)), .value(.int(3))]) == fixture.expectedPeople { $0.age / 10 == 3 })
    }
}

extension QueryLanguageTests {
    /// `obj('Class', primaryKey)`: the object with that primary key, compared with a link, a list of links or
    /// linking objects; an object that does not exist is null, as in Realm Core (`ConstantNode::visit`).
    @Test func objectLiterals() throws {
        let f = fixture
        let P = f.people
        func id(_ i: Int) -> Int64 { P[i].id }
        let target = try #require(P.indices.first { i in P.contains { $0.buddy == i } })
        #expect(try f.run("buddy == obj('Person', \(id(target)))") == f.expectedPeople { $0.buddy == target })
        #expect(try f.run("buddy == obj(\"Person\", $0)", [.value(.int(id(target)))]) == f.expectedPeople { $0.buddy == target })
        #expect(try f.run("buddy == obj('Person', %@)", [.value(.int(id(target)))]) == f.expectedPeople { $0.buddy == target })
        #expect(try f.run("buddy == obj('Person', 99999)") == f.expectedPeople { $0.buddy == nil })
        #expect(try f.run("buddy != obj('Person', 99999)") == f.expectedPeople { $0.buddy != nil })
        // Prepared: the object is looked up in each snapshot, and the argument each time.
        let prepared = try PreparedQuery("buddy == obj('Person', $0)", on: "Person")
        for i in [target, 0, target] {
            let s = try f.db.snapshot()
            defer { s.close() }
            #expect(try prepared.evaluate(in: s, arguments: [.value(.int(id(i)))]) == f.expectedPeople { $0.buddy == i })
        }
        // Printed as written.
        let q = try Query.parse("buddy IN {obj('Person', 1), NULL} AND NOT owner == obj(\"Person\", 'x')")
        #expect(q.description == "buddy IN {obj('Person', 1), NULL} AND NOT owner == obj('Person', 'x')")
        #expect(try Query.parse(q.description) == q)
        // Errors name the class, the key or the comparison.
        let unknown = try #require(bindError("buddy == obj('Nobody', 1)"))
        #expect(unknown.kind == .unknownClass && unknown.message.contains("'Nobody'") && unknown.column == 14)
        #expect(bindError("buddy == obj('Dog', 1)")?.message.contains("no primary key") == true)
        #expect(bindError("buddy == obj('Person', 'x')")?.kind == .typeMismatch)
        #expect(bindError("age == obj('Person', 1)")?.kind == .typeMismatch)
        #expect(bindError("dogs == obj('Person', 1)")?.message.contains("'Dog'") == true)
        #expect(bindError("buddy > obj('Person', 1)")?.kind == .typeMismatch)
        #expect(throws: QueryError.self) { try Query.parse("buddy == obj('Person')") }
        #expect(throws: QueryError.self) { try Query.parse("buddy == obj(Person, 1)") }
    }

    /// Realm accepts a string operator on a property that holds no text and matches nothing
    /// (`Compare<BeginsWith>` over an int column); the right side must still be a string or binary data.
    @Test func stringOperatorsOnOtherTypesMatchNothing() throws {
        let f = fixture
        #expect(try f.run("age BEGINSWITH 'x'").isEmpty)
        #expect(try f.run("age CONTAINS[c] '1'").isEmpty)
        #expect(try f.run("buddy.born LIKE '*'").isEmpty)
        #expect(try f.run("NOT age ENDSWITH '1'") == f.expectedPeople { _ in true })
        #expect(try f.run("ANY scores BEGINSWITH 'x'").isEmpty)
        #expect(try f.run("NONE scores BEGINSWITH 'x'") == f.expectedPeople { _ in true })
        #expect(try f.run("ALL scores BEGINSWITH 'x'") == f.expectedPeople { $0.scores.isEmpty })
        #expect(bindError("age BEGINSWITH 5")?.kind == .typeMismatch)
        #expect(bindError("age ==[c] 5")?.kind == .typeMismatch)
    }
}
