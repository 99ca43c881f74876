extension EntryNodeView {
    /// Loads the lines a search started at entry `start` reads first (its end offset and its bytes) and
    /// returns a sum of them: called for many leaves before any is searched, so that their cache misses
    /// overlap. Reads only inside the node (an implausible offset is not followed).
    func touch(near start: Int) -> UInt64 {
        let i = min(max(start, 0), count &- 1)
        let a = end(i)
        let at = entryStart &+ a
        return UInt64(a) &+ (at < bytes.count ? UInt64(bytes[at]) : 0)
    }
}

extension EntryTree {
    /// For each of `keys` (sorted ascending), calls `body(i, tail)` with what follows `keys[i]` (as 8
    /// big-endian bytes) in every entry that starts with it, in order — what `scan(tailsAfter:)` would give
    /// for each — in a tree whose
    /// entries are all longer than 8 bytes (backlink trees). Every search compares integers, and nothing is
    /// allocated per key. On a committed tree the lookups are staged (DECISIONS 44, 50): every key's leaf is
    /// found first (the inner nodes, shared by nearby lookups, stay in cache), then each leaf's header, then
    /// the lines where each search will start, and only then the searches — so the cache misses of different
    /// leaves overlap instead of following one another. The loads made only to bring lines in are summed
    /// into `touched`.
    func scanEach(
        keys: [UInt64], source: NodeSource, touched: inout UInt64,
        _ body: (Int, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard case .clean(let rootRef)? = root, keys.count >= 2 else {
            for (i, k) in keys.enumerated() {
                try withUnsafeBytes(of: k.bigEndian) { p in
                    try scan(tailsAfter: p, source: source) { t in try body(i, t); return true }
                }
            }
            return
        }
        struct Leaf {
            var ref: UInt64
            var low: UInt64?
            var high: UInt64?
        }
        // 1. The leaf of each key, with the leading keys of the parent's entries around it.
        var leaves: [Leaf] = []
        leaves.reserveCapacity(keys.count)
        let rootView = try EntryNodeView(ref: rootRef, level: nil, source: source)
        for key in keys {
            var view = rootView, leaf = Leaf(ref: rootRef, low: nil, high: nil)
            while !view.isLeaf {
                let i = max(try view.lowerBound(leadingKey: key, low: leaf.low, high: leaf.high) - 1, 0)
                leaf.low = try view.leadingKey(i)
                if i + 1 < view.count { leaf.high = try view.leadingKey(i + 1) }
                leaf.ref = try view.child(i)
                if view.level == 1 { break }  // the child is a leaf: not opened here
                view = try EntryNodeView(ref: leaf.ref, level: view.level - 1, source: source)
            }
            leaves.append(leaf)
        }
        // 2. Every leaf's header, then 3. the lines each search starts at.
        var views: [EntryNodeView] = []
        views.reserveCapacity(leaves.count)
        for (k, leaf) in leaves.enumerated() {
            if k > 0 && leaf.ref == leaves[k - 1].ref { views.append(views[k - 1]); continue }
            views.append(leaf.ref == rootRef ? rootView : try EntryNodeView(ref: leaf.ref, level: 0, source: source))
        }
        for (k, key) in keys.enumerated() where k == 0 || leaves[k].ref != leaves[k - 1].ref {
            let v = views[k]
            guard let low = leaves[k].low, let high = leaves[k].high, high > low, key > low, key < high else { continue }
            touched &+= v.touch(near: Int(Double(key &- low) / Double(high &- low) * Double(v.count)))
        }
        // 4. The searches.
        for (k, key) in keys.enumerated() {
            let v = views[k], leaf = leaves[k]
            var i = try v.lowerBound(leadingKey: key, low: leaf.low, high: leaf.high)
            let first = i
            while i < v.count, try v.leadingKey(i) == key {
                try v.withTail(i, after: 8) { try body(k, $0) }
                i += 1
            }
            // The leaf ran out: the matches may go on in the next one (as in `scan(prefix:)`).
            guard i == v.count, let high = leaf.high, high == key else { continue }
            let bound: [UInt8] = i > first
                ? try v.withEntry(i - 1) { Array($0) + [0] } : withUnsafeBytes(of: key.bigEndian) { Array($0) }
            try scan(from: bound, source: source) { e in
                guard e.count >= 8, UInt64(bigEndian: e.loadUnaligned(as: UInt64.self)) == key else { return false }
                try body(k, UnsafeRawBufferPointer(rebasing: e[8...]))
                return true
            }
        }
    }
}

extension EntryTree {
    /// One leaf of a tree: a committed node by ref, or a dirty node of this transaction.
    enum Leaf {
        case clean(UInt64)
        case dirty(EntryTreeNode)
    }

    /// Walks the tree through its inner nodes alone (no leaf is read): `node` gets every committed node's
    /// ref, `leaf` every leaf in order. A subtree whose root is in `skip` is left out whole.
    private func walkInner(skip: Set<UInt64>, node: (UInt64) -> Void, leaf: (Leaf) -> Void, source: NodeSource) throws {
        func visit(_ child: Child, level: Int?) throws {
            switch child {
            case .clean(let ref):
                if skip.contains(ref) { return }
                node(ref)
                if level == 0 { leaf(.clean(ref)); return }
                let view = try EntryNodeView(ref: ref, level: level, source: source)
                if view.isLeaf { leaf(.clean(ref)); return }
                for i in 0..<view.count { try visit(.clean(view.child(i)), level: view.level - 1) }
            case .dirty(let n):
                if n.isLeaf { leaf(.dirty(n)); return }
                for c in n.children { try visit(c, level: n.level - 1) }
            }
        }
        if let root { try visit(root, level: nil) }
    }

    /// The leaves in order (see `walkInner`).
    func leaves(source: NodeSource, skip: Set<UInt64> = []) throws -> [Leaf] {
        var out: [Leaf] = []
        try walkInner(skip: skip, node: { _ in }, leaf: { out.append($0) }, source: source)
        return out
    }

    /// The refs of every committed node of the tree (see `walkInner`).
    func committedRefs(source: NodeSource) throws -> Set<UInt64> {
        var out = Set<UInt64>()
        try walkInner(skip: [], node: { out.insert($0) }, leaf: { _ in }, source: source)
        return out
    }

    /// Calls `body` with every entry of the leaves of this tree that `other` does not share (a committed
    /// node of one is the same node in the other, whole subtrees included), in order. The entries of both
    /// trees that this leaves out are equal, so the symmetric difference of the two calls' entries is the
    /// difference between the trees: what a change set needs, read in proportion to the change.
    func forEachEntryNotShared(with other: Set<UInt64>, source: NodeSource, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        for leaf in try leaves(source: source, skip: other) {
            switch leaf {
            case .clean(let ref):
                let v = try EntryNodeView(ref: ref, level: 0, source: source)
                _ = try v.forEachEntry(from: 0) { try body($0); return true }
            case .dirty(let node):
                for i in 0..<node.count { try body(node.entry(i)) }
            }
        }
    }
}
