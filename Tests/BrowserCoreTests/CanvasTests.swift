import Testing
@testable import BrowserCore

@Suite struct CanvasTests {
    @Test func wideCharactersTakeTwoCells() {
        var c = Canvas(size: Size(width: 10, height: 1))
        let used = c.draw("a日本b", x: 0, y: 0, role: .normal)
        #expect(used == 6)
        #expect(c[1, 0].character == "日" && c[2, 0].isContinuation)
        #expect(c.line(0) == "a日本b    ")
    }

    @Test func clippingNeverSplitsAWideCharacter() {
        var c = Canvas(size: Size(width: 6, height: 2))
        c.draw("日本語", x: 0, y: 0, maxWidth: 5, role: .normal)
        #expect(c.line(0) == "日本  ")
        #expect(!c[4, 0].isContinuation && !c[5, 0].isContinuation)
        // At the canvas edge too.
        c.draw("xx👩‍👩‍👧🐶", x: 1, y: 1, role: .normal)
        #expect(c.line(1) == " xx👩‍👩‍👧 ")
    }

    @Test func overwritingHalfAWideCharacterBlanksTheOtherHalf() {
        var c = Canvas(size: Size(width: 6, height: 1))
        c.draw("日本語", x: 0, y: 0, role: .normal)
        c.draw("x", x: 1, y: 0, role: .normal)       // right half of 日
        #expect(c.line(0) == " x本語")
        c.draw("y", x: 2, y: 0, role: .normal)       // left half of 本
        #expect(c.line(0) == " xy 語")
        c.draw("中", x: 3, y: 0, role: .normal)      // straddles the blank and 語's left half
        #expect(c.line(0) == " xy中 ")
        for x in 0..<6 where c[x, 0].isContinuation { #expect(x > 0 && !c[x - 1, 0].isContinuation) }
    }

    @Test func fieldsAreCutWithAnEllipsisAndAligned() {
        var c = Canvas(size: Size(width: 8, height: 3))
        c.drawField("Stark Industries", x: 0, y: 0, width: 8, role: .normal)
        c.drawField("42", x: 0, y: 1, width: 8, role: .number, rightAligned: true)
        c.drawField("日本語テキスト", x: 0, y: 2, width: 8, role: .normal)
        #expect(c.line(0) == "Stark I…")
        #expect(c.line(1) == "      42")
        #expect(c.line(2) == "日本語… ")
        #expect(Canvas.truncate("日本語", to: 6) == "日本語")
        #expect(Canvas.truncate("日本語", to: 5) == "日本…")
    }

    @Test func controlCharactersAreVisible() {
        var c = Canvas(size: Size(width: 12, height: 1))
        c.draw("a\tb\nc\u{1}e\u{301}", x: 0, y: 0, role: .normal)
        #expect(c.line(0) == "a→b⏎c·é     ")
    }

    @Test func runsCoverOnlyChangedCellsAndWholeCharacters() {
        var a = Canvas(size: Size(width: 10, height: 2))
        a.draw("hello 日本", x: 0, y: 0, role: .normal)
        var b = a
        b.draw("本", x: 6, y: 0, role: .normal)
        let runs = b.runs(since: a)
        #expect(runs.count == 1 && runs[0].x == 6 && runs[0].text == "本")
        #expect(b.runs(since: b).isEmpty)
        let t = VirtualTerminal(size: a.size)
        t.present(a)
        t.present(b)
        #expect(t.cellsWrittenLastTime == 2)
        #expect(t.screen == b)
    }
}
