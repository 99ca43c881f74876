import RealmStorage

/// The mouse: a click selects the class, row, cell or field under it; the wheel scrolls three rows.
extension AppState {
    mutating func handleMouse(_ m: MouseEvent, data: BrowserData) {
        // Overlays and prompts: the wheel scrolls the text shown, a click leaves them alone.
        if pager != nil || showHelp {
            switch m {
            case .wheelUp: if pager != nil { handlePagerKey(.up); handlePagerKey(.up); handlePagerKey(.up) } else { helpTop = max(0, helpTop - 3) }
            case .wheelDown: if pager != nil { handlePagerKey(.down); handlePagerKey(.down); handlePagerKey(.down) } else { helpTop += 3 }
            case .click: break
            }
            return
        }
        if prompt != nil || confirmation != nil { return }
        switch m {
        case .wheelUp(let x, let y), .wheelDown(let x, let y):
            let up = { if case .wheelUp = m { return true } else { return false } }()
            if stack.count == 1, x < Layout.sidebarWidth(self), y >= Layout.content(size).y {
                selectClass(classIndex + (up ? -1 : 1), data: data)
                return
            }
            for _ in 0..<3 { run(up ? .moveUp : .moveDown, data: data) }
        case .click(let x, let y):
            click(x: x, y: y, data: data)
        }
    }

    private mutating func click(x: Int, y: Int, data: BrowserData) {
        let content = Layout.content(size)
        guard y >= content.y, y < content.y + content.height else { return }
        let sw = Layout.sidebarWidth(self)
        if stack.count == 1 && sw > 0 && x < sw {
            // The class list: the same scrolling as drawn.
            let rows = max(0, content.height - 1)
            let top = max(0, min(classIndex - rows + 1, classes.count - rows))
            let i = top + (y - content.y - 1)
            guard y > content.y, i >= 0, i < classes.count else { return }
            selectClass(i, data: data)
            focus = .sidebar
            return
        }
        switch stack.last {
        case .table(var t)?:
            focus = .table
            let area = Layout.tableArea(self)
            let columns = data.columns(t.source)
            let placed = Layout.placeColumns(widths: t.widths.count == columns.count ? t.widths : columns.map { _ in 10 },
                                             frozen: Layout.frozenCount(columns), left: t.left, width: area.width)
            if let pc = placed.last(where: { area.x + $0.x <= x }) { t.column = pc.index }
            if y > area.y {
                let row = t.top + (y - area.y - 1)
                if let n = try? data.rowCount(t.source), row < n { t.row = row }
            }
            stack[stack.count - 1] = .table(t)
        case .object(var o)?:
            let fields = data.fields(o.object)
            let lines = objectLines(o, fields: fields, data: data)
            let i = o.top + (y - content.y - 1)
            if y > content.y, i >= 0, i < lines.count { o.field = lines[i].field }
            stack[stack.count - 1] = .object(o)
        case nil: break
        }
    }
}
