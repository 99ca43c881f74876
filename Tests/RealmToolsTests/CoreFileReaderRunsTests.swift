import Foundation
import RealmCoreFile
@testable import RealmQuery
import RealmStorage
@testable import RealmTools
import Testing
import TestSupport

/// Scans of a Realm Core file split into runs of leaves on several threads (`CoreFileReader.scanRuns`, DECISIONS
/// 120) give what one run gives: the runs tile the class in key order, each leaf once, values read on every
/// thread at once (an encrypted file's pages too) are those one run reads, queries answer the same, and a
/// failure in any run is what the caller gets.
@Suite struct CoreFileReaderRunsTests {
    static let runCounts = [1, 2, 3, 5, 8, 64]
    static let fixtures = CoreFileInfoTests.fixtures
    /// Cluster trees of many 4-object leaves (`_4_` files) and of 256-object leaves under inner nodes (10,000
    /// objects), files Realm Core v14.14.0 wrote (plain and encrypted), and rows of format 2.
    static let files = ["core/test_upgrade_database_4_23.realm", "core/test_upgrade_database_4_24.realm",
                        "core/test_upgrade_database_1000_23.realm", "written/people-1k.realm", "written/people-1k-encrypted.realm",
                        "core/test_upgrade_database_4_1.realm"]

    static func open(_ name: String) throws -> CoreFileReader {
        var key = CoreConversionTests.key(name)
        if name.hasPrefix("written/"), name.contains("encrypted") {
            let hex = try String(contentsOfFile: fixtures + "/written/people-1k-encrypted.key", encoding: .utf8)
            let digits = Array(hex.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
            key = try stride(from: 0, to: digits.count, by: 2).map { i in
                try #require(UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16))
            }
        }
        return try CoreFileReader(file: try RealmCoreFile(path: fixtures + "/" + name, key: key), includeInternalTables: true)
    }

    /// Each leaf's keys and every value of its single-valued properties, as one scan body reads them.
    static func read(_ cls: ClassSchema, _ reader: any ObjectReader, _ t: TableHandle,
                     _ scan: ((LeafCursor) throws -> Bool) throws -> Void) throws -> [[String]] {
        let properties = try cls.properties.filter { !$0.isList && !$0.isSet && !$0.isDictionary }.map { try reader.property(t, $0.name) }
        var leaves: [[String]] = []
        try scan { leaf in
            var rows: [String] = []
            let columns = try properties.map { try leaf.column($0) }
            for i in 0..<leaf.count {
                rows.append("\(leaf.key(i).rawValue): " + (try columns.map { "\(try $0.value(i))" }.joined(separator: ", ")))
            }
            leaves.append(rows)
            return true
        }
        return leaves
    }

    @Test(arguments: files)
    func runsTileEachClassAndReadWhatOneRunReads(_ name: String) throws {
        let reader = try Self.open(name)
        var split = 0
        for cls in reader.schema where !cls.isEmbedded {
            let t = try reader.table(cls.name)
            let n = try reader.count(t)
            guard n > 0 else { continue }
            let one = try Self.read(cls, reader, t) { try reader.scan(t, $0) }
            #expect(one.joined().count == n, "\(name): \(cls.name)")
            for k in Self.runCounts {
                let runs = try reader.scanRuns(t, runs: k) { run, r, scan -> (Int, [[String]], Bool) in
                    (run, try Self.read(cls, r, t, scan), r === reader)
                }
                #expect(runs.count == min(k, n), "\(name): \(cls.name): \(k) runs")
                #expect(runs.map(\.0) == Array(0..<runs.count))
                #expect(runs.allSatisfy { $0.2 }, "\(name): \(cls.name): a run read through another reader")
                #expect(Array(runs.map(\.1).joined()) == one, "\(name): \(cls.name): \(k) runs")
                if runs.count > 1 { split += 1 }
            }
        }
        #expect(split > 0)
    }

    @Test(arguments: files)
    func queriesAgreeWithOneRun(_ name: String) throws {
        let reader = try Self.open(name)
        var compared = 0
        for cls in reader.schema where !cls.isEmbedded {
            let t = try reader.table(cls.name)
            let n = try reader.count(t)
            guard n > 1, let first = try reader.key(at: 0, in: t), let middle = try reader.key(at: n / 2, in: t) else { continue }
            var queries: [(String, [QueryArgument])] = [("TRUEPREDICATE", [])]
            for p in cls.properties where !p.isList && !p.isSet && !p.isDictionary && !p.name.hasPrefix("!")
                && p.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
                && !CoreFileReaderTests.Pair.keywords.contains(p.name.lowercased()) {
                for key in [first, middle] {
                    let v = try reader.value(key, try reader.property(t, p.name))
                    switch p.type {
                    case .int, .string, .bool, .double: queries += [("\(p.name) == $0", [.value(v)]), ("\(p.name) != $0", [.value(v)])]
                    default: break
                    }
                }
                if p.type == .int || p.type == .string { queries.append(("TRUEPREDICATE SORT(\(p.name) DESC)", [])) }
            }
            for (q, arguments) in queries {
                let bound = try Query.parse(q).bind(to: cls.name, in: reader, arguments: arguments)
                let once = try bound.evaluate(in: reader, executor: Executor(reader), runs: 1)
                for k in Self.runCounts.dropFirst() {
                    #expect(try bound.evaluate(in: reader, executor: Executor(reader), runs: k) == once, "\(name): \(cls.name) \(q): \(k) runs")
                }
                compared += 1
            }
        }
        #expect(compared > 5)
    }

    /// A failure in any run is thrown once every run has stopped (the first in key order among the runs that
    /// failed before the others saw a failure and stopped).
    @Test func aFailureInOneRunIsThrown() throws {
        struct Stop: Error { let run: Int }
        let reader = try Self.open("core/test_upgrade_database_4_23.realm")
        let cls = try #require(reader.schema.max { (try? reader.count($0.name)) ?? 0 < (try? reader.count($1.name)) ?? 0 })
        let t = try reader.table(cls.name)
        #expect(try reader.count(t) >= 16)
        for failing in [[0], [2], [3], [1, 3]] {
            do {
                _ = try reader.scanRuns(t, runs: 4) { run, _, scan -> Int in
                    var leaves = 0
                    try scan { _ in
                        leaves += 1
                        if failing.contains(run) { throw Stop(run: run) }
                        return true
                    }
                    return leaves
                }
                Issue.record("runs \(failing) failed, and the read gave a result")
            } catch let stop as Stop {
                #expect(failing.contains(stop.run), "runs \(failing) failed, run \(stop.run) was reported")
            }
        }
    }
}
