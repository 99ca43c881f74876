/// Realm Core's search index (`StringIndex`, index_string.hpp/.cpp), read for equality lookups (formats ≥ 6; the
/// layout changed last in format 6, `Group::upgrade_file_format` at v5.23.9). Formats ≤ 9 store row numbers
/// where later ones store object keys; the reader's keys of those formats are row numbers too.
///
/// A value becomes "index data" (`Mixed::get_index_data`): a string's bytes; an int's 8 bytes little-endian
/// (a bool as the int 0 or 1); a timestamp's 8-byte seconds then 4-byte nanoseconds, little-endian; an
/// ObjectId's 12 and a UUID's 16 bytes as stored; null as no data at all. The index is a tree of 4-byte chunks
/// of that data: each node is a B+tree `[keys, entry…]` whose keys are the chunks as big-endian signed 32-bit
/// numbers (`create_key`), with a tail of 1–3 bytes followed by `'X'` and zeros, nothing left as `'X'`, and null
/// as 0. An entry is a tagged object key (one object), a ref to a sub-index for the next 4 bytes (its header's
/// context flag set), or a ref to a B+tree of object keys (flag clear) sorted by value and then by key.
/// Different values can share an entry (null and int 0 share their first chunks; strings sharing 200 bytes
/// share a list), so every candidate is confirmed against the object's value, as Realm Core does.
extension CoreGroup {
    /// Realm Core's `s_max_offset`: sub-indexes stop at 200 bytes, so no well-formed index nests deeper.
    static let maximumIndexOffset = 200

    /// What a lookup found before confirmation: nothing, one object key, or a list of them.
    enum IndexEntry {
        case none
        case single(Int64)
        case list(Int)
    }

    /// `StringIndex::create_key(str, offset)`: the 4-byte chunk of `data` at `offset` as a signed 32-bit key.
    static func indexKey(_ data: [UInt8]?, offset: Int) -> Int32 {
        guard let data, offset <= data.count else { return 0 }
        let tail = data.count - offset
        var chunk: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        func byte(_ i: Int) -> UInt8 { i < tail ? data[offset + i] : (i == tail ? 0x58 : 0) }  // 0x58 = "X"
        if tail <= 3 {
            chunk = (byte(0), byte(1), byte(2), byte(3))
        } else {
            chunk = (data[offset], data[offset + 1], data[offset + 2], data[offset + 3])
        }
        let bits = UInt32(chunk.0) << 24 | UInt32(chunk.1) << 16 | UInt32(chunk.2) << 8 | UInt32(chunk.3)
        return Int32(bitPattern: bits)
    }

    /// The entry of the index at `root` for the index data `data` (nil = null).
    func indexEntry(root: Int, data: [UInt8]?) throws -> IndexEntry {
        var node = try reader.node(root)
        guard node.contextFlag else {
            throw RealmCoreFileError.corrupt(what: "search index root without its index flag", offset: root, context: "")
        }
        var offset = 0
        var key = Int64(Self.indexKey(data, offset: offset))
        var innerDepth = 0
        while true {
            guard node.hasRefs, node.count >= 1, let keysRef = try node.ref(0) else {
                throw RealmCoreFileError.corrupt(what: "search index node without its keys", offset: node.ref, context: "")
            }
            let keys = try reader.node(keysRef)
            guard keys.scheme == 0, keys.count + 1 == node.count else {
                throw RealmCoreFileError.corrupt(what: "search index node of \(node.count) slots with \(keys.count) keys", offset: node.ref, context: "")
            }
            // First key ≥ the one looked for (`lower_bound<32>`: keys compare as signed 32-bit numbers).
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if try keys.int(mid) < key { lo = mid + 1 } else { hi = mid }
            }
            if lo == keys.count { return .none }
            let entry = try node.refOrTagged(lo + 1)
            if node.isInner {
                innerDepth += 1
                guard innerDepth <= CoreNodeReader.maximumDepth, let child = entry.ref else {
                    throw RealmCoreFileError.corrupt(what: "search index inner node too deep or with an empty child", offset: node.ref, context: "")
                }
                node = try reader.node(child)
                guard node.contextFlag else {
                    throw RealmCoreFileError.corrupt(what: "search index child without its index flag", offset: child, context: "")
                }
                continue
            }
            guard try keys.int(lo) == key else { return .none }
            if let objectKey = entry.number { return .single(objectKey) }
            guard let ref = entry.ref else {
                throw RealmCoreFileError.corrupt(what: "search index entry \(lo) is empty", offset: node.ref, context: "")
            }
            let sub = try reader.node(ref)
            guard sub.contextFlag else { return .list(ref) }
            // A sub-index: the next 4 bytes of the value.
            offset += 4
            guard offset <= Self.maximumIndexOffset else {
                throw RealmCoreFileError.corrupt(what: "search index nested beyond \(Self.maximumIndexOffset) bytes", offset: ref, context: "")
            }
            key = Int64(Self.indexKey(data, offset: offset))
            innerDepth = 0
            node = sub
        }
    }

    /// `Mixed::get_index_data` of `value` for a column of `type` (nil inside: null); nil when the value is not
    /// one this column's index holds.
    static func indexData(_ value: CoreValue, columnType type: Int) -> [UInt8]?? {
        func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        switch (type == 3 ? 2 : type, value) {  // 3: an enumerated string column of formats ≤ 9
        case (_, .null): return .some(nil)
        case (0, .int(let v)): return le(v)
        case (1, .bool(let b)): return le(Int64(b ? 1 : 0))
        // U+FFFD may stand for bytes that are not UTF-8 (the reader decodes them so): only a scan can match those.
        case (2, .string(let s)) where !s.unicodeScalars.contains("\u{FFFD}"): return Array(s.utf8)
        case (8, let .timestamp(s, ns)): return le(s) + le(ns)
        case (15, .objectId(let b)) where b.count == 12: return b
        case (17, .uuid(let b)) where b.count == 16: return b
        default: return nil
        }
    }

    /// Keys of the objects of table `t` whose `column` equals `value`, ascending, from the column's index; nil when
    /// the column has no index this reader reads or `value` is not of the column's type.
    func indexedObjects(table t: Int, column c: Int, equalTo value: CoreValue) throws -> [Int64]? {
        guard format >= 6 else { return nil }
        let table = tables[t]
        let column = table.columns[c]
        guard let root = column.indexRoot, column.collection == .none, column.subListType == nil, !column.isFullTextIndexed,
              (format >= 10 ? [0, 1, 2, 8, 15, 17] : [0, 1, 2, 3, 8]).contains(column.type),
              let data = Self.indexData(value, columnType: column.type) else { return nil }
        return try within("table '\(table.name)', search index of column '\(column.name)'") {
            if value.isNull && !column.isNullable { return [] }
            let entry = try indexEntry(root: root, data: data)
            switch entry {
            case .none:
                return []
            case .single(let key):
                return try holds(table, column, key, value, data) ? [key] : []
            case .list(let ref):
                let keys = try integers(ref)
                guard let first = keys.first, let last = keys.last else { return [] }
                // Realm Core's own shortcut: the list is sorted by value, so equal ends mean equal throughout.
                if try holds(table, column, first, value, data), try keys.count == 1 || holds(table, column, last, value, data) {
                    for i in 1..<keys.count where keys[i] <= keys[i - 1] {
                        throw RealmCoreFileError.corrupt(what: "search index list of equal values not in key order", offset: ref, context: "")
                    }
                    return keys.filter { $0 >= 0 }
                }
                var found: [Int64] = []
                for key in keys where try holds(table, column, key, value, data) { found.append(key) }
                return Array(Set(found)).sorted()
            }
        }
    }

    /// Whether the object with `key` holds `value` in `column` (strings compared byte for byte); false for the
    /// unresolved keys of tombstones (negative), an error for a key the table does not hold.
    private func holds(_ table: CoreTable, _ column: CoreColumn, _ key: Int64, _ value: CoreValue, _ data: [UInt8]?) throws -> Bool {
        if key < 0 { return false }
        if format < 10 {
            guard key < Int64(table.objectCount) else {
                throw RealmCoreFileError.corrupt(what: "search index entry for row \(key) of a table of \(table.objectCount) rows", offset: 0, context: "")
            }
            let stored = try legacyValue(column, Int(key))
            if case let .string(a) = stored, case let .string(b) = value { return a.utf8.elementsEqual(b.utf8) }
            return stored == value
        }
        guard let root = table.clusterRoot,
              let (leaf, index, _) = try clusterFind(root: root, key: key, shift: table.clusterShift, needPosition: false) else {
            throw RealmCoreFileError.corrupt(what: "search index entry for object key \(key), which the table does not hold", offset: 0, context: "")
        }
        if column.type == 2 {
            let slot = 1 + column.leafIndex
            guard slot < leaf.count, let ref = try leaf.ref(slot) else { return value.isNull || data == [] && !column.isNullable }
            let stored = try stringBytes(try reader.node(ref), index, enumKeys: column.enumKeys)
            return (stored ?? (column.isNullable ? nil : [])) == data
        }
        return try modernValue(table, column, leaf, index) == value
    }
}

extension RealmCoreFile {
    /// Keys of the objects of `cls` whose `property` equals `value`, in ascending key order, read from the
    /// property's search index (Realm Core's `StringIndex`).
    ///
    /// nil when there is no answer from an index, and the caller should scan instead: the property has no index,
    /// its index is a kind this reader does not read (full-text, on a list, on a mixed property, or any index of
    /// formats ≤ 5), `value` is not of the property's type, or it is a string holding U+FFFD (which stands for
    /// bytes that are not UTF-8 where the reader decodes them). Read: int, bool, string, timestamp, ObjectId and
    /// UUID properties, and null on any of them (formats ≤ 9: int, bool, string and timestamp; their keys are
    /// row numbers). Strings compare by their UTF-8 bytes, as Realm Core compares
    /// them (no Unicode normalisation); every candidate the index names is confirmed against the object's value.
    public func objects(of cls: CoreClass, property: CoreProperty, equalTo value: CoreValue) throws -> [Int64]? {
        let group = try check(cls)
        guard cls.properties.contains(property) else {
            throw RealmCoreFileError.noSuchObject(className: cls.name, detail: "it has no property '\(property.name)' of this kind")
        }
        return try group.indexedObjects(table: cls.table, column: property.column, equalTo: value)
    }
}
