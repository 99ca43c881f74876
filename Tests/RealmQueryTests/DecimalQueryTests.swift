import Foundation
import Testing
import RealmStorage
@testable import RealmQuery
import TestSupport

/// Decimal128 in queries: literals read exactly, comparisons exact to 34 digits, aggregates in decimal
/// arithmetic, and doubles against decimals as Realm Core converts them. (The corpus has the systematic cases.)
@Suite struct DecimalQueryTests {
    func balances(_ f: Fixture, _ keys: [ObjectKey]) -> [String?] {
        keys.map { k in f.people[f.personKeys.firstIndex(of: k)!].balance }
    }

    @Test func aLiteralBeyondADoublesDigitsIsExact() throws {
        let f = try Fixture()
        let got = balances(f, try f.run("balance > 12345678901234567890.15"))
        #expect(!got.contains("12345678901234567890.10"))
        #expect(!got.contains("12345678901234567890.15"))
        #expect(got.contains("12345678901234567890.2"))
        #expect(Set(balances(f, try f.run("balance == 12345678901234567890.1"))) == ["12345678901234567890.10"])
        #expect(Set(balances(f, try f.run("balance IN {12345678901234567890.15, 1.000000000000000000000000000000002}")))
                == ["12345678901234567890.15", "1.000000000000000000000000000000002"])
        #expect(Set(balances(f, try f.run("balance == 1.1"))) == ["1.1", "1.10"])
        // Printed back, the literal keeps its digits.
        let q = try Query.parse("balance > 12345678901234567890.15 AND balance < -1.000000000000000000000000000000001")
        #expect(q.description.contains("12345678901234567890.15") && q.description.contains("-1.000000000000000000000000000000001"))
        #expect(try Query.parse(q.description) == q)
        // Against a double property the same text is a double, as Realm reads it.
        #expect(try f.run("height > 12345678901234567890.15") == f.expectedPeople { $0.height > 12345678901234567890.15 })
    }

    @Test func sumsAndMeansAreDecimalArithmetic() throws {
        let f = try Fixture()
        let withBoth = f.expectedPeople { $0.amounts.sorted() == ["0.1", "0.2"] }
        #expect(!withBoth.isEmpty)
        let sum3 = try f.run("amounts.@sum == 0.3")
        #expect(withBoth.allSatisfy(sum3.contains))
        #expect(sum3 == f.expectedPeople { Ref.decimalSum($0.amounts) == Ref.dec("0.3") })
        // 1E20 + 1 - 1E20: a double loses the 1.
        let ones = f.expectedPeople { Ref.decimalSum($0.amounts) == 1 }
        #expect(try f.run("amounts.@sum == 1") == ones)
        #expect(try f.run("amounts.@avg == 0.15") == f.expectedPeople { Ref.decimalAverage($0.amounts) == Ref.dec("0.15") })
    }

    @Test func aDoubleArgumentComparesAsRealmConvertsIt() throws {
        let f = try Fixture()
        // 0.1 + 0.2 is 0.30000000000000004 as a double, 0.300000000000000 as Realm's decimal (15 digits).
        #expect(Set(balances(f, try f.run("balance == $0", [.value(.double(0.1 + 0.2))]))) == ["0.3"])
        #expect(Set(balances(f, try f.run("balance == $0", [.value(.float(1.1))]))) == ["1.1", "1.10"])
        // An int argument compares exactly.
        #expect(Set(balances(f, try f.run("balance > $0", [.value(.int(.max))]))).isSuperset(of: ["9223372036854775807.5"]))
        #expect(!balances(f, try f.run("balance < $0", [.value(.int(.max))])).contains("9223372036854775807.5"))
    }

    @Test func aDecimalArgumentFindsIntsThroughTheIndex() throws {
        let f = try Fixture()
        let age = f.people[3].age
        let expected = f.expectedPeople { $0.age == age }
        #expect(try f.run("age == $0", [.value(.decimal128(Decimal128(string: "\(age).00")!))]) == expected)
        #expect(try f.run("age IN $0", [.list([.decimal128(Decimal128(age)), .decimal128(Decimal128(string: "0.5")!)])]) == expected)
        #expect(try f.run("id == $0", [.value(.decimal128(Decimal128(string: "1E0")!))]) == f.expectedPeople { $0.id == 1 })
    }

    /// `*` and `/` with a decimal are decimal arithmetic, exact when the result has 34 digits or fewer and
    /// rounded half-to-even to 34 digits otherwise (IEEE 754-2008 decimal128, as Realm Core's library).
    @Test func productsAndQuotientsAreDecimalArithmetic() throws {
        let f = try Fixture()
        #expect(Set(balances(f, try f.run("balance * 3 == 37037036703703703670.3"))) == ["12345678901234567890.10"])
        #expect(Set(balances(f, try f.run("balance / 4 == 3086419725308641972.525"))) == ["12345678901234567890.10"])
        #expect(Set(balances(f, try f.run("balance * balance == 1.524157875323883675043743356552660E+38"))) == ["12345678901234567890.10", "-12345678901234567890.10"])
        #expect(Set(balances(f, try f.run("balance / 3 == 0.1"))) == ["0.3"])
        #expect(Set(balances(f, try f.run("balance * 0.1 == 0.11"))) == ["1.1", "1.10"])
        #expect(Set(balances(f, try f.run("balance / 7 == 1763668414462081127.164285714285714"))) == ["12345678901234567890.15"])
        #expect(try f.run("balance / 0 != nil").isEmpty)
        #expect(try f.run("amounts.@sum * 2 == 0.6") == f.expectedPeople { Ref.decimalSum($0.amounts) * 2 == Ref.dec("0.6") })
        // Null on both sides is null == null, NaN equals NaN.
        #expect(try f.run("age * balance == balance * age") == f.expectedPeople { _ in true })
        #expect(try f.run("age * balance != balance * age").isEmpty)
    }
}
