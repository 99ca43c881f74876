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
        case strings(bytes: [UInt8], offsets: [Int], nulls: [Bool])
        /// `nullLinks[i]`: the path of object i meets a null link (empty when the path follows no link).
        case values([Value], nullLinks: [Bool])
    }

    func column(_ path: BoundPath, _ keys: [ObjectKey], keysAreSorted: Bool) throws -> Column {
        if keysAreSorted, let prop = path.directProperty, let s = ex.schema(cls, prop), !s.isList {
            // One pass over the table's leaves, merging with the sorted keys: columns read in place.
            let h = try ex.handle(cls, prop)
            var bytes: [UInt8] = []
            var offsets: [Int] = [0]
            var nulls: [Bool] = []
            var values: [Value] = []
            let isString = s.type == .string
            if isString {
                offsets.reserveCapacity(keys.count + 1)
                nulls.reserveCapacity(keys.count)
            } else {
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
                for r in rows {
                    let row = Int(r)
                    if isString {
                        let isNull = try col.withUTF8(row) { bytes.append(contentsOf: $0) } == nil
                        nulls.append(isNull)
                        offsets.append(bytes.count)
                    } else {
                        values.append(try col.value(row))
                    }
                }
                found += rows.count
                try progress?.advance(by: i - first)
                return true
            }
            // Every key found (a key the table does not hold sends the sort the general way, which reports it).
            if found == keys.count { return isString ? .strings(bytes: bytes, offsets: offsets, nulls: nulls) : .values(values, nullLinks: []) }
        }
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
        let columns = try descriptors.map { try column($0.path, keys, keysAreSorted: keysAreSorted) }
        // A single string key: sorted by its first 8 bytes, then runs of equal prefixes by their bytes.
        if columns.count == 1, case .strings(let bytes, let offsets, let nulls) = columns[0] {
            return try sortStrings(keys, bytes: bytes, offsets: offsets, nulls: nulls, ascending: descriptors[0].ascending)
        }
        // A single column of ints, bools, floats, doubles or dates (and nulls): the same with the value as integers.
        if columns.count == 1, case .values(let vs, let nullLinks) = columns[0], nullLinks.isEmpty,
           let sorted = try sortNumbers(keys, vs, ascending: descriptors[0].ascending) {
            return sorted
        }
        var order = [Int32](0..<Int32(keys.count))
        try sort(&order) { x, y in
            let a = Int(x), c = Int(y)
            for (n, col) in columns.enumerated() {
                let o: Int
                switch col {
                case .values(let vs, let nullLinks):
                    if !nullLinks.isEmpty, nullLinks[a] || nullLinks[c] {
                        if nullLinks[a] == nullLinks[c] { continue }
                        // After every value ascending, before every value descending.
                        return descriptors[n].ascending ? nullLinks[c] : nullLinks[a]
                    }
                    o = Sorter.compare(vs[a], vs[c])
                case .strings(let bytes, let offsets, let nulls):
                    if nulls[a] || nulls[c] { o = nulls[a] == nulls[c] ? 0 : (nulls[a] ? -1 : 1) } else {
                        o = bytes.withUnsafeBytes { b in
                            Semantics.rawOrder(UnsafeRawBufferPointer(rebasing: b[offsets[a]..<offsets[a + 1]]),
                                               UnsafeRawBufferPointer(rebasing: b[offsets[c]..<offsets[c + 1]]))
                        }
                    }
                }
                if o != 0 { return descriptors[n].ascending ? o < 0 : o > 0 }
            }
            return a < c
        }
        return order.map { keys[Int($0)] }
    }

    /// The keys ordered by one string column: null first (last descending), then by UTF-8 bytes, equal values in
    /// the keys' order. Each value's first 8 bytes, big-endian, make one integer, sorted with the positions
    /// (`sortItems`); only a run of equal prefixes where a value is longer than 8 bytes or lengths differ (a NUL
    /// byte pads like the end) is sorted again by its bytes. A column of few distinct short values (names,
    /// cities) never reaches the bytes.
    func sortStrings(_ keys: [ObjectKey], bytes: [UInt8], offsets: [Int], nulls: [Bool], ascending: Bool) throws -> [ObjectKey] {
        var items: [SortItem] = []
        var nullItems: [Int32] = []
        items.reserveCapacity(keys.count)
        bytes.withUnsafeBufferPointer { b in
            for i in 0..<keys.count {
                if nulls[i] { nullItems.append(Int32(i)); continue }
                let s = offsets[i], e = offsets[i + 1]
                var p: UInt64 = 0
                for j in 0..<8 { p = p &<< 8 | UInt64(s + j < e ? b[s + j] : 0) }
                items.append(SortItem(prefix: p, index: Int32(i)))
            }
        }
        try sortItems(&items, ascending: ascending)
        // Runs of one prefix whose values may still differ: sorted by their bytes, stably (they are in key order).
        try bytes.withUnsafeBytes { b in
            func value(_ i: Int32) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: b[offsets[Int(i)]..<offsets[Int(i) + 1]])
            }
            var start = 0
            while start < items.count {
                var end = start + 1
                let p = items[start].prefix
                let length = offsets[Int(items[start].index) + 1] - offsets[Int(items[start].index)]
                var uniform = length <= 8
                while end < items.count && items[end].prefix == p {
                    let i = Int(items[end].index)
                    if offsets[i + 1] - offsets[i] != length { uniform = false }
                    end += 1
                }
                if end - start > 1 && !uniform {
                    try progress?.check()
                    items[start..<end].sort { x, y in
                        let o = Semantics.rawOrder(value(x.index), value(y.index))
                        return o != 0 ? (ascending ? o < 0 : o > 0) : x.index < y.index
                    }
                }
                start = end
            }
        }
        return Sorter.ordered(keys, items, nulls: nullItems, ascending: ascending)
    }

    /// The keys ordered by one column of ints, bools, floats, doubles or dates (nulls allowed), as `compare`
    /// orders them (nulls first, NaN before every other number and equal to itself, -0 equal to 0, dates by
    /// seconds then nanoseconds), equal values in the keys' order; nil when the values are of another kind or of
    /// more than one, which the general sort takes. Each value becomes an integer of the same order (a date two:
    /// its nanoseconds sorted first, then its seconds, both passes stable), so the sort compares two words.
    func sortNumbers(_ keys: [ObjectKey], _ values: [Value], ascending: Bool) throws -> [ObjectKey]? {
        var items: [SortItem] = []
        var nullItems: [Int32] = []
        items.reserveCapacity(values.count)
        enum Kind { case unknown, int, bool, floating, date }
        var kind = Kind.unknown
        // Dates: sorted by their nanoseconds first, then (stably) by their seconds.
        var seconds: [UInt64] = []
        for (i, v) in values.enumerated() {
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
                if kind == .unknown { seconds = [UInt64](repeating: 0, count: values.count) }
                kind = .date
                seconds[i] = UInt64(bitPattern: t.seconds) ^ (1 << 63)
                k = UInt64(UInt32(bitPattern: t.nanoseconds) ^ 0x8000_0000)
            default:
                return nil
            }
            items.append(SortItem(prefix: k, index: Int32(i)))
        }
        if kind == .date {
            // Two stable passes make the order of (seconds, nanoseconds), then position.
            try Sorter.radixSort(&items, descending: !ascending, progress: progress)
            for j in items.indices { items[j].prefix = seconds[Int(items[j].index)] }
            try Sorter.radixSort(&items, descending: !ascending, progress: progress)
        } else {
            try sortItems(&items, ascending: ascending)
        }
        return Sorter.ordered(keys, items, nulls: nullItems, ascending: ascending)
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

    /// The keys in the order of `items`, the null ones first (ascending) or last, in the keys' order.
    static func ordered(_ keys: [ObjectKey], _ items: [SortItem], nulls: [Int32], ascending: Bool) -> [ObjectKey] {
        var out: [ObjectKey] = []
        out.reserveCapacity(keys.count)
        if ascending { for i in nulls { out.append(keys[Int(i)]) } }
        for item in items { out.append(keys[Int(item.index)]) }
        if !ascending { for i in nulls { out.append(keys[Int(i)]) } }
        return out
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
