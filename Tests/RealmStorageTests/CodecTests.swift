import Foundation
import Testing
@testable import RealmStorage

// SplitMix64 comes from TestSupport.swift.

// MARK: - Helpers

/// Equality that compares floating-point values by bit pattern (NaN payloads, -0.0).
private func same(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    default: return a == b
    }
}

private let allWidths = [0, 1, 2, 4, 8, 16, 32, 64]

/// Encodes `values` as a packed array after a 16-byte fake node header and returns the bytes.
private func packed(_ values: [Int64]) -> [UInt8] {
    var w = ByteWriter()
    w.zeros(16)
    PackedInts.encode(values, into: &w)
    return w.bytes
}

private func withReader<R>(_ bytes: [UInt8], count: Int, _ body: (PackedIntsReader) throws -> R) throws -> R {
    try bytes.withUnsafeBytes { raw in try body(try PackedIntsReader(raw, offset: 16, count: count)) }
}

private func bitmapBytes(_ bits: [Bool]) -> [UInt8] {
    var w = ByteWriter()
    PackedInts.appendBitmap(count: bits.count, into: &w) { bits[$0] }
    w.zeros(8)  // never empty, so the buffer has a base address
    return w.bytes
}

/// Checks the scan kernels of `reader` against plain Swift over `values`.
private func checkKernels(_ reader: PackedIntsReader, _ values: [Int64], rng: inout SplitMix64) throws {
    let n = values.count
    var ranges: [ClosedRange<Int64>] = [Int64.min...Int64.max, Int64.min...Int64.min, Int64.max...Int64.max]
    for _ in 0..<6 {
        let a = values.isEmpty ? Int64(bitPattern: rng.next()) : values[Int.random(in: 0..<n, using: &rng)]
        let b = values.isEmpty ? Int64(bitPattern: rng.next()) : values[Int.random(in: 0..<n, using: &rng)]
        ranges.append(min(a, b)...max(a, b))
        ranges.append(a...a)
        ranges.append(Int64.min...a)
        ranges.append(a...Int64.max)
        let c = Int64(bitPattern: rng.next())
        ranges.append(min(a, c)...max(a, c))
    }
    if let lo = values.min(), let hi = values.max() {
        ranges.append(lo...hi)
        if lo > Int64.min { ranges.append(Int64.min...(lo - 1)) }
        if hi < Int64.max { ranges.append((hi + 1)...Int64.max) }
    }
    let nullBits = (0..<n).map { _ in Int.random(in: 0..<4, using: &rng) == 0 }
    let nullStorage = bitmapBytes(nullBits)
    try nullStorage.withUnsafeBytes { nb in
        let nulls = try BitmapReader(nb, offset: 0, count: n)
        for range in ranges {
            let lo = Int.random(in: 0...n, using: &rng)
            let hi = Int.random(in: lo...n, using: &rng)
            for (rows, excl) in [(0..<n, false), (lo..<hi, false), (0..<n, true), (lo..<hi, true)] {
                var expectCount = 0
                var expectSum: Int64 = 0
                for i in rows where range.contains(values[i]) && !(excl && nullBits[i]) {
                    expectCount += 1
                    expectSum &+= values[i]
                }
                let got = reader.count(in: range, rows: rows, excluding: excl ? nulls : nil)
                #expect(got == expectCount, "count \(range) rows \(rows) nulls \(excl) width \(reader.width)")
                let s = reader.sum(in: range, rows: rows, excluding: excl ? nulls : nil)
                #expect(s.count == expectCount && s.sum == expectSum, "sum \(range) rows \(rows) width \(reader.width)")
            }
        }
        // firstIndex for present and absent values, from random starts.
        var probes: [Int64] = [Int64.min, Int64.max, Int64(bitPattern: rng.next())]
        for _ in 0..<4 where n > 0 { probes.append(values[Int.random(in: 0..<n, using: &rng)]) }
        for v in probes {
            for from in [0, Int.random(in: 0...n, using: &rng), n] {
                let expect = (from..<n).first { values[$0] == v }
                #expect(reader.firstIndex(of: v, from: from) == expect, "firstIndex \(v) from \(from)")
                let expectN = (from..<n).first { values[$0] == v && !nullBits[$0] }
                #expect(reader.firstIndex(of: v, from: from, excluding: nulls) == expectN)
            }
        }
    }
}

/// Encodes a column block at offset 16 of a fake node; returns node bytes, block length, blobs.
private func encodeColumn(_ values: [Value], type: PropertyType, nullable: Bool,
                          linkStorage: LinkStorage = .plusOne) -> (node: [UInt8], length: Int, blobs: [UInt64: [UInt8]]) {
    var w = ByteWriter()
    w.zeros(16)
    var blobs: [UInt64: [UInt8]] = [:]
    var nextRef: UInt64 = 100
    let length = ColumnCodec.encodeColumn(values, type: type, nullable: nullable, linkStorage: linkStorage,
                                          into: &w) { bytes in
        nextRef += 3
        blobs[nextRef] = Array(bytes)
        return nextRef
    }
    #expect(length == w.count - 16)
    #expect(length % 8 == 0)
    w.zeros(8)  // bytes after the block must not be read
    return (w.bytes, length, blobs)
}

private struct MissingBlob: Error {}

private func decodeColumn(_ node: [UInt8], length: Int, count: Int, type: PropertyType, nullable: Bool = true,
                          linkStorage: LinkStorage = .plusOne, blobs: [UInt64: [UInt8]]) throws -> [Value] {
    try node.withUnsafeBytes { raw in
        let r = try ColumnReader(node: raw, offset: 16, length: length, count: count,
                                 encoding: ColumnEncoding.encoding(for: type), type: type,
                                 linkStorage: linkStorage, nullable: nullable)
        return try (0..<count).map { i in
            try r.value(at: i) { ref, len in
                guard let b = blobs[ref] else { throw MissingBlob() }
                #expect(b.count == len)
                return b
            }
        }
    }
}

// MARK: - Value generators

private let sampleStrings = ["", "a", "hello, world", "日本語のテキスト", "中文字符串", "한국어",
                             "😀👨‍👩‍👧‍👦🏳️‍🌈", "Ünïcödé ÅÄÖ", "nul\u{0}inside", String(repeating: "x", count: 1024),
                             String(repeating: "y", count: 1025), String(repeating: "日", count: 400)]

private func randomString(_ rng: inout SplitMix64) -> String {
    switch Int.random(in: 0..<10, using: &rng) {
    case 0: return String(repeating: "長い文字列🙂", count: 10_000 / 6)
    case 1...4: return sampleStrings[Int.random(in: 0..<sampleStrings.count, using: &rng)]
    default:
        let n = Int.random(in: 0..<40, using: &rng)
        return String((0..<n).map { _ in Character(Unicode.Scalar(UInt8.random(in: 32...126, using: &rng))) })
    }
}

private func randomData(_ rng: inout SplitMix64) -> [UInt8] {
    switch Int.random(in: 0..<8, using: &rng) {
    case 0: return []
    case 1: return [UInt8](repeating: 0, count: Int.random(in: 1..<30, using: &rng))
    case 2: return (0..<3000).map { _ in UInt8.random(in: 0...255, using: &rng) }
    default: return (0..<Int.random(in: 0..<50, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }
}

private let specialFloats: [Float] = [0, -0.0, .infinity, -.infinity, .nan, Float(bitPattern: 0x7FC0_1234),
                                      Float(bitPattern: 0xFF80_0001), .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1.5]
private let specialDoubles: [Double] = [0, -0.0, .infinity, -.infinity, .nan, Double(bitPattern: 0x7FF8_0000_DEAD_BEEF),
                                        Double(bitPattern: 0xFFF0_0000_0000_0001), .leastNonzeroMagnitude,
                                        .greatestFiniteMagnitude, -1e-300, 3.141592653589793]
private let specialInts: [Int64] = [0, 1, -1, Int64.min, Int64.max, Int64.min + 1, Int64.max - 1, 255, 256, -256]

private func randomTimestamp(_ rng: inout SplitMix64) -> Timestamp {
    let seconds: Int64
    switch Int.random(in: 0..<6, using: &rng) {
    case 0: seconds = -2_208_988_800  // 1900
    case 1: seconds = 4_102_444_800  // 2100
    case 2: seconds = 2_147_483_648  // just past 2038
    case 3: seconds = Int64.random(in: -100_000_000_000...100_000_000_000, using: &rng)
    case 4: seconds = 0
    default: seconds = Int64.random(in: -1_000_000...1_000_000, using: &rng)
    }
    var nanos = Int32.random(in: 0...999_999_999, using: &rng)
    if seconds < 0 || (seconds == 0 && Bool.random(using: &rng)) { nanos = -nanos }
    return Timestamp(seconds: seconds, nanoseconds: nanos)
}

private func randomBytes<T>(_ rng: inout SplitMix64, as: T.Type) -> T {
    let bytes = (0..<MemoryLayout<T>.size).map { _ in UInt8.random(in: 0...255, using: &rng) }
    return bytes.withUnsafeBytes { $0.load(as: T.self) }
}

private func randomValue(_ type: PropertyType, _ rng: inout SplitMix64) -> Value {
    switch type {
    case .bool: return .bool(Bool.random(using: &rng))
    case .int, .backlink:
        if Bool.random(using: &rng) { return .int(specialInts[Int.random(in: 0..<specialInts.count, using: &rng)]) }
        return .int(Int64.random(in: -1000...100_000, using: &rng))
    case .float:
        if Bool.random(using: &rng) { return .float(specialFloats[Int.random(in: 0..<specialFloats.count, using: &rng)]) }
        return .float(Float(bitPattern: UInt32(truncatingIfNeeded: rng.next())))
    case .double:
        if Bool.random(using: &rng) { return .double(specialDoubles[Int.random(in: 0..<specialDoubles.count, using: &rng)]) }
        return .double(Double(bitPattern: rng.next()))
    case .string: return .string(randomString(&rng))
    case .data: return .data(randomData(&rng))
    case .date: return .date(randomTimestamp(&rng))
    case .objectId: return .objectId(ObjectId(bytes: randomBytes(&rng, as: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8).self)))
    case .uuid: return .uuid(UUID(uuid: randomBytes(&rng, as: uuid_t.self)))
    case .decimal128: return .decimal128(Decimal128(low: rng.next(), high: rng.next()))
    case .link:
        let keys: [UInt64] = [0, 1, UInt64.max - 1, UInt64(Int64.max), rng.next() >> 1, UInt64.random(in: 0..<1000, using: &rng)]
        return .link(ObjectKey(keys[Int.random(in: 0..<keys.count, using: &rng)]))
    case .mixed:
        let kinds: [PropertyType] = [.bool, .int, .float, .double, .string, .data, .date, .objectId, .uuid, .decimal128]
        return randomValue(kinds[Int.random(in: 0..<kinds.count, using: &rng)], &rng)
    case .linkingObjects: preconditionFailure()
    }
}

private let columnTypes = PropertyType.allCases.filter { $0 != .linkingObjects }

// MARK: - Packed integer arrays

@Suite struct CodecPackedIntsTests {
    @Test(arguments: [
        ([Int64](), 0, Int64(0)),
        ([5], 0, 5),
        ([7, 7, 7], 0, 7),
        ([0, 1], 1, 0),
        ([10, 13], 2, 10),
        ([-8, 7], 4, -8),
        ([0, 255], 8, 0),
        ([0, 256], 16, 0),
        ([-1, 65534], 16, -1),
        ([0, 65536], 32, 0),
        ([Int64(Int32.min), Int64(Int32.max)], 32, Int64(Int32.min)),
        ([0, 1 << 32], 64, 0),
        ([-5, Int64.max - 5], 64, -5),
        ([-1, Int64.max], 64, 0),  // max - min overflows
        ([Int64.min, 0], 64, 0),  // 0 - Int64.min overflows
        ([Int64.min, -1], 64, Int64.min),
        ([Int64.min, Int64.max], 64, 0),
    ])
    func writerChoosesBaseAndWidth(values: [Int64], width: Int, base: Int64) throws {
        let bytes = packed(values)
        #expect(bytes.count == 16 + PackedInts.byteLength(count: values.count, width: width))
        try withReader(bytes, count: values.count) { r in
            #expect(r.width == width)
            #expect(r.base == base)
            #expect(r.array == values)
            #expect(r.byteLength == bytes.count - 16)
        }
    }

    @Test(arguments: allWidths)
    func roundTripsEveryWidth(width: Int) throws {
        var rng = SplitMix64(seed: UInt64(width) &* 7919)
        let span: UInt64 = width == 64 ? .max : (1 << UInt64(width)) - 1
        for count in [0, 1, 2, 7, 8, 9, 31, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000] {
            for baseKind in 0..<4 {
                var values: [Int64]
                if width == 64 {
                    values = (0..<count).map { _ in Int64(bitPattern: rng.next()) }
                    if count >= 2 { values[0] = Int64.min; values[count - 1] = Int64.max }
                } else {
                    let maxBase = Int64.max - Int64(span)
                    let base: Int64 = [Int64.min, maxBase, 0, Int64.random(in: -1_000_000...1_000_000, using: &rng)][baseKind]
                    values = (0..<count).map { _ in base + Int64(rng.next() & span) }
                    if count >= 2 && width > 0 { values[0] = base; values[count - 1] = base + Int64(span) }
                }
                let bytes = packed(values)
                try withReader(bytes, count: count) { r in
                    if count >= 2 || width == 0 { #expect(r.width == width, "count \(count)") }
                    #expect(r.array == values, "width \(width) count \(count)")
                    for i in 0..<count { #expect(r[i] == values[i]) }
                    var seen = 0
                    r.forEach { i, v in
                        #expect(i == seen && v == values[i])
                        seen += 1
                    }
                    #expect(seen == count)
                    try checkKernels(r, values, rng: &rng)
                }
            }
        }
    }

    @Test func boundaryArrays() throws {
        var rng = SplitMix64(seed: 42)
        let cases: [[Int64]] = [
            [Int64.min], [Int64.max], [Int64.min, Int64.max], [Int64.max, Int64.min, 0, -1, 1],
            Array(repeating: Int64.min, count: 70), Array(repeating: Int64.max, count: 130),
            Array(repeating: -3, count: 65), (0..<200).map { $0 % 2 == 0 ? -Int64($0) : Int64($0) },
            (0..<300).map { Int64.max - Int64($0) }, (0..<300).map { Int64.min + Int64($0) * 3 },
            (0..<129).map { $0 % 3 == 0 ? Int64.min : Int64.max },
        ]
        for values in cases {
            try withReader(packed(values), count: values.count) { r in
                #expect(r.array == values)
                try checkKernels(r, values, rng: &rng)
            }
        }
    }

    @Test func seededRandomArrays() throws {
        var rng = SplitMix64(seed: 0xC0DEC)
        for _ in 0..<400 {
            let count = Int.random(in: 0...600, using: &rng)
            let bits = [0, 1, 2, 3, 5, 8, 13, 17, 31, 33, 48, 63, 64][Int.random(in: 0..<13, using: &rng)]
            let base = Int64(bitPattern: rng.next()) >> Int64.random(in: 0...63, using: &rng)
            let values = (0..<count).map { _ -> Int64 in
                let u = bits == 64 ? rng.next() : rng.next() & ((1 << UInt64(bits)) - 1)
                return base &+ Int64(bitPattern: u)
            }
            try withReader(packed(values), count: count) { r in
                #expect(r.array == values)
                try checkKernels(r, values, rng: &rng)
            }
        }
    }

    /// `ascends(from:through:)` (a bytes column's end offsets, DECISIONS 117) says what a loop over the values
    /// says, for ascending arrays and arrays that fall once, start below the floor, end above the limit, or
    /// whose base plus a field overflows; nil only for widths 1, 2, 4 and 64.
    /// `appendIndices(in:)` gives the indices a loop over the values gives, for every width, ranges inside,
    /// around, across and outside the values, and counts that end inside a 64-element block.
    @Test func appendIndicesAgreesWithALoopOverTheValues() throws {
        var rng = SplitMix64(seed: 0x1D5)
        for round in 0..<2_000 {
            let count = round % 9 == 0 ? rng.below(3) : 1 + rng.below(600)
            let spread = [1, 2, 3, 15, 200, 60_000, 1 << 31, 1 << 40][rng.below(8)]
            let offset = [0, -7, 1 << 50, Int64.min / 2][rng.below(4)]
            let values = (0..<count).map { _ in offset + Int64(rng.below(spread)) }
            var lo = offset + Int64(rng.below(spread + 4)) - 2
            var hi = lo + Int64(rng.below(spread + 2))
            if round % 11 == 0 { (lo, hi) = (Int64.min, Int64.max) }
            else if round % 13 == 0 { (lo, hi) = (hi + 1, hi + 1 + Int64(rng.below(3))) }
            let expected = values.indices.filter { values[$0] >= lo && values[$0] <= hi }.map(Int32.init)
            try withReader(packed(values), count: count) { r in
                var out: [Int32] = [-1]
                r.appendIndices(in: lo...hi, to: &out)
                #expect(out == [-1] + expected, "width \(r.width), \(count) values, \(lo)...\(hi)")
            }
        }
    }

    @Test func ascendsAgreesWithALoopOverTheValues() throws {
        var rng = SplitMix64(seed: 0xA5C)
        var answered = [false: 0, true: 0]
        for round in 0..<3_000 {
            let count = round % 7 == 0 ? rng.below(3) : 1 + rng.below(700)
            let step = [1, 3, 200, 70_000, 1 << 40][rng.below(5)]
            var values = (0..<count).reduce(into: [Int64]()) { v, _ in v.append((v.last ?? Int64(rng.below(50))) + Int64(rng.below(step))) }
            switch rng.below(5) {
            case 0 where count > 1: let i = 1 + rng.below(count - 1); values[i] = values[i - 1] - 1 - Int64(rng.below(3))
            case 1 where count > 0: values[0] = -1 - Int64(rng.below(5))
            default: break
            }
            let low: Int64 = 0
            let limit = (values.last ?? 0) + Int64(rng.below(3)) - 1
            let expected = values.isEmpty || (values[0] >= low && zip(values, values.dropFirst()).allSatisfy { $0 <= $1 } && values.last! <= limit)
            try withReader(packed(values), count: count) { r in
                let answer = r.ascends(from: low, through: limit)
                if [1, 2, 4, 64].contains(r.width) {
                    #expect(answer == nil, "width \(r.width)")
                } else {
                    #expect(answer == expected, "width \(r.width): \(values.prefix(20)), limit \(limit)")
                    answered[expected, default: 0] += 1
                }
            }
        }
        #expect(answered[true]! > 300 && answered[false]! > 300, "\(answered)")
        // A base so large that adding a field overflows: the values wrap, and the array does not ascend.
        for width in [8, 16, 32] {
            var w = ByteWriter()
            w.zeros(16)
            w.bytes += [UInt8(width), 0, 0, 0, 0, 0, 0, 0]
            withUnsafeBytes(of: (Int64.max - 1).littleEndian) { w.bytes += $0 }
            let fields: [UInt64] = [0, 1, 5]
            var words = [UInt64](repeating: 0, count: (fields.count * width + 63) / 64)
            for (i, f) in fields.enumerated() { words[i * width / 64] |= f << UInt64(i * width % 64) }
            for word in words { withUnsafeBytes(of: word.littleEndian) { w.bytes += $0 } }
            try withReader(w.bytes, count: 3) { r in
                #expect(r.array[2] < r.array[1])
                #expect(r.ascends(from: 0, through: .max) == false, "width \(width)")
            }
        }
    }

    @Test func encodeFromUnsafeBufferMatchesArray() {
        let values: [Int64] = [3, 9, -2, 100]
        var a = ByteWriter()
        PackedInts.encode(values, into: &a)
        var b = ByteWriter()
        values.withUnsafeBufferPointer { PackedInts.encode($0, into: &b) }
        #expect(a.bytes == b.bytes)
        #expect(a.bytes.count == PackedInts.byteLength(count: 4, width: 8))
    }

    @Test func rejectsCorruptHeaders() throws {
        let good = packed((0..<100).map { Int64($0) })
        func check(_ bytes: [UInt8], count: Int = 100, offset: Int = 16) -> Bool {
            bytes.withUnsafeBytes { raw in (try? PackedIntsReader(raw, offset: offset, count: count)) != nil }
        }
        #expect(check(good))
        for badWidth: UInt8 in [3, 5, 7, 12, 63, 65, 128, 255] {
            var b = good
            b[16] = badWidth
            #expect(!check(b), "width \(badWidth)")
        }
        var reserved = good
        reserved[19] = 1
        #expect(!check(reserved))
        #expect(!check(Array(good.dropLast())))
        #expect(!check(good, count: 200))
        #expect(!check(good, count: -1))
        #expect(!check(good, offset: 12))  // misaligned
        #expect(!check(good, offset: good.count - 8))
        #expect(!check(good, offset: good.count + 8))
        #expect(!check([], count: 0, offset: 0))
    }
}

// MARK: - Columns

@Suite struct CodecColumnTests {
    @Test func encodingForType() {
        #expect(ColumnEncoding.encoding(for: .int) == .int)
        #expect(ColumnEncoding.encoding(for: .link) == .int)
        #expect(ColumnEncoding.encoding(for: .backlink) == .int)
        #expect(ColumnEncoding.encoding(for: .bool) == .bool)
        #expect(ColumnEncoding.encoding(for: .float) == .float)
        #expect(ColumnEncoding.encoding(for: .double) == .double)
        #expect(ColumnEncoding.encoding(for: .date) == .date)
        #expect(ColumnEncoding.encoding(for: .objectId) == .objectId)
        #expect(ColumnEncoding.encoding(for: .uuid) == .bytes16)
        #expect(ColumnEncoding.encoding(for: .decimal128) == .bytes16)
        #expect(ColumnEncoding.encoding(for: .string) == .bytes)
        #expect(ColumnEncoding.encoding(for: .data) == .bytes)
        #expect(ColumnEncoding.encoding(for: .mixed) == .bytes)
        #expect(ColumnEncoding.encodingIfStored(for: .linkingObjects) == nil)
        #expect(ColumnEncoding.allCases.map(\.rawValue) == Array(1...8))
    }

    @Test(arguments: columnTypes, [false, true])
    func roundTripsEveryType(type: PropertyType, nullable: Bool) throws {
        var rng = SplitMix64(seed: UInt64(type.rawValue) << 8 | (nullable ? 1 : 0))
        for count in [0, 1, 3, 63, 64, 65, 200, 256] {
            let values = (0..<count).map { _ -> Value in
                if nullable && Int.random(in: 0..<5, using: &rng) == 0 { return .null }
                return randomValue(type, &rng)
            }
            try checkRoundTrip(values, type: type, nullable: nullable)
            if type == .link {
                try checkRoundTrip(values, type: type, nullable: nullable, linkStorage: .raw)
            }
        }
        // All null, and no nulls in a nullable column.
        if nullable {
            try checkRoundTrip(Array(repeating: .null, count: 70), type: type, nullable: true)
            let full = (0..<70).map { _ in randomValue(type, &rng) }
            try checkRoundTrip(full, type: type, nullable: true)
        }
    }

    private func checkRoundTrip(_ values: [Value], type: PropertyType, nullable: Bool,
                                linkStorage: LinkStorage = .plusOne) throws {
        let (node, length, blobs) = encodeColumn(values, type: type, nullable: nullable, linkStorage: linkStorage)
        let decoded = try decodeColumn(node, length: length, count: values.count, type: type, nullable: nullable,
                                       linkStorage: linkStorage, blobs: blobs)
        #expect(decoded.count == values.count)
        for (i, (a, b)) in zip(values, decoded).enumerated() {
            #expect(same(a, b), "\(type) row \(i): wrote \(a), read \(b)")
        }
        // Typed accessors agree with value(at:).
        try node.withUnsafeBytes { raw in
            let r = try ColumnReader(node: raw, offset: 16, length: length, count: values.count,
                                     encoding: ColumnEncoding.encoding(for: type), type: type, linkStorage: linkStorage)
            let plusOneLink = type == .link && linkStorage == .plusOne
            #expect(r.hasNulls == (!plusOneLink && values.contains(.null)))
            for (i, v) in values.enumerated() {
                #expect(r.isNull(i) == v.isNull)
                if v.isNull { continue }
                switch (v, r.encoding) {
                case (.int(let x), .int): #expect(r.int(at: i) == x)
                case (.link(let k), .int):
                    #expect(r.linkKey(at: i) == k)
                    #expect(UInt64(bitPattern: r.int(at: i)) == (plusOneLink ? k.rawValue + 1 : k.rawValue))
                case (.bool(let x), .bool): #expect(r.bool(at: i) == x)
                case (.float(let x), .float): #expect(r.float(at: i).bitPattern == x.bitPattern)
                case (.double(let x), .double): #expect(r.double(at: i).bitPattern == x.bitPattern)
                case (.date(let x), .date): #expect(r.timestamp(at: i) == x)
                case (.objectId(let x), .objectId): #expect(r.objectId(at: i) == x)
                case (.uuid(let x), .bytes16): #expect(r.uuid(at: i) == x)
                case (.decimal128(let x), .bytes16): #expect(r.decimal128(at: i) == x)
                case (_, .bytes):
                    let inline = r.withBytes(at: i) { Array($0) }
                    #expect((inline == nil) == r.isOutOfLine(i))
                    if let inline {
                        switch (type, v) {
                        case (.string, .string(let s)): #expect(inline == Array(s.utf8))
                        case (.data, .data(let d)): #expect(inline == d)
                        default:
                            #expect(inline.first == v.type!.rawValue)
                            #expect(try r.mixedType(at: i) { _, _ in throw MissingBlob() } == v.type)
                        }
                    } else {
                        let (ref, len) = try #require(r.blobReference(at: i))
                        #expect(blobs[ref]?.count == Int(len))
                        #expect(len > 1024)
                    }
                default: Issue.record("unexpected \(v) in \(r.encoding) column")
                }
            }
            if r.encoding == .int {
                let ints = try #require(r.packedInts)
                #expect(ints.count == values.count)
            }
        }
    }

    @Test func stringsInlineAndOutOfLine() throws {
        let long = String(repeating: "é", count: 5_000)  // 10,000 bytes
        let tenK = String(repeating: "abcdefghij", count: 1_000)
        let values: [Value] = [.string(""), .string("日本語"), .string("🇯🇵🎉"), .string(tenK), .null,
                               .string(String(repeating: "z", count: 1024)), .string(String(repeating: "z", count: 1025)),
                               .string(long), .string("tail")]
        let (node, length, blobs) = encodeColumn(values, type: .string, nullable: true)
        #expect(blobs.count == 3)
        #expect(Set(blobs.values.map(\.count)) == [10_000, 1025])
        let decoded = try decodeColumn(node, length: length, count: values.count, type: .string, blobs: blobs)
        #expect(decoded == values)
        try node.withUnsafeBytes { raw in
            let r = try ColumnReader(node: raw, offset: 16, length: length, count: values.count,
                                     encoding: .bytes, type: .string)
            #expect(r.withBytes(at: 0) { $0.count } == 0)
            #expect(r.withBytes(at: 1) { String(decoding: $0, as: UTF8.self) } == "日本語")
            #expect(r.withBytes(at: 3) { $0.count } == nil)  // out-of-line
            #expect(r.withBytes(at: 4) { $0.count } == nil)  // null
            #expect(r.withBytes(at: 5) { $0.count } == 1024)  // exactly the limit stays inline
            #expect(r.isOutOfLine(6))
            #expect(!r.isOutOfLine(4))
            #expect(r.blobReference(at: 5) == nil)
        }
        // A missing blob surfaces the loader's error.
        #expect(throws: MissingBlob.self) {
            _ = try decodeColumn(node, length: length, count: values.count, type: .string, blobs: [:])
        }
    }

    @Test func dataWithZeroBytesAndLargeData() throws {
        let big = (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let values: [Value] = [.data([]), .data([0]), .data([0, 0, 0, 1, 0]), .data(big), .data([255])]
        let (node, length, blobs) = encodeColumn(values, type: .data, nullable: false)
        #expect(blobs.count == 1)
        #expect(try decodeColumn(node, length: length, count: 5, type: .data, nullable: false, blobs: blobs) == values)
    }

    @Test func floatsKeepEveryBitPattern() throws {
        let floats = specialFloats.map(Value.float)
        let (fn, fl, _) = encodeColumn(floats, type: .float, nullable: false)
        let fd = try decodeColumn(fn, length: fl, count: floats.count, type: .float, blobs: [:])
        #expect(zip(floats, fd).allSatisfy(same))
        let doubles = specialDoubles.map(Value.double) + [.null]
        let (dn, dl, _) = encodeColumn(doubles, type: .double, nullable: true)
        let dd = try decodeColumn(dn, length: dl, count: doubles.count, type: .double, blobs: [:])
        #expect(zip(doubles, dd).allSatisfy(same))
        if case .double(let negZero) = dd[1] { #expect(negZero.sign == .minus && negZero == 0) }
    }

    @Test func datesBeforeEpochAndAfter2038() throws {
        let values: [Value] = [
            .date(Timestamp(seconds: -2_208_988_800, nanoseconds: -123_456_789)),
            .date(Timestamp(seconds: -1, nanoseconds: -1)),
            .date(Timestamp(seconds: 0, nanoseconds: -5)),
            .date(Timestamp(seconds: 0, nanoseconds: 999_999_999)),
            .date(Timestamp(seconds: 2_147_483_648, nanoseconds: 1)),
            .date(Timestamp(seconds: 32_503_680_000, nanoseconds: 500_000_000)),
            .null,
            .date(Timestamp(seconds: Int64.min, nanoseconds: Int32.min)),
            .date(Timestamp(seconds: Int64.max, nanoseconds: Int32.max)),
        ]
        let (node, length, _) = encodeColumn(values, type: .date, nullable: true)
        #expect(try decodeColumn(node, length: length, count: values.count, type: .date, blobs: [:]) == values)
    }

    @Test func mixedOfEveryKind() throws {
        var rng = SplitMix64(seed: 11)
        let values: [Value] = [
            .null, .bool(true), .bool(false), .int(Int64.min), .int(42), .float(.nan), .float(-0.0),
            .double(-.infinity), .double(Double(bitPattern: 0x7FF8_0000_0000_0001)), .string(""), .string("混合😀"),
            .string(String(repeating: "m", count: 1023)), .string(String(repeating: "m", count: 1024)),
            .data([]), .data([0, 0]), .data([UInt8](repeating: 9, count: 2000)),
            .date(Timestamp(seconds: -86_400, nanoseconds: -1)), .objectId(ObjectId(byteArray: 1...12)),
            .uuid(UUID(uuid: randomBytes(&rng, as: uuid_t.self))), .decimal128(Decimal128(low: 1, high: 0x3040_0000_0000_0000)),
        ]
        let (node, length, blobs) = encodeColumn(values, type: .mixed, nullable: true)
        // 1 tag byte + 1024 bytes passes the limit; 1 + 1023 does not.
        #expect(Set(blobs.values.map(\.count)) == [1025, 2001])
        #expect(blobs.values.allSatisfy { $0.first == PropertyType.string.rawValue || $0.first == PropertyType.data.rawValue })
        let decoded = try decodeColumn(node, length: length, count: values.count, type: .mixed, blobs: blobs)
        for (a, b) in zip(values, decoded) { #expect(same(a, b), "\(a) vs \(b)") }
    }

    @Test func linkStorage() throws {
        let values: [Value] = [.link(ObjectKey(0)), .null, .link(ObjectKey(41)), .link(ObjectKey(UInt64.max - 1))]
        let (node, length, _) = encodeColumn(values, type: .link, nullable: true)
        try node.withUnsafeBytes { raw in
            let r = try ColumnReader(node: raw, offset: 16, length: length, count: 4, encoding: .int, type: .link)
            let ints = try #require(r.packedInts)
            #expect(ints.array == [1, 0, 42, -1])
            #expect(!r.hasNulls)
            #expect(r.isNull(1) && !r.isNull(0))
            #expect(r.linkKey(at: 1) == nil)
            #expect(r.linkKey(at: 3) == ObjectKey(UInt64.max - 1))
        }
        let raw: [Value] = [.link(ObjectKey(0)), .link(ObjectKey(7)), .link(ObjectKey(3))]
        let (rn, rl, _) = encodeColumn(raw, type: .link, nullable: false, linkStorage: .raw)
        try rn.withUnsafeBytes { buf in
            let r = try ColumnReader(node: buf, offset: 16, length: rl, count: 3, encoding: .int, type: .link,
                                     linkStorage: .raw)
            #expect(r.packedInts?.array == [0, 7, 3])
            #expect(!r.isNull(0))
        }
        #expect(try decodeColumn(rn, length: rl, count: 3, type: .link, linkStorage: .raw, blobs: [:]) == raw)
    }

    @Test func listRefAndBacklinkColumnsHoldRawInts() throws {
        let values: [Value] = [.int(0), .int(5 << 1 | 1), .int(1234)]
        for type in [PropertyType.int, .backlink] {
            let (node, length, _) = encodeColumn(values, type: type, nullable: false)
            #expect(try decodeColumn(node, length: length, count: 3, type: type, blobs: [:]) == values)
        }
    }

    @Test func nullCountsAndKernelsWithNullBitmap() throws {
        let values: [Value] = (0..<300).map { $0 % 7 == 0 ? .null : .int(Int64($0)) }
        let (node, length, _) = encodeColumn(values, type: .int, nullable: true)
        try node.withUnsafeBytes { raw in
            let r = try ColumnReader(node: raw, offset: 16, length: length, count: 300, encoding: .int, type: .int)
            let ints = try #require(r.packedInts)
            let nulls = try #require(r.nullBitmap)
            // Null slots hold 0, so 0...10 counts them unless excluded.
            let expected = (0...10).filter { $0 % 7 != 0 }.count
            #expect(ints.count(in: 0...10, excluding: nulls) == expected)
            #expect(ints.count(in: 0...10) == expected + 300 / 7 + 1)
            #expect(nulls.nonzeroCount() == 300 / 7 + 1)
            #expect(ints.sum(in: Int64.min...Int64.max, excluding: nulls).sum == Int64((0..<300).filter { $0 % 7 != 0 }.reduce(0, +)))
        }
    }

    @Test func throwingBlobStoreLeavesWriterUnchanged() {
        struct StoreFailed: Error {}
        var w = ByteWriter()
        w.zeros(8)
        #expect(throws: StoreFailed.self) {
            try ColumnCodec.encodeColumn([.string("a"), .string(String(repeating: "b", count: 2000))],
                                         type: .string, nullable: false, into: &w) { _ in throw StoreFailed() }
        }
        #expect(w.bytes == [UInt8](repeating: 0, count: 8))
    }

    @Test func rejectsStructuralCorruption() throws {
        let values: [Value] = [.string("abc"), .string("de")]
        let (node, length, _) = encodeColumn(values, type: .string, nullable: false)
        func open(_ bytes: [UInt8], offset: Int = 16, length: Int, count: Int = 2, encoding: ColumnEncoding = .bytes,
                  type: PropertyType = .string, nullable: Bool = true) -> CodecError? {
            bytes.withUnsafeBytes { raw -> CodecError? in
                do {
                    _ = try ColumnReader(node: raw, offset: offset, length: length, count: count, encoding: encoding,
                                         type: type, nullable: nullable)
                    return nil
                } catch let e as CodecError { return e } catch { return CodecError("\(error)") }
            }
        }
        #expect(open(node, length: length) == nil)
        #expect(open(node, length: length - 8) != nil)  // byte area cut
        #expect(open(node, length: length + 100) != nil)  // past the node
        #expect(open(node, offset: 12, length: length) != nil)  // misaligned
        #expect(open(node, length: length, count: 3) != nil)
        #expect(open(node, length: length, encoding: .int) != nil)  // encoding does not match type
        #expect(open(node, length: length, type: .linkingObjects) != nil)
        var badHeader = node
        badHeader[16] = 2
        #expect(open(badHeader, length: length) != nil)
        let (nullNode, nullLength, _) = encodeColumn([.string("x"), .null], type: .string, nullable: true)
        #expect(open(nullNode, length: nullLength, nullable: false) != nil)
        #expect(open(nullNode, length: nullLength, nullable: true) == nil)
        // Invalid UTF-8 in a string column throws on read.
        var badUTF8 = node
        let areaEnd = 16 + length
        if let i = (16..<areaEnd).last(where: { badUTF8[$0] == UInt8(ascii: "e") }) { badUTF8[i] = 0xFF }
        #expect(throws: CodecError.self) {
            _ = try decodeColumn(badUTF8, length: length, count: 2, type: .string, blobs: [:])
        }
        // Date nanoseconds outside Int32.
        var w = ByteWriter()
        w.zeros(16)
        w.u64(0)
        PackedInts.encode([0], into: &w)
        PackedInts.encode([Int64(Int32.max) + 1], into: &w)
        #expect(open(w.bytes, length: w.count - 16, count: 1, encoding: .date, type: .date) != nil)
    }

    /// Truncations, byte flips, wrong counts and wrong encodings must throw or decode to
    /// something, never trap or read outside the block.
    @Test func survivesSeededMutations() {
        var rng = SplitMix64(seed: 0xBAD_C0DE)
        var samples: [(type: PropertyType, linkStorage: LinkStorage, values: [Value])] = []
        for type in columnTypes {
            for count in [1, 5, 70] {
                let values = (0..<count).map { _ -> Value in
                    Int.random(in: 0..<4, using: &rng) == 0 ? .null : randomValue(type, &rng)
                }
                samples.append((type, .plusOne, values))
                if type == .link { samples.append((type, .raw, values)) }
            }
        }
        let encoded = samples.map { s in (s, encodeColumn(s.values, type: s.type, nullable: true, linkStorage: s.linkStorage)) }
        var opened = 0
        for round in 0..<6000 {
            let (sample, enc) = encoded[Int.random(in: 0..<encoded.count, using: &rng)]
            var node = enc.node
            var length = enc.length
            var count = sample.values.count
            var type = sample.type
            switch round % 6 {
            case 0: length = Int.random(in: 0..<length, using: &rng) & ~7
            case 1, 2:
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let i = Int.random(in: 16..<16 + length, using: &rng)
                    node[i] ^= UInt8.random(in: 1...255, using: &rng)
                }
            case 3:
                let i = Int.random(in: 16..<16 + length, using: &rng)
                node[i] = [0, 1, 0xFF, 0x80, 64, 16][Int.random(in: 0..<6, using: &rng)]
            case 4: count = max(0, count + Int.random(in: -3...3, using: &rng))
            default:
                type = columnTypes[Int.random(in: 0..<columnTypes.count, using: &rng)]
                length = Int.random(in: 0...length, using: &rng)
            }
            let blobs = enc.blobs
            // Hand the reader an exact-size copy of the bytes up to the (possibly shortened) block,
            // so any read past `length` leaves the allocation (caught by --sanitize=address).
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 + length, alignment: 8)
            defer { copy.deallocate() }
            node.withUnsafeBytes { copy.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<16 + length])) }
            do {
                let view = UnsafeRawBufferPointer(copy)
                guard let r = try? ColumnReader(node: view, offset: 16, length: length, count: count,
                                                encoding: ColumnEncoding.encoding(for: type), type: type,
                                                linkStorage: sample.linkStorage) else { return }
                opened += 1
                for i in 0..<count {
                    _ = r.isNull(i)
                    _ = try? r.value(at: i) { ref, len in
                        if let b = blobs[ref] { return b }
                        if Bool.random(using: &rng) { throw MissingBlob() }
                        return [UInt8](repeating: UInt8(truncatingIfNeeded: ref), count: len)
                    }
                    switch r.encoding {
                    case .int: _ = r.int(at: i)
                    case .bool: _ = r.bool(at: i)
                    case .float: _ = r.float(at: i)
                    case .double: _ = r.double(at: i)
                    case .date: _ = r.timestamp(at: i)
                    case .objectId: _ = r.objectId(at: i)
                    case .bytes16: _ = r.withBytes16(at: i) { $0.count }
                    case .bytes:
                        _ = r.withBytes(at: i) { $0.reduce(0, &+) }
                        _ = r.blobReference(at: i)
                    }
                }
                if let ints = r.packedInts ?? r.seconds {
                    _ = ints.count(in: -5...Int64.random(in: -5...1000, using: &rng), excluding: r.nullBitmap)
                    _ = ints.sum(in: Int64.min...Int64.max, excluding: r.nullBitmap)
                    _ = ints.firstIndex(of: 1, from: 0, excluding: r.nullBitmap)
                    _ = ints.array
                }
            }
        }
        #expect(opened > 500)  // many mutations stay structurally valid and were decoded
    }
}
