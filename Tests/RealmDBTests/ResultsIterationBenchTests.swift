import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// Reading objects through `Results` and `List`: iteration, subscripting and a query; run with
/// `REALM_RESULTS_BENCH=1 swift test --filter ResultsIterationBenchTests` (before/after a change to Results).
@Suite(.serialized) struct ResultsIterationBenchTests {
    static let enabled = ProcessInfo.processInfo.environment["REALM_RESULTS_BENCH"] != nil

    @Test(.enabled(if: enabled)) func readObjectsThroughResultsAndLists() throws {
        let realm = try memoryRealm([Dog.self, Person.self])
        let n = 100_000
        try realm.write { for i in 0..<n { realm.create(Dog.self, value: ["name": "d\(i)", "age": i]) } }
        let dogs = realm.objects(Dog.self)
        let p = try realm.write { realm.create(Person.self, value: ["id": 1]) }
        let first = Array(dogs.prefix(20_000))
        try realm.write { p.dogs.append(objectsIn: first) }
        func median(_ body: () -> Int) -> Double {
            var times: [Double] = []
            var check = 0
            for _ in 0..<5 {
                let start = benchClock()
                check &+= body()
                times.append(benchClock() - start)
            }
            #expect(check != 0)
            return times.sorted()[2]
        }
        let iterate = median { var s = 0; for d in dogs { s &+= d.age }; return s }
        let subscripted = median { var s = 0; for i in 0..<dogs.count { s &+= dogs[i].age }; return s }
        let query = median { dogs.filter("age > 50000").count + dogs.sorted(byKeyPath: "age", ascending: false).count }
        let list = median { var s = 0; for d in p.dogs.sorted(byKeyPath: "age") { s &+= d.age }; return s }
        print(String(format: "results-bench: iterate %.1f ms, subscript %.1f ms, query+sort %.1f ms, list sorted iterate %.1f ms",
                     iterate * 1000, subscripted * 1000, query * 1000, list * 1000))
    }
}

private func benchClock() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
