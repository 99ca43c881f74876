/// Clusters and table inner nodes the last commit of this process wrote, kept decoded for the next write
/// transaction.
///
/// A run of small commits inserting into one cluster would otherwise decode its up to 256 objects into values
/// (strings allocated and checked) at every commit, only to encode them again: in `realm-bench`'s single
/// commits that decoding was 31 % of the CPU time. The leaf a commit encoded is exactly the node now at its
/// ref, so the next transaction may take it as that node's dirty copy instead of decoding the node. See
/// docs/DECISIONS.md, 16.
///
/// A leaf is kept only when nothing else can make it differ from its node: it was encoded whole into one
/// node, with every column decoded (none read lazily from an older node) and no value stored out of line (a
/// blob belongs to the node; a reused leaf would write it again and never free the old one). It is used only
/// by a transaction that starts from the version that commit made, on the same page store (so neither
/// another process nor compaction came in between), and with the class's properties unchanged.
struct DecodedLeaves {
    /// Most leaves kept: small commits change a few; a large one would only hold memory.
    static let limit = 8

    // Each kind is a short array searched in order: a few entries each (`limit`), where a dictionary per kind
    // and commit cost more to make, hash into and free than the searches (DECISIONS 54).

    struct Leaf {
        /// The class's properties when the leaf was written (compared by `PropertyInfo.sameShape`).
        var properties: [PropertyInfo]
        var leaf: DirtyLeaf
        /// The length of the node it was written as (its pages are freed without reading it).
        var bytes: Int
    }

    var version: UInt64 = 0
    var store: ObjectIdentifier?
    private(set) var leaves: [(ref: UInt64, kept: Leaf)] = []
    /// More leaves were written than `limit`: none is kept.
    var overflowed = false

    /// Records a leaf a commit wrote at `ref` as `node`; a kept leaf keeps the node too, for the next commit
    /// to extend when it only appends rows (DECISIONS 46).
    mutating func add(_ leaf: DirtyLeaf, ref: UInt64, node: [UInt8], properties: [PropertyInfo]) {
        guard !overflowed else { return }
        if let i = leaves.firstIndex(where: { $0.ref == ref }) {
            leaves[i].kept.leaf.dropEncoding()
            leaves.remove(at: i)
        }
        if leaves.count == DecodedLeaves.limit {
            overflowed = true
            for entry in leaves { entry.kept.leaf.dropEncoding() }
            leaves = []
            return
        }
        leaf.keepEncoding(node)
        if leaves.isEmpty { leaves.reserveCapacity(DecodedLeaves.limit) }
        leaves.append((ref, Leaf(properties: properties, leaf: leaf, bytes: node.count)))
    }

    /// Table inner nodes written whole, with every child committed (DECISIONS 49): a run of small commits
    /// changes the same path of inner nodes, which would otherwise be decoded (three arrays of up to 256
    /// entries) and freed by every transaction.
    /// Each with the length of the node it was written as, so that the next transaction frees the node's pages
    /// without reading it.
    private(set) var inners: [(ref: UInt64, node: DirtyInner, bytes: Int)] = []

    mutating func addInner(_ inner: DirtyInner, ref: UInt64, bytes: Int) {
        if let i = inners.firstIndex(where: { $0.ref == ref }) {
            inners[i].node = inner
            inners[i].bytes = bytes
        } else if inners.count < DecodedLeaves.limit {
            if inners.isEmpty { inners.reserveCapacity(DecodedLeaves.limit) }
            inners.append((ref, inner, bytes))
        }
    }

    /// Takes the inner node at `ref`, if kept, with the length of its node.
    mutating func takeInner(_ ref: UInt64) -> (node: DirtyInner, bytes: Int)? {
        guard let i = inners.firstIndex(where: { $0.ref == ref }) else { return nil }
        let kept = inners.remove(at: i)
        return (kept.node, kept.bytes)
    }

    /// Index nodes the commit wrote (leaves and inner nodes, every child committed): a small commit changes
    /// one leaf and its parents per index, which the next would otherwise decode again.
    private(set) var indexNodes: [(ref: UInt64, node: EntryTreeNode)] = []

    mutating func addIndexNode(_ node: EntryTreeNode, ref: UInt64) {
        if let i = indexNodes.firstIndex(where: { $0.ref == ref }) {
            indexNodes[i].node = node
        } else if indexNodes.count < 2 * DecodedLeaves.limit {
            if indexNodes.isEmpty { indexNodes.reserveCapacity(2 * DecodedLeaves.limit) }
            indexNodes.append((ref, node))
        }
    }

    mutating func takeIndexNode(_ ref: UInt64) -> EntryTreeNode? {
        guard let i = indexNodes.firstIndex(where: { $0.ref == ref }) else { return nil }
        return indexNodes.remove(at: i).node
    }

    /// Forgets whatever was recorded for `ref`: the transaction gave the node's pages back (`discard`), so
    /// they may hold another node by the time it commits. (A tree dropped after `dropIndex` wrote its dirty
    /// nodes left them recorded, and with the map full a later node at the same ref was not: the next
    /// transaction took the dropped node for it. Found by the random model soak, seed 2002.)
    mutating func forget(_ ref: UInt64) {
        if let i = leaves.firstIndex(where: { $0.ref == ref }) { leaves.remove(at: i).kept.leaf.dropEncoding() }
        inners.removeAll { $0.ref == ref }
        indexNodes.removeAll { $0.ref == ref }
    }

    /// Empties the lists but keeps their storage, for a later commit to record its nodes in without allocating
    /// the lists again (a write transaction's lists are reused by the transaction after the next).
    mutating func removeAllKeepingStorage() {
        leaves.removeAll(keepingCapacity: true)
        inners.removeAll(keepingCapacity: true)
        indexNodes.removeAll(keepingCapacity: true)
        version = 0
        store = nil
        overflowed = false
    }

    /// Takes the leaf at `ref`, if it is kept for `properties`, with the length of its node.
    mutating func take(_ ref: UInt64, properties: [PropertyInfo]) -> (leaf: DirtyLeaf, bytes: Int)? {
        guard let i = leaves.firstIndex(where: { $0.ref == ref }) else { return nil }
        let kept = leaves.remove(at: i).kept
        guard PropertyInfo.sameShape(kept.properties, properties) else { return nil }
        return (kept.leaf, kept.bytes)
    }
}
