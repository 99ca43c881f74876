import Foundation
import Testing
@testable import RealmStorage

/// `ColumnCursor.string(_:)` (DECISIONS 113) reads what `value(_:)` reads: on every column type, with nulls,
/// in dictionary form (each distinct value decoded once per leaf) and plain, inline and out of line, in
/// committed and in dirty leaves.
@Suite struct TypedStringReadTests {
    static let schema = ClassSchema(name: "Thing", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "repeated", type: .string, isOptional: true),   // few distinct: dictionary form
        PropertySchema(name: "unique", type: .string),                       // plain
        PropertySchema(name: "long", type: .string, isOptional: true),       // some out of line
        PropertySchema(name: "flag", type: .bool, isOptional: true),
        PropertySchema(name: "score", type: .double, isOptional: true),
        PropertySchema(name: "ratio", type: .float),
        PropertySchema(name: "when", type: .date, isOptional: true),
        PropertySchema(name: "oid", type: .objectId, isOptional: true),
        PropertySchema(name: "uid", type: .uuid, isOptional: true),
        PropertySchema(name: "dec", type: .decimal128, isOptional: true),
        PropertySchema(name: "blob", type: .data, isOptional: true),
        PropertySchema(name: "any", type: .mixed),
        .link("next", to: "Thing"),
    ])

    /// Distinct as bytes though some are `==` as Swift strings ("é" precomposed and decomposed).
    static let words = ["Zürich", "", "東京", "e\u{301}", "\u{e9}", "🐕‍🦺", "Ελλάδα", "a", "name-1234", "日本語のテキスト"]

    static func values(_ i: Int) -> [String: Value] {
        [
            "id": .int(Int64(i)),
            "repeated": i % 11 == 10 ? .null : .string(words[(i * 7) % words.count]),
            "unique": .string("\(words[i % words.count])-\(i)"),
            "long": i % 50 == 0 ? .string(String(repeating: "長", count: 10_000) + "\(i)")
                : i % 3 == 0 ? .null : .string("short \(i)"),
            "flag": i % 4 == 0 ? .null : .bool(i % 2 == 0),
            "score": i % 5 == 0 ? .null : .double(Double(i) / 3),
            "ratio": .float(Float(i)),
            "when": i % 6 == 0 ? .null : .date(Timestamp(seconds: Int64(i), nanoseconds: 0)),
            "oid": .null,
            "uid": .null,
            "dec": .null,
            "blob": i % 2 == 0 ? .data([UInt8(i & 255), 0, 1]) : .null,
            "any": i % 3 == 0 ? .string("mixed \(words[i % words.count])") : .int(Int64(i)),
        ]
    }

    static func utf8(_ s: String?) -> [UInt8]? { s.map { Array($0.utf8) } }

    /// Every row of every column: `string` is `value`'s string, byte for byte, and nil where that is not a
    /// string. Returns how many leaves had a column whose distinct strings were kept.
    @discardableResult
    static func compareEveryColumn(_ s: Snapshot, _ t: TableHandle) throws -> Int {
        let props = try schema.properties.map { try s.property(t, $0.name) }
        var dictionaryLeaves = 0
        var rows = 0
        try s.scan(t) { leaf in
            for p in props {
                let col = try leaf.column(p)
                if col.box.strings?.keepsEntries == true { dictionaryLeaves += 1 }
                // Twice: the second pass reads the kept values.
                for _ in 0..<2 {
                    for row in 0..<leaf.count {
                        let v = try col.value(row)
                        let s = try col.string(row)
                        if case .string(let expected) = v {
                            #expect(utf8(s) == utf8(expected), "\(p.name), row \(row)")
                        } else {
                            #expect(s == nil, "\(p.name), row \(row): \(v)")
                        }
                    }
                }
            }
            rows += leaf.count
            return true
        }
        #expect(rows == (try s.count(t)))
        return dictionaryLeaves
    }

    @Test func readsWhatValueReadsOnEveryColumn() throws {
        let dir = try TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        try db.write { tx in
            try tx.createClasses([Self.schema])
            let t = try tx.table("Thing")
            for i in 0..<3_000 { _ = try tx.createObject(t, Self.values(i)) }
        }
        try db.read { s in
            let t = try s.table("Thing")
            // The repetitive column is in dictionary form in (nearly) every leaf: the kept values are used.
            #expect(try Self.compareEveryColumn(s, t) > 0)
        }
        // Dirty leaves of a write transaction (changed rows, appended rows), then committed again.
        try db.write { tx in
            let t = try tx.table("Thing")
            let repeated = try tx.property(t, "repeated"), unique = try tx.property(t, "unique")
            for k in try tx.keys(t).prefix(40) {
                try tx.set(k, repeated, .string("changed 🐈"))
                try tx.set(k, unique, .string(String(repeating: "x", count: 10_000)))
            }
            for i in 3_000..<3_100 { _ = try tx.createObject(t, Self.values(i)) }
            try Self.compareEveryColumn(tx, t)
        }
        try db.read { s in try Self.compareEveryColumn(s, try s.table("Thing")) }
    }

    /// In dictionary form rows share kept values: each row still gets its own entry's string.
    @Test func rowsThatShareAnEntryGetItsStringAndOthersTheirs() throws {
        let dir = try TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        let cities = ["Zürich", "東京", "🐕", "Zurich", "e\u{301}", "\u{e9}"]
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "P", properties: [PropertySchema(name: "city", type: .string)]))
            let t = try tx.table("P")
            for i in 0..<500 { _ = try tx.createObject(t, ["city": .string(cities[(i * 5 + i / 7) % cities.count])]) }
        }
        try db.read { s in
            let t = try s.table("P")
            let city = try s.property(t, "city")
            var kept = false
            var i = 0
            try s.scan(t) { leaf in
                let col = try leaf.column(city)
                kept = kept || col.box.strings?.keepsEntries == true
                for row in 0..<leaf.count {
                    #expect(Self.utf8(try col.string(row)) == Array(cities[(i * 5 + i / 7) % cities.count].utf8), "object \(i)")
                    i += 1
                }
                return true
            }
            #expect(kept)
            #expect(i == 500)
        }
    }
}
