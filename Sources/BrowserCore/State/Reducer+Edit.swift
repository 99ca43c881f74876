import RealmStorage

/// Editing: cell editors, the link picker, list edits, creating and deleting objects, and the explicit write
/// transaction. Every change goes through `perform(_:data:)` as a `WriteIntent`.
extension AppState {
    // MARK: Starting an edit

    /// `e` (or Enter on a plain value in the object view): edit the selected value.
    mutating func editSelected(data: BrowserData) throws {
        guard !data.isReadOnly else { throw data.readOnlyRefusal }
        switch stack.last {
        case .table(let t)?:
            let columns = data.columns(t.source)
            guard columns.indices.contains(t.column) else { return }
            switch columns[t.column].kind {
            case .property(let p):
                guard let cls = data.rowClass(t.source), let key = try data.key(row: t.row, in: t.source) else {
                    message = StatusMessage("No object selected")
                    return
                }
                try edit(ObjectRef(className: cls, key: key), p, data: data)
            case .element(let p):
                if case .entries = t.source { try editEntry(t, data: data); return }
                guard case .list(let owner, let pName) = t.source, let v = try data.element(row: t.row, in: t.source) else { return }
                if let sp = data.classSchema(owner.className)?.property(named: pName), sp.isSet {
                    try editSetElement(owner, sp, row: t.row, data: data)
                    return
                }
                startEditor(EditTarget(object: owner, property: p, place: .listElement(t.row)), text: AppState.editorText(v, p.type))
            case .key:
                try renameSelectedKey(t, data: data)
            case .index:
                // In a list of values the index stands for its element.
                if case .entries = t.source {
                    try editEntry(t, data: data)
                } else if case .list(let owner, let pName) = t.source, data.rowClass(t.source) == nil,
                   var p = data.classSchema(owner.className)?.property(named: pName), let v = try data.element(row: t.row, in: t.source) {
                    p.isList = false
                    startEditor(EditTarget(object: owner, property: p, place: .listElement(t.row)), text: AppState.editorText(v, p.type))
                } else {
                    message = StatusMessage("# is the position in the list: J and K move the element")
                }
            case .incoming:
                message = StatusMessage("Incoming links change where they start: open the linking object and edit its link")
            }
        case .object(let o)?:
            let fields = data.fields(o.object)
            guard fields.indices.contains(o.field) else { return }
            switch fields[o.field].kind {
            case .property(let p): try edit(o.object, p, data: data)
            case .incoming:
                message = StatusMessage("Incoming links change where they start: open the linking object and edit its link")
            }
        case nil: break
        }
    }

    mutating func edit(_ ref: ObjectRef, _ p: PropertySchema, data: BrowserData) throws {
        if p.type == .linkingObjects {
            message = StatusMessage("\(p.name) is computed from links: edit the links of the objects it lists")
            return
        }
        if p.isSet {
            push(.table(TableScreen(source: .list(owner: ref, property: p.name))))
            message = StatusMessage("a adds, d removes\(p.type == .link ? "" : ", e replaces an element")")
            return
        }
        if p.isDictionary {
            push(.table(TableScreen(source: .entries(owner: ref, property: p.name, path: []))))
            message = StatusMessage("a adds a key, e on a key renames it, e on a value edits it, d removes the key")
            return
        }
        if p.type == .mixed {
            let v = try data.value(ref, p.name)
            startEditor(EditTarget(object: ref, property: p), text: AppState.editorText(v, .mixed))
            if v.isCollection || { if case .typedLink = v { return true } else { return false } }() {
                message = StatusMessage("\(p.name) holds a \(ValueFormat.mixedTypeName(v)): typing a value replaces it (Enter on it opens it)")
            }
            return
        }
        if p.isList {
            push(.table(TableScreen(source: .list(owner: ref, property: p.name))))
            message = StatusMessage("a adds, A creates and adds, d removes, J/K move, e edits an element")
            return
        }
        if p.type == .link {
            guard let target = p.objectClassName else { return }
            if data.isEmbedded(target) {
                try editEmbedded(ref, p, target: target, data: data)
                return
            }
            openPicker(target, purpose: .setLink(ref, property: p.name), data: data)
            return
        }
        if p.type == .data {
            startEditor(EditTarget(object: ref, property: p), text: "@")
            return
        }
        startEditor(EditTarget(object: ref, property: p), text: ValueParser.editText(try data.value(ref, p.name)))
    }

    mutating func startEditor(_ target: EditTarget, text: String) {
        prompt = Prompt(kind: .edit(target), text: text)
    }

    mutating func openPicker(_ targetClass: String, purpose: PickRequest.Purpose, data: BrowserData) {
        push(.table(TableScreen(source: .objects(className: targetClass, filter: nil))))
        picker = PickRequest(purpose: purpose, depth: stack.count)
        let what: String
        switch purpose {
        case .setLink(_, let p): what = "for \(p)"
        case .appendToList(_, let p), .insertIntoSet(_, let p): what = "to add to \(p)"
        case .setEntryLink(_, let p, let path): what = "for \(p)\(path.map(\.text).joined())"
        }
        message = StatusMessage("Choose a \(targetClass) \(what): Enter picks, / filters, Ctrl-N sets null, Esc cancels")
    }

    // MARK: Keys in a cell editor

    /// Keys of the editor that are not line editing: Space on a bool, Ctrl-N for null. True when handled.
    mutating func handleEditorKey(_ key: Key, _ p: inout Prompt, _ target: EditTarget, data: BrowserData) -> Bool {
        switch key {
        case .char(" ") where target.type == .bool:
            let now = p.editor.text.trimmingCharacters(in: .whitespaces).lowercased()
            p.editor.set(["true", "yes", "1", "y", "✓"].contains(now) ? "false" : "true")
            p.error = nil
            return true
        case .ctrl("n"):
            switch target.place {
            case .newKey, .renameKey:
                p.error = PromptError(message: "a key is text: it cannot be null")
                return true
            default: break
            }
            guard target.property.isOptional || target.type == .mixed else {
                p.error = PromptError(message: "\(target.property.name) is required: it cannot be null")
                return true
            }
            prompt = nil
            commitEdit(target, .null, data: data)
            return true
        default:
            return false
        }
    }

    /// Enter in a cell editor: parse, then write; a parse error keeps the editor open and writes nothing.
    mutating func submitEdit(_ p: Prompt, _ target: EditTarget, data: BrowserData) {
        switch target.place {
        case .newKey, .renameKey:
            submitKey(p, target, data: data)
            return
        default: break
        }
        let text = p.editor.text.trimmingCharacters(in: .whitespaces)
        let parsed = target.type == .mixed && text.lowercased().hasPrefix("link ")
            ? parseTypedLink(text, data: data) : ValueParser.parse(p.editor.text, as: target.type)
        switch parsed {
        case .failure(let e):
            var q = p
            q.error = PromptError(message: e.description)
            prompt = q
        case .success(let v):
            prompt = nil
            let written = commitEdit(target, v, data: data)
            // An engine refusal (a duplicate primary key) reopens the editor with the text and the reason.
            if !written, let m = message, m.isError, pendingWrite == nil {
                var q = p
                q.error = PromptError(message: m.text)
                prompt = q
                message = nil
            }
        }
    }

    /// Writes an edited value; whether it was written (see `perform`).
    @discardableResult
    mutating func commitEdit(_ target: EditTarget, _ v: Value, data: BrowserData) -> Bool {
        let ref = target.object, p = target.property.name
        switch target.place {
        case .property: return perform(.set(ref, property: p, v), data: data)
        case .listElement(let i): return perform(.listSet(ref, property: p, index: i, v), data: data)
        case .listAppend: return perform(.listAppend(ref, property: p, v), data: data)
        case .setInsert: return perform(.setInsert(ref, property: p, v), data: data)
        case .setElement(let old): return perform(.setReplace(ref, property: p, old: old, new: v), data: data)
        case .entry(let path): return perform(.entrySet(ref, property: p, path: path, v), data: data)
        case .entryAppend(let path):
            // One past the end of the nested list appends.
            var count = 0
            do {
                if case .list(let l) = try data.nestedCollection(ref, p, path: path) { count = l.count }
            } catch {
                message = StatusMessage("Not written: \(error)", isError: true)
                return false
            }
            return perform(.entrySet(ref, property: p, path: path + [.index(count)], v), data: data)
        case .newKey, .renameKey: return false
        }
    }

    // MARK: The picker

    /// Enter on a row of the picker's table: the object is linked, and the picker closes.
    mutating func pick(data: BrowserData) throws -> Bool {
        guard let req = picker, stack.count == req.depth, case .table(let t)? = stack.last,
              let key = try data.key(row: t.row, in: t.source) else { return false }
        stack.removeLast()
        picker = nil
        switch req.purpose {
        case .setLink(let ref, let p): perform(.set(ref, property: p, .link(key)), data: data)
        case .appendToList(let ref, let p): perform(.listAppend(ref, property: p, .link(key)), data: data)
        case .insertIntoSet(let ref, let p): perform(.setInsert(ref, property: p, .link(key)), data: data)
        case .setEntryLink(let ref, let p, let path): perform(.entrySet(ref, property: p, path: path, .link(key)), data: data)
        }
        return true
    }

    /// Ctrl-N in the picker: the link becomes null.
    mutating func pickNull(data: BrowserData) {
        guard let req = picker, stack.count == req.depth else { return }
        let intent: WriteIntent
        switch req.purpose {
        case .setLink(let ref, let p): intent = .set(ref, property: p, .null)
        case .setEntryLink(let ref, let p, let path): intent = .entrySet(ref, property: p, path: path, .null)
        case .appendToList, .insertIntoSet:
            message = StatusMessage("A list or set holds objects, not null: Esc cancels")
            return
        }
        stack.removeLast()
        picker = nil
        perform(intent, data: data)
    }

    // MARK: Adding, deleting, marking, moving

    /// `a`: a new object in a class table (defaults, a free primary key); in a list, an element (the picker
    /// for objects, the editor for values).
    mutating func add(data: BrowserData, createNew: Bool) throws {
        guard !data.isReadOnly else { throw data.readOnlyRefusal }
        guard case .table(let t)? = stack.last else {
            message = StatusMessage("Adding works in tables")
            return
        }
        if try addInCollection(t, createNew: createNew, data: data) { return }
        switch t.source.base {
        case .objects(let c, _):
            perform(.createObject(className: c), data: data)
        case .list(let owner, let pName):
            guard let p = data.classSchema(owner.className)?.property(named: pName) else { return }
            if p.type == .link, let target = p.objectClassName {
                if createNew {
                    perform(.createAndAppend(owner, property: pName, targetClass: target), data: data)
                } else {
                    openPicker(target, purpose: .appendToList(owner, property: pName), data: data)
                }
            } else {
                var element = p
                element.isList = false
                startEditor(EditTarget(object: owner, property: element, place: .listAppend), text: "")
            }
        case .linkingObjects, .backlinks:
            message = StatusMessage("These objects link here: add a link from the object that should, not here")
        case .filtered, .entries:
            break
        }
    }

    /// `d`: deletes the marked objects (or the selected one), or removes the selected element of a list,
    /// after a yes/no question.
    mutating func deleteSelected(data: BrowserData) throws {
        guard !data.isReadOnly else { throw data.readOnlyRefusal }
        guard case .table(let t)? = stack.last else {
            message = StatusMessage("Deleting works in tables: go back to one")
            return
        }
        if try deleteInCollection(t, data: data) { return }
        if case .list(let owner, let p) = t.source.base {
            guard try data.rowCount(t.source) > 0 else { return }
            // In a filtered list the row is not the list position: find it.
            var index = t.row
            if t.source.filter != nil, let k = try data.key(row: t.row, in: t.source) {
                index = try data.list(owner, p).firstIndex(of: .link(k)) ?? t.row
            }
            confirmation = Confirmation("Remove element \(index) from \(p)? (the object itself stays)",
                                        action: .write(.listRemove(owner, property: p, index: index)))
            return
        }
        guard let cls = data.rowClass(t.source) else { return }
        var keys = Array(marked).sorted()
        if keys.isEmpty, let k = try data.key(row: t.row, in: t.source) { keys = [k] }
        guard !keys.isEmpty else { return }
        let what = keys.count == 1 ? "\(cls) \(data.label(ObjectRef(className: cls, key: keys[0])))" : "\(keys.count) \(cls) objects"
        confirmation = Confirmation("Delete \(what)? Links to \(keys.count == 1 ? "it" : "them") become null",
                                    action: .write(.delete(className: cls, keys: keys)))
    }

    /// Space: marks or unmarks the selected object, then moves down.
    mutating func toggleMark(data: BrowserData) throws {
        guard case .table(var t)? = stack.last, let key = try data.key(row: t.row, in: t.source) else { return }
        if marked.contains(key) { marked.remove(key) } else { marked.insert(key) }
        t.row = min(t.row + 1, max(0, try data.rowCount(t.source) - 1))
        stack[stack.count - 1] = .table(t)
        message = StatusMessage(marked.isEmpty ? "Nothing marked" : "\(marked.count) marked: d deletes them")
    }

    /// `J` / `K`: moves the selected element of a list down or up.
    mutating func moveElement(by step: Int, data: BrowserData) throws {
        guard case .table(var t)? = stack.last, case .list(let owner, let p) = t.source else {
            message = StatusMessage("Moving works in lists (unfiltered)")
            return
        }
        if data.classSchema(owner.className)?.property(named: p)?.isSet == true {
            message = StatusMessage("A set keeps its elements in its own order: they cannot be moved")
            return
        }
        let count = try data.rowCount(t.source)
        let to = t.row + step
        guard to >= 0, to < count else { return }
        if perform(.listMove(owner, property: p, from: t.row, to: to), data: data) {
            t.row = to
            stack[stack.count - 1] = .table(t)
        }
    }

    // MARK: Transactions

    mutating func beginTransaction(data: BrowserData) {
        if data.isInTransaction {
            message = StatusMessage("A write transaction is already open: Ctrl-S commits, Ctrl-Z rolls back")
            return
        }
        perform(.begin, data: data)
    }

    mutating func commitTransaction(data: BrowserData) throws {
        guard data.isInTransaction else {
            message = StatusMessage("No write transaction is open (t begins one; edits otherwise commit at once)")
            return
        }
        let n = try data.commitTransaction()
        databaseChanged(data)
        message = committed("Committed \(n) edit\(n == 1 ? "" : "s")", data: data)
    }

    mutating func rollbackTransaction(data: BrowserData) throws {
        guard data.isInTransaction else {
            message = StatusMessage("No write transaction is open")
            return
        }
        let n = try data.rollbackTransaction()
        databaseChanged(data)
        message = StatusMessage("Rolled back \(n) edit\(n == 1 ? "" : "s"): nothing was written")
    }

    /// `Q`: asks first when the open transaction holds edits.
    mutating func quit(data: BrowserData) {
        if data.isInTransaction && data.pendingEdits > 0 {
            confirmation = Confirmation("Quit and discard \(data.pendingEdits) uncommitted edit\(data.pendingEdits == 1 ? "" : "s")?",
                                        action: .quit)
            return
        }
        shouldQuit = true
    }

    // MARK: Writing

    /// Applies a change: in the open transaction, or committed at once. When another process holds the
    /// write lock the change waits (`pendingWrite`, retried by the app) and nothing is written meanwhile.
    /// Returns whether the change was made: the status line can be an error after a change that was (its
    /// commit's checkpoint failed), so callers ask this, not the message.
    @discardableResult
    mutating func perform(_ intent: WriteIntent, data: BrowserData) -> Bool {
        do {
            let done = try apply(intent, data: data)
            pendingWrite = nil
            databaseChanged(data)
            message = data.isInTransaction ? StatusMessage(done + " (uncommitted: Ctrl-S commits)") : committed(done, data: data)
            return true
        } catch let n as NothingToWrite {
            pendingWrite = nil
            message = StatusMessage(n.description)
        } catch WriteRefusal.busy {
            pendingWrite = intent
            message = StatusMessage("Waiting for the write lock: another process is writing… Esc gives up")
        } catch {
            pendingWrite = nil
            message = StatusMessage("Not written: \(error)", isError: true)
        }
        return false
    }

    /// What to say after a commit that returned: `done`, and, when the checkpoint after it failed, that it did.
    private func committed(_ done: String, data: BrowserData) -> StatusMessage {
        guard let failure = data.database.checkpointFailure else { return StatusMessage(done) }
        // The change is committed (durable in the commit log); only folding the log into the file failed.
        return StatusMessage(done + " — but the checkpoint failed (the commit is safe in the log; it is tried "
                             + "again at the next commit): \(failure)", isError: true)
    }

    /// Tries a waiting write again (the app calls this at every poll).
    public mutating func retryPendingWrite(data: BrowserData) {
        guard let w = pendingWrite else { return }
        perform(w, data: data)
        normalize(data)
    }

    /// Does one change; returns what to say about it.
    private mutating func apply(_ intent: WriteIntent, data: BrowserData) throws -> String {
        switch intent {
        case .begin:
            try data.beginTransaction()
            return "Write transaction begun: edits stay uncommitted until Ctrl-S (Ctrl-Z rolls back)"
        case .set(let ref, let p, let v):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in try tx.set(ref.key, ref.className, p, v) }
            return "\(p) set"
        case .createObject(let c):
            let pk = try data.suggestedPrimaryKey(c)
            var key: ObjectKey?
            try data.write { tx in key = try tx.createObject(c, pk.map { [$0.0: $0.1] } ?? [:]) }
            if let key {
                data.markNew(ObjectRef(className: c, key: key))
                selectObject(key, data: data)
            }
            return "Created a \(c)" + (pk.map { " with \($0.0) \(ValueParser.editText($0.1))" } ?? "") + ": e edits its values"
        case .delete(let c, let keys):
            try data.write { tx in
                let t = try tx.table(c)
                for k in keys where try tx.exists(t, k) { try tx.delete(t, k) }
            }
            marked.subtract(keys)
            return "Deleted \(keys.count) \(c) object\(keys.count == 1 ? "" : "s")"
        case .listAppend(let ref, let p, let v):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                try tx.listAppend(ref.key, tx.property(tx.table(ref.className), p), v)
            }
            return "Added to \(p)"
        case .listSet(let ref, let p, let i, let v):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                try tx.listSet(ref.key, tx.property(tx.table(ref.className), p), v, at: i)
            }
            return "\(p)[\(i)] set"
        case .listRemove(let ref, let p, let i):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                try tx.listRemove(ref.key, tx.property(tx.table(ref.className), p), at: i)
            }
            return "Removed element \(i) from \(p)"
        case .listMove(let ref, let p, let from, let to):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                try tx.listMove(ref.key, tx.property(tx.table(ref.className), p), from: from, to: to)
            }
            return "Moved to \(to)"
        case .createAndAppend(let ref, let p, let target):
            if data.isEmbedded(target) {
                try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                    let h = try tx.property(tx.table(ref.className), p)
                    try tx.listInsertEmbedded(ref.key, h, at: tx.list(ref.key, h).count)
                }
                return "Created a \(target) at the end of \(p): Enter opens it"
            }
            let pk = try data.suggestedPrimaryKey(target)
            let isSet = data.classSchema(ref.className)?.property(named: p)?.isSet == true
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                let k = try tx.createObject(target, pk.map { [$0.0: $0.1] } ?? [:])
                let h = try tx.property(tx.table(ref.className), p)
                if isSet { try tx.setInsert(ref.key, h, .link(k)) } else { try tx.listAppend(ref.key, h, .link(k)) }
            }
            return "Created a \(target) and added it to \(p)"
        default:
            guard let done = try applyCollection(intent, data: data) else { return "" }
            return done
        }
    }

    /// Moves the cursor of the current table to an object (after creating it).
    mutating func selectObject(_ key: ObjectKey, data: BrowserData) {
        guard case .table(var t)? = stack.last else { return }
        if let q = TableQuery(query: t.query, sort: t.sort), let f = try? data.evaluate(q, on: t.source) {
            t.source = t.source.with(filter: f)
        }
        if let pos = try? data.position(of: key, in: t.source) {
            t.row = pos
            t.selectedKey = key
        }
        stack[stack.count - 1] = .table(t)
    }
}
