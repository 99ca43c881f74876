import Foundation
import Testing
@testable import RealmStorage

/// The commit root is written as long as its contents, padded only as far as it must be to span every page it
/// was given (its page count is computed from its length when it is freed).
@Suite struct CommitRootTests {
    private func section(classes: Int) -> [UInt8] {
        var c = Catalogue()
        c.classes = (0..<classes).map { i in
            ClassInfo(classID: UInt32(i + 1), name: "Class\(i)", nextColumnID: 2, nextObjectKey: 0, objectCount: 0,
                      tableRoot: 0, primaryKeyColumnID: 0,
                      properties: [PropertyInfo(columnID: 1, name: "value", type: .int, flags: [], targetClassID: 0,
                                                originColumnID: 0, indexRoot: 0)])
        }
        return c.encodeSection()
    }

    @Test func aRootSpansExactlyThePagesItWasGiven() throws {
        let small = section(classes: 2)
        let contents = CommitRoot.size(catalogueBytes: small.count, freeEntries: 3, logEntries: 4)
        let free = (0..<3).map { (Extent(page: UInt64(10 + 2 * $0), count: 1), UInt64(1)) }
        let log = (0..<4).map { Extent(page: UInt64(20 + $0), count: 1) }

        // One page: no padding at all.
        let one = CommitRoot.encode(catalogue: small, free: free, log: log, pages: 1)
        #expect(one.count == contents)
        #expect(pagesFor(bytes: one.count) == 1)

        // Given two pages (the free list was estimated larger than it came out): long enough to free both.
        let two = CommitRoot.encode(catalogue: small, free: free, log: log, pages: 2)
        #expect(pagesFor(bytes: two.count) == 2)
        #expect(two.count == pageSize + 1)
        #expect(Array(two[..<nodeHeaderSize]) != Array(one[..<nodeHeaderSize]), "length and checksum differ")
        #expect(Array(two[nodeHeaderSize..<contents]) == Array(one[nodeHeaderSize...]))
        #expect(two[contents...].allSatisfy { $0 == 0 })

        // Both read back the same lists and checksum as nodes.
        for node in [one, two] {
            try node.withUnsafeBytes { raw in
                #expect(nodeChecksum(raw) == raw.u64(at: 8))
                #expect(raw.u32(at: 4) == UInt32(node.count))
                #expect(CommitRoot.logEntries(raw) == log)
                let read = try CommitRoot.freeList(raw, ref: 5, source: FakeNodeSource(), pageCount: 100)
                #expect(read.map(\.0) == free.map(\.0) && read.map(\.1) == free.map(\.1))
            }
        }

        // Contents longer than one page fill into the second without padding.
        let big = section(classes: 60)
        let bigContents = CommitRoot.size(catalogueBytes: big.count, freeEntries: 0, logEntries: 0)
        #expect(bigContents > pageSize)
        #expect(CommitRoot.encode(catalogue: big, free: [], log: [], pages: 2).count == bigContents)
    }

    /// Small commits of a database whose catalogue takes more than a page: the two-page roots are freed whole
    /// and reused, so the file stops growing, and verify finds every page accounted for.
    @Test func multiPageRootsAreFreedWhole() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("roots.realm"))
        try db.write { tx in
            for i in 0..<60 {
                try tx.createClass(ClassSchema(name: "Class\(i)", properties: [PropertySchema(name: "value", type: .int)]))
            }
        }
        let rootLength = try db.read { s in try s.node(s.meta.catalogueRef, expected: .catalogue).count }
        #expect(rootLength > pageSize && rootLength <= 2 * pageSize)
        var pageCounts: [UInt64] = []
        for i in 0..<300 {
            try db.write { tx in _ = try tx.createObject("Class\(i % 3)", ["value": .int(Int64(i))]) }
            if i >= 100 { pageCounts.append(try db.read { $0.meta.pageCount }) }
        }
        #expect(pageCounts.last! - pageCounts.first! <= 8, "file grew \(pageCounts.first!) → \(pageCounts.last!) pages")
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }
}

extension CommitRootTests {
    /// A commit that frees hundreds of adjacent extents sizes its root from the merged free list: a bound
    /// counting every extent would have padded the root over several pages of zeros.
    @Test func aRootAfterFreeingManyExtentsStaysSmall() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("freed.realm"))
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "name", type: .string, isIndexed: true), PropertySchema(name: "n", type: .int),
            ]))
            for i in 0..<20_000 { _ = try tx.createObject("Item", ["name": .string("item \(i)"), "n": .int(Int64(i))]) }
        }
        try db.write { tx in try tx.deleteAll(try tx.table("Item")) }
        let rootLength = try db.read { s in try s.node(s.meta.catalogueRef, expected: .catalogue).count }
        #expect(rootLength <= pageSize, "commit root of \(rootLength) bytes")
        #expect(try db.verify().isOK)
    }
}

/// A node source with no nodes, for decoding functions that only name it in their errors.
private final class FakeNodeSource: NodeSource {
    func node(_ ref: UInt64, expected: NodeType?) throws -> UnsafeRawBufferPointer {
        throw StorageError.corrupt(path: displayPath, location: "page \(ref)", reason: "no nodes here")
    }
    var displayPath: String { "fake.realm" }
}
