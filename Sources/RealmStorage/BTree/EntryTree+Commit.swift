/// Commit, verification and ref collection.
extension EntryTree {
    /// Writes every dirty node (children before parents) and returns the new root ref (0 when empty).
    /// After commit the tree is clean again with that root.
    mutating func commit(sink: NodeSink) throws -> UInt64 {
        guard let root else {
            hasChanges = false
            return 0
        }
        let ref = try write(root, sink: sink)
        self.root = .clean(ref)
        hasChanges = false
        return ref
    }

    private func write(_ child: Child, sink: NodeSink) throws -> UInt64 {
        switch child {
        case .clean(let ref):
            return ref
        case .dirty(let node):
            return try write(node, sink: sink)
        }
    }

    /// Writes a dirty node: its dirty children first (a small commit changes one child of a node of
    /// hundreds, so only those are visited and settled), then the node itself.
    private func write(_ node: EntryTreeNode, sink: NodeSink) throws -> UInt64 {
        if !node.isLeaf {
            try node.settleDirtyChildren { try write($0, sink: sink) }
        }
        let ref = try sink.write(EntryTree.encode(node, reusing: sink.nodeBuffer(), prefixLeaf: limits.prefixLeaves))
        sink.wroteIndexNode(node, ref: ref)
        return ref
    }

    /// The storage a new index node's array is given: a node of the standard limits fits, so a recycled array
    /// fits any later one (DECISIONS 64).
    static let nodeBufferCapacity = Limits.standard.maxNodeBytes

    /// The finished bytes of a node whose children are all committed (see docs/FILE_FORMAT.md, "Index nodes"):
    /// its exact size is known, so the bytes are stored straight into a new array, or into `buffer`'s storage
    /// when it has room (a recycled node buffer, `NodeSink.nodeBuffer`).
    /// `prefixLeaf: false` writes a leaf in the form of format 8 (`Limits.format5`, and tests of reading it).
    static func encode(_ node: EntryTreeNode, reusing buffer: consuming [UInt8] = [], prefixLeaf: Bool = true) -> [UInt8] {
        let shared = node.sharedPrefix
        if node.isLeaf, prefixLeaf, EntryTree.isPrefixLeaf(count: node.count, entryBytes: node.entryBytes, shared: shared) {
            return encodePrefixLeaf(node, shared: shared, reusing: buffer)
        }
        let size = node.isLeaf ? EntryTree.fixedSize + 4 * (node.count + 1) + node.entryBytes : node.encodedSize
        let areaStart = nodeHeaderSize + 8
        let areaEnd = areaStart + 4 * (node.count + 1) + node.entryBytes
        precondition(size == (node.isLeaf ? areaEnd : (areaEnd + 7) / 8 * 8 + 8 * node.count), "index node size")
        func fill(_ raw: UnsafeMutableRawPointer) {
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: nodeHeaderSize)
            raw.storeBytes(of: UInt32(node.count).littleEndian, toByteOffset: nodeHeaderSize, as: UInt32.self)
            raw.storeBytes(of: UInt32(node.level).littleEndian, toByteOffset: nodeHeaderSize + 4, as: UInt32.self)
            node.writeEntryArea(to: raw + areaStart)
            if !node.isLeaf {
                let refsStart = (areaEnd + 7) / 8 * 8
                (raw + areaEnd).initializeMemory(as: UInt8.self, repeating: 0, count: refsStart - areaEnd)
                node.writeChildRefs(to: raw + refsStart)
            }
        }
        // A new array gets room for the largest index node, so that, recycled, it fits whichever comes next.
        var bytes = [UInt8].filled(count: size, reusing: consume buffer, minimumCapacity: EntryTree.nodeBufferCapacity) {
            fill($0.baseAddress!)
        }
        sealNode(&bytes, type: node.isLeaf ? .indexLeaf : .indexInner)
        return bytes
    }

    /// A leaf as a prefix leaf: the bytes its entries share stored once, then what follows them in each.
    private static func encodePrefixLeaf(_ node: EntryTreeNode, shared: Int, reusing buffer: consuming [UInt8]) -> [UInt8] {
        let size = EntryTree.encodedSize(count: node.count, entryBytes: node.entryBytes, inner: false, shared: shared)
        var bytes = [UInt8].filled(count: size, reusing: consume buffer, minimumCapacity: EntryTree.nodeBufferCapacity) {
            let raw = $0.baseAddress!
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: nodeHeaderSize)
            raw.storeBytes(of: EntryTree.prefixLeafFlag, toByteOffset: 1, as: UInt8.self)
            raw.storeBytes(of: UInt32(node.count).littleEndian, toByteOffset: nodeHeaderSize, as: UInt32.self)
            raw.storeBytes(of: UInt32(0), toByteOffset: nodeHeaderSize + 4, as: UInt32.self)
            raw.storeBytes(of: UInt32(shared).littleEndian, toByteOffset: nodeHeaderSize + 8, as: UInt32.self)
            node.writePrefixLeafArea(to: raw + EntryTree.prefixLeafFixedSize, shared: shared)
        }
        sealNode(&bytes, type: .indexLeaf)
        return bytes
    }

    // MARK: Verification

    /// Walks the whole tree (clean and dirty parts) and checks: order strictly increasing across the whole
    /// tree, inner entries equal to their child's first entry, levels consistent, node sizes within limits.
    /// Throws StorageError.corrupt with a precise location on failure. Returns the entry count.
    func checkInvariants(source: NodeSource) throws -> Int {
        guard let root else { return 0 }
        var walk = CheckWalk(tree: self, source: source)
        try walk.check(root, level: nil, firstEntry: nil, path: [])
        return walk.entryCount
    }

    /// Every ref reachable from the tree's committed parts: after `commit`, every node of the tree. (While the
    /// tree is dirty, the committed subtrees still referenced by dirty nodes; freed nodes are not included.)
    func collectRefs(source: NodeSource, into refs: inout [UInt64]) throws {
        guard let root else { return }
        try collect(root, level: nil, source: source, into: &refs)
    }

    private func collect(_ child: Child, level: Int?, source: NodeSource, into refs: inout [UInt64]) throws {
        switch child {
        case .clean(let ref):
            refs.append(ref)
            let view = try EntryNodeView(ref: ref, level: level, source: source)
            if view.isLeaf { return }
            for i in 0..<view.count { try collect(.clean(view.child(i)), level: view.level - 1, source: source, into: &refs) }
        case .dirty(let node):
            for c in node.children { try collect(c, level: node.level - 1, source: source, into: &refs) }
        }
    }
}

/// State of one `checkInvariants` walk.
private struct CheckWalk {
    let tree: EntryTree
    let source: NodeSource
    var entryCount = 0
    /// The last entry of the previous leaf, for the order check across leaves.
    var previous: [UInt8]? = nil
    var seen = Set<UInt64>()

    init(tree: EntryTree, source: NodeSource) {
        self.tree = tree
        self.source = source
    }

    func where_(_ path: [Int]) -> String { path.isEmpty ? "root" : "child path " + path.map(String.init).joined(separator: "/") }

    func fail(_ child: EntryTree.Child, _ path: [Int], _ level: Int, _ reason: String) -> StorageError {
        let at = "(level \(level), \(where_(path)))"
        switch child {
        case .clean(let ref):
            return source.corrupt(ref, "index \(at): \(reason)")
        case .dirty:
            return .corrupt(path: source.displayPath, location: "uncommitted index node \(at)", reason: reason)
        }
    }

    /// Checks a subtree. `level` is what the parent implies, `firstEntry` the parent's entry for it.
    mutating func check(_ child: EntryTree.Child, level: Int?, firstEntry: [UInt8]?, path: [Int]) throws {
        switch child {
        case .clean(let ref):
            if !seen.insert(ref).inserted {
                throw source.corrupt(ref, "index node reached twice (\(where_(path)))")
            }
            let view = try EntryNodeView(ref: ref, level: level, source: source)
            try view.validateAll()
            let lvl = view.level
            try checkShape(child, path, lvl, count: view.count, size: view.layoutSize(entryBytes: view.areaLength()),
                           actualSize: view.bytes.count)
            if let firstEntry, try firstEntry.withUnsafeBytes({ f in try view.withEntry(0) { compareEntries($0, f) } }) != 0 {
                throw fail(child, path, lvl, "first entry differs from the parent's entry for it")
            }
            for i in 1..<view.count {
                if try view.withEntry(i - 1, { a in try view.withEntry(i) { compareEntries(a, $0) } }) >= 0 {
                    throw fail(child, path, lvl, "entry \(i) is not greater than entry \(i - 1)")
                }
            }
            if view.isLeaf {
                try leafDone(child, path, first: view.withEntry(0) { Array($0) }, last: view.withEntry(view.count - 1) { Array($0) },
                             count: view.count)
            } else {
                for i in 0..<view.count {
                    try check(.clean(view.child(i)), level: lvl - 1, firstEntry: Array(view.entry(i)), path: path + [i])
                }
            }
        case .dirty(let node):
            let lvl = node.level
            if let level, lvl != level { throw fail(child, path, lvl, "level differs from the \(level) its parent implies") }
            guard node.count >= 1 else { throw fail(child, path, lvl, "node has no entries") }
            guard node.children.count == (node.isLeaf ? 0 : node.count) else {
                throw fail(child, path, lvl, "\(node.children.count) children for \(node.count) entries")
            }
            guard node.entryBytes == (0..<node.count).reduce(0, { $0 + node.entry($1).count }) else {
                throw fail(child, path, lvl, "cached entry byte count is stale")
            }
            try checkShape(child, path, lvl, count: node.count, size: node.encodedSize, actualSize: nil)
            if let firstEntry, firstEntry.withUnsafeBytes({ compareEntries(node.entry(0), $0) }) != 0 {
                throw fail(child, path, lvl, "first entry differs from the parent's entry for it")
            }
            for i in 1..<node.count where compareEntries(node.entry(i - 1), node.entry(i)) >= 0 {
                throw fail(child, path, lvl, "entry \(i) is not greater than entry \(i - 1)")
            }
            if node.isLeaf {
                try leafDone(child, path, first: node.entryArray(0), last: node.entryArray(node.count - 1), count: node.count)
            } else {
                for i in 0..<node.count {
                    try check(node.children[i], level: lvl - 1, firstEntry: node.entryArray(i), path: path + [i])
                }
            }
        }
    }

    /// `size`: the byte length the node's layout implies.
    private func checkShape(_ child: EntryTree.Child, _ path: [Int], _ lvl: Int, count: Int, size: Int, actualSize: Int?) throws {
        if let actualSize, actualSize != size {
            throw fail(child, path, lvl, "node is \(actualSize) bytes, its layout \(size)")
        }
        guard count <= tree.limits.acceptedEntries else {
            throw fail(child, path, lvl, "\(count) entries exceed the limit of \(tree.limits.acceptedEntries)")
        }
        guard size <= tree.limits.acceptedNodeBytes else {
            throw fail(child, path, lvl, "\(size) bytes exceed the limit of \(tree.limits.acceptedNodeBytes)")
        }
    }

    private mutating func leafDone(_ child: EntryTree.Child, _ path: [Int], first: [UInt8], last: [UInt8], count: Int) throws {
        if let previous, compareBytes(previous, first) >= 0 {
            throw fail(child, path, 0, "first entry is not greater than the previous leaf's last entry")
        }
        previous = last
        entryCount += count
    }
}

/// `compareEntries` on arrays.
func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareEntries(pa, pb) } }
}
