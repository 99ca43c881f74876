import Foundation
import Testing
import RealmStorage
@testable import RealmTools
import TestSupport

/// A decimal128 with all 34 digits survives JSON export and import unchanged (coefficient and exponent).
@Suite struct DecimalRoundTripTests {
    static let texts = ["1234567890123456789012345678901234", "-0.000000001234567890123456789012345678", "9.999999999999999999999999999999999E+6144",
                        "1.000000000000000000000000000000001", "12345678901234567890.10", "1E-6176", "-0", "0E+12", "NaN", "-Infinity"]
    static let schema = [ClassSchema(name: "Account", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "balance", type: .decimal128),
        PropertySchema(name: "amounts", type: .decimal128, isList: true),
        PropertySchema(name: "any", type: .mixed),
    ])]

    @Test func valueCodecKeepsEveryDigit() throws {
        for t in Self.texts {
            let d = try #require(Decimal128(string: t))
            for type in [PropertyType.decimal128, .mixed] {
                let j = ValueCodec.json(.decimal128(d), type: type)
                guard case .decimal128(let back) = try ValueCodec.value(j, type: type, optional: false).get() else {
                    Issue.record("\(t) as \(type) did not come back as a decimal"); continue
                }
                #expect(back.low == d.low && back.high == d.high, "\(t) as \(type)")
            }
        }
        // A JSON number for a decimal property is read as decimal, not through a double.
        let n = try ValueCodec.value(.number("12345678901234567890.15"), type: .decimal128, optional: false).get()
        #expect(n == .decimal128(Decimal128(string: "12345678901234567890.15")!))
    }

    @Test func exportImportExportIsIdentical() throws {
        let dir = TempDir()
        let a = try Database.open(path: dir.file("a.realm"))
        try a.write { tx in
            try tx.createClasses(Self.schema)
            for (i, t) in Self.texts.enumerated() {
                let d = Decimal128(string: t)!
                _ = try tx.createObject("Account", ["id": .int(Int64(i)), "balance": .decimal128(d), "any": .decimal128(d)],
                                        lists: ["amounts": [.decimal128(d), .decimal128(Decimal128(low: d.low, high: d.high ^ (1 << 63)))]])
            }
        }
        func export(_ db: Database, _ name: String) throws -> Data {
            try db.read { s in try DataExport(snapshot: s, classes: ["Account"]).writeJSON(classes: ["Account"], to: TextSink(path: dir.file(name))) }
            return try #require(FileManager.default.contents(atPath: dir.file(name)))
        }
        let first = try export(a, "a.json")
        let b = try Database.open(path: dir.file("b.realm"))
        try b.write { tx in try tx.createClasses(Self.schema) }
        _ = try DataImport(file: "a.json", schema: nil).run(first, into: b)
        #expect(try export(b, "b.json") == first)
        let stored = try b.read { s in
            let t = try s.table("Account")
            return try s.keys(t).map { try s.value($0, s.property(t, "balance")) }
        }
        for (t, v) in zip(Self.texts, stored) {
            guard case .decimal128(let d) = v else { Issue.record("\(t): \(v)"); continue }
            let want = Decimal128(string: t)!
            #expect(d.low == want.low && d.high == want.high, "\(t)")
        }
        #expect(String(decoding: first, as: UTF8.self).contains("\"1234567890123456789012345678901234\""))
    }
}
