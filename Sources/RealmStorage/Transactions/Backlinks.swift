/// Backlinks (format 3, DECISIONS 50): each hidden backlink property of a target class keeps the links made
/// through one origin link property in an entry tree of its own — the property's `indexRoot` — instead of a
/// set per object in the target's clusters. Following links back reads a tree of a few bytes per link, not
/// the rows of a large target table, and linking an object writes a leaf of that tree, not the target's
/// cluster.
///
/// Entries (docs/FILE_FORMAT.md, "Backlink trees"): `target key ++ origin key`, 8 bytes each, big-endian,
/// one per (target, origin) pair. A list may link the same target more than once; then a second entry
/// `target ++ origin ++ u32 count` (count ≥ 2, big-endian) says how many links there are. It sorts right
/// after the pair's plain entry, so a target's entries list its origins in key order.
enum BacklinkEntry {
    static let pairBytes = 16
    static let countedBytes = 20

    static func prefix(_ target: UInt64) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(8)
        IndexKey.appendObjectKey(target, to: &b)
        return b
    }

    static func pair(_ target: UInt64, _ origin: UInt64) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(countedBytes)
        appendPair(target, origin, to: &b)
        return b
    }

    /// The pair entry appended to `bytes` (entries waiting for a backlink tree).
    static func appendPair(_ target: UInt64, _ origin: UInt64, to bytes: inout [UInt8]) {
        IndexKey.appendObjectKey(target, to: &bytes)
        IndexKey.appendObjectKey(origin, to: &bytes)
    }

    static func counted(_ target: UInt64, _ origin: UInt64, _ count: UInt32) -> [UInt8] {
        var b = pair(target, origin)
        withUnsafeBytes(of: count.bigEndian) { b.append(contentsOf: $0) }
        return b
    }

    static func target(_ e: UnsafeRawBufferPointer) -> UInt64 { UInt64(bigEndian: e.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) }
    static func origin(_ e: UnsafeRawBufferPointer) -> UInt64 { UInt64(bigEndian: e.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    static func count(_ e: UnsafeRawBufferPointer) -> UInt32 { UInt32(bigEndian: e.loadUnaligned(fromByteOffset: 16, as: UInt32.self)) }

    /// How many links an entry adds to its origin's count: 1 for a pair entry, `count - 1` for a counted
    /// entry (its pair entry gave the first); nil for an entry of any other shape.
    static func extraLinks(_ e: UnsafeRawBufferPointer) -> Int? { extraLinks(tail: e, after: 0) }

    /// `extraLinks` of an entry given from byte `start` on: the tail a scan past its first `start` bytes gives.
    @inline(__always)
    static func extraLinks(tail e: UnsafeRawBufferPointer, after start: Int) -> Int? {
        switch e.count &+ start {
        case pairBytes: return 1
        case countedBytes:
            let n = UInt32(bigEndian: e.loadUnaligned(fromByteOffset: 16 &- start, as: UInt32.self))
            return n >= 2 ? Int(n) - 1 : nil
        default: return nil
        }
    }
}

extension Snapshot {
    /// A backlink tree entry of the wrong shape.
    func badBacklinkEntry(_ bl: PropertyInfo, _ e: UnsafeRawBufferPointer) -> StorageError {
        badBacklinkEntry(bl, bytes: e.count)
    }

    func badBacklinkEntry(_ bl: PropertyInfo, bytes: Int) -> StorageError {
        StorageError.corrupt(path: displayPath, location: "backlink tree \(bl.name)",
                             reason: "entry of \(bytes) bytes (or a count below 2)")
    }

    /// The tree of a backlink property (in a write transaction, this transaction's, with the entries still
    /// waiting to go in put in first).
    func backlinkTree(_ classID: UInt32, _ bl: PropertyInfo) throws -> EntryTree { try indexTree(classID, bl) }

    /// Appends the origins of `target` through backlink property `bl` (once per link, in key order).
    func appendBacklinks(of target: UInt64, _ classID: UInt32, _ bl: PropertyInfo, to out: inout [UInt64]) throws {
        let tree = try backlinkTree(classID, bl)
        if tree.root == nil { return }
        // The tails after the target: the origin, and a counted entry's count.
        try withUnsafeBytes(of: target.bigEndian) { prefix in
            try tree.scan(tailsAfter: prefix, source: self) { t in
                guard let n = BacklinkEntry.extraLinks(tail: t, after: 8) else { throw badBacklinkEntry(bl, bytes: t.count + 8) }
                let o = UInt64(bigEndian: t.loadUnaligned(as: UInt64.self))
                for _ in 0..<n { out.append(o) }
                return true
            }
        }
    }

    /// Whether the backlink tree records at least one link from `origin` to `target`: one descent to the pair's
    /// entries, however many other objects link to `target`.
    func hasBacklink(to target: UInt64, from origin: UInt64, _ classID: UInt32, _ bl: PropertyInfo) throws -> Bool {
        let tree = try backlinkTree(classID, bl)
        if tree.root == nil { return false }
        var found = false
        try tree.scan(prefix: BacklinkEntry.pair(target, origin), source: self) { e in
            guard let n = BacklinkEntry.extraLinks(e) else { throw badBacklinkEntry(bl, e) }
            found = n > 0
            return false
        }
        return found
    }

    /// Every (target, origin) link recorded by a backlink tree, in order, once per link.
    func forEachBacklink(_ classID: UInt32, _ bl: PropertyInfo, _ body: (UInt64, UInt64) throws -> Void) throws {
        let tree = try backlinkTree(classID, bl)
        if tree.root == nil { return }
        try tree.scan(from: [], source: self) { e in
            guard let n = BacklinkEntry.extraLinks(e) else { throw badBacklinkEntry(bl, e) }
            let t = BacklinkEntry.target(e), o = BacklinkEntry.origin(e)
            for _ in 0..<n { try body(t, o) }
            return true
        }
    }
}

extension WriteTransaction {
    /// The backlink property `columnID` of a class as this transaction's catalogue has it.
    func backlinkColumn(classID: UInt32, columnID: UInt32) throws -> PropertyInfo {
        guard let p = catalogue.classInfo(id: classID)?.property(column: columnID), p.type == .backlink else {
            throw StorageError.corrupt(path: database.path, location: "schema", reason: "missing backlink column \(columnID) of class \(classID)")
        }
        return p
    }

    /// Records that `origin` links to `target` through link property `p` of `originClass` (once per link).
    /// Past the first few of a transaction, the entries wait and go into the tree sorted (DECISIONS 52).
    func addBacklink(target: UInt64, via p: PropertyInfo, from originClass: UInt32, origin: UInt64) throws {
        let bl = try backlinkColumn(target: p.targetClassID, via: p, from: originClass)
        try addBacklink(target: target, in: p.targetClassID, column: bl, origin: origin)
    }

    /// Records one link from `origin` to object `target` of class `targetClass` in its backlink property `bl`.
    func addBacklink(target: UInt64, in targetClass: UInt32, column bl: PropertyInfo, origin: UInt64) throws {
        let slot = SlotKey(classID: targetClass, key: 0, columnID: bl.columnID)
        if takesDirectIndexEntry() {
            let pair = BacklinkEntry.pair(target, origin)
            try withStoredIndex(slot, root: bl.indexRoot) { tree in try pair.withUnsafeBytes { try insertBacklink($0, into: &tree) } }
        } else if pendingIndexEntries[slot, default: PendingIndexEntries(indexRoot: bl.indexRoot, backlinks: true)]
                    .appendPair(target, origin) {
            try flushIndexEntries(slot)
        }
    }

    /// Puts one link's pair entry into a backlink tree; for a further link from the same origin (a list
    /// holding the target again), its counted entry instead.
    func insertBacklink(_ pair: UnsafeRawBufferPointer, into tree: inout EntryTree) throws {
        if try tree.insert(pair, sink: self) { return }
        let target = BacklinkEntry.target(pair), origin = BacklinkEntry.origin(pair)
        let n = try linkCount(tree, target, origin)
        if n >= 2 { _ = try tree.remove(BacklinkEntry.counted(target, origin, UInt32(n)), sink: self) }
        _ = try tree.insert(BacklinkEntry.counted(target, origin, UInt32(n + 1)), sink: self)
    }

    /// Forgets one link from `origin` to `target` through `p` (nothing when there is none).
    func removeBacklink(target: UInt64, via p: PropertyInfo, from originClass: UInt32, origin: UInt64) throws {
        let bl = try backlinkColumn(target: p.targetClassID, via: p, from: originClass)
        try removeBacklink(target: target, in: p.targetClassID, column: bl, origin: origin)
    }

    /// Forgets one link from `origin` to object `target` of class `targetClass` in its backlink property `bl`.
    func removeBacklink(target: UInt64, in targetClass: UInt32, column bl: PropertyInfo, origin: UInt64) throws {
        try withIndex(targetClass, bl) { tree in
            if tree.root == nil { return }
            let n = try linkCount(tree, target, origin)
            if n >= 2 {
                _ = try tree.remove(BacklinkEntry.counted(target, origin, UInt32(n)), sink: self)
                if n > 2 { _ = try tree.insert(BacklinkEntry.counted(target, origin, UInt32(n - 1)), sink: self) }
            } else {
                _ = try tree.remove(BacklinkEntry.pair(target, origin), sink: self)
            }
        }
    }

    /// Links from `origin` to `target` the tree records: 0, 1, or the count of a counted entry.
    private func linkCount(_ tree: EntryTree, _ target: UInt64, _ origin: UInt64) throws -> Int {
        var n = 0
        try tree.scan(prefix: BacklinkEntry.pair(target, origin), source: self) { e in
            if e.count == BacklinkEntry.pairBytes { n = 1; return true }
            if e.count == BacklinkEntry.countedBytes { n = Int(BacklinkEntry.count(e)) }
            return false
        }
        return n
    }

    /// Removes every entry of `target` from backlink tree `bl` of its class (the object is being deleted).
    func removeBacklinks(of target: UInt64, _ classID: UInt32, _ bl: PropertyInfo) throws {
        var entries: [[UInt8]] = []
        try backlinkTree(classID, bl).scan(prefix: BacklinkEntry.prefix(target), source: self) { e in
            entries.append(Array(e))
            return true
        }
        if entries.isEmpty { return }
        try withIndex(classID, bl) { tree in
            for e in entries { _ = try tree.remove(e, sink: self) }
        }
    }

    /// Frees a whole backlink tree and leaves it empty.
    func dropBacklinkTree(_ classID: UInt32, _ bl: PropertyInfo) throws {
        try dropIndex(classID, bl)
        if let ci = catalogue.classIndex(id: classID),
           let pi = catalogue.classes[ci].properties.firstIndex(where: { $0.columnID == bl.columnID }) {
            catalogue.classes[ci].properties[pi].indexRoot = 0
            catalogueChanged = true
        }
    }
}

// MARK: - Upgrade from format 2

extension Database {
    /// The file format this build writes (docs/FILE_FORMAT.md).
    public static var fileFormatVersion: UInt32 { Meta.formatVersion }

    /// Files of formats 1 and 2 keep each object's backlinks as a set in a hidden column of its class's
    /// clusters. Opened writable, such a file gets its backlink trees built from those sets in one
    /// transaction (which writes format 3); the old columns stay in the clusters, unread, until each cluster
    /// is next rewritten (`DirtyLeaf.decode` drops them and frees their blobs). Opened read-only, it is
    /// refused with `olderFormat`: this build no longer reads the old layout.
    func upgradeBacklinksIfNeeded() throws {
        guard try latestMeta().format < 3 else { return }
        let hasBacklinks = try read { s in s.catalogue.classes.contains { $0.properties.contains { $0.type == .backlink } } }
        guard hasBacklinks else { return }
        if isReadOnly {
            throw StorageError.olderFormat(path: path, fileVersion: try latestMeta().format,
                                           reason: "keeps backlinks in its objects' clusters")
        }
        try write { tx in
            guard tx.meta.format < 3 else { return }  // another process upgraded it first
            try tx.buildBacklinkTreesFromClusters()
        }
    }
}

extension WriteTransaction {
    /// Fills every backlink tree from the sets format 2 stored in the target's clusters.
    func buildBacklinkTreesFromClusters() throws {
        for c in catalogue.classes {
            for bl in c.properties where bl.type == .backlink {
                var failure: Error?
                try TableTree.forEachLeaf(root(of: c.classID), source: self) { leaf in
                    guard case .clean(let v) = leaf else { return true }
                    do {
                        // A cluster written before the link existed has no column: no backlinks.
                        guard let r = try v.reader(for: bl, source: self) else { return true }
                        for row in 0..<v.count {
                            let raw = try r.value(at: row, source: self, location: "row \(row) of \(bl.name) in the cluster at page \(v.ref)")
                            let origins = try decodeBacklinks(raw)
                            let target = v.key(at: row)
                            try withIndex(c.classID, bl) { tree in
                                var i = 0
                                while i < origins.count {
                                    var j = i + 1
                                    while j < origins.count && origins[j] == origins[i] { j += 1 }
                                    _ = try tree.insert(BacklinkEntry.pair(target, origins[i]), sink: self)
                                    if j - i >= 2 { _ = try tree.insert(BacklinkEntry.counted(target, origins[i], UInt32(j - i)), sink: self) }
                                    i = j
                                }
                            }
                        }
                        return true
                    } catch {
                        failure = error
                        return false
                    }
                }
                if let f = failure { throw f }
            }
        }
        catalogueChanged = true
    }
}
