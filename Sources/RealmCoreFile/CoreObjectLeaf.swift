/// Reading many objects in order, in place: a class's objects leaf by leaf, each column of a leaf read where it
/// lies in the map (no value decoded until asked for, strings handed over as bytes).
///
/// A leaf is a cluster of formats ≥ 10 (up to 256 objects), or 256 consecutive rows of formats ≤ 9, whose
/// columns are trees of their own (read row by row there).
public struct CoreObjectLeaf {
    let group: CoreGroup
    let table: Int
    /// Formats ≥ 10: the cluster leaf, its keys' offset, and its relative keys (nil: compact, `offset + i`).
    let cluster: CoreNode?
    let keyOffset: Int64
    let relativeKeys: CoreNode?
    /// Position of the leaf's first object in the class.
    public let firstPosition: Int
    public let count: Int

    /// Key of the leaf's object `i` (formats ≤ 9: its row number).
    public func key(_ i: Int) -> Int64 {
        if cluster == nil { return Int64(firstPosition + i) }
        if let relativeKeys { return keyOffset &+ Int64(bitPattern: relativeKeys.rawUnsigned(i)) }
        return keyOffset &+ Int64(i)
    }

    /// The keys of the leaf's objects, in order.
    public var keys: [Int64] { (0..<count).map { key($0) } }

    /// The column of `property` in this leaf.
    public func column(_ property: CoreProperty) throws -> CoreColumnLeaf {
        let table = group.tables[self.table]
        guard property.column < table.columns.count else {
            throw RealmCoreFileError.noSuchObject(className: table.displayName, detail: "it has no property '\(property.name)' of this kind")
        }
        let column = table.columns[property.column]
        return try within("table '\(table.name)', column '\(column.name)'") {
            try CoreColumnLeaf(group: group, leaf: self, column: column)
        }
    }
}

/// One column of a `CoreObjectLeaf`. Single values of the common types (int, bool, float, double, string, link)
/// are checked when the column is made and then read without failing (`isInPlace`); every other column reads
/// each value through `value(_:)`, which checks as it reads.
public struct CoreColumnLeaf {
    enum Layout {
        /// The leaf has no node for the column (a column added after the cluster was written): every value null.
        case absent
        case ints(CoreNode, nullable: Bool, nullSentinel: Int64)
        /// Formats ≥ 10: 0 false, 1 true, 3 null.
        case bools(CoreNode)
        /// Object key + 1, 0 null.
        case links(CoreNode)
        case floats(CoreNode, nullable: Bool)
        case doubles(CoreNode, nullable: Bool)
        /// Strings of up to 15 bytes in fixed-width slots (the last byte of a slot: width − 1 − length, width for
        /// null), every slot checked when the column was made.
        case shortStrings(CoreNode)
        /// Other string leaves (medium, long, enumerated): `isNull[i]` decided when the column was made; the bytes
        /// are read per access.
        case strings(CoreNode, enumKeys: Int?, isNull: [Bool])
        /// Anything else: values read one by one.
        case general
    }

    let group: CoreGroup
    let leaf: CoreObjectLeaf
    let column: CoreColumn
    let layout: Layout
    /// The target class name of a link column.
    let target: String?

    init(group: CoreGroup, leaf: CoreObjectLeaf, column: CoreColumn) throws {
        self.group = group
        self.leaf = leaf
        self.column = column
        target = column.linkedTable.map { group.tables[$0].displayName }
        guard let cluster = leaf.cluster, column.collection == .none else {
            layout = .general
            return
        }
        let slot = 1 + column.leafIndex
        guard slot < cluster.count, let ref = try cluster.ref(slot) else {
            layout = .absent
            return
        }
        let node = try group.reader.node(ref)
        let n = leaf.count
        func check(_ ok: Bool, _ what: String) throws {
            guard ok else { throw group.badLeaf(node, "\(what) column of \(n) objects") }
        }
        switch try group.modernKind(column) {
        case .int(let nullable):
            try check(node.scheme == 0 && node.count >= n + (nullable ? 1 : 0), "int")
            layout = .ints(node, nullable: nullable, nullSentinel: nullable ? node.rawInt(0) : 0)
        case .bool:
            try check(node.scheme == 0 && node.count >= n, "bool")
            layout = .bools(node)
        case .link:
            try check(node.scheme == 0 && node.count >= n, "link")
            layout = .links(node)
        case .float:
            try check(node.scheme == 1 && (node.width == 4 || n == 0) && node.count >= n, "float")
            layout = .floats(node, nullable: column.isNullable)
        case .double:
            try check(node.scheme == 1 && (node.width == 8 || n == 0) && node.count >= n, "double")
            layout = .doubles(node, nullable: column.isNullable)
        case .string(let enumKeys) where !node.hasRefs && node.scheme == 1:
            try check(node.count >= n, "string")
            let w = node.width
            for i in 0..<(w == 0 ? 0 : n) where Int(node.payload.load(fromByteOffset: i * w + w - 1, as: UInt8.self)) > w {
                throw RealmCoreFileError.corrupt(what: "short string slot \(i) with padding byte \(node.payload.load(fromByteOffset: i * w + w - 1, as: UInt8.self)) in width \(w)",
                                                 offset: node.ref, context: "")
            }
            layout = .shortStrings(node)
        case .string(let enumKeys):
            try check(try group.leafCount(.string(enumKeys: enumKeys), node) >= n, "string")
            var isNull = [Bool](repeating: false, count: n)
            for i in 0..<n { isNull[i] = try !group.withString(node, i, enumKeys: enumKeys) { _ in } }
            layout = .strings(node, enumKeys: enumKeys, isNull: isNull)
        default:
            layout = .general
        }
    }

    /// Whether `isNull`, `int`, `double`, `bool`, `linkKey` and `withStringBytes` read this column in place.
    public var isInPlace: Bool {
        if case .general = layout { return false }
        return true
    }

    /// Whether the column may hold null (else a null pattern reads as the type's default).
    var nullable: Bool { column.isNullable || column.type == 12 }

    public func isNull(_ i: Int) -> Bool {
        switch layout {
        case .absent: return nullable
        case let .ints(node, isNullable, sentinel): return isNullable && nullable && node.rawInt(i + 1) == sentinel
        case .bools(let node): return nullable && node.rawInt(i) == 3
        case .links(let node): return node.rawInt(i) <= 0
        case let .floats(node, isNullable): return isNullable && node.payload.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self) == 0x7FC0_00AA
        case let .doubles(node, isNullable):
            return isNullable && node.payload.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self) == 0x7FF8_0000_0000_00AA
        case .shortStrings(let node): return nullable && node.isNullShortString(i)
        case .strings(_, _, let isNull): return isNull[i] && nullable
        case .general: return false
        }
    }

    /// The integer at `i` of an int or bool column (0 for null).
    public func int(_ i: Int) -> Int64 {
        switch layout {
        case let .ints(node, isNullable, sentinel):
            if !isNullable { return node.rawInt(i) }
            let v = node.rawInt(i + 1)
            return v == sentinel ? 0 : v
        case .bools(let node): let v = node.rawInt(i); return v != 0 && v != 3 ? 1 : 0
        default: return 0
        }
    }

    public func double(_ i: Int) -> Double {
        if isNull(i) { return 0 }
        switch layout {
        case .floats(let node, _): return Double(Float(bitPattern: UInt32(littleEndian: node.payload.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))))
        case .doubles(let node, _): return Double(bitPattern: UInt64(littleEndian: node.payload.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)))
        default: return 0
        }
    }

    public func bool(_ i: Int) -> Bool {
        if case .bools(let node) = layout { let v = node.rawInt(i); return v != 0 && v != 3 }
        return false
    }

    /// The target key of a link column at `i`; nil for null (and for links to tombstones, as the SDKs show them).
    public func linkKey(_ i: Int) -> Int64? {
        guard case .links(let node) = layout else { return nil }
        let v = node.rawInt(i)
        return v > 0 ? v - 1 : nil
    }

    /// Calls `body` with the UTF-8 bytes of the string at `i`, in place; false (without calling it) for null.
    public func withStringBytes(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        switch layout {
        case .shortStrings(let node):
            if node.isNullShortString(i) {
                if nullable { return false }
                try body(UnsafeRawBufferPointer(start: nil, count: 0))
                return true
            }
            let w = node.width, pad = Int(node.payload.load(fromByteOffset: i * w + w - 1, as: UInt8.self))
            try body(UnsafeRawBufferPointer(start: node.payload + i * w, count: w - 1 - pad))
            return true
        case let .strings(node, enumKeys, isNull):
            if isNull[i] {
                if nullable { return false }
                try body(UnsafeRawBufferPointer(start: nil, count: 0))
                return true
            }
            return try within("column '\(column.name)'") { try group.withString(node, i, enumKeys: enumKeys, body) }
        case .absent:
            if nullable { return false }
            try body(UnsafeRawBufferPointer(start: nil, count: 0))
            return true
        default:
            guard case .string(let s) = try value(i) else { return false }
            var copy = s
            try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
            return true
        }
    }

    /// The value at `i`, as `RealmCoreFile.value(of:at:property:)` gives it.
    public func value(_ i: Int) throws -> CoreValue {
        guard i >= 0, i < leaf.count else {
            throw RealmCoreFileError.corrupt(what: "object \(i) read from a leaf of \(leaf.count)", offset: leaf.cluster?.ref ?? 0, context: "")
        }
        let table = group.tables[leaf.table]
        return try within("table '\(table.name)', object \(leaf.firstPosition + i), column '\(column.name)'") {
            if let cluster = leaf.cluster { return try group.modernValue(table, column, cluster, i) }
            return try group.legacyValue(column, leaf.firstPosition + i)
        }
    }
}

extension CoreNode {
    /// Whether slot `i` of a leaf of short strings (checked to hold it) is null.
    @inline(__always)
    func isNullShortString(_ i: Int) -> Bool {
        width == 0 || Int(payload.load(fromByteOffset: i * width + width - 1, as: UInt8.self)) == width
    }
}

extension CoreGroup {
    /// Calls `body` with the bytes of string element `i` where they lie (a chunked big string is joined first);
    /// false, without calling it, for null. The same reads as `stringBytes`.
    func withString(_ node: CoreNode, _ i: Int, enumKeys: Int?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        if node.hasRefs {
            if node.contextFlag || format < 10 {
                guard let bytes = try blobBytes(node, i, terminated: true, notNullFlags: format < 10) else { return false }
                try bytes.withUnsafeBytes(body)
                return true
            }
            guard node.count >= 2, let offsetsRef = try node.ref(0) else { throw badLeaf(node, "small blob") }
            let offsets = try reader.node(offsetsRef)
            if node.count >= 3, let nullsRef = try node.ref(2), try reader.node(nullsRef).int(i) != 0 { return false }
            let begin = i == 0 ? 0 : Int(try offsets.int(i - 1)), end = Int(try offsets.int(i))
            guard let blobRef = try node.ref(1) else {
                guard begin == end else { throw badLeaf(node, "small blob") }
                return false
            }
            let blob = try reader.node(blobRef)
            guard begin >= 0, end > begin, end <= blob.payloadBytes else {
                throw RealmCoreFileError.corrupt(what: "string offsets \(begin)..<\(end) outside a blob of \(blob.payloadBytes) bytes", offset: blob.ref, context: "")
            }
            try body(try blob.bytes(begin, end - begin - 1))
            return true
        }
        if node.scheme == 0 {
            let index = try node.int(i)
            guard let enumKeys else {
                throw RealmCoreFileError.corrupt(what: "enumerated string leaf in a column without enum keys", offset: node.ref, context: "")
            }
            let (leaf, j) = try reader.locate(try reader.node(enumKeys), Int(index)) { try leafCount(.string(enumKeys: nil), $0) }
            return try withString(leaf, j, enumKeys: nil, body)
        }
        guard node.scheme == 1 else { throw badLeaf(node, "string") }
        let w = node.width
        guard i >= 0, i < node.count else {
            throw RealmCoreFileError.corrupt(what: "element \(i) read from a string leaf of \(node.count)", offset: node.ref, context: "")
        }
        if w == 0 { return false }
        let slot = try node.bytes(i * w, w)
        let last = Int(slot[w - 1])
        if last == w { return false }
        let length = w - 1 - last
        guard length >= 0 else {
            throw RealmCoreFileError.corrupt(what: "short string slot with padding byte \(last) in width \(w)", offset: node.ref, context: "")
        }
        try body(UnsafeRawBufferPointer(rebasing: slot[0..<length]))
        return true
    }
}

extension RealmCoreFile {
    /// Calls `body` with each leaf of `cls`'s objects in key order (formats ≥ 10: its clusters; formats ≤ 9: 256
    /// rows at a time) until it returns false.
    public func forEachLeaf(of cls: CoreClass, _ body: (CoreObjectLeaf) throws -> Bool) throws {
        try forEachLeaf(of: cls, firsts: 0..<Int.max, body)
    }

    /// `forEachLeaf` over the leaves whose first object's position lies in `firsts` only: runs of positions
    /// that tile `0..<objectCount` (the first from 0, the last to `Int.max`) visit each leaf exactly once between
    /// them, in key order run after run, each run reading no leaf before its own (a subtree before it is skipped
    /// by its count). Runs may be read on several threads at once: a walk shares nothing mutable with another.
    public func forEachLeaf(of cls: CoreClass, firsts: Range<Int>, _ body: (CoreObjectLeaf) throws -> Bool) throws {
        let group = try check(cls)
        let table = group.tables[cls.table]
        try within("table '\(table.name)'") {
            if group.format < 10 {
                // Leaves of 256 rows: the first one starting in `firsts` is the first multiple of 256 from its start.
                var start = (min(max(firsts.lowerBound, 0), table.objectCount) + 255) / 256 * 256
                while start < table.objectCount, start < firsts.upperBound {
                    let n = min(256, table.objectCount - start)
                    let leaf = CoreObjectLeaf(group: group, table: cls.table, cluster: nil, keyOffset: 0, relativeKeys: nil,
                                              firstPosition: start, count: n)
                    guard try body(leaf) else { return }
                    start += n
                }
                return
            }
            guard let root = table.clusterRoot else { return }
            try group.forEachClusterLeaf(root: try group.reader.node(root), shift: table.clusterShift, firsts: firsts) { node, n, offset, position in
                let keys = try group.relativeKeys(node, count: n)
                return try body(CoreObjectLeaf(group: group, table: cls.table, cluster: node, keyOffset: offset, relativeKeys: keys,
                                               firstPosition: position, count: n))
            }
        }
    }

    /// Calls `body` with every object of `cls` in key order (as `object(of:at:)` gives them, read leaf by leaf)
    /// until it returns false.
    public func forEachObject(of cls: CoreClass, _ body: (CoreObject) throws -> Bool) throws {
        try forEachLeaf(of: cls) { leaf in
            let columns = try cls.properties.map { try leaf.column($0) }
            for i in 0..<leaf.count {
                let object = CoreObject(key: leaf.key(i), position: leaf.firstPosition + i, values: try columns.map { try $0.value(i) })
                guard try body(object) else { return false }
            }
            return true
        }
    }

    /// The value of `property` of the object with `key`; nil when `cls` has no such object.
    public func value(of cls: CoreClass, key: Int64, property: CoreProperty) throws -> CoreValue? {
        let group = try check(cls)
        guard property.column < group.tables[cls.table].columns.count else {
            throw RealmCoreFileError.noSuchObject(className: cls.name, detail: "it has no property '\(property.name)' of this kind")
        }
        let table = group.tables[cls.table]
        return try within("table '\(table.name)', object key \(key)") {
            if group.format < 10 {
                guard key >= 0, key < Int64(table.objectCount) else { return nil }
                return try within("column '\(property.name)'") { try group.legacyValue(table.columns[property.column], Int(key)) }
            }
            guard let root = table.clusterRoot, key >= 0,
                  let (leaf, index, _) = try group.clusterFind(root: root, key: key, shift: table.clusterShift, needPosition: false) else { return nil }
            return try within("column '\(property.name)'") { try group.modernValue(table, table.columns[property.column], leaf, index) }
        }
    }

    /// The key of the object at `position` of `cls`.
    public func key(of cls: CoreClass, at position: Int) throws -> Int64 {
        let group = try check(cls)
        let table = group.tables[cls.table]
        guard position >= 0, position < table.objectCount else {
            throw RealmCoreFileError.noSuchObject(className: cls.name, detail: "no object at position \(position) (it has \(table.objectCount))")
        }
        if group.format < 10 { return Int64(position) }
        guard let root = table.clusterRoot else {
            throw RealmCoreFileError.corrupt(what: "table with objects but no cluster tree", offset: 0, context: "table '\(table.name)'")
        }
        return try within("table '\(table.name)'") { try group.clusterLocate(root: root, position: position, shift: table.clusterShift).key }
    }
}

extension CoreGroup {
    /// The relative keys node of a cluster leaf of `n` objects (nil when its keys are compact), checked to hold `n`.
    func relativeKeys(_ leaf: CoreNode, count n: Int) throws -> CoreNode? {
        let first = try leaf.refOrTagged(0)
        guard first.number == nil, let ref = first.ref else { return nil }
        let keys = try reader.node(ref)
        guard keys.scheme == 0, keys.count >= n, keys.width >= 8 || n == 0 else { throw badCluster(leaf) }
        return keys
    }
}
