/// Cluster trees: the objects of a table in formats ≥ 10 (and dictionaries in formats 21–22).
///
/// Leaf: `[tagged n | ref to relative keys, column leaf…]`. Inner node: `[ref to child key offsets | 0,
/// tagged depth, tagged object count, child…]`; without offsets child `i` starts at key `i << (depth × shift)`.
extension CoreGroup {
    /// Objects under the cluster node `node`.
    func clusterCount(_ node: CoreNode) throws -> Int {
        guard node.hasRefs, node.count >= 1 else { throw badCluster(node) }
        if node.isInner {
            guard node.count >= 3 else { throw badCluster(node) }
            let n = try node.tagged(2)
            guard n >= 0, n <= Int64(reader.memory.size) * 8 else { throw badCluster(node) }
            return Int(n)
        }
        let first = try node.refOrTagged(0)
        if let n = first.number {
            guard n >= 0, n <= Int64(reader.memory.size) * 8 else { throw badCluster(node) }
            return Int(n)
        }
        guard let keys = first.ref else { return 0 }
        return try reader.node(keys).count
    }

    func badCluster(_ node: CoreNode) -> RealmCoreFileError {
        .corrupt(what: "cluster node with \(node.count) slots and flags \(node.flags)", offset: node.ref, context: "")
    }

    /// Key offset of child `c` of the inner node `node` (`keys` = its offsets node, if any).
    func childOffset(_ node: CoreNode, _ keys: CoreNode?, _ c: Int, shift: Int) throws -> Int64 {
        if let keys { return Int64(bitPattern: try keys.unsigned(c)) }
        let depth = try node.tagged(1)
        guard depth > 0, depth < 8, depth * Int64(shift) < 56 else { throw badCluster(node) }
        return Int64(c) << (depth * Int64(shift))
    }

    func innerParts(_ node: CoreNode) throws -> (keys: CoreNode?, children: Int) {
        guard node.count >= 4 else { throw badCluster(node) }
        let keys = try node.ref(0).map { try reader.node($0) }
        let children = node.count - 3
        if let keys, keys.count < children { throw badCluster(node) }
        return (keys, children)
    }

    /// Key of object `index` of the cluster leaf `leaf` whose keys start at `offset`.
    func leafKey(_ leaf: CoreNode, _ index: Int, offset: Int64) throws -> Int64 {
        let first = try leaf.refOrTagged(0)
        if first.number != nil { return offset &+ Int64(index) }
        guard let keysRef = first.ref else { throw badCluster(leaf) }
        return offset &+ Int64(bitPattern: try reader.node(keysRef).unsigned(index))
    }

    /// The leaf holding the object at `position`, the object's index in it and its key.
    func clusterLocate(root: Int, position: Int, shift: Int) throws -> (leaf: CoreNode, index: Int, key: Int64) {
        var node = try reader.node(root)
        var pos = position
        var offset: Int64 = 0
        var depth = 0
        while node.isInner {
            depth += 1
            guard depth <= CoreNodeReader.maximumDepth else { throw badCluster(node) }
            let (keys, children) = try innerParts(node)
            var next: CoreNode?
            for c in 0..<children {
                guard let ref = try node.ref(3 + c) else { throw badCluster(node) }
                let child = try reader.node(ref)
                let n = try clusterCount(child)
                if pos < n {
                    offset &+= try childOffset(node, keys, c, shift: shift)
                    next = child
                    break
                }
                pos -= n
            }
            guard let next else {
                throw RealmCoreFileError.corrupt(what: "object \(position) not under the cluster node (its counts disagree)", offset: node.ref, context: "")
            }
            node = next
        }
        guard pos >= 0, pos < (try clusterCount(node)) else {
            throw RealmCoreFileError.corrupt(what: "object \(position) not in the cluster leaf (its counts disagree)", offset: node.ref, context: "")
        }
        return (node, pos, try leafKey(node, pos, offset: offset))
    }

    /// The leaf, index and position of the object with `key`; nil when there is none. Without `needPosition`
    /// the position is not counted (it reads the header of every child left of the path) and is 0.
    func clusterFind(root: Int, key: Int64, shift: Int, needPosition: Bool = true) throws -> (leaf: CoreNode, index: Int, position: Int)? {
        var node = try reader.node(root)
        var offset: Int64 = 0
        var before = 0
        var depth = 0
        while node.isInner {
            depth += 1
            guard depth <= CoreNodeReader.maximumDepth else { throw badCluster(node) }
            let (keys, children) = try innerParts(node)
            // The last child whose first key is at most the key sought: the offsets ascend, so a binary search.
            let relative = key &- offset
            var lo = 0, hi = children
            while lo < hi {
                let mid = (lo + hi) / 2
                if try childOffset(node, keys, mid, shift: shift) <= relative { lo = mid + 1 } else { hi = mid }
            }
            let chosen = lo - 1
            guard chosen >= 0 else { return nil }
            if needPosition {
                for c in 0..<chosen {
                    guard let ref = try node.ref(3 + c) else { throw badCluster(node) }
                    before += try clusterCount(try reader.node(ref))
                }
            }
            offset &+= try childOffset(node, keys, chosen, shift: shift)
            guard let ref = try node.ref(3 + chosen) else { throw badCluster(node) }
            node = try reader.node(ref)
        }
        let n = try clusterCount(node)
        let relative = key &- offset
        let first = try node.refOrTagged(0)
        if first.number != nil {
            guard relative >= 0, relative < Int64(n) else { return nil }
            return (node, Int(relative), before + Int(relative))
        }
        guard let keysRef = first.ref else { return nil }
        let keys = try reader.node(keysRef)
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if Int64(bitPattern: try keys.unsigned(mid)) < relative { lo = mid + 1 } else { hi = mid }
        }
        guard lo < keys.count, Int64(bitPattern: try keys.unsigned(lo)) == relative else { return nil }
        return (node, lo, before + lo)
    }

    /// Calls `body` with every leaf (and its object count) of the cluster tree at `node`, in key order.
    func forEachClusterLeaf(_ node: CoreNode, budget: inout WalkBudget, depth: Int = 0,
                            _ body: (CoreNode, Int) throws -> Void) throws {
        try budget.spend(node.ref)
        guard node.isInner else { return try body(node, try clusterCount(node)) }
        guard depth < CoreNodeReader.maximumDepth else { throw badCluster(node) }
        let (_, children) = try innerParts(node)
        for c in 0..<children {
            guard let ref = try node.ref(3 + c) else { throw badCluster(node) }
            try forEachClusterLeaf(try reader.node(ref), budget: &budget, depth: depth + 1, body)
        }
    }

    /// The leaves of the cluster tree at `root` whose first object's position lies in `firsts`, in key order, with
    /// their object count, key offset (their objects' keys are the offset plus their relative keys) and first
    /// position; `body` returns false to stop, and so does this. A subtree whose objects all lie before `firsts`
    /// is skipped by its count and the walk stops at the first leaf past it, so runs of positions that tile
    /// `0..<n` visit each leaf exactly once between them (`RealmCoreFile.forEachLeaf(of:firsts:)`).
    ///
    /// The counts a walk skips by are checked where a walk reads what they count: every leaf must end within
    /// the count of each subtree holding it, and a subtree walked to its end must hold exactly its count. So two
    /// runs never disagree about where a leaf lies (a leaf read twice or by neither); a count that does not add
    /// up is an error.
    @discardableResult
    func forEachClusterLeaf(root: CoreNode, shift: Int, firsts: Range<Int>,
                            _ body: (CoreNode, Int, Int64, Int) throws -> Bool) throws -> Bool {
        var walk = ClusterWalk(group: self, shift: shift, firsts: firsts, budget: WalkBudget(reader))
        let n = try clusterCount(root)
        return try walk.visit(root, count: n, keyOffset: 0, depth: 0, body)
    }

    /// One walk of `forEachClusterLeaf(root:shift:firsts:_:)`: where it is, and the nodes it may still visit.
    private struct ClusterWalk {
        let group: CoreGroup
        let shift: Int
        let firsts: Range<Int>
        var budget: WalkBudget
        /// The position of the next object the walk meets.
        var position = 0

        /// Visits `node`, which holds `count` objects by its own header (checked against what it holds) and
        /// starts at `position`.
        mutating func visit(_ node: CoreNode, count: Int, keyOffset: Int64, depth: Int,
                            _ body: (CoreNode, Int, Int64, Int) throws -> Bool) throws -> Bool {
            try budget.spend(node.ref)
            guard position < firsts.upperBound else { return false }
            let end = position + count
            guard node.isInner else {
                guard position >= firsts.lowerBound else {
                    position = end
                    return true
                }
                guard try body(node, count, keyOffset, position) else { return false }
                position = end
                return true
            }
            guard depth < CoreNodeReader.maximumDepth else { throw group.badCluster(node) }
            let (keys, children) = try group.innerParts(node)
            for c in 0..<children {
                guard position < firsts.upperBound else { return false }
                guard let ref = try node.ref(3 + c) else { throw group.badCluster(node) }
                let child = try group.reader.node(ref)
                let n = try group.clusterCount(child)
                guard n <= end - position else { throw countsDisagree(node) }
                if position + n <= firsts.lowerBound {
                    // Every leaf of the child starts before the run.
                    position += n
                    continue
                }
                let offset = keyOffset &+ (try group.childOffset(node, keys, c, shift: shift))
                guard try visit(child, count: n, keyOffset: offset, depth: depth + 1, body) else { return false }
            }
            guard position == end else { throw countsDisagree(node) }
            return true
        }

        func countsDisagree(_ node: CoreNode) -> RealmCoreFileError {
            .corrupt(what: "cluster node whose object count disagrees with its children's", offset: node.ref, context: "")
        }
    }

    /// Bits per level of the compact inner nodes' key offsets: 8 in release builds of core, 2 in the test builds
    /// with 4-element nodes (`_4_` fixtures). Nothing in the file says which; a release build's first leaf under
    /// a compact inner node holds keys beyond 3 (its nodes fill to 256), a test build's never does.
    func clusterShift(root: Int?) throws -> Int {
        guard let root else { return 8 }
        var node = try reader.node(root)
        var sawCompact = false
        var depth = 0
        while node.isInner {
            depth += 1
            guard depth <= CoreNodeReader.maximumDepth else { throw badCluster(node) }
            let (keys, _) = try innerParts(node)
            if keys == nil { sawCompact = true }
            guard let ref = try node.ref(3) else { throw badCluster(node) }
            node = try reader.node(ref)
        }
        guard sawCompact else { return 8 }
        let n = try clusterCount(node)
        if n > 4 { return 8 }
        for i in 0..<n where try leafKey(node, i, offset: 0) > 3 { return 8 }
        return 2
    }
}
