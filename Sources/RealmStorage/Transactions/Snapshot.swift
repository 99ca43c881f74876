import Atomics
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where staged lookups leave the sum of the loads they make only to fill the cache, so that those are not
/// optimised away (one atomic for the process: a snapshot may be read from several threads).
let touchSink = ManagedAtomic<UInt64>(0)

/// A class of objects as seen by one snapshot: resolve once, then use for fast access.
public struct TableHandle: Sendable {
    public let name: String
    let classID: UInt32
}

/// A property resolved once for fast access.
public struct PropertyHandle: Sendable {
    public let name: String
    public let type: PropertyType
    public let isList: Bool
    public let isOptional: Bool
    let info: PropertyInfo
    let classID: UInt32

    public var isSet: Bool { info.isSet }
    public var isDictionary: Bool { info.isDictionary }
}

/// A consistent, read-only view of one committed version of the database.
///
/// Readers never block: a snapshot sees its version no matter what is committed after it was taken.
/// A snapshot belongs to one thread at a time.
public class Snapshot: NodeSource {
    public let database: Database
    let mapping: Mapping
    /// Pages of this version that only the commit log holds (DECISIONS 53); nil when the data file holds all.
    let logIndex: LogIndex?
    var meta: Meta
    /// `meta.hasPageBoundChecksums`, in a constant: every node read passes it (a `var` of a class is
    /// accessed with an exclusivity check).
    let pageBoundChecksums: Bool
    var catalogue: Catalogue
    private var readerSlot: Int?
    /// Set by `close()`: the version's pages may be reused from then on.
    private(set) var isClosed = false
    /// Every page of this version lies below this limit.
    var pageLimit: UInt64
    /// Public schemas of classes asked for (read snapshots only; see `classSchema`). The lock is stored in the
    /// snapshot: a separately allocated pthread mutex was two allocations per transaction.
    private let schemaCache = Mutex([String: ClassSchema]())
    /// Leaf walks in progress (`walkLeaves`): only the outermost may give decrypted pages back.
    var walkDepth = 0
    /// The committed table inner nodes where lookups by key enter committed nodes (trees' roots, or committed
    /// subtrees under nodes this transaction changed), decoded once with the inner nodes below them that lookups
    /// passed (DECISIONS 63): a committed node never changes while a snapshot can read it. Eight at most, looked
    /// through in order (cheaper than hashing for so few).
    var innerLookups: [(ref: UInt64, lookup: InnerLookup)] = []
    static let innerLookupLimit = 8
    /// Such nodes offered once and not decoded: a node is decoded when a second lookup enters there (a
    /// transaction that looks up one object, as a single-object commit does, would only pay for decoding).
    /// The first two in fields of their own, so that such a transaction allocates nothing for them (a
    /// single-object commit offers two: the root its key lookup enters, then the committed child under the root
    /// its insert changed; an array made and freed for the second was ~1.5 % of its time, `perf`).
    private var offeredInnerLookup: UInt64 = 0
    private var secondOfferedInnerLookup: UInt64 = 0
    private var moreOfferedInnerLookups: [UInt64] = []

    /// `catalogue`: the catalogue of `meta`'s commit root when the caller has it (a write transaction that
    /// starts where this process's last commit ended, `WriterHandover`); otherwise it is read from the root.
    /// `source`: a snapshot of the same version whose commit-log index this one reads through (`sibling()`).
    init(database: Database, meta: Meta, mapping: Mapping, readerSlot: Int?, catalogue handed: Catalogue? = nil,
         sharingLogWith source: Snapshot? = nil) throws {
        self.database = database
        self.meta = meta
        self.pageBoundChecksums = meta.hasPageBoundChecksums
        self.mapping = mapping
        self.readerSlot = nil
        self.pageLimit = meta.pageCount
        self.catalogue = Catalogue()
        if let source {
            self.logIndex = source.logIndex
        } else {
            self.logIndex = try database.logPages?.index(for: meta)
        }
        if let handed {
            catalogue = handed
        } else if meta.catalogueRef != 0 {
            let node = try self.node(meta.catalogueRef, expected: .catalogue)
            catalogue = try database.catalogues.catalogue(node: node, ref: meta.catalogueRef, path: database.path)
        }
        // Owned from here on: a failure above leaves the slot to the caller.
        if let slot = readerSlot {
            self.readerSlot = slot
            database.snapshotOpened()
        }
    }

    deinit { close() }

    /// Another snapshot of this version, for another thread (a snapshot belongs to one thread at a time): it
    /// holds the version itself, so it stays readable after this one closes. Reads the same mapping and commit
    /// log index, which are safe to share.
    public func sibling() throws -> Snapshot {
        precondition(!isClosed, "sibling() of a closed snapshot")
        let slot = try database.coordinator.claimReaderSlot(version: meta.version)
        do {
            return try Snapshot(database: database, meta: meta, mapping: mapping, readerSlot: slot,
                                catalogue: catalogue, sharingLogWith: self)
        } catch {
            database.coordinator.releaseReaderSlot(slot)
            throw error
        }
    }

    /// Releases the snapshot's hold on its version. Further use is a programmer error.
    public func close() {
        isClosed = true
        if let slot = readerSlot {
            database.coordinator.releaseReaderSlot(slot)
            database.snapshotClosed()
            readerSlot = nil
        }
    }

    /// The transaction version this snapshot sees.
    public var version: UInt64 { meta.version }
    public var schemaVersion: UInt64 { catalogue.schemaVersion }
    public var displayPath: String { database.path }

    // MARK: NodeSource

    func node(_ ref: UInt64, expected: NodeType?) throws -> UnsafeRawBufferPointer {
        guard ref >= 2, ref < pageLimit else { throw corrupt(ref, "reference outside the file (\(pageLimit) pages)") }
        if let log = logIndex, let b = log.node(ref) {
            guard b.count >= nodeHeaderSize, Int(b.u32(at: 4)) == b.count else {
                throw corrupt(ref, "its copy in the commit log has length \(b.count >= 8 ? Int(b.u32(at: 4)) : b.count), not \(b.count)")
            }
            if let t = expected, b[0] != t.rawValue { throw corrupt(ref, "expected node type \(t.rawValue), found \(b[0])") }
            // Checked as a node in the file is: a checkpoint copies it there with the same checksum.
            guard mapping.checksumMatches(b, ref: ref, pageBound: pageBoundChecksums) else {
                throw corrupt(ref, "its copy in the commit log: " + Snapshot.checksumFailure(b, pageBound: pageBoundChecksums))
            }
            return b
        }
        try mapping.materializeNode(ref, limit: pageLimit)
        let start = UnsafeRawPointer(mapping.base.advanced(by: Int(ref) * pageSize))
        let length = Int(UInt32(littleEndian: start.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        guard length >= nodeHeaderSize, ref + UInt64(pagesFor(bytes: length)) <= pageLimit else {
            throw corrupt(ref, "node length \(length) runs past the end of the file")
        }
        if let t = expected, start.load(as: UInt8.self) != t.rawValue {
            throw corrupt(ref, "expected node type \(t.rawValue), found \(start.load(as: UInt8.self))")
        }
        let node = UnsafeRawBufferPointer(start: start, count: length)
        guard mapping.checksumMatches(node, ref: ref, pageBound: pageBoundChecksums) else {
            throw corrupt(ref, Snapshot.checksumFailure(node, pageBound: pageBoundChecksums))
        }
        return node
    }

    /// What a node that fails its checksum is said to be, by the type its first byte names.
    /// `pageBound` (format 6): the checksum covers the page too, so the bytes may be whole but another page's.
    static func checksumFailure(_ node: UnsafeRawBufferPointer, pageBound: Bool) -> String {
        let kind: String
        switch NodeType(rawValue: node[0]) {
        case .tableInner: kind = "table inner node"
        case .cluster: kind = "cluster"
        case .blob: kind = "blob"
        case .indexLeaf: kind = "index leaf"
        case .indexInner: kind = "index inner node"
        case .catalogue: kind = "commit root"
        case nil: kind = "node of unknown type \(node[0])"
        }
        return "\(kind) of \(node.count) bytes fails its checksum (" + (pageBound ? "damaged, or not the node written at this page)" : "damaged)")
    }

    // MARK: Schema

    /// Every class with its visible properties.
    public var schema: [ClassSchema] { catalogue.classes.map { publicSchema($0) } }

    /// The stored ID of a class, as typed links (`Value.typedLink`) name it; nil when there is no such class.
    public func classID(named name: String) -> UInt32? { catalogue.classInfo(named: name)?.classID }

    /// The name of the class with stored ID `id`, or nil when there is none (a typed link's class).
    public func className(classID id: UInt32) -> String? { catalogue.classIndex(id: id).map { catalogue.classes[$0].name } }

    /// A class's schema. A read snapshot's catalogue never changes, so each class is converted once: the
    /// query binder asks for it several times per query (`perf`: 36 % of 10,000 indexed lookups went here).
    public func classSchema(_ name: String) -> ClassSchema? {
        if let s = schemaCache.withLock({ $0[name] }) { return s }
        guard let s = catalogue.classInfo(named: name).map({ publicSchema($0) }) else { return nil }
        schemaCache.withLock { $0[name] = s }
        return s
    }

    /// `classSchema` without the cache (a write transaction's catalogue changes under it).
    func uncachedClassSchema(_ name: String) -> ClassSchema? { catalogue.classInfo(named: name).map { publicSchema($0) } }

    func publicSchema(_ c: ClassInfo) -> ClassSchema {
        ClassSchema(name: c.name, properties: c.properties.filter { !$0.isHidden }.map { p in
            PropertySchema(name: p.name, type: p.type, isOptional: p.isOptional, isList: p.isList,
                           isIndexed: p.flags.contains(.indexed), isPrimaryKey: p.isPrimaryKey,
                           objectClassName: p.targetClassID == 0 ? nil : catalogue.classInfo(id: p.targetClassID)?.name,
                           originProperty: p.type == .linkingObjects
                               ? catalogue.classInfo(id: p.targetClassID)?.property(column: p.originColumnID)?.name : nil,
                           isSet: p.isSet, isDictionary: p.isDictionary)
        }, isEmbedded: c.isEmbedded)
    }

    public func table(_ name: String) throws -> TableHandle {
        guard let c = catalogue.classInfo(named: name) else { throw StorageError.noSuchClass(name) }
        return TableHandle(name: name, classID: c.classID)
    }

    public func property(_ table: TableHandle, _ name: String) throws -> PropertyHandle {
        let c = try classInfo(table)
        guard let p = c.property(named: name) else { throw StorageError.noSuchProperty(className: c.name, property: name) }
        return PropertyHandle(name: p.name, type: p.type, isList: p.isList, isOptional: p.isOptional, info: p, classID: c.classID)
    }

    func classInfo(_ t: TableHandle) throws -> ClassInfo {
        guard let c = catalogue.classInfo(id: t.classID) else { throw StorageError.noSuchClass(t.name) }
        return c
    }

    /// The current state of a property (its index root may have changed since the handle was made).
    func currentInfo(_ p: PropertyHandle) throws -> (ClassInfo, PropertyInfo) {
        guard let c = catalogue.classInfo(id: p.classID), let info = c.property(column: p.info.columnID) else {
            throw StorageError.noSuchProperty(className: "class \(p.classID)", property: p.name)
        }
        return (c, info)
    }

    // MARK: Trees (overridden by write transactions, which hold dirty nodes)

    func root(of classID: UInt32) -> TreeChild {
        .clean(catalogue.tableRoot(id: classID))
    }

    func indexTree(_ classID: UInt32, _ p: PropertyInfo) throws -> EntryTree { storedIndexTree(classID, p) }

    /// `indexTree` without a write transaction's waiting entries put in first: for a caller that counts
    /// those itself (change sets ask `hasPendingSlots`).
    func storedIndexTree(_ classID: UInt32, _ p: PropertyInfo) -> EntryTree { EntryTree(root: p.indexRoot) }

    func locate(_ classID: UInt32, _ key: UInt64) throws -> RowLocation? {
        try TableTree.locate(root(of: classID), key: key, source: self)
    }

    func innerLookup(_ ref: UInt64) -> InnerLookup? {
        for e in innerLookups where e.ref == ref { return e.lookup }
        return nil
    }

    func keepInnerLookup(_ ref: UInt64, _ view: InnerView) -> InnerLookup? {
        guard innerLookups.count < Snapshot.innerLookupLimit else { return nil }
        guard ref == offeredInnerLookup || ref == secondOfferedInnerLookup || moreOfferedInnerLookups.contains(ref) else {
            if offeredInnerLookup == 0 {
                offeredInnerLookup = ref
            } else if secondOfferedInnerLookup == 0 {
                secondOfferedInnerLookup = ref
            } else if moreOfferedInnerLookups.count < Snapshot.innerLookupLimit {
                moreOfferedInnerLookups.append(ref)
            }
            return nil
        }
        let lookup = InnerLookup(view)
        innerLookups.append((ref, lookup))
        return lookup
    }

    /// The raw stored value of a column (list refs and backlink tags as `.int`).
    func rawValue(_ loc: RowLocation, _ p: PropertyInfo) throws -> Value {
        switch loc {
        case .clean(let v, let row): return try v.value(row: row, property: p, source: self)
        case .dirty(let l, let row): return try l.value(row: row, property: p)
        }
    }

    // MARK: Objects

    public func count(_ table: TableHandle) throws -> Int { Int(try classInfo(table).objectCount) }

    public func count(_ className: String) throws -> Int { try count(table(className)) }

    public func exists(_ table: TableHandle, _ key: ObjectKey) throws -> Bool {
        try naming(table.classID) { try locate(table.classID, key.rawValue) != nil }
    }

    /// Runs `body`, a read of class `classID`; a `corrupt` error it throws names the class as well.
    @inline(__always) func naming<T>(_ classID: UInt32, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch StorageError.corrupt(let path, let location, let reason) where !location.hasPrefix("class ") {
            throw StorageError.corrupt(path: path, location: "class \(className(classID)), \(location)", reason: reason)
        }
    }

    /// The key of the object at `position` in key order (O(log n)).
    public func key(at position: Int, in table: TableHandle) throws -> ObjectKey? {
        guard position >= 0 else { return nil }
        return try naming(table.classID) { try TableTree.key(at: position, root(of: table.classID), source: self).map(ObjectKey.init) }
    }

    /// Every object key in key order; `body` returns false to stop.
    public func forEachKey(_ table: TableHandle, _ body: (ObjectKey) throws -> Bool) throws {
        try walkLeaves(table.classID) { leaf in
            for i in 0..<leaf.count where !(try body(ObjectKey(leaf.key(at: i)))) { return false }
            return true
        }
    }

    public func keys(_ table: TableHandle) throws -> [ObjectKey] {
        var out: [ObjectKey] = []
        try forEachKey(table) { out.append($0); return true }
        return out
    }

    /// The value of a non-list property of an object. Links come back as `.link(key)` or `.null`.
    public func value(_ key: ObjectKey, _ p: PropertyHandle) throws -> Value {
        // The handle's column ID and type are stable; only index roots change, and reads need neither.
        let info = p.info
        guard !info.isCollection, info.type != .linkingObjects else {
            throw StorageError.typeMismatch(className: className(p.classID), property: info.name, expected: "a list accessor", got: "value access")
        }
        return try naming(p.classID) {
            guard let loc = try locate(p.classID, key.rawValue) else {
                throw StorageError.noSuchObject(className: className(p.classID), key: key.rawValue)
            }
            return try rawValue(loc, info)
        }
    }

    func className(_ id: UInt32) -> String { catalogue.classInfo(id: id)?.name ?? "class \(id)" }

    public func value(_ key: ObjectKey, _ className: String, _ property: String) throws -> Value {
        let t = try table(className)
        return try value(key, self.property(t, property))
    }

    // MARK: Lists and backlinks

    /// The elements of a list property (links as `.link(key)`), or the origins of a `linkingObjects` property.
    public func list(_ key: ObjectKey, _ p: PropertyHandle) throws -> [Value] {
        try naming(p.classID) { try listOrOrigins(key, p) }
    }

    private func listOrOrigins(_ key: ObjectKey, _ p: PropertyHandle) throws -> [Value] {
        let (c, info) = try currentInfo(p)
        if info.type == .linkingObjects {
            return try linkingObjects(key, c, info).map { .link(ObjectKey($0)) }
        }
        guard info.isList || info.isSet else {
            throw StorageError.typeMismatch(className: c.name, property: info.name, expected: info.isDictionary ? "dictionary access" : "value access",
                                            got: "list access")
        }
        guard let loc = try locate(c.classID, key.rawValue) else { throw StorageError.noSuchObject(className: c.name, key: key.rawValue) }
        return try listValues(c.classID, key.rawValue, info, loc)
    }

    /// The entries of a dictionary property of an object, keys in UTF-8 byte order.
    public func dictionary(_ key: ObjectKey, _ p: PropertyHandle) throws -> ValueDictionary {
        try naming(p.classID) {
            let (c, info) = try currentInfo(p)
            guard info.isDictionary else {
                throw StorageError.typeMismatch(className: c.name, property: info.name, expected: info.isCollection ? "list access" : "value access",
                                                got: "dictionary access")
            }
            guard let loc = try locate(c.classID, key.rawValue) else { throw StorageError.noSuchObject(className: c.name, key: key.rawValue) }
            return try dictionaryValues(c.classID, key.rawValue, info, loc)
        }
    }

    func dictionaryValues(_ classID: UInt32, _ key: UInt64, _ info: PropertyInfo, _ loc: RowLocation) throws -> ValueDictionary {
        guard case .data(let bytes) = try rawValue(loc, info) else { return ValueDictionary() }
        do {
            return try DictionaryCoding.decode(bytes)
        } catch {
            throw StorageError.corrupt(path: displayPath, location: "dictionary \(className(classID)).\(info.name) of #\(key)", reason: "\(error)")
        }
    }

    func listValues(_ classID: UInt32, _ key: UInt64, _ info: PropertyInfo, _ loc: RowLocation) throws -> [Value] {
        guard case .data(let bytes) = try rawValue(loc, info) else { return [] }
        do {
            return try ListCoding.decode(bytes)
        } catch let e as ListCoding.Malformed {
            throw StorageError.corrupt(path: displayPath, location: "list \(className(classID)).\(info.name) of #\(key)", reason: e.reason)
        }
    }

    /// The keys of objects of `originClass` whose link property `originProperty` points at this object (or
    /// whose mixed property holds a typed link to it, at any depth; once per link): one lookup in the stored backlink tree, never a scan.
    public func backlinks(_ key: ObjectKey, in table: TableHandle, from originClass: String, property originProperty: String) throws -> [ObjectKey] {
        let c = try classInfo(table)
        guard let bl = try backlinkColumn(of: c, from: originClass, property: originProperty) else { return [] }
        return try backlinkKeys(c.classID, key.rawValue, bl).map(ObjectKey.init)
    }

    /// The backlink property of class `c` for links from `originClass.originProperty` (nil: no link was ever
    /// made, so none exist); throws when that property is neither a link to `c` nor a mixed property (whose
    /// typed links may reach any class).
    func backlinkColumn(of c: ClassInfo, from originClass: String, property originProperty: String) throws -> PropertyInfo? {
        guard let origin = catalogue.classInfo(named: originClass) else { throw StorageError.noSuchClass(originClass) }
        guard let op = origin.property(named: originProperty),
              (op.type == .link && op.targetClassID == c.classID) || op.type == .mixed else {
            throw StorageError.noSuchProperty(className: originClass, property: originProperty)
        }
        return c.properties.first { $0.type == .backlink && $0.targetClassID == origin.classID && $0.originColumnID == op.columnID }
    }

    /// The origins of many targets at once: every key whose `originProperty` links to one of `keys` (once
    /// per link, in the order of the sorted targets): one prefix scan of the backlink tree per target (a
    /// query through a link follows hundreds of targets back; DECISIONS 50). Targets that do not exist have
    /// no entries.
    public func backlinks(of keys: [ObjectKey], in table: TableHandle, from originClass: String, property originProperty: String) throws -> [ObjectKey] {
        let c = try classInfo(table)
        guard let bl = try backlinkColumn(of: c, from: originClass, property: originProperty) else { return [] }
        let tree = try backlinkTree(c.classID, bl)
        if tree.root == nil { return [] }
        var out: [ObjectKey] = []
        var touched: UInt64 = 0
        let targets = keys.sorted()
        // The tails after each target: the origin, and a counted entry's count.
        try tree.scanEach(keys: targets.map(\.rawValue), source: self, touched: &touched) { k, t in
            guard let n = BacklinkEntry.extraLinks(tail: t, after: 8) else { throw badBacklinkEntry(bl, bytes: t.count + 8) }
            let o = ObjectKey(UInt64(bigEndian: t.loadUnaligned(as: UInt64.self)))
            for _ in 0..<n { out.append(o) }
        }
        touchSink.store(touched, ordering: .relaxed)
        return out
    }

    /// Every incoming link of an object, grouped by origin class and property (declared or not).
    public func allBacklinks(_ key: ObjectKey, in table: TableHandle) throws -> [(className: String, property: String, keys: [ObjectKey])] {
        let c = try classInfo(table)
        var out: [(String, String, [ObjectKey])] = []
        for bl in c.properties where bl.type == .backlink {
            guard let origin = catalogue.classInfo(id: bl.targetClassID), let op = origin.property(column: bl.originColumnID) else { continue }
            let keys = try backlinkKeys(c.classID, key.rawValue, bl)
            if !keys.isEmpty { out.append((origin.name, op.name, keys.map(ObjectKey.init))) }
        }
        return out
    }

    func linkingObjects(_ key: ObjectKey, _ c: ClassInfo, _ info: PropertyInfo) throws -> [UInt64] {
        guard let bl = c.properties.first(where: { $0.type == .backlink && $0.targetClassID == info.targetClassID && $0.originColumnID == info.originColumnID }) else {
            return []
        }
        return try backlinkKeys(c.classID, key.rawValue, bl)
    }

    /// The origins of one object through backlink property `bl` (once per link, in key order); throws
    /// `noSuchObject` when the object does not exist.
    func backlinkKeys(_ classID: UInt32, _ key: UInt64, _ bl: PropertyInfo) throws -> [UInt64] {
        guard try locate(classID, key) != nil else {
            throw StorageError.noSuchObject(className: catalogue.classInfo(id: classID)?.name ?? "?", key: key)
        }
        var out: [UInt64] = []
        try appendBacklinks(of: key, classID, bl, to: &out)
        return out
    }

    /// The keys of a backlink set as files of format 2 stored it in the target's cluster (read once, when
    /// such a file is upgraded).
    func decodeBacklinks(_ raw: Value) throws -> [UInt64] {
        guard case .data(let bytes) = raw else { return [] }
        do {
            return try ListCoding.decodeKeys(bytes)
        } catch let e as ListCoding.Malformed {
            throw StorageError.corrupt(path: displayPath, location: "backlink set", reason: e.reason)
        }
    }
}

// MARK: - Indexes

extension Snapshot {
    /// Keys of the objects whose property equals `value`, through the index when the property has one,
    /// otherwise by scanning the column.
    public func find(_ p: PropertyHandle, equalTo value: Value) throws -> [ObjectKey] {
        try naming(p.classID) { try findKeys(p, equalTo: value) }
    }

    private func findKeys(_ p: PropertyHandle, equalTo value: Value) throws -> [ObjectKey] {
        // An indexed property that is not mixed goes straight to its index (no class copied on the way).
        if let info = catalogue.property(classID: p.classID, column: p.info.columnID),
           info.isIndexed, !info.keyIsValue, info.type != .mixed {
            return try indexMatches(p.classID, info, value, limit: Int.max, as: ObjectKey.init)
        }
        let (c, info) = try currentInfo(p)
        if info.keyIsValue { return try object(TableHandle(name: c.name, classID: c.classID), primaryKey: value).map { [$0] } ?? [] }
        if info.isIndexed, info.type != .mixed || IndexKey.mixedSpans(for: value) != nil {
            if info.type == .mixed { return try indexLookup(c.classID, info, value, limit: Int.max).map(ObjectKey.init) }
            return try indexMatches(c.classID, info, value, limit: Int.max, as: ObjectKey.init)
        }
        let mixed = info.type == .mixed
        var out: [ObjectKey] = []
        try TableTree.forEachLeaf(root(of: c.classID), source: self) { leaf in
            for i in 0..<leaf.count {
                let v: Value
                switch leaf {
                case .clean(let view): v = try view.value(row: i, property: info, source: self)
                case .dirty(let l): v = try l.value(row: i, property: info)
                }
                if mixed ? v.equalsMixed(value) : v.matchesQuery(value) { out.append(ObjectKey(leaf.key(at: i))) }
            }
            return true
        }
        return out
    }

    /// The value of `property` for each object whose `p` equals `value`, in the order of `find(p, equalTo:)`:
    /// what `find` followed by `value(_:_:)` on every key gives. When `property` is a required int primary key
    /// stored as the object key (DECISIONS 13), the values are computed from the keys `find` returns and the
    /// objects are not visited: every key it returns names an object of this snapshot, so nothing is left to
    /// check. This is SQLite's covering lookup of a rowid through an index (DECISIONS 15).
    public func values(_ property: PropertyHandle, where p: PropertyHandle, equalTo value: Value) throws -> [Value] {
        guard property.classID == p.classID else {
            throw StorageError.typeMismatch(className: className(p.classID), property: property.name,
                                            expected: "a property of the class searched", got: "a property of \(className(property.classID))")
        }
        let keys = try find(p, equalTo: value)
        if property.info.keyIsValue { return keys.map { .int($0.primaryKeyValue) } }
        return try keys.map { try self.value($0, property) }
    }

    /// The object whose primary key is `value`, if any.
    public func object(_ table: TableHandle, primaryKey value: Value) throws -> ObjectKey? {
        guard let ci = catalogue.classIndex(id: table.classID) else { throw StorageError.noSuchClass(table.name) }
        guard let pk = catalogue.classes[ci].properties.first(where: \.isPrimaryKey) else {
            throw StorageError.invalidSchema("class '\(table.name)' has no primary key")
        }
        return try naming(table.classID) {
            if pk.keyIsValue {
                guard case .int(let v) = value else { return nil }
                let key = ObjectKey.fromPrimaryKey(v)
                return try locate(table.classID, key.rawValue) != nil ? key : nil
            }
            return try indexLookup(table.classID, pk, value, limit: 1).first.map(ObjectKey.init)
        }
    }

    func indexLookup(_ classID: UInt32, _ p: PropertyInfo, _ value: Value, limit: Int) throws -> [UInt64] {
        if p.type == .mixed { return try mixedIndexLookup(classID, p, value, limit: limit) }
        return try indexMatches(classID, p, value, limit: limit) { $0 }
    }

    /// The keys `indexLookup` finds in the index of a property that is not mixed, each made by `make` (an
    /// `ObjectKey` for `find`, without a second array).
    @inline(__always)
    private func indexMatches<K>(_ classID: UInt32, _ p: PropertyInfo, _ value: Value, limit: Int, as make: (UInt64) -> K) throws -> [K] {
        var prefix: [UInt8] = []
        let truncated = IndexKey.encode(value, into: &prefix)
        var out: [K] = []
        if limit > 1 { out.reserveCapacity(32) }
        let tree = try indexTree(classID, p)
        // The tails after the value: an object key each (a longer one belongs to a longer value).
        try tree.scan(tailsAfter: prefix, source: self) { tail in
            guard tail.count == 8 else { return false }
            let key = UInt64(bigEndian: tail.loadUnaligned(as: UInt64.self))
            if truncated {
                // Long strings share a cut prefix in the index: confirm against the object (its set's elements).
                guard let loc = try locate(classID, key) else { return true }
                if p.isElementIndexed {
                    guard SetElements.search(try listValues(classID, key, p, loc), value).found else { return true }
                } else {
                    guard try rawValue(loc, p).matchesQuery(value) else { return true }
                }
            }
            out.append(make(key))
            return out.count < limit
        }
        return out
    }
}

// MARK: - Index order

extension Snapshot {
    /// Every object of the class in the order of the index on `p` (an indexed string or int property): the
    /// keys, and where each run of equal values starts. Equal values are in key order, nulls first. nil when
    /// `p` has no index of that kind, or when the index holds strings cut at 240 bytes (their order among
    /// themselves is not in the index). Sorting by an indexed property is then a walk, not a sort.
    public func keysInIndexOrder(_ p: PropertyHandle) throws -> (keys: [ObjectKey], runStarts: [Int])? {
        let (c, info) = try currentInfo(p)
        guard info.isIndexed, !info.isCollection, !info.keyIsValue, info.type == .string || info.type == .int else { return nil }
        var keys: [ObjectKey] = []
        keys.reserveCapacity(Int(c.objectCount))
        var starts: [Int] = []
        var last: [UInt8] = []
        var usable = true
        let tree = try indexTree(c.classID, info)
        let start: [UInt8] = []
        try longWalk { boundary in try start.withUnsafeBytes { from in try tree.scan(from: from, source: self, boundary: boundary) { entry in
            guard entry.count > 8 else { usable = false; return false }
            let value = UnsafeRawBufferPointer(rebasing: entry[0..<(entry.count - 8)])
            // Only a value that long can be a cut string (tag, 240 bytes, marker).
            if info.type == .string && value.count >= IndexKey.maxStringBytes + 3 && IndexKey.isTruncated(encoded: value) {
                usable = false
                return false
            }
            let same = value.count == last.count && last.withUnsafeBytes { memcmp($0.baseAddress!, value.baseAddress!, value.count) == 0 }
            if keys.isEmpty || !same {
                starts.append(keys.count)
                last.removeAll(keepingCapacity: true)
                last.append(contentsOf: value)
            }
            keys.append(ObjectKey(IndexKey.objectKey(fromEntry: entry)))
            return true
        } } }
        guard usable, keys.count == Int(c.objectCount) else { return nil }
        return (keys, starts)
    }
}
