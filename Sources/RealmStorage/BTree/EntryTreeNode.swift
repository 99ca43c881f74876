/// A dirty node of an `EntryTree`: decoded entries, and for inner nodes (level > 0) one child per entry,
/// entry i being the smallest entry below child i.
///
/// **Storage.** The entry bytes live in one heap buffer, in no particular order; a sorted array of slots
/// (offset and length in the heap) gives the order. Inserting an entry appends its bytes to the heap and shifts
/// slots only (8 bytes per entry, never entry bytes); removing one leaves its bytes as garbage, reclaimed when the
/// heap next has to grow (the live entries are then copied, in order, into a fresh heap of twice their size).
/// Comparisons read the heap directly: no per-entry allocation and no reference counting on the search path.
///
/// The buffers are owned by the node and freed by `deinit`. `entry(_:)` returns a pointer into the heap that is
/// valid until the node is next mutated.
final class EntryTreeNode {
    /// Where entry bytes sit in the heap.
    struct Slot {
        var offset: UInt32
        var length: UInt32
    }

    let level: Int
    private(set) var children: [EntryTree.Child]
    /// Number of entries.
    private(set) var count = 0
    /// Sum of the entries' lengths.
    private(set) var entryBytes = 0

    private var slots: UnsafeMutablePointer<Slot>
    private var slotCapacity: Int
    private var heap: UnsafeMutableRawPointer
    private var heapCapacity: Int
    /// Bytes of the heap in use (live entries and garbage).
    private var heapUsed = 0

    /// An empty node with room for `capacity` entries totalling `bytes` bytes before it has to grow.
    init(level: Int, capacity: Int = 8, bytes: Int = 256) {
        self.level = level
        children = []
        slotCapacity = max(capacity, 4)
        slots = .allocate(capacity: slotCapacity)
        heapCapacity = max(bytes, 64)
        heap = .allocate(byteCount: heapCapacity, alignment: 8)
    }

    /// A node whose entries are the committed entry area `area` cut at `ends` (the m + 1 little-endian `UInt32`
    /// end offsets of an index node: `0, end(0), ..., end(m-1)`), which the caller has checked (non-decreasing,
    /// within the area). Offsets out of range are clamped, so even unchecked input never reads out of bounds.
    init(level: Int, area: UnsafeRawBufferPointer, ends: UnsafeRawPointer, count m: Int, children: [EntryTree.Child]) {
        self.level = level
        self.children = children
        slotCapacity = max(m + 8, 4)
        slots = .allocate(capacity: slotCapacity)
        heapCapacity = max(area.count + 256, 64)
        precondition(heapCapacity <= Int(UInt32.max), "EntryTree: node too large")
        heap = .allocate(byteCount: heapCapacity, alignment: 8)
        if let base = area.baseAddress, area.count > 0 { heap.copyMemory(from: base, byteCount: area.count) }
        heapUsed = area.count
        var previous = Int(UInt32(littleEndian: ends.loadUnaligned(as: UInt32.self)))
        for i in 0..<m {
            let end = Int(UInt32(littleEndian: ends.loadUnaligned(fromByteOffset: 4 * (i + 1), as: UInt32.self)))
            let a = min(previous, area.count), z = min(max(end, a), area.count)
            slots[i] = Slot(offset: UInt32(a), length: UInt32(z - a))
            entryBytes += z - a
            previous = end
        }
        count = m
    }

    deinit {
        slots.deallocate()
        heap.deallocate()
    }

    var isLeaf: Bool { level == 0 }
    var encodedSize: Int { EntryTree.encodedSize(count: count, entryBytes: entryBytes, inner: !isLeaf) }

    /// Entry `i` (0 ≤ i < count), valid until the node is next changed.
    @inline(__always)
    func entry(_ i: Int) -> UnsafeRawBufferPointer {
        assert(i >= 0 && i < count, "EntryTreeNode: entry index out of range")
        let s = slots[i]
        return UnsafeRawBufferPointer(start: heap + Int(s.offset), count: Int(s.length))
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

    /// Makes room for `length` more heap bytes, compacting into a fresh heap when full.
    @inline(__always)
    private func reserveHeap(_ length: Int) {
        if heapUsed + length > heapCapacity { regrowHeap(length) }
    }

    @inline(never)
    private func regrowHeap(_ length: Int) {
        let newCapacity = max(2 * (entryBytes + length), 256)
        precondition(newCapacity <= Int(UInt32.max), "EntryTree: node too large")
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        var used = 0
        for i in 0..<count {
            let s = slots[i]
            fresh.advanced(by: used).copyMemory(from: heap + Int(s.offset), byteCount: Int(s.length))
            slots[i].offset = UInt32(used)
            used += Int(s.length)
        }
        heap.deallocate()
        heap = fresh
        heapCapacity = newCapacity
        heapUsed = used
    }

    @inline(__always)
    private func reserveSlots(_ n: Int) {
        if count + n > slotCapacity { regrowSlots(count + n) }
    }

    @inline(never)
    private func regrowSlots(_ needed: Int) {
        let newCapacity = max(2 * slotCapacity, needed)
        let fresh = UnsafeMutablePointer<Slot>.allocate(capacity: newCapacity)
        fresh.moveInitialize(from: slots, count: count)
        slots.deallocate()
        slots = fresh
        slotCapacity = newCapacity
    }

    /// Copies `bytes` (which must not point into this node) to the heap; returns its slot.
    @inline(__always)
    private func store(_ bytes: UnsafeRawBufferPointer) -> Slot {
        let n = bytes.count
        reserveHeap(n)
        if n > 0 {
            assert(!(bytes.baseAddress! >= UnsafeRawPointer(heap) && bytes.baseAddress! < UnsafeRawPointer(heap + heapCapacity)),
                   "EntryTreeNode: entry copied from its own heap")
            (heap + heapUsed).copyMemory(from: bytes.baseAddress!, byteCount: n)
        }
        let slot = Slot(offset: UInt32(heapUsed), length: UInt32(n))
        heapUsed += n
        entryBytes += n
        return slot
    }

    /// Appends an entry (no child) after every other.
    private func append(_ entry: UnsafeRawBufferPointer) {
        reserveSlots(1)
        slots[count] = store(entry)
        count += 1
    }

    /// Inserts a copy of `entry` at `i` (and its child, for an inner node).
    func insert(_ entry: UnsafeRawBufferPointer, child: EntryTree.Child? = nil, at i: Int) {
        precondition(i >= 0 && i <= count, "EntryTreeNode: insert index out of range")
        reserveSlots(1)
        let slot = store(entry)
        if i < count { (slots + i + 1).moveInitialize(from: slots + i, count: count - i) }
        slots[i] = slot
        count += 1
        if let child { children.insert(child, at: i) }
    }

    func remove(at i: Int) {
        precondition(i >= 0 && i < count, "EntryTreeNode: remove index out of range")
        entryBytes -= Int(slots[i].length)
        if i + 1 < count { (slots + i).moveInitialize(from: slots + i + 1, count: count - i - 1) }
        count -= 1
        if count == 0 { heapUsed = 0 }
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
        let old = slots[i]
        if Int(old.length) == bytes.count {
            // Usually unchanged (a child's minimum rarely moves); otherwise overwrite in place.
            let at = heap + Int(old.offset)
            if compareEntryBytes(at, bytes.count, bytes.baseAddress, bytes.count) != 0, let src = bytes.baseAddress {
                at.copyMemory(from: src, byteCount: bytes.count)
            }
            return
        }
        entryBytes -= Int(old.length)
        slots[i].length = 0  // garbage now: a regrowing heap must not copy it
        slots[i] = store(bytes)
    }

    /// Moves entries (and children) from `i` on into a new node.
    func cut(from i: Int) -> EntryTreeNode {
        precondition(i >= 0 && i <= count, "EntryTreeNode: cut index out of range")
        var bytes = 0
        for j in i..<count { bytes += Int(slots[j].length) }
        let right = EntryTreeNode(level: level, capacity: max(count - i, 8) + 8, bytes: 2 * bytes + 64)
        for j in i..<count { right.append(entry(j)) }
        if !isLeaf {
            right.children = Array(children[i...])
            children.removeSubrange(i...)
        }
        entryBytes -= bytes
        count = i
        if count == 0 { heapUsed = 0 }
        return right
    }

    /// Appends every entry (and child) of `other`, which must follow this node's entries.
    func append(contentsOf other: EntryTreeNode) {
        reserveSlots(other.count)
        reserveHeap(other.entryBytes)
        for j in 0..<other.count { append(other.entry(j)) }
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
            let s = slots[mid]
            let c = compareEntryBytes(UnsafeRawPointer(heap) + Int(s.offset), Int(s.length), kp, kn)
            if c < 0 { lo = mid &+ 1 } else if c > 0 { hi = mid } else { return (mid, true) }
        }
        return (lo, false)
    }

    /// `lowerBound`, checking the last entry first: ascending inserts (sequential keys) land after it.
    @inline(__always)
    func lowerBoundForInsert(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        if count > 1 {
            let s = slots[count - 1]
            let c = compareEntryBytes(UnsafeRawPointer(heap) + Int(s.offset), Int(s.length), key.baseAddress, key.count)
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

    /// Writes the m + 1 little-endian end offsets, then the entry bytes, to `out` (which must have room for
    /// `4 * (count + 1) + entryBytes` bytes).
    func writeEntryArea(to out: UnsafeMutableRawPointer) {
        var end = 0
        out.storeBytes(of: UInt32(0).littleEndian, as: UInt32.self)
        var p = out + 4 * (count + 1)
        var i = 0
        while i < count {
            // A run of entries lying one after another in the heap (a node decoded from its committed bytes
            // keeps them so, apart from what was inserted since) is copied at once.
            let runStart = Int(slots[i].offset)
            var runEnd = runStart
            repeat {
                let s = slots[i]
                end += Int(s.length)
                (out + 4 * (i + 1)).storeBytes(of: UInt32(end).littleEndian, as: UInt32.self)
                runEnd += Int(s.length)
                i += 1
            } while i < count && Int(slots[i].offset) == runEnd
            let n = runEnd - runStart
            if n > 0 { p.copyMemory(from: heap + runStart, byteCount: n) }
            p += n
        }
    }
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
