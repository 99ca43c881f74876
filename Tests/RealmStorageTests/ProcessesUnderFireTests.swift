import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage
@testable import realm_storage_worker

/// Writers and readers in several processes on one file, killed with SIGKILL at random moments and started
/// again: at the end the file holds exactly each writer's acknowledged increments (and at most the one in
/// flight when it was killed), every reader saw only whole versions, and `verify()` passes.
///
/// `REALM_FIRE_KILLS` sets the number of kills (default 16; a soak run uses hundreds), `REALM_FIRE_SEED` the
/// seed of the schedule (printed, so a failing run can be replayed).
@Suite(.serialized) struct ProcessesUnderFireTests {
    @Test func writersAndReadersKilledAtRandomLoseNoAcknowledgedIncrement() throws {
        let env = ProcessInfo.processInfo.environment
        let kills = env["REALM_FIRE_KILLS"].flatMap { Int($0) } ?? 16
        let seed = env["REALM_FIRE_SEED"].flatMap { UInt64($0) } ?? 0xF12E_2026
        print("ProcessesUnderFireTests: \(kills) kills, seed \(seed) (REALM_FIRE_KILLS, REALM_FIRE_SEED)")
        var rng = SplitMix64(seed: seed)
        let dir = TempDir()
        let path = dir.file("fire.realm")
        let writerIDs = [1, 2, 3]
        var writers: [Int: WorkerProcess] = [:]
        var readers: [WorkerProcess] = []
        var acked: [Int: Int] = [:]  // writer → its highest acknowledged sequence number
        var spawned = 0

        func take(_ lines: [String], writer id: Int) {
            for line in lines {
                let parts = line.split(separator: " ")
                if parts.count == 3, parts[0] == "acked", Int(parts[1]) == id, let seq = Int(parts[2]) {
                    if seq != (acked[id] ?? -1) + 1 { Issue.record("writer \(id) acknowledged \(seq) after \(acked[id] ?? -1)") }
                    acked[id] = seq
                } else if !line.isEmpty {
                    Issue.record("writer \(id): unexpected line \(line.debugDescription)")
                }
            }
        }
        func startWriter(_ id: Int) throws {
            spawned += 1
            let w = try WorkerProcess(["acked-writer", path, "\(id)"], stderrPath: dir.file("w\(id)-\(spawned).stderr"))
            let first = w.readLine(timeout: 60) ?? ""
            let parts = first.split(separator: " ")
            guard parts.count == 3, parts[0] == "start", let resumed = Int(parts[2]) else {
                Issue.record("writer \(id) did not start: \(first.debugDescription)\(w.stderrTail())")
                return
            }
            // It resumes after its entries in the file: every acknowledged one is there, and at most the one in
            // flight when it was killed beyond them.
            let last = acked[id] ?? -1
            #expect(resumed == last + 1 || resumed == last + 2, "writer \(id) resumed at \(resumed), its last acknowledged was \(last)")
            if resumed == last + 2 { acked[id] = last + 1 }  // the one in flight had landed
            writers[id] = w
        }
        func startReader() throws {
            spawned += 1
            let r = try WorkerProcess(["reader", path, "600"], stderrPath: dir.file("r-\(spawned).stderr"))
            #expect(r.readLine(timeout: 60) == "start reader", "\(r.stderrTail())")
            readers.append(r)
        }
        func stopReader(_ r: WorkerProcess) throws {
            r.sendKill()
            try r.waitForExit(timeout: 30)
            for line in r.remainingLines(timeout: 5) where line.hasPrefix("VIOLATION") { Issue.record("reader: \(line)") }
        }

        // The schema first, so that the writers do not race to create it.
        do {
            let db = try Database.open(path: path)
            try SharedCounter.ensureSchema(db)
        }
        for id in writerIDs { try startWriter(id) }
        try startReader()
        try startReader()
        for _ in 0..<kills {
            usleep(UInt32(10_000 + rng.below(150_000)))
            if rng.below(4) == 0, !readers.isEmpty {
                try stopReader(readers.removeFirst())
                try startReader()
                continue
            }
            let id = writerIDs[rng.below(writerIDs.count)]
            guard let w = writers[id] else { continue }
            w.sendKill()
            try w.waitForExit(timeout: 30)
            take(w.remainingLines(timeout: 5), writer: id)
            try startWriter(id)
        }
        for (id, w) in writers {
            w.sendKill()
            try w.waitForExit(timeout: 30)
            take(w.remainingLines(timeout: 5), writer: id)
        }
        for r in readers { try stopReader(r) }

        let db = try Database.open(path: path)
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
        try db.read { s in
            switch try SharedCounter.check(s) {
            case .failure(let e): Issue.record("\(e)")
            case .success(let counter):
                let entries = try s.table("Entry")
                var total = 0
                for id in writerIDs {
                    let m = try s.find(s.property(entries, "writer"), equalTo: .int(Int64(id))).count
                    total += m
                    let last = acked[id] ?? -1
                    #expect(m - 1 == last || m - 1 == last + 1, "writer \(id): the file holds 0..<\(m), its last acknowledged is \(last)")
                }
                #expect(total == counter)
                print("ProcessesUnderFireTests: \(kills) kills, \(counter) increments, acknowledged per writer \(acked.sorted { $0.key < $1.key })")
            }
        }
    }
}
