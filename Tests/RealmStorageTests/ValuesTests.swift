import Foundation
import Testing
@testable import RealmStorage

/// Seeded tests use SplitMix64 from TestSupport.swift.
private typealias SeededGenerator = SplitMix64

// MARK: - ObjectId

@Suite struct ValuesObjectIdTests {
    @Test(arguments: [
        "000000000000000000000000",
        "0123456789abcdef01234567",
        "ffffffffffffffffffffffff",
        "5f1a2b3c4d5e6f7081920a1b",
    ])
    func hexRoundTrip(_ hex: String) throws {
        let oid = try #require(ObjectId(hexString: hex))
        #expect(oid.hexString == hex)
        #expect(oid.description == hex)
        let upper = try #require(ObjectId(hexString: hex.uppercased()))
        #expect(upper == oid)
        #expect(ObjectId(byteArray: oid.byteArray) == oid)
    }

    @Test func hexBytesAreBigEndianAsPrinted() throws {
        let oid = try #require(ObjectId(hexString: "0102030405060708090A0B0C"))
        #expect(oid.byteArray == Array(1...12))
        #expect(ObjectId(hexString: "000000000000000000000000") == ObjectId.zero)
    }

    @Test(arguments: [
        "", "00000000000000000000000", "0000000000000000000000000",
        "00000000000000000000000g", "zzzzzzzzzzzzzzzzzzzzzzzz", " 00000000000000000000000",
        "0x0000000000000000000000", "00000000000000000000000-", "ééééééééééää",
    ])
    func invalidHexRejected(_ s: String) {
        #expect(ObjectId(hexString: s) == nil)
    }

    @Test func orderingAndHashingMatchBytes() {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<5000 {
            let a = ObjectId(byteArray: (0..<12).map { _ in UInt8.random(in: 0...3, using: &rng) })
            let b = ObjectId(byteArray: (0..<12).map { _ in UInt8.random(in: 0...3, using: &rng) })
            #expect((a < b) == a.byteArray.lexicographicallyPrecedes(b.byteArray))
            #expect((a == b) == (a.byteArray == b.byteArray))
            if a == b { #expect(a.hashValue == b.hashValue) }
        }
    }

    @Test func generateIsUniqueAndIncreasingWithinASecond() {
        let n = 100_000
        var ids: [ObjectId] = []
        ids.reserveCapacity(n)
        // The clock read before and after, so that no speed of the machine matters.
        let before = Date().timeIntervalSince1970.rounded(.down)
        for _ in 0..<n { ids.append(ObjectId.generate()) }
        let after = Date().timeIntervalSince1970
        #expect(Set(ids).count == n)
        var sameSecondPairs = 0
        for (a, b) in zip(ids, ids.dropFirst()) {
            #expect(a.timestamp <= b.timestamp)
            guard a.timestamp == b.timestamp else { continue }
            sameSecondPairs += 1
            // Only a wrap of the 24-bit counter may break the order.
            let counterWrapped = a.byteArray[9...] == [0xFF, 0xFF, 0xFF]
            #expect(a < b || counterWrapped, "\(a) then \(b)")
            // The 5 process bytes are the same.
            #expect(a.byteArray[4..<9] == b.byteArray[4..<9])
        }
        #expect(sameSecondPairs > 0)
        #expect(ids[0].timestamp.timeIntervalSince1970 >= before)
        #expect(ids[n - 1].timestamp.timeIntervalSince1970 <= after)
    }

    @Test func generateIsThreadSafe() async {
        let perTask = 10_000
        let all = await withTaskGroup(of: [ObjectId].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<perTask).map { _ in ObjectId.generate() } }
            }
            var all: [ObjectId] = []
            for await part in group { all += part }
            return all
        }
        #expect(Set(all).count == 8 * perTask)
    }
}

// MARK: - Decimal128

@Suite struct ValuesDecimal128Tests {
    struct Known: Sendable, CustomStringConvertible {
        var string: String
        var high: UInt64
        var low: UInt64
        var canonical: String
        var description: String { string }
    }

    @Test(arguments: [
        Known(string: "0", high: 0x3040_0000_0000_0000, low: 0, canonical: "0"),
        Known(string: "-0", high: 0xB040_0000_0000_0000, low: 0, canonical: "-0"),
        Known(string: "1", high: 0x3040_0000_0000_0000, low: 1, canonical: "1"),
        Known(string: "-1", high: 0xB040_0000_0000_0000, low: 1, canonical: "-1"),
        Known(string: "0.1", high: 0x303E_0000_0000_0000, low: 1, canonical: "0.1"),
        Known(string: "1.5", high: 0x303E_0000_0000_0000, low: 15, canonical: "1.5"),
        Known(string: "-0.001", high: 0xB03A_0000_0000_0000, low: 1, canonical: "-0.001"),
        Known(string: "0.00", high: 0x303C_0000_0000_0000, low: 0, canonical: "0.00"),
        Known(string: "1E+10", high: 0x3054_0000_0000_0000, low: 1, canonical: "1E+10"),
        Known(string: "1e3", high: 0x3046_0000_0000_0000, low: 1, canonical: "1E+3"),
        Known(string: "1E-6176", high: 0, low: 1, canonical: "1E-6176"),
        Known(string: "1E+6144", high: 0x5FFE_314D_C644_8D93, low: 0x38C1_5B0A_0000_0000,
              canonical: "1.000000000000000000000000000000000E+6144"),
        Known(string: "9.999999999999999999999999999999999E+6144", high: 0x5FFF_ED09_BEAD_87C0,
              low: 0x378D_8E63_FFFF_FFFF, canonical: "9.999999999999999999999999999999999E+6144"),
        Known(string: "0E+9999", high: 0x5FFE_0000_0000_0000, low: 0, canonical: "0E+6111"),
        Known(string: "0E-9999", high: 0, low: 0, canonical: "0E-6176"),
        Known(string: "0.000001", high: 0x3034_0000_0000_0000, low: 1, canonical: "0.000001"),
        Known(string: "0.0000001", high: 0x3032_0000_0000_0000, low: 1, canonical: "1E-7"),
        Known(string: "NaN", high: 0x7C00_0000_0000_0000, low: 0, canonical: "NaN"),
        Known(string: "nan", high: 0x7C00_0000_0000_0000, low: 0, canonical: "NaN"),
        Known(string: "-NaN", high: 0xFC00_0000_0000_0000, low: 0, canonical: "NaN"),
        Known(string: "Infinity", high: 0x7800_0000_0000_0000, low: 0, canonical: "Infinity"),
        Known(string: "+Inf", high: 0x7800_0000_0000_0000, low: 0, canonical: "Infinity"),
        Known(string: "-Infinity", high: 0xF800_0000_0000_0000, low: 0, canonical: "-Infinity"),
        Known(string: "-inf", high: 0xF800_0000_0000_0000, low: 0, canonical: "-Infinity"),
        Known(string: "1E+6145", high: 0x7800_0000_0000_0000, low: 0, canonical: "Infinity"),
        Known(string: "-1E+99999999999999999999", high: 0xF800_0000_0000_0000, low: 0, canonical: "-Infinity"),
        // Rounding, half to even.
        Known(string: "12345678901234567890123456789012345", high: 0x3042_3CDE_6FFF_9732,
              low: 0xDE82_5CD0_7E96_AFF2, canonical: "1.234567890123456789012345678901234E+34"),
        Known(string: "1E-6177", high: 0, low: 0, canonical: "0E-6176"),
        Known(string: "5E-6177", high: 0, low: 0, canonical: "0E-6176"),
        Known(string: "6E-6177", high: 0, low: 1, canonical: "1E-6176"),
        Known(string: "15E-6177", high: 0, low: 2, canonical: "2E-6176"),
        Known(string: "25E-6177", high: 0, low: 2, canonical: "2E-6176"),
        Known(string: "-1E-9999", high: 0x8000_0000_0000_0000, low: 0, canonical: "-0E-6176"),
    ])
    func knownEncodings(_ k: Known) throws {
        let d = try #require(Decimal128(string: k.string))
        #expect(d.high == k.high, "high \(String(d.high, radix: 16))")
        #expect(d.low == k.low, "low \(String(d.low, radix: 16))")
        #expect(d.description == k.canonical)
        let again = try #require(Decimal128(string: d.description))
        if d.isNaN {
            #expect(again.isNaN)  // the canonical string drops a NaN's sign
        } else {
            #expect(again.high == d.high && again.low == d.low)
        }
    }

    @Test func roundingToThirtyFourDigits() throws {
        let a = try #require(Decimal128(string: "1234567890123456789012345678901234.5"))  // even: stays
        #expect(a.description == "1234567890123456789012345678901234")
        let b = try #require(Decimal128(string: "1234567890123456789012345678901235.5"))  // odd: up
        #expect(b.description == "1234567890123456789012345678901236")
        let c = try #require(Decimal128(string: "1234567890123456789012345678901234.50000000001"))
        #expect(c.description == "1234567890123456789012345678901235")
        let nines = String(repeating: "9", count: 34)
        let d = try #require(Decimal128(string: nines + ".5"))
        #expect(d.description == "1.000000000000000000000000000000000E+34")
        let e = try #require(Decimal128(string: "0.000" + nines + "9"))
        #expect(e.description == "0.001000000000000000000000000000000000")
        let f = try #require(Decimal128(string: "123456789012345678901234567890.1234"))
        #expect(f.description == "123456789012345678901234567890.1234")
        // Overflow absorbed by clamping, then not.
        let g = try #require(Decimal128(string: "12E+6143"))
        #expect(g.description == "1.200000000000000000000000000000000E+6144")
        #expect(Decimal128(string: "10E+6144")?.isInfinite == true)
    }

    @Test(arguments: [
        "", "+", "-", ".", "+.", "e5", "1e", "1e+", "1.2.3", " 1", "1 ", "abc", "Infx", "--1", "1_000",
        "0x10", "1e1.5", "NaN1", "In", "∞", "１",
    ])
    func invalidStringsRejected(_ s: String) {
        #expect(Decimal128(string: s) == nil)
    }

    @Test func acceptedShortForms() throws {
        #expect(try #require(Decimal128(string: "1.")).description == "1")
        #expect(try #require(Decimal128(string: ".5")).description == "0.5")
        #expect(try #require(Decimal128(string: "-.5e1")).description == "-5")
        #expect(try #require(Decimal128(string: "007")).description == "7")
        #expect(try #require(Decimal128(string: "+1.50E-2")).description == "0.0150")
    }

    /// A random finite value with a random number of digits and an exponent anywhere in range.
    private static func randomFinite(_ rng: inout SeededGenerator) -> Decimal128 {
        let digits = Int.random(in: 1...34, using: &rng)
        var c: UInt128 = 0
        for _ in 0..<digits { c = c * 10 + UInt128(UInt8.random(in: 0...9, using: &rng)) }
        let exponent: Int
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: exponent = Int.random(in: -40...10, using: &rng)
        case 1: exponent = Int.random(in: -8...0, using: &rng)
        default: exponent = Int.random(in: Decimal128.minExponent...Decimal128.maxExponent, using: &rng)
        }
        return Decimal128(negative: Bool.random(using: &rng), coefficient: c, exponent: exponent)
    }

    @Test func printParseRoundTripsRandomValues() throws {
        var rng = SeededGenerator(seed: 128)
        for _ in 0..<5000 {
            let d = Self.randomFinite(&rng)
            let s = d.description
            let back = try #require(Decimal128(string: s), "\(s)")
            #expect(back.high == d.high && back.low == d.low, "\(s)")
            #expect(back.description == s)
        }
    }

    @Test func parsePrintParseRoundTripsRandomStrings() throws {
        var rng = SeededGenerator(seed: 4711)
        for _ in 0..<4000 {
            var s = ["", "+", "-"][Int.random(in: 0..<3, using: &rng)]
            let intDigits = Int.random(in: 0...40, using: &rng)
            let fracDigits = Int.random(in: intDigits == 0 ? 1...40 : 0...40, using: &rng)
            for _ in 0..<intDigits { s += String(Int.random(in: 0...9, using: &rng)) }
            if fracDigits > 0 || Bool.random(using: &rng) { s += "." }
            for _ in 0..<fracDigits { s += String(Int.random(in: 0...9, using: &rng)) }
            if Bool.random(using: &rng) {
                s += ["e", "E", "e+", "E-", "e-"][Int.random(in: 0..<5, using: &rng)]
                s += String(Int.random(in: 0...7000, using: &rng))
            }
            let d = try #require(Decimal128(string: s), "\(s)")
            let printed = d.description
            let back = try #require(Decimal128(string: printed), "\(s) → \(printed)")
            #expect(back.high == d.high && back.low == d.low, "\(s) → \(printed)")
            if d.isFinite && intDigits + fracDigits <= 34 {
                // No rounding at moderate exponents: same value as Double's parse would suggest.
                let viaDouble = Double(s)!
                if viaDouble.isFinite && viaDouble != 0 && abs(viaDouble) > 1e-300 {
                    #expect(d.doubleValue == viaDouble, "\(s)")
                }
            }
        }
    }

    @Test func numericEqualityAndHashing() throws {
        let one = try #require(Decimal128(string: "1"))
        let oneZero = try #require(Decimal128(string: "1.0"))
        let oneZeroZero = try #require(Decimal128(string: "1.00"))
        #expect(one == oneZero && oneZero == oneZeroZero)
        #expect(one.hashValue == oneZeroZero.hashValue)
        #expect(Set([one, oneZero, oneZeroZero]).count == 1)
        #expect(Decimal128(string: "100") == Decimal128(string: "1E+2"))
        #expect(Decimal128(string: "0") == Decimal128(string: "-0.000"))
        #expect(Decimal128(string: "0")!.hashValue == Decimal128(string: "-0E+50")!.hashValue)
        #expect(Decimal128(string: "0.1")! < Decimal128(string: "0.2")!)
        #expect(Decimal128(string: "-5")! < Decimal128(string: "3")!)
        #expect(Decimal128(string: "-5")! < Decimal128(string: "-4.99999")!)
        #expect(Decimal128(string: "1E+6144")! > Decimal128(string: "9.99E+6143")!)
        #expect(Decimal128(string: "1E-6176")! > Decimal128.zero)
        #expect(Decimal128(string: "-1E-6176")! < Decimal128(string: "-0")!)
        #expect(Decimal128.nan == Decimal128(string: "-NaN")!)
        #expect(Decimal128.nan.hashValue == Decimal128(string: "-NaN")!.hashValue)
        let order = ["NaN", "-Infinity", "-1E+6144", "-1", "-1E-6176", "0", "1E-6176", "0.1", "1", "1E+6144", "Infinity"]
            .map { Decimal128(string: $0)! }
        for (a, b) in zip(order, order.dropFirst()) { #expect(a < b, "\(a) < \(b)") }
        #expect(order.shuffled().sorted().map(\.description) == order.map(\.description))
    }

    @Test func randomComparisonsMatchExactArithmetic() {
        var rng = SeededGenerator(seed: 99)
        func random() -> (Decimal128, Int128) {
            let c = UInt128.random(in: 0...1_000_000, using: &rng)
            let e = Int.random(in: -10...10, using: &rng)
            let negative = Bool.random(using: &rng)
            // Exact value scaled by 10^10.
            let scaled = Int128(c * Decimal128.powersOfTen[e + 10]) * (negative ? -1 : 1)
            return (Decimal128(negative: negative, coefficient: c, exponent: e), scaled)
        }
        for _ in 0..<5000 {
            let (a, x) = random()
            let (b, y) = random()
            #expect((a < b) == (x < y), "\(a) vs \(b)")
            #expect((a == b) == (x == y), "\(a) vs \(b)")
            if a == b { #expect(a.hashValue == b.hashValue) }
        }
    }

    @Test(arguments: [Int64.min, Int64.min + 1, -1, 0, 1, 42, Int64.max - 1, Int64.max])
    func int64IsExact(_ v: Int64) throws {
        let d = Decimal128(v)
        #expect(d.description == String(v))
        #expect(try #require(Decimal128(string: String(v))) == d)
        #expect(d.isNegative == (v < 0))
        if v.magnitude <= 1 << 53 { #expect(d.doubleValue == Double(v)) }
    }

    @Test func doubleConversions() throws {
        #expect(Decimal128(0.1).description == "0.1")
        #expect(Decimal128(100.0).description == "100")
        #expect(Decimal128(-0.0).description == "-0")
        #expect(Decimal128(1e20).description == "1E+20")
        #expect(Decimal128(1.5e-7).description == "1.5E-7")
        #expect(Decimal128(Double.greatestFiniteMagnitude).description == "1.7976931348623157E+308")
        #expect(Decimal128(Double.leastNonzeroMagnitude).description == "5E-324")
        #expect(Decimal128(Double.nan).isNaN)
        #expect(Decimal128(-Double.infinity) == .negativeInfinity)
        #expect(Decimal128(exactly: 0.5)?.description == "0.5")
        #expect(Decimal128(exactly: 0.375)?.description == "0.375")
        #expect(Decimal128(exactly: -3.0)?.description == "-3")
        #expect(Decimal128(exactly: 9007199254740992.0)?.description == "9007199254740992")
        #expect(Decimal128(exactly: 0.1) == nil)
        #expect(Decimal128(exactly: 1e300) == nil)
        #expect(Decimal128(exactly: .nan) == nil)
        #expect(Decimal128.nan.doubleValue.isNaN)
        #expect(Decimal128.infinity.doubleValue == .infinity)
        #expect(Decimal128(string: "1E+6144")!.doubleValue == .infinity)
        #expect(Decimal128(string: "-1E-6176")!.doubleValue == 0)
        #expect(Decimal128(string: "-1E-6176")!.doubleValue.sign == .minus)
        #expect(Decimal128(string: "123456789012345678901234567890.1234")!.doubleValue == 123456789012345678901234567890.1234)

        var rng = SeededGenerator(seed: 3)
        for _ in 0..<5000 {
            let d = Double(bitPattern: rng.next())
            guard d.isFinite else { continue }
            let dec = Decimal128(d)
            #expect(dec.doubleValue == d, "\(d)")
            #expect(dec.doubleValue.sign == d.sign)
            if let exact = Decimal128(exactly: d) {
                // The exact binary value; equal to the shortest form only when that is exact too.
                #expect(exact.doubleValue == d)
                #expect((exact == dec) == (Decimal128(exactly: dec.doubleValue) == dec))
            }
        }
    }

    @Test func flagsAndNonCanonicalEncodings() {
        #expect(Decimal128.nan.isNaN && !Decimal128.nan.isInfinite && !Decimal128.nan.isFinite)
        #expect(Decimal128.infinity.isInfinite && !Decimal128.infinity.isNaN && !Decimal128.infinity.isNegative)
        #expect(Decimal128.negativeInfinity.isNegative)
        #expect(Decimal128(string: "-0")!.isNegative && Decimal128(string: "-0")!.isZero)
        #expect(Decimal128(low: 0, high: 0x7E00_0000_0000_0000).isNaN)  // signalling NaN
        // Coefficient above 10^34 - 1: non-canonical, reads as zero.
        let big = Decimal128(low: UInt64.max, high: 0x3041_FFFF_FFFF_FFFF)
        #expect(big.isZero && big == .zero && big.description == "0")
        // The 0b11 combination form (implied 0b100 coefficient prefix): zero with exponent in bits 60–47.
        let combo = Decimal128(low: 5, high: 0x6000_0000_0000_0000 | UInt64(6176) << 47)
        #expect(combo.isZero && combo.description == "0")
    }
}

// MARK: - IndexKey

enum ValuesIndexedKind: String, CaseIterable, Sendable {
    case bool, int, string, date, objectId, uuid
}

@Suite struct ValuesIndexKeyTests {
    /// A piece set with NUL, control, 2-, 3- and 4-byte UTF-8 and bytes near 0x7F/0x80.
    static let stringPieces = ["a", "b", "z", "\u{0}", "\u{1}", "\u{7F}", "é", "ÿ", "中", "文", "\u{FFFF}", "😀", "𝄞", " "]

    fileprivate static func randomString(_ rng: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            return ""
        case 1:
            // Long strings around the 240-byte cut, sharing a prefix.
            let base = String(repeating: ["x", "中", "😀"][Int.random(in: 0..<3, using: &rng)], count: 60)
            var s = String(base.utf8.prefix(Int.random(in: 230...240, using: &rng))) ?? String(repeating: "x", count: 235)
            for _ in 0..<Int.random(in: 0...8, using: &rng) {
                s += stringPieces[Int.random(in: 0..<stringPieces.count, using: &rng)]
            }
            return s
        default:
            var s = ""
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                s += stringPieces[Int.random(in: 0..<stringPieces.count, using: &rng)]
            }
            return s
        }
    }

    fileprivate static func randomValue(_ kind: ValuesIndexedKind, _ rng: inout SeededGenerator) -> Value {
        if Int.random(in: 0..<20, using: &rng) == 0 { return .null }
        switch kind {
        case .bool:
            return .bool(Bool.random(using: &rng))
        case .int:
            let edges: [Int64] = [.min, .min + 1, -256, -1, 0, 1, 255, 256, .max - 1, .max]
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return .int(edges[Int.random(in: 0..<edges.count, using: &rng)])
            case 1: return .int(Int64.random(in: -1000...1000, using: &rng))
            default: return .int(Int64(bitPattern: rng.next()))
            }
        case .string:
            return .string(randomString(&rng))
        case .date:
            let seconds: Int64
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: seconds = Int64.random(in: -3...3, using: &rng)
            case 1: seconds = Int64.random(in: -4_000_000_000...4_000_000_000, using: &rng)
            default: seconds = [Int64.min, Int64.max, Int64(bitPattern: rng.next())][Int.random(in: 0..<3, using: &rng)]
            }
            var nanos = Int32.random(in: 0...999_999_999, using: &rng)
            if Bool.random(using: &rng) { nanos = [0, 1, 999_999_999][Int.random(in: 0..<3, using: &rng)] }
            if seconds < 0 || (seconds == 0 && Bool.random(using: &rng)) { nanos = -nanos }
            return .date(Timestamp(seconds: seconds, nanoseconds: nanos))
        case .objectId:
            return .objectId(ObjectId(byteArray: (0..<12).map { _ in [0, 1, 0x7F, 0x80, 0xFF][Int.random(in: 0..<5, using: &rng)] }))
        case .uuid:
            let b = (0..<16).map { _ in [0, 1, 0x7F, 0x80, 0xFF][Int.random(in: 0..<5, using: &rng)] as UInt8 }
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                                     b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        }
    }

    /// The engine order: −1, 0 or 1, null first.
    static func compareValues(_ a: Value, _ b: Value) -> Int {
        func cmp<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        func bytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
            x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        }
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.bool(let x), .bool(let y)): return cmp(x ? 1 : 0, y ? 1 : 0)
        case (.int(let x), .int(let y)): return cmp(x, y)
        case (.string(let x), .string(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.date(let x), .date(let y)): return cmp(x, y)
        case (.objectId(let x), .objectId(let y)): return cmp(x, y)
        case (.uuid(let x), .uuid(let y)):
            return bytes(withUnsafeBytes(of: x.uuid) { Array($0) }, withUnsafeBytes(of: y.uuid) { Array($0) })
        default: fatalError("mixed types in test")
        }
    }

    static func memcmp(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
    }

    static func isLongString(_ v: Value) -> Bool {
        if case .string(let s) = v { return s.utf8.count > IndexKey.maxStringBytes }
        return false
    }

    @Test(arguments: ValuesIndexedKind.allCases)
    func entryOrderMatchesValueOrder(_ kind: ValuesIndexedKind) {
        var rng = SeededGenerator(seed: 0xC0FFEE &+ UInt64(ValuesIndexedKind.allCases.firstIndex(of: kind)!))
        var truncatedTies = 0
        for _ in 0..<6000 {
            let a = Self.randomValue(kind, &rng)
            let b = Int.random(in: 0..<8, using: &rng) == 0 ? a : Self.randomValue(kind, &rng)
            let ka = UInt64.random(in: 0...3, using: &rng) << (Bool.random(using: &rng) ? 0 : 60)
            let kb = UInt64.random(in: 0...3, using: &rng) << (Bool.random(using: &rng) ? 0 : 60)
            let ea = IndexKey.entry(a, key: ka)
            let eb = IndexKey.entry(b, key: kb)
            let valueOrder = Self.compareValues(a, b)
            var expected = valueOrder != 0 ? valueOrder : (ka == kb ? 0 : (ka < kb ? -1 : 1))
            if Self.isLongString(a) && Self.isLongString(b),
               case .string(let sa) = a, case .string(let sb) = b,
               Array(sa.utf8.prefix(240)) == Array(sb.utf8.prefix(240)) {
                // Same 240-byte prefix: the keys tie and only the object key orders them.
                #expect(IndexKey.encode(a) == IndexKey.encode(b))
                expected = ka == kb ? 0 : (ka < kb ? -1 : 1)
                truncatedTies += 1
            }
            #expect(Self.memcmp(ea, eb) == expected, "\(a) #\(ka) vs \(b) #\(kb)")
            #expect(IndexKey.objectKey(fromEntry: ea) == ka)
            #expect(IndexKey.isTruncated(encoded: ea) == Self.isLongString(a))
        }
        if kind == .string { #expect(truncatedTies > 0) }
    }

    @Test(arguments: ValuesIndexedKind.allCases)
    func nullSortsFirst(_ kind: ValuesIndexedKind) {
        var rng = SeededGenerator(seed: 5)
        let null = IndexKey.entry(.null, key: UInt64.max)
        for _ in 0..<500 {
            let v = Self.randomValue(kind, &rng)
            if v.isNull { continue }
            #expect(Self.memcmp(null, IndexKey.entry(v, key: 0)) < 0, "\(v)")
        }
        #expect(IndexKey.encode(.null) == [0])
    }

    @Test func stringEdgeCases() {
        let ordered: [String] = ["", "\u{0}", "\u{0}\u{0}", "\u{1}", "a", "ab", "ab\u{0}", "ab\u{0}\u{0}", "ab\u{0}a",
                                 "ab\u{1}", "abc", "b", "\u{7F}", "é", "中", "\u{FFFF}", "😀"]
        for (x, y) in zip(ordered, ordered.dropFirst()) {
            #expect(Self.memcmp(IndexKey.entry(.string(x), key: .max), IndexKey.entry(.string(y), key: 0)) < 0,
                    "\(x.debugDescription) < \(y.debugDescription)")
        }
        // A string of exactly 240 bytes is whole; one byte more is truncated and sorts after it
        // and after every string extending the prefix by a NUL.
        let exact = String(repeating: "x", count: 240)
        var out: [UInt8] = []
        #expect(IndexKey.encode(.string(exact), into: &out) == false)
        out = []
        #expect(IndexKey.encode(.string(exact + "\u{0}"), into: &out) == true)
        #expect(IndexKey.isTruncated(encoded: out))
        #expect(!IndexKey.isTruncated(encoded: IndexKey.encode(.string(exact))))
        #expect(!IndexKey.isTruncated(encoded: IndexKey.encode(.string("a\u{0}"))))
        #expect(!IndexKey.isTruncated(encoded: IndexKey.encode(.int(5))))
        #expect(Self.memcmp(IndexKey.entry(.string(exact), key: .max), IndexKey.entry(.string(exact + "\u{0}"), key: 0)) < 0)
        #expect(Self.memcmp(IndexKey.entry(.string(exact + "a"), key: 0), IndexKey.entry(.string(exact + "b"), key: 1)) < 0)
        #expect(Self.memcmp(IndexKey.entry(.string(String(repeating: "x", count: 239)), key: .max),
                            IndexKey.entry(.string(exact + "b"), key: 0)) < 0)
        // Cutting inside a multi-byte character.
        let cjk = String(repeating: "中", count: 100)  // 300 bytes
        let encoded = IndexKey.encode(.string(cjk))
        #expect(encoded.count == 1 + 240 + 2)
        #expect(encoded.suffix(2) == [0, IndexKey.truncationMarker])
        // Embedded NUL bytes are escaped and do not end the key.
        #expect(IndexKey.encode(.string("a\u{0}b")) == [IndexKey.stringTag, 0x61, 0, 0xFF, 0x62, 0, 1])
    }

    @Test func fixedEncodings() {
        #expect(IndexKey.encode(.bool(false)) == [1, 0])
        #expect(IndexKey.encode(.bool(true)) == [1, 1])
        #expect(IndexKey.encode(.int(0)) == [2, 0x80, 0, 0, 0, 0, 0, 0, 0])
        #expect(IndexKey.encode(.int(-1)) == [2, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(IndexKey.encode(.int(.min)) == [2, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(IndexKey.encode(.date(Timestamp(seconds: -1, nanoseconds: -5)))
                == [7, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFB])
        let oid = ObjectId(hexString: "0102030405060708090a0b0c")!
        #expect(IndexKey.encode(.objectId(oid)) == [8] + Array(1...12))
        var entry: [UInt8] = [9, 9]
        IndexKey.appendObjectKey(0x0102_0304_0506_0708, to: &entry)
        #expect(entry == [9, 9, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(IndexKey.objectKey(fromEntry: entry) == 0x0102_0304_0506_0708)
        #expect(entry.withUnsafeBytes { IndexKey.objectKey(fromEntry: $0) } == 0x0102_0304_0506_0708)
    }
}
