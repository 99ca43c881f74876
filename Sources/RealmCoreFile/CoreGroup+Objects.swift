/// Objects, values and backlinks by table and position, for both layouts.
extension CoreGroup {
    /// Key of the object at `position` and the values of `columns` (positions in the table's columns).
    func object(table t: Int, position: Int, columns: [Int]) throws -> (key: Int64, values: [CoreValue]) {
        let table = tables[t]
        guard position >= 0, position < table.objectCount else {
            throw RealmCoreFileError.noSuchObject(className: table.displayName,
                                                  detail: "no object at position \(position) (it has \(table.objectCount))")
        }
        return try within("table '\(table.name)', object \(position)") {
            if format >= 10 {
                guard let root = table.clusterRoot else {
                    throw RealmCoreFileError.corrupt(what: "table with objects but no cluster tree", offset: 0, context: "")
                }
                let (leaf, index, key) = try clusterLocate(root: root, position: position, shift: table.clusterShift)
                let values = try columns.map { c in
                    try within("column '\(table.columns[c].name)'") { try modernValue(table, table.columns[c], leaf, index) }
                }
                return (key, values)
            }
            let values = try columns.map { c in
                try within("column '\(table.columns[c].name)'") { try legacyValue(table.columns[c], position) }
            }
            return (Int64(position), values)
        }
    }

    /// Position of the object with `key`, or nil.
    func position(table t: Int, key: Int64) throws -> Int? {
        let table = tables[t]
        if format < 10 { return key >= 0 && key < Int64(table.objectCount) ? Int(key) : nil }
        guard let root = table.clusterRoot, key >= 0 else { return nil }
        return try within("table '\(table.name)'") { try clusterFind(root: root, key: key, shift: table.clusterShift)?.position }
    }

    /// Incoming links of the object at `position`, one entry per backlink column that has any.
    func backlinks(table t: Int, position: Int) throws -> [CoreBacklinks] {
        let table = tables[t]
        guard position >= 0, position < table.objectCount else {
            throw RealmCoreFileError.noSuchObject(className: table.displayName,
                                                  detail: "no object at position \(position) (it has \(table.objectCount))")
        }
        var leafAndIndex: (CoreNode, Int)?
        if format >= 10, let root = table.clusterRoot {
            let found = try clusterLocate(root: root, position: position, shift: table.clusterShift)
            leafAndIndex = (found.leaf, found.index)
        }
        var result: [CoreBacklinks] = []
        for column in table.columns where column.isBacklink {
            let keys: [Int64] = try within("table '\(table.name)', object \(position), backlinks") {
                if let (leaf, index) = leafAndIndex {
                    let slot = 1 + column.leafIndex
                    guard slot < leaf.count, let ref = try leaf.ref(slot) else { return [] }
                    return try backlinkKeys(try reader.node(ref), index)
                }
                return format < 10 ? try legacyBacklinks(column, position) : []
            }
            guard !keys.isEmpty, let origin = column.linkedTable else { continue }
            let originProperty = column.originColumn.map { tables[origin].columns[$0].name } ?? ""
            result.append(CoreBacklinks(originClass: tables[origin].displayName, originProperty: originProperty, keys: keys))
        }
        return result
    }

    /// Primary keys: formats ≥ 10 keep them in the table top (read by `loadModernTable`); formats ≤ 9 in the
    /// `pk` table (`pk_table`, `pk_property`), whose class names may or may not carry `class_`, and whose
    /// `pk_property` is a column index in Realm Java 0.80 files.
    func resolvePrimaryKeys() throws {
        guard format < 10, let pk = tables.firstIndex(where: { $0.name == "pk" }) else { return }
        let pkTable = tables[pk]
        guard let tableColumn = pkTable.columns.firstIndex(where: { $0.name == "pk_table" }),
              let propertyColumn = pkTable.columns.firstIndex(where: { $0.name == "pk_property" }) else { return }
        for row in 0..<pkTable.objectCount {
            let (_, values) = try object(table: pk, position: row, columns: [tableColumn, propertyColumn])
            guard case let .string(className) = values[0] else { continue }
            guard let t = tables.firstIndex(where: { $0.name == className || $0.name == "class_" + className }) else { continue }
            switch values[1] {
            case let .string(property):
                tables[t].primaryKeyColumn = tables[t].columns.firstIndex { $0.name == property }
            case let .int(index) where index >= 0 && index < Int64(tables[t].columns.count):
                tables[t].primaryKeyColumn = Int(index)
            default:
                continue
            }
        }
    }
}
