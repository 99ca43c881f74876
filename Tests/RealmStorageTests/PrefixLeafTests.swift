import Testing
@testable import RealmStorage

/// Index leaves store the prefix their entries share once (format 9, DECISIONS 109): searches compare a key
/// with the prefix and then with the suffixes, entries read back whole, and damage is an error.
@Suite struct PrefixLeafTests {
    /// One committed leaf holding `entries` (sorted), and its view.
    func leaf(_ entries: [[UInt8]], _ store: FakeStore) throws -> (EntryTree, UInt64) {
        var tree = EntryTree(root: 0)
        for e in entries { #expect(try tree.insert(e, sink: store)) }
        let root = try tree.commit(sink: store)
        #expect(store.bytes(root)[1] == EntryTree.prefixLeafFlag)
        return (EntryTree(root: root), root)
    }

    @Test func searchesAroundThePrefixAnswerAsTheWholeEntries() throws {
        let b = { (s: String) in Array(s.utf8) }
        // The first entry is the shared prefix itself; a NUL and 0xFF follow it in others.
        let entries = [b("ab"), b("ab") + [0], b("abc"), b("abc") + [0xFF], b("abd"), b("abz")]
        let store = FakeStore()
        let (tree, root) = try leaf(entries, store)
        let view = try EntryNodeView(ref: root, level: 0, source: store)
        #expect(view.prefixLength == 2)
        #expect(try (0..<view.count).map { i in try view.withEntry(i) { Array($0) } } == entries)
        let model = SortedModel(entries: entries)
        let probes = [b(""), b("a"), b("aa"), b("ab"), b("ab") + [0], b("ab") + [0, 0], b("abb"), b("abc"), b("abca"),
                      b("abe"), b("abzz"), b("ac"), b("b"), [0xFF]]
        for key in probes {
            let (index, found) = try key.withUnsafeBytes { try view.lowerBound($0) }
            #expect(index == model.lowerBound(key).0 && found == model.lowerBound(key).1, "\(key)")
            #expect(try tree.contains(key, source: store) == model.lowerBound(key).1, "\(key)")
            #expect(try scanAll(tree, from: key, store) == Array(entries[model.lowerBound(key).0...]), "\(key)")
            let matching = entries.filter { $0.starts(with: key) }
            #expect(try scanPrefix(tree, key, store) == matching, "\(key)")
            #expect(try scanTails(tree, key, store) == matching.map { Array($0.dropFirst(key.count)) }, "\(key)")
        }
    }

    /// `scan(tailsAfter:)` gives what `scan(prefix:)` gives without the prefix: over many leaves, with keys
    /// shorter and longer than the leaves' prefixes, across leaf boundaries, stopping early, on leaves of
    /// format 8 and on a tree with uncommitted changes.
    @Test func tailScansAnswerAsPrefixScans() throws {
        var rng = SplitMix64(seed: 0x7A11)
        let store = FakeStore()
        var tree = EntryTree(root: 0)
        var model = SortedModel(entries: [])
        // Runs of equal values (one leaf's prefix then reaches into the object keys) and scattered ones.
        let values: [[UInt8]] = (0..<60).map { v in Array("city-\(v % 7)-".utf8) + (v % 3 == 0 ? [] : [UInt8(v)]) }
        for i in 0..<6000 {
            let v = values[Int(rng.next() % UInt64(i < 3000 ? 3 : values.count))]
            let e = indexEntry(rng.next() % 100_000, prefix: v)
            if model.insert(e) { #expect(try tree.insert(e, sink: store)) }
        }
        let rootRef = try tree.commit(sink: store)
        let committed = EntryTree(root: rootRef)
        let format8 = store.clone()
        try format8.rewriteLeavesInFormat8(rootRef)
        // Changed in a store of its own: a change frees the committed nodes it replaces.
        let changing = store.clone()
        var dirty = committed
        for _ in 0..<300 {
            let e = model.entries[Int(rng.next() % UInt64(model.entries.count))]
            #expect(try dirty.remove(e, sink: changing) == model.remove(e))
            let f = indexEntry(rng.next() % 100_000, prefix: values[Int(rng.next() % 3)])
            if model.insert(f) { #expect(try dirty.insert(f, sink: changing)) }
        }
        var probes: [[UInt8]] = [[], Array("c".utf8), Array("city-".utf8), Array("city-1".utf8), Array("city-9".utf8)]
        for v in values { probes.append(v); probes.append(v + [0]); probes.append(v + [0, 0, 0]) }
        for _ in 0..<50 { probes.append(model.entries[Int(rng.next() % UInt64(model.entries.count))].dropLast(Int(rng.next() % 9)).map { $0 }) }
        let before = SortedModel(entries: try scanAll(committed, store))
        for key in probes {
            for (tree, source, entries) in [(committed, store as NodeSource, before.entries), (committed, format8, before.entries),
                                            (dirty, changing, model.entries)] {
                let matching = entries.filter { $0.starts(with: key) }
                let tails = matching.map { Array($0.dropFirst(key.count)) }
                #expect(try scanTails(tree, key, source) == tails, "\(key)")
                #expect(try scanTails(tree, key, limit: 3, source) == Array(tails.prefix(3)), "\(key)")
            }
        }
    }

    /// The first 8 bytes of an entry (backlink trees search by them) come from the prefix, the suffix, or both.
    /// Leaves are encoded and decoded an entry at a time with word copies that may run past an entry: entries
    /// of every length from empty to past 32 bytes, behind shared prefixes shorter and longer than 32 bytes,
    /// read back whole after the encoding, after decoding and changing the committed leaves, and again.
    @Test(arguments: [0, 7, 31, 32, 33, 45])
    func entriesOfEveryLengthSurviveEncodingAndDecoding(shared: Int) throws {
        var rng = SplitMix64(seed: 0x5EED + UInt64(shared))
        let prefix = (0..<shared).map { UInt8(truncatingIfNeeded: 0x41 + $0 % 26) }
        let store = FakeStore()
        var tree = EntryTree(root: 0)
        var model = SortedModel(entries: [])
        func add(_ n: Int) throws {
            for _ in 0..<n {
                let length = Int(rng.next() % 70)
                let e = prefix + (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if model.insert(e) { #expect(try tree.insert(e, sink: store)) }
            }
        }
        try add(400)
        var root = try tree.commit(sink: store)
        #expect(try scanAll(EntryTree(root: root), store) == model.entries)
        // Each change decodes a committed leaf and encodes it again.
        for _ in 0..<3 {
            tree = EntryTree(root: root)
            try add(150)
            root = try tree.commit(sink: store)
            #expect(try scanAll(EntryTree(root: root), store) == model.entries)
        }
        _ = try EntryTree(root: root).checkInvariants(source: store)
    }

    @Test(arguments: [0, 3, 8, 11])
    func leadingKeysJoinPrefixAndSuffix(shared: Int) throws {
        let store = FakeStore()
        let head = [UInt8](repeating: 0x5A, count: shared)
        let entries = (0..<40).map { i -> [UInt8] in
            let e = head + [UInt8(i)] + (0..<15).map { UInt8(truncatingIfNeeded: i &* 7 &+ $0 &* 13) }
            return e
        }
        let (_, root) = try leaf(entries, store)
        let view = try EntryNodeView(ref: root, level: 0, source: store)
        #expect(view.prefixLength == shared)
        for (i, e) in entries.enumerated() {
            let expected = e.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(try view.leadingKey(i) == expected)
        }
    }

    /// A damaged prefix length or offset is a `corrupt` error from every read of the leaf, never a crash or an
    /// entry read from outside the node.
    @Test func damageToAPrefixLeafIsAnError() throws {
        let pristine = FakeStore()
        let entries = (0..<200).map { indexEntry(UInt64(1_000_000 + $0)) }
        let (_, root) = try leaf(entries, pristine)
        let m = Int(pristine.bytes(root).u32(at: 16))
        let length = pristine.bytes(root).count
        // The prefix length (bytes 24..<28), the first, a middle and the last offset.
        for (at, xor) in [(24, UInt8(0x40)), (25, 0x01), (26, 0x80), (27, 0x01), (28, 0x01),
                          (28 + m, 0x10), (28 + 2 * m, 0x01), (29 + 2 * m, 0x01)] {
            let store = pristine.clone()
            store.hostile = true
            store.damage(root, at: at, xor: xor, reseal: true)
            let tree = EntryTree(root: root)
            let context = "byte \(at) of \(length), xor \(xor)"
            #expect(throws: StorageError.self, "\(context)") { _ = try tree.checkInvariants(source: store) }
            // Reads either fail or give back entries that are not the stored ones: the checks say which.
            do {
                let read = try scanAll(tree, store)
                #expect(read != entries, "\(context): damage went unnoticed by a scan")
            } catch is StorageError {}
            do {
                let tails = try scanTails(tree, Array("user:".utf8), store)
                #expect(tails != entries.map { Array($0.dropFirst(5)) }, "\(context): damage went unnoticed by a tail scan")
            } catch is StorageError {}
        }
    }

    /// Leaves of format 8 (whole entries) and prefix leaves answer alike, and a format-8 leaf that changes is
    /// written as a prefix leaf.
    @Test func format8LeavesReadAndAreRewrittenAsPrefixLeaves() throws {
        let store = FakeStore()
        // Format 8's limits: at most 256 entries a leaf, one page of whole entries.
        var tree = EntryTree(root: 0, limits: EntryTree.Limits(maxNodeBytes: 4096, maxEntries: 256))
        let entries = (0..<3000).map { indexEntry(UInt64($0) * 7919) }
        for e in entries { #expect(try tree.insert(e, sink: store)) }
        let root = try tree.commit(sink: store)
        try store.rewriteLeavesInFormat8(root)
        var old = EntryTree(root: root)
        #expect(try old.checkInvariants(source: store) == entries.count)
        #expect(try scanAll(old, store) == entries.sorted { compareBytes($0, $1) < 0 })
        #expect(try old.contains(indexEntry(7919 * 17), source: store))
        #expect(try old.insert(indexEntry(5), sink: store))
        let changed = try old.commit(sink: store)
        var flags: [UInt8: Int] = [:]
        var stack = [changed]
        while let ref = stack.popLast() {
            let b = store.bytes(ref)
            if b.u32(at: 20) == 0 { flags[b[1], default: 0] += 1; continue }
            let count = Int(b.u32(at: 16)), refs = b.count - 8 * count
            for i in 0..<count { stack.append(b.u64(at: refs + 8 * i)) }
        }
        #expect(flags[EntryTree.prefixLeafFlag] == 1, "\(flags)")
        #expect((flags[0] ?? 0) >= 1)
        #expect(try EntryTree(root: changed).checkInvariants(source: store) == entries.count + 1)
    }
}
