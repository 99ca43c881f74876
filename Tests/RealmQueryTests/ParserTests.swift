import Foundation
import Testing
@testable import RealmQuery
import RealmStorage

/// Every example of `../shared/reference/query-language.md`, property names as in the fixtures.
let referenceExamples = [
    "TRUEPREDICATE",
    "!FALSEPREDICATE",
    "age > 2 and age < 4",
    "age = 1 || age == 3",
    "(age > 1 || fees >= 2.25) && age == 4",
    "fees BETWEEN {2.20, 2.25}",
    "fees < +inFINITY",
    "licensed == true or licensed = TRUE",
    "buddy == nil",
    "buddy <> NULL",
    "buddy.buddy.buddy.age > 0",
    "name BEGINSWITH \"J\"",
    "name ENDSWITH[c] \"E\"",
    "name CONTAINS[c] \"OE\"",
    "name like \"?o?\"",
    "name LIKE[c] \"b*\"",
    "name !=[c] 'bOB'",
    "name ==[c] 'unicorn🦄'",
    "NULL != name",
    "time > 2017-12-1@12:07:53",
    "time == 2017-12-01@12:07:53:505",
    "items.@count > 2",
    "items.price > 3.0",
    "items.@sum.price > 50",
    "items.@avg.price > 7",
    "items.@min.price == 4.0",
    "name.@count > $0",
    "age > $0 || fees == $1",
    "fees BETWEEN {$0, $1}",
    "ANY items.price == 5.5",
    "ALL items.price == 5.5",
    "NONE items.allergens.name == 'dairy'",
    "customer_id IN {0, 1, 2}",
    "NOT customer_id IN {0, 1}",
    "5.5 IN items.price",
    "'milk' IN items.name",
    "SUBQUERY(items, $x, $x.name CONTAINS[c] 'MILK' && $x.price == 5.5).@count >= 1",
    "@links.Person.items.@min.account_balance <= 10",
    "@links.@count == 0 && item_id == 20",
    "nid >= oid(000000000000000000000000)",
    "uid == uuid(00000000-0000-0000-0000-000000000000)",
    "age > 0 SORT(age ASC, name DESC)",
    "TRUEPREDICATE SORT(age ASC) DISTINCT(age)",
    "TRUEPREDICATE SORT(name ASC) LIMIT(2)",
]

@Suite struct ParserTests {
    @Test(arguments: referenceExamples)
    func referenceExampleParsesAndRoundTrips(_ text: String) throws {
        let q = try Query.parse(text)
        let printed = q.description
        let again = try Query.parse(printed)
        #expect(again == q, "\(text) printed as \(printed)")
        #expect(again.description == printed)
    }

    @Test func treeShapes() throws {
        let q = try Query.parse("a == 1 || b == 2 && !c == 3")
        guard case .or(let items) = q.predicate, items.count == 2, case .and(let inner) = items[1], inner.count == 2,
              case .not = inner[1] else {
            Issue.record("unexpected tree \(q.predicate)")
            return
        }
        #expect(try Query.parse("a = 1") == Query.parse("a == 1"))
        #expect(try Query.parse("a <> 1") == Query.parse("a != 1"))
        #expect(try Query.parse("a =< 1") == Query.parse("a <= 1"))
        #expect(try Query.parse("a => 1") == Query.parse("a >= 1"))
        #expect(try Query.parse("SOME a == 1") == Query.parse("ANY a == 1"))
        // A quantified list on the right is the comparison with its sides swapped, as Realm's grammar reads it.
        #expect(try Query.parse("age < ALL {1, 2}") == Query.parse("ALL {1, 2} > age"))
        #expect(try Query.parse("tags == ANY {'a', 'b'}") == Query.parse("ANY {'a', 'b'} == tags"))
        #expect(try Query.parse("age != NONE {3}") == Query.parse("NONE {3} != age"))
        #expect(try Query.parse("a == 1 AND b == 2") != Query.parse("a == 1 OR b == 2"))
        // Explicit grouping survives printing.
        let grouped = try Query.parse("(a == 1 && b == 2) && c == 3")
        #expect(try Query.parse(grouped.description) == grouped)
        #expect(grouped != (try Query.parse("a == 1 && b == 2 && c == 3")))
    }

    @Test func literals() throws {
        func literal(_ text: String) throws -> Literal {
            guard case .comparison(let c) = try Query.parse("x == \(text)").predicate, case .literal(let l, _) = c.rhs else {
                throw QueryError(.syntax, "not a literal", query: text, range: SourceRange(0, 0))
            }
            return l
        }
        #expect(try literal("0x1F") == .int(31))
        #expect(try literal("-0x10") == .int(-16))
        #expect(try literal("-9223372036854775808") == .int(.min))
        #expect(try literal("9223372036854775807") == .int(.max))
        #expect(try literal("1.5e3") == .double(1500))
        // Numbers a double cannot hold keep their decimal value; an integer beyond Int64 too.
        #expect(try literal("12345678901234567890.15") == .decimal(Decimal128(string: "12345678901234567890.15")!))
        #expect(try literal("-99999999999999999999") == .decimal(Decimal128(string: "-99999999999999999999")!))
        #expect(try literal("1e400") == .decimal(Decimal128(string: "1E+400")!))
        #expect(try literal("0.30000000000000004") == .double(0.30000000000000004))
        #expect(try literal("1.10") == .double(1.1))
        #expect(try literal("-2.5E-1") == .double(-0.25))
        #expect(try literal(".5") == .double(0.5))
        #expect(try literal("-inf") == .double(-.infinity))
        #expect(try literal("+Infinity") == .double(.infinity))
        #expect(try literal("NaN") == .double(.nan))
        #expect(try literal("'it\\'s \\\"x\\\" \\\\ \\n\\t\\u00e9'") == .string("it's \"x\" \\ \n\té"))
        #expect(try literal("\"\\uD83E\\uDD84\"") == .string("🦄"))
        // As Realm reads them: B64"…" is a string (its bytes), bin(B64"…") binary data.
        #expect(try literal("B64\"SGVsbG8=\"") == .string("Hello"))
        #expect(try literal("bin(B64\"SGVsbG8=\")") == .binary(Array("Hello".utf8)))
        #expect(try literal("B64\"/w==\"") == .binary([0xFF]))  // bytes that are no UTF-8 text stay bytes
        #expect(try literal("1970-01-01@00:00:01") == .date(Timestamp(seconds: 1)))
        #expect(try literal("1970-01-01T00:00:01:5") == .date(Timestamp(seconds: 1, nanoseconds: 5)))
        #expect(try literal("1969-12-31@23:59:59") == .date(Timestamp(seconds: -1)))
        #expect(try literal("1969-12-31@23:59:59:500000000") == .date(Timestamp(seconds: 0, nanoseconds: -500_000_000)))
        #expect(try literal("2040-02-29@12:00:00") == .date(Timestamp(seconds: 2_214_129_600)))
        #expect(try literal("T-5:-100") == .date(Timestamp(seconds: -5, nanoseconds: -100)))
        #expect(try literal("T1512130073:505") == .date(Timestamp(seconds: 1_512_130_073, nanoseconds: 505)))
        #expect(try literal("oid(5a1b2c3d4e5f60718293a4b5)") == .objectId(ObjectId(hexString: "5a1b2c3d4e5f60718293a4b5")!))
        #expect(try literal("uuid(137DECC8-B300-4954-A233-F89909F4FD89)") == .uuid(UUID(uuidString: "137DECC8-B300-4954-A233-F89909F4FD89")!))
        #expect(try literal("nil") == .null)
        #expect(try literal("TRUE") == .bool(true))
    }

    @Test func everyLiteralRoundTrips() throws {
        let literals: [Literal] = [
            .null, .bool(true), .bool(false), .int(0), .int(.min), .int(.max), .double(0.1), .double(-0.0), .double(1e300),
            .double(5e-324), .double(.infinity), .double(-.infinity), .double(.nan), .double(3),
            .string(""), .string("a'b\"c\\d\ne\tf\u{1}g🦄中文é"), .binary([]), .binary([0, 255, 1, 2]),
            .date(Timestamp(seconds: -1_000_000_000_000, nanoseconds: -1)), .date(Timestamp(seconds: 4_000_000_000, nanoseconds: 999_999_999)),
            // The smallest and largest dates Realm's SDKs store.
            .date(Timestamp(seconds: .min, nanoseconds: -999_999_999)), .date(Timestamp(seconds: .max, nanoseconds: 999_999_999)),
            .objectId(ObjectId.zero), .uuid(UUID(uuidString: "137DECC8-B300-4954-A233-F89909F4FD89")!),
            .decimal(Decimal128(string: "12345678901234567890.15")!), .decimal(Decimal128(string: "-1.000000000000000000000000000000001E-300")!),
            .decimal(Decimal128(string: "9999999999999999999999999999999999")!), .decimal(Decimal128(string: "1E+400")!),
        ]
        for l in literals {
            let q = Query(predicate: .comparison(Comparison(lhs: .keyPath(KeyPath("x")), op: .equal, rhs: .literal(l, SourceRange(0, 0)))))
            let again = try Query.parse(q.description)
            #expect(again == q, "\(l) printed as \(q.description)")
        }
    }

    /// (query, message fragment, column)
    static let errors: [(String, String, Int)] = [
        ("age >> 3", "expected a value after '>'", 6),
        ("name BEGINSWITH ANY {'a'}", "ANY {…} on the right needs ==", 17),
        ("ANY tags == ALL {'a'}", "only one side of a comparison can take ANY, ALL or NONE", 13),
        ("name == 'abc", "unterminated string", 9),
        ("(age > 3", "'(' is never closed", 1),
        ("age > 3)", "')' without a matching '('", 8),
        ("((age > 3) && name == 'x'", "'(' is never closed", 1),
        ("a=b LIMIT(-1)", "LIMIT needs a non-negative integer", 11),
        ("SUBQUERY(items, $x, $x.name == 'Tom') > 0", "must be followed by .@count", 39),
        ("", "empty query", 1),
        ("age >", "expected a value after '>'", 6),
        ("age 3", "expected an operator", 5),
        ("age > 3 name == 2", "after a complete condition", 9),
        ("age & 3", "did you mean '&&'", 5),
        ("age > 3 AND", "expected a condition after 'AND'", 12),
        ("name ==[x] 'a'", "unknown modifier", 8),
        ("age > 3 SORT(age)", "expected ASC or DESC", 17),
        ("age IN {1, 2", "'{' is never closed", 8),
        ("nid == oid(123)", "24 hexadecimal digits", 8),
        ("uid == uuid(zzz)", "uuid(...) needs", 8),
        ("d == 2017-13-01@00:00:00", "invalid date", 6),
        ("name == 'a\\q'", "unknown escape", 11),
        ("age BETWEEN {1}", "BETWEEN needs a list of two values", 13),
        ("年齢 >> 3", "expected a value after '>'", 5),
        ("x == B64\"!!\"", "invalid base64", 6),
        ("age ># 3", "expected a name after '#'", 6),
        ("any > 1", "expected a key path after 'any', found '>'; a property named 'any' is written #any", 5),
        ("first name == 'Ada'", "expected an operator after 'first', found 'name'; a name with a space is written #\"first name\"", 7),
    ]

    @Test func errorsSayWhatAndWhere() {
        for (text, fragment, column) in ParserTests.errors {
            do {
                let q = try Query.parse(text)
                Issue.record("\(text) parsed as \(q)")
            } catch {
                #expect(error.message.contains(fragment), "\(text): \(error.message)")
                #expect(error.column == column, "\(text): column \(error.column), expected \(column)\n\(error)")
                let lines = error.description.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.count == 3)
                #expect(lines.last?.dropFirst(2).firstIndex(of: "^").map { lines.last!.dropFirst(2).distance(from: lines.last!.dropFirst(2).startIndex, to: $0) } == column - 1)
            }
        }
    }

    @Test func diagnosticLooksLikeACompilerMessage() {
        do {
            _ = try Query.parse("age >> 3")
        } catch {
            #expect(error.description == "expected a value after '>' at column 6\n  age >> 3\n       ^")
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "(", count: 5000) + "a == 1" + String(repeating: ")", count: 5000)
        #expect(throws: QueryError.self) { try Query.parse(deep) }
        let nots = String(repeating: "NOT ", count: 5000) + "a == 1"
        #expect(throws: QueryError.self) { try Query.parse(nots) }
        let ok = String(repeating: "(", count: 50) + "a == 1" + String(repeating: ")", count: 50)
        #expect(throws: Never.self) { try Query.parse(ok) }
    }
}
