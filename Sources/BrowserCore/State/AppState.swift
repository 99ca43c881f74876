import RealmStorage

/// A table on the navigation stack: what it shows and where the cursor is.
public struct TableScreen: Equatable, Sendable {
    public var source: TableSource
    /// The selected row and column.
    public var row = 0
    public var column = 0
    /// The first row shown, and the first scrolling column shown (frozen columns always show).
    public var top = 0
    public var left = 0
    /// Column widths so far: they only grow while scrolling, so columns do not jump.
    public var widths: [Int] = []
    /// The selected object (kept across live updates).
    public var selectedKey: ObjectKey?
    /// The query typed with `/` (empty: none) and the column sort of `[` / `]`; together they make the
    /// source's filter (`TableSource.filter`), evaluated again at every new version.
    public var query = ""
    public var sort: ColumnSort?

    public init(source: TableSource) { self.source = source }
}

/// One object, every property on its own lines.
public struct ObjectScreen: Equatable, Sendable {
    public var object: ObjectRef
    /// The selected field and the first line shown.
    public var field = 0
    public var top = 0
    /// How the object was reached: after a class table the crumb leaves out the class name.
    public var fromClassTable = false

    public init(object: ObjectRef, fromClassTable: Bool = false) {
        self.object = object
        self.fromClassTable = fromClassTable
    }
}

/// A level of the navigation stack.
public enum Screen: Equatable, Sendable {
    case table(TableScreen)
    case object(ObjectScreen)
}

/// Where keys go on the first screen.
public enum Focus: Equatable, Sendable { case sidebar, table }

/// A line for the status bar.
public struct StatusMessage: Equatable, Sendable {
    public var text: String
    public var isError: Bool
    public init(_ text: String, isError: Bool = false) {
        self.text = text
        self.isError = isError
    }
}

/// A class in the sidebar.
public struct ClassEntry: Equatable, Sendable {
    public var name: String
    public var count: Int
}

/// Everything the browser shows, apart from the data itself.
public struct AppState: Equatable, Sendable {
    public var size: Size
    public var classes: [ClassEntry] = []
    /// The class selected in the sidebar.
    public var classIndex = 0
    public var focus: Focus = .table
    /// The stack: `stack[0]` is the selected class's table; drilling in pushes, going back pops.
    public var stack: [Screen] = []
    /// Where each class's table was left, so coming back to a class in the sidebar finds the same row.
    public var classPositions: [String: TableScreen] = [:]
    /// Keys of a sequence being typed (`g` before the second `g`).
    public var pendingKeys: [Key] = []
    public var showHelp = false
    public var helpTop = 0
    public var message: StatusMessage?
    public var shouldQuit = false
    /// Set when the whole screen must be drawn again (Ctrl-L).
    public var needsFullRedraw = false
    /// How values read (the theme's choice of ✓/✗ or true/false); the reducer measures with it too.
    public var format = ValueFormat()
    /// The query bar or the command palette, while one is open.
    public var prompt: Prompt?
    /// Queries and commands run so far, oldest first (`Up` in the prompt walks back through them).
    public var queryHistory: [String] = []
    public var commandHistory: [String] = []
    /// A scrollable text shown over everything (`:schema`, `:info`, `:verify`).
    public var pager: Pager?
    /// A question waiting for y/n, and work for the app to do outside the reducer (`BrowserApp` takes it).
    public var confirmation: Confirmation?
    public var task: AppTask?
    /// Objects of the current table marked with Space (for `d`); cleared when the table changes.
    public var marked: Set<ObjectKey> = []
    /// A link or list being filled from a table of objects.
    public var picker: PickRequest?
    /// A write waiting for another process to release the write lock (retried at every poll; Esc gives up).
    public var pendingWrite: WriteIntent?
    /// Progress of the task being done (`:demo`), for the status bar.
    public var progress: TaskProgress?
    /// The query or sort running in the background, and how far it is (the status bar shows it; Esc stops it).
    public var running: QueryJob?
    public var jobProgress: JobProgress?
    /// The id of the last job started.
    public var nextJobID = 0

    public static let minimumSize = Size(width: 40, height: 8)

    public init(size: Size) { self.size = size }

    public var isTooSmall: Bool { size.width < AppState.minimumSize.width || size.height < AppState.minimumSize.height }

    public var current: Screen? { stack.last }
}
