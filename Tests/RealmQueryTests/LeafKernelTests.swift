import Foundation
import Testing
import TestSupport
@testable import RealmQuery
import RealmStorage

/// The leaf-at-a-time kernels (`ColumnCursor.keepInts`, `keepStrings`) give the answers of a filter written over
/// the objects' values: int ranges with nulls, negated; string equality, `CONTAINS[c]` and the other string
/// operators (each distinct value of a column in dictionary form tested once) over empty, null, long
/// (stored out of line) and non-ASCII strings; in a snapshot and inside a write transaction (whose changed leaves
/// are read another way).
@Suite struct LeafKernelTests {
    static let words = ["", "a", "A", "ab", "Zürich", "zürich", "東京", "🐕", String(repeating: "x", count: 5_000),
                        String(repeating: "x", count: 4_999) + "y"]

    static func fill(_ tx: WriteTransaction, _ rng: inout SplitMix64, count: Int, words: [String] = Self.words) throws {
        for _ in 0..<count {
            let n: Value = rng.next() % 7 == 0 ? .null : .int(Int64(rng.next() % 41) - 20)
            let s: Value = rng.next() % 9 == 0 ? .null : .string(words[Int(rng.next() % UInt64(words.count))])
            _ = try tx.createObject("T", ["n": n, "s": s, "m": .int(Int64(rng.next() % 1000))])
        }
    }

    /// Each query with the filter it must agree with.
    static func int(_ v: Value) -> Int64? { if case .int(let i) = v { i } else { nil } }
    static func str(_ v: Value) -> String? { if case .string(let s) = v { s } else { nil } }

    static let cases: [(String, @Sendable (Value, Value, Value) -> Bool)] = {
        return [
            ("n BETWEEN {-5, 5}", { n, _, _ in Self.int(n).map { (-5...5).contains($0) } ?? false }),
            ("NOT n BETWEEN {-5, 5}", { n, _, _ in !(Self.int(n).map { (-5...5).contains($0) } ?? false) }),
            ("n > 3", { n, _, _ in Self.int(n).map { $0 > 3 } ?? false }),
            ("n == nil", { n, _, _ in n.isNull }),
            ("m BETWEEN {100, 200}", { _, _, m in Self.int(m).map { (100...200).contains($0) } ?? false }),
            ("s == 'Zürich'", { _, s, _ in Self.str(s).map { Array($0.utf8) == Array("Zürich".utf8) } ?? false }),
            ("s != 'a'", { _, s, _ in Self.str(s).map { $0.utf8.count != 1 || $0 != "a" } ?? true }),
            ("s == ''", { _, s, _ in Self.str(s) == "" }),
            ("s == nil", { _, s, _ in s.isNull }),
            ("s == '\(Self.words[8])'", { _, s, _ in Self.str(s) == Self.words[8] }),
            ("s != '\(Self.words[9])'", { _, s, _ in Self.str(s) != Self.words[9] }),
            ("s CONTAINS[c] 'ZÜ'", { _, s, _ in Self.str(s).map { $0.lowercased().contains("zü") } ?? false }),
            ("s CONTAINS[c] 'xy'", { _, s, _ in Self.str(s).map { $0.contains("xy") } ?? false }),
            ("s CONTAINS[c] ''", { _, s, _ in Self.str(s) != nil }),
            ("s ENDSWITH[c] 'CH'", { _, s, _ in Self.str(s).map { Array($0.lowercased().utf8).reversed().starts(with: Array("ch".utf8).reversed()) } ?? false }),
            ("s ENDSWITH 'y'", { _, s, _ in Self.str(s).map { $0.utf8.last == UInt8(ascii: "y") } ?? false }),
            ("s BEGINSWITH 'Z'", { _, s, _ in Self.str(s).map { Array($0.utf8).starts(with: Array("Z".utf8)) } ?? false }),
            ("s ==[c] 'ZÜRICH'", { _, s, _ in Self.str(s).map { $0.lowercased() == "zürich" } ?? false }),
            ("s LIKE[c] '*Ü*'", { _, s, _ in Self.str(s).map { $0.lowercased().contains("ü") } ?? false }),
            ("s CONTAINS 'x'", { _, s, _ in Self.str(s).map { $0.utf8.contains(UInt8(ascii: "x")) } ?? false }),
            ("s > 'a'", { _, s, _ in Self.str(s).map { Array($0.utf8).lexicographicallyPrecedes(Array("a".utf8)) == false && $0 != "a" } ?? false }),
            ("NOT s BEGINSWITH[c] 'z'", { _, s, _ in !(Self.str(s).map { $0.lowercased().hasPrefix("z") } ?? false) }),
            ("s == 'a' AND n BETWEEN {0, 20}", { n, s, _ in Self.str(s) == "a" && (Self.int(n).map { (0...20).contains($0) } ?? false) }),
        ]
    }()

    func expectAnswers(_ s: Snapshot, _ context: String) throws {
        let t = try s.table("T")
        let hn = try s.property(t, "n"), hs = try s.property(t, "s"), hm = try s.property(t, "m")
        var rows: [(ObjectKey, Value, Value, Value)] = []
        for k in try s.keys(t) { rows.append((k, try s.value(k, hn), try s.value(k, hs), try s.value(k, hm))) }
        for (q, filter) in Self.cases {
            let want = rows.filter { filter($0.1, $0.2, $0.3) }.map(\.0)
            #expect(try Query.evaluate(q, on: "T", in: s) == want, "\(context): \(q)")
        }
    }

    @Test func kernelsAnswerAsAFilter() throws {
        let db = try Database.inMemory(identifier: "leaf-kernels-\(UUID())")
        var rng = SplitMix64(seed: 28)
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "T", properties: [
                PropertySchema(name: "n", type: .int, isOptional: true),
                PropertySchema(name: "s", type: .string, isOptional: true),
                PropertySchema(name: "m", type: .int),
            ]))
            try Self.fill(tx, &rng, count: 2_000)
        }
        try db.read { s in try expectAnswers(s, "snapshot") }
        try db.write { tx in
            try Self.fill(tx, &rng, count: 300)
            try expectAnswers(tx, "write transaction")
        }
        try db.read { s in try expectAnswers(s, "after the commit") }
    }

    /// The same over short strings only, so the string column is written in dictionary form (a value stored out
    /// of line keeps a column plain), where each distinct value is tested once per leaf.
    @Test func kernelsAnswerAsAFilterOverDictionaryColumns() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("dictionary.realm"))
        var rng = SplitMix64(seed: 105)
        let short = Array(Self.words.prefix(8)) + ["Golden Retriever", "Schnauzer", "ZÜRICH", "x"]
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "T", properties: [
                PropertySchema(name: "n", type: .int, isOptional: true),
                PropertySchema(name: "s", type: .string, isOptional: true),
                PropertySchema(name: "m", type: .int),
            ]))
            try Self.fill(tx, &rng, count: 3_000, words: short)
        }
        try db.read { s in try expectAnswers(s, "snapshot") }
        try db.write { tx in
            try Self.fill(tx, &rng, count: 300, words: short)
            try expectAnswers(tx, "write transaction")
        }
        try db.read { s in try expectAnswers(s, "after the commit") }
    }
}
