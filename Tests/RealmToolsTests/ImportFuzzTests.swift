import Foundation
import Testing
import TestSupport
import RealmStorage
@testable import RealmTools

/// JSON imports of damaged and hostile documents (truncated, mistyped, deeply nested, huge values): never a
/// crash, every failure a `ToolError`, and a failed import writes nothing. `REALM_FUZZ_IMPORT=N` runs N
/// documents instead of 600.
@Suite struct ImportFuzzTests {
    static let valid = """
        {"Person": [
          {"id": 1, "name": "Ada", "age": 36, "score": 1.5, "tags": ["a", "b"], "friend": 2, "photo": "AAEC", "born": "1815-12-10T00:00:00Z"},
          {"id": 2, "name": "東京 🐕", "age": null, "score": -0.0, "tags": [], "friend": null},
          {"id": 3, "name": "x", "age": 9223372036854775807, "score": 1e300, "tags": ["\\u00e9", "\\"q\\""], "friend": {"id": 4, "name": "nested"}}
        ],
        "Dog": [
          {"name": "Rex", "owner": 1},
          {"name": "Fido", "owner": {"$class": "Person", "$index": 1}}
        ]}
        """

    static let schema: [ClassSchema] = [
        ClassSchema(name: "Person", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "name", type: .string, isIndexed: true),
            PropertySchema(name: "age", type: .int, isOptional: true),
            PropertySchema(name: "score", type: .double),
            PropertySchema(name: "tags", type: .string, isList: true),
            .link("friend", to: "Person"),
            PropertySchema(name: "photo", type: .data, isOptional: true),
            PropertySchema(name: "born", type: .date, isOptional: true),
        ]),
        ClassSchema(name: "Dog", properties: [
            PropertySchema(name: "name", type: .string),
            .link("owner", to: "Person"),
        ]),
    ]

    /// Everything the database holds, as text (classes, counts and every value).
    static func dump(_ db: Database) throws -> String {
        try db.read { s in
            var lines: [String] = ["version-independent"]
            for c in s.schema {
                let t = try s.table(c.name)
                for k in try s.keys(t) {
                    let values = try c.properties.map { p in
                        p.isList ? "\(try s.list(k, s.property(t, p.name)))" : "\(try s.value(k, s.property(t, p.name)))"
                    }
                    lines.append("\(c.name) \(k.rawValue) \(values)")
                }
            }
            return lines.joined(separator: "\n")
        }
    }

    @Test func damagedAndHostileDocumentsFailCleanlyAndWriteNothing() throws {
        let n = ProcessInfo.processInfo.environment["REALM_FUZZ_IMPORT"].flatMap { Int($0) } ?? 600
        let dir = TempDir()
        let db = try Database.open(path: dir.file("import.realm"))
        try db.write { tx in try tx.createClasses(Self.schema) }
        let base = Array(Self.valid.utf8)
        // The unmutated document imports (so the mutations start from something valid).
        let report = try DataImport(file: "valid.json", schema: nil).run(Data(base), into: db)
        #expect(report.total == 5)
        #expect(try db.read { try $0.count("Person") } == 4)  // the nested friend too
        try db.write { tx in
            for c in ["Dog", "Person"] {
                let t = try tx.table(c)
                for k in try tx.keys(t) { try tx.delete(t, k) }
            }
        }
        let tokens: [String] = ["{", "}", "[", "]", ":", ",", "\"", "\\", "null", "true", "1e999", "-", "0x1", "NaN",
                                "9999999999999999999999", "\"id\"", "\"$key\"", "\"$class\"", "\"$index\"", "{\"id\": 1}",
                                "\u{0}", "\u{FFFF}", "\\ud800", "🐕", "\"friend\": 5", "\"owner\": {\"$key\": 99}"]
        var rng = SplitMix64(seed: 0x1A7_2026)
        var imported = 0, failed = 0
        for i in 0..<n {
            var doc = base
            switch i % 6 {
            case 0:  // truncated
                doc = Array(doc.prefix(rng.below(doc.count)))
            case 1:  // a byte replaced
                doc[rng.below(doc.count)] = UInt8(truncatingIfNeeded: rng.next())
            case 2, 3:  // tokens inserted or put in place of a stretch
                for _ in 0..<(1 + rng.below(3)) {
                    let at = rng.below(doc.count)
                    let end = min(doc.count, at + rng.below(8))
                    doc.replaceSubrange(at..<(i % 6 == 2 ? at : end), with: Array(tokens[rng.below(tokens.count)].utf8))
                }
            case 4:  // deep nesting where a value goes
                let depth = [10, 511, 513, 5_000, 100_000][rng.below(5)]
                let open = rng.below(2) == 0 ? "[" : "{\"a\":"
                let close = open == "[" ? "]" : "}"
                let nested = String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)
                doc = Array("{\"Person\": [{\"id\": \(1_000 + i), \"name\": \(nested)}]}".utf8)
            default:  // huge values
                let huge = [String(repeating: "é", count: 300_000), String(repeating: "9", count: 100_000),
                            "1e" + String(repeating: "9", count: 50)][rng.below(3)]
                let quoted = huge.first == "é" ? "\"\(huge)\"" : huge
                doc = Array("{\"Person\": [{\"id\": \(1_000 + i), \"name\": \"n\", \"score\": \(quoted), \"tags\": [\(quoted)]}]}".utf8)
            }
            let before = try Self.dump(db)
            do {
                _ = try DataImport(file: "fuzz-\(i).json", schema: nil).run(Data(doc), into: db)
                imported += 1
                // A document that imported cleanly is removed again, so later ones meet the same database.
                try db.write { tx in
                    for c in ["Dog", "Person"] {
                        let t = try tx.table(c)
                        for k in try tx.keys(t) { try tx.delete(t, k) }
                    }
                }
            } catch let e as ToolError {
                failed += 1
                #expect(!e.description.isEmpty)
                let after = try Self.dump(db)
                if after != before { Issue.record("document \(i) failed (\(e)) but changed the database") }
            }
        }
        print("ImportFuzzTests: \(n) documents, \(imported) imported, \(failed) refused with a ToolError")
        #expect(imported + failed == n)
        #expect(imported > 0 && failed > n / 2)
    }
}
