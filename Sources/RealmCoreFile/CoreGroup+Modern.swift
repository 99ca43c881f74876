/// Tables of formats ≥ 10: a table top of up to 14 slots, a spec with column keys, objects in a cluster tree.
extension CoreGroup {
    func loadModernTable(slot: Int, name: String, top ref: Int) throws -> CoreTable {
        let top = try reader.structure(ref, minimumCount: 2, "table top")
        guard top.count >= 4 else {
            throw RealmCoreFileError.unsupportedFormat(format, reason: "table '\(name)' has the column layout of formats ≤ 9 (a table top of \(top.count) slots)")
        }
        guard let specRef = try top.ref(0) else {
            throw RealmCoreFileError.corrupt(what: "table without a spec", offset: ref, context: "")
        }
        let spec = try reader.structure(specRef, minimumCount: 3, "spec")
        guard spec.count >= 6, let keysRef = try spec.ref(5) else {
            throw RealmCoreFileError.corrupt(what: "spec without column keys (\(spec.count) slots)", offset: specRef, context: "")
        }
        guard let typesRef = try spec.ref(0), let namesRef = try spec.ref(1), let attrsRef = try spec.ref(2) else {
            throw RealmCoreFileError.corrupt(what: "spec without types, names or attributes", offset: specRef, context: "")
        }
        let types = try reader.node(typesRef), names = try reader.node(namesRef), attrs = try reader.node(attrsRef)
        let colKeys = try reader.node(keysRef)
        let n = types.count
        let nameCount = try leafCount(.string(enumKeys: nil), names)
        guard attrs.count == n, colKeys.count == n, nameCount <= n else {
            throw RealmCoreFileError.corrupt(what: "spec with \(n) types, \(attrs.count) attributes, \(colKeys.count) keys and \(nameCount) names", offset: specRef, context: "")
        }
        let enumKeys = try spec.ref(4).map { try reader.node($0) }
        let oppositeTables = top.count > 7 ? try top.ref(7).map { try reader.node($0) } : nil
        let oppositeColumns = top.count > 8 ? try top.ref(8).map { try reader.node($0) } : nil
        // One search index ref per leaf index (0 = none): `Table::m_index_refs` (table.cpp).
        let indexRefs = top.count > 4 ? try top.ref(4).map { try reader.node($0) } : nil
        var table = CoreTable(slot: slot, name: name, key: try top.tagged(3))
        for i in 0..<n {
            let raw = try types.int(i)
            let key = try colKeys.int(i)
            var column = CoreColumn(name: "", type: Int(raw & 0xFFFF), attributes: Int(try attrs.int(i)))
            column.dictionaryKeyType = Int((raw >> 16) & 0xFFFF)
            column.key = key
            column.leafIndex = Int(key & 0xFFFF)
            if i < nameCount {
                column.name = String(decoding: try stringBytes(names, i, enumKeys: nil) ?? [], as: UTF8.self)
            }
            if let enumKeys, i < enumKeys.count { column.enumKeys = try enumKeys.ref(i) }
            if let indexRefs, column.leafIndex < indexRefs.count { column.indexRoot = try indexRefs.ref(column.leafIndex) }
            if [12, 13, 14].contains(column.type) {
                guard let oppositeTables, let oppositeColumns else {
                    throw RealmCoreFileError.corrupt(what: "link column '\(column.name)' without opposite table and column", offset: ref, context: "")
                }
                column.oppositeTable = try oppositeTables.int(column.leafIndex)
                column.oppositeKey = try oppositeColumns.int(column.leafIndex)
            }
            table.columns.append(column)
        }
        table.clusterRoot = try top.ref(2)
        if let root = table.clusterRoot {
            table.objectCount = try clusterCount(try reader.node(root))
            table.clusterShift = try clusterShift(root: root)
        }
        if top.count > 11 {
            // A raw 0 means no primary key; a tagged number is its column key (0 included).
            if let pkKey = try top.refOrTagged(11).number {
                table.primaryKeyColumn = table.columns.firstIndex { $0.key == pkKey }
            }
        }
        if top.count > 12, let flags = try top.refOrTagged(12).number { table.tableType = Int(flags & 3) }
        return table
    }

    func resolveModernLinks() throws {
        for t in tables.indices {
            for c in tables[t].columns.indices {
                guard let opposite = tables[t].columns[c].oppositeTable else { continue }
                guard let target = tableByKey[opposite] else {
                    throw RealmCoreFileError.corrupt(what: "column '\(tables[t].columns[c].name)' links to unknown table key \(opposite)", offset: 0,
                                                     context: "table '\(tables[t].name)'")
                }
                tables[t].columns[c].linkedTable = target
                if tables[t].columns[c].isBacklink, let key = tables[t].columns[c].oppositeKey {
                    tables[t].columns[c].originColumn = tables[target].columns.firstIndex { $0.key == key }
                }
            }
        }
    }

    /// The leaf kind of a single value of `column` (or of an element of its collection).
    func modernKind(_ column: CoreColumn) throws -> LeafKind {
        switch column.type {
        case 0: return .int(nullable: column.isNullable)
        case 1: return .bool
        case 2: return .string(enumKeys: column.enumKeys)
        case 4: return .binary
        case 6: return .mixed
        case 8: return .timestamp
        case 9: return .float
        case 10: return .double
        case 11: return .decimal
        case 12, 13: return column.collection == .none ? .link : .keys
        case 14: return .backlink
        case 15: return .objectId
        case 16: return .typedLink
        case 17: return .uuid
        default:
            throw RealmCoreFileError.unsupportedValue(what: "column type \(column.type) in a format-\(format) file", context: "column '\(column.name)'")
        }
    }

    /// The value of `column` for the object at `index` of the cluster leaf `leaf`.
    func modernValue(_ table: CoreTable, _ column: CoreColumn, _ leaf: CoreNode, _ index: Int) throws -> CoreValue {
        let slot = 1 + column.leafIndex
        guard slot < leaf.count, let ref = try leaf.ref(slot) else { return .null }
        let columnLeaf = try reader.node(ref)
        let target = column.linkedTable.map { tables[$0].displayName }
        let kind = try modernKind(column)
        switch column.collection {
        case .none:
            return try leafValue(kind, columnLeaf, index, nullable: column.isNullable || column.type == 12, target: target)
        case .list, .set:
            let raw = try columnLeaf.int(index)
            guard raw >= 0, raw & 7 == 0 else {
                throw RealmCoreFileError.corrupt(what: "collection slot \(index) holds \(raw), not a ref", offset: ref, context: "")
            }
            let root = raw == 0 ? nil : Int(raw)
            var values = try elements(root, kind, nullable: column.isNullable, target: target)
            if case .keys = kind, let target {
                // Lists of links hold raw keys; unresolved ones (≤ −2, tombstones) are hidden as the SDKs do.
                values = values.compactMap { if case let .int(k) = $0, k >= 0 { .link(CoreLink(className: target, key: k)) } else { nil } }
            }
            return column.collection == .set ? .set(values) : .list(values)
        case .dictionary:
            let raw = try columnLeaf.int(index)
            guard raw >= 0, raw & 7 == 0 else {
                throw RealmCoreFileError.corrupt(what: "dictionary slot \(index) holds \(raw), not a ref", offset: ref, context: "")
            }
            return .dictionary(try dictionary(raw == 0 ? nil : Int(raw), keyIsString: column.dictionaryKeyType == 2,
                                              legacyCluster: format < 23))
        }
    }

    /// Origin keys of the backlinks stored in `column` for the object at `index` of `leaf`.
    func backlinkKeys(_ leafNode: CoreNode, _ index: Int) throws -> [Int64] {
        let v = try leafNode.int(index)
        if v == 0 { return [] }
        if v & 1 == 1 { return [v >> 1] }
        guard v > 0, v & 7 == 0 else {
            throw RealmCoreFileError.corrupt(what: "backlink slot \(index) holds \(v)", offset: leafNode.ref, context: "")
        }
        return try integers(Int(v))
    }
}
