#if canImport(Glibc)
import Glibc
#endif

/// The dictionary form of a string column block (format 8, DECISIONS 105): each distinct value's bytes once,
/// and a code per row naming its value. A column of few distinct values (cities, states, categories) takes a
/// byte or less per row instead of its bytes, and a comparison tests each distinct value once per leaf.
///
/// Layout: the null header's byte 1 is 1 (the form) and bytes 4..<8 hold `d`, the number of distinct values;
/// after the null bitmap come the packed codes (n values, each < d; a null row's code is 0), then the distinct
/// values as a plain bytes block of d rows would hold them: packed end offsets, packed out-of-line flags (all 0:
/// a value stored out of line keeps its column plain) and the bytes, in the order of their first row.
enum StringDictionary {
    /// Fewer rows are always written plain.
    static let minimumRows = 32
    /// Rows sampled first: a column whose first 64 rows are all distinct is written plain without hashing the
    /// rest (names, identifiers, free text). 64 rows drawn from 100 values repeat one with near certainty; a
    /// column of thousands of distinct values per leaf gains little from the form.
    static let sampleRows = 64
}

extension ColumnCodec {
    /// Writes `values` (a string column with no value past `inlineLimit`) in dictionary form and returns true
    /// when that form is smaller than the plain one; writes nothing and returns false otherwise.
    static func encodeDictionary(_ values: ArraySlice<Value>, nullCount: Int, inlineLimit: Int,
                                 into w: inout ByteWriter) -> Bool {
        let n = values.count
        // One pass over the rows: each row's bytes are copied into `area` (nulls are empty) and looked up, by a
        // hash of its bytes, among the distinct values met so far (open addressing over their first rows). It
        // stops as soon as the column cannot be a dictionary: a value out of line, more than half of the rows
        // distinct, or every one of the first `sampleRows` rows distinct (names, identifiers, free text: not
        // worth copying and hashing the rest). Values are compared as bytes, so canonically equal strings
        // ("é" and "e\u{301}") stay apart.
        let limit = n / 2
        var slots = [Int32](repeating: -1, count: max(64, (limit + 1).nextPowerOfTwo * 2))
        let mask = slots.count - 1
        var area = ByteWriter()
        var ends = [Int64](repeating: 0, count: n)
        var codes = [Int64](repeating: 0, count: n)
        var firstRows: [Int] = []
        firstRows.reserveCapacity(min(limit, StringDictionary.sampleRows) + 1)
        var j = 0
        for v in values {
            defer { j += 1 }
            let s: String
            switch v {
            case .string(let x): s = x
            case .null:
                ends[j] = Int64(area.count)
                continue
            case let other: preconditionFailure("string column given \(other)")
            }
            let start = area.count
            let fits: Bool = s.utf8.withContiguousStorageIfAvailable { b in
                guard b.count <= inlineLimit else { return false }
                area.raw(UnsafeRawBufferPointer(b))
                return true
            } ?? {
                var copy = s
                return copy.withUTF8 { b in
                    guard b.count <= inlineLimit else { return false }
                    area.raw(UnsafeRawBufferPointer(b))
                    return true
                }
            }()
            guard fits else { return false }
            let end = area.count
            ends[j] = Int64(end)
            let found: Int? = area.bytes.withUnsafeBytes { bytes -> Int? in
                let b = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                let h = Self.hashBytes(b)
                var at = Int(truncatingIfNeeded: (h ^ (h >> 29)) & UInt64(mask))
                while true {
                    let e = Int(slots[at])
                    if e < 0 {
                        guard firstRows.count < limit else { return nil }
                        slots[at] = Int32(firstRows.count)
                        codes[j] = Int64(firstRows.count)
                        firstRows.append(j)
                        return firstRows.count - 1
                    }
                    let r = firstRows[e]
                    let otherStart = r == 0 ? 0 : Int(ends[r - 1])
                    let otherCount = Int(ends[r]) - otherStart
                    if otherCount == b.count, b.count == 0 || memcmp(bytes.baseAddress! + otherStart, b.baseAddress!, b.count) == 0 {
                        codes[j] = Int64(e)
                        return e
                    }
                    at = (at + 1) & mask
                }
            }
            guard found != nil else { return false }
            if j == StringDictionary.sampleRows - 1, firstRows.count == StringDictionary.sampleRows { return false }
        }
        let plainBytes = area.count
        return area.bytes.withUnsafeBytes { bytes -> Bool in
            func row(_ j: Int) -> UnsafeRawBufferPointer {
                let start = j == 0 ? 0 : Int(ends[j - 1])
                return UnsafeRawBufferPointer(rebasing: bytes[start..<Int(ends[j])])
            }
            let d = firstRows.count
            guard d > 0 else { return false }
            var entryEnds = [Int64](repeating: 0, count: d)
            var entryBytes = 0
            for (e, j) in firstRows.enumerated() {
                entryBytes += row(j).count
                entryEnds[e] = Int64(entryBytes)
            }
            let plain = packedLength(ends) + PackedInts.headerSize + plainBytes
            let dictionary = packedLength(codes) + packedLength(entryEnds) + PackedInts.headerSize + entryBytes
            guard (dictionary + 7) & ~7 < (plain + 7) & ~7 else { return false }
            let hasNulls = nullCount > 0
            w.u8(hasNulls ? 1 : 0)
            w.u8(1)
            w.zeros(2)
            w.u32(UInt32(d))
            if hasNulls {
                PackedInts.appendBitmap(count: n, into: &w) { values[values.startIndex + $0].isNull }
            }
            PackedInts.encode(codes, into: &w)
            PackedInts.encode(entryEnds, into: &w)
            PackedInts.encode([Int64](repeating: 0, count: d), into: &w)
            for j in firstRows { w.raw(row(j)) }
            w.align(8)
            return true
        }
    }

    /// A hash of a value's bytes for the dictionary's table, eight bytes a step (only where a value lands in the
    /// table depends on it, never what is written).
    @inline(__always)
    private static func hashBytes(_ b: UnsafeRawBufferPointer) -> UInt64 {
        var h = UInt64(truncatingIfNeeded: b.count) &* 0x9E37_79B9_7F4A_7C15
        var p = 0
        while p &+ 8 <= b.count {
            h = (h ^ b.loadUnaligned(fromByteOffset: p, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 32
            p &+= 8
        }
        if p < b.count {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while p < b.count {
                word |= UInt64(b[p]) << shift
                shift &+= 8
                p &+= 1
            }
            h = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 32
        }
        return h
    }

    private static func packedLength(_ values: [Int64]) -> Int {
        values.withUnsafeBufferPointer { PackedInts.byteLength(count: $0.count, width: PackedInts.parameters($0).width) }
    }
}

private extension Int {
    var nextPowerOfTwo: Int { self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount) }
}
