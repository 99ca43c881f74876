/// One line of text being typed (the query bar, the command palette): the text as grapheme clusters and a
/// cursor between them. Editing keys are those of a shell's line editor; the width of what is typed is
/// measured in terminal cells, so a CJK character moves the cursor by two.
public struct LineEditor: Equatable, Sendable {
    public private(set) var characters: [Character]
    /// Position of the cursor: the number of characters before it.
    public private(set) var cursor: Int

    public init(_ text: String = "") {
        characters = Array(text)
        cursor = characters.count
    }

    public var text: String { String(characters) }
    public var isEmpty: Bool { characters.isEmpty }

    /// Replaces the whole text (history), the cursor at the end.
    public mutating func set(_ text: String) {
        characters = Array(text)
        cursor = characters.count
    }

    public mutating func insert(_ c: Character) {
        characters.insert(c, at: cursor)
        cursor += 1
    }

    /// Applies an editing key; false when the key is not an editing key (the caller handles it).
    public mutating func handle(_ key: Key) -> Bool {
        switch key {
        case .char(let c): insert(c)
        case .left, .ctrl("b"): cursor = max(0, cursor - 1)
        case .right, .ctrl("f"): cursor = min(characters.count, cursor + 1)
        case .home, .ctrl("a"): cursor = 0
        case .end, .ctrl("e"): cursor = characters.count
        case .backspace, .ctrl("h"):
            if cursor > 0 {
                characters.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete, .ctrl("d"):
            if cursor < characters.count { characters.remove(at: cursor) }
        case .ctrl("u"):
            characters.removeSubrange(0..<cursor)
            cursor = 0
        case .ctrl("k"):
            characters.removeSubrange(cursor...)
        case .ctrl("w"):
            // The word before the cursor and the spaces after it.
            var i = cursor
            while i > 0 && characters[i - 1] == " " { i -= 1 }
            while i > 0 && characters[i - 1] != " " { i -= 1 }
            characters.removeSubrange(i..<cursor)
            cursor = i
        default:
            return false
        }
        return true
    }

    /// Cells taken by the characters before the cursor.
    public var cursorCell: Int { cellWidth(characters[0..<cursor]) }

    /// The part of the text that fits `width` cells with the cursor in view (the cursor itself needs a cell
    /// at the end), and the cell of the cursor within it.
    public func visible(width: Int) -> (text: String, cursorX: Int) {
        guard width > 1 else { return ("", 0) }
        var start = 0
        // Drop characters from the left until the text up to the cursor, plus the cursor cell, fits.
        while start < cursor && cellWidth(characters[start..<cursor]) + 1 > width { start += 1 }
        var out: [Character] = []
        var used = 0
        for c in characters[start...] {
            let w = Canvas.width(of: String(c))
            if used + w > width { break }
            out.append(c)
            used += w
        }
        return (String(out), cellWidth(characters[start..<cursor]))
    }

    private func cellWidth(_ s: ArraySlice<Character>) -> Int { s.reduce(0) { $0 + Canvas.width(of: String($1)) } }
}
