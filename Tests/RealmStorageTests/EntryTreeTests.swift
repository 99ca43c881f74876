import Testing
@testable import RealmStorage

@Suite struct EntryTreeTests {
    static let small = EntryTree.Limits(maxNodeBytes: 512, maxEntries: 12)

    @Test func emptyTree() throws {
        let store = FakeStore()
        var tree = EntryTree(root: 0)
        #expect(!tree.isDirty)
        #expect(try tree.checkInvariants(source: store) == 0)
        #expect(try scanAll(tree, store).isEmpty)
        #expect(try !tree.contains([1, 2, 3], source: store))
        #expect(try !tree.remove([1], sink: store))
        var refs: [UInt64] = []
        try tree.collectRefs(source: store, into: &refs)
        #expect(refs.isEmpty)
        #expect(try tree.commit(sink: store) == 0)
        #expect(store.written.isEmpty)

        // The empty entry is a valid entry and sorts first.
        #expect(try tree.insert([], sink: store))
        #expect(try tree.insert([0], sink: store))
        #expect(try !tree.insert([], sink: store))
        #expect(try scanAll(tree, store) == [[], [0]])
        #expect(tree.isDirty)
        let root = try tree.commit(sink: store)
        #expect(root != 0 && !tree.isDirty)
        var reopened = EntryTree(root: root)
        #expect(try reopened.contains([], source: store))
        #expect(try reopened.remove([], sink: store))
        #expect(try reopened.remove([0], sink: store))
        #expect(reopened.isDirty)
        #expect(try reopened.commit(sink: store) == 0)
        expectPartition(live: [], store)
    }

    @Test func insertExistingChangesNothing() throws {
        let store = FakeStore()
        var tree = EntryTree(root: 0, limits: Self.small)
        for k in 0..<200 { _ = try tree.insert(indexEntry(UInt64(k)), sink: store) }
        let root = try tree.commit(sink: store)
        var reopened = EntryTree(root: root, limits: Self.small)
        #expect(try !reopened.insert(indexEntry(17), sink: store))
        #expect(try !reopened.remove(indexEntry(1000), sink: store))
        #expect(!reopened.isDirty)
        #expect(store.freed.isEmpty)
        #expect(try reopened.commit(sink: store) == root)
    }

    /// Random inserts and removes against a sorted-array model, in three phases (grow, shrink to nothing,
    /// grow again), committing at random points and reopening from the committed root.
    /// With `format8`, some commits leave the tree's leaves in the layout of format 8, so the tree mixes them
    /// with prefix leaves.
    @Test(arguments: [(UInt64(1), true, false), (UInt64(2), true, false), (UInt64(3), false, false),
                      (UInt64(4), true, true), (UInt64(5), false, true)])
    func randomOperationsMatchModel(seed: UInt64, smallNodes: Bool, format8: Bool) throws {
        let limits = smallNodes ? Self.small : .standard
        let maxLength = smallNodes ? 90 : 260
        var rng = SplitMix64(seed: seed)
        let store = FakeStore()
        var tree = EntryTree(root: 0, limits: limits)
        var model = SortedModel()
        var maxHeight = 0
        let phases: [(batches: Int, insertPercent: Int)] = [(30, 75), (40, 30), (15, 70)]
        for (phase, p) in phases.enumerated() {
            for batch in 0..<p.batches {
                for _ in 0..<(50 + rng.below(200)) {
                    if model.entries.isEmpty || rng.below(100) < p.insertPercent {
                        let e = !model.entries.isEmpty && rng.below(10) == 0
                            ? model.entries[rng.below(model.entries.count)] : randomEntry(&rng, maxLength: maxLength)
                        #expect(try tree.insert(e, sink: store) == model.insert(e))
                    } else {
                        let e = rng.below(4) == 0
                            ? randomEntry(&rng, maxLength: maxLength) : model.entries[rng.below(model.entries.count)]
                        #expect(try tree.remove(e, sink: store) == model.remove(e))
                    }
                }
                let context = "phase \(phase) batch \(batch)"
                #expect(try tree.checkInvariants(source: store) == model.entries.count, "\(context)")
                #expect(try scanAll(tree, store) == model.entries, "\(context)")
                for _ in 0..<20 {
                    let bound = rng.below(3) == 0 && !model.entries.isEmpty
                        ? model.entries[rng.below(model.entries.count)] : randomEntry(&rng, maxLength: maxLength)
                    let start = model.lowerBound(bound).0
                    let n = 1 + rng.below(40)
                    let expected = Array(model.entries[start..<min(start + n, model.entries.count)])
                    #expect(try scanAll(tree, from: bound, limit: n, store) == expected, "\(context)")
                    #expect(try tree.contains(bound, source: store) == model.lowerBound(bound).1, "\(context)")
                    let prefix = Array(bound.prefix(rng.below(bound.count + 1)))
                    let matching = model.entries[model.lowerBound(prefix).0...].prefix { $0.starts(with: prefix) }
                    #expect(try scanPrefix(tree, prefix, limit: n, store) == Array(matching.prefix(n)), "\(context)")
                }
                if rng.below(3) == 0 {
                    let root = try tree.commit(sink: store)
                    #expect(!tree.isDirty)
                    #expect((root == 0) == model.entries.isEmpty)
                    if root != 0 { maxHeight = max(maxHeight, Int(store.bytes(root).u32(at: 20)) + 1) }
                    if format8, root != 0, rng.below(2) == 0 { try store.rewriteLeavesInFormat8(root) }
                    tree = EntryTree(root: root, limits: limits)
                    #expect(try tree.checkInvariants(source: store) == model.entries.count, "\(context) reopened")
                }
            }
            if phase == 1 {  // shrink to nothing
                for e in model.entries.shuffled(using: &rng) { #expect(try tree.remove(e, sink: store)) }
                model.entries.removeAll()
                #expect(try tree.checkInvariants(source: store) == 0)
                #expect(try tree.commit(sink: store) == 0)
                tree = EntryTree(root: 0, limits: limits)
            }
        }
        let root = try tree.commit(sink: store)
        tree = EntryTree(root: root, limits: limits)
        #expect(try scanAll(tree, store) == model.entries)
        if smallNodes { #expect(maxHeight >= 3) }

        var live: [UInt64] = []
        try tree.collectRefs(source: store, into: &live)
        expectPartition(live: live, store)
    }

    /// Sequential inserts (ascending and descending) fill nodes to the limit: with the standard limits (bound
    /// by bytes) and with small ones (bound by the entry count, and deep enough to fill inner levels too).
    @Test(arguments: [(true, false), (false, false), (true, true), (false, true)])
    func sequentialInsertsFillNodes(ascending: Bool, smallNodes: Bool) throws {
        let limits = smallNodes ? Self.small : .standard
        let store = FakeStore()
        var tree = EntryTree(root: 0, limits: limits)
        let n = 100_000
        var root: UInt64 = 0
        for i in 0..<n {
            let k = ascending ? UInt64(i) : UInt64(n - 1 - i)
            #expect(try tree.insert(indexEntry(k), sink: store))
            if i % 25_000 == 24_999 {
                root = try tree.commit(sink: store)
                tree = EntryTree(root: root, limits: limits)
            }
        }
        #expect(try tree.checkInvariants(source: store) == n)
        let stats = nodeStats(root, store)
        let entrySize = indexEntry(0).count
        for (level, s) in stats.sorted(by: { $0.key < $1.key }) where s.nodes > 1 {
            // Full: one more entry (an inner node's offset, bytes, child ref, padding; a leaf's 2-byte offset
            // and at most the whole entry) would pass a limit. At most one node per level (the one at the
            // growing end) may be partial.
            let extra = level > 0 ? entrySize + 4 + 8 + 7 : entrySize + 2
            let limit = limits.entryLimit(inner: level > 0)
            let full = s.shapes.filter { $0.count == limit || $0.size + extra > limits.maxNodeBytes }.count
            #expect(full >= s.nodes - 1, "level \(level): \(full) of \(s.nodes) nodes full")
        }
        let leaves = stats[0]!
        if smallNodes {
            #expect(leaves.nodes == (n + limits.maxLeafEntries - 1) / limits.maxLeafEntries)
        } else {
            // The entries of a leaf share their first 10 or 11 bytes, stored once: a page holds more than three
            // times the entries it would hold whole, and the pages are full.
            let whole = (limits.maxNodeBytes - 28) / (entrySize + 4)
            #expect(leaves.nodes * whole * 3 < n, "\(leaves.nodes) leaves")
            let fill = Double(leaves.bytes) / Double(leaves.nodes * limits.maxNodeBytes)
            #expect(fill > 0.95, "leaf fill \(fill)")
        }
        var live: [UInt64] = []
        try tree.collectRefs(source: store, into: &live)
        #expect(live.count == stats.values.reduce(0) { $0 + $1.nodes })
        expectPartition(live: live, store)
    }

    /// Nodes written under the limits of earlier builds (two pages, 512 entries) are valid, read, and split to
    /// one-page nodes where they are next changed; untouched ones stay as they were.
    @Test func nodesOfTheEarlierLimitsStayValidAndSplitWhenChanged() throws {
        let earlier = EntryTree.Limits(maxNodeBytes: 8192, maxEntries: 512)
        let store = FakeStore()
        var old = EntryTree(root: 0, limits: earlier)
        let n = 20_000
        // Keys spread over 64 bits and 16 bytes: the entries of a leaf share little but "user:", so even as a
        // prefix leaf a two-page leaf needs two pages.
        func entry(_ i: Int) -> [UInt8] {
            let k = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
            return indexEntry(k) + withUnsafeBytes(of: (k ^ 0xA5A5_5A5A_0F0F_F0F0).bigEndian) { Array($0) }
        }
        for i in 0..<n { #expect(try old.insert(entry(i), sink: store)) }
        let oldRoot = try old.commit(sink: store)
        // As the builds before prefix leaves wrote them.
        try store.rewriteLeavesInFormat8(oldRoot)
        let oldLeaves = nodeStats(oldRoot, store)[0]!
        #expect(oldLeaves.shapes.contains { $0.size > 4096 }, "the earlier limits make two-page leaves")

        var tree = EntryTree(root: oldRoot)
        #expect(try tree.checkInvariants(source: store) == n)
        // One insert in the middle of a two-page leaf: that leaf is split to fit the standard limits.
        var big: UInt64? = nil
        var stack = [oldRoot]
        while big == nil, let ref = stack.popLast() {
            let b = store.bytes(ref)
            if b.u32(at: 20) == 0 {
                if b.count > 4096 { big = ref }
                continue
            }
            let count = Int(b.u32(at: 16)), refs = b.count - 8 * count
            for i in 0..<count { stack.append(b.u64(at: refs + 8 * i)) }
        }
        let leaf = try EntryNodeView(ref: try #require(big), level: 0, source: store)
        let target = try leaf.withEntry(1) { Array($0) } + [0]
        #expect(try tree.insert(target, sink: store))
        let root = try tree.commit(sink: store)
        tree = EntryTree(root: root)
        #expect(try tree.checkInvariants(source: store) == n + 1)
        let leaves = nodeStats(root, store)[0]!
        #expect(leaves.nodes > oldLeaves.nodes)
        #expect(leaves.shapes.filter { $0.size > 4096 }.count == oldLeaves.shapes.filter { $0.size > 4096 }.count - 1)
        #expect(try scanAll(tree, store).count == n + 1)
    }

    /// Removing most entries merges underfull nodes and collapses the root.
    @Test func removalsMergeAndCollapse() throws {
        let store = FakeStore()
        var tree = EntryTree(root: 0, limits: Self.small)
        for k in 0..<3000 { _ = try tree.insert(indexEntry(UInt64(k)), sink: store) }
        var root = try tree.commit(sink: store)
        tree = EntryTree(root: root, limits: Self.small)
        let before = nodeStats(root, store)[0]!.nodes
        var rng = SplitMix64(seed: 9)
        var keep = SortedModel()
        for k in 0..<3000 {
            if rng.below(10) == 0 { _ = keep.insert(indexEntry(UInt64(k))) } else {
                #expect(try tree.remove(indexEntry(UInt64(k)), sink: store))
            }
        }
        #expect(try tree.checkInvariants(source: store) == keep.entries.count)
        root = try tree.commit(sink: store)
        let after = nodeStats(root, store)[0]!.nodes
        #expect(after * 4 < before, "leaves \(before) → \(after)")
        tree = EntryTree(root: root, limits: Self.small)
        #expect(try scanAll(tree, store) == keep.entries)
        for e in keep.entries.dropLast() { #expect(try tree.remove(e, sink: store)) }
        root = try tree.commit(sink: store)
        #expect(store.bytes(root).u32(at: 20) == 0, "a single entry left: the root is a leaf")
        tree = EntryTree(root: root, limits: Self.small)
        #expect(try scanAll(tree, store) == [keep.entries.last!])
    }

    /// `scan(prefix:)` finds runs of entries sharing a prefix wherever they start and end relative to leaf
    /// boundaries, in dirty and committed trees, and stops at the first entry without the prefix.
    /// (Standard limits: nodes large enough to start their search from an interpolated position.)
    @Test(arguments: [true, false])
    func prefixScanAcrossLeaves(smallNodes: Bool) throws {
        let store = FakeStore()
        let limits = smallNodes ? Self.small : .standard
        var tree = EntryTree(root: 0, limits: limits)
        var model = SortedModel()
        // Values 0..<40, each with 1 to 30 object keys (to 600 with standard limits): runs from a fraction of a
        // leaf to several leaves.
        var rng = SplitMix64(seed: 5)
        for v in 0..<40 {
            let value: [UInt8] = [0x02, UInt8(v), 0x00, 0x01]
            for k in 0..<(1 + rng.below(smallNodes ? 30 : 600)) {
                let e = indexEntry(UInt64(k * 7 + v), prefix: value)
                #expect(try tree.insert(e, sink: store))
                _ = model.insert(e)
            }
        }
        func check(_ context: String) throws {
            for v in -1...41 {
                let value: [UInt8] = v < 0 ? [0x01] : [0x02, UInt8(v), 0x00, 0x01]
                let expected = model.entries.filter { $0.starts(with: value) }
                #expect(try scanPrefix(tree, value, store) == expected, "\(context) value \(v)")
                #expect(try scanPrefix(tree, value, limit: 3, store) == Array(expected.prefix(3)), "\(context) value \(v)")
                // A prefix falling inside a run (keys are below 2^56, so no key starts with 0xFF) and one right
                // after it.
                #expect(try scanPrefix(tree, value + [0xFF], store).isEmpty, "\(context) value \(v)")
                #expect(try scanPrefix(tree, value + [0x00], store) == expected, "\(context) value \(v)")
            }
            #expect(try scanPrefix(tree, [0x02], store) == model.entries)
            #expect(try scanPrefix(tree, [], store) == model.entries)
            #expect(try scanPrefix(tree, [0x03], store).isEmpty)
        }
        try check("dirty")
        let root = try tree.commit(sink: store)
        if !smallNodes { #expect(store.bytes(root).u32(at: 20) >= 1) }
        tree = EntryTree(root: root, limits: limits)
        try check("committed")
        #expect(try tree.insert(indexEntry(1000, prefix: [0x02, 7, 0x00, 0x01]), sink: store))
        _ = model.insert(indexEntry(1000, prefix: [0x02, 7, 0x00, 0x01]))
        try check("partly dirty")
    }

    /// `scanEach` gives, for every key, exactly what `scan(tailsAfter:)` gives: keys matching nothing,
    /// one entry, runs that cross leaves, several keys in one leaf; on committed, dirty and partly dirty
    /// trees of small (deep) and standard nodes.
    @Test(arguments: [true, false])
    func stagedPrefixScansMatchOneByOne(smallNodes: Bool) throws {
        let store = FakeStore()
        let limits = smallNodes ? Self.small : .standard
        var tree = EntryTree(root: 0, limits: limits)
        var rng = SplitMix64(seed: 21)
        // Backlink-shaped entries: target ++ origin, 8 bytes each; targets 0..<400 with 0 to 40 origins.
        func key(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        for t in 0..<400 where rng.below(3) != 0 {
            for o in 0..<rng.below(rng.below(10) == 0 ? 400 : 6) {
                _ = try tree.insert(key(UInt64(t) * 1_000_003) + key(UInt64(o) * 31), sink: store)
            }
        }
        func check(_ context: String) throws {
            for trial in 0..<30 {
                let n = 1 + rng.below(60)
                let keys = (0..<n).map { _ in UInt64(rng.below(420)) * 1_000_003 }.sorted()
                var staged: [[[UInt8]]] = Array(repeating: [], count: n)
                var touched: UInt64 = 0
                try tree.scanEach(keys: keys, source: store, touched: &touched) { i, e in staged[i].append(Array(e)) }
                for (i, k) in keys.enumerated() {
                    let whole = try scanPrefix(tree, key(k), store)
                    #expect(staged[i] == whole.map { Array($0.dropFirst(8)) }, "\(context) trial \(trial) key \(i)")
                    #expect(staged[i] == (try scanTails(tree, key(k), store)), "\(context) trial \(trial) key \(i)")
                }
            }
        }
        try check("dirty")
        tree = EntryTree(root: try tree.commit(sink: store), limits: limits)
        try check("committed")
        _ = try tree.insert(key(5 * 1_000_003) + key(7), sink: store)
        try check("partly dirty")
    }

    /// The galloping lower bound used after interpolation is right from every start, and the interpolated
    /// start is always a valid index, whatever the bounds and key.
    @Test func gallopAndInterpolation() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<200 {
            var model = SortedModel()
            for _ in 0..<(1 + rng.below(40)) { _ = model.insert(randomEntry(&rng, maxLength: 12)) }
            let entries = model.entries
            for _ in 0..<10 {
                let key = rng.below(3) == 0 ? entries[rng.below(entries.count)] : randomEntry(&rng, maxLength: 12)
                let expected = model.lowerBound(key)
                for start in 0..<entries.count {
                    let got = gallopLowerBound(count: entries.count, from: start) { compareBytes(entries[$0], key) }
                    #expect(got.index == expected.0 && got.found == expected.1)
                }
                let low = randomEntry(&rng, maxLength: 12), high = randomEntry(&rng, maxLength: 12)
                let guess = low.withUnsafeBytes { l in high.withUnsafeBytes { h in key.withUnsafeBytes { k in
                    interpolate(k, low: l, high: h, count: entries.count)
                } } }
                #expect(guess >= 0 && guess < entries.count)
            }
        }
    }

    /// The last end offset is checked when the last entry is used (not on open): damage to it throws from
    /// `checkInvariants` always, and from every operation that reads the last entry or decodes the node. (An
    /// inner node's last offset moved within the zero padding before its refs still fits the layout, as it did
    /// when the offset was checked on open; `checkInvariants` then finds the entry differing from its child's.)
    @Test func damagedLastOffsetThrows() throws {
        let pristine = FakeStore()
        var tree = EntryTree(root: 0, limits: Self.small)
        for k in 0..<100 { _ = try tree.insert(indexEntry(UInt64(k)), sink: pristine) }
        let root = try tree.commit(sink: pristine)
        let rootBytes = pristine.bytes(root)
        let rootCount = Int(rootBytes.u32(at: 16))
        #expect(rootBytes.u32(at: 20) == 1)
        let firstLeaf = rootBytes.u64(at: rootBytes.count - 8 * rootCount)
        for ref in [root, firstLeaf] {
            for delta: UInt8 in [1, 4, 8, 0x80] {
                let store = pristine.clone()
                store.hostile = true
                let m = Int(store.bytes(ref).u32(at: 16))
                // A leaf is a prefix leaf: 2-byte offsets after the prefix length.
                store.damage(ref, at: ref == root ? 24 + 4 * m : 28 + 2 * m, xor: delta, reseal: true)
                let context = "\(ref == root ? "root" : "leaf"), xor \(delta)"
                var damaged = EntryTree(root: root, limits: Self.small)
                #expect(throws: StorageError.self, "\(context)") { _ = try damaged.checkInvariants(source: store) }
                if ref == firstLeaf {
                    #expect(throws: StorageError.self, "\(context)") { _ = try scanAll(damaged, store) }
                    #expect(throws: StorageError.self, "\(context)") { _ = try damaged.insert(indexEntry(0) + [0], sink: store) }
                } else if delta >= 8 {
                    // The search for the last entry ends at the root's last entry; an insert decodes the root.
                    #expect(throws: StorageError.self, "\(context)") { _ = try damaged.contains(indexEntry(99), source: store) }
                    #expect(throws: StorageError.self, "\(context)") { _ = try damaged.insert(indexEntry(50) + [0], sink: store) }
                } else {
                    _ = try? damaged.contains(indexEntry(99), source: store)
                    _ = try? damaged.insert(indexEntry(50) + [0], sink: store)
                }
            }
        }
    }

    /// Damaged nodes make every operation throw `StorageError.corrupt` (or, for damage that still forms a valid
    /// tree, succeed) and never crash or read out of bounds.
    @Test func corruptNodesThrow() throws {
        let pristine = FakeStore()
        var tree = EntryTree(root: 0, limits: Self.small)
        var rng = SplitMix64(seed: 77)
        for _ in 0..<600 { _ = try tree.insert(randomEntry(&rng, maxLength: 60), sink: pristine) }
        let root = try tree.commit(sink: pristine)
        var live: [UInt64] = []
        try tree.collectRefs(source: pristine, into: &live)
        #expect(live.count > 50)

        var structuralCaught = 0, structuralTrials = 0, thrown = 0
        for trial in 0..<400 {
            let store = pristine.clone()
            store.hostile = true
            let ref = live[rng.below(live.count)]
            let b = store.bytes(ref)
            let count = Int(b.u32(at: 16)), level = Int(b.u32(at: 20))
            let entryStart = 24 + 4 * (count + 1)
            let entryEnd = entryStart + Int(b.u32(at: 24 + 4 * count))
            let reseal = trial % 4 != 0
            // Aim half the trials at the structural fields: header, count, level, refs and padding.
            var offset: Int
            if rng.below(2) == 0 {
                let candidates = [0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23] + (level > 0 ? Array(entryEnd..<b.count) : [])
                offset = candidates[rng.below(candidates.count)]
            } else {
                offset = 24 + rng.below(b.count - 24)
            }
            if (8..<16).contains(offset) { offset = 0 }
            let structural = offset < 24 || (level > 0 && offset >= entryEnd)
            store.damage(ref, at: offset, xor: UInt8(1 + rng.below(255)), reseal: reseal)

            var failed = false
            func attempt(_ what: String, _ body: () throws -> Void) {
                do { try body() } catch let error as StorageError {
                    failed = true
                    guard case .corrupt(_, let location, _) = error else {
                        Issue.record("\(what): unexpected \(error)")
                        return
                    }
                    #expect(location.contains("node at page") || location.contains("index node"), "\(location)")
                } catch {
                    Issue.record("\(what): unexpected error \(error)")
                }
            }
            var damaged = EntryTree(root: root, limits: Self.small)
            var checkThrew = false
            attempt("check") {
                do { _ = try damaged.checkInvariants(source: store) } catch { checkThrew = true; throw error }
            }
            attempt("scan") { _ = try scanAll(damaged, store) }
            attempt("contains") { _ = try damaged.contains(randomEntry(&rng, maxLength: 60), source: store) }
            attempt("refs") { var r: [UInt64] = []; try damaged.collectRefs(source: store, into: &r) }
            attempt("mutate") {
                for _ in 0..<20 {
                    let e = randomEntry(&rng, maxLength: 60)
                    if rng.below(2) == 0 { _ = try damaged.insert(e, sink: store) } else { _ = try damaged.remove(e, sink: store) }
                }
                _ = try damaged.commit(sink: store)
            }
            if !reseal { #expect(checkThrew, "checksum damage at page \(ref) byte \(offset) went unnoticed") }
            if reseal && structural {
                structuralTrials += 1
                if checkThrew { structuralCaught += 1 }
                #expect(checkThrew, "structural damage at page \(ref) byte \(offset) (level \(level)) went unnoticed")
            }
            if failed { thrown += 1 }
        }
        #expect(structuralTrials > 50)
        #expect(structuralCaught == structuralTrials)
        #expect(thrown > 200)
    }
}
