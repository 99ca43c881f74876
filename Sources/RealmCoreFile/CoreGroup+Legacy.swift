/// Tables of formats 2–9: `[spec, columns]`, one B+tree per column, rows identified by their index.
extension CoreGroup {
    func loadLegacyTable(slot: Int, name: String, top ref: Int) throws -> CoreTable {
        let top = try reader.structure(ref, minimumCount: 2, "table top")
        if top.count > 2 {
            throw RealmCoreFileError.interruptedUpgrade(
                format: format, table: name,
                detail: "its table top has \(top.count) slots, the layout of format 10, in a format-\(format) file; the cluster layout of format 10 is missing")
        }
        guard let specRef = try top.ref(0) else {
            throw RealmCoreFileError.corrupt(what: "table without a spec", offset: ref, context: "")
        }
        var table = CoreTable(slot: slot, name: name, key: Int64(slot))
        table.columns = try legacySpec(specRef, table: name)
        if let bad = table.columns.first(where: { $0.name == "!ROW_INDEX" }) {
            throw RealmCoreFileError.interruptedUpgrade(format: format, table: name,
                                                        detail: "column '\(bad.name)' is left over from converting it to format 10")
        }
        if !table.columns.isEmpty {
            guard let columnsRef = try top.ref(1) else {
                throw RealmCoreFileError.corrupt(what: "table with columns but no column array", offset: ref, context: "")
            }
            let columns = try reader.structure(columnsRef, "column array")
            var s = 0
            for c in table.columns.indices {
                guard s < columns.count else {
                    throw RealmCoreFileError.corrupt(what: "column array of \(columns.count) refs for \(table.columns.count) columns", offset: columnsRef, context: "")
                }
                table.columns[c].root = try columns.ref(s)
                if table.columns[c].isIndexed, s + 1 < columns.count { table.columns[c].indexRoot = try columns.ref(s + 1) }
                s += table.columns[c].isIndexed ? 2 : 1  // an indexed column's search index follows its ref
            }
            table.objectCount = try within("column '\(table.columns[0].name)'") { try legacyColumnSize(table.columns[0]) }
        }
        return table
    }

    /// Columns of a format ≤ 9 spec: `[types, names, attributes, sub-specs?, enum keys?]`.
    func legacySpec(_ specRef: Int, table: String, depth: Int = 0) throws -> [CoreColumn] {
        let spec = try reader.structure(specRef, minimumCount: 3, "spec")
        if spec.count >= 6 {
            throw RealmCoreFileError.interruptedUpgrade(format: format, table: table,
                                                        detail: "its spec has column keys, the layout of format 10, in a format-\(format) file")
        }
        guard let typesRef = try spec.ref(0), let namesRef = try spec.ref(1), let attrsRef = try spec.ref(2) else {
            if try spec.ref(0) == nil { return [] }
            throw RealmCoreFileError.corrupt(what: "spec without types, names or attributes", offset: specRef, context: "")
        }
        let types = try reader.node(typesRef), names = try reader.node(namesRef), attrs = try reader.node(attrsRef)
        let n = types.count
        let nameCount = try leafCount(.string(enumKeys: nil), names)
        guard attrs.count == n, nameCount <= n else {
            throw RealmCoreFileError.corrupt(what: "spec with \(n) types, \(attrs.count) attributes and \(nameCount) names", offset: specRef, context: "")
        }
        let subspecs = spec.count > 3 ? try spec.ref(3).map { try reader.node($0) } : nil
        let enumKeys = spec.count > 4 ? try spec.ref(4).map { try reader.node($0) } : nil
        var sub = 0, enumIndex = 0
        var columns: [CoreColumn] = []
        func subspec(_ what: String) throws -> CoreNode {
            guard let subspecs, sub < subspecs.count else {
                throw RealmCoreFileError.corrupt(what: "spec without the sub-spec entry of a \(what) column", offset: specRef, context: "")
            }
            return subspecs
        }
        for i in 0..<n {
            var column = CoreColumn(name: "", type: Int(try types.int(i)), attributes: Int(try attrs.int(i)))
            if i < nameCount { column.name = String(decoding: try stringBytes(names, i, enumKeys: nil) ?? [], as: UTF8.self) }
            switch column.type {
            case 5:
                let entry = try subspec("sub-table")
                if let subRef = try entry.ref(sub), depth < 4 {
                    let inner = try legacySpec(subRef, table: table, depth: depth + 1)
                    column.subColumns = inner
                    if inner.count == 1 {  // `!ARRAY_VALUE` from the SDKs; any name from core (its 9→10 upgrade takes every one-column sub-table as a list)
                        column.subListType = inner[0].type
                        column.subListNullable = inner[0].isNullable
                        column.subListAttributes = inner[0].attributes
                        column.enumKeys = inner[0].enumKeys
                    }
                }
                sub += 1
            case 12, 13:
                column.linkedTable = Int(try subspec("link").tagged(sub))
                sub += 1
            case 14:
                let entry = try subspec("backlink")
                column.linkedTable = Int(try entry.tagged(sub))
                guard sub + 1 < entry.count else {
                    throw RealmCoreFileError.corrupt(what: "backlink sub-spec entry without its origin column", offset: specRef, context: "")
                }
                column.originColumn = Int(try entry.tagged(sub + 1))
                sub += 2
            case 3:
                guard let enumKeys, enumIndex < enumKeys.count else {
                    throw RealmCoreFileError.corrupt(what: "enumerated string column without its keys", offset: specRef, context: "")
                }
                column.enumKeys = try enumKeys.ref(enumIndex)
                enumIndex += 1
            default:
                break
            }
            columns.append(column)
        }
        return columns
    }

    /// Row-index targets in formats ≤ 9 are table slots; map them to positions in `tables`.
    func resolveLegacyLinks() throws {
        for t in tables.indices {
            tables[t].columns = try resolveLegacyLinks(tables[t].columns, table: tables[t].name)
        }
    }

    private func resolveLegacyLinks(_ columns: [CoreColumn], table: String) throws -> [CoreColumn] {
        var columns = columns
        for c in columns.indices {
            columns[c].subColumns = try resolveLegacyLinks(columns[c].subColumns, table: table)
            guard let slot = columns[c].linkedTable else { continue }
            guard let target = tableByKey[Int64(slot)] else {
                throw RealmCoreFileError.corrupt(what: "column '\(columns[c].name)' links to table slot \(slot), which holds no table",
                                                 offset: 0, context: "table '\(table)'")
            }
            columns[c].linkedTable = target
            if let origin = columns[c].originColumn, origin < 0 || origin >= tables[target].columns.count {
                throw RealmCoreFileError.corrupt(what: "backlink from column \(origin) of a table with \(tables[target].columns.count)",
                                                 offset: 0, context: "table '\(table)'")
            }
        }
        return columns
    }

    /// The leaf kind of the cells of a format ≤ 9 column of `type`.
    func legacyKind(type: Int, nullable: Bool, enumKeys: Int?) throws -> LeafKind {
        switch type {
        case 0: return .int(nullable: nullable)
        case 1: return .legacyBool(nullable: nullable)
        case 2: return .string(enumKeys: nil)
        case 3: return .string(enumKeys: enumKeys)
        case 4: return .binary
        case 5, 13: return .refs
        case 7: return .oldDateTime(nullable: nullable)
        case 9: return .float
        case 10: return .double
        case 12: return .link
        case 14: return .backlink
        default:
            throw RealmCoreFileError.unsupportedValue(what: "the column type \(type) of format \(format) (\(type == 6 ? "old Mixed" : "unknown"))", context: "")
        }
    }

    func legacyColumnSize(_ column: CoreColumn) throws -> Int {
        guard let root = column.root else {
            throw RealmCoreFileError.corrupt(what: "column without a root", offset: 0, context: "")
        }
        if column.type == 8 {
            let pair = try reader.structure(root, minimumCount: 2, "timestamp column")
            guard let seconds = try pair.ref(0) else { throw badLeaf(pair, "timestamp column") }
            return try reader.treeSize(try reader.node(seconds)) { try leafCount(.int(nullable: true), $0) }
        }
        if column.type == 6 {
            let top = try reader.structure(root, minimumCount: 2, "mixed column")
            guard let types = try top.ref(0) else { throw badLeaf(top, "mixed column") }
            return try reader.treeSize(try reader.node(types)) { try leafCount(.int(nullable: false), $0) }
        }
        let kind = try legacyKind(type: column.type == 3 ? 0 : column.type, nullable: column.isNullable, enumKeys: nil)
        return try reader.treeSize(try reader.node(root)) { try leafCount(kind, $0) }
    }

    /// The value of `column` in row `row`.
    func legacyValue(_ column: CoreColumn, _ row: Int, depth: Int = 0) throws -> CoreValue {
        guard let root = column.root else {
            throw RealmCoreFileError.corrupt(what: "column without a root", offset: 0, context: "")
        }
        let target = column.linkedTable.map { tables[$0].displayName }
        switch column.type {
        case 8:
            let pair = try reader.structure(root, minimumCount: 2, "timestamp column")
            guard let sRef = try pair.ref(0), let nRef = try pair.ref(1) else { throw badLeaf(pair, "timestamp column") }
            let (sLeaf, si) = try reader.locate(try reader.node(sRef), row) { try leafCount(.int(nullable: true), $0) }
            let seconds = try sLeaf.int(si + 1)
            if seconds == (try sLeaf.int(0)) {
                return column.isNullable ? .null : .timestamp(seconds: 0, nanoseconds: 0)
            }
            let (nLeaf, ni) = try reader.locate(try reader.node(nRef), row) { try leafCount(.int(nullable: false), $0) }
            return .timestamp(seconds: seconds, nanoseconds: Int32(truncatingIfNeeded: try nLeaf.int(ni)))
        case 5:
            let (leaf, i) = try reader.locate(try reader.node(root), row) { try leafCount(.refs, $0) }
            let ref = try leaf.int(i)
            guard ref != 0 else { return .list([]) }
            guard ref > 0, ref & 7 == 0 else { throw badLeaf(leaf, "sub-table") }
            guard let elementType = column.subListType else { return try subTable(column, Int(ref), depth: depth) }
            let columns = try reader.structure(Int(ref), minimumCount: 1, "sub-table columns")
            let kind = try legacyKind(type: elementType, nullable: column.subListNullable, enumKeys: column.enumKeys)
            if elementType == 8 {
                throw RealmCoreFileError.unsupportedValue(what: "a list of timestamps in a format-\(format) sub-table", context: "")
            }
            return .list(try elements(try columns.ref(0), kind, nullable: column.subListNullable, target: nil))
        case 6:
            return try oldMixed(root, row)
        case 13:
            let (leaf, i) = try reader.locate(try reader.node(root), row) { try leafCount(.refs, $0) }
            let ref = try leaf.int(i)
            guard ref != 0 else { return .list([]) }
            guard ref > 0, ref & 7 == 0, let target else { throw badLeaf(leaf, "link list") }
            return .list(try integers(Int(ref)).map { .link(CoreLink(className: target, key: $0)) })
        default:
            let kind = try legacyKind(type: column.type, nullable: column.isNullable, enumKeys: column.enumKeys)
            let sizeKind = column.type == 3 ? LeafKind.int(nullable: false) : kind
            let (leaf, i) = try reader.locate(try reader.node(root), row) { try leafCount(sizeKind, $0) }
            return try leafValue(kind, leaf, i, nullable: column.isNullable || column.type == 12, target: target)
        }
    }

    /// A sub-table of several columns (formats ≤ 9; not made by the SDKs): a list of rows, each a dictionary from
    /// column name to value.
    func subTable(_ column: CoreColumn, _ ref: Int, depth: Int) throws -> CoreValue {
        guard depth < 4 else { throw RealmCoreFileError.unsupportedValue(what: "sub-tables nested more than 4 deep", context: "") }
        let array = try reader.structure(ref, "sub-table columns")
        var columns = column.subColumns
        var s = 0
        for c in columns.indices {
            guard s < array.count else {
                throw RealmCoreFileError.corrupt(what: "sub-table column array of \(array.count) refs for \(columns.count) columns", offset: ref, context: "")
            }
            columns[c].root = try array.ref(s)
            s += columns[c].isIndexed ? 2 : 1
        }
        guard let first = columns.first else { return .list([]) }
        let rows = try legacyColumnSize(first)
        var result: [CoreValue] = []
        for r in 0..<rows {
            let entries = try columns.map { CoreDictionaryEntry(key: $0.name, value: try legacyValue($0, r, depth: depth + 1)) }
            result.append(.dictionary(entries))
        }
        return .list(result)
    }

    /// A value of the old Mixed column type (formats ≤ 9, never made by the SDKs): `[types, data, blobs?,
    /// timestamps?]`; `data` holds `value << 1 | 1` (the sign bit of negative ints and doubles is in the type)
    /// or an index into `blobs` / `timestamps`.
    func oldMixed(_ root: Int, _ row: Int) throws -> CoreValue {
        let top = try reader.structure(root, minimumCount: 2, "mixed column")
        guard let typesRef = try top.ref(0), let dataRef = try top.ref(1) else { throw badLeaf(top, "mixed column") }
        let (typesLeaf, ti) = try reader.locate(try reader.node(typesRef), row) { try leafCount(.int(nullable: false), $0) }
        let (dataLeaf, di) = try reader.locate(try reader.node(dataRef), row) { try leafCount(.refs, $0) }
        let type = try typesLeaf.int(ti)
        let raw = try dataLeaf.int(di)
        let value = Int64(bitPattern: UInt64(bitPattern: raw) >> 1)
        let sign = Int64(bitPattern: 0x8000_0000_0000_0000)
        func blobs() throws -> (CoreNode, Int) {
            guard top.count >= 3, let ref = try top.ref(2) else { throw badLeaf(top, "mixed column") }
            return try reader.locate(try reader.node(ref), Int(value)) { try leafCount(.binary, $0) }
        }
        switch type {
        case 0: return .int(value)
        case 12: return .int(value | sign)
        case 1: return .bool(value != 0)
        case 7: return .timestamp(seconds: value, nanoseconds: 0)
        case 9: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: value)))
        case 10: return .double(Double(bitPattern: UInt64(bitPattern: value)))
        case 11: return .double(Double(bitPattern: UInt64(bitPattern: value | sign)))
        case 2:
            let (leaf, i) = try blobs()
            return .string(String(decoding: try blobBytes(leaf, i, terminated: true) ?? [], as: UTF8.self))
        case 4:
            let (leaf, i) = try blobs()
            return .binary(try blobBytes(leaf, i, terminated: false) ?? [])
        case 8:
            guard top.count >= 4, let ref = try top.ref(3) else { throw badLeaf(top, "mixed column") }
            var column = CoreColumn(name: "", type: 8, attributes: 16)
            column.root = ref
            return try legacyValue(column, Int(value))
        default:
            throw RealmCoreFileError.unsupportedValue(what: "an old Mixed value of type \(type)", context: "")
        }
    }

    /// Origin rows of the backlinks in `column` for `row`.
    func legacyBacklinks(_ column: CoreColumn, _ row: Int) throws -> [Int64] {
        guard let root = column.root else { return [] }
        let (leaf, i) = try reader.locate(try reader.node(root), row) { try leafCount(.backlink, $0) }
        return try backlinkKeys(leaf, i)
    }
}
