import Testing
@testable import RealmStorage

/// The writer's free space: which extent an allocation takes, and that the free list of a long run of small
/// commits stays short (DECISIONS 111).
@Suite struct FreeSpaceTests {
    /// Free extents `(page, count)`, all reusable.
    func space(_ extents: [(UInt64, UInt64)], end: UInt64 = 100_000) -> FreeSpace {
        FreeSpace(entries: extents.map { (Extent(page: $0.0, count: $0.1), 0) }, endPage: end, oldestReader: 1)
    }

    @Test func fewExtentsTakeTheLargest() {
        var s = space([(10, 2), (20, 50), (100, 3)])
        #expect(s.allocate(2) == 20)
        // The rest of that extent is the arena: the next allocations follow on.
        #expect(s.allocate(1) == 22)
    }

    @Test func manyHolesTakeOneOfTheExactSizeFirst() {
        // 20 holes of one page, one of two pages, and a large extent.
        var holes: [(UInt64, UInt64)] = (0..<20).map { (UInt64(10 + 3 * $0), 1) }
        holes.append((200, 2))
        holes.append((1_000, 5_000))
        var s = space(holes)
        #expect(s.allocate(2) == 200)
        #expect(s.allocate(1) == 10)
        // No hole of 3 pages: the largest extent, as before.
        #expect(s.allocate(3) == 1_000)
    }

    /// Commits that each free the old copies of the nodes they write (one 2-page node, three 1-page nodes)
    /// keep the free list short when a large extent is free too: before, every commit carved the large extent
    /// and the freed holes stayed, two more entries a commit.
    @Test func smallCommitsBesideALargeExtentKeepTheFreeListShort() {
        var s = space([(1_000_000, 1_000_000)], end: 2_000_000)
        // The nodes of the live version, at scattered pages.
        var live: [(page: UInt64, pages: Int)] = (0..<400).map { i in (UInt64(i * 2_500), i % 4 == 0 ? 2 : 1) }
        var rng = SplitMix64(seed: 7)
        var version: UInt64 = 1
        for _ in 0..<3_000 {
            var next = s
            // Rewrite four random nodes: each new copy allocated, the old one freed.
            for _ in 0..<4 {
                let i = Int(rng.next() % UInt64(live.count))
                let page = next.allocate(live[i].pages)
                next.free(Extent(page: live[i].page, count: UInt64(live[i].pages)))
                live[i].page = page
            }
            next.closeArena()
            version += 1
            // The next commit starts from this one's free list, with no reader older than it.
            s = FreeSpace(entries: next.entries(newVersion: version), endPage: next.endPage, oldestReader: version)
        }
        let entries = s.entries(newVersion: version + 1)
        #expect(entries.count < 100, "\(entries.count) free extents")
        // Nothing is lost or doubled: the free pages and the live nodes are the pages they were, plus those the
        // file grew by.
        var owned = Set<UInt64>()
        for (e, _) in entries { for p in e.page..<e.end { #expect(owned.insert(p).inserted) } }
        for n in live { for p in n.page..<n.page + UInt64(n.pages) { #expect(owned.insert(p).inserted) } }
        #expect(owned.count == 1_000_000 + 500 + Int(s.endPage - 2_000_000))
    }
}
