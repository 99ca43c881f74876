import RealmStorage

/// Sets, dictionaries, embedded objects and mixed values: drilling into them with Enter and editing them. Every
/// change is a `WriteIntent` applied by `perform(_:data:)`, in the open transaction or committed at once.
extension AppState {
    // MARK: Drilling in

    /// The selected element of a table of values (a list or set of values, a dictionary, a collection nested in
    /// a mixed value): its owner, property, path in the property and value. Nil when the table is empty or shows
    /// objects.
    func selectedEntry(_ t: TableScreen, data: BrowserData) throws -> (owner: ObjectRef, property: String, path: [PathStep], value: Value)? {
        switch t.source {
        case .list(let owner, let p):
            guard data.rowClass(t.source) == nil, let v = try data.element(row: t.row, in: t.source) else { return nil }
            return (owner, p, [.index(t.row)], v)
        case .entries(let owner, let p, let path):
            guard let v = try data.element(row: t.row, in: t.source) else { return nil }
            if data.isDictionaryTable(t.source) {
                guard let k = try data.entryKey(row: t.row, in: t.source) else { return nil }
                return (owner, p, path + [.key(k)], v)
            }
            return (owner, p, path + [.index(t.row)], v)
        default:
            return nil
        }
    }

    /// Enter on a row of a table of values: a link opens its object, a nested list or dictionary its table; a
    /// plain value says that `e` edits it.
    mutating func openElement(_ t: TableScreen, data: BrowserData) throws {
        guard let e = try selectedEntry(t, data: data) else {
            message = StatusMessage("The table is empty")
            return
        }
        let p = data.classSchema(e.owner.className)?.property(named: e.property)
        // Links of the property's own type are at its first level only; deeper ones are typed links.
        let target = e.path.count == 1 && p?.type == .link ? p?.objectClassName : nil
        if let object = data.linkedObject(e.value, targetClass: target) {
            push(.object(ObjectScreen(object: object)))
            return
        }
        if e.value.isCollection {
            push(.table(TableScreen(source: .entries(owner: e.owner, property: e.property, path: e.path))))
            return
        }
        if target != nil {
            message = StatusMessage("\(e.property)\(e.path.last?.text ?? "") is null: e chooses its object")
            return
        }
        message = StatusMessage("A value: there is no object to open" + (data.isReadOnly ? "" : " (e edits it)"))
    }

    /// Enter on a mixed property: a typed link opens its object, a list or dictionary its table. False for a
    /// plain value.
    mutating func openMixed(_ ref: ObjectRef, _ p: PropertySchema, data: BrowserData) throws -> Bool {
        let v = try data.value(ref, p.name)
        if let object = data.linkedObject(v, targetClass: nil) {
            push(.object(ObjectScreen(object: object)))
            return true
        }
        if v.isCollection {
            push(.table(TableScreen(source: .entries(owner: ref, property: p.name, path: []))))
            return true
        }
        return false
    }

    // MARK: Editing

    /// The text an editor starts with for a value of `type` (mixed values name their type: `int 5`).
    static func editorText(_ v: Value, _ type: PropertyType) -> String {
        type == .mixed ? ValueParser.mixedEditText(v) : ValueParser.editText(v)
    }

    /// `e` on a set element: its editor (a set of objects is edited by adding and removing).
    mutating func editSetElement(_ owner: ObjectRef, _ p: PropertySchema, row: Int, data: BrowserData) throws {
        guard let v = try data.element(row: row, in: .list(owner: owner, property: p.name)) else { return }
        var element = p
        element.isSet = false
        startEditor(EditTarget(object: owner, property: element, place: .setElement(v)), text: AppState.editorText(v, p.type))
    }

    /// `e` on the value of a dictionary entry or a nested element: its editor, the picker for a link, a new
    /// embedded object (after a question) for an embedded one.
    mutating func editEntry(_ t: TableScreen, data: BrowserData) throws {
        guard let e = try selectedEntry(t, data: data), let element = data.elementProperty(t.source) else { return }
        if element.type == .link, let target = element.objectClassName, case .key(let k)? = e.path.last {
            if data.isEmbedded(target) {
                confirmation = Confirmation("Replace \(e.property)[\"\(k)\"] with a new empty \(target)? The one there is deleted",
                                            action: .write(.createEmbeddedEntry(e.owner, property: e.property, key: k)))
            } else {
                openPicker(target, purpose: .setEntryLink(e.owner, property: e.property, path: e.path), data: data)
            }
            return
        }
        startEditor(EditTarget(object: e.owner, property: element, place: .entry(e.path)), text: AppState.editorText(e.value, element.type))
    }

    /// `e` on a key of a dictionary: a new name for it.
    mutating func renameSelectedKey(_ t: TableScreen, data: BrowserData) throws {
        guard case .entries(let owner, _, let path) = t.source, let element = data.elementProperty(t.source),
              let k = try data.entryKey(row: t.row, in: t.source) else {
            message = StatusMessage("No key selected")
            return
        }
        if element.type == .link, data.isEmbedded(element.objectClassName) {
            // The engine links an embedded object only where it was created: a key holding one keeps its name.
            message = StatusMessage("'\(k)' holds an embedded object, which stays under the key it was created at: add a new key instead")
            return
        }
        startEditor(EditTarget(object: owner, property: element, place: .renameKey(path, k)), text: k)
    }

    /// `e` on a to-one link to an embedded class: a new embedded object where there is none (opened at once), or
    /// in place of the one there after a question.
    mutating func editEmbedded(_ ref: ObjectRef, _ p: PropertySchema, target: String, data: BrowserData) throws {
        if case .null = try data.value(ref, p.name) {
            perform(.createEmbedded(ref, property: p.name), data: data)
        } else {
            confirmation = Confirmation("Replace \(p.name) with a new empty \(target)? The one there is deleted",
                                        action: .write(.createEmbedded(ref, property: p.name)))
        }
    }

    /// Enter on a key or value typed for a dictionary key (new or renamed): checked first, then the value is
    /// asked for (or its object chosen), or the key renamed.
    mutating func submitKey(_ p: Prompt, _ target: EditTarget, data: BrowserData) {
        let key = p.editor.text
        func refuse(_ m: String) {
            var q = p
            q.error = PromptError(message: m)
            prompt = q
        }
        if let problem = BrowserData.keyProblem(key) {
            refuse("'\(key)' is not a valid key: \(problem)")
            return
        }
        let owner = target.object, property = target.property.name
        let dictPath: [PathStep]
        switch target.place {
        case .newKey(let path), .renameKey(let path, _): dictPath = path
        default: return
        }
        let existing: Value
        do {
            existing = try data.nestedCollection(owner, property, path: dictPath)
        } catch {
            refuse("\(error)")
            return
        }
        guard case .dictionary(let d) = existing else { return }
        if case .renameKey(_, let old) = target.place {
            if old == key { prompt = nil; message = StatusMessage("The key is unchanged: nothing was written"); return }
            if d[key] != nil { refuse("'\(key)' is already a key of \(property): remove it first, or choose another name"); return }
            prompt = nil
            perform(.renameKey(owner, property: property, path: dictPath, from: old, to: key), data: data)
            return
        }
        if d[key] != nil {
            refuse("'\(key)' is already a key of \(property): Esc, then e on its value edits it")
            return
        }
        prompt = nil
        let path = dictPath + [.key(key)]
        if target.property.type == .link, let cls = target.property.objectClassName {
            if data.isEmbedded(cls) {
                perform(.createEmbeddedEntry(owner, property: property, key: key), data: data)
            } else {
                openPicker(cls, purpose: .setEntryLink(owner, property: property, path: path), data: data)
            }
            return
        }
        startEditor(EditTarget(object: owner, property: target.property, place: .entry(path)), text: "")
        message = StatusMessage("The value of '\(key)': \(ValueParser.hint(target.type))")
    }

    /// `link Dog #3` (an object key) or `link Person 12` (a primary key) typed for a mixed value: the typed link.
    func parseTypedLink(_ text: String, data: BrowserData) -> Result<Value, EditError> {
        let words = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        guard words.count == 3 else { return .failure(EditError("a link is typed as link Class #objectKey or link Class primaryKey")) }
        let className = words[1], which = words[2]
        guard let cs = data.classSchema(className), let classID = data.snapshot.classID(named: className) else {
            return .failure(EditError("there is no class \(className)"))
        }
        if cs.isEmbedded { return .failure(EditError("a mixed value cannot link to an embedded object (\(className) is embedded)")) }
        do {
            let t = try data.table(className)
            if which.hasPrefix("#"), let raw = UInt64(which.dropFirst()) {
                let k = ObjectKey(raw)
                guard try data.snapshot.exists(t, k) else { return .failure(EditError("\(className) has no object \(which)")) }
                return .success(.typedLink(classID: classID, key: k))
            }
            guard let pk = cs.properties.first(where: \.isPrimaryKey) else {
                return .failure(EditError("\(className) has no primary key: name the object by its key, link \(className) #12"))
            }
            let v: Value
            switch ValueParser.parse(which, as: pk.type) {
            case .success(let x): v = x
            case .failure(let e): return .failure(e)
            }
            guard let k = try data.snapshot.object(t, primaryKey: v) else {
                return .failure(EditError("\(className) has no object with \(pk.name) \(which)"))
            }
            return .success(.typedLink(classID: classID, key: k))
        } catch {
            return .failure(EditError("\(error)"))
        }
    }

    // MARK: Adding and removing

    /// `a` / `A` in a set or in a table of entries; false when the table is neither.
    mutating func addInCollection(_ t: TableScreen, createNew: Bool, data: BrowserData) throws -> Bool {
        switch t.source.base {
        case .list(let owner, let pName):
            guard let p = data.classSchema(owner.className)?.property(named: pName) else { return false }
            if p.type == .link, let target = p.objectClassName, data.isEmbedded(target) {
                // Embedded objects are made in place, never chosen.
                perform(.createAndAppend(owner, property: pName, targetClass: target), data: data)
                return true
            }
            guard p.isSet else { return false }
            if p.type == .link, let target = p.objectClassName {
                if createNew {
                    perform(.createAndAppend(owner, property: pName, targetClass: target), data: data)
                } else {
                    openPicker(target, purpose: .insertIntoSet(owner, property: pName), data: data)
                }
            } else {
                var element = p
                element.isSet = false
                startEditor(EditTarget(object: owner, property: element, place: .setInsert), text: "")
            }
            return true
        case .entries(let owner, _, let path):
            guard let element = data.elementProperty(t.source.base) else { return true }
            if data.isDictionaryTable(t.source.base) {
                startEditor(EditTarget(object: owner, property: element, place: .newKey(path)), text: "")
                message = StatusMessage("The new key first, then its value")
            } else {
                startEditor(EditTarget(object: owner, property: element, place: .entryAppend(path)), text: "")
            }
            return true
        default:
            return false
        }
    }

    /// `d` in a set or a table of entries (after a question); false when the table is neither.
    mutating func deleteInCollection(_ t: TableScreen, data: BrowserData) throws -> Bool {
        switch t.source.base {
        case .list(let owner, let pName):
            guard let p = data.classSchema(owner.className)?.property(named: pName), p.isSet else { return false }
            let v: Value
            if let k = try data.key(row: t.row, in: t.source) {
                v = .link(k)
            } else if let e = try data.element(row: t.row, in: t.source) {
                v = e
            } else {
                return true
            }
            let shown = data.linkedObject(v, targetClass: p.objectClassName).map { "\($0.className) \(data.label($0))" }
                ?? data.mixedAwareCell(v, format).text
            confirmation = Confirmation("Remove \(shown) from \(pName)?\(p.type == .link ? " (the object itself stays)" : "")",
                                        action: .write(.setRemove(owner, property: pName, v)))
            return true
        case .entries:
            guard let e = try selectedEntry(t, data: data) else { return true }
            let what: String
            switch e.path.last {
            case .key(let k)?: what = "the key '\(k)'"
            case .index(let i)?: what = "element \(i)"
            case nil: return true
            }
            confirmation = Confirmation("Remove \(what) from \(e.property)\(e.path.dropLast().map(\.text).joined())?",
                                        action: .write(.entryRemove(e.owner, property: e.property, path: e.path)))
            return true
        default:
            return false
        }
    }

    /// Ctrl-N outside the picker and the editor: the selected link (or nullable value) becomes null; an
    /// embedded object is deleted, after a question.
    mutating func setSelectedNull(data: BrowserData) throws {
        guard !data.isReadOnly else { throw data.readOnlyRefusal }
        let notHere = StatusMessage("Ctrl-N sets a link or an optional value to null")
        var selected: (ObjectRef, PropertySchema)?
        switch stack.last {
        case .object(let o)?:
            let fields = data.fields(o.object)
            if fields.indices.contains(o.field), case .property(let p) = fields[o.field].kind { selected = (o.object, p) }
        case .table(let t)?:
            let columns = data.columns(t.source)
            guard columns.indices.contains(t.column) else { return }
            switch columns[t.column].kind {
            case .property(let p):
                if let cls = data.rowClass(t.source), let k = try data.key(row: t.row, in: t.source) { selected = (ObjectRef(className: cls, key: k), p) }
            case .element, .index, .key:
                guard case .entries = t.source, let e = try selectedEntry(t, data: data), let element = data.elementProperty(t.source) else { break }
                guard element.isOptional || element.type == .mixed else {
                    message = StatusMessage("The values of \(e.property) are required: they cannot be null")
                    return
                }
                perform(.entrySet(e.owner, property: e.property, path: e.path, .null), data: data)
                return
            default: break
            }
        case nil: break
        }
        guard let (ref, p) = selected, !p.isCollection, p.type != .linkingObjects else { message = notHere; return }
        guard p.isOptional || p.type == .mixed else {
            message = StatusMessage("\(p.name) is required: it cannot be null")
            return
        }
        if case .null = try data.value(ref, p.name) {
            message = StatusMessage("\(p.name) is already null")
            return
        }
        if p.type == .link, let target = p.objectClassName, data.isEmbedded(target) {
            confirmation = Confirmation("Delete the embedded \(target) in \(p.name)? (\(p.name) becomes null)",
                                        action: .write(.set(ref, property: p.name, .null)))
            return
        }
        perform(.set(ref, property: p.name, .null), data: data)
    }

    // MARK: Applying

    /// Does one change to a set, dictionary, nested value or embedded object; returns what to say about it, or
    /// nil when `intent` is none of these.
    mutating func applyCollection(_ intent: WriteIntent, data: BrowserData) throws -> String? {
        func handle(_ tx: WriteTransaction, _ ref: ObjectRef, _ p: String) throws -> PropertyHandle {
            try tx.property(tx.table(ref.className), p)
        }
        func shown(_ v: Value) -> String {
            if case .link = v { return "the object" }
            let t = data.mixedAwareCell(v, format).text
            return t.count > 30 ? String(t.prefix(30)) + "…" : t
        }
        switch intent {
        case .setInsert(let ref, let p, let v):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                // Nothing is changed before this refusal, so the open transaction stays as it was.
                guard try tx.setInsert(ref.key, handle(tx, ref, p), v) else {
                    throw NothingToWrite("\(shown(v)) is already in \(p): nothing was written")
                }
            }
            return "Added \(shown(v)) to \(p)"
        case .setRemove(let ref, let p, let v):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                guard try tx.setRemove(ref.key, handle(tx, ref, p), v) else {
                    throw NothingToWrite("\(shown(v)) is no longer in \(p): nothing was written")
                }
            }
            return "Removed \(shown(v)) from \(p)"
        case .setReplace(let ref, let p, let old, let new):
            if old == new { throw NothingToWrite("The element is unchanged: nothing was written") }
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                let h = try handle(tx, ref, p)
                // The new element goes in first: a refusal (a wrong type) then leaves the set as it was.
                guard try tx.setInsert(ref.key, h, new) else {
                    throw NothingToWrite("\(shown(new)) is already in \(p): nothing was written")
                }
                try tx.setRemove(ref.key, h, old)
            }
            return "Replaced \(shown(old)) with \(shown(new)) in \(p)"
        case .entrySet(let ref, let p, let path, let v):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                try BrowserData.change(tx, ref, p, path: path) { _ in v }
            }
            return "\(p)\(path.map(\.text).joined()) set"
        case .entryRemove(let ref, let p, let path):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                try BrowserData.change(tx, ref, p, path: path) { old in
                    guard old != nil else { throw NothingToWrite("\(p)\(path.map(\.text).joined()) is no longer there: nothing was written") }
                    return nil
                }
            }
            return "Removed \(p)\(path.map(\.text).joined())"
        case .renameKey(let ref, let p, let path, let from, let to):
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                try BrowserData.change(tx, ref, p, path: path) { dict in
                    guard case .dictionary(var d)? = dict, let v = d[from] else {
                        throw NothingToWrite("'\(from)' is no longer a key of \(p): nothing was written")
                    }
                    guard d[to] == nil else { throw CollectionGone("'\(to)' is already a key of \(p)") }
                    d[from] = nil
                    d[to] = v
                    return .dictionary(d)
                }
            }
            return "Renamed '\(from)' to '\(to)' in \(p)"
        case .createEmbedded(let ref, let p):
            var child: ObjectKey?
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                child = try tx.createEmbeddedObject(in: ref.key, handle(tx, ref, p))
            }
            let target = data.classSchema(ref.className)?.property(named: p)?.objectClassName
            if let child, let target {
                data.markNew(ObjectRef(className: target, key: child))
                push(.object(ObjectScreen(object: ObjectRef(className: target, key: child))))
            }
            return "A new \(target ?? "object") in \(p): e edits its fields, Esc goes back"
        case .createEmbeddedEntry(let ref, let p, let key):
            var child: ObjectKey?
            try data.write(cells: [CellID(ref.className, ref.key, p)]) { tx in
                child = try tx.dictionarySetEmbedded(ref.key, handle(tx, ref, p), key: key)
            }
            let target = data.classSchema(ref.className)?.property(named: p)?.objectClassName
            if let child, let target {
                data.markNew(ObjectRef(className: target, key: child))
                push(.object(ObjectScreen(object: ObjectRef(className: target, key: child))))
            }
            return "A new \(target ?? "object") in \(p)[\"\(key)\"]: e edits its fields, Esc goes back"
        default:
            return nil
        }
    }
}
