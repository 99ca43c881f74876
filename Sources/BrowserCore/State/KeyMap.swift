/// Everything the browser can do from the keyboard. The raw value is the long name (for the `:` command
/// palette and the help overlay).
public enum Command: String, CaseIterable, Sendable {
    case moveDown = "move-down"
    case moveUp = "move-up"
    case moveLeft = "move-left"
    case moveRight = "move-right"
    case pageDown = "page-down"
    case pageUp = "page-up"
    case halfPageDown = "half-page-down"
    case halfPageUp = "half-page-up"
    case top = "go-top"
    case bottom = "go-bottom"
    case firstColumn = "first-column"
    case lastColumn = "last-column"
    case switchFocus = "switch-focus"
    case open = "open"
    case incomingLinks = "incoming-links"
    case back = "back"
    case quit = "quit"
    case help = "help"
    case redraw = "redraw"
    case query = "query"
    case sortAscending = "sort-ascending"
    case sortDescending = "sort-descending"
    case palette = "command-palette"
    case edit = "edit"
    case add = "add"
    case addNew = "add-new"
    case delete = "delete"
    case mark = "mark"
    case moveElementDown = "move-element-down"
    case moveElementUp = "move-element-up"
    case setNull = "set-null"
    case begin = "begin"
    case commit = "commit"
    case rollback = "rollback"
}

/// One entry of the key map: the key sequences, the command and a line of help.
public struct Binding: Sendable {
    public var keys: [[Key]]
    public var command: Command
    public var help: String
}

/// Keys to commands. Every command has at least one key, a long name and a help line; the `?` overlay is
/// generated from this table.
public struct KeyMap: Sendable {
    public var bindings: [Binding]

    public enum Match: Equatable {
        case command(Command)
        /// The keys so far begin a longer sequence (`g` of `g g`).
        case prefix
        case none
    }

    public static let standard = KeyMap(bindings: [
        Binding(keys: [[.down], [.char("j")]], command: .moveDown, help: "next row / field / class"),
        Binding(keys: [[.up], [.char("k")]], command: .moveUp, help: "previous row / field / class"),
        Binding(keys: [[.left], [.char("h")]], command: .moveLeft, help: "previous column (to the class list from the first)"),
        Binding(keys: [[.right], [.char("l")]], command: .moveRight, help: "next column"),
        Binding(keys: [[.pageDown], [.ctrl("f")]], command: .pageDown, help: "one screen down"),
        Binding(keys: [[.pageUp], [.ctrl("b")]], command: .pageUp, help: "one screen up"),
        Binding(keys: [[.ctrl("d")]], command: .halfPageDown, help: "half a screen down"),
        Binding(keys: [[.ctrl("u")]], command: .halfPageUp, help: "half a screen up"),
        Binding(keys: [[.char("g"), .char("g")], [.home]], command: .top, help: "first row"),
        Binding(keys: [[.char("G")], [.end]], command: .bottom, help: "last row"),
        Binding(keys: [[.char("0")], [.char("^")]], command: .firstColumn, help: "first column"),
        Binding(keys: [[.char("$")]], command: .lastColumn, help: "last column"),
        Binding(keys: [[.tab], [.backTab]], command: .switchFocus, help: "between the class list and the table"),
        Binding(keys: [[.enter]], command: .open, help: "open: link → object, list → list, backlinks → objects, row → object"),
        Binding(keys: [[.char("i")]], command: .incomingLinks, help: "incoming links of the selected object"),
        Binding(keys: [[.escape], [.backspace], [.char("q")]], command: .back, help: "back; first screen: clear the query; Esc stops a query"),
        Binding(keys: [[.char("Q")], [.ctrl("c")]], command: .quit, help: "quit"),
        Binding(keys: [[.char("?")], [.function(1)]], command: .help, help: "this help"),
        Binding(keys: [[.char("/")]], command: .query, help: "query this table (Realm predicates, SORT/DISTINCT/LIMIT; empty clears)"),
        Binding(keys: [[.char("[")]], command: .sortAscending, help: "sort by this column, ascending (again: unsorted)"),
        Binding(keys: [[.char("]")]], command: .sortDescending, help: "sort by this column, descending (again: unsorted)"),
        Binding(keys: [[.char(":")]], command: .palette, help: "command palette: any command by name, schema, info, verify, …"),
        Binding(keys: [[.char("e")]], command: .edit, help: "edit the value (a link: pick its object; a list, set or dictionary: open it; mixed: int 5, string abc, …)"),
        Binding(keys: [[.char("a")]], command: .add, help: "new object here (free primary key); in a list or set: an element; in a dictionary: a key"),
        Binding(keys: [[.char("A")]], command: .addNew, help: "in a list of objects: create a new object and add it"),
        Binding(keys: [[.char("d")]], command: .delete, help: "delete the marked or selected objects (asks first); in a list, set or dictionary: remove"),
        Binding(keys: [[.char(" ")]], command: .mark, help: "mark or unmark the object (for d)"),
        Binding(keys: [[.char("J")]], command: .moveElementDown, help: "move the list element down"),
        Binding(keys: [[.char("K")]], command: .moveElementUp, help: "move the list element up"),
        Binding(keys: [[.ctrl("n")]], command: .setNull, help: "set the link or optional value to null (embedded objects: deleted, asks first)"),
        Binding(keys: [[.char("t")]], command: .begin, help: "begin a write transaction: edits stay uncommitted until Ctrl-S"),
        Binding(keys: [[.ctrl("s")]], command: .commit, help: "commit the write transaction"),
        Binding(keys: [[.ctrl("z")]], command: .rollback, help: "roll the write transaction back"),
        Binding(keys: [[.ctrl("l")]], command: .redraw, help: "redraw the screen"),
    ])

    /// What the keys typed so far mean.
    public func match(_ keys: [Key]) -> Match {
        var prefix = false
        for b in bindings {
            for seq in b.keys {
                if seq == keys { return .command(b.command) }
                if seq.count > keys.count && Array(seq.prefix(keys.count)) == keys { prefix = true }
            }
        }
        return prefix ? .prefix : .none
    }

    /// The keys of a command as the help shows them (`j ↓`, `g g`).
    public func keysText(_ c: Command) -> String {
        bindings.filter { $0.command == c }.flatMap(\.keys).map { $0.map(\.description).joined(separator: " ") }
            .joined(separator: ", ")
    }
}
