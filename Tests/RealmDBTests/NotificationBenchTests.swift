import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// The measurement behind docs/DECISIONS.md 16; run with
/// `REALM_NOTIFY_BENCH=1 swift test -c release --filter NotificationBenchTests`.
@Suite(.serialized) struct NotificationBenchTests {
    static let enabled = ProcessInfo.processInfo.environment["REALM_NOTIFY_BENCH"] != nil

    @Test(.enabled(if: enabled), arguments: [true, false]) func threeObjectCommitOn100k(scan: Bool) throws {
        let dir = TempDir()
        let realm = try Realm(configuration: fileConfig(dir, [Dog.self, Person.self]))
        let n = 100_000
        try realm.write { for i in 0..<n { realm.create(Dog.self, value: ["name": "d\(i)", "age": i]) } }
        let dogs = realm.objects(Dog.self)
        let some = [dogs[10], dogs[50_000], dogs[99_990]]
        var delivered = 0
        let t1 = dogs.observe { if case .update(_, _, _, let m) = $0 { delivered += m.count } }
        let t2 = some[1].observe { (_: ObjectChange<Dog>) in delivered += 1 }
        defer { t1.invalidate(); t2.invalidate() }
        ChangeCache.scanEveryObject = scan
        defer { ChangeCache.scanEveryObject = false }
        func medianCommit() throws -> Double {
            var times: [Double] = []
            for _ in 0..<15 {
                realm.beginWrite()
                for d in some { d.age += 1 }
                let start = monotonic()
                try realm.commitWrite()
                times.append(monotonic() - start)
            }
            return times.sorted()[7]
        }
        let with = try medianCommit()
        #expect(delivered > 0)
        t1.invalidate()
        t2.invalidate()
        let without = try medianCommit()
        print("notify-bench scan=\(scan) objects=\(n): commit with a Results observer and an object observer "
              + "\(String(format: "%.2f", with * 1000)) ms, without observers \(String(format: "%.2f", without * 1000)) ms")
    }
}

private func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
