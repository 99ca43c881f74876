/// The scan kernels of a packed array: counting, summing, finding and walking its elements 64 at a time,
/// over the packed words in place.
extension PackedIntsReader {
    // MARK: Scan kernels
    //
    // A value v = base &+ u lies in lo...hi exactly when (u &+ (base &- lo)) <= (hi &- lo) as
    // UInt64 (all arithmetic modulo 2^64, so this is exact even for wrapped or corrupt data).
    // Over the possible fields u in 0...mask, the matching ones form an interval [a, a + s] or
    // the complement of one (`fieldMatch`). Counting and summing then run a plain loop per
    // width over the packed bytes ((u - a) mod 2^width <= s, narrow accumulators), which the
    // compiler vectorises; null rows to exclude are subtracted afterwards, one by one.

    /// Number of elements in `range` among `rows` (all rows by default), skipping rows whose bit
    /// is set in `excluding` (e.g. the column's null bitmap).
    func count(in range: ClosedRange<Int64>, rows: Range<Int>? = nil, excluding nulls: BitmapReader? = nil) -> Int {
        let rows = checkedRows(rows, nulls)
        let d = UInt64(bitPattern: base &- range.lowerBound)
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound)
        var c: Int
        switch fieldMatch(d: d, span: span) {
        case .none: return 0
        case .all: c = rows.count
        case .interval(let a, let s, let complement):
            c = countFields(a: a, s: s, rows: rows)
            if complement { c = rows.count - c }
        }
        if let nulls {
            forEachSetBit(nulls, rows: rows) { i in
                c &-= Int(unsafeBitCast((field(i) &+ d) <= span, to: UInt8.self))
            }
        }
        return c
    }

    /// The wrapping sum and the number of the elements in `range` among `rows`, skipping rows set
    /// in `excluding`.
    func sum(in range: ClosedRange<Int64> = Int64.min...Int64.max, rows: Range<Int>? = nil,
             excluding nulls: BitmapReader? = nil) -> (sum: Int64, count: Int) {
        let rows = checkedRows(rows, nulls)
        let d = UInt64(bitPattern: base &- range.lowerBound)
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound)
        var s: UInt64
        var c: Int
        switch fieldMatch(d: d, span: span) {
        case .none: return (0, 0)
        case .all:
            s = sumFields(a: 0, s: mask, rows: rows)
            c = rows.count
        case .interval(let a, let len, let complement):
            s = sumFields(a: a, s: len, rows: rows)
            c = countFields(a: a, s: len, rows: rows)
            if complement {
                s = sumFields(a: 0, s: mask, rows: rows) &- s
                c = rows.count - c
            }
        }
        if let nulls {
            forEachSetBit(nulls, rows: rows) { i in
                let u = field(i)
                if (u &+ d) <= span {
                    s &-= u
                    c -= 1
                }
            }
        }
        // Σ (base + u) = count × base + Σ u, modulo 2^64.
        return (Int64(bitPattern: s) &+ base &* Int64(c), c)
    }

    /// Appends to `out`, in order, the index of every element in `range`: the match masks of 64 elements at a
    /// time (`blockMask`, the count's kernel) and their set bits, with no branch per element.
    func appendIndices(in range: ClosedRange<Int64>, to out: inout [Int32]) {
        let d = UInt64(bitPattern: base &- range.lowerBound)
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound)
        switch fieldMatch(d: d, span: span) {
        case .none: return
        case .all:
            out.reserveCapacity(out.count &+ count)
            for i in 0..<count { out.append(Int32(truncatingIfNeeded: i)) }
        case .interval:
            switch width {
            case 1: appendKernel(1, d: d, span: span, to: &out)
            case 2: appendKernel(2, d: d, span: span, to: &out)
            case 4: appendKernel(4, d: d, span: span, to: &out)
            case 8: appendKernel(8, d: d, span: span, to: &out)
            case 16: appendKernel(16, d: d, span: span, to: &out)
            case 32: appendKernel(32, d: d, span: span, to: &out)
            default: appendKernel(64, d: d, span: span, to: &out)
            }
        }
    }

    /// The first index ≥ `from` whose element equals `v`, skipping rows set in `excluding`.
    func firstIndex(of v: Int64, from: Int = 0, excluding nulls: BitmapReader? = nil) -> Int? {
        precondition(from >= 0, "negative start index")
        if let nulls { precondition(nulls.count >= count, "null bitmap shorter than the array") }
        if from >= count { return nil }
        let d = UInt64(bitPattern: base &- v)
        let a: UInt64
        switch fieldMatch(d: d, span: 0) {
        case .none: return nil
        case .all: return firstKernel(0, d: d, rows: from..<count, nulls: nulls)
        case .interval(let start, _, _): a = start  // a single field value (never a complement)
        }
        // Skip 256-row chunks without a hit using the vectorised count, then locate the hit.
        var chunk = from
        while chunk < count {
            let rows = chunk..<Swift.min(chunk &+ 256, count)
            if countFields(a: a, s: 0, rows: rows) > 0 {
                let hit: Int?
                switch width {
                case 1: hit = firstKernel(1, d: d, rows: rows, nulls: nulls)
                case 2: hit = firstKernel(2, d: d, rows: rows, nulls: nulls)
                case 4: hit = firstKernel(4, d: d, rows: rows, nulls: nulls)
                case 8: hit = firstKernel(8, d: d, rows: rows, nulls: nulls)
                case 16: hit = firstKernel(16, d: d, rows: rows, nulls: nulls)
                case 32: hit = firstKernel(32, d: d, rows: rows, nulls: nulls)
                default: hit = firstKernel(64, d: d, rows: rows, nulls: nulls)
                }
                if let hit { return hit }
            }
            chunk = rows.upperBound
        }
        return nil
    }

    /// Calls `body(index, value)` for every element in order.
    func forEach(_ body: (Int, Int64) throws -> Void) rethrows {
        switch width {
        case 0: for i in 0..<count { try body(i, base) }
        case 1: try forEachKernel(1, body)
        case 2: try forEachKernel(2, body)
        case 4: try forEachKernel(4, body)
        case 8: try forEachKernel(8, body)
        case 16: try forEachKernel(16, body)
        case 32: try forEachKernel(32, body)
        default: try forEachKernel(64, body)
        }
    }

    /// Whether the elements never decrease, the first is at least 0 and the last at most `limit`, as a loop
    /// over `forEach` tells (an empty array: true); nil for the widths (1, 2, 4, 64) left to that loop.
    ///
    /// What a bytes column's end offsets must be (`ColumnReader`): one pass of plain loads and compares, which
    /// the compiler vectorises, instead of a call per element (`perf`: the end offsets of a leaf of names were
    /// most of opening its column, realm-bench `iterate-all`). Because the fields ascend, the first and last
    /// values bound every other; those two are added to `base` with overflow checked.
    func ascends(from low: Int64, through limit: Int64) -> Bool? {
        #if _endian(little)
        guard count > 0 else { return true }
        let rising: Bool
        switch width {
        case 0: rising = true
        case 8: rising = fieldsAscend(UInt8.self)
        case 16: rising = fieldsAscend(UInt16.self)
        case 32: rising = fieldsAscend(UInt32.self)
        default: return nil
        }
        guard rising else { return false }
        let (first, o1) = base.addingReportingOverflow(Int64(bitPattern: field(0)))
        let (last, o2) = base.addingReportingOverflow(Int64(bitPattern: field(count &- 1)))
        return !o1 && !o2 && first >= low && last <= limit
        #else
        return nil
        #endif
    }

    @inline(__always) private func fieldsAscend<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) -> Bool {
        let size = MemoryLayout<T>.size
        var fall: UInt8 = 0
        var i = 1
        while i < count {
            let a = data.loadUnaligned(fromByteOffset: (i &- 1) &* size, as: T.self)
            let b = data.loadUnaligned(fromByteOffset: i &* size, as: T.self)
            fall |= b < a ? 1 : 0
            i &+= 1
        }
        return fall == 0
    }

    // MARK: Kernel internals

    private enum FieldMatch {
        case none, all
        /// Fields in `a ... a + s` match (or, when `complement`, all the others do); the interval
        /// lies inside `0...mask` and is neither empty nor everything.
        case interval(a: UInt64, s: UInt64, complement: Bool)
    }

    @inline(__always) private func checkedRows(_ rows: Range<Int>?, _ nulls: BitmapReader?) -> Range<Int> {
        if let nulls { precondition(nulls.count >= count, "null bitmap shorter than the array") }
        guard let rows else { return 0..<count }
        precondition(rows.lowerBound >= 0 && rows.upperBound <= count, "rows out of range")
        return rows
    }

    /// Which fields u in 0...mask satisfy (u + d) mod 2^64 <= span, i.e. lie in the circular
    /// interval [e, e + span] with e = -d.
    @inline(__always) private func fieldMatch(d: UInt64, span: UInt64) -> FieldMatch {
        let m = mask
        let e = 0 &- d
        let (top, wraps) = e.addingReportingOverflow(span)
        if !wraps {
            if e > m { return .none }
            let hi = Swift.min(top, m)
            if e == 0 && hi == m { return .all }
            return .interval(a: e, s: hi &- e, complement: false)
        }
        // Matching: [0, top] ∪ [e, 2^64 - 1], where top < e.
        if e > m {
            if top >= m { return .all }
            return .interval(a: 0, s: top, complement: false)
        }
        if top &+ 1 >= e { return .all }
        return .interval(a: top &+ 1, s: e &- top &- 2, complement: true)
    }

    /// Calls `body(i)` for every row of `rows` whose bit is set in `bits`.
    @inline(__always)
    private func forEachSetBit(_ bits: BitmapReader, rows: Range<Int>, _ body: (Int) -> Void) {
        forEachBlock(rows: rows) { b, rowMask in
            var w = bits.word(b) & rowMask
            while w != 0 {
                body((b &<< 6) &+ w.trailingZeroBitCount)
                w &= w &- 1
            }
        }
    }

    /// Number of rows whose field lies in `a ... a + s` (all within `0...mask`).
    private func countFields(a: UInt64, s: UInt64, rows: Range<Int>) -> Int {
        switch width {
        case 1:
            // The interval is {0} or {1}.
            var ones = 0
            forEachBlock(rows: rows) { b, rowMask in ones &+= (word(b) & rowMask).nonzeroBitCount }
            return a == 1 ? ones : rows.count - ones
        case 2: return countSubByte(2, a: UInt8(a), s: UInt8(s), rows: rows)
        case 4: return countSubByte(4, a: UInt8(a), s: UInt8(s), rows: rows)
        case 8: return countLanes(UInt8.self, UInt8.self, chunk: 128, a: UInt8(a), s: UInt8(s), rows: rows)
        case 16: return countLanes(UInt16.self, UInt16.self, chunk: 1 << 15, a: UInt16(a), s: UInt16(s), rows: rows)
        case 32: return countLanes(UInt32.self, UInt32.self, chunk: 1 << 30, a: UInt32(a), s: UInt32(s), rows: rows)
        default: return countLanes(UInt64.self, UInt64.self, chunk: 1 << 30, a: a, s: s, rows: rows)
        }
    }

    /// Wrapping sum of the fields lying in `a ... a + s` among `rows`.
    private func sumFields(a: UInt64, s: UInt64, rows: Range<Int>) -> UInt64 {
        switch width {
        case 0: return 0
        case 1:
            var ones = 0
            forEachBlock(rows: rows) { b, rowMask in ones &+= (word(b) & rowMask).nonzeroBitCount }
            return a == 0 && s == 0 ? 0 : UInt64(ones)
        case 2: return sumSubByte(2, a: UInt8(a), s: UInt8(s), rows: rows)
        case 4: return sumSubByte(4, a: UInt8(a), s: UInt8(s), rows: rows)
        case 8: return sumLanes(UInt8.self, UInt16.self, chunk: 256, a: UInt8(a), s: UInt8(s), rows: rows)
        case 16: return sumLanes(UInt16.self, UInt32.self, chunk: 1 << 15, a: UInt16(a), s: UInt16(s), rows: rows)
        case 32: return sumLanes(UInt32.self, UInt64.self, chunk: 1 << 30, a: UInt32(a), s: UInt32(s), rows: rows)
        default: return sumLanes(UInt64.self, UInt64.self, chunk: 1 << 30, a: a, s: s, rows: rows)
        }
    }

    /// Widths 8...64: one field per `T`. Counts in `Acc` over chunks of `chunk` rows (which must
    /// not overflow it), so the loop vectorises with narrow lanes.
    @inline(__always)
    private func countLanes<T: FixedWidthInteger & UnsignedInteger, Acc: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, _: Acc.Type, chunk: Int, a: T, s: T, rows: Range<Int>
    ) -> Int {
        let size = MemoryLayout<T>.size
        var c = 0
        var i = rows.lowerBound
        while i < rows.upperBound {
            let end = Swift.min(i &+ chunk, rows.upperBound)
            var acc: Acc = 0
            var j = i
            while j < end {
                let u = T(littleEndian: data.loadUnaligned(fromByteOffset: j &* size, as: T.self))
                acc &+= (u &- a) <= s ? 1 : 0
                j &+= 1
            }
            c &+= Int(acc)
            i = end
        }
        return c
    }

    @inline(__always)
    private func sumLanes<T: FixedWidthInteger & UnsignedInteger, Acc: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, _: Acc.Type, chunk: Int, a: T, s: T, rows: Range<Int>
    ) -> UInt64 {
        let size = MemoryLayout<T>.size
        var total: UInt64 = 0
        var i = rows.lowerBound
        while i < rows.upperBound {
            let end = Swift.min(i &+ chunk, rows.upperBound)
            var acc: Acc = 0
            var j = i
            if s == T.max {
                // Every field matches (a is 0): a plain sum.
                while j < end {
                    acc &+= Acc(truncatingIfNeeded: T(littleEndian: data.loadUnaligned(fromByteOffset: j &* size, as: T.self)))
                    j &+= 1
                }
            } else {
                while j < end {
                    let u = T(littleEndian: data.loadUnaligned(fromByteOffset: j &* size, as: T.self))
                    let keep: T = (u &- a) <= s ? T.max : 0  // a mask, not a select: this form vectorises
                    acc &+= Acc(truncatingIfNeeded: u & keep)
                    j &+= 1
                }
            }
            total &+= UInt64(truncatingIfNeeded: acc)
            i = end
        }
        return total
    }

    /// Widths 2 and 4: whole bytes in a vectorisable loop, partial bytes at the ends one by one.
    @inline(__always)
    private func countSubByte(_ w: Int, a: UInt8, s: UInt8, rows: Range<Int>) -> Int {
        let perByte = 8 / w
        let m = UInt8(truncatingIfNeeded: mask)
        let a64 = UInt64(a), s64 = UInt64(s)
        var c = 0
        var i = rows.lowerBound
        while i < rows.upperBound && i % perByte != 0 {
            if ((field(i) &- a64) & mask) <= s64 { c &+= 1 }
            i &+= 1
        }
        let fullEnd = rows.upperBound &- (rows.upperBound &- i) % perByte
        var byte = i / perByte
        let byteEnd = fullEnd / perByte
        let chunk = 128 / perByte  // at most 128 hits per chunk, so a UInt8 accumulator holds them
        while byte < byteEnd {
            let end = Swift.min(byte &+ chunk, byteEnd)
            var acc: UInt8 = 0
            while byte < end {
                let v = data.load(fromByteOffset: byte, as: UInt8.self)
                var f = 0
                while f < perByte {
                    let u = (v &>> UInt8(truncatingIfNeeded: f &* w)) & m
                    acc &+= ((u &- a) & m) <= s ? 1 : 0
                    f &+= 1
                }
                byte &+= 1
            }
            c &+= Int(acc)
        }
        i = Swift.max(i, fullEnd)
        while i < rows.upperBound {
            if ((field(i) &- a64) & mask) <= s64 { c &+= 1 }
            i &+= 1
        }
        return c
    }

    @inline(__always)
    private func sumSubByte(_ w: Int, a: UInt8, s: UInt8, rows: Range<Int>) -> UInt64 {
        let perByte = 8 / w
        let m = UInt8(truncatingIfNeeded: mask)
        let a64 = UInt64(a), s64 = UInt64(s)
        var total: UInt64 = 0
        var i = rows.lowerBound
        while i < rows.upperBound && i % perByte != 0 {
            let u = field(i)
            if ((u &- a64) & mask) <= s64 { total &+= u }
            i &+= 1
        }
        let fullEnd = rows.upperBound &- (rows.upperBound &- i) % perByte
        var byte = i / perByte
        let byteEnd = fullEnd / perByte
        while byte < byteEnd {
            let end = Swift.min(byte &+ (1 << 20), byteEnd)
            var acc: UInt32 = 0
            while byte < end {
                let v = data.load(fromByteOffset: byte, as: UInt8.self)
                var f = 0
                while f < perByte {
                    let u = (v &>> UInt8(truncatingIfNeeded: f &* w)) & m
                    let keep: UInt8 = ((u &- a) & m) <= s ? 0xFF : 0
                    acc &+= UInt32(u & keep)
                    f &+= 1
                }
                byte &+= 1
            }
            total &+= UInt64(acc)
        }
        i = Swift.max(i, fullEnd)
        while i < rows.upperBound {
            let u = field(i)
            if ((u &- a64) & mask) <= s64 { total &+= u }
            i &+= 1
        }
        return total
    }

    /// `appendIndices` for width `w` (never 0: `fieldMatch` settles it).
    @inline(__always)
    private func appendKernel(_ w: Int, d: UInt64, span: UInt64, to out: inout [Int32]) {
        let fullBlocks = count &>> 6
        let blocks = (count &+ 63) &>> 6
        out.reserveCapacity(out.count &+ count)
        var b = 0
        while b < blocks {
            var m = b < fullBlocks ? blockMask(w, block: b, d: d, span: span) : tailMask(block: b, d: d, span: span)
            while m != 0 {
                out.append(Int32(truncatingIfNeeded: (b &<< 6) &+ m.trailingZeroBitCount))
                m &= m &- 1
            }
            b &+= 1
        }
    }

    /// Match mask of block `b`, which must lie wholly inside the packed data ((b+1)×64 ≤ count).
    @inline(__always)
    private func blockMask(_ w: Int, block b: Int, d: UInt64, span: UInt64) -> UInt64 {
        if w == 1 {
            let word = self.word(b)
            let m0: UInt64 = d <= span ? .max : 0
            let m1: UInt64 = d &+ 1 <= span ? .max : 0
            return (word & m1) | (~word & m0)
        }
        let perWord = 64 / w
        let fieldMask: UInt64 = w == 64 ? .max : (1 &<< UInt64(w)) &- 1
        var result: UInt64 = 0
        var k = 0
        while k < w {
            let word = self.word(b &* w &+ k)
            var f = 0
            while f < perWord {
                let u = (word &>> UInt64(f &* w)) & fieldMask
                let hit: UInt64 = (u &+ d) <= span ? 1 : 0
                result |= hit &<< UInt64(k &* perWord &+ f)
                f &+= 1
            }
            k &+= 1
        }
        return result
    }

    /// Match mask of a block that may run past the end of the data (element-wise).
    @inline(never)
    private func tailMask(block b: Int, d: UInt64, span: UInt64) -> UInt64 {
        var result: UInt64 = 0
        let start = b &<< 6
        let end = Swift.min(start &+ 64, count)
        var i = start
        while i < end {
            if (field(i) &+ d) <= span { result |= 1 &<< UInt64(i &- start) }
            i &+= 1
        }
        return result
    }

    /// The first row of `rows` (not set in `nulls`) whose field u has (u + d) mod 2^64 == 0.
    @inline(__always)
    private func firstKernel(_ w: Int, d: UInt64, rows: Range<Int>, nulls: BitmapReader?) -> Int? {
        if rows.isEmpty { return nil }
        let fullBlocks = count &>> 6
        let first = rows.lowerBound &>> 6
        let last = (rows.upperBound &- 1) &>> 6
        var b = first
        while b <= last {
            var valid = UInt64.max
            if b == first { valid &= UInt64.max &<< UInt64(truncatingIfNeeded: rows.lowerBound & 63) }
            if b == last {
                let e = rows.upperBound &- (b &<< 6)
                if e < 64 { valid &= (1 &<< UInt64(truncatingIfNeeded: e)) &- 1 }
            }
            if let nulls { valid &= ~nulls.word(b) }
            let m: UInt64
            if w == 0 {
                m = d == 0 ? .max : 0
            } else {
                m = b < fullBlocks ? blockMask(w, block: b, d: d, span: 0) : tailMask(block: b, d: d, span: 0)
            }
            let hits = m & valid
            if hits != 0 { return (b &<< 6) &+ hits.trailingZeroBitCount }
            b &+= 1
        }
        return nil
    }

    @inline(__always)
    private func forEachKernel(_ w: Int, _ body: (Int, Int64) throws -> Void) rethrows {
        let perWord = 64 / w
        let fieldMask: UInt64 = w == 64 ? .max : (1 &<< UInt64(w)) &- 1
        var i = 0
        var k = 0
        while i < count {
            let word = self.word(k)
            let end = Swift.min(i &+ perWord, count)
            var shift: UInt64 = 0
            while i < end {
                try body(i, base &+ Int64(bitPattern: (word &>> shift) & fieldMask))
                shift &+= UInt64(w)
                i &+= 1
            }
            k &+= 1
        }
    }
}
