#if canImport(Glibc)
import Glibc
#endif

/// A stable sort of strings by their UTF-8 bytes (shorter first on a common prefix), for the order of a string
/// property (`keysInStringOrder`, DECISIONS 107).
///
/// Each string becomes an entry holding its first 16 bytes as two big-endian numbers (zero past its end) and
/// its length capped at 17, which orders the strings of up to 16 bytes exactly: equal entries are equal strings.
/// The entries are sorted by a most-significant-first radix sort, a byte a level, with a digit all entries of a
/// bucket share skipped without moving them and buckets of up to 32 entries sorted by insertion. Each pass moves
/// entries in the order they came, so equal strings keep their order (their keys' order). Strings longer than
/// 16 bytes that share their first 16 are then ordered by their remaining bytes, positions breaking ties.
struct StringSort {
    /// A string: its first 16 bytes, its length (capped at 17), and its position in `keys` (24 bytes: the sort
    /// moves entries, and a smaller one is a faster sort).
    struct Entry {
        var hi: UInt64
        var lo: UInt64
        var position: UInt32
        var length: UInt8
    }

    var entries: [Entry] = []
    /// The object key of each string, in the order they were added (key order).
    var keys: [Int64] = []
    /// The bytes of the strings longer than 16 bytes, and for each such string (by position) where they start
    /// and end in `longBytes`.
    var longBytes: [UInt8] = []
    var longRanges: [UInt32: Range<Int>] = [:]

    /// Adds the string `bytes` of the object `key` (at most `UInt32.max` strings).
    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer, key: Int64) {
        let n = bytes.count
        let position = UInt32(truncatingIfNeeded: keys.count)
        var e = Entry(hi: 0, lo: 0, position: position, length: UInt8(min(n, 17)))
        if n > 0 {
            let p = bytes.baseAddress!
            e.hi = Self.load(p, min(n, 8))
            if n > 8 { e.lo = Self.load(p + 8, min(n - 8, 8)) }
        }
        if n > 16 {
            let start = longBytes.count
            longBytes.append(contentsOf: bytes)
            longRanges[position] = start..<longBytes.count
        }
        keys.append(key)
        entries.append(e)
    }

    /// `count` (0...8) bytes at `p` as the high bytes of a big-endian number.
    @inline(__always)
    static func load(_ p: UnsafeRawPointer, _ count: Int) -> UInt64 {
        if count == 8 { return UInt64(bigEndian: p.loadUnaligned(as: UInt64.self)) }
        var v: UInt64 = 0
        for j in 0..<count { v |= UInt64(p.load(fromByteOffset: j, as: UInt8.self)) << UInt64(56 - 8 * j) }
        return v
    }

    /// Sorts the entries.
    mutating func sort() {
        let n = entries.count
        let scratch = UnsafeMutableBufferPointer<Entry>.allocate(capacity: max(n, 1))
        defer { scratch.deallocate() }
        let all = longBytes, ranges = longRanges
        all.withUnsafeBytes { b in
            entries.withUnsafeMutableBufferPointer { e in
                Level(bytes: b, ranges: ranges).sort(e, scratch, intoOther: false)
            }
        }
    }

    /// Whether entries `a` and `b` (sorted) hold the same string.
    func same(_ a: Int, _ b: Int) -> Bool {
        let x = entries[a], y = entries[b]
        guard x.hi == y.hi, x.lo == y.lo, x.length == y.length else { return false }
        if x.length < 17 { return true }
        return longBytes.withUnsafeBytes { b in Level(bytes: b, ranges: longRanges).compareTails(x, y) == 0 }
    }

    /// The sort over the entries, with the bytes of the long strings.
    private struct Level {
        let bytes: UnsafeRawBufferPointer
        let ranges: [UInt32: Range<Int>]

        /// Digit `d` of an entry: bytes 0–15, then the length.
        @inline(__always) static func digit(_ e: Entry, _ d: Int) -> Int {
            if d < 8 { return Int(truncatingIfNeeded: (e.hi >> UInt64(56 - 8 * d)) & 0xFF) }
            if d < 16 { return Int(truncatingIfNeeded: (e.lo >> UInt64(56 - 8 * (d - 8))) & 0xFF) }
            return Int(e.length)
        }

        @inline(__always) static func less(_ a: Entry, _ b: Entry) -> Bool {
            a.hi != b.hi ? a.hi < b.hi : (a.lo != b.lo ? a.lo < b.lo : a.length < b.length)
        }

        /// The bytes after the 16th of two long strings, in byte order: -1, 0 or 1.
        func compareTails(_ a: Entry, _ b: Entry) -> Int {
            let x = UnsafeRawBufferPointer(rebasing: bytes[ranges[a.position] ?? (0..<0)])
            let y = UnsafeRawBufferPointer(rebasing: bytes[ranges[b.position] ?? (0..<0)])
            let m = min(x.count, y.count) - 16
            if m > 0 {
                let c = memcmp(x.baseAddress! + 16, y.baseAddress! + 16, m)
                if c != 0 { return c < 0 ? -1 : 1 }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        }

        /// Sorts the entries of `e` into `e` (`intoOther` false) or into `other` (as long). A level scatters the
        /// entries into the other buffer by their first digit that differs, and its buckets are sorted from there,
        /// so that no level copies its entries back. Each level sorts by a digit after those its entries share, so
        /// the recursion is at most 17 deep.
        func sort(_ e: UnsafeMutableBufferPointer<Entry>, _ other: UnsafeMutableBufferPointer<Entry>, intoOther: Bool) {
            let n = e.count
            if n <= 32 {
                // Insertion sort: stable, since only a smaller entry moves before another.
                if n > 1 {
                    for i in 1..<n {
                        let x = e[i]
                        var j = i
                        while j > 0 && Self.less(x, e[j - 1]) { e[j] = e[j - 1]; j -= 1 }
                        e[j] = x
                    }
                    sortLongRuns(e)
                }
                if intoOther && n > 0 { other.baseAddress!.update(from: e.baseAddress!, count: n) }
                return
            }
            // The first digit where the entries differ, found in one pass.
            let f = e[0]
            var dh: UInt64 = 0, dl: UInt64 = 0, dlength = false
            for i in 1..<n {
                dh |= e[i].hi ^ f.hi
                dl |= e[i].lo ^ f.lo
                dlength = dlength || e[i].length != f.length
            }
            let d: Int
            if dh != 0 { d = dh.leadingZeroBitCount / 8 } else if dl != 0 { d = 8 + dl.leadingZeroBitCount / 8 } else if dlength { d = 16 } else {
                // Every digit shared: one string of up to 16 bytes, or long strings sharing their first 16.
                sortLongRuns(e)
                if intoOther { other.baseAddress!.update(from: e.baseAddress!, count: n) }
                return
            }
            let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: 256)
            defer { counts.deallocate() }
            counts.initialize(repeating: 0)
            for i in 0..<n { counts[Self.digit(e[i], d)] += 1 }
            var sum = 0
            for k in 0..<256 {
                let c = counts[k]
                counts[k] = sum
                sum += c
            }
            for i in 0..<n {
                let k = Self.digit(e[i], d)
                other[counts[k]] = e[i]
                counts[k] += 1
            }
            // The entries are in `other` now; `counts[k]` ends bucket k. A bucket sorted from there ends where asked.
            var start = 0
            for k in 0..<256 {
                let end = counts[k]
                if end - start > 1 {
                    sort(UnsafeMutableBufferPointer(rebasing: other[start..<end]), UnsafeMutableBufferPointer(rebasing: e[start..<end]),
                         intoOther: !intoOther)
                } else if end - start == 1 && !intoOther {
                    e[start] = other[start]
                }
                start = end
            }
        }

        /// Orders each run of entries with the same 16 bytes and a length over 16 by the bytes after them (an
        /// entry's position breaking ties: the order they came in).
        func sortLongRuns(_ e: UnsafeMutableBufferPointer<Entry>) {
            var start = 0
            while start < e.count {
                var end = start + 1
                while end < e.count && e[end].hi == e[start].hi && e[end].lo == e[start].lo && e[end].length == e[start].length { end += 1 }
                if e[start].length == 17 && end - start > 1 {
                    var run = UnsafeMutableBufferPointer(rebasing: e[start..<end])
                    run.sort { a, b in
                        let c = compareTails(a, b)
                        return c != 0 ? c < 0 : a.position < b.position
                    }
                }
                start = end
            }
        }
    }
}

extension RealmCoreFile {
    /// The keys of `cls`'s objects ordered by the string property's UTF-8 bytes, nulls first and equal strings
    /// in key order, with where each run of equal strings starts: the column read in place, leaf by leaf, then
    /// sorted (`StringSort`). Realm Core's own index does not keep this order (DECISIONS 100, 110).
    public func keysInStringOrder(of cls: CoreClass, property: CoreProperty) throws -> (keys: [Int64], runStarts: [Int]) {
        var sorter = StringSort()
        var nulls: [Int64] = []
        sorter.entries.reserveCapacity(cls.objectCount)
        sorter.keys.reserveCapacity(cls.objectCount)
        guard cls.objectCount <= Int(UInt32.max) else {
            throw RealmCoreFileError.noSuchObject(className: cls.name, detail: "more than \(UInt32.max) objects to sort")
        }
        try forEachLeaf(of: cls) { leaf in
            let column = try leaf.column(property)
            if case .shortStrings(let node) = column.layout {
                // The common leaf, read slot by slot.
                let w = node.width, nullable = column.nullable
                for i in 0..<leaf.count {
                    if node.isNullShortString(i) {
                        if nullable { nulls.append(leaf.key(i)) } else { sorter.append(UnsafeRawBufferPointer(start: nil, count: 0), key: leaf.key(i)) }
                    } else {
                        let pad = Int(node.payload.load(fromByteOffset: i * w + w - 1, as: UInt8.self))
                        sorter.append(UnsafeRawBufferPointer(start: node.payload + i * w, count: w - 1 - pad), key: leaf.key(i))
                    }
                }
                return true
            }
            for i in 0..<leaf.count {
                let key = leaf.key(i)
                if !(try column.withStringBytes(i, { sorter.append($0, key: key) })) { nulls.append(key) }
            }
            return true
        }
        sorter.sort()
        var out = nulls, starts: [Int] = nulls.isEmpty ? [] : [0]
        out.reserveCapacity(nulls.count + sorter.entries.count)
        for j in 0..<sorter.entries.count {
            if j == 0 || !sorter.same(j - 1, j) { starts.append(out.count) }
            out.append(sorter.keys[Int(sorter.entries[j].position)])
        }
        return (out, starts)
    }
}
