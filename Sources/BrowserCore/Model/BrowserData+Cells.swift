import RealmStorage

extension BrowserData {
    /// A table's columns: the index (lists), the primary key, every property in schema order, then one
    /// column per incoming link that no `LinkingObjects` property declares.
    public func columns(_ source: TableSource) -> [Column] {
        var out: [Column] = []
        if case .entries = source.base, let element = elementProperty(source.base) {
            // A dictionary: the key and the value; a list nested in a mixed value: the index and the value.
            out.append(isDictionaryTable(source.base) ? Column(kind: .key, header: "key")
                                                      : Column(kind: .index, header: "#", rightAligned: true))
            out.append(Column(kind: .element(element), header: "value " + ValueFormat.typeName(element),
                              rightAligned: ValueFormat.isNumeric(element.type)))
            return out
        }
        // A set has no positions: its table is its elements (values, or the objects' columns).
        if source.hasIndexColumn, listProperty(source)?.isSet != true { out.append(Column(kind: .index, header: "#", rightAligned: true)) }
        guard let rowClass = rowClass(source) else {
            // A list of primitives: the index and the value.
            if let p = listProperty(source) {
                var element = p
                element.isList = false
                element.isSet = false
                out.append(Column(kind: .element(element), header: "value " + ValueFormat.typeName(element),
                                  rightAligned: ValueFormat.isNumeric(p.type)))
            }
            return out
        }
        guard let cs = classSchema(rowClass) else { return out }
        let ordered = cs.properties.filter(\.isPrimaryKey) + cs.properties.filter { !$0.isPrimaryKey }
        for p in ordered {
            out.append(Column(kind: .property(p), header: "\(p.isPrimaryKey ? "🔑" : "")\(p.name) \(ValueFormat.typeName(p))",
                              isPrimaryKey: p.isPrimaryKey, rightAligned: !p.isList && ValueFormat.isNumeric(p.type)))
        }
        for (c, p) in undeclaredIncoming(rowClass) {
            out.append(Column(kind: .incoming(originClass: c, property: p), header: "← \(c).\(p)"))
        }
        return out
    }

    /// The text of one cell. Errors (a damaged file) show in the cell instead of stopping the browser.
    public func cell(_ column: Column, row: Int, in source: TableSource, format: ValueFormat) -> CellText {
        do {
            switch column.kind {
            case .index: return CellText(String(row), .index, rightAligned: true)
            case .element(let p):
                guard let v = try element(row: row, in: source) else { return CellText("", .normal) }
                if case .link(let k) = v, let target = p.objectClassName {
                    return CellText("→ \(label(ObjectRef(className: target, key: k)))", .link)
                }
                var c = mixedAwareCell(v, format)
                c.rightAligned = column.rightAligned
                return c
            case .key:
                return CellText(try entryKey(row: row, in: source) ?? "", .string)
            case .property(let p):
                guard let cls = rowClass(source), let key = try key(row: row, in: source) else { return CellText("", .normal) }
                return try propertyCell(ObjectRef(className: cls, key: key), p, format: format)
            case .incoming(let c, let p):
                guard let cls = rowClass(source), let key = try key(row: row, in: source) else { return CellText("", .normal) }
                let n = try snapshot.backlinks(key, in: table(cls), from: c, property: p).count
                return CellText(n == 0 ? "–" : "← \(n)", n == 0 ? .null : .list)
            }
        } catch {
            return CellText("⚠ \(error)", .statusError)
        }
    }

    /// A value as a cell; a typed link in a mixed value names its class and the object's label.
    func mixedAwareCell(_ v: Value, _ format: ValueFormat) -> CellText {
        if case .typedLink(let c, let k) = v, let name = snapshot.className(classID: c) {
            return CellText("→ \(name) \(label(ObjectRef(className: name, key: k)))", .link)
        }
        return format.cell(v)
    }

    /// A property of an object as one table cell: lists as their count (and the first values of primitive
    /// lists), links as the target's label.
    public func propertyCell(_ ref: ObjectRef, _ p: PropertySchema, format: ValueFormat) throws -> CellText {
        guard p.type == .linkingObjects || p.isCollection else { return try plainCell(ref, p, format: format) }
        // A collection is read whole to be counted: once per version, not at every screen (a list of
        // millions of links takes a third of a second).
        let id = "\(ref.className) \(ref.key.rawValue) \(p.name) \(format.bools)"
        if let c = collectionCells[id] { return c }
        let c = try collectionCell(ref, p, format: format)
        collectionCells[id] = c
        return c
    }

    private func collectionCell(_ ref: ObjectRef, _ p: PropertySchema, format: ValueFormat) throws -> CellText {
        collectionCellReads += 1
        if p.type == .linkingObjects {
            let n = try snapshot.list(ref.key, handle(ref.className, p.name)).count
            return CellText("← \(n)", .list)
        }
        if p.isList || p.isSet {
            let values = try snapshot.list(ref.key, handle(ref.className, p.name))
            let count = p.isSet ? "{\(values.count)}" : "[\(values.count)]"
            if p.type == .link || values.isEmpty { return CellText(count, .list) }
            let preview = values.prefix(8).map { mixedAwareCell($0, format).text }.joined(separator: ", ")
            return CellText("\(count) \(preview)", .list)
        }
        if p.isDictionary {
            let d = try snapshot.dictionary(ref.key, handle(ref.className, p.name))
            if d.isEmpty { return CellText("{0 keys}", .list) }
            let preview = d.prefix(6).map { e -> String in
                if case .link(let k) = e.value, let target = p.objectClassName { return "\(e.key): \(label(ObjectRef(className: target, key: k)))" }
                return "\(e.key): \(mixedAwareCell(e.value, format).text)"
            }.joined(separator: ", ")
            return CellText("{\(d.count) key\(d.count == 1 ? "" : "s")} \(preview)", .list)
        }
        return try plainCell(ref, p, format: format)
    }

    private func plainCell(_ ref: ObjectRef, _ p: PropertySchema, format: ValueFormat) throws -> CellText {
        let v = try value(ref, p.name)
        if case .link(let k) = v, let target = p.objectClassName {
            return CellText(label(ObjectRef(className: target, key: k)), .link)
        }
        if p.type == .mixed { var c = mixedAwareCell(v, format); c.rightAligned = false; return c }
        var c = format.cell(v)
        if p.type == .mixed { c.rightAligned = false }
        return c
    }
}
