#if canImport(Glibc)
import Glibc
#endif

/// A stable sort of strings by their UTF-8 bytes, for `SORT` by one string property: a most-significant-first
/// radix sort on 8-byte chunks (DECISIONS 110).
///
/// Each level sorts a run of strings that share their first `8·depth` bytes by the next 8 bytes, read as a
/// big-endian number (zero past the end), and by how many bytes are left, capped at 9: two strings equal in
/// both are equal if they end within the chunk (at most 8 bytes left), and go on to the next level together
/// when both continue. The level is a least-significant-first radix sort, one byte a pass, skipping the bytes
/// where the run's strings all agree; radix passes keep equal entries in the order they came, so equal strings
/// keep their index order. Runs of fewer than 24 strings are sorted by insertion, comparing bytes.
struct StringSort {
    let bytes: UnsafeRawBufferPointer
    /// String `i` is `bytes[offsets[i] ..< offsets[i + 1]]`.
    let offsets: UnsafeBufferPointer<Int>
    /// Called every so often with the number of strings handled since the last call (progress and cancelling).
    let tick: (Int) throws -> Void

    /// The indices of the non-null strings, in ascending order; equal strings in index order.
    func ascending(_ indices: [Int32]) throws -> [Int32] {
        var order = indices
        try order.withUnsafeMutableBufferPointer { o in try sort(o, depth: 0) }
        return order
    }

    /// `ascending` with equal strings grouped: the runs of equal strings in descending order of their value,
    /// each run in index order.
    func descending(_ indices: [Int32]) throws -> [Int32] {
        let up = try ascending(indices)
        var out: [Int32] = []
        out.reserveCapacity(up.count)
        var end = up.count
        while end > 0 {
            var start = end - 1
            while start > 0 && equal(up[start - 1], up[start]) { start -= 1 }
            out.append(contentsOf: up[start..<end])
            end = start
        }
        return out
    }

    @inline(__always) func string(_ i: Int32) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[offsets[Int(i)]..<offsets[Int(i) + 1]])
    }

    @inline(__always) func equal(_ a: Int32, _ b: Int32) -> Bool {
        let x = string(a), y = string(b)
        return x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
    }

    /// -1, 0 or 1: the bytes of `a` and `b` from `from` on, in byte order (shorter first on a common prefix).
    @inline(__always) func compare(_ a: Int32, _ b: Int32, from: Int) -> Int {
        let x = string(a), y = string(b)
        let m = min(x.count, y.count) - from
        if m > 0 {
            let c = memcmp(x.baseAddress! + from, y.baseAddress! + from, m)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    /// The 8 bytes of string `i` from `from`, big-endian, zero past its end, and how many bytes it has from `from`
    /// on, capped at 9 (9: it goes on past the chunk).
    @inline(__always) func chunk(_ i: Int32, from: Int) -> (UInt64, UInt8) {
        let s = string(i)
        let left = s.count - from
        var v: UInt64 = 0
        if left >= 8 {
            v = UInt64(bigEndian: s.loadUnaligned(fromByteOffset: from, as: UInt64.self))
        } else if left > 0 {
            for j in 0..<left { v |= UInt64(s[from + j]) << UInt64(56 - 8 * j) }
        }
        return (v, UInt8(max(0, min(left, 9))))
    }

    /// Sorts `o`, whose strings share their first `8·depth` bytes.
    func sort(_ o: UnsafeMutableBufferPointer<Int32>, depth: Int) throws {
        let n = o.count
        if n < 2 { return }
        let from = 8 * depth
        if n < 24 {
            // Insertion sort: stable, since only a smaller string moves before another.
            for i in 1..<n {
                let x = o[i]
                var j = i
                while j > 0 && compare(x, o[j - 1], from: from) < 0 { o[j] = o[j - 1]; j -= 1 }
                o[j] = x
            }
            return
        }
        // Keys: 8 chunk bytes then the length byte, least significant last; one histogram per key byte.
        var keys = [UInt64](repeating: 0, count: n), lengths = [UInt8](repeating: 0, count: n)
        var counts = [Int](repeating: 0, count: 9 * 256)
        for i in 0..<n {
            let (v, l) = chunk(o[i], from: from)
            keys[i] = v
            lengths[i] = l
            for b in 0..<8 { counts[b * 256 + Int((v >> UInt64(56 - 8 * b)) & 0xFF)] += 1 }
            counts[8 * 256 + Int(l)] += 1
        }
        var keys2 = keys, lengths2 = lengths
        var o2 = [Int32](repeating: 0, count: n)
        var offsets = [Int](repeating: 0, count: 256)
        // Passes from the least significant byte (the length) to the most; a byte all strings share is skipped.
        for b in stride(from: 8, through: 0, by: -1) {
            let base = b * 256
            var sum = 0, single = false
            for d in 0..<256 {
                let c = counts[base + d]
                if c == n { single = true; break }
                offsets[d] = sum
                sum += c
            }
            if single { continue }
            let shift = UInt64(b == 8 ? 0 : 56 - 8 * b)
            for i in 0..<n {
                let d = b == 8 ? Int(lengths[i]) : Int((keys[i] >> shift) & 0xFF)
                let to = offsets[d]
                offsets[d] = to + 1
                keys2[to] = keys[i]
                lengths2[to] = lengths[i]
                o2[to] = o[i]
            }
            swap(&keys, &keys2)
            swap(&lengths, &lengths2)
            for i in 0..<n { o[i] = o2[i] }
        }
        try tick(n)
        // Runs of strings equal so far that go on past the chunk: on to the next 8 bytes.
        var start = 0
        while start < n {
            var end = start + 1
            while end < n && keys[end] == keys[start] && lengths[end] == lengths[start] { end += 1 }
            if lengths[start] == 9 && end - start > 1 {
                try sort(UnsafeMutableBufferPointer(rebasing: o[start..<end]), depth: depth + 1)
            }
            start = end
        }
    }
}

extension RealmCoreFile {
    /// The keys of `cls`'s objects ordered by the string property's UTF-8 bytes, nulls first and equal strings
    /// in key order, with where each run of equal strings starts: the column read in place, leaf by leaf, then
    /// sorted (`StringSort`). Realm Core's own index does not keep this order (DECISIONS 100, 110).
    public func keysInStringOrder(of cls: CoreClass, property: CoreProperty) throws -> (keys: [Int64], runStarts: [Int]) {
        var keys: [Int64] = [], bytes: [UInt8] = [], offsets: [Int] = [0]
        var nulls: [Int32] = [], strings: [Int32] = []
        keys.reserveCapacity(cls.objectCount)
        offsets.reserveCapacity(cls.objectCount + 1)
        strings.reserveCapacity(cls.objectCount)
        try forEachLeaf(of: cls) { leaf in
            let column = try leaf.column(property)
            for i in 0..<leaf.count {
                let row = Int32(truncatingIfNeeded: keys.count)
                keys.append(leaf.key(i))
                if try column.withStringBytes(i, { bytes.append(contentsOf: $0) }) { strings.append(row) } else { nulls.append(row) }
                offsets.append(bytes.count)
            }
            return true
        }
        guard keys.count <= Int(Int32.max) else {
            throw RealmCoreFileError.noSuchObject(className: cls.name, detail: "more than \(Int32.max) objects to sort")
        }
        var out: [Int64] = [], starts: [Int] = []
        out.reserveCapacity(keys.count)
        if !nulls.isEmpty {
            starts.append(0)
            for r in nulls { out.append(keys[Int(r)]) }
        }
        try bytes.withUnsafeBytes { b in
            try offsets.withUnsafeBufferPointer { o in
                let sorter = StringSort(bytes: b, offsets: o, tick: { _ in })
                let order = try sorter.ascending(strings)
                for (j, r) in order.enumerated() {
                    if j == 0 || !sorter.equal(order[j - 1], r) { starts.append(out.count) }
                    out.append(keys[Int(r)])
                }
            }
        }
        return (out, starts)
    }
}
