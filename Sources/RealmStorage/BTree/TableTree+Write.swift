/// Copy-on-write changes to one class's object tree within a write transaction.
struct TreeMutator {
    let sink: NodeSink
    /// The class's current properties (columns of removed properties are dropped when a cluster is decoded).
    let properties: [PropertyInfo]

    /// For debug builds' checks of a kept leaf: the node at `ref` is a cluster of `bytes` bytes.
    private func isKeptLeaf(at ref: UInt64, bytes: Int) -> Bool {
        guard let node = try? sink.node(ref, expected: nil) else { return false }  // a debug check: unreadable fails it
        return TableTree.isLeafNode(node) && bytes == node.count
    }

    /// For debug builds' checks of a kept inner node: the node at `ref` is `kept`, written as `bytes` bytes.
    private func isKeptInner(_ kept: DirtyInner, at ref: UInt64, bytes: Int) -> Bool {
        guard let node = try? sink.node(ref, expected: .tableInner), node.count == bytes,  // a debug check: unreadable fails it
              let v = try? InnerView(node: node, ref: ref, source: sink) else { return false }  // (as above)
        return kept.level == v.level && kept.firstKeys == (0..<v.count).map { v.firstKey($0) }
            && kept.counts == (0..<v.count).map { v.childCount($0) }
            && kept.children.enumerated().allSatisfy { i, c in if case .clean(let r) = c { return r == v.ref(i) } else { return false } }
    }

    /// Turns a committed node into its dirty, decoded form, freeing the committed copy.
    func dirty(_ child: TreeChild) throws -> TreeChild {
        guard case .clean(let ref) = child else { return child }
        if ref == 0 { return .leaf(DirtyLeaf()) }
        // A node this process's last commit wrote and kept decoded is taken without reading the node at all: after
        // the disk wait even its header is a cache miss (DECISIONS 66). Debug builds check it against the node.
        if let (kept, bytes) = sink.decodedLeaf(ref, properties: properties) {
            assert(isKeptLeaf(at: ref, bytes: bytes), "DecodedLeaves: kept leaf at \(ref) is not the leaf there")
            kept.reuse(sink: sink)
            try sink.free(ref, bytes: bytes)
            return .leaf(kept)
        }
        if let (kept, bytes) = sink.decodedInner(ref) {
            assert(isKeptInner(kept, at: ref, bytes: bytes), "DecodedLeaves: kept inner node differs from the node at \(ref)")
            try sink.free(ref, bytes: bytes)
            return .inner(kept)
        }
        let node = try sink.node(ref, expected: nil)
        if TableTree.isLeafNode(node) {
            let view = try ClusterView(node: node, ref: ref, source: sink)
            let leaf = try DirtyLeaf.decode(view, properties: properties, sink: sink)
            try sink.free(ref, bytes: node.count)
            return .leaf(leaf)
        }
        guard node[0] == NodeType.tableInner.rawValue else { throw sink.corrupt(ref, "expected a table node, found type \(node[0])") }
        let v = try InnerView(node: node, ref: ref, source: sink)
        let inner = DirtyInner(level: v.level,
                               firstKeys: (0..<v.count).map { v.firstKey($0) },
                               children: (0..<v.count).map { .clean(v.ref($0)) },
                               counts: (0..<v.count).map { v.childCount($0) })
        try sink.free(ref, bytes: node.count)
        return .inner(inner)
    }

    /// The dirty leaf and row holding `key`, making the path to it dirty; nil when the key is absent.
    func leafForUpdate(_ child: inout TreeChild, key: UInt64) throws -> (DirtyLeaf, Int)? {
        child = try dirty(child)
        switch child {
        case .leaf(let l):
            return l.row(of: key).map { (l, $0) }
        case .inner(let n):
            if n.children.isEmpty { return nil }
            return try leafForUpdate(&n.children[n.childIndex(for: key)], key: key)
        case .clean:
            preconditionFailure("dirty() returned a clean node")
        }
    }

    /// Makes every leaf dirty (once) and hands it to `body`, in key order.
    func forEachLeafForUpdate(_ child: inout TreeChild, _ body: (DirtyLeaf) throws -> Void) throws {
        if case .clean(0) = child { return }
        child = try dirty(child)
        switch child {
        case .leaf(let l): try body(l)
        case .inner(let n):
            for i in n.children.indices { try forEachLeafForUpdate(&n.children[i], body) }
        case .clean: preconditionFailure("dirty() returned a clean node")
        }
    }

    /// Hands `body` the dirty leaf and row of each key of `keys` (sorted, unique) present in the tree, in key
    /// order, making dirty only the paths that lead to them: one descent for all the keys, where a
    /// `leafForUpdate` per key would descend from the root each time. Absent keys are skipped.
    func forEachRowForUpdate(_ child: inout TreeChild, keys: ArraySlice<UInt64>, _ body: (DirtyLeaf, Int) throws -> Void) throws {
        if keys.isEmpty { return }
        if case .clean(0) = child { return }
        child = try dirty(child)
        switch child {
        case .leaf(let l):
            for k in keys { if let row = l.row(of: k) { try body(l, row) } }
        case .inner(let n):
            var next = keys.startIndex
            for i in n.children.indices {
                // Child i holds the keys below the next child's first key (child 0 also those below its own).
                let end = i + 1 < n.firstKeys.count
                    ? keys[next...].firstIndex(where: { $0 >= n.firstKeys[i + 1] }) ?? keys.endIndex
                    : keys.endIndex
                if end > next { try forEachRowForUpdate(&n.children[i], keys: keys[next..<end], body) }
                next = end
                if next == keys.endIndex { break }
            }
        case .clean: preconditionFailure("dirty() returned a clean node")
        }
    }

    /// A row of default values, parallel to `properties`.
    var defaultRow: [Value] { properties.map(\.defaultValue) }

    /// Inserts a new object. `values` maps column IDs to values; other columns take their defaults.
    func insert(_ root: inout TreeChild, key: UInt64, values: [UInt32: Value]) throws {
        var row = defaultRow
        for (i, p) in properties.enumerated() { if let v = values[p.columnID] { row[i] = v } }
        try insert(&root, key: key, row: row)
    }

    /// Inserts a new object; `row` is parallel to `properties`.
    /// Inserts the object; false, changing no row or count, when `key` is already in the tree (the path to
    /// where it is has been made the transaction's, which a commit writes unchanged). A primary key that is the
    /// object key is checked here, in the descent the insert makes anyway, instead of by a lookup first
    /// (DECISIONS 64).
    @discardableResult
    func insert(_ root: inout TreeChild, key: UInt64, row: [Value]) throws -> Bool {
        var exists = false
        if let (firstKey, right, count) = try insert(into: &root, key: key, row: row, exists: &exists) {
            let leftCount = try TreeMutator.count(root)
            let leftFirst = try firstKeyOf(root) ?? key
            let level = (try TreeMutator.level(root)) + 1
            root = .inner(DirtyInner(level: level, firstKeys: [leftFirst, firstKey], children: [root, right],
                                     counts: [leftCount, count]))
        }
        return !exists
    }

    private func insert(into child: inout TreeChild, key: UInt64, row: [Value], exists: inout Bool) throws
        -> (UInt64, TreeChild, Int)? {
        child = try dirty(child)
        switch child {
        case .leaf(let l):
            let pos = l.insertionPoint(of: key)
            if pos < l.keys.count && l.keys[pos] == key {
                exists = true
                return nil
            }
            try l.insert(key: key, row: row, at: pos, properties: properties)
            guard l.keys.count > clusterCapacity else { return nil }
            // Appending past the end keeps the left leaf full; otherwise split in halves.
            let cut = pos == l.keys.count - 1 ? l.keys.count - 1 : l.keys.count / 2
            let right = try l.split(at: cut)
            return (right.keys[0], .leaf(right), right.keys.count)
        case .inner(let n):
            let i = n.childIndex(for: key)
            let split = try insert(into: &n.children[i], key: key, row: row, exists: &exists)
            if exists { return nil }
            n.firstKeys[i] = min(n.firstKeys[i], key)
            if let (fk, right, count) = split {
                n.counts[i] = n.counts[i] + 1 - count
                n.children.insert(right, at: i + 1)
                n.firstKeys.insert(fk, at: i + 1)
                n.counts.insert(count, at: i + 1)
            } else {
                n.counts[i] += 1
            }
            guard n.children.count > innerCapacity else { return nil }
            let cut = i + 1 == n.children.count - 1 ? n.children.count - 1 : n.children.count / 2
            let right = DirtyInner(level: n.level, firstKeys: Array(n.firstKeys[cut...]),
                                   children: Array(n.children[cut...]), counts: Array(n.counts[cut...]))
            n.firstKeys.removeSubrange(cut...)
            n.children.removeSubrange(cut...)
            n.counts.removeSubrange(cut...)
            return (right.firstKeys[0], .inner(right), right.counts.reduce(0, +))
        case .clean:
            preconditionFailure("dirty() returned a clean node")
        }
    }

    /// Removes the object with `key` (which must exist). Returns the values it had, by column ID.
    @discardableResult
    func remove(_ root: inout TreeChild, key: UInt64) throws -> [UInt32: Value] {
        var removed: [UInt32: Value] = [:]
        _ = try remove(from: &root, key: key, removed: &removed)
        // Collapse empty roots and roots with a single child.
        while true {
            if case .inner(let n) = root {
                if n.children.isEmpty { root = .clean(0); break }
                if n.children.count == 1 { root = n.children[0]; continue }
            }
            if case .leaf(let l) = root, l.keys.isEmpty { root = .clean(0) }
            break
        }
        return removed
    }

    private func remove(from child: inout TreeChild, key: UInt64, removed: inout [UInt32: Value]) throws -> Bool {
        child = try dirty(child)
        switch child {
        case .leaf(let l):
            guard let row = l.row(of: key) else { return false }
            removed = try l.remove(row: row)
            return true
        case .inner(let n):
            guard !n.children.isEmpty else { return false }
            let i = n.childIndex(for: key)
            guard try remove(from: &n.children[i], key: key, removed: &removed) else { return false }
            n.counts[i] -= 1
            if n.counts[i] == 0 {
                n.children.remove(at: i)
                n.firstKeys.remove(at: i)
                n.counts.remove(at: i)
            } else if let fk = try firstKeyOf(n.children[i]) {
                n.firstKeys[i] = fk
            }
            return true
        case .clean:
            preconditionFailure("dirty() returned a clean node")
        }
    }

    private func firstKeyOf(_ child: TreeChild) throws -> UInt64? {
        switch child {
        case .leaf(let l): return l.keys.first
        case .inner(let n): return n.firstKeys.first
        case .clean(let ref): return try TableTree.key(at: 0, .clean(ref), source: sink)
        }
    }

    static func count(_ child: TreeChild) throws -> Int {
        switch child {
        case .leaf(let l): return l.keys.count
        case .inner(let n): return n.counts.reduce(0, +)
        case .clean: preconditionFailure("count of a clean child is taken from its parent")
        }
    }

    static func level(_ child: TreeChild) throws -> Int {
        switch child {
        case .leaf: return 0
        case .inner(let n): return n.level
        case .clean: preconditionFailure("level of a clean child is taken from its parent")
        }
    }

    // MARK: Commit

    struct Entry {
        var firstKey: UInt64
        var ref: UInt64
        var count: Int
    }

    /// What writing a dirty node gave: usually one node, several when it split, none when it emptied. A small
    /// commit writes one node per level, so the common answer is not an array.
    enum Written {
        case one(Entry)
        case many([Entry])

        var entries: [Entry] {
            switch self {
            case .one(let e): return [e]
            case .many(let es): return es
            }
        }
    }

    /// Writes every dirty node of the tree and returns the new root ref (0 for an empty tree).
    func write(_ root: TreeChild) throws -> UInt64 {
        if case .clean(let ref) = root { return ref }
        var level = try TreeMutator.level(root)
        var written = try write(root, level: level)
        while case .many(let entries) = written, entries.count > 1 {
            level += 1
            written = .many(try writeInner(entries, level: level))
        }
        switch written {
        case .one(let e): return e.ref
        case .many(let entries): return entries.first?.ref ?? 0
        }
    }

    private func write(_ child: TreeChild, level: Int) throws -> Written {
        switch child {
        case .clean:
            preconditionFailure("clean children are kept by their parent")
        case .leaf(let l):
            return try writeLeaf(l, rows: 0..<l.keys.count)
        case .inner(let n):
            // The dirty children first (a small commit changes one child of up to 64). A child written as one
            // node becomes that node here at once (its ref, first key and count); children that split or
            // emptied are remembered, and only then does this node need a list of entries.
            var reshaped: [(index: Int, entries: [Entry])] = []
            for i in n.children.indices {
                if case .clean = n.children[i] { continue }
                switch try write(n.children[i], level: n.level - 1) {
                case .one(let e):
                    settle(n, i, e)
                case .many(let entries) where entries.count == 1:
                    settle(n, i, entries[0])
                case .many(let entries):
                    reshaped.append((i, entries))
                }
            }
            if !n.children.isEmpty, n.children.count <= innerCapacity, reshaped.isEmpty {
                // This node does not split: `n` stands for the node it is written as, encoded from its own arrays.
                let (ref, bytes) = try writeInnerNode(n)
                sink.wroteInner(n, ref: ref, bytes: bytes)
                return .one(Entry(firstKey: n.firstKeys[0], ref: ref, count: n.counts.reduce(0, +)))
            }
            var entries: [Entry] = []
            entries.reserveCapacity(n.children.count + reshaped.reduce(0) { $0 + $1.entries.count })
            var next = 0
            for (i, c) in n.children.enumerated() {
                if next < reshaped.count, reshaped[next].index == i {
                    entries += reshaped[next].entries
                    next += 1
                } else if case .clean(let ref) = c {
                    entries.append(Entry(firstKey: n.firstKeys[i], ref: ref, count: n.counts[i]))
                }
            }
            return .many(try writeInner(entries, level: n.level))
        }
    }

    /// Makes child `i` of `n` the node it was written as.
    private func settle(_ n: DirtyInner, _ i: Int, _ e: Entry) {
        n.children[i] = .clean(e.ref)
        n.firstKeys[i] = e.firstKey
        n.counts[i] = e.count
    }

    /// Writes an inner node whose children are all clean, as `writeInner` would write its entries.
    private func writeInnerNode(_ n: DirtyInner) throws -> (ref: UInt64, bytes: Int) {
        // The refs gathered on the stack (at most `innerChildLimit` of them).
        var node = withUnsafeTemporaryAllocation(of: Int64.self, capacity: n.children.count) { refs in
            for i in refs.indices {
                guard case .clean(let ref) = n.children[i] else { preconditionFailure("a dirty child left unwritten") }
                refs[i] = Int64(bitPattern: ref)
            }
            // First keys and counts are stored as their bit patterns, as `writeInner` converts them.
            return n.firstKeys.withUnsafeBufferPointer { keys in
                keys.withMemoryRebound(to: Int64.self) { k in
                    n.counts.withUnsafeBufferPointer { counts in
                        counts.withMemoryRebound(to: Int64.self) { c in
                            Self.innerNode(level: n.level, firstKeys: k, refs: UnsafeBufferPointer(refs), counts: c,
                                           reusing: sink.smallNodeBuffer())
                        }
                    }
                }
            }
        }
        let ref = try sink.write(&node)
        return (ref, node.count)
    }

    /// A table inner node: its entry count and level, then the first keys, refs and counts of its children as
    /// packed arrays (FILE_FORMAT.md, "Table inner node").
    /// Built in `buffer`'s storage (a recycled node array, DECISIONS 64), or a new array with room for any
    /// small node, so that it can be recycled in turn.
    private static func innerNode(level: Int, firstKeys: UnsafeBufferPointer<Int64>, refs: UnsafeBufferPointer<Int64>,
                                  counts: UnsafeBufferPointer<Int64>, reusing buffer: consuming [UInt8]) -> [UInt8] {
        var b = NodeBuilder(.tableInner, capacity: max(64 + refs.count * 24, smallNodeCapacity), reusing: buffer)
        b.w.u32(UInt32(refs.count))
        b.w.u32(UInt32(level))
        PackedInts.encode(firstKeys, into: &b.w)
        PackedInts.encode(refs, into: &b.w)
        PackedInts.encode(counts, into: &b.w)
        return b.finish()
    }

    private func writeLeaf(_ l: DirtyLeaf, rows: Range<Int>) throws -> Written {
        if rows.isEmpty { return .many([]) }
        // Encode into a scratch list of blobs first, so a leaf that must be split does not leak its blobs.
        var blobs: [UInt64] = []
        var bytes = try l.encode(rows: rows, properties: properties, dictionaries: !sink.writesFormat5Nodes, storeBlob: { buf in
            var b = NodeBuilder(.blob, capacity: buf.count + nodeHeaderSize)
            b.w.raw(buf)
            let ref = try sink.write(b.finish())
            blobs.append(ref)
            return ref
        })
        if bytes.count > clusterSplitBytes && rows.count > 1 {
            for ref in blobs { try sink.discard(ref) }
            let mid = rows.lowerBound + rows.count / 2
            return .many(try writeLeaf(l, rows: rows.lowerBound..<mid).entries + writeLeaf(l, rows: mid..<rows.upperBound).entries)
        }
        // In place: the leaf may keep these bytes (`wroteLeaf`), and a copy of a cluster per commit costs.
        let ref = try sink.write(&bytes)
        if blobs.isEmpty, rows == 0..<l.keys.count, l.isFullyDecoded { sink.wroteLeaf(l, ref: ref, node: bytes, properties: properties) }
        return .one(Entry(firstKey: l.keys[rows.lowerBound], ref: ref, count: rows.count))
    }

    private func writeInner(_ entries: [Entry], level: Int) throws -> [Entry] {
        let chunks = (entries.count + innerCapacity - 1) / innerCapacity
        var out: [Entry] = []
        var start = 0
        for c in 0..<chunks {
            let end = entries.count * (c + 1) / chunks
            let part = entries[start..<end]
            let firstKeys = part.map { Int64(bitPattern: $0.firstKey) }, refs = part.map { Int64(bitPattern: $0.ref) }
            let counts = part.map { Int64($0.count) }
            let ref = try firstKeys.withUnsafeBufferPointer { k in
                try refs.withUnsafeBufferPointer { r in
                    try counts.withUnsafeBufferPointer { c in
                        try sink.write(Self.innerNode(level: level, firstKeys: k, refs: r, counts: c, reusing: sink.smallNodeBuffer()))
                    }
                }
            }
            out.append(Entry(firstKey: part.first!.firstKey, ref: ref, count: part.reduce(0) { $0 + $1.count }))
            start = end
        }
        return out
    }
}
