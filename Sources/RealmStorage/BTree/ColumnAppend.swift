#if canImport(Glibc)
import Glibc
#endif

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

    /// Appends the bitmap of `oldCount` bits in `old` followed by `count` more, bit `j` of them `bit(j)`.
    static func appendBitmapExtending(_ old: UnsafeRawBufferPointer, oldCount: Int, count: Int, into w: inout ByteWriter,
                                      _ bit: (Int) -> Bool) -> Bool {
        let oldBytes = BitmapReader.byteLength(count: oldCount)
        guard oldBytes <= old.count else { return false }
        let total = oldCount + count
        let start = w.count
        w.raw(UnsafeRawBufferPointer(rebasing: old[0..<oldBytes]))
        w.zeros(BitmapReader.byteLength(count: total) - oldBytes)
        w.bytes.withUnsafeMutableBytes { raw in
            for j in 0..<count where bit(j) {
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
        let extended = old.count >= 8 && old[1] == 1
            ? type == .string && appendDictionary(old, oldCount: oldCount, values, nullable: nullable, into: &w)
            : appendColumnBody(old, oldCount: oldCount, values, type: type, nullable: nullable, linkStorage: linkStorage, into: &w)
        if extended {
            w.align(8)
            return true
        }
        w.bytes.removeSubrange(mark...)
        return false
    }

    /// A string block in dictionary form (`StringDictionary`) extended by a few rows whose values it already
    /// holds (or nulls, when it has a null bitmap): its codes extended, its values as they were. Anything else
    /// (a new value, a code past the array's width, many rows) declines, and the column is encoded whole.
    private static func appendDictionary(_ old: UnsafeRawBufferPointer, oldCount: Int, _ values: ArraySlice<Value>,
                                         nullable: Bool, into w: inout ByteWriter) -> Bool {
        guard oldCount > 0, values.count <= 64, old.count >= 8, old[0] <= 1, old[1] == 1, old[2] == 0, old[3] == 0 else { return false }
        let d = Int(old.u32(at: 4))
        guard d >= 1, d <= oldCount else { return false }
        let oldHasNulls = old[0] == 1
        if values.contains(where: \.isNull) && !(nullable && oldHasNulls) { return false }
        var pos = 8
        w.raw(UnsafeRawBufferPointer(rebasing: old[0..<8]))
        if oldHasNulls {
            let first = values.startIndex
            guard PackedInts.appendBitmapExtending(UnsafeRawBufferPointer(rebasing: old[pos...]), oldCount: oldCount,
                                                   count: values.count, into: &w, { values[first + $0].isNull }) else { return false }
            pos += BitmapReader.byteLength(count: oldCount)
        }
        guard pos <= old.count else { return false }
        let codesSection = UnsafeRawBufferPointer(rebasing: old[pos...])
        let codes: PackedIntsReader, ends: PackedIntsReader, flags: PackedIntsReader
        do {
            codes = try PackedIntsReader(codesSection, offset: 0, count: oldCount)
            ends = try PackedIntsReader(codesSection, offset: codes.byteLength, count: d)
            flags = try PackedIntsReader(codesSection, offset: codes.byteLength + ends.byteLength, count: d)
        } catch { return false }
        guard flags.width == 0, flags.base == 0 else { return false }
        let entriesStart = codes.byteLength
        let payloadStart = entriesStart + ends.byteLength + flags.byteLength
        let payloadEnd = ends[d - 1]
        guard payloadEnd >= 0, payloadStart + Int(payloadEnd) <= codesSection.count else { return false }
        let payload = UnsafeRawBufferPointer(rebasing: codesSection[payloadStart..<payloadStart + Int(payloadEnd)])
        var newCodes = [Int64](repeating: 0, count: values.count)
        for (j, v) in values.enumerated() {
            guard case .string(var s) = v else { continue }
            let found: Int? = s.withUTF8 { b in
                var start: Int64 = 0
                for e in 0..<d {
                    let end = ends[e]
                    guard end >= start, end <= payloadEnd else { return nil }
                    if Int(end - start) == b.count,
                       b.count == 0 || memcmp(payload.baseAddress! + Int(start), b.baseAddress!, b.count) == 0 { return e }
                    start = end
                }
                return nil
            }
            guard let found else { return false }
            newCodes[j] = Int64(found)
        }
        let extendedCodes = newCodes.withUnsafeBufferPointer {
            PackedInts.appendExtending(codesSection, oldCount: oldCount, $0, into: &w)
        }
        guard extendedCodes else { return false }
        w.raw(UnsafeRawBufferPointer(rebasing: codesSection[entriesStart..<payloadStart + Int(payloadEnd)]))
        return true
    }

    private static func appendColumnBody(_ old: UnsafeRawBufferPointer, oldCount: Int, _ values: ArraySlice<Value>,
                                         type: PropertyType, nullable: Bool, linkStorage: LinkStorage,
                                         into w: inout ByteWriter) -> Bool {
        guard oldCount > 0, old.count >= 8, old.u64(at: 0) <= 1 else { return false }
        let encoding = ColumnEncoding.encoding(for: type)
        let nullAsZero = type == .link && linkStorage == .plusOne
        let oldHasNulls = old[0] == 1
        let anyNewNull = values.contains { $0.isNull }
        if anyNewNull && !nullable { return false }
        // The full encoder writes a null bitmap when any row is null (links store null as 0 instead).
        if !nullAsZero && anyNewNull && !oldHasNulls { return false }
        var pos = 8
        w.u8(oldHasNulls ? 1 : 0)
        w.zeros(7)
        let first = values.startIndex
        if oldHasNulls {
            guard PackedInts.appendBitmapExtending(UnsafeRawBufferPointer(rebasing: old[pos...]), oldCount: oldCount,
                                                   count: values.count, into: &w, { values[first + $0].isNull }) else { return false }
            pos += BitmapReader.byteLength(count: oldCount)
        }
        guard pos <= old.count else { return false }
        let rest = UnsafeRawBufferPointer(rebasing: old[pos...])

        func packed(_ section: UnsafeRawBufferPointer, _ ints: UnsafeBufferPointer<Int64>) -> Int? {
            // The length of the old array in `section`, after appending the extended array; nil when it cannot.
            guard section.count >= PackedInts.headerSize else { return nil }
            let width = Int(section[0])
            guard PackedInts.isLegalWidth(width) else { return nil }
            let length = PackedInts.byteLength(count: oldCount, width: width)
            guard length <= section.count else { return nil }
            return PackedInts.appendExtending(section, oldCount: oldCount, ints, into: &w) ? length : nil
        }
        func fixed(_ size: Int) -> Bool {
            guard oldCount * size <= rest.count else { return false }
            w.raw(UnsafeRawBufferPointer(rebasing: rest[0..<(oldCount * size)]))
            for v in values where !appendFixed(v, type: type, into: &w) { return false }
            return true
        }
        // The new values' integers are gathered on the stack (a small commit appends one row to each column;
        // arrays made and freed per column had cost more than the copying).
        func withInts(_ body: (UnsafeMutableBufferPointer<Int64>) -> Bool) -> Bool {
            withUnsafeTemporaryAllocation(of: Int64.self, capacity: values.count) { buf in
                buf.initialize(repeating: 0)
                return body(buf)
            }
        }

        switch encoding {
        case .int:
            return withInts { ints in
                for (j, v) in values.enumerated() {
                    guard let i = intStorageIfValid(v, type: type, linkStorage: linkStorage) else { return false }
                    ints[j] = i
                }
                return packed(rest, UnsafeBufferPointer(ints)) != nil
            }
        case .bool:
            for v in values {
                switch v {
                case .bool, .null: continue
                default: return false
                }
            }
            return PackedInts.appendBitmapExtending(rest, oldCount: oldCount, count: values.count, into: &w) {
                if case .bool(let b) = values[first + $0] { b } else { false }
            }
        case .float: return fixed(4)
        case .double: return fixed(8)
        case .objectId: return fixed(12)
        case .bytes16: return fixed(16)
        case .date:
            return withInts { seconds in
                withInts { nanos in
                    for (j, v) in values.enumerated() {
                        switch v {
                        case .date(let t): seconds[j] = t.seconds; nanos[j] = Int64(t.nanoseconds)
                        case .null: break
                        default: return false
                        }
                    }
                    guard let length = packed(rest, UnsafeBufferPointer(seconds)) else { return false }
                    return packed(UnsafeRawBufferPointer(rebasing: rest[length...]), UnsafeBufferPointer(nanos)) != nil
                }
            }
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
            let payloadEnd = oldEnds[oldCount - 1]
            guard payloadEnd >= 0, endsLength + PackedInts.headerSize + Int(payloadEnd) <= rest.count else { return false }
            return withInts { ends in
                var end = payloadEnd
                for (j, v) in values.enumerated() {
                    let n = storedLength(v, type: type)
                    if n > inlineLimit { return false }
                    end += Int64(n)
                    ends[j] = end
                }
                guard packed(rest, UnsafeBufferPointer(ends)) != nil else { return false }
                let noFlags = withInts { packed(flags, UnsafeBufferPointer($0)) != nil }
                guard noFlags else { return false }
                let payload = UnsafeRawBufferPointer(rebasing: flags[PackedInts.headerSize...])
                w.raw(UnsafeRawBufferPointer(rebasing: payload[0..<Int(payloadEnd)]))
                for v in values { appendStored(v, type: type, into: &w) }
                return true
            }
        }
    }
}
