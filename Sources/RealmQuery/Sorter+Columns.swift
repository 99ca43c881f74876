import RealmStorage

/// Reading the values a sort or `DISTINCT` orders by: a column per descriptor, read leaf by leaf where it can be.
extension Sorter {
    /// The sort values of `path` for `keys`, in the keys' order: read in place leaf by leaf for a property of the
    /// queried class (keys in key order) or a path of to-one links, object by object otherwise.
    func column(_ path: BoundPath, _ keys: [ObjectKey], keysAreSorted: Bool) throws -> Column {
        if keysAreSorted, let prop = path.directProperty, let s = ex.schema(cls, prop), !s.isList,
           let column = try read(cls, prop, ofSortedKeys: keys, as: Form(s.type)) {
            return column
        }
        if let column = try readThroughLinks(path, keys, keysAreSorted: keysAreSorted) { return column }
        var values: [Value] = []
        values.reserveCapacity(keys.count)
        var nullLinks: [Bool] = []
        var buffer: [Value] = []
        let tail = Sorter.tail(path)
        for (n, k) in keys.enumerated() {
            buffer.removeAll(keepingCapacity: true)
            if let v = try value(path, tail, k, &buffer) {
                values.append(v)
                if !nullLinks.isEmpty { nullLinks.append(false) }
            } else {
                if nullLinks.isEmpty { nullLinks = [Bool](repeating: false, count: n) }
                values.append(.null)
                nullLinks.append(true)
            }
            if n & 255 == 255 {
                ex.snapshot.releaseDecryptedPagesIfOverBudget()
                try progress?.advance(by: 256)
            }
        }
        return .values(values, unreached: nullLinks)
    }

    /// The values of a property (not a list, set or dictionary) of `cls` for `keys`, ascending and each once,
    /// read leaf by leaf in one pass over the table, columns read in place, kept in `form`.
    /// nil when a key is not in the table (the general path reports it).
    func read(_ cls: String, _ prop: String, ofSortedKeys keys: [ObjectKey], as form: Form) throws -> Column? {
        let h = try ex.handle(cls, prop)
        var bytes: [UInt8] = []
        var offsets: [Int] = [0]
        var nulls: [Bool] = []
        var ints: [Int64] = []
        var values: [Value] = []
        switch form {
        case .strings:
            offsets.reserveCapacity(keys.count + 1)
            nulls.reserveCapacity(keys.count)
        case .ints:
            ints.reserveCapacity(keys.count)
            nulls.reserveCapacity(keys.count)
        case .values:
            values.reserveCapacity(keys.count)
        }
        var i = 0
        var found = 0
        var rows: [Int32] = []
        try ex.snapshot.scan(ex.table(cls)) { leaf in
            guard i < keys.count else { return false }
            let first = i
            rows.removeAll(keepingCapacity: true)
            leaf.appendRows(ofSortedKeys: keys, from: &i, to: &rows)
            if rows.isEmpty { return true }
            let col = try leaf.column(h)
            switch form {
            case .strings:
                for r in rows {
                    let isNull = try col.withUTF8(Int(r)) { bytes.append(contentsOf: $0) } == nil
                    nulls.append(isNull)
                    offsets.append(bytes.count)
                }
            case .ints:
                for r in rows {
                    ints.append(col.int(Int(r)))
                    nulls.append(col.isNull(Int(r)))
                }
            case .values:
                for r in rows { values.append(try col.value(Int(r))) }
            }
            found += rows.count
            try progress?.advance(by: i - first)
            return true
        }
        guard found == keys.count else { return nil }
        switch form {
        case .strings: return .strings(bytes: bytes, offsets: offsets, nulls: nulls, unreached: [])
        case .ints: return .ints(ints, nulls: nulls, unreached: [])
        case .values: return .values(values, unreached: [])
        }
    }

    /// A path of to-one links ending at a property (not a list, set or dictionary; `owner.name`,
    /// `owner.company.name`), read a step at a time for all the keys at once: each step's distinct keys in key
    /// order, one pass over their table. nil for any other path, or when a key is not found.
    func readThroughLinks(_ path: BoundPath, _ keys: [ObjectKey], keysAreSorted: Bool) throws -> Column? {
        guard path.variable == nil, !path.typeOf, path.steps.count >= 2,
              case .value(let lastClass, let lastProp) = path.steps[path.steps.count - 1],
              let lastSchema = ex.schema(lastClass, lastProp), !lastSchema.isList, !lastSchema.isSet,
              !lastSchema.isDictionary else { return nil }
        var links: [(cls: String, prop: String)] = []
        for step in path.steps.dropLast() {
            guard case .toOne(let c, let p, _) = step else { return nil }
            links.append((c, p))
        }
        // `at[i]`: the key object i has reached; nil once a link on its way is null.
        var at: [ObjectKey?] = keys
        var sorted = keysAreSorted
        // One pass over a table is worth it when the keys are a good part of it; a few are looked up one by one.
        func worthScanning(_ distinct: [ObjectKey], _ cls: String) throws -> Bool {
            try distinct.count * 256 >= ex.snapshot.count(ex.table(cls))
        }
        for (c, p) in links {
            guard let (distinct, index) = try Sorter.distinctKeys(at, sorted: sorted), try worthScanning(distinct, c),
                  case .values(let targets, _)? = try read(c, p, ofSortedKeys: distinct, as: .values) else { return nil }
            for i in at.indices {
                guard at[i] != nil else { continue }
                if case .link(let t) = targets[Int(index[i])] { at[i] = t } else { at[i] = nil }
            }
            sorted = false
        }
        guard let (distinct, index) = try Sorter.distinctKeys(at, sorted: sorted), try worthScanning(distinct, lastClass),
              let column = try read(lastClass, lastProp, ofSortedKeys: distinct, as: Form(lastSchema.type)) else { return nil }
        let unreached = at.contains(nil) ? at.map { $0 == nil } : []
        return .targets(column, index: index, unreached: unreached)
    }

    /// The distinct keys of `keys` ascending, and for each position the index of its key among them (0 for a
    /// nil key, which stands for nothing). nil when every key is nil.
    static func distinctKeys(_ keys: [ObjectKey?], sorted: Bool) throws -> ([ObjectKey], [Int32])? {
        var index = [Int32](repeating: 0, count: keys.count)
        var distinct: [ObjectKey] = []
        if sorted {
            for (i, k) in keys.enumerated() {
                guard let k else { continue }
                if distinct.last != k { distinct.append(k) }
                index[i] = Int32(distinct.count - 1)
            }
        } else {
            var items: [SortItem] = []
            items.reserveCapacity(keys.count)
            for (i, k) in keys.enumerated() {
                if let k { items.append(SortItem(prefix: k.rawValue, index: Int32(i))) }
            }
            // Counted with the reads that follow, so no progress of its own.
            try Sorter.radixSort(&items, descending: false, progress: nil)
            for item in items {
                let k = ObjectKey(item.prefix)
                if distinct.last != k { distinct.append(k) }
                index[Int(item.index)] = Int32(distinct.count - 1)
            }
        }
        return distinct.isEmpty ? nil : (distinct, index)
    }

    /// The last step of an ordering path, as a path of its own (`value` follows the links before it).
    static func tail(_ path: BoundPath) -> BoundPath {
        var last = path
        if path.steps.count > 1 { last.steps = [path.steps[path.steps.count - 1]] }
        return last
    }

    /// The value of an ordering path (to-one links, then a value; `tail` is `Sorter.tail(path)`) for one
    /// object, or nil when a link on the way is null.
    func value(_ path: BoundPath, _ tail: BoundPath, _ key: ObjectKey, _ buffer: inout [Value]) throws -> Value? {
        var k = key
        for step in path.steps.dropLast() {
            guard case .toOne(let cls, let prop, _) = step else { break }
            guard case .link(let next) = try ex.snapshot.value(k, ex.handle(cls, prop)) else { return nil }
            k = next
        }
        try ex.gather(tail, k, into: &buffer)
        return buffer.first ?? .null
    }
}
