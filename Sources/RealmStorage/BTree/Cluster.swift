/// Largest number of objects in one cluster, and the encoded size past which a cluster is split at commit.
let clusterCapacity = 256
let clusterSplitBytes = 64 * 1024

extension PropertyInfo {
    /// The type the column codec stores for this property in a cluster: lists hold node refs and backlinks
    /// hold tagged keys, both as plain integers.
    var clusterColumnType: PropertyType { isList || type == .backlink ? .int : type }
    var clusterColumnNullable: Bool { isList || type == .backlink ? false : (isOptional || type == .link || type == .mixed) }
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
        guard count <= clusterCapacity, columnCount <= 1 << 16, keysOffset <= node.count else {
            throw source.corrupt(ref, "cluster header out of range (\(count) objects, \(columnCount) columns)")
        }
        do {
            keys = try PackedIntsReader(node, offset: (keysOffset + 7) & ~7, count: count)
        } catch {
            throw source.corrupt(ref, "cluster key array is malformed")
        }
    }

    @inline(__always) func key(at i: Int) -> UInt64 { UInt64(bitPattern: keys[i]) }

    /// Row of `key`, by binary search over the sorted keys.
    func row(of key: UInt64) -> Int? {
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
    func reader(for p: PropertyInfo, source: NodeSource) throws -> ColumnReader? {
        guard let e = columnEntry(p.columnID) else { return nil }
        guard let encoding = ColumnEncoding(rawValue: e.encoding), e.offset >= 0, e.offset + e.length <= node.count else {
            throw source.corrupt(ref, "column \(p.columnID) (\(p.name)) has a bad directory entry")
        }
        do {
            return try ColumnReader(node: node, offset: e.offset, length: e.length, count: count, encoding: encoding,
                                    type: p.clusterColumnType, linkStorage: .plusOne)
        } catch {
            throw source.corrupt(ref, "column \(p.columnID) (\(p.name)) is malformed")
        }
    }

    func value(row: Int, property p: PropertyInfo, source: NodeSource) throws -> Value {
        guard let r = try reader(for: p, source: source) else { return p.defaultValue }
        return try source.value(r, at: row, node: ref)
    }
}

/// A cluster being changed by a write transaction: decoded into Swift arrays, encoded once at commit.
final class DirtyLeaf {
    var keys: [UInt64]
    /// Column values by column ID. A missing column means every object has the property's default.
    var columns: [UInt32: [Value]]

    init(keys: [UInt64] = [], columns: [UInt32: [Value]] = [:]) {
        self.keys = keys
        self.columns = columns
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

    func value(row: Int, property p: PropertyInfo) -> Value {
        columns[p.columnID]?[row] ?? p.defaultValue
    }

    func set(row: Int, property p: PropertyInfo, _ v: Value) {
        if columns[p.columnID] == nil {
            columns[p.columnID] = Array(repeating: p.defaultValue, count: keys.count)
        }
        columns[p.columnID]![row] = v
    }

    /// Decodes a committed cluster, keeping only the columns of `properties`. Blob refs of out-of-line
    /// values are reported to `freeBlob` (the decoded values now own the bytes).
    static func decode(_ view: ClusterView, properties: [PropertyInfo], source: NodeSource,
                       freeBlob: (UInt64) throws -> Void) throws -> DirtyLeaf {
        let leaf = DirtyLeaf()
        leaf.keys = (0..<view.count).map { view.key(at: $0) }
        for p in properties where p.hasColumn {
            guard let r = try view.reader(for: p, source: source) else { continue }
            var values: [Value] = []
            values.reserveCapacity(view.count)
            for i in 0..<view.count {
                values.append(try source.value(r, at: i, node: view.ref))
            }
            try r.forEachBlobRef(freeBlob)
            leaf.columns[p.columnID] = values
        }
        // Blobs of columns whose property was removed are freed too.
        let live = Set(properties.map(\.columnID))
        for id in view.columnIDs where !live.contains(id) {
            guard let e = view.columnEntry(id), let enc = ColumnEncoding(rawValue: e.encoding), enc == .bytes else { continue }
            if let r = try? ColumnReader(node: view.node, offset: e.offset, length: e.length, count: view.count,
                                         encoding: enc, type: .data, linkStorage: .plusOne) {
                try r.forEachBlobRef(freeBlob)
            }
        }
        return leaf
    }

    /// Encodes rows `range` as one cluster node. Values longer than the inline limit go to blobs via `storeBlob`.
    func encode(rows range: Range<Int>, properties: [PropertyInfo],
                storeBlob: (UnsafeRawBufferPointer) throws -> UInt64) throws -> [UInt8] {
        let cols = properties.filter(\.hasColumn)
        var b = NodeBuilder(.cluster, capacity: 64 + range.count * (8 + 8 * cols.count))
        b.w.u32(UInt32(range.count))
        b.w.u32(UInt32(cols.count))
        let directory = b.w.count
        b.w.zeros(16 * cols.count)
        b.w.align(8)
        PackedInts.encode(keys[range].map { Int64(bitPattern: $0) }, into: &b.w)
        for (i, p) in cols.enumerated() {
            b.w.align(8)
            let start = b.w.count
            let values: ArraySlice<Value> = columns[p.columnID].map { $0[range] }
                ?? ArraySlice(repeating: p.defaultValue, count: range.count)
            try ColumnCodec.encodeColumn(values, type: p.clusterColumnType, nullable: p.clusterColumnNullable,
                                         linkStorage: .plusOne, into: &b.w, storeBlob: storeBlob)
            let e = directory + 16 * i
            b.w.patchU32(p.columnID, at: e)
            b.w.patchU32(UInt32(start), at: e + 4)
            b.w.patchU32(UInt32(b.w.count - start), at: e + 8)
            b.w.bytes[e + 12] = ColumnEncoding.encoding(for: p.clusterColumnType).rawValue
        }
        return b.finish()
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
