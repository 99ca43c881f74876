import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// The leaf filters of `CoreColumnLeaf` (DECISIONS 107) against the column's row-by-row reads, on every int and
/// string column of every fixture that opens: the same rows kept, for ranges that cut each leaf's values at
/// several points (negative, zero, beyond 32 bits), negated, with nulls kept or not, and for strings equal,
/// not equal and passing a test. Realm Core packs a leaf's ints at the width its values need, so the fixtures'
/// columns hold leaves of every width from 0 to 64 bits.
@Suite struct LeafFilterTests {
    static let files = Fixtures.all.filter { Fixtures.key($0) == nil }
        + ["written/people-1k.realm", "index/search-indexes.realm"]

    @Test(arguments: files)
    func filtersKeepTheRowsTheRowReadsKeep(_ name: String) throws {
        // A fixture this reader refuses (README §4) has no leaves to filter.
        guard let file = try? RealmCoreFile(path: Fixtures.path(name)) else { return }
        var widths = Set<Int>()
        for cls in file.tablesInFileOrder {
            for p in cls.properties where p.collection == .none && (p.type == .int || p.type == .string) {
                try file.forEachLeaf(of: cls) { leaf in
                    let column = try leaf.column(p)
                    guard column.isInPlace else { return true }
                    let all = (0..<leaf.count).map { Int32($0) }
                    if p.type == .int {
                        if case .ints(let node, _, _) = column.layout { widths.insert(node.width) }
                        try checkInts(column, all, leaf.count, name, p.name)
                    } else {
                        try checkStrings(column, all, leaf.count, name, p.name)
                    }
                    return true
                }
            }
        }
        // Between them, these two hold leaves of every width, the second with the types' minima (negative).
        if name == "core/test_flx_metadata_tables_v1.realm" { #expect(widths.isSuperset(of: [0, 1, 2, 4, 8]), "\(widths)") }
        if name == "java/6.0.0-beta.2-alltypes-min.realm" { #expect(widths.isSuperset(of: [8, 16, 32, 64]), "\(widths)") }
    }

    /// A short-string slot whose padding byte claims more than the slot holds is an error naming the leaf when
    /// its column is read, before any filter reads the slots in place.
    @Test func aDamagedShortStringSlotIsAnError() throws {
        let source = Fixtures.path("written/people-1k.realm")
        let file = try RealmCoreFile(path: source)
        let person = try #require(file.classes.first { $0.name == "Person" })
        let city = try #require(person.properties.first { $0.name == "city" })
        var slot: (ref: Int, width: Int)?
        try file.forEachLeaf(of: person) { leaf in
            if case .shortStrings(let node) = try leaf.column(city).layout, node.width > 0 { slot = (node.ref, node.width) }
            return slot == nil
        }
        let (ref, width) = try #require(slot)
        let dir = TempDir()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        bytes[ref + 8 + width - 1] = UInt8(width + 1)
        try bytes.write(to: URL(fileURLWithPath: dir.file("damaged.realm")))
        let damaged = try RealmCoreFile(path: dir.file("damaged.realm"))
        let cls = try #require(damaged.classes.first { $0.name == "Person" })
        #expect { try damaged.forEachLeaf(of: cls) { leaf in _ = try leaf.column(city); return true } } throws: { e in
            guard case RealmCoreFileError.corrupt(let what, let offset, _) = e else { return false }
            return what.contains("short string slot 0") && offset == ref
        }
    }

    func checkInts(_ c: CoreColumnLeaf, _ all: [Int32], _ n: Int, _ name: String, _ property: String) throws {
        let values = (0..<n).map { c.int($0) }
        var cuts: [Int64] = [0, -1, 1, .min, .max, Int64(Int32.max) + 1, -(Int64(Int32.max) + 2)]
        if let v = values.first { cuts += [v, v &- 1, v &+ 1] }
        if let v = values.max() { cuts += [v, v &- 1] }
        if let v = values.min() { cuts += [v, v &+ 1] }
        for lo in cuts {
            for hi in [lo, lo &+ 3, .max, values.last ?? 0] where lo <= hi {
                for negate in [false, true] {
                    for nullMatches in [false, true] {
                        var rows = all
                        #expect(c.keepInts(&rows, in: lo, hi, negate: negate, nullMatches: nullMatches))
                        let want = all.filter { r in
                            c.isNull(Int(r)) ? nullMatches : ((lo...hi).contains(values[Int(r)]) != negate)
                        }
                        #expect(rows == want, "\(name): \(property) in \(lo)...\(hi), negate \(negate), nulls \(nullMatches)")
                        // Every other row only: the rows given are the rows read.
                        var odd = all.filter { $0 % 2 == 1 }
                        _ = c.keepInts(&odd, in: lo, hi, negate: negate, nullMatches: nullMatches)
                        #expect(odd == want.filter { $0 % 2 == 1 })
                    }
                }
            }
        }
    }

    func checkStrings(_ c: CoreColumnLeaf, _ all: [Int32], _ n: Int, _ name: String, _ property: String) throws {
        var strings: [[UInt8]?] = []
        for i in 0..<n {
            var bytes: [UInt8] = []
            strings.append(try c.withStringBytes(i) { bytes = Array($0) } ? bytes : nil)
        }
        var needles: [[UInt8]] = [[], Array("x".utf8), Array(String(repeating: "y", count: 40).utf8)]
        for s in strings.prefix(3) { if let s { needles += [s, s + [0x61], Array(s.dropLast())] } }
        var served = true
        for needle in needles {
            for negate in [false, true] {
                for nullMatches in [false, true] {
                    var rows = all
                    served = needle.withUnsafeBytes { c.keepStrings(&rows, equalTo: $0, negate: negate, nullMatches: nullMatches) }
                    guard served else { continue }
                    let want = all.filter { r in strings[Int(r)].map { ($0 == needle) != negate } ?? nullMatches }
                    #expect(rows == want, "\(name): \(property) == \(needle), negate \(negate), nulls \(nullMatches)")
                }
            }
            var rows = all
            let test = { (b: UnsafeRawBufferPointer) in b.count > needle.count / 2 }
            if c.keepStrings(&rows, nullMatches: true, where: test) {
                #expect(rows == all.filter { r in strings[Int(r)].map { $0.count > needle.count / 2 } ?? true }, "\(name): \(property) test")
            }
        }
        // The filters serve short-string leaves, and only those.
        if case .shortStrings = c.layout { #expect(served) } else { #expect(!served) }
    }
}
