#if canImport(Glibc)
import Glibc
#endif
import RealmStorage

/// The multi-process workload: writers increment one shared counter (read-modify-write in one write
/// transaction) and append an `Entry` tagged with their ID whose value is the new counter value; readers check
/// in every snapshot the invariants that hold in every committed version:
///
/// - `Shared.counter` == number of entries == c, and the entries' values are exactly 1...c (no lost update);
/// - `Shared.sum` == the sum of the values == c(c+1)/2;
/// - each writer's entries have sequence numbers 0..<m (its transactions are whole and in order);
/// - filler f holds the text of the last revision r ≤ c with r % fillerCount == f (0 if none), which also
///   catches a page reused while a snapshot could still read it (the texts are blobs rewritten every commit).
enum SharedCounter {
    static let fillerCount = 8

    static let schema: [ClassSchema] = [
        ClassSchema(name: "Shared", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "counter", type: .int),
            PropertySchema(name: "sum", type: .int),
        ]),
        ClassSchema(name: "Entry", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "writer", type: .int, isIndexed: true),
            PropertySchema(name: "seq", type: .int),
            PropertySchema(name: "value", type: .int),
        ]),
        ClassSchema(name: "Filler", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "text", type: .string),
        ]),
    ]

    /// A text longer than the inline limit, so it lives in a blob node; self-describing ("F<f>:<rev>:...").
    static func fillerText(_ f: Int, rev: Int) -> String {
        let length = 1100 + Int(CommitLoop.mix(f, rev) % 1500)
        let unit = "F\(f):\(rev):"
        var s = unit
        var x = CommitLoop.mix(rev, f)
        while s.utf8.count < length {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            s.append(Character(Unicode.Scalar(UInt8(97 + (x >> 59) % 26))))
        }
        return s
    }

    /// The revision filler f holds when the counter is c.
    static func fillerRevision(_ f: Int, counter c: Int) -> Int {
        guard c >= 1 else { return 0 }
        let r = c - ((c - f) % fillerCount + fillerCount) % fillerCount
        return r >= 1 ? r : 0
    }

    /// Creates the schema, the shared object and the fillers unless the file has them.
    static func ensureSchema(_ db: Database) throws {
        if try db.read({ $0.classSchema("Shared") != nil }) { return }
        try db.write { tx in
            guard tx.classSchema("Shared") == nil else { return }
            try tx.createClasses(schema)
            try tx.createObject("Shared", ["id": .int(0), "counter": .int(0), "sum": .int(0)])
            for f in 0..<fillerCount {
                try tx.createObject("Filler", ["id": .int(Int64(f)), "text": .string(fillerText(f, rev: 0))])
            }
        }
    }

    /// `acked-writer PATH ID`: resumes writer ID after its last entry in the file and increments until
    /// killed, printing `acked ID SEQ` as each commit returns (the processes-under-fire test kills it at random).
    static func runAckedWriter(path: String, id: Int) throws -> Never {
        let db = try Database.open(path: path, options: workerOptions)
        try ensureSchema(db)
        var seq = try db.read { s -> Int in
            let entries = try s.table("Entry")
            return try s.find(s.property(entries, "writer"), equalTo: .int(Int64(id))).count
        }
        emit("start \(id) \(seq)")
        while true {
            try db.write { tx in try increment(tx, writer: id, seq: seq) }
            emit("acked \(id) \(seq)")
            seq += 1
        }
    }

    /// One writer transaction: counter += 1, sum += counter, a tagged entry, one filler rewritten.
    static func increment(_ tx: WriteTransaction, writer: Int, seq: Int) throws {
        let shared = try tx.table("Shared")
        let entries = try tx.table("Entry")
        let fillers = try tx.table("Filler")
        guard let s = try tx.object(shared, primaryKey: .int(0)) else { throw WorkerError("shared object missing") }
        guard case .int(let c) = try tx.value(s, tx.property(shared, "counter")),
              case .int(let sum) = try tx.value(s, tx.property(shared, "sum")) else { throw WorkerError("shared object has nulls") }
        let next = c + 1
        try tx.set(s, tx.property(shared, "counter"), .int(next))
        try tx.set(s, tx.property(shared, "sum"), .int(sum + next))
        try tx.createObject(entries, ["id": .int(Int64(writer * 1_000_000 + seq)), "writer": .int(Int64(writer)),
                                      "seq": .int(Int64(seq)), "value": .int(next)])
        let f = Int(next) % fillerCount
        guard let fk = try tx.object(fillers, primaryKey: .int(Int64(f))) else { throw WorkerError("filler \(f) missing") }
        try tx.set(fk, tx.property(fillers, "text"), .string(fillerText(f, rev: Int(next))))
    }

    /// `writer PATH ID COUNT`.
    static func runWriter(path: String, id: Int, count: Int) throws {
        let db = try Database.open(path: path, options: workerOptions)
        try ensureSchema(db)
        emit("start \(id)")
        for seq in 0..<count {
            try db.write { tx in try increment(tx, writer: id, seq: seq) }
        }
        emit("done \(id) \(count)")
    }

    /// Checks every invariant in one snapshot; returns the counter, or a description of the violation.
    static func check(_ s: Snapshot) throws -> Result<Int, WorkerError> {
        func fail(_ what: String) -> Result<Int, WorkerError> { .failure(WorkerError("version \(s.version): \(what)")) }
        guard s.classSchema("Shared") != nil else { return .success(0) }
        let shared = try s.table("Shared")
        let entries = try s.table("Entry")
        let fillers = try s.table("Filler")
        guard let sk = try s.object(shared, primaryKey: .int(0)) else { return fail("shared object missing") }
        guard case .int(let c64) = try s.value(sk, s.property(shared, "counter")),
              case .int(let sum) = try s.value(sk, s.property(shared, "sum")) else { return fail("shared object has nulls") }
        let c = Int(c64)
        let count = try s.count(entries)
        if count != c { return fail("counter \(c) but \(count) entries") }
        if sum != c64 * (c64 + 1) / 2 { return fail("sum \(sum) for counter \(c), expected \(c64 * (c64 + 1) / 2)") }

        let writerP = try s.property(entries, "writer")
        let seqP = try s.property(entries, "seq")
        let valueP = try s.property(entries, "value")
        var values: [Int] = []
        var seqs: [Int: [Int]] = [:]
        values.reserveCapacity(c)
        try s.scan(entries) { leaf in
            let w = try leaf.column(writerP), q = try leaf.column(seqP), v = try leaf.column(valueP)
            for row in 0..<leaf.count {
                values.append(Int(v.int(row)))
                seqs[Int(w.int(row)), default: []].append(Int(q.int(row)))
            }
            return true
        }
        values.sort()
        if values != Array(0..<c).map({ $0 + 1 }) {
            let dup = Dictionary(grouping: values, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted().prefix(5)
            return fail("entry values are not exactly 1...\(c) (duplicates: \(Array(dup)), min \(values.first ?? 0), max \(values.last ?? 0))")
        }
        for (w, q) in seqs where q.sorted() != Array(0..<q.count) {
            return fail("writer \(w)'s sequence numbers are not 0..<\(q.count): \(q.sorted().prefix(10))...")
        }
        let textP = try s.property(fillers, "text")
        for f in 0..<fillerCount {
            guard let fk = try s.object(fillers, primaryKey: .int(Int64(f))) else { return fail("filler \(f) missing") }
            let rev = fillerRevision(f, counter: c)
            guard case .string(let text) = try s.value(fk, textP) else { return fail("filler \(f) is not a string") }
            if text != fillerText(f, rev: rev) {
                return fail("filler \(f) should hold revision \(rev), holds \(text.utf8.count) bytes starting \(String(text.prefix(24)).debugDescription)")
            }
        }
        // Still the same version at the end of the check.
        guard case .int(let again) = try s.value(sk, s.property(shared, "counter")), again == c64 else {
            return fail("counter changed from \(c) within one snapshot")
        }
        return .success(c)
    }

    /// `reader PATH SECONDS [UNTIL]`: checks snapshots for SECONDS seconds, or until it has seen the counter
    /// reach UNTIL. Prints `ok N max=C` (N snapshots checked) or `VIOLATION ...` and exits 1.
    static func runReader(path: String, seconds: Double, until: Int?) throws {
        let db = try Database.open(path: path, options: workerOptions)
        let start = monotonicSeconds()
        var checked = 0
        var lastVersion: UInt64 = 0
        var lastCounter = 0
        emit("start reader")
        while monotonicSeconds() - start < seconds {
            let s = try db.snapshot()
            let result = try check(s)
            let version = s.version
            s.close()
            switch result {
            case .failure(let e):
                emit("VIOLATION \(e)")
                exit(1)
            case .success(let c):
                if version < lastVersion || c < lastCounter {
                    emit("VIOLATION went back from version \(lastVersion) (counter \(lastCounter)) to \(version) (counter \(c))")
                    exit(1)
                }
                lastVersion = version
                lastCounter = c
            }
            checked += 1
            if let until, lastCounter >= until { break }
            usleep(5000)  // leave the CPUs to the writers now and then
        }
        emit("ok \(checked) max=\(lastCounter) version=\(lastVersion)")
    }

    /// `pin PATH`: takes a snapshot, prints `pinned VERSION` and holds it until killed (a reader that dies
    /// holding its reader slot).
    static func runPin(path: String) throws -> Never {
        let db = try Database.open(path: path, options: workerOptions)
        let s = try db.snapshot()
        emit("pinned \(s.version)")
        while true {
            sleep(60)
            withExtendedLifetime(s) {}
        }
    }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
