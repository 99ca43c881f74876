import RealmStorage

/// Draws the whole screen for a state: breadcrumbs, the class list, the table or object, the status bar,
/// and the help overlay on top. Reads only the rows on screen.
public struct Renderer {
    public var format: ValueFormat
    public var keyMap: KeyMap

    public init(theme: Theme = .dark, keyMap: KeyMap = .standard) {
        format = ValueFormat(bools: theme.bools)
        self.keyMap = keyMap
    }

    public func render(_ state: AppState, data: BrowserData) -> Canvas {
        var canvas = Canvas(size: state.size)
        if state.isTooSmall {
            drawTooSmall(&canvas, state)
            return canvas
        }
        drawTitle(&canvas, state, data)
        let content = Layout.content(state.size)
        switch state.stack.last {
        case nil:
            canvas.draw("This database has no classes.", x: 2, y: content.y + 1, role: .null)
        case .table(let t)?:
            let sw = Layout.sidebarWidth(state)
            if sw > 0 {
                drawSidebar(&canvas, state, Rect(x: 0, y: content.y, width: sw, height: content.height))
                for y in content.y..<(content.y + content.height) { canvas.draw("│", x: sw, y: y, role: .border) }
            }
            drawTable(&canvas, t, state, data, Layout.tableArea(state))
        case .object(let o)?:
            drawObject(&canvas, o, state, data, content)
        }
        drawStatus(&canvas, state, data)
        if let p = state.progress { drawProgress(&canvas, p, state) }
        if let c = state.confirmation { drawConfirmation(&canvas, c, state) }
        if state.showHelp { drawHelp(&canvas, state) }
        if let p = state.pager { drawPager(&canvas, p, state) }
        if let p = state.prompt { drawPrompt(&canvas, p, state) }
        return canvas
    }

    // MARK: Bars

    func crumbs(_ state: AppState, _ data: BrowserData) -> [String] {
        var out: [String] = []
        var previous: Screen?
        for screen in state.stack {
            switch screen {
            case .table(let t):
                // A list or backlinks opened from a table cell: name its object first.
                if let owner = t.source.owner {
                    var shown = false
                    if case .object(let o)? = previous, o.object == owner { shown = true }
                    // A collection nested in the one before it: only the step taken.
                    if case .table(let p)? = previous, p.source.owner == owner, case .entries(_, let prop, let path) = t.source,
                       let step = path.last, p.source.collectionProperty == prop {
                        out.append(step.text)
                        previous = screen
                        continue
                    }
                    if !shown {
                        var fromClass = false
                        if case .table(let p)? = previous, case .objects(let c, _) = p.source, c == owner.className { fromClass = true }
                        out.append(objectCrumb(owner, fromClassTable: fromClass, data))
                    }
                }
                out.append(t.source.crumb)
            case .object(let o): out.append(objectCrumb(o.object, fromClassTable: o.fromClassTable, data))
            }
            previous = screen
        }
        return out
    }

    func objectCrumb(_ ref: ObjectRef, fromClassTable: Bool, _ data: BrowserData) -> String {
        let label = data.exists(ref) ? data.label(ref) : "#\(ref.key.rawValue)"
        return fromClassTable ? label : "\(ref.className) \(label)"
    }

    func drawTitle(_ canvas: inout Canvas, _ state: AppState, _ data: BrowserData) {
        let w = state.size.width
        canvas.fill(x: 0, y: 0, width: w, height: 1, role: .title)
        var parts = crumbs(state, data).map { Canvas.truncate($0, to: 40) }
        let sep = " › "
        func total(_ p: [String]) -> Int { p.reduce(0) { $0 + Canvas.width(of: $1) } + max(0, p.count - 1) * 3 + 2 }
        var dropped = false
        while parts.count > 1 && total(parts) + (dropped ? 4 : 0) > w {
            parts.removeFirst()
            dropped = true
        }
        var x = 1
        if dropped { x += canvas.draw("…" + sep, x: x, y: 0, maxWidth: w - x, role: .titleSeparator) }
        for (i, p) in parts.enumerated() {
            if i > 0 { x += canvas.draw(sep, x: x, y: 0, maxWidth: max(0, w - x), role: .titleSeparator) }
            x += canvas.draw(p, x: x, y: 0, maxWidth: max(0, w - x - 1), role: .title)
        }
    }

    func drawStatus(_ canvas: inout Canvas, _ state: AppState, _ data: BrowserData) {
        let y = state.size.height - 1
        let w = state.size.width
        canvas.fill(x: 0, y: y, width: w, height: 1, role: .status)
        let file = NSStringPath(path: data.path).lastComponent
        var info = "\(file)  \(ValueFormat.byteSize(data.fileBytes))  v\(data.version)  schema \(data.schemaVersion)  \(data.isReadOnly ? "read-only" : "writable")"
        if let core = data.realmCore {
            info = "\(file)  \(ValueFormat.byteSize(data.fileBytes))  Realm Core file · format \(core.format) (\(core.coreReleases)) · read-only"
                + (data.isSnapshotOfOpenFile ? " · snapshot (open in an app)" : "")
        }
        var right = "? help"
        if data.isInTransaction {
            right = "TX \(data.pendingEdits) edit\(data.pendingEdits == 1 ? "" : "s") · Ctrl-S commit · Ctrl-Z roll back  " + right
        }
        switch state.stack.last {
        case .table(let t)?:
            let n = (try? data.rowCount(t.source)) ?? 0
            let columns = data.columns(t.source)
            // Which column, so columns scrolled out of sight on either side are never a surprise.
            let column = columns.indices.contains(t.column) && columns.count > 1
                ? "\(Canvas.truncate(columns[t.column].name, to: 16)) · col \(t.column + 1)/\(columns.count) · " : ""
            // A query's result says how much of the table it is.
            let of = t.source.filter != nil && !t.query.isEmpty
                ? " of \(ValueFormat.grouped((try? data.rowCount(t.source.base)) ?? 0))" : ""
            right = column + (n == 0 ? "none\(of)" : "row \(ValueFormat.grouped(t.row + 1))/\(ValueFormat.grouped(n))\(of)") + "  " + right
        case .object(let o)?:
            right = "field \(o.field + 1)/\(data.fields(o.object).count)  " + right
        case nil: break
        }
        let rw = Canvas.width(of: right)
        canvas.draw(right, x: max(0, w - rw - 1), y: y, role: .statusKey)
        let leftMax = max(0, w - rw - 3)
        var x = 1
        if state.running != nil, let p = state.jobProgress {
            // Work in the background: what runs, how far, and how to stop it.
            let text = "\(p.label)… " + (p.percent.map { "\($0) % · " } ?? "· ") + "Esc cancels"
            canvas.draw(Canvas.truncate(text, to: leftMax), x: x, y: y, maxWidth: leftMax, role: .statusMessage)
        } else if let m = state.message {
            let infoShort = Canvas.truncate(file, to: 20)
            x += canvas.draw(infoShort, x: x, y: y, maxWidth: leftMax, role: .status)
            x += canvas.draw("  ", x: x, y: y, maxWidth: max(0, leftMax - x + 1), role: .status)
            canvas.draw(Canvas.truncate(m.text, to: max(0, leftMax - x + 1)), x: x, y: y, maxWidth: max(0, leftMax - x + 1),
                        role: m.isError ? .statusError : .statusMessage)
        } else {
            canvas.draw(Canvas.truncate(info, to: leftMax), x: x, y: y, maxWidth: leftMax, role: .status)
        }
    }

    func drawTooSmall(_ canvas: inout Canvas, _ state: AppState) {
        let min = AppState.minimumSize
        let lines = ["Terminal too small", "\(state.size.width)×\(state.size.height), needs \(min.width)×\(min.height)", "Q quits"]
        let top = max(0, (state.size.height - lines.count) / 2)
        for (i, l) in lines.enumerated() {
            let cut = Canvas.truncate(l, to: state.size.width)
            let x = max(0, (state.size.width - Canvas.width(of: cut)) / 2)
            canvas.draw(cut, x: x, y: top + i, role: i == 0 ? .warning : .normal)
        }
    }

    // MARK: Class list

    func drawSidebar(_ canvas: inout Canvas, _ state: AppState, _ r: Rect) {
        canvas.drawField("Classes", x: r.x + 1, y: r.y, width: r.width - 1, role: .header)
        let rows = max(0, r.height - 1)
        let top = max(0, min(state.classIndex - rows + 1, state.classes.count - rows))
        for (n, i) in (top..<min(state.classes.count, top + rows)).enumerated() {
            let y = r.y + 1 + n
            let entry = state.classes[i]
            let selected = i == state.classIndex
            let role: Role = selected ? (state.focus == .sidebar ? .sidebarSelected : .sidebarSelectedInactive) : .sidebar
            canvas.fill(x: r.x, y: y, width: r.width, height: 1, role: role)
            let count = ValueFormat.grouped(entry.count)
            let cw = count.count
            canvas.draw(Canvas.truncate(entry.name, to: max(1, r.width - cw - 3)), x: r.x + 1, y: y, role: role)
            canvas.draw(count, x: r.x + r.width - cw - 1, y: y, role: selected ? role : .sidebarCount)
        }
    }

    // MARK: Table

    func drawTable(_ canvas: inout Canvas, _ t: TableScreen, _ state: AppState, _ data: BrowserData, _ r: Rect) {
        let columns = data.columns(t.source)
        let count = (try? data.rowCount(t.source)) ?? 0
        let widths = t.widths.count == columns.count ? t.widths : columns.map { Canvas.width(of: $0.header) }
        let placed = Layout.placeColumns(widths: widths, frozen: Layout.frozenCount(columns), left: t.left, width: r.width)
        // Header.
        for pc in placed {
            let col = columns[pc.index]
            let header = Renderer.header(col, sort: t.sort)
            canvas.drawField(header, x: r.x + pc.x + 1, y: r.y, width: pc.width, role: col.isPrimaryKey ? .headerKey : .header,
                             rightAligned: col.rightAligned && Canvas.width(of: header) < pc.width)
            canvas.draw("│", x: r.x + pc.x + pc.width + 2, y: r.y, role: .border)
        }
        let visible = max(0, r.height - 1)
        if count == 0 {
            canvas.draw(emptyText(t.source), x: r.x + 1, y: r.y + 1, maxWidth: r.width - 1, role: .null)
            return
        }
        let focused = state.stack.count > 1 || state.focus == .table
        for (n, row) in (t.top..<min(count, t.top + visible)).enumerated() {
            let y = r.y + 1 + n
            for pc in placed {
                let col = columns[pc.index]
                let cell = data.cell(col, row: row, in: t.source, format: format)
                canvas.drawField(cell.text, x: r.x + pc.x + 1, y: y, width: pc.width, role: cell.role, rightAligned: cell.rightAligned)
                canvas.draw("│", x: r.x + pc.x + pc.width + 2, y: y, role: .border)
            }
            // Marked rows (Space) and cells the open transaction changed.
            if !state.marked.isEmpty || data.isInTransaction, let cls = data.rowClass(t.source),
               let key = try? data.key(row: row, in: t.source) {
                if state.marked.contains(key) {
                    canvas.setRole(.sidebarSelected, x: r.x, y: y, width: r.width)
                    canvas.draw("•", x: r.x, y: y, role: .sidebarSelected)
                }
                for pc in placed {
                    if case .property(let p) = columns[pc.index].kind, data.isChanged(ObjectRef(className: cls, key: key), p.name) {
                        canvas.setRole(.warning, x: r.x + pc.x + 1, y: y, width: pc.width)
                    }
                }
            }
            if let owner = t.source.owner, let p = t.source.collectionProperty, data.isChanged(owner, p) {
                canvas.setRole(.warning, x: r.x, y: y, width: 1)
            }
            if row == t.row {
                canvas.setRole(focused ? .cursorRow : .cursorRowInactive, x: r.x, y: y, width: r.width)
                if focused, let pc = placed.first(where: { $0.index == t.column }) {
                    canvas.setRole(.cursorCell, x: r.x + pc.x, y: y, width: pc.width + 2)
                }
            }
        }
    }

    func emptyText(_ s: TableSource) -> String {
        switch s {
        case .objects(let c, let f): return f == nil ? "No \(c) objects" : "No \(c) objects match"
        case .list: return "The list is empty"
        case .linkingObjects, .backlinks: return "Nothing links here"
        case .filtered: return "No objects match"
        case .entries: return "Empty: a adds"
        }
    }

    // MARK: Object

    func drawObject(_ canvas: inout Canvas, _ o: ObjectScreen, _ state: AppState, _ data: BrowserData, _ r: Rect) {
        guard data.exists(o.object) else {
            canvas.draw("This object no longer exists.", x: 2, y: r.y + 1, role: .null)
            return
        }
        let fields = data.fields(o.object)
        let cols = ObjectLayout.columns(fields, width: r.width)
        let lines = data.objectLines(o.object, fields: fields, valueWidth: r.width - cols.valueX - 1, format: format)
        canvas.fill(x: r.x, y: r.y, width: r.width, height: 1, role: .normal)
        canvas.draw("property", x: 2, y: r.y, maxWidth: cols.typeX - 3, role: .header)
        canvas.draw("type", x: cols.typeX, y: r.y, maxWidth: cols.valueX - cols.typeX - 1, role: .header)
        canvas.draw("value", x: cols.valueX, y: r.y, role: .header)
        let height = max(0, r.height - 1)
        for (n, line) in lines.dropFirst(o.top).prefix(height).enumerated() {
            let y = r.y + 1 + n
            if line.isFirst {
                let f = fields[line.field]
                canvas.draw(Canvas.truncate(f.name, to: cols.typeX - 4), x: 2, y: y, role: .fieldName)
                canvas.draw(Canvas.truncate(f.typeName, to: cols.valueX - cols.typeX - 2), x: cols.typeX, y: y, role: .index)
            }
            // Indentation is not part of the value (a link's underline starts at its text).
            let indent = line.text.prefix { $0 == " " }.count
            canvas.draw(String(line.text.dropFirst(indent)), x: cols.valueX + indent, y: y,
                        maxWidth: max(0, r.width - cols.valueX - indent), role: line.role)
            if line.field == o.field {
                canvas.setRole(.cursorRow, x: 0, y: y, width: r.width)
                if line.isFirst { canvas.setRole(.cursorCell, x: 1, y: y, width: cols.typeX - 2) }
            }
        }
    }

    // MARK: Help

    /// A dialog box: filled, framed, its title in the top edge.
    func drawFrame(_ canvas: inout Canvas, _ r: Rect, title: String) {
        canvas.fill(x: r.x, y: r.y, width: r.width, height: r.height, role: .dialog)
        canvas.draw("┌" + String(repeating: "─", count: r.width - 2) + "┐", x: r.x, y: r.y, role: .dialog)
        canvas.draw("└" + String(repeating: "─", count: r.width - 2) + "┘", x: r.x, y: r.y + r.height - 1, role: .dialog)
        for y in (r.y + 1)..<(r.y + r.height - 1) {
            canvas.draw("│", x: r.x, y: y, role: .dialog)
            canvas.draw("│", x: r.x + r.width - 1, y: y, role: .dialog)
        }
        canvas.draw(" \(Canvas.truncate(title, to: r.width - 6)) ", x: r.x + 2, y: r.y, role: .dialogTitle)
    }

    func drawHelp(_ canvas: inout Canvas, _ state: AppState) {
        let w = min(state.size.width - 2, 96)
        let lines = keyMap.bindings.map { (keyMap.keysText($0.command), $0.command.rawValue, $0.help) }
            + PaletteCommand.allCases.map { (":" + $0.rawValue, "", $0.usage) }
        let h = min(state.size.height - 2, lines.count + 2)
        let x0 = (state.size.width - w) / 2, y0 = (state.size.height - h) / 2
        drawFrame(&canvas, Rect(x: x0, y: y0, width: w, height: h), title: "Keys")
        let keyW = min(20, max(8, lines.map { Canvas.width(of: $0.0) }.max() ?? 8))
        let nameW = min(18, lines.map { $0.1.count }.max() ?? 8)
        let rows = max(0, h - 2)
        let top = min(state.helpTop, max(0, lines.count - rows))
        for (n, l) in lines.dropFirst(top).prefix(rows).enumerated() {
            let y = y0 + 1 + n
            canvas.draw(Canvas.truncate(l.0, to: keyW), x: x0 + 2, y: y, role: .dialogKey)
            canvas.draw(Canvas.truncate(l.1, to: nameW), x: x0 + 3 + keyW, y: y, maxWidth: max(0, w - keyW - 4), role: .dialog)
            let hx = x0 + 4 + keyW + nameW
            canvas.draw(Canvas.truncate(l.2, to: max(0, x0 + w - hx - 2)), x: hx, y: y, role: .dialog)
        }
        let foot = lines.count > rows ? " j/k scroll · any other key closes " : " any key closes "
        canvas.draw(Canvas.truncate(foot, to: max(0, w - 4)), x: x0 + 2, y: y0 + h - 1, role: .dialogTitle)
    }

}

/// The last component of a path, without Foundation.
struct NSStringPath {
    let path: String
    var lastComponent: String { path.split(separator: "/").last.map(String.init) ?? path }
}

