import Foundation

/// A Realm Core file (the `.realm` files of Realm Cocoa/Swift, Java, Kotlin, JS and .NET), opened read-only.
///
/// The file is mapped with `O_RDONLY`; nothing is written, locked or created beside it (no `.lock`, `.note` or
/// `.management`). Formats 2–11 and 20–24 are read; encrypted files are decrypted page by page as they are read.
/// Every read is bounds-checked: a damaged file gives a `RealmCoreFileError`, never a crash or a wrong value.
///
/// `@unchecked Sendable`: everything is immutable after `init`; `CoreMemory` guards its own page cache.
public final class RealmCoreFile: @unchecked Sendable {
    public let path: String
    /// The file format version of the live header slot (0 for an empty file).
    public let format: Int
    /// Whether the file is in streaming form (written by `writeCopy`/`Group::write`: top ref in the footer).
    public let isStreaming: Bool
    public let isEncrypted: Bool
    /// Size of the file on disk.
    public let fileSize: Int
    /// The object-store classes (`class_` tables), in file order.
    public let classes: [CoreClass]
    /// Every other table (`metadata`, `pk`, sync and subscription tables): not classes, reported for `info`.
    public let systemTables: [CoreClass]
    /// The schema version in the `metadata` table (nil when unset or absent).
    public let schemaVersion: UInt64?

    let group: CoreGroup?

    /// Opens `path` read-only. `key`: the 64-byte encryption key of an encrypted file.
    public init(path: String, key: [UInt8]? = nil) throws {
        self.path = path
        if let key, key.count != 64 { throw RealmCoreFileError.badKeyLength(key.count) }
        let memory = try CoreMemory(path: path, key: key)
        fileSize = memory.fileSize
        isEncrypted = memory.isEncrypted
        let header = try CoreFileHeader(memory: memory, path: path)
        format = header.format
        isStreaming = header.isStreaming
        if header.format != 0 || header.topRef != 0 { try CoreFileHeader.checkSupported(format: header.format) }
        guard header.topRef != 0 else {
            group = nil
            classes = []
            systemTables = []
            schemaVersion = nil
            return
        }
        let group = CoreGroup(reader: CoreNodeReader(memory: memory), format: header.format, path: path)
        try group.load(topRef: header.topRef)
        self.group = group
        var classes: [CoreClass] = [], system: [CoreClass] = []
        for t in group.tables.indices {
            let c = Self.describe(group, t)
            if group.tables[t].name.hasPrefix("class_") { classes.append(c) } else { system.append(c) }
        }
        self.classes = classes
        systemTables = system
        schemaVersion = try Self.readSchemaVersion(group)
    }

    /// Whether the file at `path` starts like a Realm Core file (`T-DB` at byte 16), read without mapping it.
    public static func looksLikeRealmCoreFile(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }  // (closing a read-only handle cannot lose data)
        guard let data = try? handle.read(upToCount: 24), data.count == 24 else { return false }  // (unreadable: not one)
        return Array(data[16..<20]) == Array("T-DB".utf8)
    }

    /// The Realm Core releases that write this file's format.
    public var coreReleases: String { CoreFileHeader.coreReleases(format: format) }
    /// The SDK releases whose files have this format.
    public var sdkReleases: String { CoreFileHeader.sdkReleases(format: format) }

    /// Every table, classes and internal ones, in the file's order.
    public var tablesInFileOrder: [CoreClass] { (classes + systemTables).sorted { $0.table < $1.table } }

    /// The class (or system table) called `name`.
    public func `class`(named name: String) -> CoreClass? {
        classes.first { $0.name == name } ?? systemTables.first { $0.name == name }
    }

    /// The object at `position` (0 ..< objectCount) of `cls`, with one value per property of the class.
    public func object(of cls: CoreClass, at position: Int) throws -> CoreObject {
        let group = try check(cls)
        let (key, values) = try group.object(table: cls.table, position: position, columns: cls.properties.map(\.column))
        return CoreObject(key: key, position: position, values: values)
    }

    /// The objects at `positions` of `cls` (a screen of rows reads only those rows).
    public func objects(of cls: CoreClass, in positions: Range<Int>) throws -> [CoreObject] {
        try positions.map { try object(of: cls, at: $0) }
    }

    /// The value of one property of the object at `position`.
    public func value(of cls: CoreClass, at position: Int, property: CoreProperty) throws -> CoreValue {
        let group = try check(cls)
        guard cls.properties.contains(property) else {
            throw RealmCoreFileError.noSuchObject(className: cls.name, detail: "it has no property '\(property.name)' of this kind")
        }
        return try group.object(table: cls.table, position: position, columns: [property.column]).values[0]
    }

    /// Position of the object with `key` in `cls`, or nil (links give keys; this follows them).
    public func position(of cls: CoreClass, key: Int64) throws -> Int? {
        try check(cls).position(table: cls.table, key: key)
    }

    /// The objects linking to the object at `position` of `cls`, grouped by origin class and property.
    public func backlinks(of cls: CoreClass, at position: Int) throws -> [CoreBacklinks] {
        try check(cls).backlinks(table: cls.table, position: position)
    }

    /// The group, once `cls` is known to be one of this file's classes (not one of another file's).
    func check(_ cls: CoreClass) throws -> CoreGroup {
        guard let group, group.tables.indices.contains(cls.table), group.tables[cls.table].name == cls.tableName,
              group.tables[cls.table].columns.count > (cls.properties.map(\.column).max() ?? -1) else {
            throw RealmCoreFileError.noSuchObject(className: cls.name, detail: "not a class of \(path)")
        }
        return group
    }

    static func describe(_ group: CoreGroup, _ t: Int) -> CoreClass {
        let table = group.tables[t]
        var properties: [CoreProperty] = []
        var incoming: [CoreBacklinkSource] = []
        for (c, column) in table.columns.enumerated() {
            if column.isBacklink {
                if let origin = column.linkedTable {
                    let name = column.originColumn.map { group.tables[origin].columns[$0].name } ?? ""
                    incoming.append(CoreBacklinkSource(originClass: group.tables[origin].displayName, originProperty: name, column: c))
                }
                continue
            }
            let type: CorePropertyType
            switch column.subListType ?? column.type {
            case 0: type = .int
            case 1: type = .bool
            case 2, 3: type = .string
            case 4: type = .binary
            case 5: type = .subTable
            case 6: type = .mixed
            case 7: type = .oldDateTime
            case 8: type = .timestamp
            case 9: type = .float
            case 10: type = .double
            case 11: type = .decimal128
            case 12, 13: type = .link
            case 15: type = .objectId
            case 16: type = .typedLink
            case 17: type = .uuid
            default: type = .subTable
            }
            let nullable = column.subListType != nil ? column.subListNullable : column.isNullable
            properties.append(CoreProperty(
                name: column.name, type: type, collection: column.collection,
                isNullable: nullable || (column.type == 12 && column.collection == .none),
                isIndexed: column.isIndexed || table.primaryKeyColumn == c,
                isPrimaryKey: table.primaryKeyColumn == c,
                targetClass: column.linkedTable.map { group.tables[$0].displayName },
                isHidden: column.name.hasPrefix("!"), column: c))
        }
        return CoreClass(name: table.displayName, tableName: table.name, isEmbedded: table.tableType == 1,
                         isAsymmetric: table.tableType == 2,
                         primaryKey: table.primaryKeyColumn.map { table.columns[$0].name },
                         properties: properties, objectCount: table.objectCount, linkingObjects: incoming, table: t)
    }

    static func readSchemaVersion(_ group: CoreGroup) throws -> UInt64? {
        guard let t = group.tables.firstIndex(where: { $0.name == "metadata" }), group.tables[t].objectCount > 0,
              let c = group.tables[t].columns.firstIndex(where: { $0.name == "version" }) else { return nil }
        guard case let .int(v) = try group.object(table: t, position: 0, columns: [c]).values[0] else { return nil }
        let version = UInt64(bitPattern: v)
        return version == UInt64.max ? nil : version
    }
}
