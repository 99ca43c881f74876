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
        for (e, v) in entries {
            if v <= oldestReader { reusable.append(e) } else { waiting.append((e, v)) }
        }
        reusable.sort { $0.page < $1.page }
    }

    /// Takes `pages` contiguous pages: first fit among reusable extents, else the end of the file.
    mutating func allocate(_ pages: Int) -> UInt64 {
        let n = UInt64(pages)
        if let i = reusable.firstIndex(where: { $0.count >= n }) {
            let page = reusable[i].page
            if reusable[i].count == n { reusable.remove(at: i) } else {
                reusable[i].page += n
                reusable[i].count -= n
            }
            return page
        }
        let page = endPage
        endPage += n
        return page
    }

    /// Gives back pages allocated by this transaction that were never made visible.
    mutating func giveBack(_ e: Extent) {
        if e.end == endPage { endPage = e.page; return }
        let i = reusable.firstIndex { $0.page > e.page } ?? reusable.count
        reusable.insert(e, at: i)
    }

    /// Frees pages of the version this transaction started from.
    mutating func free(_ e: Extent) { freedNow.append(e) }

    /// Every free extent with the version that freed it, adjacent extents merged, for the free-list node.
    func entries(newVersion: UInt64) -> [(Extent, UInt64)] {
        var all = reusable.map { ($0, UInt64(0)) } + waiting + freedNow.map { ($0, newVersion) }
        all.sort { $0.0.page < $1.0.page }
        var merged: [(Extent, UInt64)] = []
        merged.reserveCapacity(all.count)
        for (e, v) in all {
            if let last = merged.last, last.0.end == e.page {
                merged[merged.count - 1] = (Extent(page: last.0.page, count: last.0.count + e.count), max(last.1, v))
            } else {
                merged.append((e, v))
            }
        }
        return merged
    }

    /// Pages that are free (in any state) in total.
    var freePages: UInt64 {
        reusable.reduce(0) { $0 + $1.count } + waiting.reduce(0) { $0 + $1.0.count } + freedNow.reduce(0) { $0 + $1.count }
    }

    // MARK: Encoding (free-list node, type 9)

    static func encode(_ entries: [(Extent, UInt64)], padTo bytes: Int) -> [UInt8] {
        var b = NodeBuilder(.freeList, capacity: bytes)
        b.w.u32(UInt32(entries.count))
        b.w.u32(0)
        for (e, v) in entries {
            b.w.u64(e.page)
            b.w.u64(e.count)
            b.w.u64(v)
        }
        b.w.zeros(bytes - b.w.count)
        return b.finish()
    }

    static func encodedSize(entries: Int) -> Int { nodeHeaderSize + 8 + 24 * entries }

    static func decode(_ node: UnsafeRawBufferPointer, ref: UInt64, source: NodeSource, pageCount: UInt64) throws -> [(Extent, UInt64)] {
        guard node.count >= 24 else { throw source.corrupt(ref, "free list shorter than its header") }
        let count = Int(node.u32(at: 16))
        guard encodedSize(entries: count) <= node.count else { throw source.corrupt(ref, "free list count \(count) runs past the node") }
        var out: [(Extent, UInt64)] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            let o = 24 + 24 * i
            let e = Extent(page: node.u64(at: o), count: node.u64(at: o + 8))
            guard e.page >= 2, e.count > 0, e.page < pageCount, e.count <= pageCount - e.page else {
                throw source.corrupt(ref, "free list entry \(i) (pages \(e.page)+\(e.count)) is outside the file")
            }
            out.append((e, node.u64(at: o + 16)))
        }
        return out
    }
}
