import Foundation
import Testing
@testable import RealmStorage

/// 10,000-character values, CJK and emoji strings (and names) survive every path: commit, reopen, index
/// lookups, lists, mixed, writeCopy and compact, byte for byte.
@Suite struct UnicodeValueTests {
    typealias Kit = ErrorTestKit

    static let samples: [String] = [
        String(repeating: "a", count: 10_000),
        String(repeating: "東京都", count: 3_334).prefix(10_000).description,
        String(repeating: "🐶", count: 10_000),
        String(repeating: "👩‍👩‍👧‍👦", count: 10_000),  // one character, seven scalars, 25 UTF-8 bytes
        String(repeating: "e\u{301}", count: 10_000),  // decomposed é: must not come back precomposed
        String(repeating: "\u{E9}", count: 10_000),     // precomposed é
        String(repeating: "x\u{0}y", count: 3_333) + "z",  // NUL inside a string
        "日本語のテキスト", "🇯🇵🇺🇸", "한국어", "中文字符", "Ελληνικά", "עברית", "", " ", "\u{FEFF}bom",
    ]

    @Test func samplesAreWhatTheySay() {
        for s in Self.samples.prefix(7) { #expect(s.count == 10_000, "\(s.prefix(3)): \(s.count)") }
    }

    func check(_ db: Database, _ keys: [ObjectKey], _ stage: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try db.read { (s: Snapshot) throws in
            let t = try s.table("テキスト")
            let text = try s.property(t, "本文"), tags = try s.property(t, "タグ🏷"), any = try s.property(t, "any")
            let raw = try s.property(t, "bytes"), key = try s.property(t, "鍵")
            for (i, k) in keys.enumerated() {
                let expected = Self.samples[i]
                guard case .string(let got) = try s.value(k, text) else { Issue.record("\(stage) #\(i): not a string"); continue }
                // Byte for byte, not Swift's canonical equivalence (which calls e + U+0301 and é equal).
                #expect(Array(got.utf8) == Array(expected.utf8), "\(stage) #\(i)", sourceLocation: sourceLocation)
                #expect(try s.value(k, key) == .string("\(i)-" + expected), "\(stage) #\(i)", sourceLocation: sourceLocation)
                let list = try s.list(k, tags)
                #expect(list.count == 3 && list[0] == .string(expected) && list[1] == .null, "\(stage) #\(i)", sourceLocation: sourceLocation)
                if case .string(let m) = try s.value(k, any) { #expect(Array(m.utf8) == Array(expected.utf8), sourceLocation: sourceLocation) } else {
                    Issue.record("\(stage) #\(i): mixed lost its string", sourceLocation: sourceLocation)
                }
                #expect(try s.value(k, raw) == .data(Array(expected.utf8)), "\(stage) #\(i)", sourceLocation: sourceLocation)
                // Index lookups: long values share their first 240 bytes in the index and are told apart exactly.
                #expect(try s.find(text, equalTo: .string(expected)).contains(k), "\(stage) find #\(i)", sourceLocation: sourceLocation)
                #expect(try s.object(t, primaryKey: .string("\(i)-" + expected)) == k, "\(stage) pk #\(i)", sourceLocation: sourceLocation)
                #expect(try s.count(text, equalTo: expected) >= 1, "\(stage) count #\(i)", sourceLocation: sourceLocation)
            }
            // Lookups of a value that differs only after the first 240 bytes find nothing.
            let almost = String(repeating: "a", count: 9_999) + "b"
            #expect(try s.find(text, equalTo: .string(almost)).isEmpty, sourceLocation: sourceLocation)
            // Canonically equivalent but different bytes: different values to the engine.
            let decomposedKey = keys[4], precomposedKey = keys[5]
            #expect(try s.find(text, equalTo: .string(Self.samples[4])) == [decomposedKey], sourceLocation: sourceLocation)
            #expect(try s.find(text, equalTo: .string(Self.samples[5])) == [precomposedKey], sourceLocation: sourceLocation)
        }
        let report = try db.verify()
        #expect(report.isOK, "\(stage): \(report)", sourceLocation: sourceLocation)
    }

    @Test func longAndUnicodeValuesRoundTrip() throws {
        let dir = TempDir()
        let path = dir.file("文字-🐶.realm")
        var keys: [ObjectKey] = []
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClass(ClassSchema(name: "テキスト", properties: [
                    PropertySchema(name: "鍵", type: .string, isPrimaryKey: true),
                    PropertySchema(name: "本文", type: .string, isIndexed: true),
                    PropertySchema(name: "タグ🏷", type: .string, isOptional: true, isList: true),
                    PropertySchema(name: "any", type: .mixed),
                    PropertySchema(name: "bytes", type: .data),
                ]))
                for (i, s) in Self.samples.enumerated() {
                    keys.append(try tx.createObject("テキスト", ["鍵": .string("\(i)-" + s), "本文": .string(s), "any": .string(s),
                                                             "bytes": .data(Array(s.utf8))],
                                                    lists: ["タグ🏷": [.string(s), .null, .string("🏷")]]))
                }
            }
            try check(db, keys, "in the writing process")
            try db.read { #expect($0.classSchema("テキスト")?.properties.map(\.name) == ["鍵", "本文", "タグ🏷", "any", "bytes"]) }
            // Rewrite every value in a later transaction (the old blobs are freed and reused).
            try db.write { tx in
                let t = try tx.table("テキスト")
                for (i, k) in keys.enumerated() { try tx.set(k, tx.property(t, "本文"), .string(Self.samples[(i + 1) % Self.samples.count])) }
            }
            try db.write { tx in
                let t = try tx.table("テキスト")
                for (i, k) in keys.enumerated() { try tx.set(k, tx.property(t, "本文"), .string(Self.samples[i])) }
            }
            try check(db, keys, "after rewriting")
            try db.writeCopy(to: dir.file("コピー.realm"))
            try db.compact()
            try check(db, keys, "after compact")
        }
        try check(try Database.open(path: path), keys, "after reopening")
        try check(try Database.open(path: dir.file("コピー.realm")), keys, "in the copy")
    }
}
