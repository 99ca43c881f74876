import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Account: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var balance = Decimal128.zero
    @Persisted var credit: Decimal128?
    @Persisted var amounts: List<Decimal128>
}

/// Decimal128 through the object API: filters, sorting and aggregates exact to 34 digits.
@Suite struct DecimalTests {
    func d(_ s: String) -> Decimal128 { Decimal128(string: s)! }

    func realm(_ balances: [String]) throws -> Realm {
        let realm = try memoryRealm([Account.self])
        try realm.write {
            for (i, b) in balances.enumerated() {
                realm.create(Account.self, value: ["id": i, "balance": d(b)])
            }
        }
        return realm
    }

    @Test func filterComparesTheNumberWritten() throws {
        let realm = try realm(["12345678901234567890.10", "12345678901234567890.15", "12345678901234567890.2", "1.10"])
        let accounts = realm.objects(Account.self)
        #expect(accounts.filter("balance > 12345678901234567890.15").map(\.id) == [2])
        #expect(accounts.filter("balance >= 12345678901234567890.15").map(\.id) == [1, 2])
        #expect(accounts.filter("balance IN {12345678901234567890.1, 1.1}").map(\.id) == [0, 3])
        #expect(accounts.filter("balance == 1.1").map(\.id) == [3])
        #expect(accounts.filter("balance > $0", d("12345678901234567890.15")).map(\.id) == [2])
    }

    @Test func sumAndAverageAreDecimal() throws {
        let realm = try realm(["0.1", "0.2"])
        let accounts = realm.objects(Account.self)
        #expect(accounts.sum(ofProperty: "balance") as Decimal128 == d("0.3"))
        #expect((accounts.sum(ofProperty: "balance") as Decimal128).description == "0.3")
        #expect(accounts.average(ofProperty: "balance") as Decimal128? == d("0.15"))
        // Asked for as a Double, the decimal sum converted once.
        #expect(accounts.sum(ofProperty: "balance") as Double == 0.3)
        let big = try self.realm(["1E20", "1", "-1E20"]).objects(Account.self)
        #expect(big.sum(ofProperty: "balance") as Decimal128 == d("1"))
        let third = try self.realm(["1", "0", "0"]).objects(Account.self)
        #expect(third.average(ofProperty: "balance") as Decimal128? == d("0.3333333333333333333333333333333333"))
        let close = try self.realm(["12345678901234567890.1", "12345678901234567890.3"]).objects(Account.self)
        #expect(close.average(ofProperty: "balance") as Decimal128? == d("12345678901234567890.2"))
    }

    /// A Double given for a decimal property is stored as Realm Core converts it (15 significant digits), the
    /// conversion a double argument gets in a query: what is stored from a double is found with it.
    @Test func aDoubleBecomesTheDecimalAQueryComparesWith() throws {
        let realm = try memoryRealm([Account.self])
        try realm.write {
            realm.create(Account.self, value: ["id": 1, "balance": 0.1 + 0.2, "credit": 1234567890123456789.0])
        }
        let accounts = realm.objects(Account.self)
        #expect(accounts.first?.balance == d("0.3"))
        #expect(accounts.first?.credit == d("1.23456789012346E+18"))
        #expect(accounts.filter("balance == $0", 0.1 + 0.2).count == 1)
        #expect(accounts.filter("balance == 0.3").count == 1)
        #expect(accounts.filter("credit == $0", 1234567890123456789.0).count == 1)
    }

    @Test func minMaxAndSortBeyondSeventeenDigits() throws {
        let realm = try realm(["1.000000000000000000000000000000002", "1.000000000000000000000000000000001", "NaN",
                               "1.000000000000000000000000000000003"])
        let accounts = realm.objects(Account.self)
        #expect(accounts.min(ofProperty: "balance") as Decimal128? == d("1.000000000000000000000000000000001"))
        #expect(accounts.max(ofProperty: "balance") as Decimal128? == d("1.000000000000000000000000000000003"))
        #expect(accounts.sorted(byKeyPath: "balance").map(\.id) == [2, 1, 0, 3])
        #expect(accounts.filter("balance > 1.000000000000000000000000000000001").map(\.id) == [0, 3])
        // NaN is left out of sums as of minimums.
        #expect(accounts.sum(ofProperty: "balance") as Decimal128 == d("3.000000000000000000000000000000006"))
    }

    @Test func listAggregatesInQueries() throws {
        let realm = try memoryRealm([Account.self])
        try realm.write {
            let a = realm.create(Account.self, value: ["id": 1])
            a.amounts.append(objectsIn: [d("0.1"), d("0.2")])
            let b = realm.create(Account.self, value: ["id": 2])
            b.amounts.append(objectsIn: [d("1E20"), d("1"), d("-1E20")])
        }
        let accounts = realm.objects(Account.self)
        #expect(accounts.filter("amounts.@sum == 0.3").map(\.id) == [1])
        #expect(accounts.filter("amounts.@sum == 1").map(\.id) == [2])
        #expect(accounts.filter("amounts.@avg == 0.15").map(\.id) == [1])
        #expect(accounts.filter("amounts.@max == 1E20").map(\.id) == [2])
    }
}
