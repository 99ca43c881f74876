/// The prompt line, its error line, questions, progress and the pager.
extension Renderer {
    /// The bottom line while a prompt is open: the sigil, the text with the cursor, a hint on the right; an
    /// error goes on the line above, with a caret under the part of the text it is about.
    func drawPrompt(_ canvas: inout Canvas, _ p: Prompt, _ state: AppState) {
        let y = state.size.height - 1
        let w = state.size.width
        canvas.fill(x: 0, y: y, width: w, height: 1, role: .normal)
        let sigil = Canvas.truncate(p.sigil, to: max(1, w / 3))
        canvas.draw(sigil, x: 0, y: y, role: .statusKey)
        let x0 = Canvas.width(of: sigil) + 1
        let hint: String
        switch p.kind {
        case .query: hint = "Enter runs · Esc cancels · ↑↓ history"
        case .command: hint = "Enter runs · Tab completes · Esc cancels"
        case .edit(let t):
            hint = ValueParser.hint(t.type) + " · Enter saves" + (t.allowsNull ? " · Ctrl-N null" : "") + " · Esc"
        }
        let hintShown = w - x0 - Canvas.width(of: hint) - 2 > 30
        let fieldWidth = max(2, w - x0 - (hintShown ? Canvas.width(of: hint) + 3 : 1))
        let (text, cursorX) = p.editor.visible(width: fieldWidth)
        canvas.draw(text, x: x0, y: y, maxWidth: fieldWidth, role: .normal)
        canvas.setRole(.cursorCell, x: x0 + cursorX, y: y, width: 1)
        if hintShown { canvas.draw(hint, x: w - Canvas.width(of: hint) - 1, y: y, role: .status) }
        guard let e = p.error, y >= 2 else { return }
        // The message on its own line, then the caret line right above the text (lined up with the text as
        // shown: scrolled so the cursor is in view).
        let isProblem: Bool
        switch p.kind {
        case .command: isProblem = e.width > 0
        default: isProblem = true
        }
        // A message wider than the screen wraps onto up to three lines (a hint at its end says how to mend the
        // text), the last cut if it is longer still.
        var lines = ObjectLayout.wrap(e.message, width: max(1, w - 3))
        let room = max(1, min(3, y - 1))
        if lines.count > room {
            lines[room - 1] = Canvas.truncate(lines[(room - 1)...].joined(), to: w - 3)
            lines.removeLast(lines.count - room)
        }
        canvas.fill(x: 0, y: y - 1 - lines.count, width: w, height: lines.count + 1, role: .normal)
        for (i, line) in lines.enumerated() {
            canvas.draw(line, x: 2, y: y - 1 - lines.count + i, maxWidth: w - 3, role: isProblem ? .statusError : .statusMessage)
        }
        let start = e.start - (p.editor.cursorCell - cursorX)
        if e.width > 0 && start >= 0 && start < fieldWidth {
            let caret = "^" + String(repeating: "~", count: max(0, min(e.width, fieldWidth - start) - 1))
            canvas.draw(caret, x: x0 + start, y: y - 1, role: .statusError)
        }
    }

    func drawConfirmation(_ canvas: inout Canvas, _ c: Confirmation, _ state: AppState) {
        let y = state.size.height - 1
        let w = state.size.width
        canvas.fill(x: 0, y: y, width: w, height: 1, role: .statusMessage)
        canvas.draw(Canvas.truncate(c.question + "  [y/N]", to: w - 2), x: 1, y: y, role: .statusMessage)
    }

    func drawProgress(_ canvas: inout Canvas, _ p: TaskProgress, _ state: AppState) {
        let y = state.size.height - 1
        let w = state.size.width
        canvas.fill(x: 0, y: y, width: w, height: 1, role: .status)
        let pct = p.total > 0 ? min(100, p.done * 100 / p.total) : 0
        let label = "\(p.label) \(pct)% "
        let barWidth = max(0, min(40, w - Canvas.width(of: label) - 4))
        let filled = barWidth * pct / 100
        canvas.draw(label, x: 1, y: y, role: .statusMessage)
        canvas.draw(String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled),
                    x: 1 + Canvas.width(of: label), y: y, role: .statusKey)
    }

    /// A framed, scrollable text over the screen.
    func drawPager(_ canvas: inout Canvas, _ p: Pager, _ state: AppState) {
        let w = min(state.size.width - 2, 110)
        let h = min(state.size.height - 2, p.lines.count + 2)
        let x0 = (state.size.width - w) / 2, y0 = (state.size.height - h) / 2
        drawFrame(&canvas, Rect(x: x0, y: y0, width: w, height: h), title: p.title)
        let rows = max(0, h - 2)
        for (n, line) in p.lines.dropFirst(p.top).prefix(rows).enumerated() {
            canvas.draw(Canvas.truncate(line, to: w - 4), x: x0 + 2, y: y0 + 1 + n, maxWidth: w - 4, role: .dialog)
        }
        let foot = p.lines.count > rows
            ? " \(p.top + 1)–\(min(p.lines.count, p.top + rows)) of \(p.lines.count) · j/k PgDn/PgUp scroll · any other key closes "
            : " any key closes "
        canvas.draw(Canvas.truncate(foot, to: max(0, w - 4)), x: x0 + 2, y: y0 + h - 1, role: .dialogTitle)
    }

    /// A column's header with the arrow of the table's sort.
    static func header(_ col: Column, sort: ColumnSort?) -> String {
        guard let sort, case .property(let p) = col.kind, p.name == sort.property else { return col.header }
        return col.header + (sort.ascending ? " ▲" : " ▼")
    }
}
