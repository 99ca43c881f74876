import Foundation
import Testing
@testable import RealmStorage

/// String columns in dictionary form (format 8, DECISIONS 105): chosen only when smaller, every row read back
/// byte for byte (canonically equal but different strings stay apart), damage reported, and a database whose
/// clusters use it answers as one that does not.
@Suite struct StringDictionaryTests {
    /// A block written at offset 0 of a buffer, with the number of blobs its values needed.
    static func encode(_ values: [Value], dictionary: Bool = true) -> (bytes: [UInt8], blobs: Int) {
        var w = ByteWriter()
        var blobs = 0
        ColumnCodec.encodeColumn(values[...], type: .string, nullable: true, into: &w, dictionary: dictionary) { _ in
            blobs += 1
            return UInt64(100 + blobs)
        }
        return (w.bytes, blobs)
    }

    static func reader(_ bytes: UnsafeRawBufferPointer, count: Int, checked: Bool = true) throws -> ColumnReader {
        try ColumnReader(node: bytes, offset: 0, length: bytes.count, count: count, encoding: .bytes, type: .string,
                         checkAllOffsets: checked)
    }

    static func isDictionary(_ bytes: [UInt8]) -> Bool { bytes[1] == 1 }

    /// Distinct as bytes though `==` as Swift strings: "é" precomposed and decomposed.
    static let words: [Value] = [.string("Zürich"), .string(""), .string("東京"), .string("e\u{301}"), .string("\u{e9}"),
                                 .string("🐕"), .null, .string(String(repeating: "x", count: 1024))]

    static func utf8(_ v: Value) -> [UInt8]? { if case .string(let s) = v { Array(s.utf8) } else { nil } }

    @Test func aRepetitiveColumnIsADictionaryAndReadsBackByteForByte() throws {
        let values = (0..<300).map { Self.words[($0 * 7) % Self.words.count] }
        let (bytes, blobs) = Self.encode(values)
        #expect(blobs == 0)
        #expect(Self.isDictionary(bytes))
        #expect(bytes.count < Self.encode(values, dictionary: false).bytes.count / 3)
        try bytes.withUnsafeBytes { raw in
            let r = try Self.reader(raw, count: values.count)
            #expect(r.entryCount == Self.words.count - 1)
            for (i, v) in values.enumerated() {
                let read = try r.value(at: i) { _, _ in [] }
                #expect(Self.utf8(read) == Self.utf8(v), "row \(i)")
                #expect(read.isNull == v.isNull, "row \(i)")
            }
        }
    }

    @Test func uniqueShortAndLongColumnsStayPlain() throws {
        let unique = (0..<300).map { Value.string("name \($0)") }
        #expect(!Self.isDictionary(Self.encode(unique).bytes))
        let short = (0..<(StringDictionary.minimumRows - 1)).map { _ in Value.string("same") }
        #expect(!Self.isDictionary(Self.encode(short).bytes))
        // One value stored out of line keeps the column plain.
        var long = (0..<300).map { _ in Value.string("same") }
        long[150] = .string(String(repeating: "y", count: 2_000))
        let (bytes, blobs) = Self.encode(long)
        #expect(blobs == 1 && !Self.isDictionary(bytes))
        // Repetitive but unique at first: the sample decides.
        let late = (0..<300).map { Value.string($0 < StringDictionary.sampleRows ? "first \($0)" : "later") }
        #expect(!Self.isDictionary(Self.encode(late).bytes))
    }

    @Test func aHundredValuesDrawnAtRandomMakeADictionary() throws {
        var rng = SplitMix64(seed: 105)
        let cities = (0..<100).map { "city \($0)" }
        let values = (0..<1_000).map { _ in Value.string(cities[Int(rng.next() % 100)]) }
        let (bytes, _) = Self.encode(values)
        #expect(Self.isDictionary(bytes))
        #expect(bytes.count < Self.encode(values, dictionary: false).bytes.count / 3)
    }

    /// The number of distinct values fills bytes 4..<8: a dictionary of more than 65,535 values reads.
    @Test func aDictionaryOfMoreThanSixteenBitsOfValuesReads() throws {
        // Each value twice in a row: the sample repeats, half the rows are distinct, and codes are smaller than text.
        let values = (0..<140_000).map { Value.string("v\($0 / 2)") }
        let (bytes, _) = Self.encode(values)
        try #require(Self.isDictionary(bytes))
        #expect(bytes[4..<8] == [0x70, 0x11, 0x01, 0x00])  // 70,000
        try bytes.withUnsafeBytes { raw in
            let r = try Self.reader(raw, count: values.count)
            #expect(r.entryCount == 70_000)
            for i in [0, 1, 2, 69_999, 139_999] {
                let v = try r.value(at: i) { _, _ in [] }
                #expect(v == values[i], "row \(i)")
            }
        }
    }

    @Test func damagedDictionaryBlocksAreErrors() throws {
        let values = (0..<64).map { Value.string(["a", "bb", "ccc"][$0 % 3]) }
        let (good, _) = Self.encode(values)
        try #require(Self.isDictionary(good))
        // Header: bytes 4..<8 hold the number of values (3); the codes follow the 8-byte header.
        func damaged(_ change: (inout [UInt8]) -> Void) -> [UInt8] {
            var b = good
            change(&b)
            return b
        }
        let codesWidth = Int(good[8])
        #expect(codesWidth == 2)
        let cases: [(String, [UInt8])] = [
            ("no values", damaged { $0[4] = 0 }),
            ("more values than rows", damaged { $0[4] = 65 }),
            ("fewer values than codes name", damaged { $0[4] = 2 }),
            ("a code past the values", damaged { $0[8 + 16] |= 0b11 }),
            ("an unknown form", damaged { $0[1] = 2 }),
            ("a value marked out of line", damaged { b in
                // The flags array follows the codes and the end offsets: set its base to 1.
                let ends = 8 + PackedInts.byteLength(count: 64, width: 2)
                let flags = ends + PackedInts.byteLength(count: 3, width: Int(b[ends]))
                b[flags + 8] = 1
            }),
        ]
        for (what, bytes) in cases {
            #expect(throws: CodecError.self, "\(what)") {
                try bytes.withUnsafeBytes { raw in _ = try Self.reader(raw, count: values.count) }
            }
        }
        // The dictionary form belongs to bytes blocks only.
        var ints = ByteWriter()
        ColumnCodec.encodeColumn([Value.int(1), .int(2)][...], type: .int, nullable: false, into: &ints) { _ in 0 }
        var forged = ints.bytes
        forged[1] = 1
        #expect(throws: CodecError.self) {
            try forged.withUnsafeBytes { raw in
                _ = try ColumnReader(node: raw, offset: 0, length: raw.count, count: 2, encoding: .int, type: .int)
            }
        }
        // Read one row at a time (offsets unchecked), a code past the values is an error, not bytes.
        let bad = damaged { $0[8 + 16] |= 0b11 }
        try bad.withUnsafeBytes { raw in
            let r = try Self.reader(raw, count: values.count, checked: false)
            #expect(throws: CodecError.self) { _ = try r.value(at: 0) { _, _ in [] } }
            #expect(r.withBytes(at: 0) { _ in true } == nil)
        }
    }

    /// Rows appended by a later commit extend a dictionary block when it already holds their values: the codes
    /// are extended and the block is the one encoding all rows would write; a new value declines.
    @Test func appendedRowsExtendADictionaryBlock() throws {
        let cities: [Value] = [.string("Oslo"), .string("Lima"), .string("e\u{301}"), .null, .string("")]
        let values = (0..<200).map { cities[$0 % cities.count] }
        let (old, _) = Self.encode(values)
        try #require(Self.isDictionary(old))
        let more: [Value] = [.string("Lima"), .null, .string("e\u{301}"), .string("")]
        var w = ByteWriter()
        let extended = old.withUnsafeBytes {
            ColumnCodec.appendColumn($0, oldCount: values.count, more[...], type: .string, nullable: true, into: &w)
        }
        #expect(extended)
        #expect(w.bytes == Self.encode(values + more).bytes)
        // A value the block does not hold ("\u{e9}" is canonically equal to "e\u{301}", not the same bytes).
        for new in [Value.string("\u{e9}"), .string("Rome")] {
            var v = ByteWriter()
            let declined = !old.withUnsafeBytes {
                ColumnCodec.appendColumn($0, oldCount: values.count, [new][...], type: .string, nullable: true, into: &v)
            }
            #expect(declined && v.bytes.isEmpty, "\(new)")
        }
    }

    @Test func aDatabaseOfDictionaryColumnsAnswersAsValuesDo() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        let cities = ["Zürich", "東京", "e\u{301}", "\u{e9}", "", "Oslo", "Lima"]
        var expected: [String?] = []
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClass(ClassSchema(name: "P", properties: [
                    PropertySchema(name: "name", type: .string),
                    PropertySchema(name: "city", type: .string, isOptional: true),
                ]))
                for i in 0..<6_000 {
                    let city: String? = i % 11 == 0 ? nil : cities[(i * 5) % cities.count]
                    expected.append(city)
                    _ = try tx.createObject("P", ["name": .string("person \(i)"), "city": city.map(Value.string) ?? .null])
                }
            }
            // Changes re-encode leaves: some cities change, some objects go.
            try db.write { tx in
                let t = try tx.table("P"), city = try tx.property(t, "city")
                for (i, k) in try tx.keys(t).enumerated() where i % 13 == 0 {
                    try tx.set(k, city, .string("Lima"))
                    expected[i] = "Lima"
                }
            }
            // Single commits append to the last leaf, extending its dictionary block.
            for i in 0..<40 {
                let city = cities[i % cities.count]
                try db.write { tx in _ = try tx.createObject("P", ["name": .string("late \(i)"), "city": .string(city)]) }
                expected.append(city)
            }
            #expect(try db.fileFormat == Meta.formatVersion)
            #expect(try db.verify().isOK)
        }
        let db = try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        try db.read { s in
            let t = try s.table("P"), city = try s.property(t, "city")
            let keys = try s.keys(t)
            #expect(keys.count == expected.count)
            var leaves = 0, dictionaries = 0
            try s.walkLeaves(t.classID) { leaf in
                leaves += 1
                if case .clean(let v) = leaf, let r = try v.reader(for: city.info, source: s), r.codes != nil { dictionaries += 1 }
                return true
            }
            #expect(dictionaries > 0 && dictionaries == leaves, "\(dictionaries) of \(leaves) leaves")
            for (i, k) in keys.enumerated() {
                let v = try s.value(k, city)
                #expect(Self.utf8(v) == expected[i].map { Array($0.utf8) }, "object \(i)")
            }
            for c in cities + ["Nowhere"] {
                let want = expected.filter { $0.map { Array($0.utf8) } == Array(c.utf8) }.count
                #expect(try s.count(city, equalTo: c) == want, "\(c)")
            }
        }
    }
}
