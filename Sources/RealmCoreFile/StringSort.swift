import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A stable sort of strings by their UTF-8 bytes (shorter first on a common prefix), for the order of a string
/// property (`keysInStringOrder`, DECISIONS 107, 120).
///
/// Each string becomes an entry of 16 bytes holding its first 11 bytes as big-endian numbers (zero past its end),
/// its length capped at 12 and its position, which orders the strings of up to 11 bytes exactly (equal strings
/// by position, so any sort of the entries is stable).
/// The entries are sorted by a most-significant-first radix sort, a byte a level, with a digit all entries of a
/// bucket share skipped without moving them and buckets of up to 32 entries sorted by insertion. Each pass moves
/// entries in the order they came, so equal strings keep their order (their keys' order). Strings longer than
/// 11 bytes that share their first 11 are then ordered by their remaining bytes, positions breaking ties.
///
/// The column is read in runs of leaves, one per thread (`RealmCoreFile.forEachLeaf(of:firsts:)`), each run
/// writing the entries of its objects into its own part of one buffer and noting where its entries first
/// differ; the first level's scatter is done run by run on the same threads (a run's entries go after those of
/// the runs before it in each bucket, so the order stays stable), and its buckets are shared out between them.
final class StringSort: @unchecked Sendable {
    // Safe: run `i` writes only `parts[i]`, the `keys` slots of the objects of its leaves and the `entries` slots
    // from its first leaf's position on (one an object at most, so below the next run's first); in the sort, run
    // `i` writes only its own counts and the scatter slots they give it, then only the slots of its buckets.
    // Every phase ends (`concurrentPerform` returns) before the next reads what it wrote.

    /// A string: its first 11 bytes, its length (capped at 12) and its object's position, in 16 bytes (the sort
    /// moves entries: a smaller one is a faster sort). Compared as (`hi`, `lo`), entries are in byte order, then
    /// by length, then by position.
    struct Entry {
        /// Bytes 0–7, big-endian.
        var hi: UInt64
        /// Bytes 8–10 (big-endian, in the top three bytes), the length capped at 12, then the position.
        var lo: UInt64

        var position: UInt32 { UInt32(truncatingIfNeeded: lo) }
        var length: Int { Int(truncatingIfNeeded: (lo >> 32) & 0xFF) }
        /// `lo` without the position: what the string's entry holds of it beyond its first 8 bytes.
        var rest: UInt64 { lo >> 32 }
    }

    /// The bytes of a string an entry holds; a longer one has the capped length `prefix + 1`.
    static let prefix = 11

    /// What one run read: where its entries start in `entries`, how many, the keys of its nulls, the bytes of
    /// its strings longer than `prefix` bytes (by position: where they lie in `longBytes`), and the bits in which its
    /// entries differ from its first.
    struct Part {
        var start = 0
        /// The position after its last leaf.
        var end = 0
        var count = 0
        var nulls: [Int64] = []
        var longBytes: [UInt8] = []
        var longRanges: [UInt32: Range<Int>] = [:]
        var first: Entry?
        var differentHi: UInt64 = 0
        /// Of `lo`, the bytes and the length only (`Entry.rest`).
        var differentRest: UInt64 = 0
        /// Why the run stopped, if it failed.
        var error: (any Error)?
    }

    let objects: Int
    let runs: Int
    /// The entries, then (after `sort`) the sorted entries in `0..<sortedCount`.
    let entries: UnsafeMutableBufferPointer<Entry>
    let scratch: UnsafeMutableBufferPointer<Entry>
    /// The object key at each position.
    let keys: UnsafeMutableBufferPointer<Int64>
    let parts: UnsafeMutablePointer<Part>
    private(set) var sortedCount = 0
    /// The bytes of every string longer than `prefix` bytes, and where each one's lie (by position).
    private(set) var longBytes: [UInt8] = []
    private(set) var longRanges: [UInt32: Range<Int>] = [:]

    init(objects: Int, runs: Int) {
        self.objects = objects
        self.runs = runs
        entries = .allocate(capacity: max(objects, 1))
        scratch = .allocate(capacity: max(objects, 1))
        keys = .allocate(capacity: max(objects, 1))
        parts = .allocate(capacity: runs)
        parts.initialize(repeating: Part(), count: runs)
    }

    deinit {
        entries.deallocate()
        scratch.deallocate()
        keys.deallocate()
        parts.deinitialize(count: runs)
        parts.deallocate()
    }

    /// Run `i`'s part of `cls`'s column of `property`: the leaves starting in `firsts`.
    func read(run i: Int, of file: RealmCoreFile, _ cls: CoreClass, _ property: CoreProperty, firsts: Range<Int>) throws {
        var part = Part()
        var started = false
        try file.forEachLeaf(of: cls, firsts: firsts) { leaf in
            let base = leaf.firstPosition
            if !started {
                part.start = base
                started = true
            }
            guard base >= 0, leaf.count <= objects - base else {
                throw RealmCoreFileError.corrupt(what: "a leaf of \(leaf.count) objects at position \(base) in a class of \(objects)",
                                                 offset: leaf.cluster?.ref ?? 0, context: "class '\(cls.name)'")
            }
            part.end = base + leaf.count
            let column = try leaf.column(property)
            if case .shortStrings(let node) = column.layout {
                // The common leaf, read slot by slot.
                let w = node.width, nullable = column.nullable
                for j in 0..<leaf.count {
                    let key = leaf.key(j)
                    keys[base + j] = key
                    if node.isNullShortString(j) {
                        if nullable { part.nulls.append(key) } else { add(UnsafeRawBufferPointer(start: nil, count: 0), base + j, &part) }
                    } else {
                        let pad = Int(node.payload.load(fromByteOffset: j * w + w - 1, as: UInt8.self))
                        add(UnsafeRawBufferPointer(start: node.payload + j * w, count: w - 1 - pad), base + j, &part)
                    }
                }
                return true
            }
            for j in 0..<leaf.count {
                let key = leaf.key(j)
                keys[base + j] = key
                if !(try column.withStringBytes(j, { add($0, base + j, &part) })) { part.nulls.append(key) }
            }
            return true
        }
        parts[i] = part
    }

    /// Adds the string `bytes` of the object at `position` to `part`.
    @inline(__always)
    private func add(_ bytes: UnsafeRawBufferPointer, _ position: Int, _ part: inout Part) {
        let n = bytes.count
        var e = Entry(hi: 0, lo: UInt64(min(n, Self.prefix + 1)) << 32 | UInt64(UInt32(truncatingIfNeeded: position)))
        if n > 0 {
            let p = bytes.baseAddress!
            e.hi = Self.load(p, min(n, 8))
            if n > 8 { e.lo |= Self.load(p + 8, min(n - 8, 3)) }
        }
        if n > Self.prefix {
            let start = part.longBytes.count
            part.longBytes.append(contentsOf: bytes)
            part.longRanges[e.position] = start..<part.longBytes.count
        }
        if let f = part.first {
            part.differentHi |= e.hi ^ f.hi
            part.differentRest |= e.rest ^ f.rest
        } else {
            part.first = e
        }
        entries[part.start + part.count] = e
        part.count += 1
    }

    /// `count` (0...8) bytes at `p` as the high bytes of a big-endian number.
    @inline(__always)
    static func load(_ p: UnsafeRawPointer, _ count: Int) -> UInt64 {
        if count == 8 { return UInt64(bigEndian: p.loadUnaligned(as: UInt64.self)) }
        var v: UInt64 = 0
        for j in 0..<count { v |= UInt64(p.load(fromByteOffset: j, as: UInt8.self)) << UInt64(56 - 8 * j) }
        return v
    }

    /// The keys of the nulls, run after run (key order).
    var nulls: [Int64] { (0..<runs).flatMap { parts[$0].nulls } }

    /// Sorts the entries read into `entries[0..<sortedCount]`; the first level takes two digits at once from
    /// `wideFrom` entries on.
    func sort(wideFrom: Int = 65_536) {
        var first: Entry?
        var dh: UInt64 = 0, dr: UInt64 = 0, total = 0
        for i in 0..<runs {
            let p = parts[i]
            total += p.count
            guard let f = p.first else { continue }
            if first == nil { first = f }
            dh |= p.differentHi | (f.hi ^ first!.hi)
            dr |= p.differentRest | (f.rest ^ first!.rest)
            if !p.longRanges.isEmpty {
                let shift = longBytes.count
                longBytes += p.longBytes
                for (position, range) in p.longRanges { longRanges[position] = (range.lowerBound + shift)..<(range.upperBound + shift) }
            }
        }
        sortedCount = total
        let d = Level.firstDigit(differentHi: dh, differentRest: dr) ?? -1
        let all = longBytes, ranges = longRanges
        guard total > 32, d >= 0 else {
            // Few entries or one string: the entries together at the start, sorted there.
            var at = 0
            for i in 0..<runs {
                let p = parts[i]
                if p.start != at && p.count > 0 { (entries.baseAddress! + at).update(from: entries.baseAddress! + p.start, count: p.count) }
                at += p.count
            }
            all.withUnsafeBytes { b in
                Level(bytes: b, ranges: ranges).sort(UnsafeMutableBufferPointer(rebasing: entries[0..<total]),
                                                     UnsafeMutableBufferPointer(rebasing: scratch[0..<total]), intoOther: false)
            }
            return
        }
        // The first level, by digits `d` and `d + 1` together when there are two (one pass over the whole class
        // fewer; the deeper levels sort buckets that fit in the caches): every run counts its entries by digit,
        // then scatters them into `scratch`, after those of the runs before it in each bucket.
        let wide = d < Level.digits - 1 && total >= wideFrom
        let buckets = wide ? 65_536 : 256
        @inline(__always) func digit(_ e: Entry) -> Int {
            wide ? Level.digit(e, d) << 8 | Level.digit(e, d + 1) : Level.digit(e, d)
        }
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: runs * buckets)
        defer { counts.deallocate() }
        counts.initialize(repeating: 0)
        concurrently(runs) { i in
            let p = self.parts[i]
            let mine = counts.baseAddress! + i * buckets
            for j in p.start..<(p.start + p.count) { mine[digit(self.entries[j])] += 1 }
        }
        var bucketEnds = [Int](repeating: 0, count: buckets)
        var sum = 0
        for b in 0..<buckets {
            for i in 0..<runs {
                let c = counts[i * buckets + b]
                counts[i * buckets + b] = sum
                sum += c
            }
            bucketEnds[b] = sum
        }
        concurrently(runs) { i in
            let p = self.parts[i]
            let mine = counts.baseAddress! + i * buckets
            for j in p.start..<(p.start + p.count) {
                let e = self.entries[j]
                let k = digit(e)
                self.scratch[mine[k]] = e
                mine[k] += 1
            }
        }
        // The buckets, shared out by size: run `i` sorts those that start in its share of the entries, from
        // `scratch` into `entries`.
        let ends = bucketEnds
        concurrently(runs) { i in
            let from = total * i / self.runs, to = total * (i + 1) / self.runs
            all.withUnsafeBytes { b in
                let level = Level(bytes: b, ranges: ranges)
                var start = 0
                for k in 0..<buckets {
                    let end = ends[k]
                    defer { start = end }
                    guard start >= from, start < to else { continue }
                    if end - start > 1 {
                        level.sort(UnsafeMutableBufferPointer(rebasing: self.scratch[start..<end]),
                                   UnsafeMutableBufferPointer(rebasing: self.entries[start..<end]), intoOther: true)
                    } else if end - start == 1 {
                        self.entries[start] = self.scratch[start]
                    }
                }
            }
        }
    }

    /// The keys in order, nulls first, and where each run of equal strings starts; written in `runs` parts on as
    /// many threads.
    func output() -> (keys: [Int64], runStarts: [Int]) {
        var starts: [Int] = []
        let keys = [Int64](unsafeUninitializedCapacity: objects) { buffer, count in
            (count, starts) = output(into: buffer)
        }
        return (keys, starts)
    }

    /// `output`, the keys written into `buffer` (at least `objects` long): how many, and the run starts.
    func output(into buffer: UnsafeMutableBufferPointer<Int64>) -> (count: Int, runStarts: [Int]) {
        let nulls = self.nulls
        let m = sortedCount, skip = nulls.count
        // Every object read once (the runs' leaves do not overlap), as a null or an entry.
        precondition(skip + m <= objects && buffer.count >= objects, "a buffer of \(buffer.count) for \(skip + m) keys")
        let starts = UnsafeMutablePointer<[Int]>.allocate(capacity: runs)
        starts.initialize(repeating: [], count: runs)
        defer {
            starts.deinitialize(count: runs)
            starts.deallocate()
        }
        let out = buffer.baseAddress!
        for (i, k) in nulls.enumerated() { (out + i).initialize(to: k) }
        concurrently(runs) { c in
            let from = m * c / self.runs, to = m * (c + 1) / self.runs
            var mine: [Int] = []
            for j in from..<to {
                if j == 0 || !self.same(j - 1, j) { mine.append(skip + j) }
                (out + skip + j).initialize(to: self.keys[Int(self.entries[j].position)])
            }
            starts[c] = mine
        }
        return (skip + m, (skip > 0 ? [0] : []) + (0..<runs).flatMap { starts[$0] })
    }

    /// Whether sorted entries `a` and `b` hold the same string.
    @inline(__always)
    func same(_ a: Int, _ b: Int) -> Bool {
        let x = entries[a], y = entries[b]
        guard x.hi == y.hi, x.rest == y.rest else { return false }
        if x.length <= Self.prefix { return true }
        return longBytes.withUnsafeBytes { b in Level(bytes: b, ranges: longRanges).compareTails(x, y) == 0 }
    }

    /// Runs `work(i)` for `i` in `0..<count`, each on a thread of its own (on this one for one).
    func concurrently(_ count: Int, _ work: @escaping (Int) -> Void) {
        if count == 1 { return work(0) }
        let box = Work(work)
        DispatchQueue.concurrentPerform(iterations: count) { i in box.work(i) }
    }

    /// A closure the threads of `concurrently` share, held on the heap.
    private final class Work: @unchecked Sendable {
        // Safe: `work` does not change; what it writes is described on `StringSort`.
        let work: (Int) -> Void
        init(_ work: @escaping (Int) -> Void) { self.work = work }
    }
}

extension RealmCoreFile {
    /// The keys of `cls`'s objects ordered by the string property's UTF-8 bytes, nulls first and equal strings
    /// in key order, with where each run of equal strings starts: the column read in place, leaf by leaf, then
    /// sorted (`StringSort`), both in `runs` runs on as many threads. Realm Core's own index does not keep this
    /// order (DECISIONS 100, 110).
    public func keysInStringOrder(of cls: CoreClass, property: CoreProperty, runs: Int = 1) throws -> (keys: [Int64], runStarts: [Int]) {
        try keysInStringOrder(of: cls, property: property, runs: runs, wideFrom: 65_536)
    }

    /// `keysInStringOrder`, the keys written into `buffer`, which holds at least `cls.objectCount` (a caller
    /// that keeps keys of another type of the same layout writes them where they end up): how many were
    /// written, and where each run of equal strings starts.
    public func keysInStringOrder(of cls: CoreClass, property: CoreProperty, runs: Int = 1,
                                  into buffer: UnsafeMutableBufferPointer<Int64>) throws -> (count: Int, runStarts: [Int]) {
        precondition(buffer.count >= cls.objectCount, "a buffer of \(buffer.count) for \(cls.objectCount) keys")
        return try sortByString(cls, property, runs: runs, wideFrom: 65_536).output(into: buffer)
    }

    /// `keysInStringOrder`, the first level of the sort by two digits from `wideFrom` entries on (tests take it
    /// down to sort small classes that way).
    func keysInStringOrder(of cls: CoreClass, property: CoreProperty, runs: Int, wideFrom: Int) throws -> (keys: [Int64], runStarts: [Int]) {
        try sortByString(cls, property, runs: runs, wideFrom: wideFrom).output()
    }

    /// The column of `property` read and sorted.
    func sortByString(_ cls: CoreClass, _ property: CoreProperty, runs: Int, wideFrom: Int) throws -> StringSort {
        let n = cls.objectCount
        guard n <= Int(UInt32.max) else {
            throw RealmCoreFileError.noSuchObject(className: cls.name, detail: "more than \(UInt32.max) objects to sort")
        }
        _ = try check(cls)
        let k = max(1, min(runs, n))
        let sort = StringSort(objects: n, runs: k)
        sort.concurrently(k) { i in
            // The first run from 0 and the last to the end, whatever the counts say: nothing falls between runs.
            let firsts = (i == 0 ? 0 : n * i / k)..<(i == k - 1 ? Int.max : n * (i + 1) / k)
            do {
                try sort.read(run: i, of: self, cls, property, firsts: firsts)
            } catch {
                sort.parts[i].error = error
            }
        }
        for i in 0..<k { if let error = sort.parts[i].error { throw error } }
        // Each run wrote its entries from its first leaf's position on: the runs' leaves must not overlap.
        var end = 0
        for i in 0..<k where sort.parts[i].end > 0 {
            guard sort.parts[i].start >= end else {
                throw RealmCoreFileError.corrupt(what: "leaves of the class read twice (at position \(sort.parts[i].start))", offset: 0,
                                                 context: "class '\(cls.name)'")
            }
            end = sort.parts[i].end
        }
        sort.sort(wideFrom: wideFrom)
        return sort
    }
}
