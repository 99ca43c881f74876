/// What changed in one class from one version of a database to another (see `Snapshot.changes(in:since:)`).
public struct TableChanges: Sendable, Equatable {
    /// Objects that exist in the newer version only, ascending.
    public var inserted: [ObjectKey]
    /// Objects that exist in the older version only, ascending.
    public var deleted: [ObjectKey]
    /// Objects in both versions → the visible properties whose stored value differs, in the class's property
    /// order. A list counts as changed when its stored elements differ (also when only their order does), a
    /// link when its target differs, including a link nulled because its target was deleted.
    public var modified: [ObjectKey: [String]]
    /// Objects in both versions whose incoming links changed → the link properties they come from, as
    /// `"OriginClass.property"`, in the order of the class's hidden backlink columns. These changes are not in
    /// `modified`; an observer of a `linkingObjects` property looks here for its origin.
    public var backlinksChanged: [ObjectKey: [String]]
    /// The class's visible schema differs between the versions, or the class exists in only one of them (or
    /// was removed and created again: then every old object is deleted and every new one inserted). Values are
    /// compared only for properties present in both versions.
    public var schemaChanged: Bool

    public init(inserted: [ObjectKey] = [], deleted: [ObjectKey] = [], modified: [ObjectKey: [String]] = [:],
                backlinksChanged: [ObjectKey: [String]] = [:], schemaChanged: Bool = false) {
        self.inserted = inserted
        self.deleted = deleted
        self.modified = modified
        self.backlinksChanged = backlinksChanged
        self.schemaChanged = schemaChanged
    }

    /// Nothing changed: no object inserted, deleted or modified, no backlink and no schema change.
    public var isEmpty: Bool {
        inserted.isEmpty && deleted.isEmpty && modified.isEmpty && backlinksChanged.isEmpty && !schemaChanged
    }

    /// The keys of `modified`, ascending.
    public var modifiedKeys: [ObjectKey] { modified.keys.sorted() }
}

extension Snapshot {
    /// What changed in `className` from `older` to this snapshot, found by comparing the two versions' object
    /// trees: subtrees they share are skipped unread, so the cost follows the size of the change, not of the
    /// table.
    ///
    /// Both must belong to the same `Database`, and either may be the newer one: the result always describes
    /// going from `older`'s contents to this snapshot's (when `older` is newer, its inserts come back as
    /// deletions). The same snapshot compared with itself has no changes. A `WriteTransaction` may be either
    /// side and then contributes its uncommitted state, so a writer can see the changes of its own transaction.
    ///
    /// Throws `noSuchClass` when neither version has the class, `differentDatabases`, `snapshotClosed` or
    /// `transactionEnded` when a side cannot be read.
    public func changes(in className: String, since older: Snapshot) throws -> TableChanges {
        do {
            return try diff(className, since: older).changes
        } catch StorageError.corrupt(let path, let location, let reason) where !location.hasPrefix("class ") {
            throw StorageError.corrupt(path: path, location: "class \(className), \(location)", reason: reason)
        }
    }

    /// Names of the classes whose contents or visible schema may differ between `older` and this snapshot, in
    /// either direction: those in only one of them, those whose schema differs, and those whose object tree
    /// has a different root. Reads only the two catalogues. A class whose tree was rewritten with the same
    /// contents may be listed (its `changes(in:since:)` is then empty); a changed class is never left out.
    public func changedClasses(since older: Snapshot) throws -> Set<String> {
        try checkComparable(with: older)
        if older === self { return [] }
        var out: Set<String> = []
        for c in catalogue.classes {
            guard let o = older.catalogue.classInfo(named: c.name), o.classID == c.classID,
                  publicSchema(c) == older.publicSchema(o) else {
                out.insert(c.name)
                continue
            }
            if !Snapshot.sameCommittedTree(root(of: c.classID), older.root(of: o.classID))
                || hasPendingSlots(c.classID) || older.hasPendingSlots(o.classID) || backlinkTreesDiffer(c, o, older) {
                out.insert(c.name)
            }
        }
        for o in older.catalogue.classes where catalogue.classInfo(named: o.name) == nil { out.insert(o.name) }
        return out
    }

    /// `changes(in:since:)` and the number of nodes it read (table nodes and blobs), for tests and measurements.
    @_spi(Testing) public func diff(_ className: String, since older: Snapshot) throws -> (changes: TableChanges, nodesRead: Int) {
        try checkComparable(with: older)
        let newC = catalogue.classInfo(named: className), oldC = older.catalogue.classInfo(named: className)
        if newC == nil && oldC == nil { throw StorageError.noSuchClass(className) }
        if older === self { return (TableChanges(), 0) }
        var changes = TableChanges()
        guard let n = newC, let o = oldC, n.classID == o.classID else {
            // Created, removed, or removed and created again: no object is the same object.
            changes.schemaChanged = true
            var nodes = 0
            if let o = oldC { changes.deleted = try older.allKeys(o.classID, nodesRead: &nodes) }
            if let n = newC { changes.inserted = try allKeys(n.classID, nodesRead: &nodes) }
            return (changes, nodes)
        }
        changes.schemaChanged = publicSchema(n) != older.publicSchema(o)

        // Columns present in both versions (column IDs are never reused, so an ID is one property).
        var pairs: [DiffColumnPair] = []
        for p in n.properties where p.hasColumn {
            guard let q = o.property(column: p.columnID) else { continue }
            guard q.type == p.type, q.isList == p.isList, q.isSet == p.isSet, q.isDictionary == p.isDictionary, q.clusterColumnType == p.clusterColumnType else {
                changes.schemaChanged = true
                continue
            }
            pairs.append(DiffColumnPair(older: q, newer: p))
        }

        // Modified keys, ascending, each with a position in `columnSets` (indexes into `pairs`).
        var keys: [UInt64] = [], sets: [Int] = [], columnSets: [[Int]] = []
        var nodes = 0
        let newRoot = root(of: n.classID), oldRoot = older.root(of: o.classID)
        if !Snapshot.sameCommittedTree(newRoot, oldRoot) {
            var differ = TableDiffer(
                older: try DiffCursor(source: older, root: oldRoot, properties: pairs.map(\.older)),
                newer: try DiffCursor(source: self, root: newRoot, properties: pairs.map(\.newer)),
                pairs: pairs)
            try differ.run()
            changes.inserted = differ.inserted.map(ObjectKey.init)
            changes.deleted = differ.deleted.map(ObjectKey.init)
            (keys, sets, columnSets) = (differ.modifiedKeys, differ.modifiedSets, differ.columnSets)
            nodes = differ.nodesRead
        }
        if hasPendingSlots(n.classID) || older.hasPendingSlots(o.classID) {
            var modified = Dictionary(uniqueKeysWithValues: zip(keys, sets.map { columnSets[$0] }))
            try applyPendingSlots(n.classID, pairs, since: older, to: &modified)
            keys = modified.keys.sorted()
            columnSets = keys.map { modified[$0]! }
            sets = Array(columnSets.indices)
        }

        // Names once per distinct set of columns; the arrays are shared by every object with that set.
        let labels = columnSets.map { set -> (names: [String], origins: [String]) in
            var names: [String] = [], origins: [String] = []
            for j in set {
                let p = pairs[j].newer
                if p.isHidden { origins.append(backlinkLabel(p, older: older)) } else { names.append(p.name) }
            }
            return (names, origins)
        }
        changes.modified.reserveCapacity(keys.count)
        for (key, s) in zip(keys, sets) {
            if !labels[s].names.isEmpty { changes.modified[ObjectKey(key)] = labels[s].names }
            if !labels[s].origins.isEmpty { changes.backlinksChanged[ObjectKey(key)] = labels[s].origins }
        }
        try addBacklinkChanges(n, o, since: older, to: &changes)
        return (changes, nodes)
    }

    func checkComparable(with older: Snapshot) throws {
        try checkReadable()
        try older.checkReadable()
        guard older.database === database else {
            throw StorageError.differentDatabases(path: displayPath, otherPath: older.displayPath)
        }
    }

    /// Throws when the snapshot's version may no longer be read: a closed snapshot, an ended transaction.
    func checkReadable() throws {
        if let tx = self as? WriteTransaction { try tx.checkActive(); return }
        if isClosed { throw StorageError.snapshotClosed(path: displayPath, version: version) }
    }

    /// Both trees are the same committed node (or both empty).
    static func sameCommittedTree(_ a: TreeChild, _ b: TreeChild) -> Bool {
        if case .clean(let x) = a, case .clean(let y) = b { return x == y }
        return false
    }

    /// Every key of a class, in order.
    func allKeys(_ classID: UInt32, nodesRead: inout Int) throws -> [ObjectKey] {
        var cursor = try DiffCursor(source: self, root: root(of: classID), properties: [])
        var keys: [ObjectKey] = []
        try cursor.drain { keys.append(ObjectKey($0)) }
        nodesRead += cursor.nodesRead
        return keys
    }

    /// `"OriginClass.property"` of a hidden backlink column.
    func backlinkLabel(_ p: PropertyInfo, older: Snapshot) -> String {
        for cat in [catalogue, older.catalogue] {
            if let origin = cat.classInfo(id: p.targetClassID), let op = origin.property(column: p.originColumnID) {
                return "\(origin.name).\(op.name)"
            }
        }
        return p.name
    }

    // MARK: Backlink trees

    /// Whether any backlink tree of the class differs between the versions (a committed tree of the same
    /// root is the same tree; a write transaction's changed tree is taken to differ).
    func backlinkTreesDiffer(_ c: ClassInfo, _ o: ClassInfo, _ older: Snapshot) -> Bool {
        c.properties.contains { p in
            guard p.type == .backlink else { return false }
            guard let q = o.property(column: p.columnID) else { return true }
            // Trees as stored: entries still waiting in a write transaction count through `hasPendingSlots`.
            return !Snapshot.sameTree(storedIndexTree(c.classID, p), older.storedIndexTree(o.classID, q))
        }
    }

    static func sameTree(_ a: EntryTree, _ b: EntryTree) -> Bool {
        switch (a.root, b.root) {
        case (nil, nil): return true
        case (.clean(let x)?, .clean(let y)?): return x == y
        default: return false
        }
    }

    /// The entries of a backlink tree that lie in nodes `other` does not share, as (target, origin, count)
    /// with count 0 for a pair entry.
    private func backlinkEntries(_ tree: EntryTree, notSharedWith other: Set<UInt64>, _ bl: PropertyInfo) throws -> [(UInt64, UInt64, UInt32)] {
        var out: [(UInt64, UInt64, UInt32)] = []
        try tree.forEachEntryNotShared(with: other, source: self) { e in
            guard BacklinkEntry.extraLinks(e) != nil else { throw badBacklinkEntry(bl, e) }
            out.append((BacklinkEntry.target(e), BacklinkEntry.origin(e), e.count == BacklinkEntry.countedBytes ? BacklinkEntry.count(e) : 0))
        }
        return out
    }

    /// Objects present in both versions whose backlinks through some origin property differ: the targets of
    /// the entries in one version's tree and not the other's, labelled `"OriginClass.property"` in the order
    /// of the class's backlink properties. Reads the inner nodes of each tree that changed and the leaves the
    /// two versions do not share.
    private func addBacklinkChanges(_ n: ClassInfo, _ o: ClassInfo, since older: Snapshot, to changes: inout TableChanges) throws {
        var gone: Set<UInt64>?
        for p in n.properties where p.type == .backlink {
            // A backlink property new in this version (the first typed link from a mixed property into the
            // class) had no entries before.
            let q = o.property(column: p.columnID)
            if let q, q.type != .backlink { continue }
            let newTree = try backlinkTree(n.classID, p)
            let oldTree = try q.map { try older.backlinkTree(o.classID, $0) } ?? EntryTree(root: 0)
            if Snapshot.sameTree(newTree, oldTree) { continue }
            // Only the leaves the two trees do not share are read.
            let a = try older.backlinkEntries(oldTree, notSharedWith: newTree.committedRefs(source: self), q ?? p)
            let b = try backlinkEntries(newTree, notSharedWith: oldTree.committedRefs(source: older), p)
            var targets: [UInt64] = []
            var i = 0, j = 0
            func less(_ x: (UInt64, UInt64, UInt32), _ y: (UInt64, UInt64, UInt32)) -> Bool { (x.0, x.1, x.2) < (y.0, y.1, y.2) }
            while i < a.count || j < b.count {
                if j == b.count || (i < a.count && less(a[i], b[j])) {
                    targets.append(a[i].0); i += 1
                } else if i == a.count || less(b[j], a[i]) {
                    targets.append(b[j].0); j += 1
                } else {
                    i += 1; j += 1
                }
            }
            if targets.isEmpty { continue }
            if gone == nil { gone = Set((changes.inserted + changes.deleted).map(\.rawValue)) }
            let label = backlinkLabel(p, older: older)
            for t in Set(targets).sorted() where !gone!.contains(t) {
                changes.backlinksChanged[ObjectKey(t), default: []].append(label)
            }
        }
    }

    // MARK: A write transaction's lists

    /// Lists a write transaction changed but stores in their clusters only at commit.
    func hasPendingSlots(_ classID: UInt32) -> Bool {
        guard let tx = self as? WriteTransaction else { return false }
        return tx.dirtyLists.keys.contains { $0.classID == classID } || tx.dirtyDictionaries.keys.contains { $0.classID == classID }
            || tx.pendingIndexEntries.contains { $0.key.classID == classID && $0.value.backlinks && !$0.value.ends.isEmpty }
    }

    /// The stored form (as commit will store it) of every pending list of a class.
    func pendingSlotValues(_ classID: UInt32) -> [SlotKey: Value] {
        guard let tx = self as? WriteTransaction, let c = catalogue.classInfo(id: classID) else { return [:] }
        var out: [SlotKey: Value] = [:]
        for (slot, values) in tx.dirtyLists where slot.classID == classID {
            guard let p = c.property(column: slot.columnID) else { continue }
            out[slot] = .data(ListCoding.encode(values, type: p.type, nullable: p.isSet ? p.collectionValuesNullable : p.isOptional))
        }
        for (slot, entries) in tx.dirtyDictionaries where slot.classID == classID {
            guard let p = c.property(column: slot.columnID) else { continue }
            out[slot] = .data(DictionaryCoding.encode(entries, type: p.type, nullable: p.collectionValuesNullable))
        }
        return out
    }

    /// Compares again every slot pending on either side: the trees hold stale values for them, or none (a list
    /// changed without its leaf being made dirty).
    private func applyPendingSlots(_ classID: UInt32, _ pairs: [DiffColumnPair], since older: Snapshot,
                                   to modified: inout [UInt64: [Int]]) throws {
        let pendingNew = pendingSlotValues(classID), pendingOld = older.pendingSlotValues(classID)
        var pairIndex: [UInt32: Int] = [:]
        for (j, p) in pairs.enumerated() { pairIndex[p.newer.columnID] = j }
        for slot in Set(pendingNew.keys).union(pendingOld.keys) {
            guard let j = pairIndex[slot.columnID],
                  let ln = try locate(classID, slot.key), let lo = try older.locate(classID, slot.key) else { continue }
            let vn = try pendingNew[slot] ?? rawValue(ln, pairs[j].newer)
            let vo = try pendingOld[slot] ?? older.rawValue(lo, pairs[j].older)
            var columns = modified[slot.key] ?? []
            columns.removeAll { $0 == j }
            if !vn.isStoredIdentically(to: vo) {
                columns.append(j)
                columns.sort()
            }
            modified[slot.key] = columns.isEmpty ? nil : columns
        }
    }
}
