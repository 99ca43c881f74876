#if canImport(Glibc)
import Glibc
#endif
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
        /// `nullLinks[i]`: the path of object i meets a null link (empty when the path follows no link).
        case values([Value], nullLinks: [Bool])
    }

    /// How `read` keeps a column: strings as bytes, ints as integers, anything else as values.
    enum Form {
        case strings, ints, values

        init(_ type: PropertyType) {
            self = type == .string ? .strings : type == .int ? .ints : .values
        }
    }

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
        return .values(values, nullLinks: nullLinks)
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
        case .values: return .values(values, nullLinks: [])
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
        let nullLinks = at.map { $0 == nil }
        switch column {
        case .strings(let bytes, let offsets, let targetNulls, _):
            // Each object's string, copied from its target's (none behind a null link).
            var out: [UInt8] = []
            var outOffsets = [0]
            var nulls: [Bool] = []
            out.reserveCapacity(bytes.count)
            outOffsets.reserveCapacity(keys.count + 1)
            nulls.reserveCapacity(keys.count)
            for i in keys.indices {
                let t = Int(index[i])
                if at[i] != nil { out.append(contentsOf: bytes[offsets[t]..<offsets[t + 1]]) }
                outOffsets.append(out.count)
                nulls.append(at[i] != nil && targetNulls[t])
            }
            return .strings(bytes: out, offsets: outOffsets, nulls: nulls, unreached: nullLinks.contains(true) ? nullLinks : [])
        case .ints(let targetInts, let targetNulls, _):
            let ints = keys.indices.map { at[$0] == nil ? 0 : targetInts[Int(index[$0])] }
            let nulls = keys.indices.map { at[$0] != nil && targetNulls[Int(index[$0])] }
            return .ints(ints, nulls: nulls, unreached: nullLinks.contains(true) ? nullLinks : [])
        case .values(let targetValues, _):
            let values = keys.indices.map { at[$0] == nil ? Value.null : targetValues[Int(index[$0])] }
            return .values(values, nullLinks: nullLinks.contains(true) ? nullLinks : [])
        }
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

    func sort(_ keys: [ObjectKey], _ descriptors: [(path: BoundPath, ascending: Bool)], keysAreSorted: Bool) throws -> [ObjectKey] {
        if keys.count < 2 { return keys }
        if let walked = try indexWalk(keys, descriptors, keysAreSorted: keysAreSorted) { return walked }
        if descriptors.count == 1 {
            let column = try column(descriptors[0].path, keys, keysAreSorted: keysAreSorted)
            return try order(column, ascending: descriptors[0].ascending).map { keys[Int($0)] }
        }
        // Several columns: each is ordered on its own (the one-column sorts below), which gives each object the
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

    /// The positions of a column's values in the order of one sort descriptor, equal values in position order:
    /// nulls first (last descending); an object whose path meets a null link after every value (before every
    /// value descending).
    func order(_ column: Column, ascending: Bool) throws -> [Int32] {
        try order(column, ascending: ascending, ranked: false).order
    }

    /// `order`, with each position's rank when `ranked`.
    func order(_ column: Column, ascending: Bool, ranked: Bool) throws -> Ranked {
        switch column {
        case .strings(let bytes, let offsets, let nulls, let unreached):
            return try orderStrings(bytes: bytes, offsets: offsets, nulls: nulls, unreached: unreached, ascending: ascending,
                                    ranked: ranked)
        case .ints(let ints, let nulls, let unreached):
            var items: [SortItem] = []
            var nullItems: [Int32] = []
            var unreachedItems: [Int32] = []
            items.reserveCapacity(ints.count)
            for i in ints.indices {
                if !unreached.isEmpty && unreached[i] { unreachedItems.append(Int32(i)); continue }
                if nulls[i] { nullItems.append(Int32(i)); continue }
                items.append(SortItem(prefix: UInt64(bitPattern: ints[i]) ^ (1 << 63), index: Int32(i)))
            }
            try sortItems(&items, ascending: ascending)
            return Sorter.ordered(items, nulls: nullItems, unreached: unreachedItems, ascending: ascending,
                                  differs: ranked ? Sorter.prefixesDiffer(items) : [], ranked: ranked)
        case .values(let values, let nullLinks):
            return try orderValues(values, unreached: nullLinks, ascending: ascending, ranked: ranked)
        }
    }

    /// `order` of values (`unreached` as in `Column`): numbers and dates as integers, strings by their bytes,
    /// anything else (values of several kinds) by a comparison sort.
    func orderValues(_ values: [Value], unreached: [Bool] = [], ascending: Bool, ranked: Bool = false) throws -> Ranked {
        if let ordered = try orderNumbers(values, unreached: unreached, ascending: ascending, ranked: ranked) { return ordered }
        if values.allSatisfy({ if case .string = $0 { return true }; return $0.isNull }) {
            var bytes: [UInt8] = []
            var offsets = [0]
            var nulls: [Bool] = []
            offsets.reserveCapacity(values.count + 1)
            nulls.reserveCapacity(values.count)
            for v in values {
                if case .string(var s) = v { s.withUTF8 { bytes.append(contentsOf: $0) } }
                nulls.append(v.isNull)
                offsets.append(bytes.count)
            }
            return try orderStrings(bytes: bytes, offsets: offsets, nulls: nulls, unreached: unreached, ascending: ascending,
                                    ranked: ranked)
        }
        var reached: [Int32] = []
        var unreachedItems: [Int32] = []
        for i in values.indices {
            if !unreached.isEmpty && unreached[i] { unreachedItems.append(Int32(i)) } else { reached.append(Int32(i)) }
        }
        try sort(&reached) { x, y in
            let o = Sorter.compare(values[Int(x)], values[Int(y)])
            return o != 0 ? (ascending ? o < 0 : o > 0) : x < y
        }
        // Nulls are values here: `compare` orders them first.
        let items = reached.map { SortItem(prefix: 0, index: $0) }
        let differs = ranked ? items.indices.map { j in
            j == 0 || Sorter.compare(values[Int(items[j - 1].index)], values[Int(items[j].index)]) != 0
        } : []
        return Sorter.ordered(items, nulls: [], unreached: unreachedItems, ascending: ascending, differs: differs, ranked: ranked)
    }

    /// The positions of one string column in order: null first (last descending), then by UTF-8 bytes, equal
    /// values in position order. Each value's first 8 bytes, big-endian, make one integer, sorted with the positions
    /// (`sortItems`); only a run of equal prefixes where a value is longer than 8 bytes or lengths differ (a NUL
    /// byte pads like the end) is sorted again by its bytes. A column of few distinct short values (names,
    /// cities) never reaches the bytes.
    func orderStrings(bytes: [UInt8], offsets: [Int], nulls: [Bool], unreached: [Bool], ascending: Bool,
                      ranked: Bool = false) throws -> Ranked {
        var items: [SortItem] = []
        var nullItems: [Int32] = []
        var unreachedItems: [Int32] = []
        items.reserveCapacity(nulls.count)
        bytes.withUnsafeBufferPointer { b in
            for i in 0..<nulls.count {
                if !unreached.isEmpty && unreached[i] { unreachedItems.append(Int32(i)); continue }
                if nulls[i] { nullItems.append(Int32(i)); continue }
                items.append(SortItem(prefix: Sorter.eightBytes(b, from: offsets[i], to: offsets[i + 1]), index: Int32(i)))
            }
        }
        // A column of few distinct values longer than 8 bytes (breeds, cities, names shared by many): its distinct
        // values are ordered once, and the objects by their value's rank among them.
        if items.count >= 4_096, let (ids, firsts) = Sorter.fewDistinct(bytes: bytes, offsets: offsets, items: items) {
            var distinctBytes: [UInt8] = []
            var distinctOffsets = [0]
            for f in firsts {
                distinctBytes.append(contentsOf: bytes[offsets[Int(f)]..<offsets[Int(f) + 1]])
                distinctOffsets.append(distinctBytes.count)
            }
            let ranks = try orderStrings(bytes: distinctBytes, offsets: distinctOffsets,
                                         nulls: [Bool](repeating: false, count: firsts.count), unreached: [],
                                         ascending: ascending, ranked: true).ranks
            for j in items.indices { items[j].prefix = UInt64(ranks[Int(ids[j])]) }
            try Sorter.radixSort(&items, descending: false, progress: progress)
            return Sorter.ordered(items, nulls: nullItems, unreached: unreachedItems, ascending: ascending,
                                  differs: ranked ? Sorter.prefixesDiffer(items) : [], ranked: ranked)
        }
        try sortItems(&items, ascending: ascending)
        // `differs[j]`: item j's value is not item j - 1's (items of different prefixes differ).
        var differs = ranked ? [Bool](repeating: true, count: items.count) : []
        // Runs of one prefix whose values may still differ are ordered by their next 8 bytes the same way, and so
        // on (`refine`); a few values are sorted by comparing their bytes.
        try bytes.withUnsafeBytes { b in
            func value(_ i: Int32) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: b[offsets[Int(i)]..<offsets[Int(i) + 1]])
            }
            // Each value's length and bytes 8..<16 (zero-padded), in position order: a run of one first 8 bytes
            // is ordered from these without going back to the bytes, unless its values are longer than 16.
            var tails: [(next: UInt64, length: Int32)] = []
            if items.contains(where: { offsets[Int($0.index) + 1] - offsets[Int($0.index)] > 8 }) {
                tails = (0..<nulls.count).map { i in
                    (Sorter.eightBytes(b, from: offsets[i] + 8, to: offsets[i + 1]), Int32(offsets[i + 1] - offsets[i]))
                }
            }
            func length(_ i: Int32) -> Int { offsets[Int(i) + 1] - offsets[Int(i)] }
            /// Orders `items[lo..<hi]`, whose values agree on their first `depth` bytes (a value shorter than
            /// that padded with zeros), in position order now: by their bytes, ties in position order; and sets
            /// `differs` inside the range.
            func refine(_ lo: Int, _ hi: Int, depth: Int) throws {
                var run = Array(items[lo..<hi])
                var longest = 0
                var sameLength = true
                let first = length(items[lo].index)
                for j in run.indices {
                    let i = Int(run[j].index)
                    let n: Int
                    if depth == 8 && !tails.isEmpty {
                        (run[j].prefix, n) = (tails[i].next, Int(tails[i].length))
                    } else {
                        n = offsets[i + 1] - offsets[i]
                        run[j].prefix = Sorter.eightBytes(b, from: offsets[i] + depth, to: offsets[i + 1])
                    }
                    longest = max(longest, n)
                    if n != first { sameLength = false }
                }
                if longest <= depth {
                    // Equal but for trailing zeros: the shorter value is the smaller.
                    if !sameLength {
                        items[lo..<hi].sort { x, y in
                            let a = length(x.index), c = length(y.index)
                            return a != c ? (ascending ? a < c : a > c) : x.index < y.index
                        }
                    }
                    if ranked { for j in lo + 1..<hi { differs[j] = length(items[j].index) != length(items[j - 1].index) } }
                    return
                }
                if hi - lo <= 32 {
                    items[lo..<hi].sort { x, y in
                        let o = Semantics.rawOrder(value(x.index), value(y.index))
                        return o != 0 ? (ascending ? o < 0 : o > 0) : x.index < y.index
                    }
                    if ranked {
                        for j in lo + 1..<hi { differs[j] = Semantics.rawOrder(value(items[j - 1].index), value(items[j].index)) != 0 }
                    }
                    return
                }
                try progress?.check()
                let shared = items[lo].prefix
                try Sorter.radixSort(&run, descending: !ascending, progress: nil)
                var j = 0
                while j < run.count {
                    var k = j + 1
                    while k < run.count && run[k].prefix == run[j].prefix { k += 1 }
                    if ranked && j > 0 { differs[lo + j] = true }
                    for m in j..<k { items[lo + m] = SortItem(prefix: shared, index: run[m].index) }
                    if k - j > 1 { try refine(lo + j, lo + k, depth: depth + 8) }
                    j = k
                }
            }
            var start = 0
            while start < items.count {
                var end = start + 1
                let p = items[start].prefix
                while end < items.count && items[end].prefix == p { end += 1 }
                if end - start > 1 { try refine(start, end, depth: 8) }
                start = end
            }
        }
        return Sorter.ordered(items, nulls: nullItems, unreached: unreachedItems, ascending: ascending, differs: differs,
                              ranked: ranked)
    }

    /// For the values of `items` (in position order): each one's id among the distinct values (`ids[j]` for
    /// `items[j]`) and the position of each distinct value's first occurrence, when the values are few (at most
    /// one in 64 of them distinct, or 1,024) and some are longer than 8 bytes (shorter ones sort as integers
    /// anyway); nil otherwise, decided from the first 4,096 values when they are already too many.
    static func fewDistinct(bytes: [UInt8], offsets: [Int], items: [SortItem]) -> ([Int32], [Int32])? {
        let limit = min(1_024, items.count / 64)
        var slots = [Int32](repeating: -1, count: 4 * 1_024)
        let mask = slots.count - 1
        var firsts: [Int32] = []
        var ids = [Int32](repeating: 0, count: items.count)
        var long = false
        let found: Bool = bytes.withUnsafeBytes { b in
            for (j, item) in items.enumerated() {
                let i = Int(item.index)
                let start = offsets[i], count = offsets[i + 1] - start
                if count > 8 { long = true }
                // FNV-1a over the bytes; the table holds the first position of each value.
                var h: UInt64 = 0xcbf2_9ce4_8422_2325
                for k in 0..<count { h = (h ^ UInt64(b[start + k])) &* 0x100_0000_01b3 }
                var at = Int(truncatingIfNeeded: h ^ (h >> 32)) & mask
                while true {
                    let e = Int(slots[at])
                    if e < 0 {
                        if firsts.count == limit { return false }
                        slots[at] = Int32(firsts.count)
                        ids[j] = Int32(firsts.count)
                        firsts.append(item.index)
                        break
                    }
                    let f = Int(firsts[e])
                    let fs = offsets[f], fc = offsets[f + 1] - fs
                    if fc == count && (count == 0 || memcmp(b.baseAddress! + fs, b.baseAddress! + start, count) == 0) {
                        ids[j] = Int32(e)
                        break
                    }
                    at = (at + 1) & mask
                }
                if j == 4_095 && firsts.count > 64 { return false }
            }
            return true
        }
        return found && long ? (ids, firsts) : nil
    }

    /// The positions of one column of ints, bools, floats, doubles or dates (nulls allowed) in the order
    /// `compare` gives them (nulls first, NaN before every other number and equal to itself, -0 equal to 0, dates
    /// by seconds then nanoseconds), equal values in position order; nil when the values are of another kind or
    /// of more than one, which `orderValues` sorts otherwise. Each value becomes an integer of the same order (a date two:
    /// its nanoseconds sorted first, then its seconds, both passes stable), so the sort compares two words.
    func orderNumbers(_ values: [Value], unreached: [Bool] = [], ascending: Bool, ranked: Bool = false) throws -> Ranked? {
        var items: [SortItem] = []
        var nullItems: [Int32] = []
        var unreachedItems: [Int32] = []
        items.reserveCapacity(values.count)
        enum Kind { case unknown, int, bool, floating, date }
        var kind = Kind.unknown
        // Dates: sorted by their nanoseconds first, then (stably) by their seconds; both kept by position.
        var seconds: [UInt64] = []
        var nanoseconds: [UInt64] = []
        for (i, v) in values.enumerated() {
            if !unreached.isEmpty && unreached[i] {
                unreachedItems.append(Int32(i))
                continue
            }
            let k: UInt64
            switch v {
            case .null:
                nullItems.append(Int32(i))
                continue
            case .int(let x):
                guard kind == .unknown || kind == .int else { return nil }
                kind = .int
                k = UInt64(bitPattern: x) ^ (1 << 63)
            case .bool(let b):
                guard kind == .unknown || kind == .bool else { return nil }
                kind = .bool
                k = b ? 1 : 0
            case .double, .float:
                guard kind == .unknown || kind == .floating else { return nil }
                kind = .floating
                var d: Double
                if case .double(let x) = v { d = x } else if case .float(let x) = v { d = Double(x) } else { d = 0 }
                if d.isNaN {
                    k = 0
                } else {
                    if d == 0 { d = 0 }
                    let bits = d.bitPattern
                    k = bits >> 63 == 1 ? ~bits : bits | (1 << 63)
                }
            case .date(let t):
                guard kind == .unknown || kind == .date else { return nil }
                if kind == .unknown {
                    seconds = [UInt64](repeating: 0, count: values.count)
                    nanoseconds = [UInt64](repeating: 0, count: values.count)
                }
                kind = .date
                seconds[i] = UInt64(bitPattern: t.seconds) ^ (1 << 63)
                k = UInt64(UInt32(bitPattern: t.nanoseconds) ^ 0x8000_0000)
                nanoseconds[i] = k
            default:
                return nil
            }
            items.append(SortItem(prefix: k, index: Int32(i)))
        }
        var differs: [Bool] = []
        if kind == .date {
            // Two stable passes make the order of (seconds, nanoseconds), then position.
            try Sorter.radixSort(&items, descending: !ascending, progress: progress)
            for j in items.indices { items[j].prefix = seconds[Int(items[j].index)] }
            try Sorter.radixSort(&items, descending: !ascending, progress: progress)
            if ranked {
                differs = items.indices.map { j in
                    j == 0 || items[j].prefix != items[j - 1].prefix
                        || nanoseconds[Int(items[j].index)] != nanoseconds[Int(items[j - 1].index)]
                }
            }
        } else {
            try sortItems(&items, ascending: ascending)
            if ranked { differs = Sorter.prefixesDiffer(items) }
        }
        return Sorter.ordered(items, nulls: nullItems, unreached: unreachedItems, ascending: ascending, differs: differs,
                              ranked: ranked)
    }

    /// Bytes `start..<end` of `b` (at most 8 of them, zeros past `end`) as a big-endian integer: strings
    /// compare as these do, 8 bytes at a time.
    @inline(__always)
    static func eightBytes<B: RandomAccessCollection>(_ b: B, from start: Int, to end: Int) -> UInt64
        where B.Element == UInt8, B.Index == Int {
        var p: UInt64 = 0
        for k in 0..<8 { p = p &<< 8 | UInt64(start + k < end ? b[start + k] : 0) }
        return p
    }

    /// Whether each item's prefix differs from the one before it (the first: true).
    static func prefixesDiffer(_ items: [SortItem]) -> [Bool] {
        items.indices.map { $0 == 0 || items[$0].prefix != items[$0 - 1].prefix }
    }

    /// A value's order as an integer, and its position among the keys sorted.
    struct SortItem {
        var prefix: UInt64
        var index: Int32
    }

    /// Sorts by the integers (descending when not `ascending`), positions ascending among equal ones (`items`
    /// come in position order). From 1,024 items a radix sort, a byte per pass, skipping the bytes every item
    /// shares (ages of 0 to 20 take one pass); being stable, it keeps equal integers in position order. Below,
    /// the standard library's sort with the position as the tie-break. With a `progress`, counted and checked
    /// every pass or every 65,536 comparisons.
    func sortItems(_ items: inout [SortItem], ascending: Bool) throws {
        if items.count >= 1_024 {
            try Sorter.radixSort(&items, descending: !ascending, progress: progress)
            return
        }
        var n = 0
        let check = progress
        if ascending {
            try items.sort { x, y in
                if check != nil { n &+= 1; if n & 0xFFFF == 0 { try check?.advance(by: 0x10000) } }
                return x.prefix != y.prefix ? x.prefix < y.prefix : x.index < y.index
            }
        } else {
            try items.sort { x, y in
                if check != nil { n &+= 1; if n & 0xFFFF == 0 { try check?.advance(by: 0x10000) } }
                return x.prefix != y.prefix ? x.prefix > y.prefix : x.index < y.index
            }
        }
    }

    /// A stable least-significant-byte-first radix sort of `items` by `prefix` (descending: by its complement).
    static func radixSort(_ items: inout [SortItem], descending: Bool, progress: QueryProgress?) throws {
        let n = items.count
        guard n > 1 else { return }
        if descending { for i in 0..<n { items[i].prefix = ~items[i].prefix } }
        defer { if descending { for i in 0..<n { items[i].prefix = ~items[i].prefix } } }
        // One pass counts every byte position; a position where one value holds all items needs no pass.
        var counts = [Int](repeating: 0, count: 8 * 256)
        items.withUnsafeBufferPointer { it in
            counts.withUnsafeMutableBufferPointer { c in
                for item in it {
                    var p = item.prefix
                    for b in 0..<8 {
                        c[b &* 256 &+ Int(truncatingIfNeeded: p & 0xFF)] &+= 1
                        p &>>= 8
                    }
                }
            }
        }
        let unitsPerPass = max(0, QueryProgress.sortUnits(n) - n) / 8
        var other = [SortItem](repeating: SortItem(prefix: 0, index: 0), count: n)
        for b in 0..<8 {
            let shift = UInt64(b * 8)
            if counts[b * 256 + Int(truncatingIfNeeded: (items[0].prefix >> shift) & 0xFF)] == n {
                try progress?.advance(by: unitsPerPass)
                continue
            }
            var next = [Int](repeating: 0, count: 256)
            var sum = 0
            for v in 0..<256 {
                next[v] = sum
                sum += counts[b * 256 + v]
            }
            items.withUnsafeBufferPointer { from in
                other.withUnsafeMutableBufferPointer { to in
                    next.withUnsafeMutableBufferPointer { at in
                        for item in from {
                            let v = Int(truncatingIfNeeded: (item.prefix >> shift) & 0xFF)
                            to[at[v]] = item
                            at[v] &+= 1
                        }
                    }
                }
            }
            swap(&items, &other)
            try progress?.advance(by: unitsPerPass)
        }
    }

    /// The positions in the order of `items`, the null ones first (ascending) or last, in position order; when
    /// `ranked`, with ranks from `differs` (whether item j's value differs from item j - 1's), the nulls one rank.
    /// Objects whose path meets a null link (`unreached`) come after everything ascending, before it descending,
    /// in position order, one rank.
    static func ordered(_ items: [SortItem], nulls: [Int32], unreached: [Int32] = [], ascending: Bool, differs: [Bool],
                        ranked: Bool) -> Ranked {
        var out: [Int32] = []
        out.reserveCapacity(items.count + nulls.count + unreached.count)
        out.append(contentsOf: ascending ? nulls : unreached)
        let itemsStart = out.count
        for item in items { out.append(item.index) }
        let afterStart = out.count
        out.append(contentsOf: ascending ? unreached : nulls)
        // One value before the items, one after them, the items' own boundaries between.
        return Ranked(order: out, differs: { j in
            if j == itemsStart || j == afterStart { return true }
            let i = j - itemsStart
            return i > 0 && i < items.count ? differs[i] : false
        }, ranked: ranked)
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
    /// An object whose path meets a null link is dropped, as Realm Core does.
    func distinct(_ keys: [ObjectKey], _ paths: [BoundPath]) throws -> [ObjectKey] {
        if let kept = try distinctByRanks(keys, paths) { return kept }
        var seen = Set<[Value]>()
        var out: [ObjectKey] = []
        var buffer: [Value] = []
        let tails = paths.map(Sorter.tail)
        next: for (n, k) in keys.enumerated() {
            if n & 255 == 255 {
                ex.snapshot.releaseDecryptedPagesIfOverBudget()
                try progress?.check()
            }
            var combo: [Value] = []
            for (p, tail) in zip(paths, tails) {
                buffer.removeAll(keepingCapacity: true)
                guard let v = try value(p, tail, k, &buffer) else { continue next }
                combo.append(Sorter.distinctKey(v))
            }
            if seen.insert(combo).inserted { out.append(k) }
        }
        return out
    }

    /// `distinct` for columns of strings, ints, bools and dates (nulls allowed), where equal in the sort's order
    /// is equal as `distinct` means it: each column ordered and ranked as for a sort, the ranks of several
    /// columns combined into one, and the first object of each rank kept. nil for other columns (floating
    /// point, mixed and the rest keep the comparison of values).
    func distinctByRanks(_ keys: [ObjectKey], _ paths: [BoundPath]) throws -> [ObjectKey]? {
        guard keys.count >= 2 else { return nil }
        let keysAreSorted = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
        var ranked: [Ranked] = []
        var dropped = [Bool](repeating: false, count: keys.count)
        for path in paths {
            let column = try column(path, keys, keysAreSorted: keysAreSorted)
            switch column {
            case .values(let values, let nullLinks):
                guard Sorter.distinctAsOrdered(values) else { return nil }
                for (i, unreached) in nullLinks.enumerated() where unreached { dropped[i] = true }
            case .strings(_, _, _, let unreached), .ints(_, _, let unreached):
                for (i, u) in unreached.enumerated() where u { dropped[i] = true }
            }
            ranked.append(try order(column, ascending: true, ranked: true))
        }
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

/// The order `SORT` uses for stored values (nulls first, then by kind; numbers numerically across types;
/// strings by Unicode code point), public so that the object layer sorts the same way.
public enum ValueOrder {
    /// -1, 0 or 1.
    public static func compare(_ a: Value, _ b: Value) -> Int { Sorter.compare(a, b) }
}
