import RealmStorage

/// SORT and DISTINCT over key paths through to-one links.
///
/// Sort order, the same as `RealmDB`'s `sorted(byKeyPath:)`: null first, then numbers by value (across int,
/// float, double, decimal; NaN before every other number), strings by Unicode code point (UTF-8 bytes), data
/// bytewise, dates, object ids and uuids in their natural order; values of different kinds (in a mixed
/// property) by kind: bool, number, string, data, date, object id, uuid, link. Descending reverses all of this.
/// An object whose path meets a null link before its last property sorts after every value ascending and
/// before every value descending (Realm Core's `BaseDescriptor::Sorter`): `SORT(owner.name ASC)` puts the
/// objects without an owner last, after those whose owner has a null name. DISTINCT drops such objects, as
/// Realm's `DistinctDescriptor` does. The sort is stable: equal values keep the order they had.
struct Sorter {
    let ex: Executor
    let cls: String
    /// Counted and checked while values are read and sorted (`QueryProgress`); nil checks nothing.
    let progress: QueryProgress?

    init(_ ex: Executor, _ cls: String, progress: QueryProgress? = nil) {
        self.ex = ex
        self.cls = cls
        self.progress = progress
    }

    /// A column of sort values for the keys, strings kept as bytes in one buffer.
    enum Column {
        /// `unreached[i]`: the path of object i meets a null link (empty when none does).
        case strings(bytes: [UInt8], offsets: [Int], nulls: [Bool], unreached: [Bool])
        /// The values of an int property (a null as 0 with its flag), read without making `Value`s.
        case ints([Int64], nulls: [Bool], unreached: [Bool])
        /// Any other values; `unreached` as for strings.
        case values([Value], unreached: [Bool])
        /// Values reached through links: the column of the distinct objects reached (`targets`, without
        /// `unreached` of its own), and for each object the position of its target there (meaningless where
        /// `unreached`). The targets' values are ordered once, and each object takes its target's rank (one
        /// case for every kind of column, instead of a copy of each object's target value per kind). A string
        /// column of few distinct values is ordered the same way, its distinct values as the targets.
        indirect case targets(Column, index: [Int32], unreached: [Bool])
    }

    /// How `read` keeps a column: strings as bytes, ints as integers, anything else as values.
    enum Form {
        case strings, ints, values

        init(_ type: PropertyType) {
            self = type == .string ? .strings : type == .int ? .ints : .values
        }
    }

    func sort(_ keys: [ObjectKey], _ descriptors: [(path: BoundPath, ascending: Bool)], keysAreSorted: Bool) throws -> [ObjectKey] {
        if keys.count < 2 { return keys }
        if let walked = try indexWalk(keys, descriptors, keysAreSorted: keysAreSorted) { return walked }
        if descriptors.count == 1 {
            let column = try column(descriptors[0].path, keys, keysAreSorted: keysAreSorted)
            return try order(column, ascending: descriptors[0].ascending).map { keys[Int($0)] }
        }
        // Several columns: each is ordered on its own (the one-column sorts, `Sorter+Order.swift`), which gives each object the
        // rank of its value (equal values one rank); the objects are then sorted by their ranks, the first
        // column's before the next (`sortByRanks`), ties in key order.
        var ranked: [Ranked] = []
        for d in descriptors {
            let column = try column(d.path, keys, keysAreSorted: keysAreSorted)
            ranked.append(try order(column, ascending: d.ascending, ranked: true))
        }
        return try sortByRanks(ranked).map { keys[Int($0)] }
    }

    /// A column's positions in one descriptor's order and, when asked for, each position's rank in it: 0 for
    /// the first value, one more for each value that differs from the one before it (`distinct` of them).
    struct Ranked {
        var order: [Int32]
        var ranks: [Int32] = []
        var distinct = 0

        /// Ranks from the ordered positions and whether each differs from the one before it (`differs[0]` is
        /// ignored).
        init(order: [Int32], differs: (Int) -> Bool, ranked: Bool) {
            self.order = order
            guard ranked, !order.isEmpty else { return }
            ranks = [Int32](repeating: 0, count: order.count)
            var rank: Int32 = 0
            ranks.withUnsafeMutableBufferPointer { r in
                order.withUnsafeBufferPointer { o in
                    for j in 0..<o.count {
                        if j > 0 && differs(j) { rank += 1 }
                        r[Int(o[j])] = rank
                    }
                }
            }
            distinct = Int(rank) + 1
        }
    }

    /// The positions ordered by the ranks of several columns, the first column's first, equal ranks in
    /// position order: the ranks side by side in one 64-bit word, sorted by one stable radix sort; before a
    /// column's ranks would overflow the word, the columns so far are ranked again as one.
    func sortByRanks(_ columns: [Ranked]) throws -> [Int32] {
        try Sorter.itemsByRanks(columns, progress: progress).map(\.index)
    }

    /// `sortByRanks` as items whose `prefix` is equal exactly where every column's rank is.
    static func itemsByRanks(_ columns: [Ranked], progress: QueryProgress?) throws -> [SortItem] {
        let n = columns[0].ranks.count
        let widths = columns.map { Int.bitWidth - max(0, $0.distinct - 1).leadingZeroBitCount }
        var key = [UInt64](repeating: 0, count: n)
        var used = 0
        var items: [SortItem] = []
        for (c, column) in columns.enumerated() {
            if used + widths[c] > 64 {
                // The columns so far become one rank: their words sorted and ranked.
                items = (0..<Int32(n)).map { SortItem(prefix: key[Int($0)], index: $0) }
                try Sorter.radixSort(&items, descending: false, progress: progress)
                var rank: UInt64 = 0
                for j in items.indices {
                    if j > 0 && items[j].prefix != items[j - 1].prefix { rank += 1 }
                    key[Int(items[j].index)] = rank
                }
                used = Int.bitWidth - rank.leadingZeroBitCount
            }
            let shift = UInt64(widths[c])
            column.ranks.withUnsafeBufferPointer { r in
                key.withUnsafeMutableBufferPointer { k in
                    for i in 0..<n { k[i] = k[i] &<< shift | UInt64(UInt32(bitPattern: r[i])) }
                }
            }
            used += widths[c]
        }
        items = (0..<Int32(n)).map { SortItem(prefix: key[Int($0)], index: $0) }
        try Sorter.radixSort(&items, descending: false, progress: progress)
        return items
    }

    /// Sorts `order` by `less`; with a `progress`, counts the comparisons and checks every 65,536 of them
    /// (a throwing comparator stops the standard library's sort; the order is then dropped).
    @inline(__always)
    func sort(_ order: inout [Int32], by less: (Int32, Int32) -> Bool) throws {
        guard let progress else {
            order.sort(by: less)
            return
        }
        var n = 0
        try order.sort { x, y in
            n &+= 1
            if n & 0xFFFF == 0 { try progress.advance(by: 0x10000) }
            return less(x, y)
        }
    }

    /// A sort by one indexed string or int property of a good part of the class, in key order: the index
    /// already holds the objects in that order (equal values in key order, which is the stable order of
    /// key-ordered input), so walk it and keep the keys asked for. nil when that does not apply.
    func indexWalk(_ keys: [ObjectKey], _ descriptors: [(path: BoundPath, ascending: Bool)], keysAreSorted: Bool) throws -> [ObjectKey]? {
        guard keysAreSorted, descriptors.count == 1, let prop = descriptors[0].path.directProperty,
              let s = ex.schema(cls, prop), s.isIndexed, !s.isList, !s.isSet, s.type == .string || s.type == .int else { return nil }
        let table = try ex.table(cls)
        let total = try ex.snapshot.count(table)
        // Walking the whole index for a few keys costs more than sorting them.
        guard keys.count * 4 >= total, let (order, starts) = try ex.snapshot.keysInIndexOrder(ex.handle(cls, prop)) else { return nil }
        let everything = keys.count == order.count
        // Every object, ascending: the index's order is the answer.
        if everything && descriptors[0].ascending {
            try progress?.advance(by: keys.count)
            return order
        }
        let wanted: Set<ObjectKey> = everything ? [] : Set(keys)
        var out: [ObjectKey] = []
        out.reserveCapacity(keys.count)
        try progress?.advance(by: keys.count)
        if descriptors[0].ascending {
            for k in order where everything || wanted.contains(k) { out.append(k) }
        } else {
            // Runs of equal values from the last to the first, each in key order (a stable descending sort).
            var end = order.count
            for start in starts.reversed() {
                for k in order[start..<end] where everything || wanted.contains(k) { out.append(k) }
                end = start
            }
        }
        return out.count == keys.count ? out : nil
    }

    /// The first object of each distinct combination of values (equal as `==` in queries: strings bytewise).
    /// An object whose path meets a null link is dropped, as Realm Core does. The columns are read as for a sort;
    /// where equal in the order is equal as `distinct` means it, by ranks (`distinctByRanks`), else by hashing
    /// the values (floating point and mixed: `1` and `1.0` are one in the order but two values).
    func distinct(_ keys: [ObjectKey], _ paths: [BoundPath]) throws -> [ObjectKey] {
        let keysAreSorted = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
        let columns = try paths.map { try column($0, keys, keysAreSorted: keysAreSorted) }
        if keys.count >= 2, let kept = try distinctByRanks(keys, columns) { return kept }
        var seen = Set<[Value]>()
        var out: [ObjectKey] = []
        var combo: [Value] = []
        next: for i in keys.indices {
            if i & 0xFFFF == 0xFFFF { try progress?.check() }
            combo.removeAll(keepingCapacity: true)
            for c in columns {
                guard let v = c.distinctKey(at: i) else { continue next }
                combo.append(v)
            }
            if seen.insert(combo).inserted { out.append(keys[i]) }
        }
        return out
    }

    /// `distinct` for columns of strings, ints, bools and dates (nulls allowed), where equal in the sort's order
    /// is equal as `distinct` means it: each column ordered and ranked as for a sort, the ranks of several
    /// columns combined into one, and the first object of each rank kept. nil for other columns.
    func distinctByRanks(_ keys: [ObjectKey], _ columns: [Column]) throws -> [ObjectKey]? {
        var ranked: [Ranked] = []
        var dropped = [Bool](repeating: false, count: keys.count)
        for column in columns {
            switch column {
            case .values(let values, let nullLinks):
                guard Sorter.distinctAsOrdered(values) else { return nil }
                for (i, unreached) in nullLinks.enumerated() where unreached { dropped[i] = true }
            case .strings(_, _, _, let unreached), .ints(_, _, let unreached):
                for (i, u) in unreached.enumerated() where u { dropped[i] = true }
            case .targets(let targets, _, let unreached):
                if case .values(let values, _) = targets, !Sorter.distinctAsOrdered(values) { return nil }
                for (i, u) in unreached.enumerated() where u { dropped[i] = true }
            }
        }
        for column in columns { ranked.append(try order(column, ascending: true, ranked: true)) }
        guard !ranked.isEmpty else { return nil }
        // Objects of one combination of values are adjacent, the first of them (in the result's order) first.
        let items = try Sorter.itemsByRanks(ranked, progress: progress)
        var kept = [Bool](repeating: false, count: keys.count)
        for j in items.indices where j == 0 || items[j].prefix != items[j - 1].prefix { kept[Int(items[j].index)] = true }
        return keys.indices.filter { kept[$0] && !dropped[$0] }.map { keys[$0] }
    }

    /// Whether values equal in `compare`'s order are exactly the values `distinct` takes as equal: one kind of
    /// string, int, bool or date, and nulls.
    static func distinctAsOrdered(_ values: [Value]) -> Bool {
        var kind = -1
        for v in values {
            let k: Int
            switch v {
            case .null: continue
            case .string: k = 0
            case .int: k = 1
            case .bool: k = 2
            case .date: k = 3
            default: return false
            }
            if kind != k { if kind >= 0 { return false }; kind = k }
        }
        return true
    }

    static func distinctKey(_ v: Value) -> Value {
        switch v {
        case .string(let s): return .data(Array(s.utf8))  // bytewise, not by canonical equivalence
        case .double(let d) where d.isNaN: return .double(.nan)
        default: return v
        }
    }

    /// The kind of a value in the order (null, bool, numbers, strings, ...): Realm Core's, shared with sets.
    private static func rank(_ v: Value) -> Int { SetOrder.rank(v) }

    /// The total order of sort values described on `Sorter`.
    static func compare(_ a: Value, _ b: Value) -> Int {
        if let o = Semantics.order(a, b) { return o }
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        // Same kind but unordered: NaN among numbers, first.
        let na = Semantics.isNaN(a), nb = Semantics.isNaN(b)
        if na != nb { return na ? -1 : 1 }
        return 0
    }
}

extension Sorter.Column {
    /// Object `i`'s value as `distinct` compares it (`Sorter.distinctKey`); nil when its path meets a null link.
    func distinctKey(at i: Int) -> Value? {
        switch self {
        case .strings(let bytes, let offsets, let nulls, let unreached):
            if !unreached.isEmpty && unreached[i] { return nil }
            return nulls[i] ? .null : .data(Array(bytes[offsets[i]..<offsets[i + 1]]))
        case .ints(let ints, let nulls, let unreached):
            if !unreached.isEmpty && unreached[i] { return nil }
            return nulls[i] ? .null : .int(ints[i])
        case .values(let values, let unreached):
            if !unreached.isEmpty && unreached[i] { return nil }
            return Sorter.distinctKey(values[i])
        case .targets(let targets, let index, let unreached):
            if !unreached.isEmpty && unreached[i] { return nil }
            return targets.distinctKey(at: Int(index[i]))
        }
    }
}

/// The order `SORT` uses for stored values (nulls first, then by kind; numbers numerically across types;
/// strings by Unicode code point), public so that the object layer sorts the same way.
public enum ValueOrder {
    /// -1, 0 or 1.
    public static func compare(_ a: Value, _ b: Value) -> Int { Sorter.compare(a, b) }
}
