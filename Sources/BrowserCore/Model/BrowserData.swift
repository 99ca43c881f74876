import Foundation
import RealmCoreFile
import RealmStorage
import RealmTools

/// The database as the browser reads it: one snapshot at a time (replaced when another process commits),
/// rows read on demand — a table of a million objects costs one O(log n) key lookup per visible row.
///
/// A Realm Core file is read in place through a `CoreFileReader` (read-only); `database` is then an empty
/// in-memory database that nothing reads, and editing goes through `:convert`.
public final class BrowserData {
    public let database: Database
    /// The version read: a snapshot, or the explicit write transaction while one is open (reads then see its
    /// uncommitted changes); the reader of a Realm Core file.
    public internal(set) var snapshot: any ObjectReader
    public internal(set) var fileBytes: Int
    /// Lists and backlink sets read in this snapshot (a list is stored whole, so one read gives every row).
    private var collections: [String: [Value]] = [:]
    /// The keys of dictionaries read in this snapshot (their values are in `collections`).
    var dictionaryKeys: [String: [String]] = [:]
    /// Table cells of collection properties (a count and the first elements) made in this snapshot.
    var collectionCells: [String: CellText] = [:]
    private var tables: [String: TableHandle] = [:]
    private var properties: [String: PropertyHandle] = [:]
    /// The object view's last lines: the reducer and the renderer ask for the same ones several times per key.
    var objectLinesCache: (id: String, lines: [ObjectLine])?
    /// Object keys looked up by position in a class (for tests: only visible rows may be read).
    var positionLookups = 0
    /// Collections read for table cells (for tests: once per version).
    var collectionCellReads = 0

    /// The Realm Core file shown, read in place (read-only; `:convert` writes a copy of this format to edit).
    public internal(set) var realmCore: RealmCoreFile?

    public init(database: Database) throws {
        self.database = database
        realmCore = nil
        snapshot = try database.snapshot()
        fileBytes = BrowserData.size(of: database)
    }

    /// A Realm Core file, read in place (the file is only read).
    public init(realmCore: RealmCoreFile) throws {
        database = try Database.inMemory(identifier: "realm-core-\(UUID().uuidString)")
        self.realmCore = realmCore
        snapshot = try CoreFileReader(file: realmCore)
        fileBytes = realmCore.fileSize
    }

    /// The Realm Core file at `path`, read in place, or from a snapshot copy while an app has it open; opened
    /// again when it changes (`refreshIfChanged`).
    public convenience init(realmCorePath path: String, key: [UInt8]?) throws {
        let opened = try CoreSource.open(path, key: key)
        try self.init(realmCore: opened.file)
        coreSource = opened.source
    }

    /// Where the Realm Core file shown comes from, when it is watched for changes.
    struct CoreSource {
        let path: String
        let key: [UInt8]?
        /// The file's size and modification time when it was read.
        let stamp: RealmCoreFile.Stamp?
        /// Whether a snapshot copy is read (an app had the file open).
        let isSnapshot: Bool

        static func open(_ path: String, key: [UInt8]?) throws -> (file: RealmCoreFile, source: CoreSource) {
            // Taken first: a commit after it makes the next check open the file again.
            let stamp = RealmCoreFile.stamp(path: path)
            let (file, isSnapshot) = try RealmCoreFile.openConsistent(path: path, key: key)
            return (file, CoreSource(path: path, key: key, stamp: stamp, isSnapshot: isSnapshot))
        }
    }

    var coreSource: CoreSource?
    /// Whether the Realm Core file shown is a snapshot copy, an app having it open.
    public var isSnapshotOfOpenFile: Bool { coreSource?.isSnapshot ?? false }

    /// A newer version the user chose not to see (`Esc` while the screen was being brought to it): not offered
    /// again, the screen staying on the version it shows until the next commit.
    var declined: (version: UInt64?, stamp: RealmCoreFile.Stamp?)?

    deinit {
        if let tx = transaction { tx.rollback() } else { snapshot.close() }
    }

    /// The write transaction begun with `t`, until it is committed or rolled back.
    public internal(set) var transaction: WriteTransaction?
    /// Cells changed in it (marked on screen) and how many edits it holds.
    public internal(set) var changedCells: Set<CellID> = []
    public internal(set) var pendingEdits = 0

    /// Forgets what was read (after a write in the open transaction).
    func invalidateCaches() {
        collections.removeAll()
        dictionaryKeys.removeAll()
        collectionCells.removeAll()
        tables.removeAll()
        properties.removeAll()
        objectLinesCache = nil
    }

    public var path: String { coreSource?.path ?? realmCore?.path ?? database.path }
    public var isReadOnly: Bool { database.isReadOnly || realmCore != nil }
    public var version: UInt64 { snapshot.version }
    public var schemaVersion: UInt64 { snapshot.schemaVersion }

    /// Runs `body` with this browser's snapshot closed (compaction needs the file to itself), then takes a
    /// fresh one, whether `body` succeeded or not.
    func withSnapshotClosed(_ body: () throws -> Void) throws {
        snapshot.close()
        var failure: Error?
        do { try body() } catch { failure = error }
        snapshot = try database.snapshot()
        invalidateCaches()
        fileBytes = BrowserData.size(of: database)
        if let failure { throw failure }
    }

    static func size(of db: Database) -> Int {
        if db.isInMemory { return 0 }
        return ((try? FileManager.default.attributesOfItem(atPath: db.path))?[.size] as? Int) ?? 0
    }

    // MARK: Schema

    public var classNames: [String] { snapshot.schema.map(\.name) }

    public func classSchema(_ name: String) -> ClassSchema? { snapshot.classSchema(name) }

    public func count(_ className: String) throws -> Int { try snapshot.count(table(className)) }

    func table(_ name: String) throws -> TableHandle {
        if let t = tables[name] { return t }
        let t = try snapshot.table(name)
        tables[name] = t
        return t
    }

    func handle(_ className: String, _ property: String) throws -> PropertyHandle {
        let k = "\(className).\(property)"
        if let h = properties[k] { return h }
        let h = try snapshot.property(table(className), property)
        properties[k] = h
        return h
    }

    /// Link properties of other classes that point at `className` and that no `LinkingObjects` property of
    /// `className` declares: its incoming links nobody modelled, shown as extra columns.
    public func undeclaredIncoming(_ className: String) -> [(originClass: String, property: String)] {
        let schema = snapshot.schema
        guard let target = schema.first(where: { $0.name == className }) else { return [] }
        var out: [(String, String)] = []
        for c in schema {
            for p in c.properties where p.type == .link && !p.isList && p.objectClassName == className {
                let declared = target.properties.contains {
                    $0.type == .linkingObjects && $0.objectClassName == c.name && $0.originProperty == p.name
                }
                if !declared { out.append((c.name, p.name)) }
            }
            for p in c.properties where p.type == .link && p.isList && p.objectClassName == className {
                let declared = target.properties.contains {
                    $0.type == .linkingObjects && $0.objectClassName == c.name && $0.originProperty == p.name
                }
                if !declared { out.append((c.name, p.name)) }
            }
        }
        return out
    }

    // MARK: Rows

    /// The class of a table's rows, or nil for a list of primitives.
    public func rowClass(_ source: TableSource) -> String? { BrowserData.rowClass(source, in: snapshot) }

    static func rowClass(_ source: TableSource, in reader: any ObjectReader) -> String? {
        switch source {
        case .objects(let c, _): return c
        case .list(let owner, let p):
            guard let prop = reader.classSchema(owner.className)?.property(named: p), prop.type == .link else { return nil }
            return prop.objectClassName
        case .linkingObjects(let owner, let p):
            return reader.classSchema(owner.className)?.property(named: p)?.objectClassName
        case .backlinks(_, let c, _): return c
        case .filtered(let b, _): return rowClass(b, in: reader)
        case .entries: return nil
        }
    }

    /// The property of a list table (nil for tables that are not lists).
    public func listProperty(_ source: TableSource) -> PropertySchema? {
        guard case .list(let owner, let p) = source else { return nil }
        return classSchema(owner.className)?.property(named: p)
    }

    /// How many rows a table has.
    public func rowCount(_ source: TableSource) throws -> Int {
        switch source {
        case .objects(let c, let filter): return try filter?.keys.count ?? count(c)
        case .filtered(_, let f): return f.keys.count
        default: return try collection(source).count
        }
    }

    /// The object at a row (nil past the end, or for a list of primitives).
    public func key(row: Int, in source: TableSource) throws -> ObjectKey? {
        guard row >= 0 else { return nil }
        switch source {
        case .objects(let c, let filter):
            if let f = filter { return row < f.keys.count ? f.keys[row] : nil }
            positionLookups += 1
            return try snapshot.key(at: row, in: table(c))
        case .filtered(_, let f): return row < f.keys.count ? f.keys[row] : nil
        case .entries: return nil
        default:
            let values = try collection(source)
            guard row < values.count, case .link(let k) = values[row] else { return nil }
            return k
        }
    }

    /// The value at a row of a list of primitives.
    public func element(row: Int, in source: TableSource) throws -> Value? {
        let values = try collection(source)
        return row >= 0 && row < values.count ? values[row] : nil
    }

    /// Where an object is in a table now (after a refresh), or nil when it is no longer there.
    public func position(of key: ObjectKey, in source: TableSource) throws -> Int? {
        switch source {
        case .objects(let c, let filter):
            if let f = filter { return f.keys.firstIndex(of: key) }
            // Keys are in ascending order: binary search with O(log n) lookups.
            let t = try table(c)
            var lo = 0, hi = try snapshot.count(t) - 1
            while lo <= hi {
                let mid = (lo + hi) / 2
                guard let k = try snapshot.key(at: mid, in: t) else { return nil }
                if k == key { return mid }
                if k < key { lo = mid + 1 } else { hi = mid - 1 }
            }
            return nil
        case .filtered(_, let f): return f.keys.firstIndex(of: key)
        default:
            return try collection(source).firstIndex(of: .link(key))
        }
    }

    /// The elements of a list, or the origins of linking objects, read once per snapshot.
    func collection(_ source: TableSource) throws -> [Value] {
        switch source {
        case .objects: return []
        case .filtered(_, let f): return f.keys.map { .link($0) }
        default: break
        }
        guard let id = BrowserData.collectionID(source) else { return [] }
        if let v = collections[id] { return v }
        let read = try BrowserData.readCollection(source, in: snapshot)
        install(read, for: source)
        return read.values
    }

    /// Where a collection table's contents are kept once read (nil for a class table).
    static func collectionID(_ source: TableSource) -> String? {
        switch source {
        case .objects, .filtered: return nil
        case .list(let o, let p): return "list \(o.className) \(o.key.rawValue) \(p)"
        case .linkingObjects(let o, let p): return "lo \(o.className) \(o.key.rawValue) \(p)"
        case .backlinks(let o, let c, let p): return "bl \(o.className) \(o.key.rawValue) \(c) \(p)"
        case .entries(let o, let p, let path): return "entries \(o.className) \(o.key.rawValue) \(p) \(path)"
        }
    }

    /// Reads what a collection table shows from `reader`, on any thread (a job reads a large list off the main
    /// loop this way, then `install`s it).
    static func readCollection(_ source: TableSource, in reader: any ObjectReader) throws -> CollectionContents {
        switch source {
        case .objects, .filtered: return CollectionContents(values: [], dictionaryKeys: nil)
        case .list(let o, let p), .linkingObjects(let o, let p):
            return CollectionContents(values: try reader.list(o.key, reader.property(reader.table(o.className), p)), dictionaryKeys: nil)
        case .backlinks(let o, let c, let p):
            let keys = try reader.backlinks(o.key, in: reader.table(o.className), from: c, property: p)
            return CollectionContents(values: keys.map { .link($0) }, dictionaryKeys: nil)
        case .entries(let o, let p, let path):
            switch try nestedCollection(o, p, path: path, in: reader) {
            case .list(let l): return CollectionContents(values: l, dictionaryKeys: nil)
            case .dictionary(let d): return CollectionContents(values: Array(d.values), dictionaryKeys: Array(d.keys))
            default: return CollectionContents(values: [], dictionaryKeys: nil)
            }
        }
    }

    /// Keeps a collection table's contents read elsewhere (by a job, from a reader of this same version).
    func install(_ contents: CollectionContents, for source: TableSource) {
        guard let id = BrowserData.collectionID(source) else { return }
        collections[id] = contents.values
        if let keys = contents.dictionaryKeys { dictionaryKeys[id] = keys }
    }

    // MARK: Objects

    public func exists(_ ref: ObjectRef) -> Bool {
        guard let t = try? table(ref.className) else { return false }
        return (try? snapshot.exists(t, ref.key)) ?? false
    }

    /// The value of a non-list property.
    public func value(_ ref: ObjectRef, _ property: String) throws -> Value {
        try snapshot.value(ref.key, handle(ref.className, property))
    }

    /// The elements of a list property or the origins of a `LinkingObjects` property.
    public func list(_ ref: ObjectRef, _ property: String) throws -> [Value] {
        try collection(.list(owner: ref, property: property))
    }

    /// Every incoming link of an object, declared or not.
    public func incoming(_ ref: ObjectRef) throws -> [(className: String, property: String, keys: [ObjectKey])] {
        try snapshot.allBacklinks(ref.key, in: table(ref.className))
    }

    /// Objects of `originClass` linking to `ref` through `property`.
    public func backlinks(_ ref: ObjectRef, from originClass: String, property: String) throws -> [ObjectKey] {
        try collection(.backlinks(owner: ref, originClass: originClass, property: property)).compactMap {
            if case .link(let k) = $0 { return k } else { return nil }
        }
    }

    /// `#12 Ann`: the primary key (or `#` and the object key without one) and a name-like property.
    public func label(_ ref: ObjectRef) -> String {
        guard let cs = classSchema(ref.className) else { return "#\(ref.key.rawValue)" }
        // Long keys (object ids, uuids, long strings) are cut: the label names an object, the view shows all.
        func short(_ t: String) -> String { t.count > 12 ? String(t.prefix(8)) + "…" : t }
        var s: String
        if let pk = cs.properties.first(where: \.isPrimaryKey), let v = try? value(ref, pk.name) {
            switch v {
            case .int(let i): s = "#\(i)"
            case .string(let t): s = "#" + short(t)
            case .objectId(let o): s = "#" + short(o.hexString)
            case .uuid(let u): s = "#" + short(u.uuidString.lowercased())
            default: s = "#\(ref.key.rawValue)"
            }
        } else {
            s = "#\(ref.key.rawValue)"
        }
        let nameLike = ["name", "title", "displayName", "label", "username"]
        if let p = nameLike.lazy.compactMap({ n in cs.properties.first { $0.name == n && $0.type == .string && !$0.isList } }).first,
           !p.isPrimaryKey, case .string(let name)? = try? value(ref, p.name), !name.isEmpty {
            s += " " + name
        }
        return s
    }
}
