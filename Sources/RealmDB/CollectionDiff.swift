import RealmStorage

/// Deletions (old indices), insertions (new indices) and modifications (old indices) between two key lists:
/// removing the deletions from the old list and inserting the new list's elements at the insertions gives the
/// new list. Objects that keep their place are a longest common subsequence of the two lists; an object that
/// moved is a deletion and an insertion (as realm-swift reports it), and only objects that kept their place
/// are reported as modified.
struct CollectionDiff {
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []

    var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

    /// Two lists in ascending key order (a class's objects, filtered): nothing can move, one merge pass.
    init(sortedOld old: [ObjectKey], sortedNew new: [ObjectKey], modified: Set<ObjectKey>) {
        if old == new {
            if modified.count < old.count / 16 {
                // A few changed objects among many: find each by binary search.
                for k in modified {
                    var lo = 0, hi = old.count
                    while lo < hi {
                        let mid = (lo + hi) / 2
                        if old[mid] < k { lo = mid + 1 } else { hi = mid }
                    }
                    if lo < old.count && old[lo] == k { modifications.append(lo) }
                }
                modifications.sort()
            } else {
                modifications = old.indices.filter { modified.contains(old[$0]) }
            }
            return
        }
        var i = 0, j = 0
        while i < old.count || j < new.count {
            if j == new.count || (i < old.count && old[i] < new[j]) {
                deletions.append(i); i += 1
            } else if i == old.count || new[j] < old[i] {
                insertions.append(j); j += 1
            } else {
                if modified.contains(old[i]) { modifications.append(i) }
                i += 1; j += 1
            }
        }
    }

    /// Any two lists; keys may repeat (a list can hold an object twice).
    init(old: [ObjectKey], new: [ObjectKey], modified: Set<ObjectKey>) {
        if old == new {
            if !modified.isEmpty { modifications = old.indices.filter { modified.contains(old[$0]) } }
            return
        }
        let (keepOld, keepNew) = CollectionDiff.commonSubsequence(old, new)
        for (i, keep) in keepOld.enumerated() {
            if !keep { deletions.append(i) } else if modified.contains(old[i]) { modifications.append(i) }
        }
        for (j, keep) in keepNew.enumerated() where !keep { insertions.append(j) }
    }

    /// Which elements of `a` and `b` belong to one longest common subsequence (Hunt–Szymanski: a longest
    /// increasing subsequence over the matching pairs, each element's matches taken in descending order). With
    /// many repeated keys the pairs would grow quadratically; past a bound, repeated keys are matched by
    /// occurrence instead (still exact, possibly not minimal).
    static func commonSubsequence(_ a: [ObjectKey], _ b: [ObjectKey]) -> (old: [Bool], new: [Bool]) {
        // Trim the common prefix and suffix: most changes touch a few places.
        var lo = 0
        while lo < a.count && lo < b.count && a[lo] == b[lo] { lo += 1 }
        var ea = a.count, eb = b.count
        while ea > lo && eb > lo && a[ea - 1] == b[eb - 1] { ea -= 1; eb -= 1 }
        var oldMask = [Bool](repeating: true, count: a.count)
        var newMask = [Bool](repeating: true, count: b.count)
        for i in lo..<ea { oldMask[i] = false }
        for j in lo..<eb { newMask[j] = false }
        guard lo < ea && lo < eb else { return (oldMask, newMask) }

        var positions: [ObjectKey: [Int]] = [:]
        for j in lo..<eb { positions[b[j], default: []].append(j) }
        var pairCount = 0
        for i in lo..<ea { pairCount += positions[a[i]]?.count ?? 0 }
        if pairCount > 4 * (ea - lo + eb - lo) + 100_000 {
            // Match the k-th occurrence of a key in `a` with its k-th occurrence in `b` only.
            var seen: [ObjectKey: Int] = [:]
            var single: [ObjectKey: [Int]] = [:]
            for i in lo..<ea {
                let k = a[i], occ = seen[k, default: 0]
                seen[k] = occ + 1
                if let p = positions[k], occ < p.count { single[k, default: []].append(p[occ]) }
            }
            positions = [:]
            for (k, ps) in single { positions[k] = ps }
            var taken: [ObjectKey: Int] = [:]
            return lis(a, lo, ea, oldMask, newMask) { k in
                let t = taken[k, default: 0]
                taken[k] = t + 1
                guard let ps = positions[k], t < ps.count else { return [] }
                return [ps[t]]
            }
        }
        return lis(a, lo, ea, oldMask, newMask) { positions[$0].map { Array($0.reversed()) } ?? [] }
    }

    /// Marks a longest chain of pairs (i, j), increasing in both, with j from `matches(a[i])` (descending).
    private static func lis(_ a: [ObjectKey], _ lo: Int, _ ea: Int, _ oldMask: [Bool], _ newMask: [Bool],
                            matches: (ObjectKey) -> [Int]) -> (old: [Bool], new: [Bool]) {
        var oldMask = oldMask, newMask = newMask
        var pairI: [Int] = [], pairJ: [Int] = [], prev: [Int] = []
        var tails: [Int] = []  // pair index ending the best chain of each length
        for i in lo..<ea {
            for j in matches(a[i]) {
                var l = 0, h = tails.count
                while l < h {
                    let mid = (l + h) / 2
                    if pairJ[tails[mid]] < j { l = mid + 1 } else { h = mid }
                }
                let p = pairI.count
                pairI.append(i); pairJ.append(j)
                prev.append(l > 0 ? tails[l - 1] : -1)
                if l == tails.count { tails.append(p) } else { tails[l] = p }
            }
        }
        var p = tails.last ?? -1
        while p >= 0 {
            oldMask[pairI[p]] = true
            newMask[pairJ[p]] = true
            p = prev[p]
        }
        return (oldMask, newMask)
    }
}
