/// Extending encoded blocks by rows appended after them (DECISIONS 46).
///
/// A cluster handed from one commit to the next keeps the node it was encoded into; when the next commit
/// only appended rows to it, each column block is the old block with the new values added, not all rows
/// encoded again. Every function here writes exactly the bytes the full encoder would write for all the
/// rows — or declines (returns false, having written nothing) when that would differ: a new value outside
/// a packed array's range or width, a first null, an out-of-line value.

extension PackedInts {
    /// Appends to `w` the packed array of the `oldCount` elements in `old` (an array as `encode` wrote it,
    /// header first) followed by `values`, when `encode` would choose the same base and width for them all.
    static func appendExtending(_ old: UnsafeRawBufferPointer, oldCount: Int, _ values: UnsafeBufferPointer<Int64>,
                                into w: inout ByteWriter) -> Bool {
        guard oldCount > 0, old.count >= headerSize else { return false }
        let width = Int(old[0])
        let base = Int64(bitPattern: old.u64(at: 8))
        guard isLegalWidth(width), width < 64, byteLength(count: oldCount, width: width) <= old.count else { return false }
        // `encode` takes base = min and the smallest width holding max - min: a value at or above the base
        // whose offset fits the width leaves both as they are.
        for v in values {
            let (d, overflow) = v.subtractingReportingOverflow(base)
            guard !overflow, d >= 0, width > 0 ? UInt64(d) >> UInt64(width) == 0 : d == 0 else { return false }
        }
        let total = oldCount + values.count
        let start = w.count
        let oldBytes = byteLength(count: oldCount, width: width)
        w.raw(UnsafeRawBufferPointer(rebasing: old[0..<oldBytes]))
        w.zeros(byteLength(count: total, width: width) - oldBytes)
        guard width > 0 else { return true }
        w.bytes.withUnsafeMutableBytes { raw in
            for (j, v) in values.enumerated() {
                let bit = (oldCount + j) * width
                let at = start + headerSize + (bit >> 6) << 3
                let word = UInt64(littleEndian: raw.load(fromByteOffset: at, as: UInt64.self))
                    | UInt64(bitPattern: v &- base) << UInt64(bit & 63)
                raw.storeBytes(of: word.littleEndian, toByteOffset: at, as: UInt64.self)
            }
        }
        return true
    }

    /// Appends the bitmap of `oldCount` bits in `old` followed by `bits`.
    static func appendBitmapExtending(_ old: UnsafeRawBufferPointer, oldCount: Int, _ bits: [Bool], into w: inout ByteWriter) -> Bool {
        let oldBytes = BitmapReader.byteLength(count: oldCount)
        guard oldBytes <= old.count else { return false }
        let total = oldCount + bits.count
        let start = w.count
        w.raw(UnsafeRawBufferPointer(rebasing: old[0..<oldBytes]))
        w.zeros(BitmapReader.byteLength(count: total) - oldBytes)
        w.bytes.withUnsafeMutableBytes { raw in
            for (j, b) in bits.enumerated() where b {
                let i = oldCount + j
                raw[start + i >> 3] |= UInt8(1) << UInt8(i & 7)
            }
        }
        return true
    }
}

extension ColumnCodec {
    /// Appends to `w` the block of a column whose first `oldCount` rows are encoded in `old` (a block as
    /// `encodeColumn` wrote it) and whose next rows are `values`: the block `encodeColumn` would write for
    /// all of them. Returns false, with `w` as it was, when it cannot (see the file's comment).
    static func appendColumn(_ old: UnsafeRawBufferPointer, oldCount: Int, _ values: ArraySlice<Value>, type: PropertyType,
                             nullable: Bool, linkStorage: LinkStorage = .plusOne, into w: inout ByteWriter) -> Bool {
        precondition(w.count & 7 == 0, "a column block must start 8-byte aligned")
        let mark = w.count
        if appendColumnBody(old, oldCount: oldCount, values, type: type, nullable: nullable, linkStorage: linkStorage, into: &w) {
            w.align(8)
            return true
        }
        w.bytes.removeSubrange(mark...)
        return false
    }

    private static func appendColumnBody(_ old: UnsafeRawBufferPointer, oldCount: Int, _ values: ArraySlice<Value>,
                                         type: PropertyType, nullable: Bool, linkStorage: LinkStorage,
                                         into w: inout ByteWriter) -> Bool {
        guard oldCount > 0, old.count >= 8, old.u64(at: 0) <= 1 else { return false }
        let encoding = ColumnEncoding.encoding(for: type)
        let nullAsZero = type == .link && linkStorage == .plusOne
        let oldHasNulls = old[0] == 1
        var newNulls: [Bool] = []
        newNulls.reserveCapacity(values.count)
        for v in values { newNulls.append(v.isNull) }
        let anyNewNull = newNulls.contains(true)
        if anyNewNull && !nullable { return false }
        // The full encoder writes a null bitmap when any row is null (links store null as 0 instead).
        if !nullAsZero && anyNewNull && !oldHasNulls { return false }
        var pos = 8
        w.u8(oldHasNulls ? 1 : 0)
        w.zeros(7)
        if oldHasNulls {
            guard PackedInts.appendBitmapExtending(UnsafeRawBufferPointer(rebasing: old[pos...]), oldCount: oldCount, newNulls, into: &w) else { return false }
            pos += BitmapReader.byteLength(count: oldCount)
        }
        guard pos <= old.count else { return false }
        let rest = UnsafeRawBufferPointer(rebasing: old[pos...])

        func packed(_ section: UnsafeRawBufferPointer, _ ints: [Int64]) -> Int? {
            // The length of the old array in `section`, after appending the extended array; nil when it cannot.
            guard section.count >= PackedInts.headerSize else { return nil }
            let width = Int(section[0])
            guard PackedInts.isLegalWidth(width) else { return nil }
            let length = PackedInts.byteLength(count: oldCount, width: width)
            guard length <= section.count else { return nil }
            let ok = ints.withUnsafeBufferPointer { PackedInts.appendExtending(section, oldCount: oldCount, $0, into: &w) }
            return ok ? length : nil
        }
        func fixed(_ size: Int) -> Bool {
            guard oldCount * size <= rest.count else { return false }
            w.raw(UnsafeRawBufferPointer(rebasing: rest[0..<(oldCount * size)]))
            for v in values where !appendFixed(v, type: type, into: &w) { return false }
            return true
        }

        switch encoding {
        case .int:
            var ints: [Int64] = []
            ints.reserveCapacity(values.count)
            for v in values {
                guard let i = intStorageIfValid(v, type: type, linkStorage: linkStorage) else { return false }
                ints.append(i)
            }
            return packed(rest, ints) != nil
        case .bool:
            var bits: [Bool] = []
            for v in values {
                switch v {
                case .bool(let b): bits.append(b)
                case .null: bits.append(false)
                default: return false
                }
            }
            return PackedInts.appendBitmapExtending(rest, oldCount: oldCount, bits, into: &w)
        case .float: return fixed(4)
        case .double: return fixed(8)
        case .objectId: return fixed(12)
        case .bytes16: return fixed(16)
        case .date:
            var seconds: [Int64] = [], nanos: [Int64] = []
            for v in values {
                switch v {
                case .date(let t): seconds.append(t.seconds); nanos.append(Int64(t.nanoseconds))
                case .null: seconds.append(0); nanos.append(0)
                default: return false
                }
            }
            guard let first = packed(rest, seconds) else { return false }
            return packed(UnsafeRawBufferPointer(rebasing: rest[first...]), nanos) != nil
        case .bytes:
            // End offsets, out-of-line flags (all zero: an out-of-line row anywhere declines), payload.
            guard rest.count >= PackedInts.headerSize else { return false }
            let endsWidth = Int(rest[0])
            guard PackedInts.isLegalWidth(endsWidth) else { return false }
            let endsLength = PackedInts.byteLength(count: oldCount, width: endsWidth)
            guard endsLength + PackedInts.headerSize <= rest.count else { return false }
            let oldEnds: PackedIntsReader
            do { oldEnds = try PackedIntsReader(rest, offset: 0, count: oldCount) } catch { return false }
            let flags = UnsafeRawBufferPointer(rebasing: rest[endsLength...])
            guard flags.u64(at: 0) == 0, flags.u64(at: 8) == 0 else { return false }  // width 0, base 0: none out of line
            var end = oldEnds[oldCount - 1]
            guard end >= 0, endsLength + PackedInts.headerSize + Int(end) <= rest.count else { return false }
            var ends: [Int64] = []
            ends.reserveCapacity(values.count)
            for v in values {
                let n = storedLength(v, type: type)
                if n > inlineLimit { return false }
                end += Int64(n)
                ends.append(end)
            }
            guard packed(rest, ends) != nil else { return false }
            guard packed(flags, [Int64](repeating: 0, count: values.count)) != nil else { return false }
            let payload = UnsafeRawBufferPointer(rebasing: flags[PackedInts.headerSize...])
            w.raw(UnsafeRawBufferPointer(rebasing: payload[0..<Int(oldEnds[oldCount - 1])]))
            for v in values { appendStored(v, type: type, into: &w) }
            return true
        }
    }
}
