import Foundation
import Testing
@testable import RealmQuery
import RealmStorage

/// Properties named like keywords: Realm's files and models have them (`sortOrder`, `limit`, `in`, `any`).
/// Operator and clause words are names where a key path starts, as in Realm's parser; words that start a
/// condition or are a value are written with NSPredicate's escape `#`, or given by `%K`.
@Suite struct KeywordNamedPropertyTests {
    func makeDatabase() throws -> Database {
        let db = try Database.inMemory(identifier: "keyword-names-\(UUID())")
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "any", type: .int),
                PropertySchema(name: "sort", type: .int),
                PropertySchema(name: "limit", type: .string),
                PropertySchema(name: "in", type: .int),
                PropertySchema(name: "contains", type: .string),
                PropertySchema(name: "sortOrder", type: .int),
                PropertySchema(name: "tags", type: .string, isList: true),
            ]))
            for i in 0..<6 {
                _ = try tx.createObject("Item", ["any": .int(Int64(5 - i)), "sort": .int(Int64(i % 3)), "limit": .string("l\(i % 2)"),
                                                 "in": .int(Int64(i)), "contains": .string("c\(i)"), "sortOrder": .int(Int64(10 - i))],
                                     lists: ["tags": [.string("t\(i)")]])
            }
        }
        return db
    }

    /// The `in` values of the matching objects, in the result's order.
    func ins(_ db: Database, _ text: String, _ args: [QueryArgument] = []) throws -> [Int64] {
        try intsOfItems(db, "in", text, args)
    }

    @Test func operatorAndClauseWordsAreNamesWhereAKeyPathStarts() throws {
        let db = try makeDatabase()
        #expect(try ins(db, "sort == 1") == [1, 4])
        #expect(try ins(db, "in IN {2, 3}") == [2, 3])
        #expect(try ins(db, "contains CONTAINS 'c5'") == [5])
        #expect(try ins(db, "limit == 'l1' SORT(sort DESC, in ASC) LIMIT(2)") == [5, 1])
        #expect(try ins(db, "TRUEPREDICATE DISTINCT(limit) SORT(in DESC)") == [1, 0])
        #expect(try ins(db, "sortOrder BETWEEN {7, 8}") == [2, 3])
        #expect(try ins(db, "ANY tags == 't3'") == [3])
    }

    @Test func reservedWordsAreNamesWhenEscapedOrGivenByK() throws {
        let db = try makeDatabase()
        #expect(try ins(db, "#any < 2") == [4, 5])
        #expect(try ins(db, "TRUEPREDICATE SORT(#any ASC)") == [5, 4, 3, 2, 1, 0])
        #expect(try ins(db, "TRUEPREDICATE SORT(%K ASC)", [.value(.string("any"))]) == [5, 4, 3, 2, 1, 0])
        #expect(try ins(db, "%K == %@", [.value(.string("any")), .value(.int(3))]) == [2])
        #expect(Query.escapedName("any") == "#any" && Query.escapedName("ALL") == "#ALL" && Query.escapedName("sort") == "sort")
        // Unescaped, `any` is the quantifier, and says what it expected.
        #expect(throws: QueryError.self) { try ins(db, "TRUEPREDICATE SORT(any ASC)") }
        #expect(throws: QueryError.self) { try ins(db, "# == 1") }
    }
}

/// Properties whose names are not identifiers: Realm files written by other SDKs have them (`first name`,
/// `e-mail`, `2nd`). They are written quoted after `#` and printed so.
@Suite struct QuotedNamePropertyTests {
    static let odd = ["first name", "e-mail", "2nd", "a.b", "say \"hi\"", "back\\slash", "tab\there", "名前 🦄"]

    func makeDatabase() throws -> Database {
        let db = try Database.inMemory(identifier: "quoted-names-\(UUID())")
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [PropertySchema(name: "n", type: .int)]
                + QuotedNamePropertyTests.odd.map { PropertySchema(name: $0, type: .int) }))
            for i in 0..<5 {
                var values: [String: Value] = ["n": .int(Int64(i))]
                for (j, name) in QuotedNamePropertyTests.odd.enumerated() { values[name] = .int(Int64((i * (j + 2)) % 5)) }
                _ = try tx.createObject("Item", values)
            }
        }
        return db
    }

    /// The `n` values of the matching objects, in the result's order.
    func ns(_ db: Database, _ text: String, _ args: [QueryArgument] = []) throws -> [Int64] {
        try intsOfItems(db, "n", text, args)
    }

    @Test func namesThatAreNotIdentifiersAreQueriedSortedAndPrintedQuoted() throws {
        let db = try makeDatabase()
        for (j, name) in QuotedNamePropertyTests.odd.enumerated() {
            let escaped = Query.escapedName(name)
            #expect(escaped.hasPrefix("#\""), "\(name) escaped as \(escaped)")
            // Object i holds (i * (j + 2)) % 5 in this property.
            let expected = (0..<5).filter { ($0 * (j + 2)) % 5 == 3 }.map(Int64.init)
            #expect(try ns(db, "\(escaped) == 3") == expected, "\(name)")
            // %K splits its argument at dots, as NSPredicate's does.
            if !name.contains(".") { #expect(try ns(db, "%K == 3", [.value(.string(name))]) == expected, "%K \(name)") }
            let sorted = (0..<5).sorted { (($0 * (j + 2)) % 5, $0) < (($1 * (j + 2)) % 5, $1) }.map(Int64.init)
            #expect(try ns(db, "TRUEPREDICATE SORT(\(escaped) ASC, n ASC)") == sorted, "sort by \(name)")
            // A printed query parses back to itself.
            let q = try Query.parse("\(escaped) > 1 SORT(\(escaped) DESC)")
            #expect(try Query.parse(q.description) == q, "\(q.description)")
        }
        #expect(try ns(db, "#'first name' == 3 OR #\"e-mail\" == 4") == [3, 4])
        #expect(Query.escapedName("first_name") == "first_name" && Query.escapedName("@count") == "@count")
    }

    @Test func aQuotedNameThatIsEmptyOrUnterminatedIsAnError() {
        #expect(throws: QueryError.self) { try Query.parse("#\"\" == 1") }
        #expect(throws: QueryError.self) { try Query.parse("#\"first name == 1") }
        #expect(throws: QueryError.self) { try Query.parse("first name == 1") }
    }
}

/// The values of the int property `property` of the `Item` objects that `text` (with `args` for `%K` and `%@`)
/// matches, in the result's order.
func intsOfItems(_ db: Database, _ property: String, _ text: String, _ args: [QueryArgument]) throws -> [Int64] {
    let s = try db.snapshot()
    defer { s.close() }
    let p = try s.property(try s.table("Item"), property)
    var arguments = args
    let q = try Query.parse(text, arguments: &arguments)
    return try q.bind(to: "Item", in: s, arguments: arguments).evaluate(in: s).map { k in
        guard case .int(let v) = try s.value(k, p) else { return -1 }
        return v
    }
}
