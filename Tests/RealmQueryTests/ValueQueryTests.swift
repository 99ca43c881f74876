import Foundation
import Testing
import RealmStorage
@testable import RealmQuery

/// Queries over a collection of values, `self` standing for each value (a list of primitives).
@Suite struct ValueQueryTests {
    func run(_ text: String, _ values: [Value], type: PropertyType, _ args: [QueryArgument] = []) throws -> [Value] {
        var arguments = args
        let q = try Query.parse(text, arguments: &arguments)
        let bound = try BoundValueQuery(q, elementType: type, arguments: arguments)
        return bound.evaluate(values).map { values[$0] }
    }

    func error(_ text: String, type: PropertyType) -> QueryError? {
        do {
            _ = try run(text, [], type: type)
            return nil
        } catch let e as QueryError {
            return e
        } catch {
            return nil
        }
    }

    let ints: [Value] = [.int(5), .int(1), .int(4), .null, .int(1), .int(3)]
    let strings: [Value] = [.string("apple"), .string("Äpfel"), .string("banana"), .string("Apple")]

    @Test func comparisonsMeanWhatTheyMeanForProperties() throws {
        #expect(try run("self > 3", ints, type: .int) == [.int(5), .int(4)])
        #expect(try run("3 < self", ints, type: .int) == [.int(5), .int(4)])
        #expect(try run("self == nil", ints, type: .int) == [.null])
        #expect(try run("self != 1", ints, type: .int) == [.int(5), .int(4), .null, .int(3)])
        #expect(try run("self IN {1, 3}", ints, type: .int) == [.int(1), .int(1), .int(3)])
        #expect(try run("self IN $0", ints, type: .int, [.list([.int(4), .int(5)])]) == [.int(5), .int(4)])
        #expect(try run("self BETWEEN {2, 4}", ints, type: .int) == [.int(4), .int(3)])
        #expect(try run("self == 3.0", ints, type: .int) == [.int(3)])
        // NOT of a comparison with null is true, as for a property.
        #expect(try run("self >= 4 OR NOT self > 1", ints, type: .int) == [.int(5), .int(1), .int(4), .null, .int(1)])
        #expect(try run("TRUEPREDICATE", ints, type: .int).count == ints.count)
        #expect(try run("self BEGINSWITH[c] 'a'", strings, type: .string) == [.string("apple"), .string("Apple")])
        #expect(try run("self BEGINSWITH[cd] 'a'", strings, type: .string) == [.string("apple"), .string("Äpfel"), .string("Apple")])
        #expect(try run("self LIKE '*an*'", strings, type: .string) == [.string("banana")])
        #expect(try run("self == {'x', 'banana'}", strings, type: .string) == [.string("banana")])
        // A decimal literal compared with decimals is the decimal written.
        let decimals: [Value] = [.decimal128(Decimal128(string: "0.3")!), .decimal128(Decimal128(string: "0.30000000000000004")!)]
        #expect(try run("self == 0.3", decimals, type: .decimal128) == [decimals[0]])
    }

    @Test func orderingClausesSortByTheValue() throws {
        #expect(try run("self > 0 SORT(self DESC)", ints, type: .int) == [.int(5), .int(4), .int(3), .int(1), .int(1)])
        #expect(try run("TRUEPREDICATE SORT(self ASC)", ints, type: .int).first == .null)
        #expect(try run("TRUEPREDICATE DISTINCT(self)", ints, type: .int) == [.int(5), .int(1), .int(4), .null, .int(3)])
        #expect(try run("self > 0 SORT(self ASC) DISTINCT(self) LIMIT(2)", ints, type: .int) == [.int(1), .int(3)])
        // Strings sort by code point.
        #expect(try run("TRUEPREDICATE SORT(self ASC)", strings, type: .string)
                == [.string("Apple"), .string("apple"), .string("banana"), .string("Äpfel")])
    }

    @Test func mistakesAreErrorsAtTheirPosition() throws {
        let unknown = try #require(error("age > 3", type: .int))
        #expect(unknown.kind == .unknownProperty)
        #expect(unknown.column == 1)
        #expect(error("self BEGINSWITH 'a'", type: .int)?.kind == .typeMismatch)
        #expect(error("self > 'a'", type: .int)?.kind == .typeMismatch)
        #expect(error("self > true", type: .bool)?.kind == .typeMismatch)
        #expect(error("ANY self > 3", type: .int)?.kind == .invalidQuery)
        #expect(error("self == self", type: .int)?.kind == .invalidQuery)
        #expect(error("self > $0", type: .int)?.kind == .invalidArgument)
        #expect(error("self > 1 SORT(name ASC)", type: .int)?.kind == .unknownProperty)
        #expect(error("self + 1 > 3", type: .int) != nil)
        // Mixed values compare with anything.
        #expect(error("self BEGINSWITH 'a' OR self > 3", type: .mixed) == nil)
    }
}
