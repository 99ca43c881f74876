import RealmStorage

/// Live updates and the invariants every action ends with.
extension AppState {
    // MARK: Live updates

    mutating func reloadClasses(_ data: BrowserData) {
        let selected = classes.indices.contains(classIndex) ? classes[classIndex].name : nil
        classes = data.classNames.map { ClassEntry(name: $0, count: (try? data.count($0)) ?? 0) }
        if let selected, let i = classes.firstIndex(where: { $0.name == selected }) {
            classIndex = i
        } else {
            classIndex = min(classIndex, max(0, classes.count - 1))
            if !stack.isEmpty, case .table(let t) = stack[0], case .objects(let name, _) = t.source, name != classes.first?.name ?? "" {
                stack = []
            }
        }
    }

    /// Another version: new counts; every screen keeps its object when it still exists (the table row
    /// follows it), and screens of deleted objects close. Queries are evaluated again here unless `reevaluate`
    /// is false: a version another process committed comes with its tables read by a job (`updated`).
    mutating func databaseChanged(_ data: BrowserData, reevaluate: Bool = true) {
        reloadClasses(data)
        if reevaluate {
            reevaluateQueries(data)
            restartRunningJob(data)
        }
        classPositions = classPositions.filter { data.classSchema($0.key) != nil }
        for (i, screen) in stack.enumerated() {
            let owner: ObjectRef?
            switch screen {
            case .table(let t): owner = t.source.owner
            case .object(let o): owner = o.object
            }
            if let owner, !data.exists(owner) {
                stack.removeSubrange(i...)
                message = StatusMessage("\(owner.className) #\(owner.key.rawValue) was deleted by another process")
                break
            }
            if case .table(let t) = screen, case .entries = t.source {
                // A nested list or dictionary another process replaced (or a read that failed): say so. (Read
                // once per version: an update's job has read it already.)
                do {
                    _ = try data.collection(t.source)
                } catch {
                    stack.removeSubrange(i...)
                    message = StatusMessage("\(t.source.crumb) cannot be shown any more: \(error)", isError: true)
                    break
                }
            }
            if case .table(var t) = screen {
                if case .objects(let name, _) = t.source, data.classSchema(name) == nil {
                    stack = []
                    break
                }
                if let key = t.selectedKey, let pos = try? data.position(of: key, in: t.source), pos != t.row {
                    t.top = max(0, t.top + pos - t.row)
                    t.row = pos
                }
                stack[i] = .table(t)
            }
        }
    }

    // MARK: Invariants

    /// Keeps every cursor on something that exists and in view, and column widths fitted.
    mutating func normalize(_ data: BrowserData) {
        if stack.isEmpty && !classes.isEmpty {
            classIndex = min(max(classIndex, 0), classes.count - 1)
            let name = classes[classIndex].name
            stack = [.table(classPositions[name] ?? TableScreen(source: .objects(className: name, filter: nil)))]
        }
        if stack.count > 1 { focus = .table }
        guard let screen = stack.last else { return }
        switch screen {
        case .table(var t):
            normalizeTable(&t, data: data)
            stack[stack.count - 1] = .table(t)
        case .object(var o):
            let fields = data.fields(o.object)
            o.field = min(max(o.field, 0), max(0, fields.count - 1))
            let lines = objectLines(o, fields: fields, data: data)
            let height = objectViewHeight
            o.top = min(max(0, o.top), max(0, lines.count - height))
            if let firstLine = lines.firstIndex(where: { $0.field == o.field }) {
                let lastLine = lines.lastIndex(where: { $0.field == o.field }) ?? firstLine
                if lastLine < o.top || firstLine >= o.top + height { o.top = min(firstLine, max(0, lines.count - height)) }
            }
            stack[stack.count - 1] = .object(o)
        }
    }

    func normalizeTable(_ t: inout TableScreen, data: BrowserData) {
        let count = (try? data.rowCount(t.source)) ?? 0
        let columns = data.columns(t.source)
        let visible = Layout.visibleRows(self)
        t.row = min(max(t.row, 0), max(0, count - 1))
        t.column = min(max(t.column, 0), max(0, columns.count - 1))
        if t.row < t.top { t.top = t.row }
        if t.row >= t.top + visible { t.top = t.row - visible + 1 }
        t.top = min(max(0, t.top), max(0, count - visible))
        // Widths: the header and the rows on screen, never shrinking.
        if t.widths.count != columns.count { t.widths = Array(repeating: 0, count: columns.count) }
        let rows = t.top..<min(count, t.top + visible)
        for (i, col) in columns.enumerated() {
            let cells = rows.map { data.cell(col, row: $0, in: t.source, format: format).text }
            t.widths[i] = max(t.widths[i], Layout.columnWidth(header: Renderer.header(col, sort: t.sort), cells: cells))
        }
        // Horizontal scroll: the selected column shown whole.
        let frozen = Layout.frozenCount(columns)
        let area = Layout.tableArea(self)
        t.left = max(t.left, frozen)
        if t.column < frozen { t.left = frozen }    // on the index or the key: scrolled all the way left
        if t.column >= frozen {
            if t.column < t.left { t.left = t.column }
            while t.left < t.column {
                let placed = Layout.placeColumns(widths: t.widths, frozen: frozen, left: t.left, width: area.width)
                if placed.contains(where: { $0.index == t.column && $0.width == t.widths[t.column] }) { break }
                t.left += 1
            }
        }
        t.selectedKey = try? data.key(row: t.row, in: t.source)
    }
}
