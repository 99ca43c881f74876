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
        if keysAreSorted, let prop = path.directProperty, let s = ex.schema(cls, prop), !s.isList,
           let column = try read(cls, prop, ofSortedKeys: keys, strings: s.type == .string) {
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
    /// read leaf by leaf in one pass over the table, columns read in place: strings as bytes when `strings`.
    /// nil when a key is not in the table (the general path reports it).
    func read(_ cls: String, _ prop: String, ofSortedKeys keys: [ObjectKey], strings: Bool) throws -> Column? {
        let h = try ex.handle(cls, prop)
        var bytes: [UInt8] = []
        var offsets: [Int] = [0]
        var nulls: [Bool] = []
        var values: [Value] = []
        if strings {
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
                if strings {
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
        guard found == keys.count else { return nil }
        return strings ? .strings(bytes: bytes, offsets: offsets, nulls: nulls) : .values(values, nullLinks: [])
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
                  case .values(let targets, _)? = try read(c, p, ofSortedKeys: distinct, strings: false) else { return nil }
            for i in at.indices {
                guard at[i] != nil else { continue }
                if case .link(let t) = targets[Int(index[i])] { at[i] = t } else { at[i] = nil }
            }
            sorted = false
        }
        let strings = lastSchema.type == .string
        guard let (distinct, index) = try Sorter.distinctKeys(at, sorted: sorted), try worthScanning(distinct, lastClass),
              let column = try read(lastClass, lastProp, ofSortedKeys: distinct, strings: strings) else { return nil }
        let nullLinks = at.map { $0 == nil }
        switch column {
        case .strings(let bytes, let offsets, let targetNulls) where !nullLinks.contains(true):
            // Each object's string, copied from its target's.
            var out: [UInt8] = []
            var outOffsets = [0]
            var nulls: [Bool] = []
            out.reserveCapacity(bytes.count)
            outOffsets.reserveCapacity(keys.count + 1)
            nulls.reserveCapacity(keys.count)
            for i in keys.indices {
                let t = Int(index[i])
                out.append(contentsOf: bytes[offsets[t]..<offsets[t + 1]])
                outOffsets.append(out.count)
                nulls.append(targetNulls[t])
            }
            return .strings(bytes: out, offsets: outOffsets, nulls: nulls)
        case .strings(let bytes, let offsets, let targetNulls):
            var values: [Value] = []
            values.reserveCapacity(keys.count)
            for i in keys.indices {
                let t = Int(index[i])
                values.append(at[i] == nil || targetNulls[t] ? .null
                              : .string(String(decoding: bytes[offsets[t]..<offsets[t + 1]], as: UTF8.self)))
            }
            return .values(values, nullLinks: nullLinks)
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
        // Several columns: each is ordered on its own (the one-column sorts below) and turned into ranks, equal
        // values one rank; then a stable radix sort by the ranks of the last column, then of the one before,
        // and so on to the first, leaves the objects in the order of the first column, ties broken by the
        // next, and so on, the remaining ties in key order.
        var items = (0..<Int32(keys.count)).map { SortItem(prefix: 0, index: $0) }
        for n in descriptors.indices.reversed() {
            let column = try column(descriptors[n].path, keys, keysAreSorted: keysAreSorted)
            let ranks = try Sorter.ranks(column, order(column, ascending: descriptors[n].ascending))
            for j in items.indices { items[j].prefix = UInt64(ranks[Int(items[j].index)]) }
            try Sorter.radixSort(&items, descending: false, progress: progress)
        }
        return items.map { keys[Int($0.index)] }
    }

    /// The positions of a column's values in the order of one sort descriptor, equal values in position order:
    /// nulls first (last descending); an object whose path meets a null link after every value (before every
    /// value descending).
    func order(_ column: Column, ascending: Bool) throws -> [Int32] {
        switch column {
        case .strings(let bytes, let offsets, let nulls):
            return try orderStrings(bytes: bytes, offsets: offsets, nulls: nulls, ascending: ascending)
        case .values(let values, let nullLinks):
            guard nullLinks.contains(true) else { return try orderValues(values, ascending: ascending) }
            var reached: [Value] = []
            var positions: [Int32] = []
            var unreached: [Int32] = []
            for (i, v) in values.enumerated() {
                if nullLinks[i] { unreached.append(Int32(i)) } else { reached.append(v); positions.append(Int32(i)) }
            }
            let ordered = try orderValues(reached, ascending: ascending).map { positions[Int($0)] }
            return ascending ? ordered + unreached : unreached + ordered
        }
    }

    /// `order` of values without null links: numbers and dates as integers, strings by their bytes, anything
    /// else (values of several kinds) by a comparison sort.
    func orderValues(_ values: [Value], ascending: Bool) throws -> [Int32] {
        if let ordered = try orderNumbers(values, ascending: ascending) { return ordered }
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
            return try orderStrings(bytes: bytes, offsets: offsets, nulls: nulls, ascending: ascending)
        }
        var order = [Int32](0..<Int32(values.count))
        try sort(&order) { x, y in
            let o = Sorter.compare(values[Int(x)], values[Int(y)])
            return o != 0 ? (ascending ? o < 0 : o > 0) : x < y
        }
        return order
    }

    /// For each position of `column`, the rank of its value in `order` (the column's positions ordered): 0 for
    /// the first value, one more for each value that differs from the one before it, the same for equal ones.
    static func ranks(_ column: Column, _ order: [Int32]) -> [Int32] {
        var ranks = [Int32](repeating: 0, count: order.count)
        guard order.count > 1 else { return ranks }
        var rank: Int32 = 0
        switch column {
        case .strings(let bytes, let offsets, let nulls):
            bytes.withUnsafeBytes { b in
                for j in 1..<order.count {
                    let x = Int(order[j - 1]), y = Int(order[j])
                    let same = nulls[x] || nulls[y] ? nulls[x] == nulls[y]
                        : Semantics.rawOrder(UnsafeRawBufferPointer(rebasing: b[offsets[x]..<offsets[x + 1]]),
                                             UnsafeRawBufferPointer(rebasing: b[offsets[y]..<offsets[y + 1]])) == 0
                    if !same { rank += 1 }
                    ranks[y] = rank
                }
            }
        case .values(let values, let nullLinks):
            for j in 1..<order.count {
                let x = Int(order[j - 1]), y = Int(order[j])
                let same = !nullLinks.isEmpty && (nullLinks[x] || nullLinks[y]) ? nullLinks[x] == nullLinks[y]
                    : compare(values[x], values[y]) == 0
                if !same { rank += 1 }
                ranks[y] = rank
            }
        }
        return ranks
    }

    /// The positions of one string column in order: null first (last descending), then by UTF-8 bytes, equal
    /// values in position order. Each value's first 8 bytes, big-endian, make one integer, sorted with the positions
    /// (`sortItems`); only a run of equal prefixes where a value is longer than 8 bytes or lengths differ (a NUL
    /// byte pads like the end) is sorted again by its bytes. A column of few distinct short values (names,
    /// cities) never reaches the bytes.
    func orderStrings(bytes: [UInt8], offsets: [Int], nulls: [Bool], ascending: Bool) throws -> [Int32] {
        var items: [SortItem] = []
        var nullItems: [Int32] = []
        items.reserveCapacity(nulls.count)
        bytes.withUnsafeBufferPointer { b in
            for i in 0..<nulls.count {
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
        return Sorter.ordered(items, nulls: nullItems, ascending: ascending)
    }

    /// The positions of one column of ints, bools, floats, doubles or dates (nulls allowed) in the order
    /// `compare` gives them (nulls first, NaN before every other number and equal to itself, -0 equal to 0, dates
    /// by seconds then nanoseconds), equal values in position order; nil when the values are of another kind or
    /// of more than one, which `orderValues` sorts otherwise. Each value becomes an integer of the same order (a date two:
    /// its nanoseconds sorted first, then its seconds, both passes stable), so the sort compares two words.
    func orderNumbers(_ values: [Value], ascending: Bool) throws -> [Int32]? {
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
        return Sorter.ordered(items, nulls: nullItems, ascending: ascending)
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

    /// The positions in the order of `items`, the null ones first (ascending) or last, in position order.
    static func ordered(_ items: [SortItem], nulls: [Int32], ascending: Bool) -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(items.count + nulls.count)
        if ascending { out.append(contentsOf: nulls) }
        for item in items { out.append(item.index) }
        if !ascending { out.append(contentsOf: nulls) }
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
        var combined: [Int32]? = nil
        var dropped = [Bool](repeating: false, count: keys.count)
        for path in paths {
            let column = try column(path, keys, keysAreSorted: keysAreSorted)
            if case .values(let values, let nullLinks) = column {
                guard Sorter.distinctAsOrdered(values) else { return nil }
                for (i, unreached) in nullLinks.enumerated() where unreached { dropped[i] = true }
            }
            let ranks = try Sorter.ranks(column, order(column, ascending: true))
            guard let previous = combined else { combined = ranks; continue }
            // The pair (earlier columns' rank, this column's) ranked again: equal pairs one rank.
            var items = (0..<Int32(keys.count)).map {
                SortItem(prefix: UInt64(UInt32(previous[Int($0)])) << 32 | UInt64(UInt32(ranks[Int($0)])), index: $0)
            }
            try Sorter.radixSort(&items, descending: false, progress: progress)
            var next = [Int32](repeating: 0, count: keys.count)
            var rank: Int32 = 0
            for j in items.indices {
                if j > 0 && items[j].prefix != items[j - 1].prefix { rank += 1 }
                next[Int(items[j].index)] = rank
            }
            combined = next
        }
        guard let combined else { return nil }
        var seen = [Bool](repeating: false, count: keys.count)
        var out: [ObjectKey] = []
        for (i, k) in keys.enumerated() where !dropped[i] && !seen[Int(combined[i])] {
            seen[Int(combined[i])] = true
            out.append(k)
        }
        return out
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
