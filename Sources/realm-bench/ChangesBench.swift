// `realm-bench --changes`: the cost of `Snapshot.changes(in:since:)` on a large table, engine only (SQLite
// has no counterpart). See docs/DECISIONS.md, 15.

import Foundation
@_spi(Testing) import RealmStorage

enum ChangesBench {
    static func run(options: Options, directory: String) throws {
        let n = options.objects
        let db = try Database.open(path: directory + "/changes.realm")
        let clock = ContinuousClock()
        var start = clock.now
        let keys = try db.write { tx -> [ObjectKey] in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "value", type: .int),
                PropertySchema(name: "name", type: .string),
                PropertySchema(name: "score", type: .double),
            ]))
            try tx.createClass(ClassSchema(name: "Other", properties: [PropertySchema(name: "value", type: .int)]))
            let t = try tx.table("Item")
            let columns = try ["value", "name", "score"].map { try tx.property(t, $0) }
            return try (0..<n).map {
                try tx.createObject(t, columns: columns, values: [.int(Int64($0)), .string("item \($0 % 1000)"), .double(Double($0) / 3)])
            }
        }
        Output.line("changes: \(n) objects inserted in \(Format.ms(Timing.milliseconds(clock.now - start))) ms")
        var rng = SystemRandomNumberGenerator()

        func measure(_ label: String, changed: Int, _ change: (WriteTransaction) throws -> Void) throws {
            let before = try db.snapshot()
            start = clock.now
            try db.write(change)
            let commitMs = Timing.milliseconds(clock.now - start)
            let after = try db.snapshot()
            var times: [Double] = []
            var result: (changes: TableChanges, nodesRead: Int)?
            for _ in 0..<options.repeats {
                start = clock.now
                result = try after.diff("Item", since: before)
                times.append(Timing.milliseconds(clock.now - start))
            }
            start = clock.now
            var classes: Set<String> = []
            for _ in 0..<1000 { classes = try after.changedClasses(since: before) }
            let classesMs = Timing.milliseconds(clock.now - start) / 1000
            let r = result!
            let found = r.changes.modified.count + r.changes.inserted.count + r.changes.deleted.count
            let ok = found == changed && classes == ["Item"]
            Output.line("  \(label.padded(34)) diff \(Format.ms(Timing.median(times)).leftPadded(9)) ms, "
                + "\(String(r.nodesRead).leftPadded(6)) nodes read, \(found) objects reported"
                + " (commit \(Format.ms(commitMs)) ms; changedClasses \(String(format: "%.4f", classesMs)) ms)"
                + (ok ? "" : "  MISMATCH: expected \(changed)"))
            before.close()
            after.close()
        }

        let value = try db.read { s in try s.property(s.table("Item"), "value") }
        for count in [10, 1000] {
            let picked = Array(Set((0..<count).map { _ in Int.random(in: 0..<n, using: &rng) }))
            try measure("\(picked.count) random objects set", changed: picked.count) { tx in
                for i in picked { try tx.set(keys[i], value, .int(-1)) }
            }
        }
        try measure("10 inserted, 10 deleted", changed: 20) { tx in
            for i in 0..<10 { try tx.delete("Item", keys[i * (n / 10)]) }
            for _ in 0..<10 { try tx.createObject("Item", ["value": .int(7)]) }
        }
        try measure("every object set (worst case)", changed: n) { tx in
            _ = try tx.updateAll(tx.table("Item"), value) { v in if case .int(let x) = v { return .int(x &+ 1) } else { return v } }
        }
    }
}
