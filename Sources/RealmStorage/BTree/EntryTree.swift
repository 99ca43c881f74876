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
/// into dirty in-memory nodes (`EntryTreeNode`: entry bytes in one buffer, a sorted slot array) and frees each
/// committed node it replaces, exactly once, through `NodeSink.free`. Dirty nodes are encoded and written only
/// by `commit`. Lookups on committed nodes search the mapped bytes directly (`EntryNodeView`); a prefix scan
/// starts each node's search from a position interpolated between the bounds its parent gives.
///
/// **Value semantics are shallow.** Dirty nodes are class instances: copies of an `EntryTree` share them, and a
/// mutation through one copy is seen (and may corrupt the bookkeeping of) the others. The engine holds exactly
/// one copy per index per write transaction. After any method throws during a mutation (a corrupt node) the
/// tree may be half-changed; the transaction must be rolled back.
///
/// **Node size limits** (`Limits.standard`): a node splits when its encoded size would pass 4096 bytes (one
/// page, so a full node fills its extent and a commit that changes one entry writes one page) or its entry
/// count would pass 256. The count limit rarely binds for real entries (≥ 9 bytes: 256 of them pass the byte
/// limit first); it bounds the cost of decoding and shifting a node of tiny entries. Builds before DECISIONS
/// 47 split at 8192 bytes and 512 entries; such nodes are valid and split when next changed. An insert at
/// the end of a node splits it so the left part keeps everything it had (sequential inserts give full nodes);
/// an insert before every entry of the leftmost leaf keeps the right part full (descending inserts); any other
/// split halves the node by bytes, except while `ascending` (a sorted batch goes in): then a node is cut right
/// after the new entry, so the left part stays full and the next entries of the batch fill the node they land in
/// (inserting a sorted batch among a few older entries halved every node, which left a bulk-loaded index half
/// empty, DECISIONS 89).
///
/// **Removal** drops nodes that become empty and collapses a root with one child. A node that falls below a
/// quarter of both limits is merged into an adjacent sibling when the result stays within three quarters of
/// both limits (the gap avoids split/merge ping-pong); otherwise it stays underfull (so an inner node below
/// the root may have a single child).
///
/// **Reading** a committed node checks its header and shape on open and each entry's offsets on access, the
/// last entry's also against the exact layout (`EntryNodeView`): the m + 1 offsets are `0, end(0), ...,
/// end(m-1)`, entry i spanning `off[i]..<off[i+1]` of the entry area. Damage throws `StorageError.corrupt`
/// naming the page; nothing outside a node's bytes is ever read. A corrupt
/// file whose nodes share a child can still make a mutation free that child twice; `checkInvariants` reports
/// such sharing.
struct EntryTree {
    /// Node size limits. Every node of a tree satisfies them; `checkInvariants` verifies it.
    struct Limits: Sendable, Equatable {
        /// Largest encoded node, header included.
        let maxNodeBytes: Int
        /// Most entries (children) in one inner node.
        let maxEntries: Int
        /// Most entries in one leaf: more than in an inner node, as a leaf stores its entries' shared prefix
        /// once and a page then holds more of them (DECISIONS 109).
        let maxLeafEntries: Int

        /// Largest node (bytes, entries) a committed tree may hold: at least the limits new nodes are split at,
        /// more where files written under earlier limits are still valid.
        let acceptedNodeBytes: Int
        let acceptedEntries: Int
        /// Whether leaves are written as prefix leaves when that is smaller (format 9); without, every leaf has
        /// whole entries and its size is measured so.
        let prefixLeaves: Bool

        init(maxNodeBytes: Int, maxEntries: Int, maxLeafEntries: Int? = nil, acceptedNodeBytes: Int? = nil,
             acceptedEntries: Int? = nil, prefixLeaves: Bool = true) {
            precondition(maxNodeBytes >= 256 && maxNodeBytes <= 1 << 24, "EntryTree: node byte limit out of range")
            precondition(maxEntries >= 4, "EntryTree: entry limit below 4")
            self.maxNodeBytes = maxNodeBytes
            self.maxEntries = maxEntries
            self.maxLeafEntries = max(maxLeafEntries ?? maxEntries, maxEntries)
            self.acceptedNodeBytes = max(acceptedNodeBytes ?? maxNodeBytes, maxNodeBytes)
            self.acceptedEntries = max(acceptedEntries ?? maxEntries, maxEntries, self.maxLeafEntries)
            self.prefixLeaves = prefixLeaves
        }

        /// The limits of every index in the file format: new nodes fit one page (DECISIONS 47), leaves hold up
        /// to 1,024 entries (DECISIONS 109); nodes of up to two pages, which builds before DECISIONS 47 wrote,
        /// stay valid and split on their next change.
        static let standard = Limits(maxNodeBytes: 4096, maxEntries: 256, maxLeafEntries: 1024, acceptedNodeBytes: 8192,
                                     acceptedEntries: 1024)

        /// The limits of a file kept at format 5 (`NodeSink.writesFormat5Nodes`): the nodes a build of format 5
        /// wrote and accepts, one page and 256 entries at most, leaves of whole entries. Reading accepts what
        /// `standard` does.
        static let format5 = Limits(maxNodeBytes: 4096, maxEntries: 256, acceptedNodeBytes: 8192, acceptedEntries: 1024,
                                    prefixLeaves: false)

        /// Most entries in a node of the kind.
        @inline(__always)
        func entryLimit(inner: Bool) -> Int { inner ? maxEntries : maxLeafEntries }

        /// Longest entry accepted by `insert`: small enough that halving any overfull node gives two nodes
        /// within the byte limit (4096 → 992 bytes; real entries are at most ~260).
        var maxEntryBytes: Int { (maxNodeBytes - 128) / 4 }

        /// Whether a node of `count` entries totalling `entryBytes` fits; `shared` is the length of the prefix the
        /// entries of a leaf share (0 when unknown: the size is then an upper bound).
        func fits(count: Int, entryBytes: Int, inner: Bool, shared: Int = 0) -> Bool {
            count <= entryLimit(inner: inner)
                && EntryTree.encodedSize(count: count, entryBytes: entryBytes, inner: inner, shared: shared,
                                         prefixLeaf: prefixLeaves) <= maxNodeBytes
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

    /// Fixed part of a prefix leaf (format 9): the fixed part, then the length of the shared prefix.
    static let prefixLeafFixedSize = 28
    /// Header flag (byte 1) of a prefix leaf.
    static let prefixLeafFlag: UInt8 = 1

    /// Whether a leaf whose entries total `entryBytes` and share their first `shared` bytes is written as a
    /// prefix leaf: when its suffixes' offsets fit 16 bits (always, for nodes within the limits).
    @inline(__always)
    static func isPrefixLeaf(count: Int, entryBytes: Int, shared: Int) -> Bool {
        entryBytes &- count &* shared <= Int(UInt16.max)
    }

    /// Encoded byte length of a node with `count` entries totalling `entryBytes` bytes; a leaf's entries share
    /// their first `shared` bytes, which a prefix leaf stores once (docs/FILE_FORMAT.md, "Index nodes").
    /// `prefixLeaf: false`: the size of a leaf written with whole entries (`Limits.format5`).
    static func encodedSize(count: Int, entryBytes: Int, inner: Bool, shared: Int = 0, prefixLeaf: Bool = true) -> Int {
        if !inner, prefixLeaf, isPrefixLeaf(count: count, entryBytes: entryBytes, shared: shared) {
            return prefixLeafFixedSize + 2 * (count + 1) + shared + (entryBytes - count * shared)
        }
        let end = fixedSize + 4 * (count + 1) + entryBytes
        return inner ? ((end + 7) & ~7) + 8 * count : end
    }

    /// nil when the tree is empty.
    var root: Child?
    /// Whether the entries now being inserted come in ascending order (`WriteTransaction.flushIndexEntries`):
    /// splits then cut after the new entry instead of halving.
    var ascending = false
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
        try lowerBound.withUnsafeBytes { try scan(from: $0, source: source, body) }
    }

    /// `scan(from:source:_:)` with the bound in any memory. After each committed leaf, `boundary` gets the
    /// refs of the inner nodes the scan still reads from (see `TableTree.forEachLeaf`).
    func scan(
        from lowerBound: UnsafeRawBufferPointer, source: NodeSource, boundary: (([UInt64]) throws -> Void)? = nil,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard let root else { return }
        var path: [UInt64] = []
        _ = try scan(root, level: nil, bound: lowerBound, source: source, path: &path, boundary: boundary, body)
    }

    /// The entries that start with `prefix`, in order; `body` returns false to stop. Equivalent to `scan(from:
    /// prefix)` stopping at the first entry without the prefix, but descends straight to the first candidate
    /// (the usual case for an index lookup: the matches, or their absence, are settled in one leaf). Only when
    /// a leaf runs out and the first entry after it still matches does it go on with the general scan.
    func scan(prefix: [UInt8], source: NodeSource, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        try prefix.withUnsafeBytes { try scan(prefix: $0, source: source, body) }
    }

    /// `scan(prefix:source:_:)` with the prefix in any memory.
    func scan(
        prefix: UnsafeRawBufferPointer, source: NodeSource, _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try scan(prefix: prefix, tails: false, source: source, body)
    }

    /// `scan(prefix:source:_:)` giving `body` only what follows the prefix in each entry (its tail): in a
    /// prefix leaf the tails are read in place, where whole entries would be joined first. For the lookups
    /// that want the object key after a value, or the origin after a backlink's target.
    func scan(
        tailsAfter prefix: UnsafeRawBufferPointer, source: NodeSource, _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try scan(prefix: prefix, tails: true, source: source, body)
    }

    /// `scan(tailsAfter:source:_:)` with the prefix in an array.
    func scan(tailsAfter prefix: [UInt8], source: NodeSource, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        try prefix.withUnsafeBytes { try scan(prefix: $0, tails: true, source: source, body) }
    }

    /// The two scans above: `body` gets whole entries, or their tails after `prefix`.
    @inline(__always)
    private func scan(
        prefix: UnsafeRawBufferPointer, tails: Bool, source: NodeSource, _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard let root else { return }
        @inline(__always) func give(_ e: UnsafeRawBufferPointer) throws -> Bool {
            try body(tails ? UnsafeRawBufferPointer(rebasing: e[prefix.count...]) : e)
        }
        // The node descended into: a committed one by ref, or a dirty one (unretained: the tree holds it).
        var ref: UInt64 = 0
        var dirty: Unmanaged<EntryTreeNode>? = nil
        switch root {
        case .clean(let r): ref = r
        case .dirty(let n): dirty = .passUnretained(n)
        }
        var level: Int? = nil
        // Nodes are neither changed nor unmapped during a scan, so these stay valid.
        // The first entry after the subtree descended into (the parent's entry for the next child, on the
        // deepest level that has one), nil when the subtree holds the last entries of the tree.
        var next: UnsafeRawBufferPointer? = nil
        // The parent's entry for the node descended into (its first entry), nil at the root. With `next`, the
        // range of the node's entries: committed nodes start their search from an interpolated position.
        var low: UnsafeRawBufferPointer? = nil
        // The last entry passed to body, copied when its leaf ran out (a prefix leaf's entries live only as
        // long as its view).
        var last: [UInt8]? = nil
        descent: while true {
            if let current = dirty {
                let isLeaf = current._withUnsafeGuaranteedRef { node -> Bool in
                    if node.isLeaf { return true }
                    let i = node.childIndex(for: prefix)
                    low = node.entry(i)
                    if i + 1 < node.count { next = node.entry(i + 1) }
                    var child: Unmanaged<EntryTreeNode>? = nil
                    if let r = node.child(i, dirty: &child) { ref = r }
                    dirty = child
                    level = node.level - 1
                    return false
                }
                if !isLeaf { continue descent }
                let node = current.takeUnretainedValue()
                var i = node.lowerBound(prefix).index
                var seen: UnsafeRawBufferPointer? = nil
                while i < node.count {
                    let e = node.entry(i)
                    if !entryHasPrefix(e, prefix) { return }
                    if try !give(e) { return }
                    seen = e
                    i += 1
                }
                last = seen.map { Array($0) }
                break descent
            }
            let view = try EntryNodeView(ref: ref, level: level, source: source)
            if view.isLeaf {
                let first = try (low.map { try view.lowerBound(prefix, low: $0, high: next) } ?? view.lowerBound(prefix)).index
                let stop = tails
                    ? try view.forEachTail(from: first, after: prefix, body)
                    : try view.forEachEntry(from: first) { e in entryHasPrefix(e, prefix) ? try body(e) : false }
                if stop < view.count { return }
                // A prefix leaf's entries are joined only for the call: the last one seen is copied.
                if stop > first { last = try view.withEntry(stop - 1) { Array($0) } }
                break descent
            }
            let i = try low.map { try view.childIndex(for: prefix, low: $0, high: next) } ?? view.childIndex(for: prefix)
            low = try view.entry(i)
            if i + 1 < view.count { next = try view.entry(i + 1) }
            ref = try view.child(i)
            level = view.level - 1
        }
        // The leaf ran out. Done unless the next entry (the first of a later leaf) still matches; then go on
        // from the smallest possible entry after the last one seen, `last ++ [0]` (or from the prefix).
        guard let next, entryHasPrefix(next, prefix) else { return }
        var bound: [UInt8]
        if let last {
            bound = []
            bound.reserveCapacity(last.count + 1)
            bound.append(contentsOf: last)
            bound.append(0)
        } else {
            bound = Array(prefix)
        }
        try scan(from: bound, source: source) { e in
            guard entryHasPrefix(e, prefix) else { return false }
            return try give(e)
        }
    }

    /// Returns false when `body` asked to stop. `bound` applies to the first node visited on each level only.
    private func scan(
        _ child: Child, level: Int?, bound: UnsafeRawBufferPointer?, source: NodeSource,
        path: inout [UInt64], boundary: (([UInt64]) throws -> Void)? = nil,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        switch child {
        case .clean(let ref):
            let view = try EntryNodeView(ref: ref, level: level, source: source)
            if view.level == 0 {
                let first = try bound.map { try view.lowerBound($0).index } ?? 0
                if try view.forEachEntry(from: first, body) < view.count { return false }
                try boundary?(path)
            } else {
                var i = 0
                if let bound { i = try view.childIndex(for: bound) }
                var childBound = bound
                path.append(ref)
                defer { path.removeLast() }
                while i < view.count {
                    if try !scan(.clean(view.child(i)), level: view.level - 1, bound: childBound, source: source,
                                 path: &path, boundary: boundary, body) {
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
                    if try !body(node.entry(i)) { return false }
                    i += 1
                }
            } else {
                var i = 0
                if let bound { i = node.childIndex(for: bound) }
                var childBound = bound
                while i < node.count {
                    if try !scan(node.children[i], level: node.level - 1, bound: childBound, source: source,
                                 path: &path, boundary: boundary, body) {
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
        try entry.withUnsafeBytes { try contains($0, source: source) }
    }

    func contains(_ key: UnsafeRawBufferPointer, source: NodeSource) throws -> Bool {
        guard var child = root else { return false }
        var level: Int? = nil
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
