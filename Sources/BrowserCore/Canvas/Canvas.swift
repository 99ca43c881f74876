import RealmTools

/// A width and height in terminal cells.
public struct Size: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)×\(height)" }
}

/// One terminal cell: a grapheme cluster that takes one or two cells, or the right half of a two-cell one.
public struct Cell: Equatable, Sendable {
    /// The grapheme drawn here; for a continuation cell, unused.
    public var character: Character
    /// The right half of a two-cell character that starts in the cell to the left.
    public var isContinuation: Bool
    public var role: Role

    public static let blank = Cell(character: " ", isContinuation: false, role: .normal)
    static func continuation(_ role: Role) -> Cell { Cell(character: " ", isContinuation: true, role: role) }

    public init(character: Character, isContinuation: Bool = false, role: Role) {
        self.character = character
        self.isContinuation = isContinuation
        self.role = role
    }
}

/// A grid of cells that views draw into; the terminal shows it (only the cells that changed).
///
/// Wide characters (CJK, emoji) occupy a cell and a continuation cell. Drawing never leaves half of one:
/// overwriting either half blanks the other, and a wide character that does not fit before a clip edge is
/// replaced by a space.
public struct Canvas: Equatable, Sendable {
    public let size: Size
    public private(set) var cells: [Cell]

    public init(size: Size, role: Role = .normal) {
        self.size = Size(width: max(0, size.width), height: max(0, size.height))
        cells = Array(repeating: Cell(character: " ", role: role), count: self.size.width * self.size.height)
    }

    public var width: Int { size.width }
    public var height: Int { size.height }

    public subscript(x: Int, y: Int) -> Cell {
        cells[y * size.width + x]
    }

    /// Fills a rectangle with spaces of a role.
    public mutating func fill(x: Int, y: Int, width: Int, height: Int, role: Role) {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(size.width, x + width), y1 = min(size.height, y + height)
        guard x0 < x1, y0 < y1 else { return }
        for row in y0..<y1 {
            unsplit(x: x0, y: row)
            unsplit(x: x1, y: row)
            for col in x0..<x1 { cells[row * size.width + col] = Cell(character: " ", role: role) }
        }
    }

    /// Draws `text` at (x, y), clipped to `maxWidth` cells (and the canvas). Returns the cells used.
    /// Control characters show as visible symbols (⏎ for a newline, → for a tab); zero-width clusters are skipped.
    @discardableResult
    public mutating func draw(_ text: String, x: Int, y: Int, maxWidth: Int? = nil, role: Role) -> Int {
        guard y >= 0, y < size.height else { return 0 }
        let limit = min(size.width, x + (maxWidth ?? size.width))
        var col = x
        for g in text {
            let (shown, w) = Canvas.visible(g)
            if w == 0 { continue }
            if col + w > limit {
                // A wide character that would be split by the edge: fill what is left with spaces.
                while col < limit {
                    if col >= 0 { put(Cell(character: " ", role: role), x: col, y: y) }
                    col += 1
                }
                break
            }
            if col >= 0 {
                put(Cell(character: shown, role: role), x: col, y: y)
                if w == 2 { put(.continuation(role), x: col + 1, y: y) }
            } else if w == 2 && col + 1 >= 0 {
                put(Cell(character: " ", role: role), x: col + 1, y: y)  // the left half is off-canvas
            }
            col += w
        }
        return max(0, col - x)
    }

    /// Draws `text` padded (or cut with `…`) to exactly `width` cells, left- or right-aligned.
    public mutating func drawField(_ text: String, x: Int, y: Int, width: Int, role: Role, rightAligned: Bool = false) {
        guard width > 0 else { return }
        let cut = Canvas.truncate(text, to: width)
        let w = Canvas.width(of: cut)
        fill(x: x, y: y, width: width, height: 1, role: role)
        draw(cut, x: rightAligned ? x + width - w : x, y: y, maxWidth: width, role: role)
    }

    /// Changes the role of a run of cells, keeping their characters.
    public mutating func setRole(_ role: Role, x: Int, y: Int, width: Int) {
        guard y >= 0, y < size.height else { return }
        for col in max(0, x)..<min(size.width, x + width) { cells[y * size.width + col].role = role }
    }

    private mutating func put(_ cell: Cell, x: Int, y: Int) {
        guard x >= 0, x < size.width else { return }
        let i = y * size.width + x
        // Overwriting the right half of a wide character blanks its left half...
        if !cell.isContinuation && cells[i].isContinuation && x > 0 {
            cells[i - 1] = Cell(character: " ", role: cells[i - 1].role)
        }
        // ...and overwriting the left half blanks its right half.
        if x + 1 < size.width && cells[i + 1].isContinuation {
            cells[i + 1] = Cell(character: " ", role: cells[i + 1].role)
        }
        cells[i] = cell
    }

    /// If (x, y) is the right half of a wide character, turns both halves into spaces.
    private mutating func unsplit(x: Int, y: Int) {
        guard x > 0, x < size.width else { return }
        let i = y * size.width + x
        if cells[i].isContinuation {
            cells[i - 1] = Cell(character: " ", role: cells[i - 1].role)
            cells[i] = Cell(character: " ", role: cells[i].role)
        }
    }

    // MARK: Text as text

    /// The canvas as lines of text (continuation cells omitted, so a wide character counts once), trailing
    /// spaces kept so that widths are visible in golden files.
    public var text: String {
        var out = ""
        for y in 0..<size.height {
            for x in 0..<size.width where !self[x, y].isContinuation { out.append(self[x, y].character) }
            out.append("\n")
        }
        return out
    }

    /// One line of text.
    public func line(_ y: Int) -> String {
        var out = ""
        for x in 0..<size.width where !self[x, y].isContinuation { out.append(self[x, y].character) }
        return out
    }

    // MARK: Measuring

    /// The cells a string takes once drawn (control characters as their one-cell symbols).
    public static func width(of s: String) -> Int {
        var w = 0
        for g in s { w += visible(g).width }
        return w
    }

    /// `s` cut to at most `width` cells, ending in `…` when cut; a wide character is never split.
    public static func truncate(_ s: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        var total = 0
        var cutAt: String.Index? = nil
        var i = s.startIndex
        while i < s.endIndex {
            let w = visible(s[i]).width
            if cutAt == nil && total + w > width - 1 { cutAt = i }
            total += w
            if total > width { return String(s[s.startIndex..<(cutAt ?? i)]) + "…" }
            i = s.index(after: i)
        }
        return s
    }

    /// What a grapheme cluster is drawn as, and its width: control characters become visible one-cell
    /// symbols, everything else is measured with `TextWidth`.
    static func visible(_ g: Character) -> (Character, width: Int) {
        if let a = g.asciiValue {
            switch a {
            case 0x0A, 0x0D: return ("⏎", 1)
            case 0x09: return ("→", 1)
            case 0x00..<0x20, 0x7F: return ("·", 1)
            default: return (g, 1)
            }
        }
        if g == "\r\n" { return ("⏎", 1) }
        let w = TextWidth.of(g)
        if w == 0, let first = g.unicodeScalars.first, first.value < 0x20 || (0x7F..<0xA0).contains(first.value) {
            return ("·", 1)
        }
        return (g, w)
    }
}
