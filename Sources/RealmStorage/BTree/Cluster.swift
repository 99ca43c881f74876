/// Largest number of objects in one cluster, and the encoded size past which a cluster is split at commit.
let clusterCapacity = 256
let clusterSplitBytes = 64 * 1024

extension PropertyInfo {
    /// The type the column codec stores for this property in a cluster: a list (or a backlink set, in
    /// files of format 1 and 2) is one serialized byte string (`ListCoding`), inline when short and a blob
    /// when long.
    var clusterColumnType: PropertyType { Self.clusterColumnType(type, flags) }
    var clusterColumnNullable: Bool { Self.clusterColumnNullable(type, flags) }

    // The same from the two stored fields, for loops over a class's properties: calling a getter on an array
    // element copies the whole description (its name retained and released) first, reading a stored field
    // does not (`callgrind`: four copies per property of every cluster a commit writes).
    static func hasColumn(_ type: PropertyType) -> Bool { type != .linkingObjects && type != .backlink }
    static func clusterColumnType(_ type: PropertyType, _ flags: Flags) -> PropertyType {
        !flags.isDisjoint(with: [.list, .set, .dictionary]) || type == .backlink ? .data : type
    }
    static func clusterColumnNullable(_ type: PropertyType, _ flags: Flags) -> Bool {
        !flags.isDisjoint(with: [.list, .set, .dictionary]) || type == .backlink ? false : (flags.contains(.optional) || type == .link || type == .mixed)
    }
}

/// A committed cluster read in place from the map.
struct ClusterView {
    let node: UnsafeRawBufferPointer
    let ref: UInt64
    let count: Int
    let keys: PackedIntsReader
    private let columnCount: Int

    init(node: UnsafeRawBufferPointer, ref: UInt64, source: NodeSource) throws {
        self.node = node
        self.ref = ref
        guard node.count >= 24 else { throw source.corrupt(ref, "cluster shorter than its header") }
        count = Int(node.u32(at: 16))
        columnCount = Int(node.u32(at: 20))
        let keysOffset = 24 + 16 * columnCount
        guard count <= 1 << 20, columnCount <= 1 << 16, keysOffset <= node.count else {
            throw source.corrupt(ref, "cluster header out of range (\(count) objects, \(columnCount) columns)")
        }
        do {
            keys = try PackedIntsReader(node, offset: (keysOffset + 7) & ~7, count: count)
        } catch {
            throw source.corrupt(ref, "cluster key array is malformed")
        }
    }

    @inline(__always) func key(at i: Int) -> UInt64 { UInt64(bitPattern: keys[i]) }

    /// The packed key array as stored (header first), to the end of the node.
    var keyArray: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: node[((24 + 16 * columnCount + 7) & ~7)...]) }

    /// Row of `key`. Keys are usually dense (assigned in order, few deletes), so the first guess is
    /// `key - firstKey`; otherwise binary search over the sorted keys.
    func row(of key: UInt64) -> Int? {
        guard count > 0 else { return nil }
        let first = self.key(at: 0)
        if key < first { return nil }
        let guess = key &- first
        if guess < UInt64(count), self.key(at: Int(guess)) == key { return Int(guess) }
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) >> 1
            let k = self.key(at: mid)
            if k == key { return mid }
            if k < key { lo = mid + 1 } else { hi = mid }
        }
        return nil
    }

    /// Directory entry of column `columnID`, if this cluster has it.
    func columnEntry(_ columnID: UInt32) -> (offset: Int, length: Int, encoding: UInt8)? {
        for i in 0..<columnCount {
            let e = 24 + 16 * i
            if node.u32(at: e) == columnID {
                return (Int(node.u32(at: e + 4)), Int(node.u32(at: e + 8)), node[e + 12])
            }
        }
        return nil
    }

    var columnIDs: [UInt32] { (0..<columnCount).map { node.u32(at: 24 + 16 * $0) } }

    /// A reader for the property's column, or nil when the cluster predates the property.
    /// `checkAllOffsets: false` for a reader used for one row: its bounds are checked when read instead of
    /// every row's at once (`perf`: checking 256 offsets per backlink lookup was a third of a link query).
    func reader(for p: PropertyInfo, source: NodeSource, checkAllOffsets: Bool = true) throws -> ColumnReader? {
        guard let e = columnEntry(p.columnID) else { return nil }
        guard let encoding = ColumnEncoding(rawValue: e.encoding), e.offset >= 0, e.offset + e.length <= node.count else {
            throw source.corrupt(ref, "column \(p.columnID) (\(p.name)) has a bad directory entry")
        }
        do {
            return try ColumnReader(node: node, offset: e.offset, length: e.length, count: count, encoding: encoding,
                                    type: p.clusterColumnType, linkStorage: .plusOne, checkAllOffsets: checkAllOffsets)
        } catch {
            throw source.corrupt(ref, "column \(p.columnID) (\(p.name)) is malformed")
        }
    }
}

extension ClusterView {
    func value(row: Int, property p: PropertyInfo, source: NodeSource) throws -> Value {
        guard let r = try reader(for: p, source: source, checkAllOffsets: false) else { return p.defaultValue }
        return try r.value(at: row, source: source, location: "row \(row) of \(p.name) in the cluster at page \(ref)")
    }
}

/// A cluster being changed by a write transaction, encoded once at commit.
///
/// Columns are kept in arrays parallel to `columnIDs`, normally in the class's property order, so that
/// inserting a row touches each column by position without hashing. A column decoded from the committed
/// cluster stays *lazy* — read in place from the old node — until something changes it; at commit an
/// unchanged lazy column is copied as raw bytes (its blobs stay where they are). The old node's pages were
/// freed by this transaction, so nothing can reuse them before it ends.
final class DirtyLeaf {
    var keys: [UInt64]
    var columnIDs: [UInt32] = []
    /// Materialised values; empty while the column is lazy.
    var columns: [[Value]] = []
    /// Readers over the old node for lazy columns (nil once materialised).
    var lazy: [ColumnReader?] = []
    /// The committed cluster the lazy columns read from.
    private var base: ClusterView?
    /// Loads blobs and frees them when a lazy column is materialised. Not `weak`: a weak reference gives the
    /// transaction a side table, and every retain of it then takes the slow path (`perf`: 14 % of updating
    /// every object). Safe unowned: a leaf with lazy columns never outlives its transaction (only fully
    /// decoded leaves are handed on, `DecodedLeaves`, and `reuse(sink:)` sets the next one).
    private unowned(unsafe) var sink: (any NodeSink)?
    /// The node this leaf was last encoded into whole, and its row count, while every change since has
    /// appended rows after those: the next encode extends that node's blocks instead of encoding every row
    /// again (DECISIONS 46). Any other change drops it.
    private var appendBase: (node: [UInt8], rows: Int)?
    /// `keys` are still those of `base`, the committed cluster this leaf was decoded from (no row inserted or
    /// removed since): a whole encode copies that cluster's key array as it is.
    private var keysFromBase = false

    init(keys: [UInt64] = []) {
        self.keys = keys
    }

    /// Position of column `id` in `columns`, if this leaf holds it.
    @inline(__always) func columnIndex(_ id: UInt32, hint: Int = -1) -> Int? {
        if hint >= 0, hint < columnIDs.count, columnIDs[hint] == id { return hint }
        return columnIDs.firstIndex(of: id)
    }

    /// The values of a column (materialising it), or nil when the leaf lacks it.
    func column(_ id: UInt32) throws -> [Value]? {
        guard let c = columnIndex(id) else { return nil }
        try materialize(c)
        return columns[c]
    }

    /// A reader over the old node for a still-lazy column.
    func lazyReader(_ id: UInt32) -> ColumnReader? { columnIndex(id).flatMap { lazy[$0] } }

    /// Adds a column filled with `fill` and returns its position.
    @discardableResult
    func addColumn(_ id: UInt32, fill: Value) -> Int {
        appendBase = nil
        columnIDs.append(id)
        columns.append(Array(repeating: fill, count: keys.count))
        lazy.append(nil)
        return columns.count - 1
    }

    /// Decodes a lazy column into values; its out-of-line values now live in Swift memory, so its blobs are freed.
    func materialize(_ c: Int) throws {
        guard let r = lazy[c] else { return }
        guard let sink else { preconditionFailure("a lazy column outlived its transaction") }
        var values: [Value] = []
        values.reserveCapacity(keys.count)
        if r.type == .int, !r.hasNulls, r.count == keys.count, let ints = r.packedInts {
            // Integers without nulls (what `updateAll` of a counter decodes): the packed array read straight.
            for i in 0..<keys.count { values.append(.int(ints[i])) }
        } else {
            for i in 0..<keys.count {
                values.append(try r.value(at: i, source: sink, location: "row \(i) of column \(columnIDs[c]) in the cluster at page \(base?.ref ?? 0)"))
            }
        }
        try r.forEachBlobRef { try sink.free($0) }
        columns[c] = values
        lazy[c] = nil
    }

    /// Drops the column `id` (its property was removed): the blobs a lazy column still reads from the
    /// committed node are freed with it (a materialized column's were freed when it was read).
    func dropColumn(_ id: UInt32) throws {
        guard let c = columnIndex(id) else { return }
        if let r = lazy[c] {
            guard let sink else { preconditionFailure("a lazy column outlived its transaction") }
            try r.forEachBlobRef { try sink.free($0) }
        }
        columnIDs.remove(at: c)
        columns.remove(at: c)
        lazy.remove(at: c)
        appendBase = nil
    }

    func materializeAll() throws {
        for c in lazy.indices where lazy[c] != nil { try materialize(c) }
    }

    /// Every column is decoded: nothing is read from the node the leaf was decoded from.
    var isFullyDecoded: Bool { !lazy.contains { $0 != nil } }

    /// Makes a fully decoded leaf that a commit wrote the dirty copy of that node in a later transaction
    /// (`DecodedLeaves`).
    func reuse(sink: NodeSink) {
        precondition(isFullyDecoded, "only a fully decoded leaf can stand for the node it was encoded into")
        base = nil
        self.sink = sink
    }

    /// Frees the blobs still owned by lazy columns (when the whole leaf is dropped).
    func freeLazyBlobs() throws {
        guard let sink else { return }
        for c in lazy.indices { try lazy[c]?.forEachBlobRef { try sink.free($0) } }
    }

    func row(of key: UInt64) -> Int? {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if keys[mid] == key { return mid }
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return nil
    }

    /// Position at which `key` would be inserted.
    func insertionPoint(of key: UInt64) -> Int {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    func value(row: Int, property p: PropertyInfo) throws -> Value {
        guard let c = columnIndex(p.columnID) else { return p.defaultValue }
        if let r = lazy[c], let sink {
            return try r.value(at: row, source: sink, location: "row \(row) of \(p.name) in the cluster at page \(base?.ref ?? 0)")
        }
        return columns[c][row]
    }

    func set(row: Int, property p: PropertyInfo, _ v: Value) throws {
        let c = columnIndex(p.columnID) ?? addColumn(p.columnID, fill: p.defaultValue)
        try materialize(c)
        if let b = appendBase, row < b.rows { appendBase = nil }
        columns[c][row] = v
    }

    /// Sets property `p` of every row to `transform(row's value)`, in row order: the column is decoded once and
    /// changed in place (what `set(row:property:_:)` per row does, without finding the column and checking the
    /// kept encoding for each row). When `transform` throws, the rows before the one it threw for keep their
    /// new values, as with `set` per row.
    func updateEach(property p: PropertyInfo, _ transform: (Value) throws -> Value) throws {
        let c = columnIndex(p.columnID) ?? addColumn(p.columnID, fill: p.defaultValue)
        try materialize(c)
        if !keys.isEmpty { appendBase = nil }
        // Taken out of `columns` while it changes, so that the array stays uniquely referenced.
        var values = columns[c]
        columns[c] = []
        defer { columns[c] = values }
        for i in values.indices { values[i] = try transform(values[i]) }
    }

    /// Inserts a row at `pos`; `row` is parallel to `properties` (entries of properties without a column are
    /// ignored). Columns of removed properties get a placeholder.
    func insert(key: UInt64, row: [Value], at pos: Int, properties: [PropertyInfo]) throws {
        try materializeAll()
        let append = pos == keys.count
        if !append { appendBase = nil }
        if append { keys.append(key) } else { keys.insert(key, at: pos) }
        keysFromBase = false
        var touched = 0
        // By index, reading stored fields: binding each `PropertyInfo`, or calling one of its computed
        // properties on an array element, copied it (its name retained and released) for every column of
        // every inserted row.
        for pi in properties.indices where PropertyInfo.hasColumn(properties[pi].type) {
            let id = properties[pi].columnID
            if let c = columnIndex(id, hint: pi) {
                // Array.insert goes through a generic replaceSubrange; appending is the common case.
                if append { columns[c].append(row[pi]) } else { columns[c].insert(row[pi], at: pos) }
                touched += 1
            } else {
                let c = addColumn(id, fill: properties[pi].defaultValue)
                columns[c][pos] = row[pi]
                touched += 1
            }
        }
        if touched < columns.count {
            for c in columns.indices where columns[c].count < keys.count { columns[c].insert(.null, at: pos) }
        }
    }

    /// Removes a row, returning its values by column ID.
    func remove(row: Int) throws -> [UInt32: Value] {
        try materializeAll()
        appendBase = nil
        keys.remove(at: row)
        keysFromBase = false
        var removed: [UInt32: Value] = [:]
        for c in columns.indices { removed[columnIDs[c]] = columns[c].remove(at: row) }
        return removed
    }

    /// Moves rows `cut...` into a new leaf.
    func split(at cut: Int) throws -> DirtyLeaf {
        try materializeAll()
        // The new leaf's arrays get room for a full leaf at once: an append split leaves it one row, and growing
        // it row by row reallocated and copied every column eight times per leaf of a bulk insert.
        let right = DirtyLeaf(keys: Self.withLeafCapacity(keys[cut...]))
        appendBase = nil
        keys.removeSubrange(cut...)
        keysFromBase = false
        right.columnIDs = columnIDs
        right.columns = columns.map { Self.withLeafCapacity($0[cut...]) }
        right.lazy = Array(repeating: nil, count: columns.count)
        for c in columns.indices { columns[c].removeSubrange(cut...) }
        return right
    }

    private static func withLeafCapacity<T>(_ part: ArraySlice<T>) -> [T] {
        var a: [T] = []
        a.reserveCapacity(Swift.max(part.count, clusterCapacity) + 1)
        a.append(contentsOf: part)
        return a
    }

    /// Makes a committed cluster dirty: the columns of `properties` start lazy (read in place, blobs kept);
    /// blobs of columns whose property was removed are freed, since those columns are dropped.
    static func decode(_ view: ClusterView, properties: [PropertyInfo], sink: NodeSink) throws -> DirtyLeaf {
        let leaf = DirtyLeaf()
        leaf.keys = (0..<view.count).map { view.key(at: $0) }
        leaf.keysFromBase = true
        leaf.base = view
        leaf.sink = sink
        for p in properties where p.hasColumn {
            guard let r = try view.reader(for: p, source: sink) else { continue }
            leaf.columnIDs.append(p.columnID)
            leaf.columns.append([])
            leaf.lazy.append(r)
        }
        // Blobs of columns whose property was removed (or that no longer have a column: backlink sets of a
        // file upgraded from format 2) are freed: the column is dropped.
        let live = Set(properties.filter(\.hasColumn).map(\.columnID))
        for id in view.columnIDs where !live.contains(id) {
            guard let e = view.columnEntry(id), let enc = ColumnEncoding(rawValue: e.encoding), enc == .bytes else { continue }
            // A column that does not decode is damage, not a column without blobs: its blobs would leak.
            let r: ColumnReader
            do {
                r = try ColumnReader(node: view.node, offset: e.offset, length: e.length, count: view.count,
                                     encoding: enc, type: .data, linkStorage: .plusOne)
            } catch {
                throw sink.corrupt(view.ref, "column \(id) of a removed property: \(error.reason)")
            }
            try r.forEachBlobRef { try sink.free($0) }
        }
        return leaf
    }

    /// Encodes rows `range` as one cluster node. Values longer than the inline limit go to blobs via `storeBlob`.
    /// `dictionaries`: string columns may take the dictionary form (format 8; not in a file kept at format 5).
    func encode(rows range: Range<Int>, properties: [PropertyInfo], dictionaries: Bool = true,
                storeBlob: (UnsafeRawBufferPointer) throws -> UInt64) throws -> [UInt8] {
        let whole = range == 0..<keys.count
        // In the array of the cluster an earlier commit built (DECISIONS 64): a cluster is the largest node a
        // small commit builds, past `malloc`'s per-thread cache. Room in whole pages, so that the array, passed
        // on, also fits the next commit's cluster, a row longer.
        let capacity = (64 + range.count * (8 + 8 * properties.count) + pageSize - 1) / pageSize * pageSize
        var b = NodeBuilder(.cluster, capacity: capacity, reusing: sink?.clusterBuffer() ?? [])
        // Rows only appended since the last whole encode: that node's blocks are extended (DECISIONS 46).
        if whole, let previous = appendBase, previous.rows > 0, previous.rows <= keys.count, let sink {
            try previous.node.withUnsafeBytes { raw in
                let old = try? ClusterView(node: raw, ref: 0, source: sink)  // this process's own encoding; nil: encode whole
                try encodeBody(range, properties, old: old?.count == previous.rows ? old : nil, dictionaries: dictionaries, into: &b.w,
                               storeBlob: storeBlob)
            }
        } else {
            try encodeBody(range, properties, old: nil, dictionaries: dictionaries, into: &b.w, storeBlob: storeBlob)
        }
        let node = b.finish()
        // Kept again (`keepEncoding`) only when the leaf is handed to the next transaction; the old node's array
        // serves the next cluster built.
        if let previous = appendBase {
            appendBase = nil
            sink?.recycleClusterBuffer(previous.node)
        }
        return node
    }

    /// The bytes of the packed array of `count` elements at the start of `bytes` (header and elements, as
    /// `PackedInts.encode` wrote them), or nil when its header does not fit (the array is then encoded again).
    private static func packedArray(_ bytes: UnsafeRawBufferPointer, count: Int) -> UnsafeRawBufferPointer? {
        guard bytes.count >= PackedInts.headerSize else { return nil }
        let width = Int(bytes[0])
        guard PackedInts.isLegalWidth(width) else { return nil }
        let length = PackedInts.byteLength(count: count, width: width)
        guard length <= bytes.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[0..<length])
    }

    /// Remembers `node`, the whole encoding just written of this fully decoded leaf, for the next commit
    /// to extend (`DecodedLeaves` calls it for the few leaves it keeps).
    func keepEncoding(_ node: [UInt8]) {
        precondition(isFullyDecoded, "only a fully decoded leaf stands for its node")
        appendBase = (node, keys.count)
    }

    func dropEncoding() { appendBase = nil }

    /// Checks the append path in debug builds: one column encoded from every row (an extended block has no
    /// out-of-line value, so nothing goes to a blob).
    private static func fullBlock(_ values: ArraySlice<Value>, _ p: PropertyInfo) -> [UInt8] {
        var w = ByteWriter()
        ColumnCodec.encodeColumn(values, type: p.clusterColumnType, nullable: p.clusterColumnNullable, linkStorage: .plusOne,
                                 into: &w, dictionary: p.clusterColumnType == .string) { _ in preconditionFailure("no blob expected") }
        return w.bytes
    }

    /// Whether an extended block holds `values`: its bytes are the full encoding's, or (a string column, whose
    /// full encoding may choose the other form) it reads back as `values`.
    private static func extendedBlockHolds(_ block: [UInt8], _ values: ArraySlice<Value>, _ p: PropertyInfo) -> Bool {
        if block == fullBlock(values, p) { return true }
        guard p.clusterColumnType == .string else { return false }
        return block.withUnsafeBytes { raw in
            let read = { try ColumnReader(node: raw, offset: 0, length: raw.count, count: values.count, encoding: .bytes, type: .string) }
            guard let r = try? read() else { return false }  // debug check only: a block that does not read is a mismatch
            return values.indices.allSatisfy { (try? r.value(at: $0 - values.startIndex) { _, _ in [] }) == values[$0] }  // debug check only
        }
    }

    /// The node's contents after its header: row and column counts, directory, keys, column blocks — the
    /// keys and each block extended from `old` where they can be (debug builds check each against its full
    /// encoding).
    private func encodeBody(_ range: Range<Int>, _ properties: [PropertyInfo], old: ClusterView?, dictionaries: Bool,
                            into w: inout ByteWriter, storeBlob: (UnsafeRawBufferPointer) throws -> UInt64) throws {
        var columnCount = 0
        for pi in properties.indices where PropertyInfo.hasColumn(properties[pi].type) { columnCount += 1 }
        let whole = range == 0..<keys.count
        w.u32(UInt32(range.count))
        w.u32(UInt32(columnCount))
        let directory = w.count
        w.zeros(16 * columnCount)
        w.align(8)
        let keysStart = w.count
        keys.withUnsafeBufferPointer { all in
            all.withMemoryRebound(to: Int64.self) { all in
                // Object keys are stored as their bit patterns.
                let newKeys = UnsafeBufferPointer(rebasing: all[range])
                if whole, keysFromBase, let base, base.count == newKeys.count,
                   let stored = Self.packedArray(base.keyArray, count: base.count) {
                    // The rows of the committed cluster this leaf came from: its key array as it is.
                    w.raw(stored)
                    assert((try? PackedIntsReader(stored, offset: 0, count: newKeys.count)).map { r in  // debug check: unreadable fails it
                        newKeys.indices.allSatisfy { r[$0] == newKeys[$0] }
                    } ?? false, "copied key array differs from the leaf's keys")
                } else if let old, old.count <= newKeys.count,
                   PackedInts.appendExtending(old.keyArray, oldCount: old.count, UnsafeBufferPointer(rebasing: newKeys[old.count...]), into: &w) {
                    assert(Array(w.bytes[keysStart...]) == { var k = ByteWriter(); PackedInts.encode(newKeys, into: &k); return k.bytes }(),
                           "extended key array differs")
                } else {
                    PackedInts.encode(newKeys, into: &w)
                }
            }
        }
        var i = -1
        // By index, reading stored fields (as `insert` does): binding each `PropertyInfo` copied it, its name
        // retained and released, for every column of every leaf a commit writes.
        for pi in properties.indices where PropertyInfo.hasColumn(properties[pi].type) {
            i += 1
            w.align(8)
            let start = w.count
            let columnID = properties[pi].columnID
            let type = PropertyInfo.clusterColumnType(properties[pi].type, properties[pi].flags)
            let nullable = PropertyInfo.clusterColumnNullable(properties[pi].type, properties[pi].flags)
            let c = columnIndex(columnID, hint: i)
            let encoding = ColumnEncoding.encoding(for: type)
            if let c, lazy[c] != nil, whole, let base, let e = base.columnEntry(columnID) {
                // Unchanged since the last commit: copy the encoded block as it is.
                w.raw(UnsafeRawBufferPointer(rebasing: base.node[e.offset..<e.offset + e.length]))
            } else if let c, lazy[c] == nil, let old, let e = old.columnEntry(columnID), e.encoding == encoding.rawValue,
                      ColumnCodec.appendColumn(UnsafeRawBufferPointer(rebasing: old.node[e.offset..<e.offset + e.length]),
                                               oldCount: old.count, columns[c][old.count...], type: type,
                                               nullable: nullable, into: &w) {
                // Extended: the old rows' bytes as they were, the appended rows after them.
                assert(Self.extendedBlockHolds(Array(w.bytes[start...]), columns[c][range], properties[pi]),
                       "extended block of \(properties[pi].name) differs")
            } else {
                if let c { try materialize(c) }
                let values: ArraySlice<Value> = c.map { columns[$0][range] }
                    ?? ArraySlice(repeating: properties[pi].defaultValue, count: range.count)
                try ColumnCodec.encodeColumn(values, type: type, nullable: nullable, linkStorage: .plusOne, into: &w,
                                             dictionary: type == .string && dictionaries, storeBlob: storeBlob)
            }
            let e = directory + 16 * i
            w.patchU32(columnID, at: e)
            w.patchU32(UInt32(start), at: e + 4)
            w.patchU32(UInt32(w.count - start), at: e + 8)
            w.bytes[e + 12] = encoding.rawValue
        }
    }
}

extension NodeSource {
    /// The bytes of an out-of-line value.
    func blob(_ ref: UInt64, length: Int) throws -> [UInt8] {
        let n = try node(ref, expected: .blob)
        guard n.count - nodeHeaderSize == length else { throw corrupt(ref, "blob length \(n.count - nodeHeaderSize), expected \(length)") }
        return Array(n[nodeHeaderSize...])
    }
}
