#if canImport(Glibc)
import Glibc
#endif

extension StringSort {
    /// The sort over the entries, with the bytes of the long strings.
    struct Level {
        let bytes: UnsafeRawBufferPointer
        let ranges: [UInt32: Range<Int>]

        /// Digits of an entry: bytes 0–10, then the length.
        static let digits = 12

        /// Digit `d` of an entry: bytes 0–7 from `hi`, 8–10 and then the length from the top of `lo`.
        @inline(__always) static func digit(_ e: Entry, _ d: Int) -> Int {
            if d < 8 { return Int(truncatingIfNeeded: (e.hi >> UInt64(56 - 8 * d)) & 0xFF) }
            return Int(truncatingIfNeeded: (e.lo >> UInt64(56 - 8 * (d - 8))) & 0xFF)
        }

        /// The first digit in which entries differ, from the bits in which their `hi` and `rest` differ; nil when
        /// they share every digit.
        @inline(__always) static func firstDigit(differentHi dh: UInt64, differentRest dr: UInt64) -> Int? {
            if dh != 0 { return dh.leadingZeroBitCount / 8 }
            if dr != 0 { return 8 + (dr << 32).leadingZeroBitCount / 8 }
            return nil
        }

        /// Byte order, then length, then position.
        @inline(__always) static func less(_ a: Entry, _ b: Entry) -> Bool {
            a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo
        }

        /// The bytes after the `prefix`th of two long strings, in byte order: -1, 0 or 1.
        func compareTails(_ a: Entry, _ b: Entry) -> Int {
            let x = UnsafeRawBufferPointer(rebasing: bytes[ranges[a.position] ?? (0..<0)])
            let y = UnsafeRawBufferPointer(rebasing: bytes[ranges[b.position] ?? (0..<0)])
            let m = min(x.count, y.count) - StringSort.prefix
            if m > 0 {
                let c = memcmp(x.baseAddress! + StringSort.prefix, y.baseAddress! + StringSort.prefix, m)
                if c != 0 { return c < 0 ? -1 : 1 }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        }

        /// Sorts the entries of `e` into `e` (`intoOther` false) or into `other` (as long). A level scatters the
        /// entries into the other buffer by their first digit that differs, and its buckets are sorted from there,
        /// so that no level copies its entries back. Each level sorts by a digit after those its entries share, so
        /// the recursion is at most 12 deep.
        func sort(_ e: UnsafeMutableBufferPointer<Entry>, _ other: UnsafeMutableBufferPointer<Entry>, intoOther: Bool) {
            let n = e.count
            if n <= 32 {
                // Insertion sort (entries of equal strings differ by position).
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
            var dh: UInt64 = 0, dr: UInt64 = 0
            for i in 1..<n {
                dh |= e[i].hi ^ f.hi
                dr |= e[i].rest ^ f.rest
            }
            guard let d = Self.firstDigit(differentHi: dh, differentRest: dr) else {
                // Every digit shared: one string of up to `prefix` bytes, or long strings sharing their first ones.
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

        /// Orders each run of entries with the same first bytes and a length over `prefix` by the bytes after
        /// them (an entry's position breaking ties: the order they came in).
        func sortLongRuns(_ e: UnsafeMutableBufferPointer<Entry>) {
            var start = 0
            while start < e.count {
                var end = start + 1
                while end < e.count && e[end].hi == e[start].hi && e[end].rest == e[start].rest { end += 1 }
                if e[start].length > StringSort.prefix && end - start > 1 {
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
