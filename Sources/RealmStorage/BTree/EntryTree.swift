#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A copy-on-write B+tree of distinct byte-string entries ordered by unsigned byte comparison (memcmp, a
/// proper prefix first). Secondary indexes and primary keys store `encode(value) ++ objectKey` in it.
/// Node layout: docs/FILE_FORMAT.md, "Index nodes (types 6 and 7)".
///
/// **Copy-on-write.** Committed nodes are never modified. A mutation turns the nodes on its root-to-leaf path
/// into dirty in-memory nodes (`EntryTreeNode`, decoded entries) and frees each committed node it replaces,
/// exactly once, through `NodeSink.free`. Dirty nodes are encoded and written only by `commit`. Lookups on
/// committed nodes binary-search the mapped bytes directly.
///
/// **Value semantics are shallow.** Dirty nodes are class instances: copies of an `EntryTree` share them, and a
/// mutation through one copy is seen (and may corrupt the bookkeeping of) the others. The engine holds exactly
/// one copy per index per write transaction. After any method throws during a mutation (a corrupt node) the
/// tree may be half-changed; the transaction must be rolled back.
///
/// **Node size limits** (`Limits.standard`): a node splits when its encoded size would pass 8192 bytes (two
/// pages, so a full node fills its extent) or its entry count would pass 512. The count limit rarely binds
/// for real entries (≥ 9 bytes); it bounds the cost of decoding and shifting a node of tiny entries. 256 was
/// rejected because a node of 256 short entries (e.g. 17-byte int keys: 5.4 KiB) would leave its second page
/// mostly empty. An insert at the end of a node splits it so the left part keeps everything it had
/// (sequential inserts give full nodes); an insert before every entry of the leftmost leaf keeps the right
/// part full (descending inserts); any other split halves the node by bytes.
///
/// **Removal** drops nodes that become empty and collapses a root with one child. A node that falls below a
/// quarter of both limits is merged into an adjacent sibling when the result stays within three quarters of
/// both limits (the gap avoids split/merge ping-pong); otherwise it stays underfull (so an inner node below
/// the root may have a single child).
///
/// **Reading** a committed node checks its header, shape and exact length on open and each entry's offsets on
/// access (`EntryNodeView`): the m + 1 offsets are `0, end(0), ..., end(m-1)`, entry i spanning
/// `off[i]..<off[i+1]` of the entry area. Damage throws `StorageError.corrupt` naming the page. A corrupt
/// file whose nodes share a child can still make a mutation free that child twice; `checkInvariants` reports
/// such sharing.
struct EntryTree {
    /// Node size limits. Every node of a tree satisfies them; `checkInvariants` verifies it.
    struct Limits: Sendable, Equatable {
        /// Largest encoded node, header included.
        let maxNodeBytes: Int
        /// Most entries (or children) in one node.
        let maxEntries: Int

        init(maxNodeBytes: Int, maxEntries: Int) {
            precondition(maxNodeBytes >= 256 && maxNodeBytes <= 1 << 24, "EntryTree: node byte limit out of range")
            precondition(maxEntries >= 4, "EntryTree: entry limit below 4")
            self.maxNodeBytes = maxNodeBytes
            self.maxEntries = maxEntries
        }

        /// The limits of every index in the file format.
        static let standard = Limits(maxNodeBytes: 8192, maxEntries: 512)

        /// Longest entry accepted by `insert`: small enough that halving any overfull node gives two nodes
        /// within the byte limit (8192 → 2016 bytes; real entries are at most ~260).
        var maxEntryBytes: Int { (maxNodeBytes - 128) / 4 }

        func fits(count: Int, entryBytes: Int, inner: Bool) -> Bool {
            count <= maxEntries && EntryTree.encodedSize(count: count, entryBytes: entryBytes, inner: inner) <= maxNodeBytes
        }
    }

    /// A child (or the root): a committed node by ref, or a dirty node of this transaction.
    enum Child {
        case clean(UInt64)
        case dirty(EntryTreeNode)
    }

    /// Fixed part of an index node: 16-byte node header, entry count, level.
    static let fixedSize = 24
    /// Deepest level accepted when reading (a tree of 2^64 entries is far shallower).
    static let maxLevel = 48

    /// Encoded byte length of a node with `count` entries totalling `entryBytes` bytes.
    static func encodedSize(count: Int, entryBytes: Int, inner: Bool) -> Int {
        let end = fixedSize + 4 * (count + 1) + entryBytes
        return inner ? ((end + 7) & ~7) + 8 * count : end
    }

    /// nil when the tree is empty.
    var root: Child?
    let limits: Limits
    /// Set by every change since the tree was opened or committed (also when the root ref itself changes
    /// without any dirty node, e.g. a root collapsing onto a committed child, or the tree becoming empty).
    var hasChanges = false
    var isDirty: Bool { hasChanges }

    /// A tree as committed: `root` 0 means empty. `limits` other than `.standard` are for tests (small nodes
    /// give deep trees); nodes written under other limits still read and split correctly, but
    /// `checkInvariants` reports them.
    init(root: UInt64, limits: Limits = .standard) {
        self.root = root == 0 ? nil : .clean(root)
        self.limits = limits
    }

    // MARK: Lookups

    /// Entries in order starting at the first entry >= `lowerBound`; `body` returns false to stop. Sees this
    /// transaction's uncommitted changes. The buffer passed to body is only valid during the call.
    func scan(from lowerBound: [UInt8], source: NodeSource, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let root else { return }
        try lowerBound.withUnsafeBytes { bound in
            _ = try scan(root, level: nil, bound: bound, source: source, body)
        }
    }

    /// Returns false when `body` asked to stop. `bound` applies to the first node visited on each level only.
    private func scan(
        _ child: Child, level: Int?, bound: UnsafeRawBufferPointer?, source: NodeSource,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        switch child {
        case .clean(let ref):
            let view = try EntryNodeView(ref: ref, level: level, source: source)
            if view.level == 0 {
                var i = 0
                if let bound { i = try view.lowerBound(bound).index }
                while i < view.count {
                    if try !body(view.entry(i)) { return false }
                    i += 1
                }
            } else {
                var i = 0
                if let bound { i = try view.childIndex(for: bound) }
                var childBound = bound
                while i < view.count {
                    if try !scan(.clean(view.child(i)), level: view.level - 1, bound: childBound, source: source, body) {
                        return false
                    }
                    childBound = nil
                    i += 1
                }
            }
        case .dirty(let node):
            if node.level == 0 {
                var i = 0
                if let bound { i = node.lowerBound(bound).index }
                while i < node.count {
                    if try !node.entries[i].withUnsafeBytes({ try body($0) }) { return false }
                    i += 1
                }
            } else {
                var i = 0
                if let bound { i = node.childIndex(for: bound) }
                var childBound = bound
                while i < node.count {
                    if try !scan(node.children[i], level: node.level - 1, bound: childBound, source: source, body) {
                        return false
                    }
                    childBound = nil
                    i += 1
                }
            }
        }
        return true
    }

    func contains(_ entry: [UInt8], source: NodeSource) throws -> Bool {
        guard var child = root else { return false }
        var level: Int? = nil
        return try entry.withUnsafeBytes { key in
            while true {
                switch child {
                case .clean(let ref):
                    let view = try EntryNodeView(ref: ref, level: level, source: source)
                    if view.level == 0 { return try view.lowerBound(key).found }
                    child = .clean(try view.child(view.childIndex(for: key)))
                    level = view.level - 1
                case .dirty(let node):
                    if node.level == 0 { return node.lowerBound(key).found }
                    child = node.children[node.childIndex(for: key)]
                    level = node.level - 1
                }
            }
        }
    }
}

/// A dirty node of an `EntryTree`: decoded entries, and for inner nodes (level > 0) one child per entry,
/// entry i being the smallest entry below child i.
final class EntryTreeNode {
    let level: Int
    private(set) var entries: [[UInt8]]
    private(set) var children: [EntryTree.Child]
    /// Sum of the entries' lengths.
    private(set) var entryBytes: Int

    init(level: Int, entries: [[UInt8]] = [], children: [EntryTree.Child] = []) {
        self.level = level
        self.entries = entries
        self.children = children
        entryBytes = entries.reduce(0) { $0 + $1.count }
    }

    var count: Int { entries.count }
    var isLeaf: Bool { level == 0 }
    var encodedSize: Int { EntryTree.encodedSize(count: count, entryBytes: entryBytes, inner: !isLeaf) }

    func insert(_ entry: [UInt8], child: EntryTree.Child? = nil, at i: Int) {
        entries.insert(entry, at: i)
        if let child { children.insert(child, at: i) }
        entryBytes += entry.count
    }

    func remove(at i: Int) {
        entryBytes -= entries[i].count
        entries.remove(at: i)
        if !isLeaf { children.remove(at: i) }
    }

    func setChild(_ child: EntryTreeNode, at i: Int) {
        children[i] = .dirty(child)
        entryBytes += child.entries[0].count - entries[i].count
        entries[i] = child.entries[0]
    }

    /// Moves entries (and children) from `i` on into a new node.
    func cut(from i: Int) -> EntryTreeNode {
        let right = EntryTreeNode(
            level: level, entries: Array(entries[i...]), children: isLeaf ? [] : Array(children[i...]))
        entries.removeSubrange(i...)
        if !isLeaf { children.removeSubrange(i...) }
        entryBytes -= right.entryBytes
        return right
    }

    /// Appends every entry (and child) of `other`, which must follow this node's entries.
    func append(contentsOf other: EntryTreeNode) {
        entries.append(contentsOf: other.entries)
        children.append(contentsOf: other.children)
        entryBytes += other.entryBytes
    }

    /// First index whose entry is >= `key`, and whether it equals `key`.
    func lowerBound(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            let c = entries[mid].withUnsafeBytes { compareEntries($0, key) }
            if c < 0 { lo = mid + 1 } else if c > 0 { hi = mid } else { return (mid, true) }
        }
        return (lo, false)
    }

    /// Index of the child whose range holds `key`: the last entry <= key, or 0 when key precedes them all.
    func childIndex(for key: UnsafeRawBufferPointer) -> Int {
        let (i, found) = lowerBound(key)
        return found ? i : max(i - 1, 0)
    }
}

/// Unsigned lexicographic comparison; a proper prefix sorts first. Negative, zero or positive.
@inline(__always)
func compareEntries(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    // Eight bytes at a time as big-endian words: entries are short, so this beats a call to memcmp.
    let n = min(a.count, b.count)
    var i = 0
    if n > 0 {
        let pa = a.baseAddress!, pb = b.baseAddress!
        while i + 8 <= n {
            let x = UInt64(bigEndian: pa.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let y = UInt64(bigEndian: pb.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if x != y { return x < y ? -1 : 1 }
            i += 8
        }
        while i < n {
            let x = pa.load(fromByteOffset: i, as: UInt8.self), y = pb.load(fromByteOffset: i, as: UInt8.self)
            if x != y { return x < y ? -1 : 1 }
            i += 1
        }
    }
    return a.count - b.count
}
