#if canImport(Glibc)
import Glibc
#endif
import RealmStorage

/// Ordering one column: its positions in one descriptor's order and, when asked for, the rank of each value.
extension Sorter {
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
        case .targets(let targets, let index, let unreached):
            // The targets' ranks are in this direction already: the objects go by them ascending, those behind a
            // null link where the direction puts them.
            let ranks = try order(targets, ascending: ascending, ranked: true).ranks
            var items: [SortItem] = []
            var unreachedItems: [Int32] = []
            items.reserveCapacity(index.count)
            for i in index.indices {
                if !unreached.isEmpty && unreached[i] { unreachedItems.append(Int32(i)); continue }
                items.append(SortItem(prefix: UInt64(ranks[Int(index[i])]), index: Int32(i)))
            }
            try Sorter.radixSort(&items, descending: false, progress: progress)
            return Sorter.ordered(items, nulls: [], unreached: unreachedItems, ascending: ascending,
                                  differs: ranked ? Sorter.prefixesDiffer(items) : [], ranked: ranked)
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
        // values are ordered once, and the objects by their value's rank among them, as the targets of a link are.
        if items.count >= 4_096, let (ids, firsts) = Sorter.fewDistinct(bytes: bytes, offsets: offsets, items: items) {
            var distinctBytes: [UInt8] = []
            var distinctOffsets = [0]
            for f in firsts {
                distinctBytes.append(contentsOf: bytes[offsets[Int(f)]..<offsets[Int(f) + 1]])
                distinctOffsets.append(distinctBytes.count)
            }
            var distinctNulls = [Bool](repeating: false, count: firsts.count)
            // The nulls are one more distinct value; positions behind a null link are set aside by `unreached`
            // before their index is read.
            let nullID = Int32(firsts.count)
            if !nullItems.isEmpty {
                distinctNulls.append(true)
                distinctOffsets.append(distinctBytes.count)
            }
            var index = [Int32](repeating: nullID, count: nulls.count)
            for j in items.indices { index[Int(items[j].index)] = ids[j] }
            let distinct = Column.strings(bytes: distinctBytes, offsets: distinctOffsets, nulls: distinctNulls, unreached: [])
            return try order(.targets(distinct, index: index, unreached: unreached), ascending: ascending, ranked: ranked)
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
}
