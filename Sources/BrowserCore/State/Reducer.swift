import RealmStorage

/// What changes the state: a key, a command by name (the future `:` palette), a resize, a newer version of
/// the database.
public enum Action: Equatable, Sendable {
    case key(Key)
    case command(Command)
    case resize(Size)
    case mouse(MouseEvent)
    case databaseChanged
    /// How far the running job (`QueryJob`) is, and how it ended.
    case jobProgress(id: Int, JobProgress)
    case jobFinished(id: Int, JobOutcome)
}

extension AppState {
    /// The first state for a database: its classes, the first one's table open, the table focused.
    public static func initial(size: Size, data: BrowserData, format: ValueFormat = ValueFormat()) -> AppState {
        var s = AppState(size: size)
        s.format = format
        s.reloadClasses(data)
        s.normalize(data)
        return s
    }

    /// Applies an action. Errors reading the data become a message in the status bar; the state stays usable.
    public mutating func reduce(_ action: Action, data: BrowserData, keyMap: KeyMap = .standard) {
        switch action {
        case .key(let key):
            message = nil
            handleKey(key, data: data, keyMap: keyMap)
        case .command(let c):
            message = nil
            run(c, data: data)
        case .resize(let newSize):
            size = newSize
            needsFullRedraw = true
        case .mouse(let m):
            message = nil
            handleMouse(m, data: data)
        case .databaseChanged:
            databaseChanged(data)
        case .jobProgress(let id, let p):
            if running?.id == id { jobProgress = p }
        case .jobFinished(let id, let outcome):
            jobFinished(id, outcome, data: data)
        }
        dropJobWithoutItsTable()
        normalize(data)
    }

    // MARK: Keys

    mutating func handleKey(_ key: Key, data: BrowserData, keyMap: KeyMap) {
        if confirmation != nil { handleConfirmationKey(key, data: data); return }
        if pendingWrite != nil, key == .escape {
            pendingWrite = nil
            message = StatusMessage("Gave up waiting: nothing was written")
            return
        }
        if prompt != nil { handlePromptKey(key, data: data); return }
        if pager != nil { handlePagerKey(key); return }
        if running != nil, key == .escape, !showHelp {
            pendingKeys = []
            cancelRunningJob()
            return
        }
        if showHelp {
            switch key {
            case .char("j"), .down: helpTop += 1
            case .char("k"), .up: helpTop = max(0, helpTop - 1)
            case .pageDown, .ctrl("d"), .char(" "): helpTop += max(1, size.height - 4)
            case .pageUp, .ctrl("u"): helpTop = max(0, helpTop - max(1, size.height - 4))
            case .char("Q"), .ctrl("c"): shouldQuit = true
            default: showHelp = false
            }
            return
        }
        pendingKeys.append(key)
        var match = keyMap.match(pendingKeys)
        if match == .none && pendingKeys.count > 1 {
            // The sequence broke off: the last key starts afresh.
            pendingKeys = [key]
            match = keyMap.match(pendingKeys)
        }
        switch match {
        case .prefix:
            return
        case .none:
            pendingKeys = []
            message = StatusMessage("\(key) does nothing here — ? shows the keys")
        case .command(let c):
            pendingKeys = []
            // `q` on the first screen has nothing to go back to: it quits.
            if c == .back && key == .char("q") && stack.count <= 1 {
                shouldQuit = true
                return
            }
            run(c, data: data)
        }
    }

    // MARK: Commands

    mutating func run(_ c: Command, data: BrowserData) {
        do {
            try runThrowing(c, data: data)
        } catch {
            message = StatusMessage("\(error)", isError: true)
        }
    }

    mutating func runThrowing(_ c: Command, data: BrowserData) throws {
        switch c {
        case .quit: quit(data: data); return
        case .help: showHelp = true; helpTop = 0; return
        case .redraw: needsFullRedraw = true; return
        case .palette: openPalette(); return
        case .query: openQueryBar(); return
        case .sortAscending, .sortDescending:
            try sortByColumn(ascending: c == .sortAscending, data: data)
            return
        case .edit: focus = .table; try editSelected(data: data); return
        case .add: focus = .table; try add(data: data, createNew: false); return
        case .addNew: focus = .table; try add(data: data, createNew: true); return
        case .delete: focus = .table; try deleteSelected(data: data); return
        case .mark: try toggleMark(data: data); return
        case .moveElementDown: try moveElement(by: 1, data: data); return
        case .moveElementUp: try moveElement(by: -1, data: data); return
        case .setNull:
            if picker != nil { pickNull(data: data) } else { try setSelectedNull(data: data) }
            return
        case .begin: beginTransaction(data: data); return
        case .commit: try commitTransaction(data: data); return
        case .rollback: try rollbackTransaction(data: data); return
        case .switchFocus:
            if stack.count == 1 { focus = focus == .sidebar ? .table : .sidebar }
            return
        case .back:
            if stack.count > 1 {
                stack.removeLast()
                marked = []
                if let p = picker, stack.count < p.depth {
                    picker = nil
                    message = StatusMessage("Nothing chosen: nothing was written")
                }
            } else if focus == .sidebar {
                focus = .table
            } else if case .table(var t)? = stack.last, !t.query.isEmpty {
                // A query shown on the first screen: Esc takes it away (the sort stays).
                try apply(query: "", sort: t.sort, to: &t, purpose: .query, data: data)
            } else {
                message = StatusMessage("This is the first screen: Q quits")
            }
            return
        default: break
        }
        if stack.count == 1 && focus == .sidebar {
            try sidebarCommand(c, data: data)
            return
        }
        guard let screen = stack.last else {
            message = StatusMessage("This database has no classes yet")
            return
        }
        // Commands may push a screen; the one they started on is written back at its depth.
        let depth = stack.count
        switch screen {
        case .table(var t):
            try tableCommand(c, &t, data: data)
            if stack.count >= depth { stack[depth - 1] = .table(t) }
        case .object(var o):
            try objectCommand(c, &o, data: data)
            if stack.count >= depth { stack[depth - 1] = .object(o) }
        }
    }

    mutating func sidebarCommand(_ c: Command, data: BrowserData) throws {
        let page = max(1, Layout.content(size).height)
        switch c {
        case .moveDown: selectClass(classIndex + 1, data: data)
        case .moveUp: selectClass(classIndex - 1, data: data)
        case .pageDown, .halfPageDown: selectClass(classIndex + page, data: data)
        case .pageUp, .halfPageUp: selectClass(classIndex - page, data: data)
        case .top: selectClass(0, data: data)
        case .bottom: selectClass(classes.count - 1, data: data)
        case .moveRight, .open: focus = .table
        default: break
        }
    }

    /// Shows another class in the first screen's table, keeping where the last one was left.
    mutating func selectClass(_ index: Int, data: BrowserData) {
        guard !classes.isEmpty else { return }
        let i = min(max(index, 0), classes.count - 1)
        guard i != classIndex || stack.isEmpty else { return }
        if let first = stack.first, case .table(let t) = first, case .objects(let name, _) = t.source {
            classPositions[name] = t
        }
        classIndex = i
        marked = []
        let name = classes[i].name
        stack = [.table(classPositions[name] ?? TableScreen(source: .objects(className: name, filter: nil)))]
    }

    mutating func tableCommand(_ c: Command, _ t: inout TableScreen, data: BrowserData) throws {
        let count = try data.rowCount(t.source)
        let visible = Layout.visibleRows(self)
        let columns = data.columns(t.source)
        switch c {
        case .moveDown: t.row = min(t.row + 1, max(0, count - 1))
        case .moveUp: t.row = max(0, t.row - 1)
        case .pageDown:
            t.row = min(t.row + visible, max(0, count - 1))
            t.top = min(t.top + visible, max(0, count - visible))
        case .pageUp:
            t.row = max(0, t.row - visible)
            t.top = max(0, t.top - visible)
        case .halfPageDown:
            let half = max(1, visible / 2)
            t.row = min(t.row + half, max(0, count - 1))
            t.top = min(t.top + half, max(0, count - visible))
        case .halfPageUp:
            let half = max(1, visible / 2)
            t.row = max(0, t.row - half)
            t.top = max(0, t.top - half)
        case .top: t.row = 0
        case .bottom: t.row = max(0, count - 1)
        case .moveRight: t.column = min(t.column + 1, max(0, columns.count - 1))
        case .moveLeft:
            if t.column == 0 && stack.count == 1 { focus = .sidebar } else { t.column = max(0, t.column - 1) }
        case .firstColumn: t.column = 0
        case .lastColumn: t.column = max(0, columns.count - 1)
        case .open:
            if picker != nil, try pick(data: data) { return }
            try openCell(t, columns: columns, data: data)
        case .incomingLinks:
            guard let cls = data.rowClass(t.source), let key = try data.key(row: t.row, in: t.source) else {
                message = StatusMessage("No object selected")
                return
            }
            try openIncoming(ObjectRef(className: cls, key: key), data: data, fromClassTable: isClassTable(t))
        default: break
        }
    }

    func isClassTable(_ t: TableScreen) -> Bool {
        if case .objects = t.source { return true }
        return false
    }

    /// Enter on a table cell: a link opens its object, a list its table, a backlink column the linking
    /// objects, anything else the row's object.
    mutating func openCell(_ t: TableScreen, columns: [Column], data: BrowserData) throws {
        guard t.column < columns.count else { return }
        guard let cls = data.rowClass(t.source) else {
            // A list, set or dictionary of values, or a collection nested in a mixed value.
            try openElement(t, data: data)
            return
        }
        guard let key = try data.key(row: t.row, in: t.source) else {
            message = StatusMessage("The table is empty")
            return
        }
        let ref = ObjectRef(className: cls, key: key)
        switch columns[t.column].kind {
        case .property(let p):
            if try openProperty(ref, p, data: data) { return }
        case .incoming(let c, let p):
            open(.backlinks(owner: ref, originClass: c, property: p))
            return
        case .index, .element, .key: break
        }
        push(.object(ObjectScreen(object: ref, fromClassTable: isClassTable(t))))
    }

    /// Opens what a property of an object leads to; false for a plain value.
    mutating func openProperty(_ ref: ObjectRef, _ p: PropertySchema, data: BrowserData) throws -> Bool {
        // A collection's elements are read by a job before its table opens (a list may hold millions).
        if p.type == .linkingObjects {
            open(.linkingObjects(owner: ref, property: p.name))
            return true
        }
        if p.isList || p.isSet {
            open(.list(owner: ref, property: p.name))
            return true
        }
        if p.isDictionary {
            open(.entries(owner: ref, property: p.name, path: []))
            return true
        }
        if p.type == .mixed { return try openMixed(ref, p, data: data) }
        if p.type == .link {
            guard case .link(let k) = try data.value(ref, p.name), let target = p.objectClassName else {
                if data.isEmbedded(p.objectClassName) {
                    message = StatusMessage("\(p.name) is null: e creates a new \(p.objectClassName ?? "object") there")
                } else {
                    message = StatusMessage("\(p.name) is null: it links to nothing")
                }
                return true
            }
            push(.object(ObjectScreen(object: ObjectRef(className: target, key: k))))
            return true
        }
        return false
    }

    /// The incoming links of an object: straight to the linking objects when one property links to it,
    /// otherwise the object view at its first incoming link.
    mutating func openIncoming(_ ref: ObjectRef, data: BrowserData, fromClassTable: Bool) throws {
        let groups = try data.incoming(ref)
        if groups.isEmpty {
            message = StatusMessage("Nothing links to \(ref.className) \(data.label(ref))")
            return
        }
        if groups.count == 1 {
            open(.backlinks(owner: ref, originClass: groups[0].className, property: groups[0].property))
            return
        }
        var o = ObjectScreen(object: ref, fromClassTable: fromClassTable)
        let fields = data.fields(ref)
        o.field = fields.firstIndex { if case .incoming = $0.kind { return true } else { return false } }
            ?? fields.firstIndex { if case .property(let p) = $0.kind { return p.type == .linkingObjects } else { return false } } ?? 0
        push(.object(o))
    }

    mutating func push(_ s: Screen) {
        stack.append(s)
        marked = []
    }

    // MARK: Object view

    mutating func objectCommand(_ c: Command, _ o: inout ObjectScreen, data: BrowserData) throws {
        let fields = data.fields(o.object)
        guard !fields.isEmpty else { return }
        let lines = objectLines(o, fields: fields, data: data)
        let height = objectViewHeight
        func first(_ f: Int) -> Int { lines.firstIndex { $0.field == f } ?? 0 }
        func last(_ f: Int) -> Int { lines.lastIndex { $0.field == f } ?? 0 }
        let maxTop = max(0, lines.count - height)
        switch c {
        case .moveDown:
            if last(o.field) >= o.top + height { o.top = min(o.top + 1, maxTop) }
            else if o.field + 1 < fields.count { o.field += 1 }
        case .moveUp:
            if first(o.field) < o.top { o.top -= 1 }
            else if o.field > 0 { o.field -= 1; o.top = min(o.top, first(o.field)) }
        case .pageDown, .halfPageDown:
            let step = c == .pageDown ? height : max(1, height / 2)
            o.top = min(o.top + step, maxTop)
            if last(o.field) < o.top, o.top < lines.count { o.field = lines[o.top].field }
            if o.top == maxTop && c == .pageDown && lines.last.map({ $0.field }) != o.field && last(o.field) < o.top + height {
                o.field = min(o.field + 1, fields.count - 1)
            }
        case .pageUp, .halfPageUp:
            let step = c == .pageUp ? height : max(1, height / 2)
            o.top = max(0, o.top - step)
            if first(o.field) >= o.top + height { o.field = lines[min(lines.count - 1, o.top + height - 1)].field }
        case .top: o.field = 0; o.top = 0
        case .bottom: o.field = fields.count - 1; o.top = maxTop
        case .open:
            switch fields[o.field].kind {
            case .property(let p):
                if try !openProperty(o.object, p, data: data) {
                    if data.isReadOnly {
                        message = StatusMessage("\(p.name) is a plain value (the file is open read-only)")
                    } else {
                        try edit(o.object, p, data: data)
                    }
                }
            case .incoming(let c, let p, _):
                open(.backlinks(owner: o.object, originClass: c, property: p))
            }
        case .incomingLinks: try openIncoming(o.object, data: data, fromClassTable: o.fromClassTable)
        default: break
        }
    }

    /// Lines of data the object view shows (its area less the header row).
    var objectViewHeight: Int { max(1, Layout.content(size).height - 1) }

    func objectLines(_ o: ObjectScreen, fields: [ObjectField], data: BrowserData) -> [ObjectLine] {
        let cols = ObjectLayout.columns(fields, width: size.width)
        return data.objectLines(o.object, fields: fields, valueWidth: size.width - cols.valueX - 1, format: format)
    }
}
