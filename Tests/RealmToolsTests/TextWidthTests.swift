import Testing
@testable import RealmTools

@Suite struct TextWidthTests {
    @Test(arguments: [
        ("abc", 3), ("日本語", 6), ("한국어", 6), ("中文", 4), ("🐶", 2), ("👩‍👩‍👧‍👦", 2), ("🇯🇵", 2), ("e\u{301}", 1),
        ("ｱ", 1), ("Ａ", 2), ("❤️", 2), ("é", 1), ("", 0), ("a\u{200B}b", 2), ("مرحبا", 5), ("\t", 0),
    ])
    func widths(text: String, width: Int) {
        #expect(TextWidth.of(text) == width, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test func truncateAndPadRespectCells() {
        #expect(TextWidth.truncate("日本語テキスト", to: 7) == "日本語…")
        #expect(TextWidth.of(TextWidth.truncate("日本語テキスト", to: 7)) == 7)
        #expect(TextWidth.truncate("abc", to: 3) == "abc")
        #expect(TextWidth.pad("犬", to: 4) == "犬  ")
        #expect(TextWidth.pad("42", to: 5, right: true) == "   42")
    }
}
