#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A dirty node of an `EntryTree`: decoded entries, and for inner nodes (level > 0) one child per entry,
/// entry i being the smallest entry below child i.
///
/// **Storage.** As the node is stored (docs/FILE_FORMAT.md, "Index nodes"): the entries' bytes one after
/// another in order in one buffer (`area`), and the m + 1 offsets where they end (`ends`, `ends[0] = 0`) in
/// another. Decoding a committed node copies its two parts as they are, and encoding copies them back, without
/// visiting entries one by one (DECISIONS 61). An insert moves the bytes after it (a node holds at most a page
/// of them) and the offsets after it.
///
/// The buffers are owned by the node and freed by `deinit`. `entry(_:)` returns a pointer into the area that is
/// valid until the node is next mutated.
final class EntryTreeNode {
    let level: Int
    private(set) var children: [EntryTree.Child]
    /// Number of entries.
    private(set) var count = 0
    /// Sum of the entries' lengths.
    var entryBytes: Int { Int(ends[count]) }

    /// `count + 1` end offsets in native byte order, room for `endsCapacity + 1`.
    private var ends: UnsafeMutablePointer<UInt32>
    private var endsCapacity: Int
    private var area: UnsafeMutableRawPointer
    private var areaCapacity: Int

    /// An empty node with room for `capacity` entries totalling `bytes` bytes before it has to grow.
    init(level: Int, capacity: Int = 8, bytes: Int = 256) {
        self.level = level
        children = []
        endsCapacity = max(capacity, 4)
        ends = .allocate(capacity: endsCapacity + 1)
        ends[0] = 0
        areaCapacity = max(bytes, 64)
        area = .allocate(byteCount: areaCapacity, alignment: 8)
    }

    /// A node whose entries are the committed entry area `area` cut at `ends` (the m + 1 little-endian `UInt32`
    /// end offsets of an index node: `0, end(0), ..., end(m-1)`), which the caller has checked: non-decreasing,
    /// the last one `area.count` (`EntryNodeView.materialize`).
    init(level: Int, area source: UnsafeRawBufferPointer, ends sourceEnds: UnsafeRawPointer, count m: Int,
         children: [EntryTree.Child]) {
        self.level = level
        self.children = children
        endsCapacity = max(m + 8, 4)
        ends = .allocate(capacity: endsCapacity + 1)
        #if _endian(little)
        UnsafeMutableRawPointer(ends).copyMemory(from: sourceEnds, byteCount: 4 * (m + 1))
        #else
        for i in 0...m { ends[i] = UInt32(littleEndian: sourceEnds.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
        #endif
        precondition(Int(ends[0]) == 0 && Int(ends[m]) == source.count, "EntryTreeNode: offsets do not match the area")
        areaCapacity = max(source.count + 256, 64)
        precondition(areaCapacity <= Int(UInt32.max), "EntryTree: node too large")
        area = .allocate(byteCount: areaCapacity, alignment: 8)
        if let base = source.baseAddress, source.count > 0 { area.copyMemory(from: base, byteCount: source.count) }
        count = m
    }

    /// A leaf of `m` entries totalling `bytes` bytes, written by `fill` into the node's own buffers: the area
    /// (with 32 bytes of room past `bytes`, for `copyEntryBytes`) and the m + 1 end offsets, `ends[0] = 0`
    /// already set (`EntryNodeView.materialize` of a prefix leaf: its entries whole, built where they stay).
    init(leafOf m: Int, bytes: Int, fill: (_ area: UnsafeMutableRawPointer, _ ends: UnsafeMutablePointer<UInt32>) -> Void) {
        level = 0
        children = []
        endsCapacity = max(m + 8, 4)
        ends = .allocate(capacity: endsCapacity + 1)
        ends[0] = 0
        areaCapacity = max(bytes + 256, 64)
        precondition(areaCapacity <= Int(UInt32.max), "EntryTree: node too large")
        area = .allocate(byteCount: areaCapacity, alignment: 8)
        fill(area, ends)
        precondition(Int(ends[m]) == bytes, "EntryTreeNode: offsets do not match the area")
        count = m
    }

    deinit {
        ends.deallocate()
        area.deallocate()
    }

    var isLeaf: Bool { level == 0 }
    var encodedSize: Int {
        EntryTree.encodedSize(count: count, entryBytes: entryBytes, inner: !isLeaf, shared: sharedPrefix)
    }

    /// The length of the prefix entries `a...b` share (entries are sorted, so it is that of `a` and `b`).
    @inline(__always)
    func sharedPrefix(_ a: Int, _ b: Int) -> Int { commonPrefixLength(entry(a), entry(b)) }

    /// The length of the prefix every entry of a leaf shares (0 for an inner node, whose entries are stored
    /// whole).
    var sharedPrefix: Int { isLeaf && count > 0 ? sharedPrefix(0, count - 1) : 0 }

    /// Entry `i` (0 ≤ i < count), valid until the node is next changed.
    @inline(__always)
    func entry(_ i: Int) -> UnsafeRawBufferPointer {
        assert(i >= 0 && i < count, "EntryTreeNode: entry index out of range")
        let a = Int(ends[i])
        return UnsafeRawBufferPointer(start: area + a, count: Int(ends[i &+ 1]) &- a)
    }

    /// Entry `i` as a new array.
    func entryArray(_ i: Int) -> [UInt8] { Array(entry(i)) }

    /// Child `i` of an inner node: its ref when committed, else nil with `dirty` set to the node, unretained
    /// (valid while this node holds it). Descending through it costs no reference counting.
    @inline(__always)
    func child(_ i: Int, dirty: inout Unmanaged<EntryTreeNode>?) -> UInt64? {
        children.withUnsafeBufferPointer { b in
            switch b[i] {
            case .clean(let ref):
                return ref
            case .dirty(let node):
                dirty = Unmanaged.passUnretained(node)
                return nil
            }
        }
    }

    // MARK: Changes

    /// Makes room for `length` more entry bytes.
    @inline(__always)
    private func reserveArea(_ length: Int) {
        if entryBytes &+ length > areaCapacity { regrowArea(length) }
    }

    @inline(never)
    private func regrowArea(_ length: Int) {
        let used = entryBytes
        let newCapacity = max(2 * (used + length), 256)
        precondition(newCapacity <= Int(UInt32.max), "EntryTree: node too large")
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        if used > 0 { fresh.copyMemory(from: area, byteCount: used) }
        area.deallocate()
        area = fresh
        areaCapacity = newCapacity
    }

    /// Makes room for `n` more entries' offsets.
    @inline(__always)
    private func reserveEnds(_ n: Int) {
        if count &+ n > endsCapacity { regrowEnds(count + n) }
    }

    @inline(never)
    private func regrowEnds(_ needed: Int) {
        let newCapacity = max(2 * endsCapacity, needed)
        let fresh = UnsafeMutablePointer<UInt32>.allocate(capacity: newCapacity + 1)
        fresh.moveInitialize(from: ends, count: count + 1)
        ends.deallocate()
        ends = fresh
        endsCapacity = newCapacity
    }

    /// Opens a gap of `length` bytes at `offset` of the area (the bytes from there on move up).
    @inline(__always)
    private func openGap(at offset: Int, _ length: Int) {
        let used = entryBytes
        if offset < used { memmove(area + offset + length, area + offset, used - offset) }
    }

    /// Adds `delta` (modulo 2³², so a negative one subtracts) to `ends[first...last]`.
    @inline(__always)
    private func addToEnds(from first: Int, through last: Int, _ delta: UInt32) {
        guard first <= last else { return }
        // A local pointer: through the stored property every store could change it, and the loop would
        // reload it and stay scalar.
        let run = UnsafeMutableBufferPointer(start: ends + first, count: last &- first &+ 1)
        for k in run.indices { run[k] &+= delta }
    }

    /// Inserts a copy of `entry` (which must not point into this node) at `i`, and its child, for an inner node.
    func insert(_ entry: UnsafeRawBufferPointer, child: EntryTree.Child? = nil, at i: Int) {
        precondition(i >= 0 && i <= count, "EntryTreeNode: insert index out of range")
        let n = entry.count
        reserveEnds(1)
        reserveArea(n)
        let at = Int(ends[i])
        openGap(at: at, n)
        if n > 0 {
            assert(!(entry.baseAddress! >= UnsafeRawPointer(area) && entry.baseAddress! < UnsafeRawPointer(area + areaCapacity)),
                   "EntryTreeNode: entry copied from its own area")
            (area + at).copyMemory(from: entry.baseAddress!, byteCount: n)
        }
        // The offsets after it move up one place (one `memmove`), then grow by its length (a loop the compiler
        // vectorises; moving and adding in one loop was a scalar loop, and bulk inserts felt it).
        if i < count { memmove(ends + i + 2, ends + i + 1, 4 * (count - i)) }
        ends[i &+ 1] = UInt32(at &+ n)
        addToEnds(from: i &+ 2, through: count &+ 1, UInt32(n))
        count += 1
        if let child { children.insert(child, at: i) }
    }

    func remove(at i: Int) {
        precondition(i >= 0 && i < count, "EntryTreeNode: remove index out of range")
        let a = Int(ends[i]), z = Int(ends[i &+ 1]), used = entryBytes
        if z < used { memmove(area + a, area + z, used - z) }
        if i &+ 1 < count { memmove(ends + i + 1, ends + i + 2, 4 * (count - i - 1)) }
        addToEnds(from: i &+ 1, through: count &- 1, 0 &- UInt32(z - a))
        count -= 1
        if !isLeaf { children.remove(at: i) }
    }

    /// Stores the children's refs, little-endian, 8 bytes each, at `out` (every child committed).
    func writeChildRefs(to out: UnsafeMutableRawPointer) {
        children.withUnsafeBufferPointer { b in
            for (i, c) in b.enumerated() {
                guard case .clean(let ref) = c else { preconditionFailure("EntryTreeNode: a dirty child left unwritten") }
                out.storeBytes(of: ref.littleEndian, toByteOffset: 8 * i, as: UInt64.self)
            }
        }
    }

    /// Writes each dirty child with `write` (which returns where it went) and makes that committed node the
    /// child (the node then stands for what it was written as, to be kept for the next transaction). No list
    /// of the dirty children is made: a small commit has one per node.
    func settleDirtyChildren(_ write: (EntryTreeNode) throws -> UInt64) rethrows {
        for i in children.indices {
            if case .dirty(let n) = children[i] { children[i] = .clean(try write(n)) }
        }
    }

    /// Makes `child` child `i`, its first entry entry `i`.
    func setChild(_ child: EntryTreeNode, at i: Int) {
        children[i] = .dirty(child)
        replaceEntry(at: i, with: child.entry(0))
    }

    /// Replaces entry `i` by a copy of `bytes` (not pointing into this node).
    private func replaceEntry(at i: Int, with bytes: UnsafeRawBufferPointer) {
        let a = Int(ends[i]), z = Int(ends[i &+ 1]), n = bytes.count
        if z - a == n {
            // Usually unchanged (a child's minimum rarely moves); otherwise overwrite in place.
            if compareEntryBytes(area + a, n, bytes.baseAddress, n) != 0, let src = bytes.baseAddress {
                (area + a).copyMemory(from: src, byteCount: n)
            }
            return
        }
        let delta = n - (z - a), used = entryBytes
        if delta > 0 { reserveArea(delta) }
        if z < used { memmove(area + z + delta, area + z, used - z) }
        if n > 0, let src = bytes.baseAddress { (area + a).copyMemory(from: src, byteCount: n) }
        addToEnds(from: i &+ 1, through: count, UInt32(truncatingIfNeeded: delta))
    }

    /// Moves entries (and children) from `i` on into a new node.
    func cut(from i: Int) -> EntryTreeNode {
        precondition(i >= 0 && i <= count, "EntryTreeNode: cut index out of range")
        let base = Int(ends[i]), bytes = entryBytes - base, m = count - i
        let right = EntryTreeNode(level: level, capacity: max(m, 8) + 8, bytes: 2 * bytes + 64)
        if bytes > 0 { right.area.copyMemory(from: area + base, byteCount: bytes) }
        let shift = UInt32(base)
        for k in 0...m { right.ends[k] = ends[i + k] &- shift }
        right.count = m
        if !isLeaf {
            right.children = Array(children[i...])
            children.removeSubrange(i...)
        }
        count = i
        return right
    }

    /// Appends every entry (and child) of `other`, which must follow this node's entries.
    func append(contentsOf other: EntryTreeNode) {
        reserveEnds(other.count)
        reserveArea(other.entryBytes)
        let base = entryBytes
        if other.entryBytes > 0 { (area + base).copyMemory(from: other.area, byteCount: other.entryBytes) }
        let shift = UInt32(base)
        for k in 0..<other.count { ends[count + 1 + k] = other.ends[k + 1] &+ shift }
        count += other.count
        children.append(contentsOf: other.children)
    }

    // MARK: Search

    /// First index whose entry is >= `key`, and whether it equals `key`.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        let kp = key.baseAddress, kn = key.count
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo &+ hi) &>> 1
            let a = Int(ends[mid])
            let c = compareEntryBytes(UnsafeRawPointer(area) + a, Int(ends[mid &+ 1]) &- a, kp, kn)
            if c < 0 { lo = mid &+ 1 } else if c > 0 { hi = mid } else { return (mid, true) }
        }
        return (lo, false)
    }

    /// `lowerBound`, checking the last entry first: ascending inserts (sequential keys) land after it.
    @inline(__always)
    func lowerBoundForInsert(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        if count > 1 {
            let a = Int(ends[count &- 1])
            let c = compareEntryBytes(UnsafeRawPointer(area) + a, Int(ends[count]) &- a, key.baseAddress, key.count)
            if c < 0 { return (count, false) }
            if c == 0 { return (count - 1, true) }
        }
        return lowerBound(key)
    }

    /// Index of the child whose range holds `key`: the last entry <= key, or 0 when key precedes them all.
    @inline(__always)
    func childIndex(for key: UnsafeRawBufferPointer) -> Int {
        let (i, found) = lowerBound(key)
        return found ? i : max(i - 1, 0)
    }

    /// `childIndex`, checking the last entry first (see `lowerBoundForInsert`).
    @inline(__always)
    func childIndexForInsert(_ key: UnsafeRawBufferPointer) -> Int {
        let (i, found) = lowerBoundForInsert(key)
        return found ? i : max(i - 1, 0)
    }

    // MARK: Encoding

    /// Writes a prefix leaf's part after its fixed part: the m + 1 little-endian 16-bit end offsets of the
    /// suffixes, the `shared` bytes every entry starts with, then each entry's bytes after them (room for
    /// `2 * (count + 1) + shared + entryBytes - count * shared` bytes).
    func writePrefixLeafArea(to out: UnsafeMutableRawPointer, shared: Int) {
        precondition(isLeaf && (count == 0 ? shared == 0 : shared <= Int(ends[1])), "EntryTreeNode: prefix longer than an entry")
        var at = 2 * (count + 1)
        if count > 0 { (out + at).copyMemory(from: area, byteCount: shared) }
        at += shared
        let suffixes = at
        let end = suffixes + entryBytes - count * shared
        out.storeBytes(of: UInt16(0), toByteOffset: 0, as: UInt16.self)
        // Local copies: through the stored properties every store could change them, and the loop would reload them.
        let ends = self.ends, area = self.area, areaEnd = areaCapacity
        for i in 0..<count {
            let a = Int(ends[i]) &+ shared, z = Int(ends[i &+ 1])
            copyEntryBytes(to: out + at, from: area + a, z &- a, roomy: at &+ 32 <= end && a &+ 32 <= areaEnd)
            at &+= z &- a
            out.storeBytes(of: UInt16(at &- suffixes).littleEndian, toByteOffset: 2 * (i &+ 1), as: UInt16.self)
        }
    }

    /// Writes the m + 1 little-endian end offsets, then the entry bytes, to `out` (which must have room for
    /// `4 * (count + 1) + entryBytes` bytes).
    func writeEntryArea(to out: UnsafeMutableRawPointer) {
        #if _endian(little)
        out.copyMemory(from: ends, byteCount: 4 * (count + 1))
        #else
        for i in 0...count { out.storeBytes(of: ends[i].littleEndian, toByteOffset: 4 * i, as: UInt32.self) }
        #endif
        let n = entryBytes
        if n > 0 { (out + 4 * (count + 1)).copyMemory(from: area, byteCount: n) }
    }
}

/// Copies `n` bytes from `source` to `target`. With `roomy` (32 bytes readable at `source` and writable at
/// `target`), an entry of up to 32 bytes goes as four 8-byte words, whatever follows it included: a node's
/// entries are copied in order, so the bytes written past one are written again by the next. A call to
/// `memcpy` per entry of a dozen bytes was most of the time of encoding and decoding an index leaf (`perf`).
@inline(__always)
func copyEntryBytes(to target: UnsafeMutableRawPointer, from source: UnsafeRawPointer, _ n: Int, roomy: Bool) {
    if roomy && n <= 32 {
        target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
        target.storeBytes(of: source.loadUnaligned(fromByteOffset: 8, as: UInt64.self), toByteOffset: 8, as: UInt64.self)
        if n > 16 {
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: 16, as: UInt64.self), toByteOffset: 16, as: UInt64.self)
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: 24, as: UInt64.self), toByteOffset: 24, as: UInt64.self)
        }
    } else if n > 0 {
        target.copyMemory(from: source, byteCount: n)
    }
}

/// The number of leading bytes `a` and `b` have in common.
@inline(__always)
func commonPrefixLength(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n == 0 { return 0 }
    let pa = a.baseAddress.unsafelyUnwrapped, pb = b.baseAddress.unsafelyUnwrapped
    var i = 0
    while i &+ 8 <= n {
        let x = UInt64(bigEndian: pa.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            ^ UInt64(bigEndian: pb.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        if x != 0 { return i &+ x.leadingZeroBitCount &>> 3 }
        i &+= 8
    }
    while i < n && pa.load(fromByteOffset: i, as: UInt8.self) == pb.load(fromByteOffset: i, as: UInt8.self) { i &+= 1 }
    return i
}

/// Unsigned lexicographic comparison; a proper prefix sorts first. Negative, zero or positive.
@inline(__always)
func compareEntries(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    compareEntryBytes(a.baseAddress, a.count, b.baseAddress, b.count)
}

/// `compareEntries` on `na` bytes at `pa` and `nb` bytes at `pb` (a pointer may be nil only for zero bytes).
@inline(__always)
func compareEntryBytes(_ pa: UnsafeRawPointer?, _ na: Int, _ pb: UnsafeRawPointer?, _ nb: Int) -> Int {
    // Eight bytes at a time as big-endian words: entries are short, so this beats a call to memcmp.
    let n = min(na, nb)
    if n > 0 {
        let pa = pa.unsafelyUnwrapped, pb = pb.unsafelyUnwrapped
        var i = 0
        while i &+ 8 <= n {
            let x = UInt64(bigEndian: pa.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let y = UInt64(bigEndian: pb.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if x != y { return x < y ? -1 : 1 }
            i &+= 8
        }
        if i &+ 4 <= n {
            let x = UInt32(bigEndian: pa.loadUnaligned(fromByteOffset: i, as: UInt32.self))
            let y = UInt32(bigEndian: pb.loadUnaligned(fromByteOffset: i, as: UInt32.self))
            if x != y { return x < y ? -1 : 1 }
            i &+= 4
        }
        while i < n {
            let x = pa.load(fromByteOffset: i, as: UInt8.self), y = pb.load(fromByteOffset: i, as: UInt8.self)
            if x != y { return x < y ? -1 : 1 }
            i &+= 1
        }
    }
    return na &- nb
}

/// Whether `entry` starts with `prefix`.
@inline(__always)
func entryHasPrefix(_ entry: UnsafeRawBufferPointer, _ prefix: UnsafeRawBufferPointer) -> Bool {
    entry.count >= prefix.count && compareEntryBytes(entry.baseAddress, prefix.count, prefix.baseAddress, prefix.count) == 0
}

/// Where `key` probably sits among `count` entries spread over `low..<high`: compares the first 8 bytes
/// after the bounds' common prefix as big-endian numbers. Only a starting point for a search; any input gives
/// an index in 0..<count.
@inline(__always)
func interpolate(_ key: UnsafeRawBufferPointer, low: UnsafeRawBufferPointer, high: UnsafeRawBufferPointer, count: Int) -> Int {
    let n = min(low.count, high.count)
    var p = 0
    while p < n && low[p] == high[p] { p &+= 1 }
    @inline(__always) func window(_ e: UnsafeRawBufferPointer) -> UInt64 {
        var w: UInt64 = 0
        var i = p
        while i < p &+ 8 {
            w = w &<< 8 | (i < e.count ? UInt64(e[i]) : 0)
            i &+= 1
        }
        return w
    }
    let l = window(low), h = window(high), k = window(key)
    guard h > l, k > l else { return 0 }
    if k >= h { return count &- 1 }
    let guess = Int(Double(k &- l) / Double(h &- l) * Double(count))
    return min(max(guess, 0), count &- 1)
}

/// The first of `count` sorted entries that is >= a key, and whether it equals it, found by exponential search
/// outward from `start` (in 0..<count), then binary search. `compare(i)` compares entry i with the key
/// (negative, zero or positive). A start next to the answer costs two or three probes on neighbouring entries;
/// any start costs at most about twice the probes of a plain binary search.
@inline(__always)
func gallopLowerBound(count: Int, from start: Int, _ compare: (Int) throws -> Int) rethrows -> (index: Int, found: Bool) {
    var lo: Int, hi: Int
    let c = try compare(start)
    if c == 0 { return (start, true) }
    if c < 0 {
        // The answer lies in start+1...count.
        var below = start, step = 1
        while true {
            let j = below &+ step
            if j >= count { lo = below &+ 1; hi = count; break }
            let d = try compare(j)
            if d == 0 { return (j, true) }
            if d > 0 { lo = below &+ 1; hi = j; break }
            below = j
            step &<<= 1
        }
    } else {
        // The answer lies in 0...start.
        var above = start, step = 1
        while true {
            let j = above &- step
            if j < 0 { lo = 0; hi = above; break }
            let d = try compare(j)
            if d == 0 { return (j, true) }
            if d < 0 { lo = j &+ 1; hi = above; break }
            above = j
            step &<<= 1
        }
    }
    while lo < hi {
        let mid = (lo &+ hi) &>> 1
        let d = try compare(mid)
        if d < 0 { lo = mid &+ 1 } else if d > 0 { hi = mid } else { return (mid, true) }
    }
    return (lo, false)
}
