/// A key press, as the browser understands it (decoded from a terminal's bytes or from curses key codes).
public enum Key: Hashable, Sendable, CustomStringConvertible {
    /// A printable character (`j`, `G`, `?`, `日`).
    case char(Character)
    /// Ctrl with a letter (`ctrl("d")` is Ctrl-D); Ctrl-C, Ctrl-U and so on.
    case ctrl(Character)
    case enter, escape, backspace, tab, backTab
    case up, down, left, right
    case pageUp, pageDown, home, end
    case insert, delete
    case function(Int)

    /// How the help overlay and the command palette write the key: `j`, `Ctrl-D`, `PgDn`, `Enter`.
    public var description: String {
        switch self {
        case .char(" "): return "Space"
        case .char(let c): return String(c)
        case .ctrl(let c): return "Ctrl-\(c.uppercased())"
        case .enter: return "Enter"
        case .escape: return "Esc"
        case .backspace: return "Backspace"
        case .tab: return "Tab"
        case .backTab: return "Shift-Tab"
        case .up: return "↑"
        case .down: return "↓"
        case .left: return "←"
        case .right: return "→"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDn"
        case .home: return "Home"
        case .end: return "End"
        case .insert: return "Insert"
        case .delete: return "Delete"
        case .function(let n): return "F\(n)"
        }
    }
}

/// What a terminal reports: a key, a new size, or the mouse.
public enum TerminalEvent: Hashable, Sendable {
    case key(Key)
    case resize(Size)
    case mouse(MouseEvent)
}

/// A mouse click or wheel turn at a cell.
public enum MouseEvent: Hashable, Sendable {
    case click(x: Int, y: Int)
    case wheelUp(x: Int, y: Int)
    case wheelDown(x: Int, y: Int)
}
