#if canImport(Glibc)
import Glibc
#endif

// MARK: Leaf-at-a-time filters, read in place
//
// A scan's filters take a leaf's row list and keep the rows that match, reading the column where it lies in the
// map: ints at the leaf's packed width, short strings in their fixed-width slots. Nothing is decoded into an
// array first (DECISIONS 107). Each returns false, leaving `rows` as they were, for a layout it does not read
// (the caller then filters row by row). `rows` are rows of this leaf: one past its count is a programmer error.

extension CoreColumnLeaf {
    /// Keeps in `rows` those whose int lies in `lo...hi` (outside it when `negate`); null rows are kept when
    /// `nullMatches`. False for a column that is not an int column read in place.
    public func keepInts(_ rows: inout [Int32], in lo: Int64, _ hi: Int64, negate: Bool, nullMatches: Bool) -> Bool {
        guard case let .ints(node, isNullable, sentinel) = layout else { return false }
        let n = leaf.count
        // A nullable leaf keeps its null sentinel in element 0 and the values after it.
        let first = isNullable ? 1 : 0
        let p = node.payload
        let k = IntFilter(lo: lo, hi: hi, negate: negate, nullMatches: nullMatches, sentinel: isNullable ? sentinel : nil,
                          sentinelIsNull: nullable)
        switch node.width {
        case 8: k.keep(&rows, count: n) { Int64(p.load(fromByteOffset: $0 + first, as: Int8.self)) }
        case 16: k.keep(&rows, count: n) { Int64(Int16(littleEndian: p.loadUnaligned(fromByteOffset: ($0 + first) * 2, as: Int16.self))) }
        case 32: k.keep(&rows, count: n) { Int64(Int32(littleEndian: p.loadUnaligned(fromByteOffset: ($0 + first) * 4, as: Int32.self))) }
        case 64: k.keep(&rows, count: n) { Int64(littleEndian: p.loadUnaligned(fromByteOffset: ($0 + first) * 8, as: Int64.self)) }
        default: k.keep(&rows, count: n) { node.rawInt($0 + first) }
        }
        return true
    }

    /// Keeps in `rows` those whose string is `needle`, bytewise (is not, when `negate`); null rows are kept when
    /// `nullMatches`. Each slot's length is compared first, then its bytes. False for a column that is not a leaf
    /// of short strings.
    public func keepStrings(_ rows: inout [Int32], equalTo needle: UnsafeRawBufferPointer, negate: Bool, nullMatches: Bool) -> Bool {
        guard case .shortStrings(let node) = layout else { return false }
        let length = needle.count
        // A slot holds at most width - 1 bytes: a longer needle matches no string.
        let nullHit = nullable ? nullMatches : (length == 0) != negate
        let w = node.width
        if w == 0 || length >= w {
            keepShort(&rows, node) { _, isNull in isNull ? nullHit : negate }
            return true
        }
        let bytes = needle.baseAddress
        keepShort(&rows, node) { slot, isNull in
            if isNull { return nullHit }
            let hit = slot.count == length && (length == 0 || memcmp(slot.baseAddress!, bytes!, length) == 0)
            return hit != negate
        }
        return true
    }

    /// Keeps in `rows` those whose string's UTF-8 bytes pass `test`; null rows are kept when `nullMatches`. False
    /// for a column that is not a leaf of short strings.
    public func keepStrings(_ rows: inout [Int32], nullMatches: Bool, where test: (UnsafeRawBufferPointer) throws -> Bool) rethrows -> Bool {
        guard case .shortStrings(let node) = layout else { return false }
        let nullable = self.nullable
        try keepShort(&rows, node) { slot, isNull in
            isNull && nullable ? nullMatches : try test(slot)
        }
        return true
    }

    /// Keeps the rows for which `hit(bytes, isNull)` holds, reading each row's slot of a short-string leaf (the
    /// slots were checked when the column was made; a null slot comes as empty bytes).
    @inline(__always)
    private func keepShort(_ rows: inout [Int32], _ node: CoreNode,
                           _ hit: (UnsafeRawBufferPointer, Bool) throws -> Bool) rethrows {
        let n = leaf.count, w = node.width, p = node.payload
        var out = 0
        try rows.withUnsafeMutableBufferPointer { buf in
            for j in 0..<buf.count {
                let r = Int(buf[j])
                precondition(r >= 0 && r < n, "row index out of range")
                let keep: Bool
                if w == 0 {
                    keep = try hit(UnsafeRawBufferPointer(start: nil, count: 0), true)
                } else {
                    let slot = p + r * w
                    let pad = Int(slot.load(fromByteOffset: w - 1, as: UInt8.self))
                    keep = pad == w ? try hit(UnsafeRawBufferPointer(start: nil, count: 0), true)
                        : try hit(UnsafeRawBufferPointer(start: slot, count: w - 1 - pad), false)
                }
                if keep { buf[out] = buf[j]; out += 1 }
            }
        }
        rows.removeLast(rows.count - out)
    }
}

/// The test of `keepInts`: one subtraction and one unsigned compare per row (`v - lo <= hi - lo`).
private struct IntFilter {
    let lo: Int64
    let span: UInt64
    let negate: Bool
    let nullMatches: Bool
    /// The leaf's null sentinel (nil: not a nullable leaf), and whether a value equal to it is null (else it
    /// reads as 0, as `CoreColumnLeaf.int` gives it).
    let sentinel: Int64?
    let sentinelIsNull: Bool

    init(lo: Int64, hi: Int64, negate: Bool, nullMatches: Bool, sentinel: Int64?, sentinelIsNull: Bool) {
        self.lo = lo
        span = UInt64(bitPattern: hi &- lo)
        self.negate = negate
        self.nullMatches = nullMatches
        self.sentinel = sentinel
        self.sentinelIsNull = sentinelIsNull
    }

    @inline(__always)
    func inRange(_ v: Int64) -> Bool { (UInt64(bitPattern: v &- lo) <= span) != negate }

    @inline(__always)
    func keep(_ rows: inout [Int32], count n: Int, _ load: (Int) -> Int64) {
        var out = 0
        rows.withUnsafeMutableBufferPointer { buf in
            if let sentinel {
                let sentinelHit = sentinelIsNull ? nullMatches : inRange(0)
                for j in 0..<buf.count {
                    let r = Int(buf[j])
                    precondition(r >= 0 && r < n, "row index out of range")
                    let v = load(r)
                    if v == sentinel ? sentinelHit : inRange(v) { buf[out] = buf[j]; out += 1 }
                }
            } else {
                for j in 0..<buf.count {
                    let r = Int(buf[j])
                    precondition(r >= 0 && r < n, "row index out of range")
                    if inRange(load(r)) { buf[out] = buf[j]; out += 1 }
                }
            }
        }
        rows.removeLast(rows.count - out)
    }
}
