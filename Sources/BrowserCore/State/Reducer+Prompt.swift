import RealmStorage
import RealmQuery

/// The query bar (`/`), column sorting (`[` `]`), the command palette (`:`) and the pager its reports open in.
extension AppState {
    // MARK: Opening

    /// `/`: the query bar for the current table, holding its query so it can be edited.
    mutating func openQueryBar() {
        guard case .table(let t)? = stack.last else {
            message = StatusMessage("Queries filter tables: go back to one (Esc) and press /")
            return
        }
        focus = .table
        prompt = Prompt(kind: .query, text: t.query)
    }

    mutating func openPalette() {
        prompt = Prompt(kind: .command)
    }

    // MARK: Keys in the prompt

    mutating func handlePromptKey(_ key: Key, data: BrowserData) {
        guard var p = prompt else { return }
        switch key {
        case .escape, .ctrl("c"), .ctrl("g"):
            prompt = nil
            return
        case .enter:
            submitPrompt(p, data: data)
            return
        case _ where { if case .edit = p.kind { return true } else { return false } }():
            guard case .edit(let target) = p.kind else { return }
            var q = p
            if handleEditorKey(key, &q, target, data: data) {
                if prompt != nil { prompt = q }
                return
            }
            if q.editor.handle(key) { q.error = nil }
            prompt = q
            return
        case .up, .ctrl("p"):
            walkHistory(&p, by: -1)
        case .down, .ctrl("n"):
            walkHistory(&p, by: 1)
        case .tab where p.kind == .command:
            let matches = PaletteCommand.completions(p.editor.text)
            if matches.count == 1 {
                p.editor.set(matches[0] + " ")
                p.error = nil
            } else if matches.count > 1 {
                let common = matches.dropFirst().reduce(matches[0]) { a, b in String(zip(a, b).prefix { $0 == $1 }.map(\.0)) }
                if common.count > p.editor.text.count { p.editor.set(common) }
                p.error = PromptError(message: matches.prefix(8).joined(separator: "  ") + (matches.count > 8 ? "  …" : ""))
            }
        default:
            if p.editor.handle(key) {
                p.error = nil
            }
        }
        prompt = p
    }

    mutating func walkHistory(_ p: inout Prompt, by step: Int) {
        let history = p.kind == .query ? queryHistory : commandHistory
        guard !history.isEmpty else { return }
        if let i = p.historyIndex {
            let next = i + step
            if next >= history.count {
                p.historyIndex = nil
                p.editor.set(p.draft)
            } else {
                p.historyIndex = max(0, next)
                p.editor.set(history[max(0, next)])
            }
        } else if step < 0 {
            p.draft = p.editor.text
            p.historyIndex = history.count - 1
            p.editor.set(history[history.count - 1])
        }
        p.error = nil
    }

    static func remember(_ text: String, in history: inout [String]) {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard !t.isEmpty else { return }
        history.removeAll { $0 == t }
        history.append(t)
        if history.count > 200 { history.removeFirst(history.count - 200) }
    }

    mutating func submitPrompt(_ p: Prompt, data: BrowserData) {
        switch p.kind {
        case .query:
            let text = p.editor.text
            guard case .table(var t)? = stack.last else { prompt = nil; return }
            do {
                let sort = pendingQueryAndSort(t).sort
                prompt = nil
                try apply(query: text, sort: sort, to: &t, purpose: .query, data: data)
                AppState.remember(text, in: &queryHistory)
            } catch let f as QueryFailure {
                var q = p
                q.error = PromptError(message: f.message, start: f.start, width: f.width)
                prompt = q
            } catch {
                var q = p
                q.error = PromptError(message: "\(error)")
                prompt = q
            }
        case .command:
            let text = p.editor.text
            prompt = nil
            AppState.remember(text, in: &commandHistory)
            runPalette(text, data: data)
        case .edit(let target):
            submitEdit(p, target, data: data)
        }
    }

    // MARK: Queries and sorting

    /// Shows `query` and `sort` on the current table `t`: the whole table at once when both are empty,
    /// otherwise the query is checked here (throwing, changing nothing, when it is not valid) and run by the
    /// engine as a job (`QueryJob`), whose result comes back through `jobFinished`.
    mutating func apply(query: String, sort: ColumnSort?, to t: inout TableScreen, purpose: QueryJob.Purpose, data: BrowserData) throws {
        guard let q = TableQuery(query: query, sort: sort) else {
            // Nothing to run: a job still running for this table is no longer wanted (an update carrying it
            // stops too, and the next poll reads the new version for the table as it is now).
            if let job = running?.queryJob, job.depth == stack.count { running = nil; jobProgress = nil }
            show(nil, query: query, sort: sort, on: &t, data: data)
            stack[stack.count - 1] = .table(t)
            switch purpose {
            case .query: message = StatusMessage(matchSummary(t, data: data))
            case .sort: message = StatusMessage("Sort removed: key order")
            case .export, .open, .update: break
            }
            return
        }
        start(.query(try data.prepare(q, on: t.source)), query: query, sort: sort, purpose: purpose)
    }

    /// `312 of 1,000,000 match`.
    func matchSummary(_ t: TableScreen, data: BrowserData) -> String {
        let n = (try? data.rowCount(t.source)) ?? 0
        let all = (try? data.rowCount(t.source.base)) ?? 0
        if t.source.filter == nil { return "Showing all \(ValueFormat.grouped(all))" }
        if t.query.isEmpty, let s = t.sort { return "Sorted by \(s.property) \(s.ascending ? "ascending" : "descending")" }
        return "\(ValueFormat.grouped(n)) of \(ValueFormat.grouped(all)) match"
    }

    /// `[` / `]`: sorts the table by the selected column (the same key again removes the sort).
    mutating func sortByColumn(ascending: Bool, data: BrowserData) throws {
        guard case .table(var t)? = stack.last else {
            message = StatusMessage("Sorting applies to tables")
            return
        }
        let columns = data.columns(t.source)
        guard columns.indices.contains(t.column) else { return }
        let property: PropertySchema
        switch columns[t.column].kind {
        case .property(let p): property = p
        case .index:
            message = StatusMessage("# is the list's own order: sort by another column")
            return
        case .incoming:
            message = StatusMessage("Incoming links cannot be sorted: query them with @links, e.g. / @links.@count > 0")
            return
        case .element, .key:
            message = StatusMessage("A list, set or dictionary of values cannot be sorted here")
            return
        }
        if property.isList || property.isCollection || property.type == .linkingObjects {
            message = StatusMessage("\(property.name) is a list: sort by its size with / SORT(\(Query.escapedName(property.name)).@count ASC)")
            return
        }
        if property.type == .link {
            message = StatusMessage("\(property.name) is a link: sort by a property of its object, e.g. / SORT(\(Query.escapedName(property.name)).\(Query.escapedName(linkSortHint(property, data))) ASC)")
            return
        }
        let wanted = ColumnSort(property: property.name, ascending: ascending)
        let (query, current) = pendingQueryAndSort(t)
        let sort: ColumnSort? = current == wanted ? nil : wanted
        do {
            try apply(query: query, sort: sort, to: &t, purpose: .sort(sort, property: property.name), data: data)
        } catch let f as QueryFailure {
            message = StatusMessage("Cannot sort by \(property.name): \(f.message)", isError: true)
        }
    }

    private func linkSortHint(_ p: PropertySchema, _ data: BrowserData) -> String {
        guard let target = p.objectClassName, let cs = data.classSchema(target) else { return "name" }
        return cs.properties.first { !$0.isList && [.string, .int, .date, .double].contains($0.type) }?.name ?? "name"
    }

    /// After a new version: every table with a query or sort shows the query's result in that version.
    mutating func reevaluateQueries(_ data: BrowserData) {
        for (i, screen) in stack.enumerated() {
            guard case .table(var t) = screen, let q = TableQuery(query: t.query, sort: t.sort) else { continue }
            do {
                t.source = t.source.with(filter: try data.evaluate(q, on: t.source))
            } catch {
                // The schema changed under the query: show the whole table and say why.
                t.source = t.source.base
                t.query = ""
                t.sort = nil
                message = StatusMessage("The query no longer applies and was cleared: \(error)", isError: true)
            }
            stack[i] = .table(t)
        }
    }

    // MARK: Pager

    mutating func handlePagerKey(_ key: Key) {
        guard var p = pager else { return }
        let page = max(1, size.height - 4)
        let maxTop = max(0, p.lines.count - page)
        switch key {
        case .char("j"), .down: p.top += 1
        case .char("k"), .up: p.top -= 1
        case .pageDown, .ctrl("d"), .ctrl("f"), .char(" "): p.top += page
        case .pageUp, .ctrl("u"), .ctrl("b"): p.top -= page
        case .char("g"), .home: p.top = 0
        case .char("G"), .end: p.top = maxTop
        case .char("Q"), .ctrl("c"): shouldQuit = true
        default: pager = nil; return
        }
        p.top = min(max(0, p.top), maxTop)
        pager = p
    }
}
