import Foundation
import Testing
@testable import RealmStorage
import TestSupport

/// Decimal128 addition, division by a count and Realm's conversion of doubles: IEEE 754-2008 decimal128
/// results, rounded half-to-even to 34 digits.
@Suite struct DecimalArithmeticTests {
    func d(_ s: String) -> Decimal128 { Decimal128(string: s)! }

    /// The same coefficient and exponent (not just the same number).
    func same(_ a: Decimal128, _ text: String) -> Bool { a.description == d(text).description && a.low == d(text).low && a.high == d(text).high }

    @Test func sumsAreExactWhenTheyFit() {
        #expect(same(d("0.1") + d("0.2"), "0.3"))
        #expect(same(d("1E20") + d("1") - d("1E20"), "1"))
        #expect(same(d("1.5") + d("1.50"), "3.00"))  // the smaller exponent
        #expect(same(d("1.00") - d("1"), "0.00"))
        #expect(same(d("12345678901234567890.10") + d("-12345678901234567890.1"), "0.00"))
        #expect(same(d("1E20") + d("0.0000000000001"), "100000000000000000000.0000000000001"))
        #expect(same(d("0") + d("5E+3"), "5000"))  // moved to the zero's exponent
        #expect(same(d("0E-3") + d("5E+3"), "5000.000"))
        #expect(same(d("-0") + d("-0"), "-0"))
        #expect(same(d("-0") + d("0"), "0"))
        #expect(same(d("1") + d("-1"), "0"))
    }

    @Test func sumsRoundHalfToEvenTo34Digits() {
        #expect(d("9999999999999999999999999999999999") + d("1") == d("1E34"))
        #expect(same(d("1234567890123456789012345678901234") + d("0.5"), "1234567890123456789012345678901234"))
        #expect(same(d("1234567890123456789012345678901235") + d("0.5"), "1234567890123456789012345678901236"))
        #expect(same(d("1234567890123456789012345678901234") + d("0.5000000000000000000001"), "1234567890123456789012345678901235"))
        #expect(same(d("1E+34") - d("0.6"), "9999999999999999999999999999999999"))
        // Far apart: the smaller one only rounds (a tie broken by digits far below it).
        let big = d("1234567890123456789012345678901234E+40")
        #expect(same(big + d("5E+39"), "1234567890123456789012345678901234E+40"))
        #expect(same(big + d("5.000000000000000001E+39"), "1234567890123456789012345678901235E+40"))
        #expect(same(big - d("5.000000000000000001E+39"), "1234567890123456789012345678901233E+40"))
        #expect(same(big - d("5E+39"), "1234567890123456789012345678901234E+40"))
        #expect(same(big - d("4.999999999999999999E+39"), "1234567890123456789012345678901234E+40"))
        #expect(d("1E+40") + d("1E-40") == d("1E40"))
        #expect(d("1E+40") - d("1E-40") == d("1E40"))
        #expect(d("1E+40") - d("0.6") == d("1E40"))
        #expect(same(d("1E+6111") + d("1E-6176"), "1.000000000000000000000000000000000E+6111"))
    }

    /// Products and quotients: the expected values are Python's `decimal` module in the IEEE decimal128 context
    /// (34 digits, half-even, exponents −6176…6111 clamped).
    @Test func productsAndQuotients() {
        #expect(same(d("12345678901234567890.10") * d("3"), "37037036703703703670.30"))
        #expect(same(d("12345678901234567890.10") * d("12345678901234567890.10"), "1.524157875323883675043743356552660E+38"))
        #expect(same(d("1234567890123456789012345678901234") * d("1234567890123456789012345678901234"), "1.524157875323883675049535156256667E+66"))
        #expect(same(d("9999999999999999999999999999999999") * d("9999999999999999999999999999999999"), "9.999999999999999999999999999999998E+67"))
        #expect(same(d("1.000000000000000000000000000000001") * d("1.000000000000000000000000000000001"), "1.000000000000000000000000000000002"))
        #expect(same(d("5000000000000000000000000000000001") * d("2"), "1.000000000000000000000000000000000E+34"))
        #expect(same(d("3333333333333333333333333333333335") * d("3"), "1.000000000000000000000000000000000E+34"))  // a tie, to even
        #expect(same(d("1000000000000000000000000000000001") * d("5"), "5000000000000000000000000000000005"))
        #expect(same(d("1.10") * d("2.0"), "2.200"))
        #expect(same(d("2.50") * d("-0.0"), "-0.000"))
        #expect(same(d("1E-6176") * d("0.5"), "0E-6176"))
        #expect(same(d("1E-6176") * d("0.51"), "1E-6176"))
        #expect(same(d("1E+6111") * d("1E+10"), "1.0000000000E+6121"))
        #expect(d("9E+6144") * d("10") == .infinity)
        #expect((d("Infinity") * d("0")).isNaN)
        #expect(d("-Infinity") * d("2") == .negativeInfinity)
        #expect(same(d("12345678901234567890.10") / d("4"), "3086419725308641972.525"))
        #expect(same(d("1") / d("3"), "0.3333333333333333333333333333333333"))
        #expect(same(d("2") / d("3"), "0.6666666666666666666666666666666667"))
        #expect(same(d("12345678901234567890.15") / d("7"), "1763668414462081127.164285714285714"))
        #expect(same(d("1E20") / d("0.3"), "333333333333333333333.3333333333333"))
        #expect(same(d("6.00") / d("2"), "3.00"))
        #expect(same(d("6") / d("2.0"), "3"))
        #expect(same(d("1") / d("8"), "0.125"))
        #expect(same(d("100") / d("1E1"), "10.0"))
        #expect(same(d("0.00") / d("5"), "0.00"))
        #expect(same(d("2") / d("0.0004"), "5E+3"))
        #expect(same(d("1E-6100") / d("1E+100"), "0E-6176"))
        #expect(same(d("-1") / d("Infinity"), "-0E-6176"))
        #expect(d("1") / d("0") == .infinity)
        #expect(d("-1") / d("0") == .negativeInfinity)
        #expect((d("0") / d("0")).isNaN)
        #expect((d("Infinity") / d("-Infinity")).isNaN)
        #expect((d("NaN") / d("1")).isNaN)
    }

    @Test func specialValuesAndRange() {
        #expect((d("NaN") + d("1")).isNaN)
        #expect((d("1") - d("NaN")).isNaN)
        #expect((d("Infinity") + d("-Infinity")).isNaN)
        #expect(d("Infinity") + d("-1E+6144") == .infinity)
        #expect(d("-Infinity") - d("1") == .negativeInfinity)
        #expect(d("9.999999999999999999999999999999999E+6144") + d("9.999999999999999999999999999999999E+6144") == .infinity)
        #expect(same(d("1E-6176") + d("1E-6176"), "2E-6176"))
        #expect(same(d("1E-6176").divided(by: 2), "0E-6176"))  // a tie, to the even zero
        #expect(same(d("3E-6176").divided(by: 2), "2E-6176"))
        // A non-canonical zero (coefficient above 10³⁴ − 1) adds as zero.
        let nonCanonical = Decimal128(low: .max, high: 0x3041_FFFF_FFFF_FFFF)
        #expect(nonCanonical.isZero)
        #expect(nonCanonical + d("2.5") == d("2.5"))
    }

    @Test func quotientsByACount() {
        #expect(same(d("1").divided(by: 3), "0.3333333333333333333333333333333333"))
        #expect(same(d("2").divided(by: 3), "0.6666666666666666666666666666666667"))
        #expect(same(d("10").divided(by: 4), "2.5"))
        #expect(same(d("0.6").divided(by: 2), "0.3"))
        #expect(same(d("-7").divided(by: 2), "-3.5"))
        #expect(same(d("7").divided(by: -2), "-3.5"))
        #expect(same(d("24691357802469135780.25").divided(by: 2), "12345678901234567890.125"))
        #expect(same(d("9999999999999999999999999999999999").divided(by: 1), "9999999999999999999999999999999999"))
        #expect(same(d("9999999999999999999999999999999999").divided(by: Int.max), "1084202172485504.434125002235952170"))
        #expect(same(d("0.00").divided(by: 7), "0.00"))
        #expect(d("1").divided(by: 0) == .infinity)
        #expect(d("0").divided(by: 0).isNaN)
    }

    @Test func sumsAgreeWithFoundationWhereExact() {
        var rng = SplitMix64(seed: 0xDEC_128)
        func random() -> (Decimal128, Decimal) {
            let digits = String(rng.next() % 1_000_000_000_000_000)
            let e = rng.below(21) - 10
            let text = (rng.below(2) == 0 ? "-" : "") + digits + "E" + String(e)
            return (d(text), Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))!)
        }
        for _ in 0..<500 {
            let (a, fa) = random(), (b, fb) = random()
            #expect(a + b == b + a)
            // Foundation prints plain digits (38 of them), which Decimal128 reads exactly.
            #expect(a + b == d((fa + fb).description), "\(a) + \(b)")
            #expect(a - b == d((fa - fb).description), "\(a) - \(b)")
        }
    }

    @Test func exactIntegers() {
        #expect(d("45.00").exactInt64 == 45)
        #expect(d("4.5E+1").exactInt64 == 45)
        #expect(d("4.5").exactInt64 == nil)
        #expect(d("9223372036854775807").exactInt64 == .max)
        #expect(d("-9223372036854775808").exactInt64 == .min)
        #expect(d("9223372036854775808").exactInt64 == nil)
        #expect(d("1E+19").exactInt64 == nil)
        #expect(d("0E+300").exactInt64 == 0)
        #expect(d("-0E-300").exactInt64 == 0)
        #expect(d("NaN").exactInt64 == nil)
        #expect(d("Infinity").exactInt64 == nil)
    }

    @Test func doublesConvertAsRealmCoreConvertsThem() {
        #expect(Decimal128.exactDigits(0.1) == (Array("1000000000000000055511151231257827021181583404541015625".utf8.map { $0 - 48 }), -55))
        #expect(Decimal128(0.1, significantDigits: 15).description == "0.100000000000000")
        #expect(Decimal128(0.1 + 0.2, significantDigits: 15) == d("0.3"))
        #expect(Decimal128(0.5, significantDigits: 15).description == "0.5")
        #expect(Decimal128(-2.5, significantDigits: 15).description == "-2.5")
        #expect(Decimal128(1e20, significantDigits: 15) == d("1E20"))
        #expect(Decimal128(1234567890123456789.0, significantDigits: 15).description == "1.23456789012346E+18")
        #expect(Decimal128(123456789012345.6, significantDigits: 15).description == "123456789012346")
        #expect(Decimal128(Double(Float(1.1)), significantDigits: 7).description == "1.100000")
        #expect(Decimal128(5e-324, significantDigits: 15).description == "4.94065645841247E-324")
        #expect(Decimal128(.greatestFiniteMagnitude, significantDigits: 15).description == "1.79769313486232E+308")
        #expect(Decimal128(-0.0, significantDigits: 15).description == "-0")
        #expect(Decimal128(Double.nan, significantDigits: 15).isNaN)
        #expect(Decimal128(-Double.infinity, significantDigits: 15) == .negativeInfinity)
        // 34 digits first, then 15 (Realm rounds twice): 0.1234567890123455 is just below ...3455 in binary,
        // and the 34-digit value keeps that.
        #expect(Decimal128(0.1234567890123455, significantDigits: 15) == d("0.123456789012345"))
    }
}
