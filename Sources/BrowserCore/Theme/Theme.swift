/// What a cell is: views draw roles, a theme says how each role looks.
public enum Role: String, CaseIterable, Sendable {
    /// Plain text on the terminal's own background.
    case normal
    /// The breadcrumb bar at the top.
    case title
    /// The `›` between breadcrumbs.
    case titleSeparator
    /// The status bar at the bottom.
    case status
    /// A message in the status bar.
    case statusMessage
    /// An error in the status bar.
    case statusError
    /// Key hints in the status bar.
    case statusKey
    /// The class list.
    case sidebar
    /// Object counts in the class list.
    case sidebarCount
    /// The selected class while the class list has the focus.
    case sidebarSelected
    /// The selected class while the table has the focus.
    case sidebarSelectedInactive
    /// Column headers.
    case header
    /// The primary key's column header.
    case headerKey
    /// Lines between columns and around panels.
    case border
    /// The selected row (table focused).
    case cursorRow
    /// The selected cell of the selected row.
    case cursorCell
    /// The selected row while the class list has the focus.
    case cursorRowInactive
    /// A null value, drawn differently from an empty string.
    case null
    case number
    case string
    case boolTrue
    case boolFalse
    case date
    /// A to-one link.
    case link
    /// A list or a set of linking objects.
    case list
    /// Binary data.
    case data
    /// A list table's index column and the object view's line numbers.
    case index
    /// Property names in the object view.
    case fieldName
    /// The help overlay and dialogs.
    case dialog
    case dialogTitle
    case dialogKey
    /// Something to notice (a "terminal too small" screen).
    case warning
}

/// A terminal colour: the terminal's own, one of the 256 indexed colours, or a true colour that the
/// terminal falls back from (to the nearest of 256, then 8).
public enum Color: Hashable, Sendable {
    case `default`
    case indexed(UInt8)
    case rgb(UInt8, UInt8, UInt8)

    /// The nearest colour of the xterm 256-colour palette (the 6×6×6 cube and the grey ramp).
    public var xterm256: Int {
        switch self {
        case .default: return -1
        case .indexed(let i): return Int(i)
        case .rgb(let r, let g, let b):
            func level(_ v: UInt8) -> Int { v < 48 ? 0 : v < 115 ? 1 : (Int(v) - 35) / 40 }
            let steps = [0, 95, 135, 175, 215, 255]
            let (lr, lg, lb) = (level(r), level(g), level(b))
            let cube = 16 + 36 * lr + 6 * lg + lb
            func dist(_ a: (Int, Int, Int)) -> Int {
                let dr = a.0 - Int(r), dg = a.1 - Int(g), db = a.2 - Int(b)
                return dr * dr + dg * dg + db * db
            }
            let avg = (Int(r) + Int(g) + Int(b)) / 3
            let grayIndex = avg > 238 ? 23 : max(0, (avg - 3) / 10)
            let grayLevel = 8 + 10 * grayIndex
            let cubeDist = dist((steps[lr], steps[lg], steps[lb]))
            let grayDist = dist((grayLevel, grayLevel, grayLevel))
            return grayDist < cubeDist ? 232 + grayIndex : cube
        }
    }

    /// The nearest of the 8 basic colours (0 black … 7 white), for terminals without 256 colours.
    public var basic8: Int {
        switch self {
        case .default: return -1
        case .indexed(let i):
            if i < 8 { return Int(i) }
            if i < 16 { return Int(i) - 8 }
            return Color.rgb(Color.paletteRGB(Int(i))).basic8
        case .rgb(let r, let g, let b):
            let maxc = max(r, g, b), minc = min(r, g, b)
            if maxc < 64 { return 0 }
            if Int(maxc) - Int(minc) < 40 { return maxc < 160 ? 0 : 7 }
            let t = Int(maxc) * 6 / 10
            return (Int(r) >= t ? 1 : 0) | (Int(g) >= t ? 2 : 0) | (Int(b) >= t ? 4 : 0)
        }
    }

    static func rgb(_ c: (UInt8, UInt8, UInt8)) -> Color { .rgb(c.0, c.1, c.2) }

    /// The RGB value of an entry of the xterm 256-colour palette (16 and up).
    static func paletteRGB(_ i: Int) -> (UInt8, UInt8, UInt8) {
        if i >= 232 { let v = UInt8(8 + 10 * (i - 232)); return (v, v, v) }
        let steps: [UInt8] = [0, 95, 135, 175, 215, 255]
        let c = i - 16
        return (steps[c / 36], steps[(c / 6) % 6], steps[c % 6])
    }
}

/// How one role looks.
public struct Style: Hashable, Sendable {
    public var foreground: Color = .default
    public var background: Color = .default
    public var bold = false
    public var dim = false
    public var italic = false
    public var underline = false
    public var reverse = false

    public init(foreground: Color = .default, background: Color = .default, bold: Bool = false, dim: Bool = false,
                italic: Bool = false, underline: Bool = false, reverse: Bool = false) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.dim = dim
        self.italic = italic
        self.underline = underline
        self.reverse = reverse
    }
}

/// Colours and text choices for every role, read from a TOML file (see `themes/`).
public struct Theme: Sendable, Equatable {
    public enum BoolStyle: String, Sendable { case symbols, words }

    public var name: String
    public var styles: [Role: Style]
    /// `✓`/`✗` or `true`/`false`.
    public var bools: BoolStyle = .symbols
    /// Whether the theme relies on attributes only (the monochrome theme, and `NO_COLOR`).
    public var monochrome = false

    public init(name: String, styles: [Role: Style], bools: BoolStyle = .symbols, monochrome: Bool = false) {
        self.name = name
        self.styles = styles
        self.bools = bools
        self.monochrome = monochrome
    }

    /// The style of a role; a role the theme leaves out looks like `normal`.
    public func style(_ role: Role) -> Style { styles[role] ?? styles[.normal] ?? Style() }

    /// The same theme with every colour removed (for `NO_COLOR` and terminals without colours): attributes
    /// stay, and roles that are told apart only by colour get reverse video or underline.
    public func withoutColors() -> Theme {
        var t = self
        t.monochrome = true
        for role in Role.allCases {
            var s = style(role)
            s.foreground = .default
            s.background = .default
            switch role {
            case .title, .status, .cursorRow, .sidebarSelected: s.reverse = true
            case .cursorCell: s.reverse = true; s.bold = true
            case .sidebarSelectedInactive, .cursorRowInactive: s.underline = true
            case .null: s.dim = true
            case .header, .headerKey, .dialogTitle: s.bold = true
            default: break
            }
            t.styles[role] = s
        }
        return t
    }
}
