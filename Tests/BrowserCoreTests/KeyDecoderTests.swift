import Testing
@testable import BrowserCore

@Suite struct KeyDecoderTests {
    @Test func printableControlAndUTF8() {
        #expect(KeyDecoder.keys("jG?$日") == [.char("j"), .char("G"), .char("?"), .char("$"), .char("日")])
        #expect(KeyDecoder.keys("\u{4}\u{15}\u{3}") == [.ctrl("d"), .ctrl("u"), .ctrl("c")])
        #expect(KeyDecoder.keys("\r\n\t\u{7F}\u{8}") == [.enter, .enter, .tab, .backspace, .backspace])
    }

    @Test func escapeSequences() {
        #expect(KeyDecoder.keys("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D") == [.up, .down, .right, .left])
        #expect(KeyDecoder.keys("\u{1B}OA\u{1B}OH\u{1B}OF") == [.up, .home, .end])
        #expect(KeyDecoder.keys("\u{1B}[5~\u{1B}[6~\u{1B}[3~\u{1B}[1~\u{1B}[4~") == [.pageUp, .pageDown, .delete, .home, .end])
        #expect(KeyDecoder.keys("\u{1B}[1;5A\u{1B}[Z\u{1B}OP\u{1B}[15~\u{1B}[24~") == [.up, .backTab, .function(1), .function(5), .function(12)])
    }

    @Test func loneEscapeAndSplitInput() {
        #expect(KeyDecoder.keys("\u{1B}") == [.escape])
        #expect(KeyDecoder.keys("\u{1B}\u{1B}[A") == [.escape, .up])
        var d = KeyDecoder()
        #expect(d.feed([0x1B, UInt8(ascii: "[")]) == [])
        #expect(d.feed([UInt8(ascii: "6"), UInt8(ascii: "~"), 0xE6]) == [.pageDown])
        #expect(d.feed([0x97, 0xA5]) == [.char("日")])
        #expect(d.feed([0x1B]) == [])
        #expect(d.flush() == [.escape])
    }

    @Test func everyCommandHasAKeyANameAndHelp() {
        let map = KeyMap.standard
        for c in Command.allCases {
            #expect(map.bindings.contains { $0.command == c }, "\(c) has no key")
            #expect(!map.keysText(c).isEmpty)
        }
        for b in map.bindings { #expect(!b.help.isEmpty) }
        // No key sequence is bound twice, and none is a prefix of another.
        let seqs = map.bindings.flatMap(\.keys)
        #expect(Set(seqs.map { $0.map(\.description).joined(separator: " ") }).count == seqs.count)
        #expect(map.match([.char("g")]) == .prefix)
        #expect(map.match([.char("g"), .char("g")]) == .command(.top))
        #expect(map.match([.char("z")]) == .none)
    }
}
