import Foundation
import Testing
@testable import RealmStorage

/// A cluster handed from one commit to the next is extended when rows are only appended (DECISIONS 46).
/// In debug builds every extended node is compared with the node encoded from all its rows; here one row
/// per commit goes in, of every stored type, with nulls arriving late, values that outgrow a packed
/// array's width or fall below its base, long values that go out of line and edits of old rows — and
/// the data read back after reopening must be exactly what was written.
@Suite struct AppendEncodingTests {
    static let schema = ClassSchema(name: "Row", properties: [
        PropertySchema(name: "i", type: .int),
        PropertySchema(name: "oi", type: .int, isOptional: true),
        PropertySchema(name: "b", type: .bool, isOptional: true),
        PropertySchema(name: "f", type: .float, isOptional: true),
        PropertySchema(name: "d", type: .double),
        PropertySchema(name: "s", type: .string),
        PropertySchema(name: "os", type: .string, isOptional: true),
        PropertySchema(name: "data", type: .data, isOptional: true),
        PropertySchema(name: "t", type: .date, isOptional: true),
        PropertySchema(name: "oid", type: .objectId, isOptional: true),
        PropertySchema(name: "u", type: .uuid, isOptional: true),
        PropertySchema(name: "dec", type: .decimal128, isOptional: true),
        PropertySchema(name: "m", type: .mixed, isOptional: true),
        .link("next", to: "Row"),
    ])

    static func row(_ n: Int, _ rng: inout SplitMix64, keys: [ObjectKey]) -> [Value] {
        let r = rng.next()
        let late = n > 40  // nulls and wide values only after the first rows
        return [
            .int(late && r % 7 == 0 ? Int64(bitPattern: r) : Int64(n % 100)),
            late && r % 5 == 0 ? .null : .int(Int64(n) - 30),
            late && r % 3 == 0 ? .null : .bool(r & 1 == 1),
            .float(Float(n) / 3),
            .double(Double(r % 1000) - 500.5),
            .string(n % 11 == 0 ? "日本語 🐶 \(n)" : "s\(n)"),
            late && r % 4 == 0 ? .null : .string(String(repeating: "x", count: n % 13 == 0 ? 1500 : n % 50)),
            late && r % 6 == 0 ? .null : .data(Array(repeating: UInt8(n & 0xFF), count: n % 20)),
            late && r % 9 == 0 ? .null : .date(Timestamp(seconds: Int64(n) * 86_400 - (r % 2 == 0 ? 4_000_000_000 : 0), nanoseconds: Int32(n))),
            late && r % 8 == 0 ? .null : .objectId(ObjectId(byteArray: (0..<12).map { UInt8(($0 + n) & 0xFF) })),
            late && r % 10 == 0 ? .null : .uuid(UUID()),
            late && r % 12 == 0 ? .null : .decimal128(Decimal128(Int64(n))),
            n % 5 == 0 ? .null : (n % 2 == 0 ? .int(Int64(n)) : .string("m\(n)")),
            keys.isEmpty || r % 3 == 0 ? .null : .link(keys[Int(r % UInt64(keys.count))]),
        ]
    }

    @Test func oneRowPerCommitReadsBackExactly() throws {
        let dir = TempDir()
        var expected: [ObjectKey: [Value]] = [:]
        var keys: [ObjectKey] = []
        var rng = SplitMix64(seed: 46)
        do {
            let db = try Database.open(path: dir.file("a.realm"))
            try db.write { try $0.createClass(Self.schema) }
            for n in 0..<700 {
                try db.write { tx in
                    let t = try tx.table("Row")
                    let columns = try Self.schema.properties.map { try tx.property(t, $0.name) }
                    let values = Self.row(n, &rng, keys: keys)
                    let k = try tx.createObject(t, columns: columns, values: values)
                    keys.append(k)
                    expected[k] = values
                    // Now and then an edit of an older row: the next commit encodes the leaf whole.
                    if n % 97 == 96 {
                        let old = keys[Int(rng.next() % UInt64(keys.count - 1))]
                        try tx.set(old, columns[0], .int(-7))
                        expected[old]![0] = .int(-7)
                    }
                }
            }
            #expect(try db.verify().isOK)
        }
        let db = try Database.open(path: dir.file("a.realm"))
        try db.read { s in
            let t = try s.table("Row")
            #expect(try s.keys(t) == keys)
            for (k, values) in expected {
                for (i, p) in Self.schema.properties.enumerated() {
                    let got = try s.value(k, s.property(t, p.name))
                    if case .uuid = values[i] { #expect(got == values[i]) } else { #expect(got == values[i], "\(p.name) of \(k)") }
                }
            }
        }
    }
}
