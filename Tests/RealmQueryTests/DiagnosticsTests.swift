import Foundation
import Testing
import RealmStorage
@testable import RealmQuery
import TestSupport

@Suite(.serialized) struct DiagnosticsTests {
    let fixture = try! Fixture(people: 12)

    func bindError(_ text: String, on cls: String = "Person", _ args: [QueryArgument] = []) -> QueryError? {
        let s = try! fixture.db.snapshot()
        defer { s.close() }
        do {
            _ = try Query.parse(text).bind(to: cls, in: s, arguments: args)
            return nil
        } catch {
            return error
        }
    }

    @Test func unknownPropertySuggestsTheClosestName() throws {
        let e = try #require(bindError("agee > 3"))
        #expect(e.kind == .unknownProperty)
        #expect(e.message == "unknown property 'agee' on class 'Person'; did you mean 'age'?")
        #expect(e.column == 1)
        #expect(e.description == "unknown property 'agee' on class 'Person'; did you mean 'age'? at column 1\n  agee > 3\n  ^~~~")
        #expect(bindError("buddy.nmae == 'x'")?.message.contains("did you mean 'name'?") == true)
        #expect(bindError("buddy.nmae == 'x'")?.column == 7)
        #expect(bindError("xyzzy == 1")?.message == "unknown property 'xyzzy' on class 'Person'")
        #expect(bindError("a=b SORT(p ASC)")?.kind == .unknownProperty)
        #expect(bindError("age > 1 SORT(nmae ASC)")?.message.contains("did you mean 'name'?") == true)
    }

    @Test func typeMismatches() throws {
        let e = try #require(bindError("name > 5"))
        #expect(e.kind == .typeMismatch)
        #expect(e.message.contains("'name' is a string and cannot be compared with a number"))
        #expect(e.column == 8)
        #expect(bindError("age == 'x'")?.kind == .typeMismatch)
        #expect(bindError("active > true")?.kind == .typeMismatch)
        #expect(bindError("age BEGINSWITH 1")?.kind == .typeMismatch)
        #expect(bindError("buddy == 'x'")?.kind == .typeMismatch)
        #expect(bindError("born > 5")?.kind == .typeMismatch)
        #expect(bindError("age ==[c] 5")?.kind == .typeMismatch)
        #expect(bindError("dogs.@avg.name > 1")?.kind == .typeMismatch)
        #expect(bindError("age > $0", [.value(.string("x"))])?.kind == .typeMismatch)
    }

    @Test func invalidForms() throws {
        #expect(bindError("@prop > 2")?.kind == .invalidQuery)
        #expect(bindError("ALL age > 2")?.message.contains("needs a key path through a list") == true)
        #expect(bindError("age.@count > 2")?.kind == .invalidQuery)
        #expect(bindError("dogs.@foo > 2")?.message.contains("unknown aggregate") == true)
        #expect(bindError("SUBQUERY(age, $x, $x > 1).@count > 0")?.kind == .invalidQuery)
        #expect(bindError("SUBQUERY(dogs, $x, age > 1).@count > 0")?.message.contains("starts with its variable") == true)
        #expect(bindError("age > $2", [.value(.int(1))])?.kind == .invalidArgument)
        #expect(bindError("TRUEPREDICATE SORT(dogs.name ASC)")?.kind == .invalidQuery)
        #expect(bindError("@links.Nope.x.@count > 0")?.kind == .unknownClass)
        #expect(bindError("@links.Dog.name.@count > 0")?.kind == .invalidQuery)
        #expect(bindError("name BEGINSWITH nickname")?.kind == nil)  // two key paths of the same type are fine
        #expect(bindError("name BEGINSWITH age")?.kind == .typeMismatch)
        #expect(bindError("'a' BEGINSWITH name")?.kind == .invalidQuery)
        #expect(bindError("age IN age")?.kind == .invalidQuery)
    }

    /// Random and mutated query strings: never a crash; every failure is a `QueryError` with a position
    /// inside the text. `REALM_FUZZ=N` runs N inputs instead of 20,000.
    @Test func fuzz() throws {
        let n = ProcessInfo.processInfo.environment["REALM_FUZZ"].flatMap { Int($0) } ?? 20_000
        let f = fixture
        let s = try f.db.snapshot()
        defer { s.close() }
        let seeds = referenceExamples + corpus(f).prefix(400).map(\.query)
        let fragments = ["(", ")", "{", "}", "'", "\"", "\\", "$0", "$x", "@count", "@links", ".", ",", "==", "<", ">=", "!", "&&",
                         "||", " AND ", " OR ", " NOT ", "ANY ", "ALL ", "SUBQUERY(", "[c]", "[cd]", "BEGINSWITH", "IN", "BETWEEN",
                         "nil", "0x", "1e", "-", "+", "inf", "nan", "T1:", "2017-12-01@", "oid(", "uuid(", "B64\"", "SORT(",
                         "LIMIT(", "DISTINCT(", "ASC", "DESC", "🦄", "é", "東", "\u{0}", "\n", " ", "age", "name", "dogs", "buddy",
                         "scores", "tags", "TRUEPREDICATE", "9999999999999999999999", "..", "@", "$", "#"]
        var rng = SplitMix64(seed: 4242)
        var parsed = 0, bound = 0, evaluated = 0
        for i in 0..<n {
            var text: String
            if i % 4 == 0 {
                text = (0..<(1 + rng.below(8))).map { _ in fragments[rng.below(fragments.count)] }.joined()
            } else {
                var chars = Array(seeds[rng.below(seeds.count)])
                for _ in 0..<(1 + rng.below(3)) {
                    let at = chars.isEmpty ? 0 : rng.below(chars.count + 1)
                    switch rng.below(4) {
                    case 0 where !chars.isEmpty: chars.remove(at: min(at, chars.count - 1))
                    case 1: chars.insert(contentsOf: Array(fragments[rng.below(fragments.count)]), at: at)
                    case 2 where !chars.isEmpty:
                        let end = min(chars.count, at + rng.below(6))
                        chars.removeSubrange(min(at, end)..<end)
                    default:
                        if chars.count > 1 { chars.swapAt(rng.below(chars.count), rng.below(chars.count)) }
                    }
                }
                text = String(chars)
            }
            do {
                let q = try Query.parse(text)
                parsed += 1
                let again = try Query.parse(q.description)
                #expect(again == q, "round trip of \(text.debugDescription) via \(q.description.debugDescription)")
                let b = try q.bind(to: i % 7 == 0 ? "Dog" : "Person", in: s, arguments: [.value(.int(3)), .list([.int(1), .int(2)])])
                bound += 1
                _ = try b.evaluate(in: s)
                evaluated += 1
            } catch let e as QueryError {
                #expect(e.range.start >= 0 && e.range.start <= e.query.utf8.count && e.range.end <= e.query.utf8.count)
                #expect(e.column >= 1 && !e.message.isEmpty)
                #expect(e.description.contains("^"))
            } catch {
                Issue.record("\(text.debugDescription): not a QueryError: \(error)")
            }
        }
        print("fuzz: \(n) inputs, \(parsed) parsed, \(bound) bound, \(evaluated) evaluated")
    }
}
