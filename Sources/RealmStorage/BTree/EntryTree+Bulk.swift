extension EntryTree {
    /// Builds the tree bottom-up from `entries` (ascending; an entry equal to the one before it, or to an entry the
    /// tree holds, goes in once) when the tree is empty or is one dirty leaf, whose entries are merged in: the
    /// first large batch of a transaction's index entries into an index it created or had not written yet
    /// (DECISIONS 118). Leaves and inner nodes are filled as a sorted batch's splits fill them (DECISIONS 89, 102):
    /// to at most seven eighths of the entry and byte limits, so that single inserts later find room. Returns
    /// false, changing nothing, for any other tree (the entries then go in one at a time).
    mutating func bulkLoad(_ entries: some Sequence<UnsafeRawBufferPointer>) -> Bool {
        var existing: EntryTreeNode?
        switch root {
        case nil: existing = nil
        case .dirty(let node)? where node.isLeaf: existing = node
        default: return false
        }
        var builder = LevelBuilder(level: 0, limits: limits)
        var next = 0
        var last: UnsafeRawBufferPointer?
        func put(_ e: UnsafeRawBufferPointer) {
            if let l = last, compareEntryBytes(l.baseAddress, l.count, e.baseAddress, e.count) == 0 { return }
            builder.append(e)
            last = e
        }
        for e in entries {
            precondition(e.count <= limits.maxEntryBytes, "EntryTree: entry of \(e.count) bytes exceeds \(limits.maxEntryBytes)")
            if let node = existing {
                while next < node.count {
                    let x = node.entry(next)
                    guard compareEntryBytes(x.baseAddress, x.count, e.baseAddress, e.count) <= 0 else { break }
                    put(x)
                    next += 1
                }
            }
            put(e)
        }
        if let node = existing { while next < node.count { put(node.entry(next)); next += 1 } }
        var nodes = builder.finish()
        var level = 0
        while nodes.count > 1 {
            level += 1
            var parents = LevelBuilder(level: level, limits: limits)
            for n in nodes { parents.append(n.entry(0), child: n) }
            nodes = parents.finish()
        }
        root = nodes.first.map { .dirty($0) }
        hasChanges = true
        return true
    }

    /// Fills the nodes of one level in order, starting a new node when the next entry would take the current one
    /// past seven eighths of a limit.
    private struct LevelBuilder {
        let level: Int
        let limits: Limits
        var nodes: [EntryTreeNode] = []
        var current: EntryTreeNode?

        init(level: Int, limits: Limits) {
            self.level = level
            self.limits = limits
        }

        /// The part of the limits a bulk-loaded node may fill (as `split` cuts a sorted batch's node).
        private func fits(count: Int, entryBytes: Int, shared: Int) -> Bool {
            let inner = level > 0
            return 8 * count <= 7 * limits.entryLimit(inner: inner)
                && 8 * EntryTree.encodedSize(count: count, entryBytes: entryBytes, inner: inner, shared: shared,
                                             prefixLeaf: limits.prefixLeaves) <= 7 * limits.maxNodeBytes
        }

        mutating func append(_ entry: UnsafeRawBufferPointer, child: EntryTreeNode? = nil) {
            if let node = current {
                let shared = level == 0 ? commonPrefixLength(node.entry(0), entry) : 0
                if node.count < 2 || fits(count: node.count + 1, entryBytes: node.entryBytes + entry.count, shared: shared) {
                    node.insert(entry, child: child.map { .dirty($0) }, at: node.count)
                    return
                }
                nodes.append(node)
            }
            let node = EntryTreeNode(level: level, capacity: limits.entryLimit(inner: level > 0), bytes: limits.maxNodeBytes)
            node.insert(entry, child: child.map { .dirty($0) }, at: 0)
            current = node
        }

        mutating func finish() -> [EntryTreeNode] {
            if let node = current { nodes.append(node) }
            current = nil
            return nodes
        }
    }
}
