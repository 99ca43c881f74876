import Foundation
import Testing
@testable import RealmQuery
@testable import RealmStorage
import TestSupport

/// `SORT` by an indexed string or int property walks the index; the result must be exactly the stable sort
/// of the documented order (nulls first, strings by code point, equal values in key order).
@Suite struct IndexSortTests {
    static let words = ["", "a", "A", "a\u{0}b", "b", "é", "e\u{301}", "日本", "日本語", "🐶", "Zoë", "zz", "a b", "ä"]

    func makeDatabase(count: Int, longStrings: Bool) throws -> Database {
        let db = try Database.inMemory(identifier: "index-sort-\(UUID())")
        var rng = SplitMix64(seed: 17)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "name", type: .string, isOptional: true, isIndexed: true),
                PropertySchema(name: "n", type: .int, isIndexed: true),
                PropertySchema(name: "plain", type: .string),
                PropertySchema(name: "free", type: .string, isOptional: true),
                PropertySchema(name: "num", type: .int, isOptional: true),
                PropertySchema(name: "dbl", type: .double, isOptional: true),
                PropertySchema(name: "flt", type: .float),
                PropertySchema(name: "flag", type: .bool, isOptional: true),
                PropertySchema(name: "when", type: .date, isOptional: true),
            ]))
            for i in 0..<count {
                let r = Int(rng.next() % 20)
                let name: Value = r == 0 ? .null : r == 1 && longStrings ? .string(String(repeating: "長", count: 90) + "\(i % 3)")
                    : .string(Self.words[Int(rng.next() % UInt64(Self.words.count))])
                // Not indexed: sorted by prefixes, then by bytes where a prefix is shared by different values.
                let f = Int(rng.next() % 24)
                let free: Value = f == 0 ? .null : f < 6 ? .string("shared-prefix-\(rng.next() % 9)\(f % 2 == 0 ? "" : "\u{0}")")
                    : f == 6 ? .string("a\u{0}") : .string(Self.words[Int(rng.next() % UInt64(Self.words.count))])
                // Numbers sorted as integers of the same order: extremes, NaN, both zeros, nulls.
                let ints: [Int64] = [.min, -1, 0, 1, .max, 42]
                let times = [Timestamp(seconds: -5, nanoseconds: -999_999_999), Timestamp(seconds: -5, nanoseconds: 0),
                             Timestamp(seconds: 0, nanoseconds: -1), Timestamp(seconds: 0), Timestamp(seconds: 0, nanoseconds: 7),
                             Timestamp(seconds: 1_700_000_000, nanoseconds: 500), Timestamp(seconds: 1_700_000_000, nanoseconds: 499),
                             Timestamp(seconds: .max, nanoseconds: 999_999_999), Timestamp(seconds: .min)]
                let doubles: [Double] = [-.infinity, -1.5, -0.0, 0.0, .leastNonzeroMagnitude, 2.5, .infinity, .nan, -.nan, .greatestFiniteMagnitude]
                let r2 = Int(rng.next() % 12)
                _ = try tx.createObject("Item", ["name": name, "n": .int(Int64(rng.next() % 7) - 3), "plain": .string("p\(i % 5)"),
                                                 "free": free,
                                                 "num": r2 == 0 ? .null : .int(ints[Int(rng.next() % UInt64(ints.count))]),
                                                 "dbl": r2 == 1 ? .null : .double(doubles[Int(rng.next() % UInt64(doubles.count))]),
                                                 "flt": .float(Float(doubles[Int(rng.next() % UInt64(doubles.count))])),
                                                 "flag": r2 == 2 ? .null : .bool(rng.next() % 2 == 0),
                                                 "when": r2 == 3 ? .null : .date(times[Int(rng.next() % UInt64(times.count))])])
            }
        }
        return db
    }

    /// The expected order, worked out with `ValueOrder` and a stable sort over key-ordered input.
    func reference(_ s: Snapshot, _ keys: [ObjectKey], by property: String, ascending: Bool) throws -> [ObjectKey] {
        let t = try s.table("Item"), p = try s.property(t, property)
        let values = try keys.map { try s.value($0, p) }
        let order = keys.indices.sorted { a, b in
            let o = ValueOrder.compare(values[a], values[b])
            if o != 0 { return ascending ? o < 0 : o > 0 }
            return a < b
        }
        return order.map { keys[$0] }
    }

    /// Ints, doubles, floats, bools and dates, each turned into integers of the same order.
    @Test func sortingByPlainNumbersMatchesTheReferenceOrder() throws {
        let db = try makeDatabase(count: 3000, longStrings: false)
        try db.read { s in
            for property in ["num", "dbl", "flt", "flag", "when"] {
                for query in ["TRUEPREDICATE", "n >= -2", "n == 0"] {
                    for asc in [true, false] {
                        let text = "\(query) SORT(\(property) \(asc ? "ASC" : "DESC"))"
                        let got = try Query.evaluate(text, on: "Item", in: s)
                        let matching = try Query.evaluate(query, on: "Item", in: s)
                        #expect(got == (try reference(s, matching, by: property, ascending: asc)), "\(text)")
                    }
                }
            }
        }
    }

    @Test func sortingByAPlainStringMatchesTheReferenceOrder() throws {
        let db = try makeDatabase(count: 3000, longStrings: true)
        try db.read { s in
            for query in ["TRUEPREDICATE", "n >= -2", "n == 0", "free BEGINSWITH 'shared'", "free == nil OR free == 'a'"] {
                for asc in [true, false] {
                    let text = "\(query) SORT(free \(asc ? "ASC" : "DESC"))"
                    let got = try Query.evaluate(text, on: "Item", in: s)
                    let matching = try Query.evaluate(query, on: "Item", in: s)
                    #expect(got == (try reference(s, matching, by: "free", ascending: asc)), "\(text)")
                }
            }
        }
    }

    @Test(arguments: [false, true])
    func sortingByAnIndexedPropertyMatchesTheReferenceOrder(longStrings: Bool) throws {
        let db = try makeDatabase(count: 3000, longStrings: longStrings)
        try db.read { s in
            let all = try s.keys(s.table("Item"))
            for (query, property) in [("TRUEPREDICATE", "name"), ("TRUEPREDICATE", "n"), ("n >= -2", "name"), ("plain != 'p1'", "n")] {
                for asc in [true, false] {
                    let text = "\(query) SORT(\(property) \(asc ? "ASC" : "DESC"))"
                    let got = try Query.evaluate(text, on: "Item", in: s)
                    let matching = try Query.evaluate(query, on: "Item", in: s)
                    #expect(got == (try reference(s, matching, by: property, ascending: asc)), "\(text)")
                }
            }
            #expect(all.count == 3000)
            // Without long strings the name index gives the order itself.
            #expect((try s.keysInIndexOrder(s.property(s.table("Item"), "name")) != nil) == !longStrings)
        }
    }

    @Test func theIndexWalkIsUsedWhenItCanBe() throws {
        // Without long strings the index gives the whole order; with one it declines (their order is not in it).
        let db = try Database.inMemory(identifier: "index-walk-\(UUID())")
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [PropertySchema(name: "name", type: .string, isIndexed: true)]))
            for w in Self.words { _ = try tx.createObject("Item", ["name": .string(w)]) }
        }
        try db.read { s in
            let p = try s.property(s.table("Item"), "name")
            let walked = try #require(try s.keysInIndexOrder(p))
            #expect(walked.keys.count == Self.words.count)
            #expect(walked.runStarts.count == Set(Self.words.map { Array($0.utf8) }).count)
        }
        try db.write { tx in _ = try tx.createObject("Item", ["name": .string(String(repeating: "x", count: 300))]) }
        let declined = try db.read { s in try s.keysInIndexOrder(s.property(s.table("Item"), "name")) == nil }
        #expect(declined)
    }
}

/// `SORT` by several properties, through links and over mixed values: each column ordered on its own and the
/// orders combined by rank must give exactly the stable sort by all the descriptors at once.
@Suite struct MultiColumnSortTests {
    /// Items as `IndexSortTests` makes them, each linked (or not) to an owner whose name, age and mixed value
    /// repeat, so that ties on one descriptor are broken by the next.
    func makeDatabase() throws -> Database {
        let db = try IndexSortTests().makeDatabase(count: 3000, longStrings: true)
        var rng = SplitMix64(seed: 29)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Owner", properties: [
                PropertySchema(name: "name", type: .string, isOptional: true),
                PropertySchema(name: "age", type: .int),
                PropertySchema(name: "m", type: .mixed, isOptional: true),
                PropertySchema(name: "boss", type: .link, isOptional: true, objectClassName: "Owner"),
            ]))
            try tx.addProperty("Item", PropertySchema(name: "owner", type: .link, isOptional: true, objectClassName: "Owner"))
            let names: [Value] = [.null, .string("Ann"), .string("ann"), .string("Änne"), .string("日本"), .string("Bo\u{0}"), .string("Bo")]
            let mixed: [Value] = [.null, .int(1), .double(1.0), .double(.nan), .string("1"), .bool(true), .int(-3), .date(Timestamp(seconds: 5))]
            var owners: [ObjectKey] = []
            for _ in 0..<40 {
                owners.append(try tx.createObject("Owner", ["name": names[Int(rng.next() % UInt64(names.count))],
                                                           "age": .int(Int64(rng.next() % 4)),
                                                           "m": mixed[Int(rng.next() % UInt64(mixed.count))]]))
            }
            let boss = try tx.property(tx.table("Owner"), "boss")
            for o in owners where rng.next() % 3 != 0 {
                try tx.set(o, boss, .link(owners[Int(rng.next() % UInt64(owners.count))]))
            }
            let items = try tx.keys(tx.table("Item"))
            let owner = try tx.property(tx.table("Item"), "owner")
            for k in items where rng.next() % 5 != 0 {
                try tx.set(k, owner, .link(owners[Int(rng.next() % UInt64(owners.count))]))
            }
        }
        return db
    }

    /// A descriptor's value for one item, nil when its path meets a null link.
    func value(_ s: Snapshot, _ key: ObjectKey, _ path: String) throws -> Value? {
        let item = try s.table("Item")
        var parts = path.split(separator: ".").map(String.init)
        guard parts.count >= 2 else { return try s.value(key, s.property(item, path)) }
        guard case .link(var o) = try s.value(key, s.property(item, parts.removeFirst())) else { return nil }
        let owner = try s.table("Owner")
        while parts.count > 1 {
            guard case .link(let next) = try s.value(o, s.property(owner, parts.removeFirst())) else { return nil }
            o = next
        }
        return try s.value(o, s.property(owner, parts[0]))
    }

    /// The stable sort by every descriptor at once, with `ValueOrder` (a null link after every value ascending,
    /// before every value descending).
    func reference(_ s: Snapshot, _ keys: [ObjectKey], _ descriptors: [(String, Bool)]) throws -> [ObjectKey] {
        let values = try descriptors.map { d in try keys.map { try value(s, $0, d.0) } }
        let order = keys.indices.sorted { a, b in
            for (n, d) in descriptors.enumerated() {
                let x = values[n][a], y = values[n][b]
                let o: Int
                switch (x, y) {
                case (nil, nil): o = 0
                case (nil, _): o = d.1 ? 1 : -1
                case (_, nil): o = d.1 ? -1 : 1
                case (let x?, let y?): o = d.1 ? ValueOrder.compare(x, y) : -ValueOrder.compare(x, y)
                }
                if o != 0 { return o < 0 }
            }
            return a < b
        }
        return order.map { keys[$0] }
    }

    @Test func severalDescriptorsMatchTheReferenceOrder() throws {
        let db = try makeDatabase()
        let sorts: [[(String, Bool)]] = [
            [("plain", true), ("num", false)],
            [("flag", false), ("free", true)],
            [("n", true), ("name", true)],
            [("when", true), ("dbl", false), ("flt", true)],
            [("free", false), ("when", false)],
            [("owner.name", true)],
            [("owner.name", false)],
            [("owner.m", true)],
            [("owner.m", false), ("n", true)],
            [("owner.age", false), ("owner.name", true), ("plain", false)],
            [("flag", true), ("owner.name", false), ("dbl", true)],
            [("owner.boss.name", true), ("num", true)],
            [("owner.boss.age", false)],
            [("owner.boss.m", true), ("owner.boss", true)],
        ]
        try db.read { s in
            for query in ["TRUEPREDICATE", "n >= -2", "owner.age == 1"] {
                let matching = try Query.evaluate(query, on: "Item", in: s)
                for descriptors in sorts {
                    let clause = descriptors.map { "\($0.0) \($0.1 ? "ASC" : "DESC")" }.joined(separator: ", ")
                    let text = "\(query) SORT(\(clause))"
                    let got = try Query.evaluate(text, on: "Item", in: s)
                    #expect(got == (try reference(s, matching, descriptors)), "\(text)")
                }
            }
        }
    }

    /// A column of few distinct values longer than 8 bytes is ordered through its distinct values; the order
    /// and the ties must be those of the plain string sort.
    @Test func fewDistinctLongStringsMatchTheReferenceOrder() throws {
        let db = try Database.inMemory(identifier: "few-distinct-\(UUID())")
        let words: [Value] = [.null, .string("Labrador Retriever"), .string("Labrador Retriever\u{0}"), .string("Labrador"),
                              .string("Labrador Retrievers"), .string("Golden Retriever"), .string("日本語の犬の名前"),
                              .string("🐶🐶🐶🐶"), .string(""), .string("Labrador Retriev\u{e9}r"), .string("Lab")]
        var rng = SplitMix64(seed: 53)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "breed", type: .string, isOptional: true),
                PropertySchema(name: "n", type: .int),
            ]))
            for _ in 0..<6_000 {
                _ = try tx.createObject("Item", ["breed": words[Int(rng.next() % UInt64(words.count))],
                                                 "n": .int(Int64(rng.next() % 3))])
            }
        }
        try db.read { s in
            let all = try s.keys(s.table("Item"))
            let breed = try s.property(s.table("Item"), "breed"), n = try s.property(s.table("Item"), "n")
            let values = try all.map { (try s.value($0, breed), try s.value($0, n)) }
            for (text, byN) in [("SORT(breed ASC)", false), ("SORT(breed DESC)", false), ("SORT(breed DESC, n ASC)", true)] {
                let ascending = !text.contains("breed DESC")
                let expected = all.indices.sorted { a, b in
                    let o = ValueOrder.compare(values[a].0, values[b].0)
                    if o != 0 { return ascending ? o < 0 : o > 0 }
                    if byN, values[a].1 != values[b].1 { return ValueOrder.compare(values[a].1, values[b].1) < 0 }
                    return a < b
                }.map { all[$0] }
                #expect(try Query.evaluate("TRUEPREDICATE \(text)", on: "Item", in: s) == expected, "\(text)")
            }
            let distinct = try Query.evaluate("TRUEPREDICATE DISTINCT(breed)", on: "Item", in: s)
            #expect(distinct.count == words.count)
        }
    }

    /// Ranks too wide to sit side by side in one word (five columns of up to 2^20 ranks) are combined a few
    /// columns at a time; the order must still be the lexicographic one, ties in position order.
    @Test func ranksWiderThanAWordCombineInSteps() throws {
        var rng = SplitMix64(seed: 41)
        let n = 5_000
        let columns: [Sorter.Ranked] = (0..<5).map { c in
            var r = Sorter.Ranked(order: [], differs: { _ in false }, ranked: false)
            // Few distinct values among the rows, so that ties reach the later columns.
            r.ranks = (0..<n).map { _ in Int32(rng.next() % (c == 4 ? 3 : 5)) * Int32(c == 2 ? 1 : 200_000) }
            r.distinct = 1 << 20
            return r
        }
        let got = try Sorter.itemsByRanks(columns, progress: nil).map { Int($0.index) }
        let expected = (0..<n).sorted { a, b in
            for c in columns where c.ranks[a] != c.ranks[b] { return c.ranks[a] < c.ranks[b] }
            return a < b
        }
        #expect(got == expected)
    }

    /// The first object of each combination of values, strings bytewise, objects behind a null link dropped.
    func referenceDistinct(_ s: Snapshot, _ keys: [ObjectKey], _ paths: [String]) throws -> [ObjectKey] {
        var seen = Set<[Value]>()
        var out: [ObjectKey] = []
        next: for k in keys {
            var combo: [Value] = []
            for p in paths {
                guard let v = try value(s, k, p) else { continue next }
                if case .string(let t) = v { combo.append(.data(Array(t.utf8))) } else { combo.append(v) }
            }
            if seen.insert(combo).inserted { out.append(k) }
        }
        return out
    }

    @Test func distinctMatchesTheReferenceForEveryKindOfColumn() throws {
        let db = try makeDatabase()
        let distincts: [[String]] = [
            ["plain"], ["free"], ["name"], ["num"], ["flag", "n"], ["when"], ["free", "num", "flag"],
            ["owner.name"], ["owner.age", "plain"], ["owner.boss.name", "flag"], ["owner.m"], ["dbl"], ["flt", "n"],
        ]
        try db.read { s in
            for query in ["TRUEPREDICATE", "n >= -2 SORT(num DESC)", "owner.age == 1 SORT(owner.name ASC, free DESC)"] {
                let matching = try Query.evaluate(query, on: "Item", in: s)
                for paths in distincts {
                    let text = "\(query) DISTINCT(\(paths.joined(separator: ", ")))"
                    let got = try Query.evaluate(text, on: "Item", in: s)
                    #expect(got == (try referenceDistinct(s, matching, paths)), "\(text)")
                }
            }
        }
    }
}

/// `CONTAINS[c]` folds the haystack while it searches; it must agree with folding a copy first.
@Suite struct FoldedContainsTests {
    @Test func agreesWithFoldingACopyFirst() {
        let alphabet = Array("aAbBzZéÉüÜ×÷ßÞþ日本🐶 \u{0}") + ["\u{C3}"].compactMap { $0.first }
        var rng = SplitMix64(seed: 5)
        func random(_ n: Int) -> String { String((0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }) }
        for _ in 0..<5000 {
            let h = Array(random(Int(rng.next() % 12)).utf8), n0 = Array(random(1 + Int(rng.next() % 3)).utf8)
            var n = n0
            n.withUnsafeMutableBytes { Semantics.foldCase($0) }
            var hf = h
            hf.withUnsafeMutableBytes { Semantics.foldCase($0) }
            let expected = n.count <= hf.count && hf.withUnsafeBytes { a in n.withUnsafeBytes { b in Semantics.find(a, b) } }
            let got = h.withUnsafeBytes { a in n.withUnsafeBytes { b in Semantics.containsFolded(a, b) } }
            #expect(got == expected, "\(String(decoding: h, as: UTF8.self)) CONTAINS[c] \(String(decoding: n0, as: UTF8.self))")
        }
    }
}
