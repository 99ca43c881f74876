import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// A class read in runs of leaves (`RealmCoreFile.forEachLeaf(of:firsts:)`, DECISIONS 110), as the split scans of
/// `CoreFileReader.scanRuns` read it: runs that tile the positions visit every leaf exactly once between them, in
/// key order; a run takes the leaves whose first object lies in it; a count that does not add up is an error,
/// never a leaf read twice or by no run.
@Suite struct LeafRunTests {
    static let runCounts = [1, 2, 3, 5, 8, 64]

    /// Every fixture that opens, and the files Realm Core v14.14.0 wrote (plain, encrypted, streaming).
    static let fixtures: [String] = Fixtures.all.filter { name in
        Fixtures.observed[name]?.tables != nil && (try? Fixtures.open(name)) != nil  // (an expected error: ConformanceTests)
    } + SearchIndexTests.written

    /// A leaf as a walk met it: its first position, its object count and its keys.
    struct Seen: Equatable, CustomStringConvertible {
        let first: Int
        let count: Int
        let keys: [Int64]
        var description: String { "leaf at \(first) of \(count)" }
    }

    static func leaves(_ file: RealmCoreFile, _ cls: CoreClass, _ firsts: Range<Int>? = nil) throws -> [Seen] {
        var seen: [Seen] = []
        let body = { (leaf: CoreObjectLeaf) -> Bool in
            seen.append(Seen(first: leaf.firstPosition, count: leaf.count, keys: leaf.keys))
            return true
        }
        if let firsts { try file.forEachLeaf(of: cls, firsts: firsts, body) } else { try file.forEachLeaf(of: cls, body) }
        return seen
    }

    /// The positions of run `i` of `k` over `n` objects, as `CoreFileReader.scanRuns` cuts them.
    static func run(_ i: Int, of k: Int, _ n: Int) -> Range<Int> {
        (i == 0 ? 0 : n * i / k)..<(i == k - 1 ? Int.max : n * (i + 1) / k)
    }

    @Test(arguments: fixtures)
    func runsTileEveryTableInKeyOrder(_ name: String) throws {
        let file = try SearchIndexTests.open(name)
        for cls in file.allTables where cls.objectCount > 0 {
            let whole = try Self.leaves(file, cls)
            let keys = whole.flatMap(\.keys)
            #expect(keys.count == cls.objectCount, "\(name): \(cls.name)")
            #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }, "\(name): \(cls.name): keys out of order")
            #expect(whole.map(\.first) == whole.indices.map { i in whole[..<i].map(\.count).reduce(0, +) }, "\(name): \(cls.name)")
            for k in Self.runCounts where k <= cls.objectCount {
                var joined: [Seen] = []
                for i in 0..<k {
                    let firsts = Self.run(i, of: k, cls.objectCount)
                    let part = try Self.leaves(file, cls, firsts)
                    #expect(part.allSatisfy { firsts.contains($0.first) }, "\(name): \(cls.name): run \(i) of \(k) took \(part)")
                    joined += part
                }
                #expect(joined == whole, "\(name): \(cls.name): \(k) runs")
            }
        }
    }

    /// Cut at every leaf's start and just after it: the runs on either side hold exactly the leaves before and
    /// from that leaf (a subtree is skipped by its count, and the walk stops at the first leaf past the run).
    @Test(arguments: ["core/test_upgrade_database_4_23.realm", "core/test_upgrade_database_4_24.realm",
                      "core/test_upgrade_database_1000_23.realm", "core/test_upgrade_database_4_1.realm",
                      "written/people-1k.realm", "written/people-1k-encrypted.realm"])
    func aRunTakesTheLeavesStartingInIt(_ name: String) throws {
        let file = try SearchIndexTests.open(name)
        var cuts = 0
        for cls in file.allTables where cls.objectCount > 0 {
            let whole = try Self.leaves(file, cls)
            for (i, leaf) in whole.enumerated() {
                let p = leaf.first
                #expect(try Self.leaves(file, cls, 0..<p) == Array(whole[..<i]), "\(name): \(cls.name): cut at \(p)")
                #expect(try Self.leaves(file, cls, p..<Int.max) == Array(whole[i...]), "\(name): \(cls.name): cut at \(p)")
                #expect(try Self.leaves(file, cls, (p + 1)..<Int.max) == Array(whole[(i + 1)...]), "\(name): \(cls.name): cut after \(p)")
                #expect(try Self.leaves(file, cls, p..<(p + 1)) == [leaf], "\(name): \(cls.name): leaf at \(p)")
                cuts += 1
            }
        }
        #expect(cuts > 3)
    }

    /// The object count of every cluster inner node forged one up or down: each copy read in runs gives the
    /// intact file's leaves or a `RealmCoreFileError`, never a leaf twice or one missed.
    @Test(arguments: ["core/test_upgrade_database_4_23.realm", "core/test_upgrade_database_4_24.realm"])
    func aForgedCountIsAnErrorNotAWrongSplit(_ name: String) throws {
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name))))
        let intact = try Fixtures.open(name)
        let tables = intact.allTables.filter { $0.objectCount > 0 }
        let expected = try tables.map { try Self.leaves(intact, $0) }
        // Cluster inner nodes: has refs and inner, a tagged depth in slot 1 and a tagged count in slot 2.
        let inner = MutationTests.nodeOffsets(original).filter { n in
            guard original[n + 4] & 0xC0 == 0xC0, original[n + 4] & 7 >= 4 else { return false }
            let width = ((1 << Int(original[n + 4] & 7)) >> 1) / 8
            return original[n + 8 + width] & 1 == 1 && original[n + 8 + 2 * width] & 1 == 1
        }
        #expect(inner.count > 2)
        let dir = TempDir()
        let path = dir.file("forged.realm")
        var errors = 0, copies = 0
        for n in inner {
            for delta in [-2, 2] {
                var bytes = original
                let width = ((1 << Int(bytes[n + 4] & 7)) >> 1) / 8
                let at = n + 8 + 2 * width
                let tagged = (0..<width).reduce(Int64(0)) { $0 | Int64(bytes[at + $1]) << (8 * Int64($1)) }
                guard tagged + Int64(delta) > 0 else { continue }
                for b in 0..<width { bytes[at + b] = UInt8(truncatingIfNeeded: (tagged + Int64(delta)) >> (8 * Int64(b))) }
                _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
                copies += 1
                do {
                    let file = try RealmCoreFile(path: path)
                    for (cls, want) in zip(file.allTables.filter { $0.objectCount > 0 }, expected) {
                        for k in [1, 2, 3, 5] {
                            var joined: [Seen] = []
                            for i in 0..<k { joined += try Self.leaves(file, cls, Self.run(i, of: k, cls.objectCount)) }
                            #expect(joined == want, "\(name): count at \(n) forged by \(delta): \(cls.name) in \(k) runs")
                        }
                    }
                } catch is RealmCoreFileError {
                    errors += 1
                }
            }
        }
        #expect(copies > 0 && errors > 0, "\(errors) errors in \(copies) copies")
    }
}

/// The order of a string property read and sorted in runs on several threads (`keysInStringOrder(runs:)`,
/// DECISIONS 110) is the order of its UTF-8 bytes, nulls first and equal strings in key order, with where each
/// run of equal strings starts, for any number of runs: against a plain stable sort of the values.
@Suite struct StringOrderRunTests {
    static let files = ["written/people-1k.realm", "written/people-1k-encrypted.realm", SearchIndexTests.indexFixture,
                        "core/test_upgrade_database_1000_23.realm", "core/test_upgrade_database_4_23.realm",
                        "core/test_upgrade_database_4_1.realm"]

    @Test(arguments: files)
    func everyStringColumnSortsAsItsBytesInAnyNumberOfRuns(_ name: String) throws {
        let file = try SearchIndexTests.open(name)
        var sorted = 0
        for cls in file.allTables where cls.objectCount > 1 {
            for p in cls.properties where p.type == .string && p.collection == .none {
                // The oracle: every value and key in key order, stably sorted by bytes, nulls first.
                var rows: [(key: Int64, bytes: [UInt8]?)] = []
                try file.forEachLeaf(of: cls) { leaf in
                    let column = try leaf.column(p)
                    for i in 0..<leaf.count {
                        var bytes: [UInt8]?
                        if try !column.withStringBytes(i, { bytes = Array($0) }) { bytes = nil }
                        rows.append((leaf.key(i), bytes))
                    }
                    return true
                }
                let order = rows.enumerated().sorted { a, b in
                    switch (a.element.bytes, b.element.bytes) {
                    case (nil, nil): return a.offset < b.offset
                    case (nil, _): return true
                    case (_, nil): return false
                    case let (x?, y?): return x == y ? a.offset < b.offset : x.lexicographicallyPrecedes(y)
                    }
                }.map(\.element)
                let keys = order.map(\.key)
                let starts = order.indices.filter { $0 == 0 || order[$0 - 1].bytes != order[$0].bytes }
                // The first level by one digit, and by two (as for 65,536 strings and more).
                for k in LeafRunTests.runCounts {
                    for wideFrom in [65_536, 0] {
                        let got = try file.keysInStringOrder(of: cls, property: p, runs: k, wideFrom: wideFrom)
                        #expect(got.keys == keys, "\(name): \(cls.name).\(p.name) in \(k) runs, wide from \(wideFrom)")
                        #expect(got.runStarts == starts, "\(name): \(cls.name).\(p.name) in \(k) runs, wide from \(wideFrom)")
                    }
                }
                sorted += 1
            }
        }
        #expect(sorted > 0)
    }
}
