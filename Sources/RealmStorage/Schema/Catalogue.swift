/// The stored state of one property (or hidden backlink column) of a class.
struct PropertyInfo: Equatable {
    struct Flags: OptionSet, Equatable {
        let rawValue: UInt8
        static let optional = Flags(rawValue: 1)
        static let list = Flags(rawValue: 2)
        static let indexed = Flags(rawValue: 4)
        static let primaryKey = Flags(rawValue: 8)
        static let hidden = Flags(rawValue: 16)
        /// A non-optional int primary key whose value *is* the object key (no index tree; see DECISIONS 13).
        static let keyIsValue = Flags(rawValue: 32)
    }

    var columnID: UInt32
    var name: String
    var type: PropertyType
    var flags: Flags
    /// Link target class, or origin class of a backlink / linkingObjects property; 0 when none.
    var targetClassID: UInt32
    /// Origin link column of a backlink / linkingObjects property; 0 when none.
    var originColumnID: UInt32
    /// Root of the index (for indexed and primary-key properties); 0 when empty or not indexed.
    var indexRoot: UInt64

    var isOptional: Bool { flags.contains(.optional) }
    var isList: Bool { flags.contains(.list) }
    /// Whether the property has an index tree (indexed properties and primary keys, except a primary key
    /// whose value is the object key).
    var isIndexed: Bool { (flags.contains(.indexed) || flags.contains(.primaryKey)) && !flags.contains(.keyIsValue) }
    var keyIsValue: Bool { flags.contains(.keyIsValue) }
    var isPrimaryKey: Bool { flags.contains(.primaryKey) }
    var isHidden: Bool { flags.contains(.hidden) }
    /// Whether objects store a column for this property (linkingObjects are computed).
    var hasColumn: Bool { type != .linkingObjects }

    /// The value an object has for this property when nothing was stored.
    var defaultValue: Value {
        if isList || type == .backlink { return .data([]) }
        if isOptional || type == .link || type == .mixed { return .null }
        return type.defaultValue
    }
}

/// The stored state of one class: its schema and the roots of its object tree.
struct ClassInfo: Equatable {
    var classID: UInt32
    var name: String
    var nextColumnID: UInt32
    var nextObjectKey: UInt64
    var objectCount: UInt64
    var tableRoot: UInt64
    var primaryKeyColumnID: UInt32
    var properties: [PropertyInfo]

    func property(named name: String) -> PropertyInfo? {
        properties.first { $0.name == name && !$0.isHidden }
    }

    func property(column: UInt32) -> PropertyInfo? { properties.first { $0.columnID == column } }

    /// The primary key property when its value is the object key.
    var keyFromPrimaryKey: PropertyInfo? { properties.first(where: \.keyIsValue) }

    /// Properties that have a column in clusters, in stored order.
    var columns: [PropertyInfo] { properties.filter(\.hasColumn) }
}

/// The catalogue node's contents: schema version and every class.
struct Catalogue: Equatable {
    var schemaVersion: UInt64 = 0
    var nextClassID: UInt32 = 1
    var classes: [ClassInfo] = []

    func classInfo(named name: String) -> ClassInfo? { classes.first { $0.name == name } }
    func classIndex(named name: String) -> Int? { classes.firstIndex { $0.name == name } }
    func classIndex(id: UInt32) -> Int? { classes.firstIndex { $0.classID == id } }
    func classInfo(id: UInt32) -> ClassInfo? { classes.first { $0.classID == id } }

    /// The catalogue section of the commit root (see `CommitRoot`).
    func encodeSection() -> [UInt8] {
        struct Section { var w = ByteWriter(capacity: 1024) }
        var b = Section()
        b.w.u64(schemaVersion)
        b.w.u32(nextClassID)
        b.w.u32(UInt32(classes.count))
        for c in classes {
            b.w.u32(c.classID)
            b.w.string(c.name)
            b.w.u32(c.nextColumnID)
            b.w.u64(c.nextObjectKey)
            b.w.u64(c.objectCount)
            b.w.u64(c.tableRoot)
            b.w.u64(0)  // table height: derived from the nodes' level fields
            b.w.u32(c.primaryKeyColumnID)
            b.w.u8(0)
            b.w.u32(UInt32(c.properties.count))
            for p in c.properties {
                b.w.u32(p.columnID)
                b.w.string(p.name)
                b.w.u8(p.type.rawValue)
                b.w.u8(p.flags.rawValue)
                b.w.u32(p.targetClassID)
                b.w.u32(p.originColumnID)
                b.w.u64(p.indexRoot)
                b.w.u64(0)
            }
        }
        return b.w.bytes
    }

    /// Decodes the catalogue section of a commit root node.
    static func decode(_ node: UnsafeRawBufferPointer, ref: UInt64, path: String) throws -> Catalogue {
        func bad(_ why: String) -> StorageError {
            .corrupt(path: path, location: "catalogue at page \(ref)", reason: why)
        }
        var r = ByteReader(node, offset: nodeHeaderSize)
        do {
            let format = try r.u32()
            guard format == CommitRoot.format else { throw bad("unknown catalogue format \(format)") }
            let length = Int(try r.u32())
            guard length <= node.count - r.offset else { throw bad("catalogue section of \(length) bytes runs past the node") }
            var cat = Catalogue()
            cat.schemaVersion = try r.u64()
            cat.nextClassID = try r.u32()
            let classCount = Int(try r.u32())
            guard classCount <= 1 << 20 else { throw bad("class count \(classCount)") }
            for _ in 0..<classCount {
                let id = try r.u32()
                let name = try r.string(maxLength: 4096)
                let nextColumnID = try r.u32()
                let nextKey = try r.u64()
                let count = try r.u64()
                let root = try r.u64()
                _ = try r.u64()
                let pk = try r.u32()
                _ = try r.u8()
                let propertyCount = Int(try r.u32())
                guard propertyCount <= 1 << 16 else { throw bad("property count \(propertyCount) in class \(name)") }
                var props: [PropertyInfo] = []
                for _ in 0..<propertyCount {
                    let col = try r.u32()
                    let pname = try r.string(maxLength: 4096)
                    let code = try r.u8()
                    guard let type = PropertyType(rawValue: code) else { throw bad("property \(name).\(pname) has type code \(code)") }
                    let flags = PropertyInfo.Flags(rawValue: try r.u8())
                    let target = try r.u32()
                    let origin = try r.u32()
                    let indexRoot = try r.u64()
                    _ = try r.u64()
                    props.append(PropertyInfo(columnID: col, name: pname, type: type, flags: flags,
                                              targetClassID: target, originColumnID: origin, indexRoot: indexRoot))
                }
                cat.classes.append(ClassInfo(classID: id, name: name, nextColumnID: nextColumnID, nextObjectKey: nextKey,
                                             objectCount: count, tableRoot: root, primaryKeyColumnID: pk, properties: props))
            }
            return cat
        } catch is ByteReader.Overrun {
            throw bad("truncated or malformed field")
        }
    }
}
