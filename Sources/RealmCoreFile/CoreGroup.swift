/// A column of a table, as the spec describes it.
struct CoreColumn: Sendable {
    var name: String
    /// Realm Core's column type (0 Int … 17 UUID; 3 StringEnum, 5 sub-table, 7 OldDateTime in formats ≤ 9).
    var type: Int
    var attributes: Int
    /// Formats ≥ 10: the column key and its leaf index (slot in cluster leaves, top[7]/top[8]).
    var key: Int64 = 0
    var leafIndex = 0
    /// Formats ≤ 9: ref to the column's root (a B+tree; for Timestamp `[seconds, nanoseconds]`).
    var root: Int?
    /// Link target / backlink origin table (position in `CoreGroup.tables`).
    var linkedTable: Int?
    /// Backlinks: the origin column (position in the origin table's columns).
    var originColumn: Int?
    /// Formats ≥ 10: the raw opposite-table key (resolved into `linkedTable` once all tables are read).
    var oppositeTable: Int64?
    /// Formats ≥ 10: the raw opposite-column key (resolved into `originColumn` once all tables are read).
    var oppositeKey: Int64?
    /// Root of the distinct values of an enumerated string column.
    var enumKeys: Int?
    /// Root of the column's search index (`StringIndex`), nil = none: formats ≥ 10 from the table top's slot 4,
    /// formats ≤ 9 the ref after the column's in the column array.
    var indexRoot: Int?
    /// Dictionary key type (`DataType`, 2 = String).
    var dictionaryKeyType = 2
    /// Formats ≤ 9: a list of primitives stored as a sub-table (`!ARRAY_VALUE`): its element type and nullability.
    var subListType: Int?
    var subListNullable = false
    var subListAttributes = 0
    /// Formats ≤ 9: the columns of a sub-table column.
    var subColumns: [CoreColumn] = []

    var isBacklink: Bool { type == 14 }
    var isIndexed: Bool { attributes & 1 != 0 }
    /// `col_attr_FullText_Indexed`: the index holds the words of each string, not the strings.
    var isFullTextIndexed: Bool { attributes & 256 != 0 }
    var isNullable: Bool { attributes & 16 != 0 }
    var collection: CoreCollectionKind {
        if type == 13 || type == 5 { return .list }
        if attributes & 32 != 0 { return .list }
        if attributes & 128 != 0 { return .set }
        if attributes & 64 != 0 { return .dictionary }
        return .none
    }
}

/// A table: its name, columns and where its objects are.
struct CoreTable: Sendable {
    var slot: Int
    var name: String
    /// Formats ≥ 10: the table key; formats ≤ 9: the slot.
    var key: Int64
    var columns: [CoreColumn] = []
    /// Formats ≥ 10: root of the cluster tree (nil = no objects) and its key shift.
    var clusterRoot: Int?
    var clusterShift = 8
    var objectCount = 0
    var primaryKeyColumn: Int?
    /// 0 top-level, 1 embedded, 2 asymmetric.
    var tableType = 0

    var displayName: String { name.hasPrefix("class_") ? String(name.dropFirst(6)) : name }
}

/// The group of a Realm Core file: its tables, and everything that reads values out of them.
///
/// `@unchecked Sendable`: `tables` and `tableByKey` are filled by `load()` before the group is shared and never
/// changed after.
final class CoreGroup: @unchecked Sendable {
    let reader: CoreNodeReader
    let format: Int
    let path: String
    var tables: [CoreTable] = []
    var tableByKey: [Int64: Int] = [:]

    init(reader: CoreNodeReader, format: Int, path: String) {
        self.reader = reader
        self.format = format
        self.path = path
    }

    func className(tableKey: Int64) -> String? {
        tableByKey[tableKey].map { tables[$0].displayName }
    }

    /// Reads the top array, the table names and every table's spec.
    func load(topRef: Int) throws {
        let top = try within("top array") { try reader.structure(topRef, minimumCount: 2, "the top array") }
        guard let namesRef = try top.ref(0), let tablesRef = try top.ref(1) else {
            throw RealmCoreFileError.corrupt(what: "top array without table names or tables", offset: topRef, context: "")
        }
        let names = try reader.node(namesRef)
        let slots = try reader.node(tablesRef)
        let nameCount = try leafCount(.string(enumKeys: nil), names)
        guard slots.hasRefs || slots.count == 0, nameCount == slots.count else {
            throw RealmCoreFileError.corrupt(what: "\(nameCount) table names for \(slots.count) table slots", offset: tablesRef, context: "")
        }
        for slot in 0..<slots.count {
            let entry = try slots.refOrTagged(slot)
            guard let ref = entry.ref else { continue }  // a tagged number marks the free slot of a deleted table
            let name = String(decoding: try stringBytes(names, slot, enumKeys: nil) ?? [], as: UTF8.self)
            let table = try within("table '\(name)'") {
                format >= 10 ? try loadModernTable(slot: slot, name: name, top: ref) : try loadLegacyTable(slot: slot, name: name, top: ref)
            }
            tableByKey[table.key] = tables.count
            tables.append(table)
        }
        if format >= 10 { try resolveModernLinks() } else { try resolveLegacyLinks() }
        try resolvePrimaryKeys()
    }
}
