/// B+trees: every collection in formats ≥ 10 and every column in formats ≤ 9.
///
/// Inner node: `[c0 | child refs… | tagged total size]`; `c0` tagged ⇒ every child but the last holds `c0 >> 1`
/// elements, `c0` a ref ⇒ an offsets node whose entry `k-1` counts the elements before child `k`.
extension CoreNodeReader {
    static let maximumDepth = 32

    /// Number of elements in the tree at `root` (`leafCount` counts a leaf's elements).
    func treeSize(_ root: CoreNode, leafCount: (CoreNode) throws -> Int) throws -> Int {
        if !root.isInner { return try leafCount(root) }
        guard root.hasRefs, root.count >= 3 else {
            throw RealmCoreFileError.corrupt(what: "B+tree inner node with \(root.count) slots", offset: root.ref, context: "")
        }
        let size = try root.tagged(root.count - 1)
        guard size >= 0, size <= Int64(memory.size) * 8 else {
            throw RealmCoreFileError.corrupt(what: "B+tree size \(size) larger than the file can hold", offset: root.ref, context: "")
        }
        return Int(size)
    }

    /// The leaf holding element `index` of the tree at `root`, and the element's index in it.
    func locate(_ root: CoreNode, _ index: Int, leafCount: (CoreNode) throws -> Int) throws -> (CoreNode, Int) {
        guard index >= 0 else {
            throw RealmCoreFileError.corrupt(what: "element \(index) read from a B+tree", offset: root.ref, context: "")
        }
        var n = root
        var i = index
        var depth = 0
        while n.isInner {
            depth += 1
            guard depth <= Self.maximumDepth, n.hasRefs, n.count >= 3 else {
                throw RealmCoreFileError.corrupt(what: "B+tree inner node too deep or with \(n.count) slots", offset: n.ref, context: "")
            }
            let children = n.count - 2
            let first = try n.refOrTagged(0)
            var child: Int
            var before: Int
            if let perChild = first.number {
                guard perChild > 0 else {
                    throw RealmCoreFileError.corrupt(what: "B+tree compact inner node with \(perChild) elements per child", offset: n.ref, context: "")
                }
                child = min(i / Int(perChild), children - 1)
                before = child * Int(perChild)
            } else if let offsetsRef = first.ref {
                let offsets = try node(offsetsRef)
                guard offsets.count >= children - 1 else {
                    throw RealmCoreFileError.corrupt(what: "B+tree offsets node shorter than its children", offset: offsetsRef, context: "")
                }
                // Largest k with offsets[k-1] <= i (child 0 starts at 0).
                var lo = 0, hi = children - 1
                while lo < hi {
                    let mid = (lo + hi + 1) / 2
                    if try offsets.unsigned(mid - 1) <= UInt64(i) { lo = mid } else { hi = mid - 1 }
                }
                child = lo
                before = child == 0 ? 0 : Int(truncatingIfNeeded: try offsets.unsigned(child - 1))
            } else {
                throw RealmCoreFileError.corrupt(what: "B+tree inner node without offsets", offset: n.ref, context: "")
            }
            guard let childRef = try n.ref(1 + child) else {
                throw RealmCoreFileError.corrupt(what: "B+tree inner node with an empty child slot", offset: n.ref, context: "")
            }
            i -= before
            n = try node(childRef)
        }
        guard i >= 0, i < (try leafCount(n)) else {
            throw RealmCoreFileError.corrupt(what: "element \(index) not in the B+tree (its sizes disagree)", offset: n.ref, context: "")
        }
        return (n, i)
    }

    /// Calls `body` with every leaf of the tree at `root`, in order.
    func forEachLeaf(_ root: CoreNode, budget: inout WalkBudget, depth: Int = 0, _ body: (CoreNode) throws -> Void) throws {
        try budget.spend(root.ref)
        guard root.isInner else { return try body(root) }
        guard depth < Self.maximumDepth, root.hasRefs, root.count >= 3 else {
            throw RealmCoreFileError.corrupt(what: "B+tree inner node too deep or with \(root.count) slots", offset: root.ref, context: "")
        }
        for slot in 1..<(root.count - 1) {
            guard let childRef = try root.ref(slot) else {
                throw RealmCoreFileError.corrupt(what: "B+tree inner node with an empty child slot", offset: root.ref, context: "")
            }
            try forEachLeaf(try node(childRef), budget: &budget, depth: depth + 1, body)
        }
    }
}
