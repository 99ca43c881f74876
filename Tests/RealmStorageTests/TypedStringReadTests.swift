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

    // MARK: Against the values written (DECISIONS 117)
    //
    // The tests above compare `string` with `value`, which decode through the same `decodeUTF8`; these compare
    // with the strings written, so a wrong decoder cannot agree with itself.

    static let formsSchema = ClassSchema(name: "Form", properties: [
        PropertySchema(name: "plain", type: .string, isOptional: true),
        PropertySchema(name: "repeated", type: .string, isOptional: true),
        PropertySchema(name: "long", type: .string, isOptional: true),
    ])

    /// Strings of every length from 0 to 20 bytes around the 15 that fit in a `String` itself, ASCII and not.
    static let lengths: [String] = (0...20).map { n in String("abcdefghijklmnopqrstu".prefix(n)) }
        + ["é", "e\u{301}", "東京", "🐕‍🦺", "Zürich", "日本語のテキスト", "ab東", "東京東京東", "東京東京東京", "🐕🐕🐕🐕", "\u{0}x"]

    /// Row `i`: `plain` is distinct per row (every length, nulls), `repeated` takes few values (dictionary form,
    /// nulls), `long` is a 10,000-character string every 40th row (out of line), else short.
    static func form(_ i: Int) -> (plain: String?, repeated: String?, long: String?) {
        let w = lengths[i % lengths.count]
        return (i % 17 == 16 ? nil : w + (i % 3 == 0 ? "" : "\(i)"),
                i % 13 == 12 ? nil : lengths[(i * 7) % 11 + (i % 2) * 21],
                i % 40 == 0 ? String(repeating: "長", count: 10_000) + "\(i)" : i % 5 == 0 ? nil : "s\(i)")
    }

    static func makeForms(_ db: Database, count: Int) throws {
        try db.write { tx in
            try tx.createClasses([formsSchema])
            let t = try tx.table("Form")
            for i in 0..<count {
                let f = form(i)
                _ = try tx.createObject(t, ["plain": f.plain.map(Value.string) ?? .null,
                                            "repeated": f.repeated.map(Value.string) ?? .null,
                                            "long": f.long.map(Value.string) ?? .null])
            }
        }
    }

    /// Every row of every form (plain and inline, dictionary, out of line) reads back the bytes written, twice
    /// per leaf; each form is met.
    @Test func everyFormReadsTheStringsWritten() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("a.realm"))
        try Self.makeForms(db, count: 4_000)
        try db.read { s in
            let t = try s.table("Form")
            let props = try ["plain", "repeated", "long"].map { try s.property(t, $0) }
            var i = 0
            var plainInline = 0, dictionary = 0, general = 0
            try s.scan(t) { leaf in
                let cols = try props.map { try leaf.column($0) }
                for c in cols {
                    let r = try #require(c.box.strings)
                    if r.plainInline { plainInline += 1 } else if r.keepsEntries { dictionary += 1 } else { general += 1 }
                }
                for pass in 0..<2 {
                    for row in 0..<leaf.count {
                        let f = Self.form(i + row)
                        #expect(Self.utf8(try cols[0].string(row)) == Self.utf8(f.plain), "plain, object \(i + row), pass \(pass)")
                        #expect(Self.utf8(try cols[1].string(row)) == Self.utf8(f.repeated), "repeated, object \(i + row), pass \(pass)")
                        #expect(Self.utf8(try cols[2].string(row)) == Self.utf8(f.long), "long, object \(i + row), pass \(pass)")
                    }
                }
                i += leaf.count
                return true
            }
            #expect(i == 4_000)
            #expect(plainInline > 0 && dictionary > 0 && general > 0, "\(plainInline) \(dictionary) \(general)")
        }
    }

    /// Writes `bytes` over the first place `marker` is found in the file, and reseals the checksum of the node
    /// holding it, so that only the readers' own checks stand between the damage and the caller.
    static func damage(_ path: String, marker: [UInt8], with bytes: [UInt8]) throws {
        var file = ErrorTestKit.bytes(path)
        let at = try #require((0...file.count - marker.count).first { file[$0..<$0 + marker.count].elementsEqual(marker) })
        file.replaceSubrange(at..<at + bytes.count, with: bytes)
        // The node holding it: the nearest page at or before it that starts a node long enough to reach it.
        var page = at / pageSize
        while true {
            let o = page * pageSize
            let length = file.withUnsafeBytes { Int($0.u32(at: o + 4)) }
            if (1...10).contains(file[o]), length >= nodeHeaderSize, o + length > at { break }
            try #require(page > 2)
            page -= 1
        }
        let o = page * pageSize
        let length = file.withUnsafeBytes { Int($0.u32(at: o + 4)) }
        let sum = file.withUnsafeBytes { nodeChecksum(UnsafeRawBufferPointer(rebasing: $0[o..<o + length])) }
            ^ pageChecksumTerm(UInt64(page))
        withUnsafeBytes(of: sum.littleEndian) { file.replaceSubrange(o + 8..<o + 16, with: $0) }
        ErrorTestKit.write(file, to: path)
    }

    /// A short string that is not UTF-8, plain or a dictionary's value, is `StorageError.corrupt` for each row
    /// holding it, through `string` and `value`; every other row still reads what was written.
    @Test func damagedShortStringsAreCorruptErrors() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        let colours = ["red", "green", "blue", "QQDICT"]
        func plain(_ i: Int) -> String { i == 7 ? "QQPLAIN" : "p\(i)" }
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClass(ClassSchema(name: "P", properties: [
                    PropertySchema(name: "plain", type: .string), PropertySchema(name: "dict", type: .string),
                ]))
                let t = try tx.table("P")
                for i in 0..<200 { _ = try tx.createObject(t, ["plain": .string(plain(i)), "dict": .string(colours[i % 4])]) }
            }
        }
        try Self.damage(path, marker: Array("QQPLAIN".utf8), with: [0x51, 0x51, 0xFF])
        try Self.damage(path, marker: Array("QQDICT".utf8), with: [0x51, 0x51, 0xC3, 0x28])
        let db = try Database.open(path: path)
        try db.read { s in
            let t = try s.table("P")
            let p = try s.property(t, "plain"), d = try s.property(t, "dict")
            var i = 0, corrupt = 0
            try s.scan(t) { leaf in
                let cols = [try leaf.column(p), try leaf.column(d)]
                #expect(cols[0].box.strings?.plainInline == true && cols[1].box.strings?.keepsEntries == true)
                for _ in 0..<2 {
                    for row in 0..<leaf.count {
                        let o = i + row
                        for (k, c) in cols.enumerated() {
                            if (k == 0 && o == 7) || (k == 1 && o % 4 == 3) {
                                for read in [{ _ = try c.string(row) }, { _ = try c.value(row) }] {
                                    let e = ErrorTestKit.storageError { try read() }
                                    guard case .corrupt = e else { Issue.record("object \(o), column \(k): \(String(describing: e))"); continue }
                                    corrupt += 1
                                }
                            } else {
                                #expect(try c.string(row) == (k == 0 ? plain(o) : colours[o % 4]), "object \(o), column \(k)")
                            }
                        }
                    }
                }
                i += leaf.count
                return true
            }
            #expect(i == 200 && corrupt == 2 * 2 * (1 + 50))
        }
    }

    /// A plain column's end offset pointing past its block is found when the leaf's column is opened: the fast
    /// plain read, which then trusts every row's bounds, is never reached.
    @Test func damagedEndOffsetsAreCorruptErrors() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClass(ClassSchema(name: "P", properties: [PropertySchema(name: "plain", type: .string)]))
                let t = try tx.table("P")
                for i in 0..<100 { _ = try tx.createObject(t, ["plain": .string("row \(i)")]) }
            }
        }
        // The end offsets of "row 0" ... "row 99" (5, 10, ..., 590) are packed at 16 bits from a base of 5:
        // the header (width 16, base 5), then the fields 0, 5, 10, ...; the third becomes 32,767.
        let header: [UInt8] = [16, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0]
        try Self.damage(path, marker: header + [0, 0, 5, 0, 10, 0], with: header + [0, 0, 5, 0, 0xFF, 0x7F])
        let db = try Database.open(path: path)
        try db.read { s in
            let t = try s.table("P")
            let p = try s.property(t, "plain")
            try s.scan(t) { leaf in
                let e = ErrorTestKit.storageError("opening the column") { _ = try leaf.column(p) }
                guard case .corrupt(_, _, let reason) = e else { Issue.record("\(String(describing: e))"); return false }
                #expect(reason.contains("plain"), "\(reason)")
                return true
            }
        }
    }
}

