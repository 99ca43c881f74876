/// Children above which a writer splits a table inner node (DECISIONS 56). A single commit re-encodes the inner
/// nodes on its path, so their width is paid on every commit: 64 children instead of 256 took a tenth off the
/// instructions of a one-object commit into 100,000 objects, with the same depth up to 262,144 leaves.
let innerCapacity = 64

/// Most children a reader accepts in a table inner node (files written before DECISIONS 56 have up to 256).
let innerChildLimit = 256

/// A child of a table inner node (or a table root): committed, or changed in this transaction.
enum TreeChild {
    case clean(UInt64)
    case leaf(DirtyLeaf)
    case inner(DirtyInner)

    var isDirty: Bool { if case .clean = self { return false } else { return true } }

    /// Whether this is `other`: the same dirty node object, or the same committed ref.
    func isSameNode(as other: TreeChild?) -> Bool {
        switch (self, other) {
        case (.clean(let a), .clean(let b)?): return a == b
        case (.leaf(let a), .leaf(let b)?): return a === b
        case (.inner(let a), .inner(let b)?): return a === b
        default: return false
        }
    }
}

/// A table inner node being changed by a write transaction.
final class DirtyInner {
    var level: Int
    var firstKeys: [UInt64]
    var children: [TreeChild]
    var counts: [Int]

    init(level: Int, firstKeys: [UInt64] = [], children: [TreeChild] = [], counts: [Int] = []) {
        self.level = level
        self.firstKeys = firstKeys
        self.children = children
        self.counts = counts
    }

    /// Index of the child whose key range holds `key` (the last child whose first key is ≤ key, or 0).
    func childIndex(for key: UInt64) -> Int {
        var lo = 0, hi = firstKeys.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if firstKeys[mid] <= key { lo = mid + 1 } else { hi = mid }
        }
        return max(lo - 1, 0)
    }
}

/// A committed table inner node read in place.
struct InnerView {
    let count: Int
    let level: Int
    let firstKeys: PackedIntsReader
    let refs: PackedIntsReader
    let counts: PackedIntsReader

    init(node: UnsafeRawBufferPointer, ref: UInt64, source: NodeSource) throws {
        guard node.count >= 24 else { throw source.corrupt(ref, "inner node shorter than its header") }
        count = Int(node.u32(at: 16))
        level = Int(node.u32(at: 20))
        guard count >= 1, count <= innerChildLimit, level >= 1, level < 64 else {
            throw source.corrupt(ref, "inner node header out of range (\(count) children, level \(level))")
        }
        do {
            firstKeys = try PackedIntsReader(node, offset: 24, count: count)
            refs = try PackedIntsReader(node, offset: 24 + firstKeys.byteLength, count: count)
            counts = try PackedIntsReader(node, offset: 24 + firstKeys.byteLength + refs.byteLength, count: count)
        } catch {
            throw source.corrupt(ref, "inner node arrays are malformed")
        }
    }

    func childIndex(for key: UInt64) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if UInt64(bitPattern: firstKeys[mid]) <= key { lo = mid + 1 } else { hi = mid }
        }
        return max(lo - 1, 0)
    }

    @inline(__always) func ref(_ i: Int) -> UInt64 { UInt64(bitPattern: refs[i]) }
    @inline(__always) func firstKey(_ i: Int) -> UInt64 { UInt64(bitPattern: firstKeys[i]) }
    @inline(__always) func childCount(_ i: Int) -> Int { Int(counts[i]) }
}

/// What a lookup by key reads of a committed table inner node — its children's first keys and refs — decoded
/// once for a snapshot (DECISIONS 63): a lookup through a clean tree parsed every inner node on its path again.
/// The decoded inner children hang from their parent, so a lookup from a decoded root reaches the leaf's ref
/// without a hash table or a node read.
final class InnerLookup {
    let firstKeys: [UInt64]
    let refs: [UInt64]
    /// The decoded children, once looked up through (nodes of level 1 have leaves for children: none).
    var children: [InnerLookup?]

    init(_ v: InnerView) {
        firstKeys = (0..<v.count).map { v.firstKey($0) }
        refs = (0..<v.count).map { v.ref($0) }
        children = v.level > 1 ? Array(repeating: nil, count: v.count) : []
    }

    /// The child whose subtree holds `key` (as `InnerView.childIndex`).
    func childIndex(for key: UInt64) -> Int {
        firstKeys.withUnsafeBufferPointer { keys in
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = (lo + hi) >> 1
                if keys[mid] <= key { lo = mid + 1 } else { hi = mid }
            }
            return max(lo - 1, 0)
        }
    }
}

/// Where an object's row lives.
enum RowLocation {
    case clean(ClusterView, Int)
    case dirty(DirtyLeaf, Int)
}

/// One leaf as visited by an iteration, in key order.
enum LeafAccess {
    case clean(ClusterView)
    case dirty(DirtyLeaf)

    var count: Int {
        switch self {
        case .clean(let v): return v.count
        case .dirty(let l): return l.keys.count
        }
    }

    func key(at i: Int) -> UInt64 {
        switch self {
        case .clean(let v): return v.key(at: i)
        case .dirty(let l): return l.keys[i]
        }
    }
}

/// Finds rows of a committed tree for keys given in ascending order, keeping the path of the last one: a
/// key in the same leaf costs a row search, one in a sibling leaf one inner-node step.
struct TreeCursor {
    let root: UInt64
    /// Inner nodes from the root down, each with the key range its subtree covers (`hi` nil: unbounded).
    private var path: [(view: InnerView, lo: UInt64, hi: UInt64?)] = []
    private var leaf: (view: ClusterView, lo: UInt64, hi: UInt64?)?

    init(root: UInt64) { self.root = root }

    mutating func locate(_ key: UInt64, source: NodeSource) throws -> (ClusterView, Int)? {
        if root == 0 { return nil }
        if let l = leaf, key >= l.lo, l.hi.map({ key < $0 }) ?? true {
            return l.view.row(of: key).map { (l.view, $0) }
        }
        leaf = nil
        let (ref, lo, hi) = try innerDescent(key, source: source)
        let node = try source.node(ref, expected: nil)
        guard TableTree.isLeafNode(node) else { throw source.corrupt(ref, "expected a table leaf, found type \(node[0])") }
        let v = try ClusterView(node: node, ref: ref, source: source)
        leaf = (v, lo, hi)
        return v.row(of: key).map { (v, $0) }
    }

    /// From the deepest kept inner node whose range holds `key` down to the leaf level (inner nodes of
    /// level 1 have leaves for children; verify checks the levels), keeping the inner nodes passed:
    /// the leaf's page and key range.
    private mutating func innerDescent(_ key: UInt64, source: NodeSource) throws -> (ref: UInt64, lo: UInt64, hi: UInt64?) {
        while let last = path.last, !(key >= last.lo && (last.hi.map { key < $0 } ?? true)) { path.removeLast() }
        var ref: UInt64, lo: UInt64, hi: UInt64?
        if let last = path.last {
            let i = last.view.childIndex(for: key)
            ref = last.view.ref(i)
            lo = i == 0 ? last.lo : last.view.firstKey(i)
            hi = i + 1 < last.view.count ? last.view.firstKey(i + 1) : last.hi
            if last.view.level == 1 { return (ref, lo, hi) }
        } else {
            (ref, lo, hi) = (root, 0, nil)
        }
        while true {
            let node = try source.node(ref, expected: nil)
            if TableTree.isLeafNode(node) { return (ref, lo, hi) }
            guard node[0] == NodeType.tableInner.rawValue else { throw source.corrupt(ref, "expected a table node, found type \(node[0])") }
            let v = try InnerView(node: node, ref: ref, source: source)
            path.append((v, lo, hi))
            let i = v.childIndex(for: key)
            ref = v.ref(i)
            if i > 0 { lo = v.firstKey(i) }
            if i + 1 < v.count { hi = v.firstKey(i + 1) }
            if v.level == 1 { return (ref, lo, hi) }
        }
    }
}

/// Read operations on a table tree; the tree may mix committed and dirty nodes.
enum TableTree {
    static func isLeafNode(_ node: UnsafeRawBufferPointer) -> Bool { node[0] == NodeType.cluster.rawValue }

    static func locate(_ root: TreeChild, key: UInt64, source: NodeSource) throws -> RowLocation? {
        var current = root
        while true {
            switch current {
            case .leaf(let l):
                return l.row(of: key).map { .dirty(l, $0) }
            case .inner(let n):
                if n.children.isEmpty { return nil }
                current = n.children[n.childIndex(for: key)]
            case .clean(let ref):
                return try locateCommitted(ref, key: key, source: source)
            }
        }
    }

    /// `locate` below a committed node: inner nodes through the source's decoded lookups where it keeps them.
    private static func locateCommitted(_ ref: UInt64, key: UInt64, source: NodeSource) throws -> RowLocation? {
        if ref == 0 { return nil }
        var ref = ref
        var lookup = source.innerLookup(ref)
        var parent: (InnerLookup, Int)?
        while true {
            if let inner = lookup {
                let i = inner.childIndex(for: key)
                ref = inner.refs[i]
                lookup = inner.children.isEmpty ? nil : inner.children[i]
                parent = inner.children.isEmpty ? nil : (inner, i)
                continue
            }
            let node = try source.node(ref, expected: nil)
            if isLeafNode(node) {
                let v = try ClusterView(node: node, ref: ref, source: source)
                return v.row(of: key).map { .clean(v, $0) }
            }
            guard node[0] == NodeType.tableInner.rawValue else { throw source.corrupt(ref, "expected a table node, found type \(node[0])") }
            let v = try InnerView(node: node, ref: ref, source: source)
            if let (p, i) = parent {
                let decoded = InnerLookup(v)
                p.children[i] = decoded
                lookup = decoded
            } else if let decoded = source.keepInnerLookup(ref, v) {
                lookup = decoded
            } else {
                ref = v.ref(v.childIndex(for: key))
            }
            parent = nil
        }
    }

    /// The key at position `index` in key order.
    static func key(at index: Int, _ root: TreeChild, source: NodeSource) throws -> UInt64? {
        var current = root
        var i = index
        while true {
            switch current {
            case .leaf(let l):
                return i < l.keys.count ? l.keys[i] : nil
            case .inner(let n):
                var next: TreeChild?
                for c in 0..<n.children.count {
                    if i < n.counts[c] { next = n.children[c]; break }
                    i -= n.counts[c]
                }
                guard let nx = next else { return nil }
                current = nx
            case .clean(let ref):
                if ref == 0 { return nil }
                let node = try source.node(ref, expected: nil)
                if isLeafNode(node) {
                    let v = try ClusterView(node: node, ref: ref, source: source)
                    return i < v.count ? v.key(at: i) : nil
                }
                let v = try InnerView(node: node, ref: ref, source: source)
                var next: UInt64?
                for c in 0..<v.count {
                    let n = v.childCount(c)
                    guard n >= 0 else { throw source.corrupt(ref, "inner node child \(c) has count \(n)") }
                    if i < n { next = v.ref(c); break }
                    i -= n
                }
                guard let nx = next else { return nil }
                current = .clean(nx)
            }
        }
    }

    /// Visits every leaf in key order; `body` returns false to stop. Returns false if stopped. After each
    /// committed leaf, `boundary` gets the refs of the inner nodes on the current path: the only nodes the
    /// walk still reads from (an encrypted file's scan may give back the other decrypted pages there).
    @discardableResult
    static func forEachLeaf(_ root: TreeChild, source: NodeSource, boundary: (([UInt64]) throws -> Void)? = nil,
                            _ body: (LeafAccess) throws -> Bool) throws -> Bool {
        var path: [UInt64] = []
        return try forEachLeaf(root, source: source, path: &path, boundary: boundary, body)
    }

    /// The leaves of a committed tree whose first row's position (in key order) lies in `firsts`, in key order;
    /// subtrees outside it are skipped by their counts. Runs of positions that tile the table visit each leaf
    /// exactly once between them.
    static func forEachLeaf(committed ref: UInt64, source: NodeSource, firsts: Range<Int>,
                            _ body: (LeafAccess) throws -> Bool) throws -> Bool {
        var base = 0
        return try forEachLeaf(committed: ref, source: source, firsts: firsts, base: &base, body)
    }

    private static func forEachLeaf(committed ref: UInt64, source: NodeSource, firsts: Range<Int>, base: inout Int,
                                    _ body: (LeafAccess) throws -> Bool) throws -> Bool {
        if ref == 0 { return true }
        let node = try source.node(ref, expected: nil)
        if isLeafNode(node) {
            let v = try ClusterView(node: node, ref: ref, source: source)
            defer { base += v.count }
            if v.count == 0 || !firsts.contains(base) { return true }
            return try body(.clean(v))
        }
        guard node[0] == NodeType.tableInner.rawValue else { throw source.corrupt(ref, "expected a table node, found type \(node[0])") }
        let v = try InnerView(node: node, ref: ref, source: source)
        for c in 0..<v.count {
            if base >= firsts.upperBound { return true }
            let n = v.childCount(c)
            if n == 0 { continue }
            // Wholly before the run: none of its leaves starts in it.
            if base + n <= firsts.lowerBound {
                base += n
                continue
            }
            let start = base
            guard try forEachLeaf(committed: v.ref(c), source: source, firsts: firsts, base: &base, body) else { return false }
            if base < firsts.upperBound && base != start + n { throw source.corrupt(v.ref(c), "subtree holds \(base - start) objects, its parent counts \(n)") }
        }
        return true
    }

    private static func forEachLeaf(_ root: TreeChild, source: NodeSource, path: inout [UInt64],
                                    boundary: (([UInt64]) throws -> Void)?, _ body: (LeafAccess) throws -> Bool) throws -> Bool {
        switch root {
        case .leaf(let l):
            return l.keys.isEmpty ? true : try body(.dirty(l))
        case .inner(let n):
            for c in n.children where !(try forEachLeaf(c, source: source, path: &path, boundary: boundary, body)) { return false }
            return true
        case .clean(let ref):
            if ref == 0 { return true }
            let node = try source.node(ref, expected: nil)
            if isLeafNode(node) {
                let v = try ClusterView(node: node, ref: ref, source: source)
                if v.count == 0 { return true }
                guard try body(.clean(v)) else { return false }
                try boundary?(path)
                return true
            }
            guard node[0] == NodeType.tableInner.rawValue else { throw source.corrupt(ref, "expected a table node, found type \(node[0])") }
            let v = try InnerView(node: node, ref: ref, source: source)
            path.append(ref)
            defer { path.removeLast() }
            for c in 0..<v.count where !(try forEachLeaf(.clean(v.ref(c)), source: source, path: &path, boundary: boundary, body)) { return false }
            return true
        }
    }
}
