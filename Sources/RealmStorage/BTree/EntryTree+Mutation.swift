/// Insert and remove: descend without touching anything, then on the way back up turn each node of the path
/// into a dirty node (freeing the committed one), apply the child's result, merge or split as needed.
extension EntryTree {
    /// How an overfull node is cut. `append`: the change was at the node's end, keep the left part full.
    /// `prepend`: the change was before every entry of the leftmost path, keep the right part full.
    enum SplitMode { case balanced, append, prepend }

    /// What a subtree became: its node (nil when it became empty), new right siblings to insert after it,
    /// and how it was split. `nil` from the recursive calls means nothing changed.
    struct Outcome {
        var node: EntryTreeNode?
        var siblings: [EntryTreeNode] = []
        var mode: SplitMode = .balanced
    }

    /// Inserts; returns false (and changes nothing) if the entry exists.
    mutating func insert(_ entry: [UInt8], sink: NodeSink) throws -> Bool {
        try entry.withUnsafeBytes { try insert($0, sink: sink) }
    }

    /// `insert(_:sink:)` with the entry in any memory (copied into the tree).
    mutating func insert(_ entry: UnsafeRawBufferPointer, sink: NodeSink) throws -> Bool {
        precondition(entry.count <= limits.maxEntryBytes, "EntryTree: entry of \(entry.count) bytes exceeds \(limits.maxEntryBytes)")
        guard let root else {
            let leaf = EntryTreeNode(level: 0)
            leaf.insert(entry, at: 0)
            self.root = .dirty(leaf)
            hasChanges = true
            return true
        }
        if let done = insertInPlace(entry) { return done }
        guard let outcome = try insert(entry, into: root, level: nil, sink: sink) else { return false }
        finish(outcome)
        return true
    }

    /// The common insert, without the recursion: the whole path is dirty, the leaf has room, the entry is not
    /// the leaf's new first entry (so no entry above the leaf changes), no node below the root is underfull
    /// and the root would not collapse. The general path would then only insert into the leaf (every split and
    /// merge check finds nothing to do), so do just that. nil when these conditions do not hold.
    private mutating func insertInPlace(_ key: UnsafeRawBufferPointer) -> Bool? {
        guard case .dirty(let top) = root, top.isLeaf || top.count >= 2 else { return nil }
        // Unretained: `top` and the parents' child arrays, which nothing here changes, keep the nodes alive.
        var node = Unmanaged.passUnretained(top)
        var isRoot = true
        descent: while true {
            let step: InPlaceStep = node._withUnsafeGuaranteedRef { n in
                if n.isLeaf { return .atLeaf }
                guard limits.fits(count: n.count, entryBytes: n.entryBytes, inner: true),
                      isRoot || !isUnderfull(count: n.count, entryBytes: n.entryBytes, inner: true)
                else { return .giveUp }
                var child: Unmanaged<EntryTreeNode>? = nil
                guard n.child(n.childIndexForInsert(key), dirty: &child) == nil, let child else { return .giveUp }
                return .down(child)
            }
            switch step {
            case .atLeaf: break descent
            case .giveUp: return nil
            case .down(let child):
                node = child
                isRoot = false
            }
        }
        let inserted: Bool? = node._withUnsafeGuaranteedRef { leaf in
            let (pos, found) = leaf.lowerBoundForInsert(key)
            if found { return false }
            let count = leaf.count + 1, bytes = leaf.entryBytes + key.count
            // Sorted entries share what the first and the last share (the key is not the new first here
            // unless the leaf is empty or the root).
            let shared = leaf.count == 0 ? 0
                : commonPrefixLength(pos == 0 ? key : leaf.entry(0), pos == leaf.count ? key : leaf.entry(leaf.count - 1))
            guard pos > 0 || isRoot, limits.fits(count: count, entryBytes: bytes, inner: false, shared: shared),
                  isRoot || !isUnderfull(count: count, entryBytes: bytes, inner: false)
            else { return nil }
            leaf.insert(key, at: pos)
            return true
        }
        if inserted == true { hasChanges = true }
        return inserted
    }

    private enum InPlaceStep {
        case atLeaf, giveUp
        case down(Unmanaged<EntryTreeNode>)
    }

    /// Removes; returns false if absent.
    mutating func remove(_ entry: [UInt8], sink: NodeSink) throws -> Bool {
        try entry.withUnsafeBytes { try remove($0, sink: sink) }
    }

    /// `remove(_:sink:)` with the entry in any memory.
    mutating func remove(_ entry: UnsafeRawBufferPointer, sink: NodeSink) throws -> Bool {
        guard let root else { return false }
        guard let outcome = try remove(entry, from: root, level: nil, sink: sink) else { return false }
        finish(outcome)
        return true
    }

    /// Installs the root's outcome: grows the tree over new siblings, collapses single-child roots.
    private mutating func finish(_ outcome: Outcome) {
        hasChanges = true
        guard var node = outcome.node else {
            root = nil
            return
        }
        var siblings = outcome.siblings
        while !siblings.isEmpty {
            let top = EntryTreeNode(level: node.level + 1)
            top.insert(node.entry(0), child: .dirty(node), at: 0)
            for s in siblings { top.insert(s.entry(0), child: .dirty(s), at: top.count) }
            siblings = split(top, mode: .balanced)
            node = top
        }
        var newRoot = Child.dirty(node)
        while case .dirty(let n) = newRoot, !n.isLeaf, n.count == 1 { newRoot = n.children[0] }
        root = newRoot
    }

    /// The dirty node for `child`: itself when dirty, else decoded from its view and the committed node freed.
    private func takeDirty(_ view: EntryNodeView, sink: NodeSink) throws -> EntryTreeNode {
        let node: EntryTreeNode
        if let kept = sink.decodedIndexNode(view.ref) {
            // Debug builds check that the kept node is the one at the ref.
            assert(kept.sameContent(as: view), "DecodedLeaves: kept index node differs from the node at \(view.ref)")
            node = kept
        } else {
            node = try view.materialize()
        }
        try sink.free(view.ref, bytes: view.bytes.count)
        return node
    }

    private func insert(_ key: UnsafeRawBufferPointer, into child: Child, level: Int?, sink: NodeSink) throws -> Outcome? {
        switch child {
        case .clean(let ref):
            let view = try EntryNodeView(ref: ref, level: level, source: sink)
            if view.isLeaf {
                let (pos, found) = try view.lowerBound(key)
                if found { return nil }
                return insertIntoLeaf(try takeDirty(view, sink: sink), key, at: pos)
            }
            let i = try view.childIndex(for: key)
            guard let sub = try insert(key, into: .clean(view.child(i)), level: view.level - 1, sink: sink) else {
                return nil
            }
            return try absorb(sub, into: try takeDirty(view, sink: sink), at: i, sink: sink)
        case .dirty(let node):
            if node.isLeaf {
                let (pos, found) = node.lowerBoundForInsert(key)
                if found { return nil }
                return insertIntoLeaf(node, key, at: pos)
            }
            let i = node.childIndexForInsert(key)
            guard let sub = try insert(key, into: node.children[i], level: node.level - 1, sink: sink) else {
                return nil
            }
            return try absorb(sub, into: node, at: i, sink: sink)
        }
    }

    private func insertIntoLeaf(_ node: EntryTreeNode, _ entry: UnsafeRawBufferPointer, at pos: Int) -> Outcome {
        node.insert(entry, at: pos)
        let mode: SplitMode = pos == node.count - 1 ? .append : pos == 0 ? .prepend : .balanced
        return Outcome(node: node, siblings: split(node, mode: mode, after: ascending ? pos : nil), mode: mode)
    }

    private func remove(_ key: UnsafeRawBufferPointer, from child: Child, level: Int?, sink: NodeSink) throws -> Outcome? {
        switch child {
        case .clean(let ref):
            let view = try EntryNodeView(ref: ref, level: level, source: sink)
            if view.isLeaf {
                let (pos, found) = try view.lowerBound(key)
                if !found { return nil }
                return removeFromLeaf(try takeDirty(view, sink: sink), at: pos)
            }
            let i = try view.childIndex(for: key)
            guard let sub = try remove(key, from: .clean(view.child(i)), level: view.level - 1, sink: sink) else {
                return nil
            }
            return try absorb(sub, into: try takeDirty(view, sink: sink), at: i, sink: sink)
        case .dirty(let node):
            if node.isLeaf {
                let (pos, found) = node.lowerBound(key)
                if !found { return nil }
                return removeFromLeaf(node, at: pos)
            }
            let i = node.childIndex(for: key)
            guard let sub = try remove(key, from: node.children[i], level: node.level - 1, sink: sink) else {
                return nil
            }
            return try absorb(sub, into: node, at: i, sink: sink)
        }
    }

    private func removeFromLeaf(_ node: EntryTreeNode, at pos: Int) -> Outcome {
        node.remove(at: pos)
        return Outcome(node: node.count == 0 ? nil : node)
    }

    /// Applies child `i`'s outcome to the dirty inner node `node`, then merges or splits.
    private func absorb(_ sub: Outcome, into node: EntryTreeNode, at i: Int, sink: NodeSink) throws -> Outcome {
        guard let child = sub.node else {
            node.remove(at: i)
            return Outcome(node: node.count == 0 ? nil : node, siblings: split(node, mode: .balanced))
        }
        // The child's first entry may have changed (a new minimum, or its first entry removed).
        node.setChild(child, at: i)
        for (j, s) in sub.siblings.enumerated() { node.insert(s.entry(0), child: .dirty(s), at: i + 1 + j) }
        var mode = SplitMode.balanced
        if !sub.siblings.isEmpty {
            if sub.mode == .append && i + sub.siblings.count == node.count - 1 { mode = .append }
            if sub.mode == .prepend && i == 0 { mode = .prepend }
        } else {
            try mergeIfUnderfull(node, at: i, sink: sink)
        }
        let newest = ascending && !sub.siblings.isEmpty ? i + sub.siblings.count : nil
        return Outcome(node: node, siblings: split(node, mode: mode, after: newest), mode: mode)
    }

    // MARK: Splitting and merging

    /// Cuts an overfull node; returns the new right siblings (empty when it fits). Normally one sibling; more
    /// (or an oversized node left whole) only for a node holding entries over the limits (corrupt or foreign).
    /// `after`: the position of the entry just inserted into a node of an ascending batch (`ascending`); the
    /// node is then cut right after it when both parts fit.
    func split(_ node: EntryTreeNode, mode: SplitMode, after: Int? = nil) -> [EntryTreeNode] {
        let inner = !node.isLeaf
        let n = node.count
        if limits.fits(count: n, entryBytes: node.entryBytes, inner: inner, shared: node.sharedPrefix) || n < 2 { return [] }
        var prefix = [Int](repeating: 0, count: n + 1)  // prefix[i]: bytes of entries 0..<i
        for i in 0..<n { prefix[i + 1] = prefix[i] + node.entry(i).count }
        // What the entries a..<b of a leaf share, which its prefix leaf stores once.
        func shared(_ a: Int, _ b: Int) -> Int { inner ? 0 : node.sharedPrefix(a, b - 1) }
        func fits(_ a: Int, _ b: Int) -> Bool {
            limits.fits(count: b - a, entryBytes: prefix[b] - prefix[a], inner: inner, shared: shared(a, b))
        }

        // Balanced: the cut that best halves the encoded bytes (each entry also costs its offset).
        var mid = 1
        var best = Int.max
        let total = prefix[n] + 4 * n
        for s in 1..<n {
            let d = abs(2 * (prefix[s] + 4 * s) - total)
            if d < best { best = d; mid = s }
        }
        var candidates = [mid]
        if mode == .append { candidates.insert(n - 1, at: 0) }
        if mode == .prepend { candidates.insert(1, at: 0) }
        if let p = after, p + 1 < n || mode == .append {
            // A sorted batch's node is cut after the new entry, or earlier so that it keeps an eighth free: the
            // entries of a bulk load are followed by single inserts anywhere, and a node left full splits at the
            // first of them, which doubled a later single commit's pages (DECISIONS 102).
            var s = min(p + 1, n - 1)
            while s > 1 && (8 * s > 7 * limits.entryLimit(inner: inner)
                            || 8 * EntryTree.encodedSize(count: s, entryBytes: prefix[s], inner: inner, shared: shared(0, s),
                                                         prefixLeaf: limits.prefixLeaves) > 7 * limits.maxNodeBytes) { s -= 1 }
            candidates.insert(s, at: 0)
        }
        for s in candidates where fits(0, s) && fits(s, n) { return [node.cut(from: s)] }

        // Greedy: as many full pieces as needed. Reached only for a node far over the limits (corrupt, or
        // written under other limits); every piece keeps at least two entries, so growing the tree ends.
        var cuts: [Int] = []
        var start = 0
        for i in 1..<n where i - start >= 2 && n - i >= 2 && !fits(start, i + 1) {
            cuts.append(i)
            start = i
        }
        var pieces: [EntryTreeNode] = []
        for c in cuts.reversed() { pieces.append(node.cut(from: c)) }
        return pieces.reversed()
    }

    private func isUnderfull(count: Int, entryBytes: Int, inner: Bool) -> Bool {
        4 * count < limits.entryLimit(inner: inner)
            && 4 * EntryTree.encodedSize(count: count, entryBytes: entryBytes, inner: inner, prefixLeaf: limits.prefixLeaves) < limits.maxNodeBytes
    }

    private func fitsMerged(count: Int, entryBytes: Int, inner: Bool) -> Bool {
        4 * count <= 3 * limits.entryLimit(inner: inner)
            && 4 * EntryTree.encodedSize(count: count, entryBytes: entryBytes, inner: inner, prefixLeaf: limits.prefixLeaves) <= 3 * limits.maxNodeBytes
    }

    /// Merges dirty child `i` of `node` into an adjacent sibling when it is underfull and the two fit well.
    private func mergeIfUnderfull(_ node: EntryTreeNode, at i: Int, sink: NodeSink) throws {
        guard case .dirty(let child) = node.children[i],
              isUnderfull(count: child.count, entryBytes: child.entryBytes, inner: !child.isLeaf)
        else { return }
        for j in [i - 1, i + 1] where j >= 0 && j < node.count {
            let neighbour: EntryTreeNode
            switch node.children[j] {
            case .dirty(let d):
                guard fitsMerged(count: child.count + d.count, entryBytes: child.entryBytes + d.entryBytes,
                                 inner: !child.isLeaf) else { continue }
                neighbour = d
            case .clean(let ref):
                let view = try EntryNodeView(ref: ref, level: child.level, source: sink)
                guard try fitsMerged(count: child.count + view.count, entryBytes: child.entryBytes + view.areaLength(),
                                 inner: !child.isLeaf) else { continue }
                neighbour = try takeDirty(view, sink: sink)
            }
            if j < i {
                neighbour.append(contentsOf: child)
                node.setChild(neighbour, at: j)
                node.remove(at: i)
            } else {
                child.append(contentsOf: neighbour)
                node.remove(at: j)
            }
            return
        }
    }
}
