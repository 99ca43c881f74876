/// The sort a table got from `[` or `]`.
public struct ColumnSort: Equatable, Sendable {
    public var property: String
    public var ascending: Bool
    public init(property: String, ascending: Bool) {
        self.property = property
        self.ascending = ascending
    }
}

/// The line at the bottom where a query (`/`) or a command (`:`) is typed.
public struct Prompt: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case query
        case command
        /// A value being typed into a cell.
        case edit(EditTarget)
    }

    public var kind: Kind
    public var editor: LineEditor
    /// What was wrong with the last Enter, and where (cells into the text).
    public var error: PromptError?
    /// Position in the history while walking it with Up/Down (nil: editing the new line) and the new line
    /// kept meanwhile.
    public var historyIndex: Int?
    public var draft = ""

    public init(kind: Kind, text: String = "") {
        self.kind = kind
        editor = LineEditor(text)
    }

    /// `/` or `:`.
    public var sigil: String {
        switch kind {
        case .query: return "/"
        case .command: return ":"
        case .edit(let t):
            switch t.place {
            case .property: return "\(t.property.name) ›"
            case .listElement(let i): return "\(t.property.name)[\(i)] ›"
            case .listAppend, .setInsert: return "\(t.property.name) + ›"
            case .setElement(let v): return "\(t.property.name) \(ValueParser.editText(v)) →"
            case .entry(let path): return "\(t.property.name)\(path.map(\.text).joined()) ›"
            case .entryAppend(let path): return "\(t.property.name)\(path.map(\.text).joined()) + ›"
            case .newKey(let path): return "\(t.property.name)\(path.map(\.text).joined()) new key ›"
            case .renameKey(let path, let k): return "\(t.property.name)\(path.map(\.text).joined()) rename \"\(k)\" to ›"
            }
        }
    }
}

/// An error shown under the prompt: the message and the cells of the text it is about.
public struct PromptError: Equatable, Sendable {
    public var message: String
    public var start: Int
    public var width: Int
    public init(message: String, start: Int = 0, width: Int = 0) {
        self.message = message
        self.start = start
        self.width = width
    }
}

/// Text shown over the screen, scrolled with the usual keys (`:schema`, `:info`, `:verify`).
public struct Pager: Equatable, Sendable {
    public var title: String
    public var lines: [String]
    public var top = 0
    public init(title: String, lines: [String]) {
        self.title = title
        self.lines = lines
    }
}
