import Foundation
import RealmCoreFile
import RealmStorage

/// Converts a Realm Core file (read through `RealmCoreFile`) into one of our databases, in one write
/// transaction: on any error nothing is written, and the error names the class, the object (its position in
/// the Realm Core class) and the property.
///
/// Every class becomes a class (embedded ones embedded), every property a property of the same name with its
/// type, optionality, collection kind, primary key and index; every object and value is carried over. Links
/// are mapped from Realm Core's object keys to ours in two passes: every top-level object is created with its
/// plain values first, then links are set and embedded objects are created inside their owners. Our engine
/// keeps the backlinks itself.
///
/// What has no equivalent here is an error, never a dropped value: a sub-table column (formats ≤ 9), a link
/// whose target the file does not hold, a value the engine refuses. Internal columns (`!OID`, …) are carried
/// over under their own names; the file's internal tables (`metadata`, `pk`, …) are not classes and are left
/// out, as the SDKs do. The schema version in the file's `metadata` table becomes the database's.
public struct CoreConversion {
    /// What was converted.
    public struct Report: Sendable {
        /// The classes, in the file's order, with their object counts (embedded ones included).
        public var classes: [(name: String, objects: Int)] = []
        /// For each top-level class: Realm Core's object key → the key of the object's copy.
        public var keys: [String: [Int64: ObjectKey]] = [:]
        /// Properties renamed because the file has two columns of one name, or one without a name (old files made
        /// by Realm Core's own tests do; its own upgrade renames them the same way): class, name in the file,
        /// name in the copy.
        public var renamed: [(className: String, from: String, to: String)] = []
        public var total: Int { classes.reduce(0) { $0 + $1.objects } }
    }

    let file: RealmCoreFile
    let includeInternalTables: Bool
    var progress: ((Int, Int) -> Void)?

    /// `includeInternalTables`: convert the file's other tables too (`metadata`, `pk`, …), under their table
    /// names. A file without object-store classes (one written by Realm Core directly, not by an SDK) has its
    /// tables converted whatever this says: they are its data.
    public init(file: RealmCoreFile, includeInternalTables: Bool = false, progress: ((Int, Int) -> Void)? = nil) {
        self.file = file
        self.includeInternalTables = includeInternalTables
        self.progress = progress
    }

    /// The tables that become classes, in file order.
    public var tables: [CoreClass] {
        includeInternalTables || file.classes.isEmpty ? file.tablesInFileOrder : file.classes
    }

    /// Converts the file into `db` (which must not have classes of the same names), in one write transaction.
    @discardableResult
    public func run(into db: Database) throws -> Report {
        try db.write { tx in try Run(file: file, tables: tables, tx: tx, progress: progress).convert() }
    }

    /// The names of `cls`'s properties in the copy, in order: the file's names, except that an empty name becomes
    /// `col_N` and a name already taken `NAME_N` (N the property's position), as Realm Core's own upgrade of such
    /// files does.
    public static func propertyNames(of cls: CoreClass) -> [String] {
        var used = Set<String>(), names: [String] = []
        for (i, p) in cls.properties.enumerated() {
            var name = p.name.isEmpty ? "col_\(i)" : p.name
            if used.contains(name) { name = "\(p.name.isEmpty ? "col" : p.name)_\(i)" }
            while used.contains(name) { name += "_" }
            used.insert(name)
            names.append(name)
        }
        return names
    }

    /// The property of our schema for a Realm Core property, called `name`.
    static func propertySchema(_ p: CoreProperty, named name: String, in cls: CoreClass) throws -> PropertySchema {
        let type: PropertyType
        switch p.type {
        case .int: type = .int
        case .bool: type = .bool
        case .string: type = .string
        case .binary: type = .data
        case .timestamp, .oldDateTime: type = .date
        case .float: type = .float
        case .double: type = .double
        case .decimal128: type = .decimal128
        case .objectId: type = .objectId
        case .uuid: type = .uuid
        // Our typed links live in mixed values; a sub-table of several columns (formats ≤ 9, not made by the SDKs)
        // reads as a list of rows, each a dictionary from column name to value: a mixed value holds that as is.
        case .mixed, .typedLink, .subTable: type = .mixed
        case .link: type = .link
        }
        var s = PropertySchema(name: name, type: type, isOptional: p.isNullable || type == .mixed,
                               isList: p.collection == .list, isSet: p.collection == .set,
                               isDictionary: p.collection == .dictionary)
        if type == .link {
            guard let target = p.targetClass else { throw unsupported(cls, nil, p.name, "a link column names no target class") }
            s.objectClassName = target
            // To-one links and dictionary values may be null; list and set elements may not.
            s.isOptional = p.collection == .none || p.collection == .dictionary
        }
        s.isPrimaryKey = p.isPrimaryKey
        // Realm Core indexes some columns our engine does not (e.g. lists): the values are kept, the index is not
        // built; queries give the same answers without it.
        s.isIndexed = p.isIndexed && !p.isPrimaryKey && type.isIndexable && p.collection == .none
        return s
    }

    /// A Realm Core value as ours, for property `p`: `link` maps each link (in a link property, a typed link, or
    /// a mixed value); nested lists and dictionaries of mixed values are mapped element by element. `fail` makes
    /// the error for a value that has no equivalent.
    static func value(_ v: CoreValue, _ p: CoreProperty, fail: (String) -> Error, link: (CoreLink) throws -> Value) throws -> Value {
        switch v {
        case .null: return .null
        case .int(let i): return p.type == .oldDateTime ? .date(Timestamp(seconds: i)) : .int(i)
        case .bool(let b): return .bool(b)
        case .float(let f): return .float(f)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .binary(let b): return .data(b)
        case .timestamp(let s, let ns): return .date(Timestamp(seconds: s, nanoseconds: ns))
        case .decimal128(let d): return .decimal128(Decimal128(low: d.low, high: d.high))
        case .objectId(let b):
            guard b.count == 12 else { throw fail("an object id of \(b.count) bytes") }
            return .objectId(ObjectId(byteArray: b))
        case .uuid(let b):
            guard b.count == 16 else { throw fail("a UUID of \(b.count) bytes") }
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .link(let l):
            return try link(l)
        case .list(let items), .set(let items):
            return .list(try items.map { try value($0, p, fail: fail, link: link) })
        case .dictionary(let entries):
            var d = ValueDictionary()
            for e in entries { d[e.key] = try value(e.value, p, fail: fail, link: link) }
            return .dictionary(d)
        }
    }

    static func unsupported(_ cls: CoreClass, _ position: Int?, _ property: String?, _ message: String) -> ToolError {
        .data(file: "Realm Core file", className: cls.name, index: position, property: property, message: message)
    }
}

/// One conversion: the transaction, the file, and the map from Realm Core object keys to ours.
private final class Run {
    let file: RealmCoreFile
    let classes: [CoreClass]
    let tx: WriteTransaction
    let progress: ((Int, Int) -> Void)?
    /// Realm Core class name → (Realm Core object key → our key), for top-level classes.
    var keys: [String: [Int64: ObjectKey]] = [:]
    var classesByName: [String: CoreClass] = [:]
    /// Per class, the properties whose name in the copy is not the file's.
    var renamed: [String: [CoreProperty: String]] = [:]
    var embeddedCreated: [String: Int] = [:]
    var done = 0
    var total = 0

    init(file: RealmCoreFile, tables: [CoreClass], tx: WriteTransaction, progress: ((Int, Int) -> Void)?) {
        self.file = file
        self.classes = tables
        self.tx = tx
        self.progress = progress
    }

    /// The name of `p` of `c` in the copy.
    func name(_ c: CoreClass, _ p: CoreProperty) -> String { renamed[c.name]?[p] ?? p.name }

    func fail(_ cls: CoreClass, _ position: Int?, _ property: String?, _ message: String) -> ToolError {
        .data(file: file.path, className: cls.name, index: position, property: property, message: message)
    }

    /// Runs `body`, turning engine and reader errors into one naming the class, object and property.
    func at<T>(_ cls: CoreClass, _ position: Int?, _ property: String?, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as ToolError {
            throw e
        } catch let e as StorageError {
            throw fail(cls, position, property, e.description)
        } catch let e as RealmCoreFileError {
            throw fail(cls, position, property, e.description)
        }
    }

    func convert() throws -> CoreConversion.Report {
        for c in classes {
            guard classesByName.updateValue(c, forKey: c.name) == nil else {
                throw ToolError.conflict("two tables of \(file.path) are called '\(c.name)' (a class and an internal table)")
            }
        }
        total = classes.reduce(0) { $0 + $1.objectCount }
        // The schema, every class at once (links may point either way between them).
        var report = CoreConversion.Report()
        for c in classes {
            for (p, n) in zip(c.properties, CoreConversion.propertyNames(of: c)) where n != p.name {
                renamed[c.name, default: [:]][p] = n
                report.renamed.append((c.name, p.name, n))
            }
        }
        let schemas = try classes.map { c in
            ClassSchema(name: c.name, properties: try c.properties.map { p in
                try at(c, nil, p.name) { try CoreConversion.propertySchema(p, named: name(c, p), in: c) }
            }, isEmbedded: c.isEmbedded)
        }
        for s in schemas where tx.classSchema(s.name) != nil {
            throw ToolError.conflict("class '\(s.name)' exists already in the database converted into")
        }
        if !schemas.isEmpty { try ToolError.wrap { try tx.createClasses(schemas) } }
        if let v = file.schemaVersion { try ToolError.wrap { try tx.setSchemaVersion(v) } }
        // Pass 1: every top-level object with its values that hold no link.
        for c in classes where !c.isEmbedded {
            let table = try ToolError.wrap { try tx.table(c.name) }
            var map: [Int64: ObjectKey] = [:]
            map.reserveCapacity(c.objectCount)
            try at(c, nil, nil) { try file.forEachObject(of: c) { object in
                let position = object.position
                var values: [String: Value] = [:], lists: [String: [Value]] = [:], dictionaries: [String: ValueDictionary] = [:]
                for (p, v) in zip(c.properties, object.values) where !holdsLink(p, v) {
                    try plain(p, v, c, position, &values, &lists, &dictionaries)
                }
                map[object.key] = try at(c, position, nil) {
                    try tx.createObject(table, values, lists: lists, dictionaries: dictionaries)
                }
                tick()
                return true
            } }
            keys[c.name] = map
        }
        // Pass 2: links, and the embedded objects inside their owners.
        for c in classes where !c.isEmbedded {
            let linkProperties = c.properties.indices.filter { c.properties[$0].type == .link || c.properties[$0].type == .typedLink
                || c.properties[$0].type == .mixed }
            guard !linkProperties.isEmpty else { continue }
            let table = try ToolError.wrap { try tx.table(c.name) }
            let map = keys[c.name] ?? [:]
            try at(c, nil, nil) { try file.forEachObject(of: c) { object in
                if let key = map[object.key] { try setLinks(c, object.position, object, linkProperties, table, key) }
                return true
            } }
        }
        progress?(total, total)
        report.keys = keys
        for c in classes { report.classes.append((c.name, c.isEmbedded ? embeddedCreated[c.name, default: 0] : c.objectCount)) }
        return report
    }

    func tick() {
        done += 1
        if done % 4096 == 0 { progress?(done, total) }
    }

    /// Whether `v` of `p` is set in the links pass (it holds a link, or is an embedded object).
    func holdsLink(_ p: CoreProperty, _ v: CoreValue) -> Bool {
        switch p.type {
        case .link, .typedLink: return true
        case .mixed: return v.containsLink
        default: return false
        }
    }

    /// A value without links into the arguments of `createObject`.
    func plain(_ p: CoreProperty, _ v: CoreValue, _ c: CoreClass, _ position: Int,
               _ values: inout [String: Value], _ lists: inout [String: [Value]], _ dictionaries: inout [String: ValueDictionary]) throws {
        switch (p.collection, v) {
        case (.none, _): values[name(c, p)] = try value(v, p, c, position)
        case (.list, .list(let items)), (.set, .set(let items)), (.list, .set(let items)), (.set, .list(let items)):
            lists[name(c, p)] = try items.map { try value($0, p, c, position) }
        case (.dictionary, .dictionary(let entries)):
            dictionaries[name(c, p)] = try dictionary(entries, p, c, position)
        case (_, .null):
            break  // an absent collection is an empty one
        default:
            throw fail(c, position, p.name, "a \(p.collection.rawValue) property holds a value of another kind")
        }
    }

    func dictionary(_ entries: [CoreDictionaryEntry], _ p: CoreProperty, _ c: CoreClass, _ position: Int) throws -> ValueDictionary {
        var d = ValueDictionary()
        for e in entries { d[e.key] = try value(e.value, p, c, position) }
        return d
    }

    /// A Realm Core value as ours, for property `p` (links through the key map).
    func value(_ v: CoreValue, _ p: CoreProperty, _ c: CoreClass, _ position: Int) throws -> Value {
        try CoreConversion.value(v, p, fail: { fail(c, position, p.name, $0) }) { l in
            guard let key = keys[l.className]?[l.key] else {
                let why = classesByName[l.className] == nil ? "a class the file does not have" : "no object of the file"
                throw fail(c, position, p.name, "a link to \(l.className) key \(l.key): \(why)")
            }
            if p.type == .link { return .link(key) }
            guard let id = tx.classID(named: l.className) else { throw fail(c, position, p.name, "no class \(l.className)") }
            return .typedLink(classID: id, key: key)
        }
    }

    /// Sets the link properties (and mixed ones holding links) of the object `key`, creating its embedded objects.
    func setLinks(_ c: CoreClass, _ position: Int, _ object: CoreObject, _ indices: [Int], _ table: TableHandle, _ key: ObjectKey) throws {
        for i in indices {
            let p = c.properties[i], v = object.values[i]
            guard holdsLink(p, v), !v.isNull else { continue }
            let handle = try at(c, position, p.name) { try tx.property(table, name(c, p)) }
            if p.type == .link, let target = p.targetClass, let tc = classesByName[target], tc.isEmbedded {
                try embed(v, p, tc, c, position, key, handle)
                continue
            }
            try at(c, position, p.name) {
                switch (p.collection, v) {
                case (.none, _): try tx.set(key, handle, try value(v, p, c, position))
                case (.list, .list(let items)): try tx.setList(key, handle, try items.map { try value($0, p, c, position) })
                case (.set, .set(let items)), (.set, .list(let items)):
                    try tx.setAssign(key, handle, try items.map { try value($0, p, c, position) })
                case (.dictionary, .dictionary(let entries)): try tx.setDictionary(key, handle, try dictionary(entries, p, c, position))
                default: throw fail(c, position, p.name, "a \(p.collection.rawValue) property holds a value of another kind")
                }
            }
        }
    }

    /// Creates the embedded objects `v` links to (a link, or a list or dictionary of links) inside `owner`.
    func embed(_ v: CoreValue, _ p: CoreProperty, _ target: CoreClass, _ c: CoreClass, _ position: Int, _ owner: ObjectKey,
               _ handle: PropertyHandle) throws {
        func make(_ link: CoreValue, _ create: ([String: Value], [String: [Value]]) throws -> ObjectKey) throws {
            guard case .link(let l) = link else {
                if link.isNull { return }
                throw fail(c, position, p.name, "an embedded object's link holds another kind of value")
            }
            guard let tp = try at(c, position, p.name, { try file.position(of: target, key: l.key) }) else {
                throw fail(c, position, p.name, "a link to embedded \(target.name) key \(l.key): no object of the file")
            }
            let object = try at(target, tp, nil) { try file.object(of: target, at: tp) }
            var values: [String: Value] = [:], lists: [String: [Value]] = [:], dictionaries: [String: ValueDictionary] = [:]
            for (ep, ev) in zip(target.properties, object.values) where !holdsLink(ep, ev) {
                try plain(ep, ev, target, tp, &values, &lists, &dictionaries)
            }
            let child = try at(target, tp, nil) { try create(values, lists) }
            let childTable = try ToolError.wrap { try tx.table(target.name) }
            for (name, d) in dictionaries {
                try at(target, tp, name) { try tx.setDictionary(child, try tx.property(childTable, name), d) }
            }
            embeddedCreated[target.name, default: 0] += 1
            tick()
            let linkProperties = target.properties.indices.filter { target.properties[$0].type == .link
                || target.properties[$0].type == .typedLink || target.properties[$0].type == .mixed }
            try setLinks(target, tp, object, linkProperties, childTable, child)
        }
        switch (p.collection, v) {
        case (.none, _):
            try make(v) { vs, ls in try tx.createEmbeddedObject(in: owner, handle, vs, lists: ls) }
        case (.list, .list(let items)):
            for (n, item) in items.enumerated() {
                try make(item) { vs, ls in try tx.listInsertEmbedded(owner, handle, at: n, vs, lists: ls) }
            }
        case (.dictionary, .dictionary(let entries)):
            for e in entries {
                if e.value.isNull {
                    try at(c, position, p.name) { try tx.dictionarySet(owner, handle, key: e.key, .null) }
                    continue
                }
                try make(e.value) { vs, ls in try tx.dictionarySetEmbedded(owner, handle, key: e.key, vs, lists: ls) }
            }
        default:
            throw fail(c, position, p.name, "a \(p.collection.rawValue) of embedded objects holds a value of another kind")
        }
    }
}

extension CoreValue {
    /// Whether the value is a link or holds one (in a nested list or dictionary).
    var containsLink: Bool {
        switch self {
        case .link: return true
        case .list(let items), .set(let items): return items.contains { $0.containsLink }
        case .dictionary(let entries): return entries.contains { $0.value.containsLink }
        default: return false
        }
    }
}
