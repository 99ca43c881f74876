/// How one side of a diff reads a compared column of one leaf.
enum DiffColumn {
    /// Read in place: a committed cluster's column, or a dirty leaf's column that is still lazy.
    case reader(ColumnReader)
    /// A dirty leaf's decoded values.
    case values([Value])
    /// The leaf has no column for the property (it predates it): every row holds the default.
    case absent(Value)
}

/// One property compared by a diff: the same column ID in the older and in the newer version.
struct DiffColumnPair {
    let older: PropertyInfo
    let newer: PropertyInfo
}

/// A leaf opened by a diff cursor, with its compared columns resolved once.
struct DiffLeaf {
    let access: LeafAccess
    /// The committed node (nil for a dirty leaf).
    let ref: UInt64?
    let columns: [DiffColumn]
    /// The readers of `columns` (nil where a column is not read in place): plain values, cheap to copy per row.
    let readers: [ColumnReader?]
    var count: Int { access.count }

    init(access: LeafAccess, ref: UInt64?, columns: [DiffColumn]) {
        self.access = access
        self.ref = ref
        self.columns = columns
        readers = columns.map { if case .reader(let r) = $0 { return r } else { return nil } }
    }
}

/// Walks one table tree in key order for a diff, reading a node only when it is expanded or opened.
///
/// The tree may mix committed and dirty nodes (a write transaction's own tree). Items are kept on a stack,
/// the next one last; an inner node is replaced by its children when expanded.
struct DiffCursor {
    struct Item {
        var child: TreeChild
        /// 0 for a leaf; the height of the subtree otherwise.
        var level: Int
        var leaf: DiffLeaf?
        /// The next row of an opened leaf.
        var row = 0

        /// The committed ref while nothing of the subtree has been consumed: equal refs are equal subtrees.
        var untouchedRef: UInt64? {
            if row == 0, case .clean(let r) = child { return r }
            return nil
        }
    }

    let source: Snapshot
    /// The side's compared properties, parallel to the differ's column pairs.
    let properties: [PropertyInfo]
    private(set) var stack: [Item] = []
    /// Table nodes read so far (inner nodes and clusters).
    private(set) var nodesRead = 0

    init(source: Snapshot, root: TreeChild, properties: [PropertyInfo]) throws {
        self.source = source
        self.properties = properties
        switch root {
        case .clean(0): return
        case .clean(let ref):
            let node = try source.node(ref, expected: nil)
            nodesRead += 1
            if TableTree.isLeafNode(node) {
                stack = [Item(child: root, level: 0)]
                try openTop(node: node)
            } else {
                let v = try innerView(node, ref)
                stack = [Item(child: root, level: v.level)]
                try expandTop(view: v)
            }
        case .leaf:
            stack = [Item(child: root, level: 0)]
        case .inner(let n):
            stack = [Item(child: root, level: n.level)]
        }
    }

    var top: Item? { stack.last }

    mutating func pop() { stack.removeLast() }

    mutating func setTopRow(_ row: Int) { stack[stack.count - 1].row = row }

    private func innerView(_ node: UnsafeRawBufferPointer, _ ref: UInt64) throws -> InnerView {
        guard node[0] == NodeType.tableInner.rawValue else { throw source.corrupt(ref, "expected a table node, found type \(node[0])") }
        return try InnerView(node: node, ref: ref, source: source)
    }

    /// Replaces the top item, an inner node, by its children.
    mutating func expandTop(view: InnerView? = nil) throws {
        let item = stack.removeLast()
        precondition(item.level > 0, "a leaf is opened, not expanded")
        switch item.child {
        case .clean(let ref):
            let v: InnerView
            if let view { v = view } else {
                let node = try source.node(ref, expected: nil)
                nodesRead += 1
                if TableTree.isLeafNode(node) { throw source.corrupt(ref, "a cluster where its parent has level \(item.level + 1)") }
                v = try innerView(node, ref)
            }
            guard v.level == item.level else { throw source.corrupt(ref, "inner node of level \(v.level) where \(item.level) was expected") }
            for i in stride(from: v.count - 1, through: 0, by: -1) {
                stack.append(Item(child: .clean(v.ref(i)), level: item.level - 1))
            }
        case .inner(let n):
            for c in n.children.reversed() { stack.append(Item(child: c, level: n.level - 1)) }
        case .leaf:
            preconditionFailure("a dirty leaf has level 0")
        }
    }

    /// Opens the top item, a leaf, if it is not open yet. Pops it and returns false when it is empty.
    @discardableResult
    mutating func openTop(node: UnsafeRawBufferPointer? = nil) throws -> Bool {
        let i = stack.count - 1
        if stack[i].leaf == nil {
            switch stack[i].child {
            case .clean(let ref):
                let n: UnsafeRawBufferPointer
                if let node { n = node } else {
                    n = try source.node(ref, expected: nil)
                    nodesRead += 1
                }
                guard TableTree.isLeafNode(n) else { throw source.corrupt(ref, "expected a cluster, found node type \(n[0])") }
                let v = try ClusterView(node: n, ref: ref, source: source)
                let columns = try properties.map { p -> DiffColumn in
                    try v.reader(for: p, source: source).map(DiffColumn.reader) ?? .absent(p.defaultValue)
                }
                stack[i].leaf = DiffLeaf(access: .clean(v), ref: ref, columns: columns)
            case .leaf(let l):
                let columns = try properties.map { p -> DiffColumn in
                    if let r = l.lazyReader(p.columnID) { return .reader(r) }
                    // Not lazy: already decoded (so this does not materialise anything), or absent.
                    if let vs = try l.column(p.columnID) { return .values(vs) }
                    return .absent(p.defaultValue)
                }
                stack[i].leaf = DiffLeaf(access: .dirty(l), ref: nil, columns: columns)
            case .inner:
                preconditionFailure("an inner node is expanded, not opened")
            }
        }
        if stack[i].row >= stack[i].leaf!.count {
            stack.removeLast()
            return false
        }
        return true
    }

    /// Hands every remaining key to `body`, in order, and empties the cursor.
    mutating func drain(_ body: (UInt64) -> Void) throws {
        while let item = top {
            if item.level > 0 { try expandTop(); continue }
            guard try openTop() else { continue }
            let t = stack[stack.count - 1]
            let leaf = t.leaf!
            for r in t.row..<leaf.count { body(leaf.access.key(at: r)) }
            pop()
        }
    }
}

/// The difference between two versions of one table tree: keys only in the older tree, keys only in the newer
/// one, and keys in both whose compared columns differ.
///
/// The two trees are walked together in key order. A subtree whose committed ref is the same on both sides at
/// the same point of the walk is skipped unread: nodes are copy-on-write and a ref is never reused while
/// either version is held, so the same ref is the same content. Otherwise the taller side is expanded, and two
/// leaves are merged row by row by object key. Leaf boundaries need not match on the two sides.
struct TableDiffer {
    var older: DiffCursor
    var newer: DiffCursor
    let pairs: [DiffColumnPair]
    private(set) var inserted: [UInt64] = []
    private(set) var deleted: [UInt64] = []
    /// Keys in both versions whose stored values differ, ascending, each with the position in `columnSets` of
    /// the indexes into `pairs` of its differing columns (few distinct sets: each is stored once and shared).
    private(set) var modifiedKeys: [UInt64] = []
    private(set) var modifiedSets: [Int] = []
    private(set) var columnSets: [[Int]] = []
    private var setPositions: [[Int]: Int] = [:]
    private var scratch: [Int] = []
    private(set) var blobsRead = 0
    private(set) var subtreesSkipped = 0

    var nodesRead: Int { older.nodesRead + newer.nodesRead + blobsRead }

    init(older: DiffCursor, newer: DiffCursor, pairs: [DiffColumnPair]) {
        self.older = older
        self.newer = newer
        self.pairs = pairs
    }

    mutating func run() throws {
        while true {
            guard let a = older.top else {
                try newer.drain { inserted.append($0) }
                return
            }
            guard let b = newer.top else {
                try older.drain { deleted.append($0) }
                return
            }
            if let ra = a.untouchedRef, ra == b.untouchedRef {
                older.pop()
                newer.pop()
                subtreesSkipped += 1
                continue
            }
            if a.level > 0 || b.level > 0 {
                if a.level >= b.level { try older.expandTop() }
                if b.level >= a.level { try newer.expandTop() }
                continue
            }
            guard try older.openTop() else { continue }
            guard try newer.openTop() else { continue }
            try mergeLeaves()
        }
    }

    /// Merges the two open leaves on top of the cursors by key until one of them is used up.
    private mutating func mergeLeaves() throws {
        let a = older.top!, b = newer.top!
        let la = a.leaf!, lb = b.leaf!
        var ra = a.row, rb = b.row
        // The same committed leaf at the same row: the rows are the same bytes.
        let sameNode = la.ref != nil && la.ref == lb.ref && ra == rb
        // Two whole committed leaves with the same keys: a column whose block is byte-for-byte the same (the
        // common case: a commit copies unchanged columns as raw bytes) needs no row comparisons.
        var skip: [Bool]?
        if !sameNode, ra == 0, rb == 0, case .clean(let va) = la.access, case .clean(let vb) = lb.access,
           va.count == vb.count, (0..<va.count).allSatisfy({ va.key(at: $0) == vb.key(at: $0) }) {
            skip = pairs.map { TableDiffer.sameBlock(va, vb, $0.newer.columnID) }
        }
        while ra < la.count && rb < lb.count {
            let ka = la.access.key(at: ra), kb = lb.access.key(at: rb)
            if ka < kb {
                deleted.append(ka)
                ra += 1
            } else if kb < ka {
                inserted.append(kb)
                rb += 1
            } else {
                if !sameNode { try compareRow(ka, la, ra, lb, rb, skip: skip) }
                ra += 1
                rb += 1
            }
        }
        if ra >= la.count { older.pop() } else { older.setTopRow(ra) }
        if rb >= lb.count { newer.pop() } else { newer.setTopRow(rb) }
    }

    private mutating func compareRow(_ key: UInt64, _ la: DiffLeaf, _ ra: Int, _ lb: DiffLeaf, _ rb: Int, skip: [Bool]?) throws {
        scratch.removeAll(keepingCapacity: true)
        for j in pairs.indices where skip?[j] != true {
            if try !storedEqual(la, j, ra, older.source, lb, rb, newer.source) {
                scratch.append(j)
            }
        }
        guard !scratch.isEmpty else { return }
        let position: Int
        if let p = setPositions[scratch] { position = p } else {
            position = columnSets.count
            columnSets.append(scratch)
            setPositions[scratch] = position
        }
        modifiedKeys.append(key)
        modifiedSets.append(position)
    }

    static func sameBlock(_ a: ClusterView, _ b: ClusterView, _ columnID: UInt32) -> Bool {
        let ea = a.columnEntry(columnID), eb = b.columnEntry(columnID)
        guard let ea, let eb else { return ea == nil && eb == nil }
        guard ea.length == eb.length, ea.encoding == eb.encoding,
              ea.offset + ea.length <= a.node.count, eb.offset + eb.length <= b.node.count else { return false }
        return bytesEqual(UnsafeRawBufferPointer(rebasing: a.node[ea.offset..<ea.offset + ea.length]),
                          UnsafeRawBufferPointer(rebasing: b.node[eb.offset..<eb.offset + eb.length]))
    }

    /// Whether two rows store the same value: compared in place where both are read from clusters (an
    /// out-of-line value by its blob ref first, then by its bytes), otherwise as values stored identically.
    private mutating func storedEqual(_ la: DiffLeaf, _ j: Int, _ ra: Int, _ sa: Snapshot,
                                      _ lb: DiffLeaf, _ rb: Int, _ sb: Snapshot) throws -> Bool {
        if let x = la.readers[j], let y = lb.readers[j], x.encoding == y.encoding {
            let xn = x.isNull(ra), yn = y.isNull(rb)
            if xn || yn { return xn == yn }
            switch x.encoding {
            case .int:
                return x.int(at: ra) == y.int(at: rb)
            case .bytes:
                switch (x.blobReference(at: ra), y.blobReference(at: rb)) {
                case (nil, nil):
                    return x.withBytes(at: ra, { p in y.withBytes(at: rb, { q in bytesEqual(p, q) }) ?? false }) ?? false
                case (let p?, let q?):
                    if p.ref == q.ref { return true }
                    if p.length != q.length { return false }
                    let na = try sa.node(p.ref, expected: .blob), nb = try sb.node(q.ref, expected: .blob)
                    blobsRead += 2
                    guard UInt64(na.count - nodeHeaderSize) == p.length else { throw sa.corrupt(p.ref, "blob length \(na.count - nodeHeaderSize), expected \(p.length)") }
                    guard UInt64(nb.count - nodeHeaderSize) == q.length else { throw sb.corrupt(q.ref, "blob length \(nb.count - nodeHeaderSize), expected \(q.length)") }
                    return bytesEqual(UnsafeRawBufferPointer(rebasing: na[nodeHeaderSize...]),
                                      UnsafeRawBufferPointer(rebasing: nb[nodeHeaderSize...]))
                default:
                    return false  // inline values are at most the inline limit, out-of-line ones longer
                }
            default:
                break
            }
        }
        return try value(la.columns[j], ra, la.ref, sa).isStoredIdentically(to: value(lb.columns[j], rb, lb.ref, sb))
    }

    private func value(_ c: DiffColumn, _ row: Int, _ ref: UInt64?, _ source: Snapshot) throws -> Value {
        switch c {
        case .reader(let r): return try source.value(r, at: row, node: ref ?? 0)
        case .values(let vs): return vs[row]
        case .absent(let d): return d
        }
    }
}
