internal import CStorageSupport

/// Read access to a committed index node (type 6 or 7) in place, without decoding it.
///
/// **Checks.** Opening checks the header and the overall shape: type, flags, level, count, the first end
/// offset, and that the node's length leaves room for the offsets (and, for an inner node, 8-aligned child
/// refs). The entry area is then bounded by the node's length: it ends at the node's end (leaf) or within the
/// seven padding bytes before the refs (inner node). Each entry access checks its own two offsets against that
/// bound, and an access to the last entry also checks the last end offset against the layout exactly. So every
/// byte a lookup reads was checked first: a corrupt node throws `StorageError.corrupt` naming its page and never
/// reads outside its bytes. Opening does not read the last end offset (a second cache miss per node on the
/// lookup path); `areaLength()` reads and checks it, and `validateAll` checks every offset and child ref.
///
/// A view lives only as long as the call that opened it: it holds its source unowned (no reference counting
/// on the lookup path), and the source outlives every such call.
struct EntryNodeView {
    let ref: UInt64
    let bytes: UnsafeRawBufferPointer
    let count: Int
    let level: Int
    /// Offset of the end offsets from the node start, and their width: 4 bytes, or 2 in a prefix leaf.
    let endsStart: Int
    let endWidth: Int
    /// A prefix leaf's shared prefix: where it starts and its length (0 in any other node). Entry i is the
    /// prefix followed by the bytes the end offsets delimit in the entry area.
    let prefixStart: Int
    let prefixLength: Int
    /// The prefix's first bytes (up to 8) as the high bytes of a big-endian number: `leadingKey` ORs in the
    /// suffix's.
    let prefixWord: UInt64
    /// Offset of the entry area from the node start (a prefix leaf: of the bytes after the prefix).
    let entryStart: Int
    /// Bound of every end offset: the bytes between the offsets and the child refs (inner nodes; the last
    /// end offset may be up to 7 less, for the padding) or the node's end (leaves; the last end offset equals it).
    let entryLimit: Int
    /// Offset of the child refs (inner nodes); the node length for leaves.
    let refsStart: Int
    unowned(unsafe) let source: NodeSource

    /// Opens the node at `ref`. `level` is the level the parent implies (nil for a root: any level).
    init(ref: UInt64, level expectedLevel: Int?, source: NodeSource) throws {
        if ref < 2 { throw source.corrupt(ref, "index child ref \(ref) points into the meta pages") }
        let expectedType: NodeType? = expectedLevel.map { $0 == 0 ? .indexLeaf : .indexInner }
        let b = try source.node(ref, expected: expectedType)
        if let base = b.baseAddress { storage_prefetch(base, b.count) }
        self.ref = ref
        self.bytes = b
        self.source = source
        let fixed = EntryTree.fixedSize
        guard b.count >= fixed + 4 else {
            throw source.corrupt(ref, "index node of \(b.count) bytes is shorter than its fixed part")
        }
        let type = b[0]
        guard type == NodeType.indexLeaf.rawValue || type == NodeType.indexInner.rawValue else {
            throw source.corrupt(ref, "node type \(type) where an index node was expected")
        }
        let isPrefixLeaf = b[1] == EntryTree.prefixLeafFlag && type == NodeType.indexLeaf.rawValue
        guard b[1] == 0 || isPrefixLeaf, b[2] == 0, b[3] == 0 else {
            throw source.corrupt(ref, "index node header has unknown flags or nonzero reserved bytes")
        }
        let m = Int(b.u32(at: 16))
        let lvl = Int(b.u32(at: 20))
        guard (type == NodeType.indexLeaf.rawValue) == (lvl == 0) else {
            throw source.corrupt(ref, "index node of type \(type) has level \(lvl)")
        }
        if let expectedLevel, lvl != expectedLevel {
            throw source.corrupt(ref, "index node has level \(lvl) where its parent implies \(expectedLevel)")
        }
        guard lvl <= EntryTree.maxLevel else { throw source.corrupt(ref, "index node level \(lvl) is implausible") }
        guard m >= 1 else { throw source.corrupt(ref, "index node has no entries") }
        // The layout: where the offsets, the prefix and the entries start, and where the entries must end.
        let width: Int, offsets: Int, prefix: Int, p: Int, start: Int, refs: Int
        if isPrefixLeaf {
            offsets = EntryTree.prefixLeafFixedSize
            guard b.count >= offsets + 4 else {
                throw source.corrupt(ref, "prefix leaf of \(b.count) bytes is shorter than its fixed part")
            }
            p = Int(b.u32(at: EntryTree.fixedSize))
            // m and p are at most the node's length, so neither sum overflows.
            guard m <= b.count, p <= b.count, offsets + 2 * (m + 1) + p <= b.count else {
                throw source.corrupt(ref, "prefix leaf of \(b.count) bytes cannot hold the offsets of \(m) entries and a prefix of \(p) bytes")
            }
            guard b.u16(at: offsets) == 0 else { throw source.corrupt(ref, "index node's first entry offset is not 0") }
            width = 2
            prefix = offsets + 2 * (m + 1)
            start = prefix + p
            refs = b.count
        } else {
            offsets = fixed
            start = fixed + 4 * (m + 1)
            guard start <= b.count else {
                throw source.corrupt(ref, "index node of \(b.count) bytes cannot hold the offsets of \(m) entries")
            }
            guard b.u32(at: fixed) == 0 else { throw source.corrupt(ref, "index node's first entry offset is not 0") }
            width = 4
            prefix = start
            p = 0
            if lvl == 0 {
                refs = b.count
            } else {
                refs = b.count - 8 * m
                guard refs >= start, refs & 7 == 0 else {
                    throw source.corrupt(ref, "index inner node of \(b.count) bytes cannot hold \(m) aligned child refs")
                }
            }
        }
        count = m
        level = lvl
        endsStart = offsets
        endWidth = width
        prefixStart = prefix
        prefixLength = p
        entryStart = start
        entryLimit = refs - start
        refsStart = refs
        var word: UInt64 = 0
        if p > 0 {
            withUnsafeMutableBytes(of: &word) { w in w.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[prefix..<prefix + min(p, 8)])) }
        }
        prefixWord = UInt64(bigEndian: word)
    }

    var isLeaf: Bool { level == 0 }

    /// The node's first byte; `bytes` is never empty (opening checked its length).
    @inline(__always)
    private var base: UnsafeRawPointer { bytes.baseAddress.unsafelyUnwrapped }

    /// End offset `i` (0 ≤ i ≤ count), relative to the entry area, unchecked.
    @inline(__always)
    func end(_ i: Int) -> Int {
        if endWidth == 2 {
            return Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: endsStart &+ 2 &* i, as: UInt16.self)))
        }
        return Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: endsStart &+ 4 &* i, as: UInt32.self)))
    }

    /// The byte length this node's layout implies for its count and entry bytes `z` (the last end offset).
    func layoutSize(entryBytes z: Int) -> Int {
        if endWidth == 2 { return EntryTree.prefixLeafFixedSize + 2 * (count + 1) + prefixLength + z }
        let end = EntryTree.fixedSize + 4 * (count + 1) + z
        return isLeaf ? end : ((end + 7) & ~7) + 8 * count
    }

    /// Whether `z`, the last end offset, matches the layout: the entry area ends at the node's end (leaf) or
    /// where the padding before the 8-aligned child refs begins (inner node).
    @inline(__always)
    private func isAreaEnd(_ z: Int) -> Bool {
        isLeaf ? z == entryLimit : z <= entryLimit && z > entryLimit &- 8
    }

    /// Whether entry `i` may span `a..<z`: inside the area, and ending it exactly if it is the last entry.
    @inline(__always)
    private func isValidEntry(_ i: Int, _ a: Int, _ z: Int) -> Bool {
        a <= z && z <= entryLimit && (i &+ 1 < count || isAreaEnd(z))
    }

    /// The length of the entry area (the last end offset), checked against the layout.
    func areaLength() throws -> Int {
        let z = end(count)
        guard isAreaEnd(z) else { throw badArea(z) }
        return z
    }

    /// Entry `i` (0 ≤ i < count) of a node without a prefix (an inner node, a leaf of format 8 or one whose
    /// entries share nothing) as a slice of the mapped node. A leaf's entries are read with `withEntry`.
    @inline(__always)
    func entry(_ i: Int) throws -> UnsafeRawBufferPointer {
        precondition(i >= 0 && i < count, "EntryNodeView: entry index out of range")
        precondition(prefixLength == 0, "EntryNodeView: a prefix leaf's entries are read with withEntry")
        let a = end(i), z = end(i &+ 1)
        guard isValidEntry(i, a, z) else { throw badEntry(i, a, z) }
        return UnsafeRawBufferPointer(start: base + (entryStart &+ a), count: z &- a)
    }

    /// Calls `body` with entry `i` whole: in place, or for a prefix leaf joined in a buffer on the stack (no
    /// memory of the view's is used; the pointer is valid during the call only).
    @inline(__always)
    func withEntry<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        precondition(i >= 0 && i < count, "EntryNodeView: entry index out of range")
        let a = end(i), z = end(i &+ 1)
        guard isValidEntry(i, a, z) else { throw badEntry(i, a, z) }
        let suffix = base + (entryStart &+ a), n = z &- a, p = prefixLength
        if p == 0 { return try body(UnsafeRawBufferPointer(start: suffix, count: n)) }
        return try withUnsafeTemporaryAllocation(byteCount: p &+ n, alignment: 8) { out in
            out.baseAddress!.copyMemory(from: base + prefixStart, byteCount: p)
            if n > 0 { (out.baseAddress! + p).copyMemory(from: suffix, byteCount: n) }
            return try body(UnsafeRawBufferPointer(out))
        }
    }

    /// Calls `body` with entries `from...` whole, in order, until it returns false; returns the index it stopped
    /// at (`count` when it did not). A prefix leaf's entries are joined one after another in one buffer that
    /// holds the prefix once (each pointer is valid during its call only).
    @inline(__always)
    func forEachEntry(from first: Int, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws -> Int {
        var i = first
        let p = prefixLength
        if p == 0 {
            while i < count {
                let a = end(i), z = end(i &+ 1)
                guard isValidEntry(i, a, z) else { throw badEntry(i, a, z) }
                if try !body(UnsafeRawBufferPointer(start: base + (entryStart &+ a), count: z &- a)) { return i }
                i &+= 1
            }
            return i
        }
        return try forEachJoined(from: i, after: 0, body)
    }

    /// Calls `body` with entries `from...` of a prefix leaf past their first `skip` bytes (at most the prefix's
    /// length), in order, until it returns false; returns the index it stopped at. Each is the prefix's rest
    /// followed by the suffix, joined in one buffer that holds the prefix's rest once (each pointer is valid
    /// during its call only).
    @inline(__always)
    private func forEachJoined(from first: Int, after skip: Int, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws -> Int {
        var i = first
        if i >= count { return i }
        let head = prefixLength &- skip
        // Room for the prefix's rest and a suffix of the longest entry a writer makes; a longer one (a node of
        // another writer) is joined on its own.
        let room = head &+ min(entryLimit, EntryTree.Limits.standard.maxEntryBytes)
        return try withUnsafeTemporaryAllocation(byteCount: room, alignment: 8) { out in
            let joined = out.baseAddress!
            if head > 0 { joined.copyMemory(from: base + (prefixStart &+ skip), byteCount: head) }
            while i < count {
                let a = end(i), z = end(i &+ 1)
                guard isValidEntry(i, a, z) else { throw badEntry(i, a, z) }
                let more: Bool
                if head &+ z &- a <= room {
                    if z > a { (joined + head).copyMemory(from: base + (entryStart &+ a), byteCount: z &- a) }
                    more = try body(UnsafeRawBufferPointer(start: joined, count: head &+ z &- a))
                } else {
                    more = try withEntry(i) { e in try body(UnsafeRawBufferPointer(rebasing: e[skip...])) }
                }
                if !more { return i }
                i &+= 1
            }
            return i
        }
    }

    /// Calls `body` with entry `i` past its first `n` bytes: in place when a prefix leaf's prefix is no longer
    /// than `n`, joined on the stack otherwise. An entry shorter than `n` bytes is an error.
    @inline(__always)
    func withTail<R>(_ i: Int, after n: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        precondition(i >= 0 && i < count, "EntryNodeView: entry index out of range")
        let p = prefixLength
        if p > n { return try withEntry(i) { e in try body(UnsafeRawBufferPointer(rebasing: e[n...])) } }
        let a = end(i), z = end(i &+ 1)
        guard isValidEntry(i, a, z) else { throw badEntry(i, a, z) }
        let skip = n &- p
        guard z &- a >= skip else { throw source.corrupt(ref, "index node entry \(i) is shorter than \(n) bytes") }
        return try body(UnsafeRawBufferPointer(start: base + (entryStart &+ a &+ skip), count: z &- a &- skip))
    }

    /// Calls `body` with what follows `key` in entries `from...` (their tails), in order, until an entry does
    /// not start with `key` or `body` returns false; returns the index it stopped at (`count` when neither
    /// happened). In a prefix leaf whose prefix `key` extends, the key is compared with the prefix once and
    /// the rest with each suffix in place, and the tails are slices of the node: nothing is joined. Only when
    /// the key is no longer than the prefix are the tails (the prefix's rest, then the suffix) joined on the
    /// stack. Each pointer is valid during its call only.
    @inline(__always)
    func forEachTail(from first: Int, after key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Bool)
        throws -> Int
    {
        var i = first
        let p = prefixLength, n = key.count
        if p == 0 || n > p {
            // The part of the key each suffix (each entry, without a prefix) must start with.
            guard let (rp, rn) = afterPrefix(key) else { return i }
            while i < count {
                let a = end(i), z = end(i &+ 1)
                guard isValidEntry(i, a, z) else { throw badEntry(i, a, z) }
                let e = base + (entryStart &+ a), len = z &- a
                guard len >= rn, compareEntryBytes(e, rn, rp, rn) == 0 else { return i }
                if try !body(UnsafeRawBufferPointer(start: e + rn, count: len &- rn)) { return i }
                i &+= 1
            }
            return i
        }
        // The key is the prefix's start or no entry starts with it.
        guard compareEntryBytes(key.baseAddress, n, base + prefixStart, n) == 0 else { return i }
        return try forEachJoined(from: i, after: n, body)
    }

    @inline(never)
    private func badEntry(_ i: Int, _ a: Int, _ z: Int) -> StorageError {
        if a <= z && z <= entryLimit { return badArea(z) }
        return source.corrupt(ref, "index node entry \(i) has offsets \(a)..<\(z) outside 0..<\(entryLimit)")
    }

    @inline(never)
    private func badArea(_ z: Int) -> StorageError {
        let layout = layoutSize(entryBytes: z)
        return source.corrupt(ref, "index \(isLeaf ? "leaf" : "inner node") is \(bytes.count) bytes, its layout \(layout)")
    }

    /// Child ref `i` of an inner node.
    @inline(__always)
    func child(_ i: Int) throws -> UInt64 {
        precondition(i >= 0 && i < count && !isLeaf, "EntryNodeView: child index out of range")
        let r = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: refsStart &+ 8 &* i, as: UInt64.self))
        guard r >= 2 else { throw badChild(i, r) }
        return r
    }

    @inline(never)
    private func badChild(_ i: Int, _ r: UInt64) -> StorageError {
        source.corrupt(ref, "index inner node child \(i) has ref \(r)")
    }

    /// The part of `key` to compare with the entries' suffixes: all of it in a node without a prefix, what
    /// follows the prefix when the key starts with it; nil when the key does not start with the prefix (then
    /// it precedes or follows every entry, `prefixOutcome`).
    @inline(__always)
    private func afterPrefix(_ key: UnsafeRawBufferPointer) -> (UnsafeRawPointer?, Int)? {
        let p = prefixLength
        if p == 0 { return (key.baseAddress, key.count) }
        guard key.count >= p, compareEntryBytes(key.baseAddress, p, base + prefixStart, p) == 0 else { return nil }
        return (key.baseAddress.unsafelyUnwrapped + p, key.count &- p)
    }

    /// The lower bound of a key that does not start with the prefix: 0 for one below it or a proper prefix of
    /// it, `count` for one above it.
    @inline(never)
    private func prefixOutcome(_ key: UnsafeRawBufferPointer) -> Int {
        let n = min(key.count, prefixLength)
        return compareEntryBytes(key.baseAddress, n, base + prefixStart, n) > 0 ? count : 0
    }

    /// First index whose entry is >= `key`, and whether it equals `key`. In a prefix leaf the key is compared
    /// with the prefix once, and what follows it with the entries' suffixes.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawBufferPointer) throws -> (index: Int, found: Bool) {
        let area = base + entryStart
        guard let (kp, kn) = afterPrefix(key) else { return (prefixOutcome(key), false) }
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo &+ hi) &>> 1
            let a = end(mid), z = end(mid &+ 1)
            guard isValidEntry(mid, a, z) else { throw badEntry(mid, a, z) }
            let c = compareEntryBytes(area + a, z &- a, kp, kn)
            if c < 0 { lo = mid &+ 1 } else if c > 0 { hi = mid } else { return (mid, true) }
        }
        return (lo, false)
    }

    /// `lowerBound(_:)` for a node whose entries are known to lie in `low..<high` (from the parent: the entry
    /// for this node and the one after it). Estimates the position by interpolating `key` between the bounds,
    /// then gallops from there: for evenly spread keys (sequential integers, uuids) the probes land on one or
    /// two adjacent cache lines instead of the ~9 scattered ones of a binary search. The result does not depend
    /// on the estimate (or on the bounds being right); a bad estimate costs at most twice the probes.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawBufferPointer, low: UnsafeRawBufferPointer, high: UnsafeRawBufferPointer?) throws
        -> (index: Int, found: Bool)
    {
        guard let high, count >= 16 else { return try lowerBound(key) }
        return try gallop(key, from: interpolate(key, low: low, high: high, count: count))
    }

    /// Lower bound of `key` by exponential search outward from `start`, then binary search (in a prefix leaf,
    /// over the suffixes, after the prefix is compared once as in `lowerBound(_:)`).
    private func gallop(_ key: UnsafeRawBufferPointer, from start: Int) throws -> (index: Int, found: Bool) {
        let area = base + entryStart
        guard let (kp, kn) = afterPrefix(key) else { return (prefixOutcome(key), false) }
        return try gallopLowerBound(count: count, from: start) { i in
            let a = end(i), z = end(i &+ 1)
            guard isValidEntry(i, a, z) else { throw badEntry(i, a, z) }
            return compareEntryBytes(area + a, z &- a, kp, kn)
        }
    }

    /// Index of the child whose range holds `key`: the last entry <= key, or 0 when key precedes them all.
    @inline(__always)
    func childIndex(for key: UnsafeRawBufferPointer) throws -> Int {
        let (i, found) = try lowerBound(key)
        return found ? i : max(i &- 1, 0)
    }

    /// `childIndex(for:)` for a node whose entries lie in `low..<high` (see `lowerBound(_:low:high:)`).
    @inline(__always)
    func childIndex(for key: UnsafeRawBufferPointer, low: UnsafeRawBufferPointer, high: UnsafeRawBufferPointer?) throws -> Int {
        let (i, found) = try lowerBound(key, low: low, high: high)
        return found ? i : max(i &- 1, 0)
    }
    /// Decodes the node into a dirty node (the caller frees `ref`). Checks every entry's offsets.
    func materialize() throws -> EntryTreeNode {
        let area = try areaLength()
        var previous = 0
        for i in 0..<count {
            let z = end(i + 1)
            guard previous <= z, z <= area else { throw badEntry(i, previous, z) }
            previous = z
        }
        if endWidth == 2 {
            // A prefix leaf: its entries whole, with 32-bit offsets, as a dirty node holds them.
            // Each entry's prefix then its suffix; the prefix's copy may run past it (`copyEntryBytes`), into
            // where the suffix then goes.
            let p = prefixLength, m = count, base = base, prefix = base + prefixStart, suffixes = base + entryStart
            let readable = bytes.count
            return EntryTreeNode(leafOf: m, bytes: m * p + area) { out, ends in
                let prefixRoomy = prefixStart &+ 32 <= readable
                var at = 0
                for i in 0..<m {
                    let a = end(i), z = end(i &+ 1)
                    copyEntryBytes(to: out + at, from: prefix, p, roomy: prefixRoomy)
                    copyEntryBytes(to: out + (at &+ p), from: suffixes + a, z &- a, roomy: entryStart &+ a &+ 32 <= readable)
                    at &+= p &+ z &- a
                    ends[i &+ 1] = UInt32(at)
                }
            }
        }
        var children: [EntryTree.Child] = []
        if !isLeaf {
            children.reserveCapacity(count + 8)
            for i in 0..<count { children.append(.clean(try child(i))) }
        }
        return EntryTreeNode(
            level: level, area: UnsafeRawBufferPointer(start: base + entryStart, count: area),
            ends: base + endsStart, count: count, children: children)
    }

    /// Checks the last end offset against the layout, every end offset is non-decreasing, the padding before
    /// the refs is zero and every child ref plausible.
    func validateAll() throws {
        let area = try areaLength()
        var previous = 0
        for i in 1...count {
            let end = end(i)
            guard end >= previous else {
                throw source.corrupt(ref, "index node entry \(i - 1) ends at \(end), before it starts at \(previous)")
            }
            previous = end
        }
        if !isLeaf {
            for p in (entryStart + area)..<refsStart where bytes[p] != 0 {
                throw source.corrupt(ref, "index inner node has nonzero padding at byte \(p)")
            }
            for i in 0..<count { _ = try child(i) }
        }
    }
}

extension EntryTreeNode {
    /// Whether this node holds exactly the committed node `view` (entries, level, children's refs): what a node
    /// kept for the next transaction must (checked in debug builds).
    func sameContent(as view: EntryNodeView) -> Bool {
        guard level == view.level, count == view.count, isLeaf || children.count == count else { return false }
        for i in 0..<count {
            let mine = entry(i)
            guard let same = try? view.withEntry(i, { mine.count == $0.count && mine.elementsEqual($0) }), same else {  // a debug check: unreadable fails it
                return false
            }
            if !isLeaf {
                guard case .clean(let r) = children[i], (try? view.child(i)) == r else { return false }  // (as above)
            }
        }
        return true
    }
}

// MARK: - Entries led by an 8-byte key

extension EntryNodeView {
    /// The first 8 bytes of entry `i` as a big-endian number (backlink entries start with the target's key).
    /// Throws when the entry's offsets are bad or it is shorter than 8 bytes.
    @inline(__always)
    func leadingKey(_ i: Int) throws -> UInt64 {
        let a = end(i), z = end(i &+ 1), p = prefixLength
        guard isValidEntry(i, a, z), z &- a &+ p >= 8 else { throw badEntry(i, a, z) }
        if p == 0 { return UInt64(bigEndian: base.loadUnaligned(fromByteOffset: entryStart &+ a, as: UInt64.self)) }
        if p >= 8 { return prefixWord }
        if z &- a >= 8 {
            let suffix = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: entryStart &+ a, as: UInt64.self))
            return prefixWord | suffix &>> UInt64(8 &* p)
        }
        var word: UInt64 = 0
        withUnsafeMutableBytes(of: &word) { w in
            w.baseAddress!.copyMemory(from: base + prefixStart, byteCount: p)
            (w.baseAddress! + p).copyMemory(from: base + (entryStart &+ a), byteCount: 8 &- p)
        }
        return UInt64(bigEndian: word)
    }

    /// The first index whose entry's leading key is >= `key` (entries longer than 8 bytes: an entry led by
    /// `key` is greater than `key` itself, so this is also the lower bound of the 8-byte prefix). Integer
    /// compares only; the search gallops from a position interpolated between `low` and `high`, the leading
    /// keys of the parent's entries around this node, when both are known.
    @inline(__always)
    func lowerBound(leadingKey key: UInt64, low: UInt64?, high: UInt64?) throws -> Int {
        var start = count &>> 1
        if let low, let high, high > low {
            if key <= low { start = 0 } else if key >= high { start = count &- 1 } else {
                start = min(max(Int(Double(key &- low) / Double(high &- low) * Double(count)), 0), count &- 1)
            }
        }
        return try gallopLowerBound(count: count, from: start) { i in try leadingKey(i) < key ? -1 : 1 }.index
    }
}
