/// A run of contiguous pages.
struct Extent: Equatable {
    var page: UInt64
    var count: UInt64
    var end: UInt64 { page + count }
}

/// The writer's view of free space: what it may reuse now, what must wait for readers, and what this
/// transaction frees.
struct FreeSpace {
    /// Free, and no live reader can see what these pages held: reusable now. Sorted by page.
    private(set) var reusable: [Extent] = []
    /// Free, but some live reader may still read them: (extent, version that freed them).
    private(set) var waiting: [(Extent, UInt64)] = []
    /// Freed by this transaction (reusable once every reader has moved past the new version).
    private(set) var freedNow: [Extent] = []
    /// First page past the end of the file.
    private(set) var endPage: UInt64

    init(entries: [(Extent, UInt64)], endPage: UInt64, oldestReader: UInt64) {
        self.endPage = endPage
        reusable.reserveCapacity(entries.count)
        for (e, v) in entries {
            if v <= oldestReader { reusable.append(e) } else { waiting.append((e, v)) }
        }
        // The free list is stored sorted by page: sorted again only when it is not.
        if zip(reusable, reusable.dropFirst()).contains(where: { $0.page > $1.page }) { reusable.sort { $0.page < $1.page } }
    }

    /// The extent a commit is currently filling: consecutive allocations come from it, so a commit's nodes
    /// land next to each other and reach the disk in few, large writes.
    private var arena: Extent?

    /// Takes `pages` contiguous pages: from the current arena when it has room; otherwise a new arena is
    /// taken, the largest reusable extent that fits, or the end of the file.
    mutating func allocate(_ pages: Int) -> UInt64 {
        let n = UInt64(pages)
        if var a = arena, a.count >= n {
            let page = a.page
            a.page += n
            a.count -= n
            arena = a.count > 0 ? a : nil
            return page
        }
        // Return what is left of the old arena, then pick the next one.
        if let a = arena { insertReusable(a) }
        arena = nil
        // Once holes have piled up, one of exactly the size wanted is taken first: a small commit frees the old
        // copies of the nodes it writes, of the same sizes, and taking the largest extent every time left each
        // such hole in the free list for good (with 10,000,000 objects it grew by two entries a commit, and the
        // commit root that holds it with them; DECISIONS 111).
        if reusable.count > FreeSpace.exactFitThreshold, let i = reusable.firstIndex(where: { $0.count == n }) {
            return reusable.remove(at: i).page
        }
        var best: Int?
        for i in reusable.indices where reusable[i].count >= n {
            if best == nil || reusable[i].count > reusable[best!].count { best = i }
        }
        if let i = best {
            var a = reusable.remove(at: i)
            let page = a.page
            a.page += n
            a.count -= n
            if a.count > 0 { arena = a }
            return page
        }
        let page = endPage
        endPage += n
        return page
    }

    /// Reusable extents above which an allocation takes a hole of its exact size before the largest extent.
    static let exactFitThreshold = 16

    private mutating func insertReusable(_ e: Extent) {
        let i = reusable.firstIndex { $0.page > e.page } ?? reusable.count
        reusable.insert(e, at: i)
    }

    /// Ends the current arena (before the free list is computed), returning its rest to the reusable set.
    mutating func closeArena() {
        if let a = arena { insertReusable(a) }
        arena = nil
    }

    /// Gives back pages allocated by this transaction that were never made visible.
    mutating func giveBack(_ e: Extent) {
        if e.end == endPage && arena == nil { endPage = e.page; return }
        insertReusable(e)
    }

    /// Frees pages of the version this transaction started from.
    mutating func free(_ e: Extent) {
        if freedNow.isEmpty { freedNow.reserveCapacity(8) }
        freedNow.append(e)
    }

    /// Every free extent with the version that freed it, adjacent extents merged, for the free-list node.
    func entries(newVersion: UInt64) -> [(Extent, UInt64)] {
        var all: [(Extent, UInt64)] = []
        all.reserveCapacity(entryBound)
        for e in reusable { all.append((e, 0)) }
        all += waiting
        for e in freedNow { all.append((e, newVersion)) }
        if let a = arena { all.append((a, 0)) }
        all.sort { $0.0.page < $1.0.page }
        // Adjacent extents merged in place (a second list cost an allocation per commit).
        var kept = 0
        for i in all.indices {
            let (e, v) = all[i]
            if kept > 0, all[kept - 1].0.end == e.page {
                let last = all[kept - 1]
                all[kept - 1] = (Extent(page: last.0.page, count: last.0.count + e.count), max(last.1, v))
            } else {
                all[kept] = (e, v)
                kept += 1
            }
        }
        all.removeLast(all.count - kept)
        return all
    }

    /// At least `entries(newVersion:).count` (merging only lowers it), without building the list.
    var entryBound: Int { reusable.count + waiting.count + freedNow.count + (arena == nil ? 0 : 1) }

    /// Pages that are free (in any state) in total.
    var freePages: UInt64 {
        reusable.reduce(0) { $0 + $1.count } + (arena?.count ?? 0) + waiting.reduce(0) { $0 + $1.0.count } + freedNow.reduce(0) { $0 + $1.count }
    }
}
