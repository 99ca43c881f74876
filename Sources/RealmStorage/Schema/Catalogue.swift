#if canImport(Glibc)
import Glibc
#endif

/// The stored state of one property (or hidden backlink property) of a class.
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
        /// A set (format 7): elements of `type`, unique, stored in `SetOrder`.
        static let set = Flags(rawValue: 64)
        /// A dictionary with string keys (format 7): values of `type`, keys in UTF-8 byte order.
        static let dictionary = Flags(rawValue: 128)
    }

    var columnID: UInt32
    var name: String
    var type: PropertyType
    var flags: Flags
    /// Link target class, or origin class of a backlink / linkingObjects property; 0 when none.
    var targetClassID: UInt32
    /// Origin link column of a backlink / linkingObjects property; 0 when none.
    var originColumnID: UInt32
    /// Root of the index (for indexed and primary-key properties) or of the backlink tree (backlink
    /// properties); 0 when empty or not indexed.
    var indexRoot: UInt64

    var isOptional: Bool { flags.contains(.optional) }
    var isList: Bool { flags.contains(.list) }
    var isSet: Bool { flags.contains(.set) }
    var isDictionary: Bool { flags.contains(.dictionary) }
    /// Whether the elements of a set or the values of a dictionary may be null: when optional, and always for
    /// mixed values (as Realm Core).
    var collectionValuesNullable: Bool { isOptional || type == .mixed }
    /// A list, set or dictionary stored in the object's cluster (serialized; not linkingObjects).
    var isCollection: Bool { flags.contains(.list) || flags.contains(.set) || flags.contains(.dictionary) }
    /// Whether the property has an index tree of its single value (indexed properties and primary keys, except a
    /// primary key whose value is the object key).
    var isIndexed: Bool { (flags.contains(.indexed) || flags.contains(.primaryKey)) && !flags.contains(.keyIsValue) && !isCollection }
    /// Whether the property is an indexed set: its index tree holds one entry per element of each object's set
    /// (`docs/FILE_FORMAT.md`, "Set element indexes").
    var isElementIndexed: Bool { flags.contains(.indexed) && isSet }
    /// Whether the property has an index tree of either kind.
    var hasIndexTree: Bool { isIndexed || isElementIndexed }

    /// Whether a property of `type` may be indexed: a single value of an indexable type, or a set of one other
    /// than mixed (`kind` is "", " list", " set" or " dictionary", as the schema's messages say it).
    static func mayBeIndexed(_ type: PropertyType, kind: String) -> Bool {
        type.isIndexable && (kind.isEmpty || (kind == " set" && type != .mixed))
    }
    var keyIsValue: Bool { flags.contains(.keyIsValue) }
    var isPrimaryKey: Bool { flags.contains(.primaryKey) }
    var isHidden: Bool { flags.contains(.hidden) }
    /// Whether objects store a column for this property (linkingObjects are computed; backlinks live in
    /// their own trees, `Backlinks.swift`).
    var hasColumn: Bool { Self.hasColumn(type) }

    /// The value an object has for this property when nothing was stored.
    var defaultValue: Value {
        if isCollection || type == .backlink { return .data([]) }
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
    /// Class flags; bit 0: embedded (format 7).
    var flags: UInt8 = 0

    var isEmbedded: Bool { flags & 1 != 0 }

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
    /// Through a buffer pointer, reading each class's ID in place (a search over the array copied classes).
    func classIndex(id: UInt32) -> Int? {
        classes.withUnsafeBufferPointer { cs in cs.indices.first { cs[$0].classID == id } }
    }

    /// The root of class `id`'s object tree (0: none, or no such class), read in place.
    func tableRoot(id: UInt32) -> UInt64 {
        guard let i = classIndex(id: id) else { return 0 }
        return classes.withUnsafeBufferPointer { $0[i].tableRoot }
    }
    func classInfo(id: UInt32) -> ClassInfo? { classes.first { $0.classID == id } }

    /// Property `column` of class `id`, found in place: no class is copied on the way (a lookup's path).
    func property(classID id: UInt32, column: UInt32) -> PropertyInfo? {
        classes.withUnsafeBufferPointer { cs in
            for i in cs.indices where cs[i].classID == id {
                return cs[i].properties.withUnsafeBufferPointer { ps in
                    for j in ps.indices where ps[j].columnID == column { return ps[j] }
                    return nil
                }
            }
            return nil
        }
    }

    /// The catalogue section of the commit root (see `CommitRoot`). Every commit writes it: sized first, then
    /// stored field by field into the new array (appending each byte to a growing array had cost a small
    /// commit more than writing the rest of its commit root).
    ///
    /// Built in `buffer`'s storage when it has room: the writer passes the section of an earlier commit, which
    /// the catalogue cache gave back (`CatalogueCache.remember`); a new array every commit was ~2 % of a small
    /// commit's time on a CPU whose caches the disk wait left cold (DECISIONS 64).
    func encodeSection(reusing buffer: consuming [UInt8] = []) -> [UInt8] {
        var size = 16
        for c in classes {
            size += 4 + 4 + c.name.utf8.count + 4 + 8 + 8 + 8 + 8 + 4 + 1 + 4
            for p in c.properties { size += 4 + 4 + p.name.utf8.count + 1 + 1 + 4 + 4 + 8 + 8 }
        }
        func fill(_ base: UnsafeMutableRawPointer) {
            var w = FieldWriter(base)
            w.u64(schemaVersion)
            w.u32(nextClassID)
            w.u32(UInt32(classes.count))
            for c in classes {
                w.u32(c.classID)
                w.string(c.name)
                w.u32(c.nextColumnID)
                w.u64(c.nextObjectKey)
                w.u64(c.objectCount)
                w.u64(c.tableRoot)
                w.u64(0)  // table height: derived from the nodes' level fields
                w.u32(c.primaryKeyColumnID)
                w.u8(c.flags)
                w.u32(UInt32(c.properties.count))
                for p in c.properties {
                    w.u32(p.columnID)
                    w.string(p.name)
                    w.u8(p.type.rawValue)
                    w.u8(p.flags.rawValue)
                    w.u32(p.targetClassID)
                    w.u32(p.originColumnID)
                    w.u64(p.indexRoot)
                    w.u64(0)
                }
            }
            precondition(w.written == size, "catalogue section size")
        }
        return [UInt8].filled(count: size, reusing: consume buffer) { fill($0.baseAddress!) }
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
                let classFlags = try r.u8()
                let propertyCount = Int(try r.u32())
                guard propertyCount <= 1 << 16 else { throw bad("property count \(propertyCount) in class \(name)") }
                var props: [PropertyInfo] = []
                for _ in 0..<propertyCount {
                    let col = try r.u32()
                    let pname = try r.string(maxLength: 4096)
                    let code = try r.u8()
                    guard let type = PropertyType(rawValue: code) else { throw bad("property \(name).\(pname) has type code \(code)") }
                    let flags = PropertyInfo.Flags(rawValue: try r.u8())
                    // One collection kind per property: code reading it as a list and code reading it as a set
                    // would otherwise disagree about what its bytes mean.
                    guard flags.intersection([.list, .set, .dictionary]).rawValue.nonzeroBitCount <= 1 else {
                        throw bad("property \(name).\(pname) is more than one of list, set and dictionary")
                    }
                    let target = try r.u32()
                    let origin = try r.u32()
                    let indexRoot = try r.u64()
                    _ = try r.u64()
                    props.append(PropertyInfo(columnID: col, name: pname, type: type, flags: flags,
                                              targetClassID: target, originColumnID: origin, indexRoot: indexRoot))
                }
                cat.classes.append(ClassInfo(classID: id, name: name, nextColumnID: nextColumnID, nextObjectKey: nextKey,
                                             objectCount: count, tableRoot: root, primaryKeyColumnID: pk, properties: props,
                                             flags: classFlags))
            }
            guard r.offset <= nodeHeaderSize + 8 + length else { throw bad("catalogue runs past its section") }
            return cat
        } catch is ByteReader.Overrun {
            throw bad("truncated or malformed field")
        }
    }
}

/// The catalogue a database last decoded or committed, by the bytes of its section: a snapshot or write
/// transaction whose commit root holds the same bytes takes it instead of decoding them again (`perf`: the
/// decode was ~5 % of a one-object write transaction's CPU time, and every read transaction pays it too).
/// Keyed by content, so a commit root at a reused page, another process's commit or a compacted file can
/// never be answered with a stale catalogue.
final class CatalogueCache: @unchecked Sendable {
    // Safe: every access to the fields is under `lock`; `Catalogue` is a value.
    private let lock = PthreadMutex()
    private var section: [UInt8] = []
    private var cached: Catalogue?

    /// The catalogue of the commit root `node` at `ref`.
    func catalogue(node: UnsafeRawBufferPointer, ref: UInt64, path: String) throws -> Catalogue {
        let start = nodeHeaderSize + 8
        guard node.count > start, node.u32(at: nodeHeaderSize) == CommitRoot.format else {
            return try Catalogue.decode(node, ref: ref, path: path)  // throws the precise error
        }
        let length = Int(node.u32(at: nodeHeaderSize + 4))
        guard length > 0, length <= node.count - start else { return try Catalogue.decode(node, ref: ref, path: path) }
        let bytes = UnsafeRawBufferPointer(rebasing: node[start..<start + length])
        let hit = lock.withLock { () -> Catalogue? in
            guard let c = cached, section.count == length,
                  section.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, length) }) == 0 else { return nil }
            return c
        }
        if let hit {
            // Debug builds check that the cached catalogue (often one a commit kept) is what decoding gives.
            assert((try? Catalogue.decode(node, ref: ref, path: path)) == hit, "CatalogueCache: stale catalogue")  // debug check
            return hit
        }
        let c = try Catalogue.decode(node, ref: ref, path: path)
        remember(section: Array(bytes), c)
        return c
    }

    /// Records that `section` (as `encodeSection` wrote it) decodes to `catalogue`; returns the section it
    /// held before, for the writer to build its next section in.
    @discardableResult
    func remember(section: [UInt8], _ catalogue: Catalogue) -> [UInt8] {
        lock.withLock {
            let previous = self.section
            self.section = section
            cached = catalogue
            return previous
        }
    }
}

extension PropertyInfo {
    /// Whether two property lists shape clusters and insert plans the same: equal but for their index roots,
    /// which change with every commit and do not affect either.
    static func sameShape(_ a: [PropertyInfo], _ b: [PropertyInfo]) -> Bool {
        guard a.count == b.count else { return false }
        // Field by field in place (iterating copies of the values retained and released their names).
        return a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in
                for i in 0..<x.count {
                    guard x[i].columnID == y[i].columnID, x[i].type == y[i].type, x[i].flags == y[i].flags,
                          x[i].targetClassID == y[i].targetClassID, x[i].originColumnID == y[i].originColumnID,
                          x[i].name == y[i].name else { return false }
                }
                return true
            }
        }
    }
}
