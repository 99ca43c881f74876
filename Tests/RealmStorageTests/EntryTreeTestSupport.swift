import Testing
@testable import RealmStorage

// Shared by the index tree tests (EntryTreeTests, PrefixLeafTests).

/// An in-memory node store: refs count up from 2 by whole pages, freed refs are tracked. Misuse (double free,
/// freeing an unknown ref, reading a freed node) fails the test, or in `hostile` mode (corruption tests, where
/// a damaged tree may legitimately misbehave) throws `StorageError.corrupt`.
final class FakeStore: NodeSink {
    private(set) var nodes: [UInt64: UnsafeMutableRawBufferPointer] = [:]
    private(set) var nextRef: UInt64 = 2
    private(set) var written: [UInt64] = []
    private(set) var freed: Set<UInt64> = []
    var hostile = false
    let displayPath = "fake.realm"

    init() {}

    deinit { for b in nodes.values { b.deallocate() } }

    /// A deep copy.
    func clone() -> FakeStore {
        let c = FakeStore()
        for (ref, b) in nodes {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: b.count, alignment: 8)
            copy.copyMemory(from: UnsafeRawBufferPointer(b))
            c.nodes[ref] = copy
        }
        c.nextRef = nextRef
        c.written = written
        c.freed = freed
        return c
    }

    private func misuse(_ ref: UInt64, _ what: String) throws {
        if hostile { throw corrupt(ref, what) }
        Issue.record("FakeStore: \(what) (ref \(ref))")
    }

    func node(_ ref: UInt64, expected: NodeType?) throws -> UnsafeRawBufferPointer {
        guard let b = nodes[ref] else { throw corrupt(ref, "no node at this ref") }
        if freed.contains(ref) { try misuse(ref, "read of a freed node") }
        let bytes = UnsafeRawBufferPointer(b)
        guard bytes.u32(at: 4) == UInt32(bytes.count) else { throw corrupt(ref, "length field mismatch") }
        if let expected, bytes[0] != expected.rawValue {
            throw corrupt(ref, "type \(bytes[0]), expected \(expected.rawValue)")
        }
        guard bytes.u64(at: 8) == nodeChecksum(bytes) else { throw corrupt(ref, "checksum mismatch") }
        return bytes
    }

    func write(_ node: inout [UInt8]) throws -> UInt64 {
        let ref = nextRef
        nextRef += UInt64(pagesFor(bytes: node.count))
        let b = UnsafeMutableRawBufferPointer.allocate(byteCount: node.count, alignment: 8)
        node.withUnsafeBytes { b.copyMemory(from: $0) }
        nodes[ref] = b
        written.append(ref)
        #expect(nodeChecksum(UnsafeRawBufferPointer(b)) == UnsafeRawBufferPointer(b).u64(at: 8))
        return ref
    }

    func free(_ ref: UInt64) throws {
        guard nodes[ref] != nil else { return try misuse(ref, "free of an unknown ref") }
        if !freed.insert(ref).inserted { try misuse(ref, "double free") }
    }

    func discard(_ ref: UInt64) throws { try free(ref) }

    var liveCount: Int { nodes.count - freed.count }

    /// XORs one byte of a node; `reseal` recomputes the checksum so only the tree's own checks can notice.
    func damage(_ ref: UInt64, at offset: Int, xor: UInt8, reseal: Bool) {
        let b = nodes[ref]!
        b[offset] ^= xor
        if reseal {
            let sum = nodeChecksum(UnsafeRawBufferPointer(b))
            withUnsafeBytes(of: sum.littleEndian) { for i in 0..<8 { b[8 + i] = $0[i] } }
        }
    }

    func bytes(_ ref: UInt64) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(nodes[ref]!) }

    /// Rewrites every leaf under `root` in the layout of format 8 (whole entries, 4-byte offsets), in place:
    /// a tree as a build before prefix leaves wrote it. A leaf whole entries would make larger than format 8
    /// allowed (8192 bytes, 512 entries) stays as it is.
    func rewriteLeavesInFormat8(_ root: UInt64) throws {
        var stack = [root]
        while let ref = stack.popLast() {
            let view = try EntryNodeView(ref: ref, level: nil, source: self)
            if !view.isLeaf {
                for i in 0..<view.count { stack.append(try view.child(i)) }
                continue
            }
            var plain = EntryTree.encode(try view.materialize(), prefixLeaf: false)
            #expect(plain[1] == 0)
            if plain.count > 8192 || view.count > 512 { continue }
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: plain.count, alignment: 8)
            plain.withUnsafeMutableBytes { b.copyMemory(from: UnsafeRawBufferPointer($0)) }
            nodes[ref]!.deallocate()
            nodes[ref] = b
        }
    }
}

/// A sorted array of distinct entries: the reference model.
struct SortedModel {
    var entries: [[UInt8]] = []

    func lowerBound(_ e: [UInt8]) -> (Int, Bool) {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = compareBytes(entries[mid], e)
            if c < 0 { lo = mid + 1 } else if c > 0 { hi = mid } else { return (mid, true) }
        }
        return (lo, false)
    }

    mutating func insert(_ e: [UInt8]) -> Bool {
        let (i, found) = lowerBound(e)
        if found { return false }
        entries.insert(e, at: i)
        return true
    }

    mutating func remove(_ e: [UInt8]) -> Bool {
        let (i, found) = lowerBound(e)
        if !found { return false }
        entries.remove(at: i)
        return true
    }
}

/// Random entries with many shared prefixes and the boundary bytes 0x00 and 0xFF.
func randomEntry(_ rng: inout SplitMix64, maxLength: Int) -> [UInt8] {
    let alphabet: [UInt8] = [0x00, 0x01, 0x41, 0x42, 0x7F, 0x80, 0xFE, 0xFF]
    let length = rng.below(8) == 0 ? rng.below(maxLength + 1) : rng.below(min(24, maxLength) + 1)
    return (0..<length).map { _ in alphabet[rng.below(alphabet.count)] }
}

/// A realistic index entry: a value prefix and an 8-byte big-endian object key.
func indexEntry(_ key: UInt64, prefix: [UInt8] = Array("user:".utf8)) -> [UInt8] {
    prefix + withUnsafeBytes(of: key.bigEndian) { Array($0) }
}

func scanAll(_ tree: EntryTree, from bound: [UInt8] = [], limit: Int = .max, _ source: NodeSource) throws -> [[UInt8]] {
    var out: [[UInt8]] = []
    try tree.scan(from: bound, source: source) { e in
        out.append(Array(e))
        return out.count < limit
    }
    return out
}

/// The entries starting with `prefix`, in order, at most `limit`.
func scanPrefix(_ tree: EntryTree, _ prefix: [UInt8], limit: Int = .max, _ source: NodeSource) throws -> [[UInt8]] {
    var out: [[UInt8]] = []
    try tree.scan(prefix: prefix, source: source) { e in
        out.append(Array(e))
        return out.count < limit
    }
    return out
}

/// What follows `prefix` in each entry that starts with it, in order, at most `limit`: `scan(tailsAfter:)`.
func scanTails(_ tree: EntryTree, _ prefix: [UInt8], limit: Int = .max, _ source: NodeSource) throws -> [[UInt8]] {
    var out: [[UInt8]] = []
    try tree.scan(tailsAfter: prefix, source: source) { t in
        out.append(Array(t))
        return out.count < limit
    }
    return out
}

struct LevelStats {
    var nodes = 0
    var bytes = 0
    /// (entry count, encoded size) of each node.
    var shapes: [(count: Int, size: Int)] = []
}

/// Per-level node counts and encoded bytes of a committed tree.
func nodeStats(_ root: UInt64, _ store: FakeStore) -> [Int: LevelStats] {
    var stats: [Int: LevelStats] = [:]
    var stack = [root]
    while let ref = stack.popLast() {
        let b = store.bytes(ref)
        let count = Int(b.u32(at: 16)), level = Int(b.u32(at: 20))
        var s = stats[level] ?? LevelStats()
        s.nodes += 1
        s.bytes += b.count
        s.shapes.append((count, b.count))
        stats[level] = s
        if level > 0 {
            let refs = b.count - 8 * count
            for i in 0..<count { stack.append(b.u64(at: refs + 8 * i)) }
        }
    }
    return stats
}

/// No leak, no double free: the live refs and the freed refs partition everything ever written.
func expectPartition(live: [UInt64], _ store: FakeStore, sourceLocation: SourceLocation = #_sourceLocation) {
    let liveSet = Set(live)
    let written = Set(store.written)
    #expect(liveSet.count == live.count, "a ref reached twice", sourceLocation: sourceLocation)
    let both = liveSet.intersection(store.freed)
    #expect(both.isEmpty, "\(both.count) live refs were freed, e.g. \(both.sorted().prefix(5))", sourceLocation: sourceLocation)
    let leaked = written.subtracting(liveSet).subtracting(store.freed)
    #expect(leaked.isEmpty, "\(leaked.count) refs leaked, e.g. \(leaked.sorted().prefix(5))", sourceLocation: sourceLocation)
    let unknown = liveSet.union(store.freed).subtracting(written)
    #expect(unknown.isEmpty, "\(unknown.count) refs never written, e.g. \(unknown.sorted().prefix(5))", sourceLocation: sourceLocation)
}
