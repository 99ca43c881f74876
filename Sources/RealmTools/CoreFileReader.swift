import Foundation
import RealmCoreFile
import RealmStorage

/// A Realm Core file read in place, through the same interface as a snapshot of our own files (`ObjectReader`):
/// the query engine, the browser and the tools work on it without converting it (DECISIONS 98).
///
/// Classes, property names and types are those `CoreConversion` gives the copy (renamed columns renamed the
/// same way), and keys are Realm Core's own object keys, so a query answers the same on the file and on its
/// conversion. Nothing is cached but the schema: every read goes to the map, so memory does not grow with the
/// file. Realm Core's search indexes are not read: an indexed `==` scans the column, in place.
public final class CoreFileReader: ObjectReader, @unchecked Sendable {  // immutable after init; the file guards its own state
    public let file: RealmCoreFile
    /// The classes read, in file order; class ID `i + 1` is `classes[i]`.
    let classes: [CoreClass]
    let schemas: [ClassSchema]
    /// Per class: property name (as in `schemas`) → index in the class's `properties`.
    let propertyIndex: [[String: Int]]
    let classIndex: [String: Int]

    /// `includeInternalTables`: read the file's other tables too (`metadata`, `pk`, …), as `CoreConversion` does.
    public init(file: RealmCoreFile, includeInternalTables: Bool = false) throws {
        self.file = file
        classes = CoreConversion(file: file, includeInternalTables: includeInternalTables).tables
        var schemas: [ClassSchema] = [], propertyIndex: [[String: Int]] = [], classIndex: [String: Int] = [:]
        for (i, cls) in classes.enumerated() {
            let names = CoreConversion.propertyNames(of: cls)
            schemas.append(ClassSchema(name: cls.name, properties: try zip(cls.properties, names).map { p, name in
                try CoreConversion.propertySchema(p, named: name, in: cls)
            }, isEmbedded: cls.isEmbedded))
            propertyIndex.append(Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a }))
            classIndex[cls.name] = i
        }
        self.schemas = schemas
        self.propertyIndex = propertyIndex
        self.classIndex = classIndex
    }

    // MARK: Schema

    /// A file has one version while it is read (a newer one written by an app is read by opening it again).
    public var version: UInt64 { 1 }
    public var schemaVersion: UInt64 { file.schemaVersion ?? 0 }
    public var databaseIdentity: ObjectIdentifier { ObjectIdentifier(file) }
    public var schema: [ClassSchema] { schemas }
    public func classSchema(_ name: String) -> ClassSchema? { classIndex[name].map { schemas[$0] } }
    public func classID(named name: String) -> UInt32? { classIndex[name].map { UInt32($0 + 1) } }

    public func className(classID id: UInt32) -> String? {
        id >= 1 && Int(id) <= classes.count ? classes[Int(id) - 1].name : nil
    }

    public func table(_ name: String) throws -> TableHandle {
        guard let i = classIndex[name] else { throw StorageError.noSuchClass(name) }
        return TableHandle(foreignName: name, classID: UInt32(i + 1))
    }

    public func property(_ table: TableHandle, _ name: String) throws -> PropertyHandle {
        let c = try classNumber(table)
        guard let p = propertyIndex[c][name] else { throw StorageError.noSuchProperty(className: classes[c].name, property: name) }
        let s = schemas[c].properties[p]
        return PropertyHandle(foreignName: s.name, type: s.type, isOptional: s.isOptional, isList: s.isList, isSet: s.isSet,
                              isDictionary: s.isDictionary, isIndexed: s.isIndexed, isPrimaryKey: s.isPrimaryKey,
                              classID: UInt32(c + 1), column: UInt32(p),
                              targetClassID: s.objectClassName.flatMap { classID(named: $0) } ?? 0)
    }

    func classNumber(_ table: TableHandle) throws -> Int {
        let c = Int(table.foreignClassID) - 1
        guard c >= 0, c < classes.count, classes[c].name == table.name else { throw StorageError.noSuchClass(table.name) }
        return c
    }

    func resolve(_ p: PropertyHandle) throws -> (cls: CoreClass, property: CoreProperty) {
        let c = Int(p.foreignClassID) - 1, column = Int(p.foreignColumn)
        guard c >= 0, c < classes.count, column < classes[c].properties.count else {
            throw StorageError.noSuchProperty(className: "?", property: p.name)
        }
        return (classes[c], classes[c].properties[column])
    }

    // MARK: Objects

    public func count(_ table: TableHandle) throws -> Int { classes[try classNumber(table)].objectCount }

    public func exists(_ table: TableHandle, _ key: ObjectKey) throws -> Bool {
        guard let k = Self.coreKey(key) else { return false }
        return try file.position(of: classes[try classNumber(table)], key: k) != nil
    }

    public func key(at position: Int, in table: TableHandle) throws -> ObjectKey? {
        let cls = classes[try classNumber(table)]
        guard position >= 0, position < cls.objectCount else { return nil }
        return Self.ourKey(try file.key(of: cls, at: position))
    }

    public func keys(_ table: TableHandle) throws -> [ObjectKey] {
        var out: [ObjectKey] = []
        try file.forEachLeaf(of: classes[try classNumber(table)]) { leaf in
            for i in 0..<leaf.count { out.append(Self.ourKey(leaf.key(i))) }
            return true
        }
        return out
    }

    public func scan(_ table: TableHandle, _ body: (LeafCursor) throws -> Bool) throws {
        let c = try classNumber(table)
        try file.forEachLeaf(of: classes[c]) { leaf in try body(LeafCursor(foreign: CoreLeafView(reader: self, classNumber: c, leaf: leaf))) }
    }

    public func value(_ key: ObjectKey, _ p: PropertyHandle) throws -> Value {
        let (cls, property) = try resolve(p)
        guard property.collection == .none else {
            throw StorageError.typeMismatch(className: cls.name, property: p.name, expected: "a list accessor", got: "value access")
        }
        return try read(key, cls, property)
    }

    public func list(_ key: ObjectKey, _ p: PropertyHandle) throws -> [Value] {
        let (cls, property) = try resolve(p)
        switch try read(key, cls, property) {
        case .list(let items): return items
        case .null: return []
        default: throw StorageError.typeMismatch(className: cls.name, property: p.name, expected: "a list or set", got: "another kind of value")
        }
    }

    public func dictionary(_ key: ObjectKey, _ p: PropertyHandle) throws -> ValueDictionary {
        let (cls, property) = try resolve(p)
        switch try read(key, cls, property) {
        case .dictionary(let d): return d
        case .null: return ValueDictionary()
        default: throw StorageError.typeMismatch(className: cls.name, property: p.name, expected: "a dictionary", got: "another kind of value")
        }
    }

    /// The value of `property` of the object `key`, ours.
    func read(_ key: ObjectKey, _ cls: CoreClass, _ property: CoreProperty) throws -> Value {
        guard let k = Self.coreKey(key), let v = try file.value(of: cls, key: k, property: property) else {
            throw StorageError.noSuchObject(className: cls.name, key: key.rawValue)
        }
        return try ours(v, property, cls)
    }

    /// A value read from the file as ours: links keep Realm Core's keys; typed links name the class by its ID here.
    func ours(_ v: CoreValue, _ property: CoreProperty, _ cls: CoreClass) throws -> Value {
        try CoreConversion.value(v, property, fail: { message in
            ToolError.data(file: self.file.path, className: cls.name, index: nil, property: property.name, message: message)
        }) { link in
            let key = Self.ourKey(link.key)
            if property.type == .link { return .link(key) }
            guard let id = self.classID(named: link.className) else {
                throw ToolError.data(file: self.file.path, className: cls.name, index: nil, property: property.name,
                                     message: "a link to \(link.className), a class the file does not have")
            }
            return .typedLink(classID: id, key: key)
        }
    }

    // MARK: Backlinks

    public func allBacklinks(_ key: ObjectKey, in table: TableHandle) throws -> [(className: String, property: String, keys: [ObjectKey])] {
        let cls = classes[try classNumber(table)]
        guard let k = Self.coreKey(key), let position = try file.position(of: cls, key: k) else {
            throw StorageError.noSuchObject(className: cls.name, key: key.rawValue)
        }
        return try file.backlinks(of: cls, at: position).compactMap { b in
            guard let origin = classIndex[b.originClass] else { return nil }
            let name = propertyName(of: b.originProperty, in: origin)
            return (b.originClass, name, b.keys.map(Self.ourKey))
        }
    }

    /// The name a property of the file's `origin` class has here (a renamed column's new name).
    func propertyName(of fileName: String, in origin: Int) -> String {
        guard let i = classes[origin].properties.firstIndex(where: { $0.name == fileName }) else { return fileName }
        return schemas[origin].properties[i].name
    }

    public func backlinks(_ key: ObjectKey, in table: TableHandle, from originClass: String, property originProperty: String) throws -> [ObjectKey] {
        try allBacklinks(key, in: table).first { $0.className == originClass && $0.property == originProperty }?.keys ?? []
    }

    public func backlinks(of keys: [ObjectKey], in table: TableHandle, from originClass: String, property originProperty: String) throws -> [ObjectKey] {
        var seen = Set<ObjectKey>(), out: [ObjectKey] = []
        for k in keys {
            for o in try backlinks(k, in: table, from: originClass, property: originProperty) where seen.insert(o).inserted { out.append(o) }
        }
        return out.sorted()
    }

    public func owner(of key: ObjectKey, in table: TableHandle) throws -> (className: String, key: ObjectKey, property: String)? {
        guard classes[try classNumber(table)].isEmbedded, let b = try allBacklinks(key, in: table).first, let k = b.keys.first else { return nil }
        return (b.className, k, b.property)
    }

    // MARK: Lookups (Realm Core's search index where it has one and the reader reads it; else a scan in place)

    public func find(_ p: PropertyHandle, equalTo value: Value) throws -> [ObjectKey] {
        let c = Int(p.foreignClassID) - 1
        guard c >= 0, c < classes.count else { throw StorageError.noSuchProperty(className: "?", property: p.name) }
        let (cls, property) = try resolve(p)
        if property.isIndexed, let v = Self.coreValue(value), let keys = try file.objects(of: cls, property: property, equalTo: v) {
            return keys.map(Self.ourKey)
        }
        var out: [ObjectKey] = []
        try scan(TableHandle(foreignName: classes[c].name, classID: UInt32(c + 1))) { leaf in
            let col = try leaf.column(p)
            switch (p.type, value) {
            case (.int, .int(let x)):
                for i in 0..<leaf.count where !col.isNull(i) && col.int(i) == x { out.append(leaf.key(i)) }
            case (.string, .string(var s)):
                try s.withUTF8 { needle in
                    for i in 0..<leaf.count {
                        let hit = try col.withUTF8(i) { $0.elementsEqual(UnsafeRawBufferPointer(needle)) } ?? false
                        if hit { out.append(leaf.key(i)) }
                    }
                }
            default:
                for i in 0..<leaf.count where try col.value(i) == value { out.append(leaf.key(i)) }
            }
            return true
        }
        return out
    }

    public func object(_ table: TableHandle, primaryKey value: Value) throws -> ObjectKey? {
        let c = try classNumber(table)
        guard let pk = schemas[c].properties.first(where: \.isPrimaryKey) else {
            throw StorageError.invalidValue(className: classes[c].name, property: "", reason: "the class has no primary key")
        }
        return try find(property(table, pk.name), equalTo: value).first
    }

    public func indexCandidates(_ p: PropertyHandle, mayEqual value: Value) throws -> [ObjectKey]? { nil }
    public func objects(_ p: PropertyHandle, withElement value: Value) throws -> [ObjectKey]? { nil }
    /// An indexed string property's order, read from the column rather than the index: Realm Core's index is not
    /// in byte order (DECISIONS 100), so the column is sorted in place (`keysInStringOrder`, DECISIONS 107), on as
    /// many threads as a scan of the class (DECISIONS 110).
    public func keysInIndexOrder(_ p: PropertyHandle) throws -> (keys: [ObjectKey], runStarts: [Int])? {
        let (cls, property) = try resolve(p)
        guard property.isIndexed, property.collection == .none, property.type == .string else { return nil }
        // Our keys are Realm Core's, bit for bit (`ourKey`): written where they end up, not copied after.
        var starts: [Int] = []
        let keys = try [ObjectKey](unsafeUninitializedCapacity: cls.objectCount) { buffer, count in
            try buffer.withMemoryRebound(to: Int64.self) { raw in
                (count, starts) = try file.keysInStringOrder(of: cls, property: property, runs: ParallelReads.runs(objects: cls.objectCount), into: raw)
            }
        }
        return (keys, starts)
    }

    // MARK: Reading

    public var scansCollectionsInLeaves: Bool { false }
    public func releaseDecryptedPagesIfOverBudget() {}
    public func openSibling() throws -> any ObjectReader { self }
    public func close() {}

    /// A value to look up in a Realm Core index, as the file stores it; nil for a type it does not index.
    static func coreValue(_ v: Value) -> CoreValue? {
        switch v {
        case .null: return .null
        case .int(let i): return .int(i)
        case .bool(let b): return .bool(b)
        case .string(let s): return .string(s)
        case .date(let t): return .timestamp(seconds: t.seconds, nanoseconds: t.nanoseconds)
        case .objectId(let o): return .objectId(o.byteArray)
        case .uuid(let u): return .uuid(withUnsafeBytes(of: u.uuid) { Array($0) })
        default: return nil
        }
    }

    /// Realm Core keys are signed; those of live objects are never negative (unresolved ones are hidden).
    static func coreKey(_ key: ObjectKey) -> Int64? { key.rawValue <= UInt64(Int64.max) ? Int64(key.rawValue) : nil }
    static func ourKey(_ key: Int64) -> ObjectKey { ObjectKey(UInt64(bitPattern: key)) }
}

/// A leaf of a Realm Core class as a scan sees it.
struct CoreLeafView: ForeignLeaf {
    let reader: CoreFileReader
    let classNumber: Int
    let leaf: CoreObjectLeaf

    var count: Int { leaf.count }
    func key(_ row: Int) -> ObjectKey { CoreFileReader.ourKey(leaf.key(row)) }
    func appendKeys(of rows: [Int32], to keys: inout [ObjectKey]) {
        for r in rows { keys.append(CoreFileReader.ourKey(leaf.key(Int(r)))) }
    }

    func column(_ p: PropertyHandle) throws -> ColumnCursor {
        let cls = reader.classes[classNumber]
        let column = Int(p.foreignColumn)
        guard Int(p.foreignClassID) == classNumber + 1, column < cls.properties.count else {
            throw StorageError.noSuchProperty(className: cls.name, property: p.name)
        }
        let property = cls.properties[column]
        let col = try leaf.column(property)
        if col.isInPlace, property.collection == .none, Self.readsInPlace(property.type) {
            return ColumnCursor(foreign: CoreColumnView(reader: reader, cls: cls, property: property, column: col), property: p)
        }
        var values: [Value] = []
        values.reserveCapacity(leaf.count)
        for i in 0..<leaf.count { values.append(try reader.ours(try col.value(i), property, cls)) }
        return ColumnCursor(values: values, property: p)
    }
}

extension CoreLeafView {
    /// The types `CoreColumnView` reads in place (a switch: an array literal here was made once per leaf).
    static func readsInPlace(_ type: CorePropertyType) -> Bool {
        switch type {
        case .int, .bool, .float, .double, .string, .link: return true
        default: return false
        }
    }
}

/// A column of single ints, bools, floats, doubles, strings or links, read in place: the scan's filters read the
/// leaf where it lies (`keepInts`, `keepStrings`), nothing is decoded for the leaf first.
final class CoreColumnView: ForeignColumn {
    let reader: CoreFileReader
    let cls: CoreClass
    let property: CoreProperty
    let column: CoreColumnLeaf

    init(reader: CoreFileReader, cls: CoreClass, property: CoreProperty, column: CoreColumnLeaf) {
        self.reader = reader
        self.cls = cls
        self.property = property
        self.column = column
    }

    func value(_ row: Int) throws -> Value {
        // The values `ours` would make of what `column.value` reads, without going through `CoreValue`.
        switch property.type {
        case .int: return column.isNull(row) ? .null : .int(column.int(row))
        case .bool: return column.isNull(row) ? .null : .bool(column.bool(row))
        case .double: return column.isNull(row) ? .null : .double(column.double(row))
        default: return try reader.ours(try column.value(row), property, cls)
        }
    }

    func keepInts(_ rows: inout [Int32], in lo: Int64, _ hi: Int64, negate: Bool, nullMatches: Bool) -> Bool {
        column.keepInts(&rows, in: lo, hi, negate: negate, nullMatches: nullMatches)
    }

    func keepStrings(_ rows: inout [Int32], equalTo needle: UnsafeRawBufferPointer, negate: Bool, nullMatches: Bool) throws -> Bool {
        column.keepStrings(&rows, equalTo: needle, negate: negate, nullMatches: nullMatches)
    }

    func keepStrings(_ rows: inout [Int32], nullMatches: Bool, where test: (UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        try column.keepStrings(&rows, nullMatches: nullMatches, where: test)
    }
    func isNull(_ row: Int) -> Bool { column.isNull(row) }
    func int(_ row: Int) -> Int64 { column.int(row) }
    func double(_ row: Int) -> Double { column.double(row) }
    func bool(_ row: Int) -> Bool { column.bool(row) }
    func link(_ row: Int) -> ObjectKey? { column.linkKey(row).map(CoreFileReader.ourKey) }
    func withUTF8(_ row: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool { try column.withStringBytes(row, body) }
}
