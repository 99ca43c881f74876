import Foundation
import Testing
@testable import RealmTools

/// The CSV reader against RFC 4180: quoting, line breaks of every kind, UTF-8, and the errors it names.
@Suite struct CSVReaderTests {
    func records(_ text: String) throws -> [[CSVField]] {
        try records(Array(text.utf8))
    }

    func records(_ bytes: [UInt8]) throws -> [[CSVField]] {
        var r = CSVReader(bytes)
        var out: [[CSVField]] = []
        while let rec = try r.next() { out.append(rec.fields) }
        return out
    }

    func error(_ text: String) -> CSVSyntaxError? {
        error(Array(text.utf8))
    }

    func error(_ bytes: [UInt8]) -> CSVSyntaxError? {
        do { _ = try records(bytes); return nil } catch { return error as? CSVSyntaxError }
    }

    @Test func quotedFieldsDoubledQuotesAndEmptyFields() throws {
        let r = try records("a,\"b,c\",\"say \"\"hi\"\"\",,\"\"\r\n")
        #expect(r == [[CSVField("a"), CSVField("b,c", quoted: true), CSVField("say \"hi\"", quoted: true), CSVField(""), CSVField("", quoted: true)]])
        #expect(r[0][3].isNull && !r[0][4].isNull)
    }

    @Test func lineBreaksCRLFLFAndCRAndNoneAtTheEnd() throws {
        #expect(try records("a,b\r\nc,d\r\n") == [[CSVField("a"), CSVField("b")], [CSVField("c"), CSVField("d")]])
        #expect(try records("a,b\nc,d") == [[CSVField("a"), CSVField("b")], [CSVField("c"), CSVField("d")]])
        #expect(try records("a\rb\r") == [[CSVField("a")], [CSVField("b")]])
        #expect(try records("") == [])
        // An empty line is a record of one empty field; a comma at the very end leaves an empty last field.
        #expect(try records("a\r\n\r\nb,") == [[CSVField("a")], [CSVField("")], [CSVField("b"), CSVField("")]])
    }

    @Test func lineBreaksInsideQuotesAreKeptAndCounted() throws {
        var r = CSVReader(Array("h\r\n\"one\r\ntwo\nthree\rfour\"\r\nnext\r\n".utf8))
        #expect(try r.next()?.line == 1)
        let multi = try #require(try r.next())
        #expect(multi.line == 2 && multi.fields == [CSVField("one\r\ntwo\nthree\rfour", quoted: true)])
        let next = try #require(try r.next())
        #expect(next.line == 6 && next.fields == [CSVField("next")])
        #expect(try r.next() == nil)
    }

    @Test func utf8WithCJKEmojiAndAByteOrderMark() throws {
        let text = "名前,絵文字\r\n東京都,\"👩‍👩‍👧‍👦, 🏳️‍🌈\"\r\n"
        let r = try records([0xEF, 0xBB, 0xBF] + Array(text.utf8))
        #expect(r == [[CSVField("名前"), CSVField("絵文字")], [CSVField("東京都"), CSVField("👩‍👩‍👧‍👦, 🏳️‍🌈", quoted: true)]])
        let long = String(repeating: "長い🐶\"", count: 2500)
        let back = try records("\"" + long.replacingOccurrences(of: "\"", with: "\"\"") + "\"")
        #expect(back == [[CSVField(long, quoted: true)]])
    }

    @Test func malformedInputIsAnErrorNamingLineAndField() throws {
        let unterminated = try #require(error("a,b\r\nc,\"d\r\ne\r\n"))
        #expect(unterminated.line == 2 && unterminated.field == 2 && unterminated.message.contains("never closed"))
        let after = try #require(error("a\r\n\"b\"c,d\r\n"))
        #expect(after.line == 2 && after.field == 1 && after.message.contains("after the closing quote"))
        let stray = try #require(error("a,b\"c\r\n"))
        #expect(stray.line == 1 && stray.field == 2 && stray.message.contains("quote inside a field"))
        let utf8 = try #require(error([0x61, 0x0A, 0x62, 0xFF, 0x0A]))
        #expect(utf8.line == 2 && utf8.field == 1 && utf8.message == "not valid UTF-8")
    }
}
