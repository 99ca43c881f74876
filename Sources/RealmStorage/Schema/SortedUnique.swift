/// Which of equal neighbours `sortedUnique` keeps.
enum EqualKept {
    /// The first given (a set keeps its first of equal elements).
    case first
    /// The last given (a dictionary keeps the last value of a key given twice).
    case last
}

extension Array {
    /// The elements stably sorted by `compare` (negative, zero or positive, as `SetOrder` compares), and of
    /// each run of equal elements only the one `kept` says.
    ///
    /// A few elements (an object's tags, a small dictionary) take a stable insertion sort in one copy; more
    /// are sorted by index, equal ones in the order given.
    func sortedUnique(keeping kept: EqualKept, by compare: (Element, Element) -> Int) -> [Element] {
        if count < 2 { return self }
        var out: [Element]
        if count <= 16 {
            out = self
            for i in 1..<out.count {
                let e = out[i]
                var j = i
                while j > 0 && compare(out[j - 1], e) > 0 {
                    out[j] = out[j - 1]
                    j -= 1
                }
                out[j] = e
            }
        } else {
            let order = indices.sorted { i, j in
                let c = compare(self[i], self[j])
                return c != 0 ? c < 0 : i < j
            }
            out = order.map { self[$0] }
        }
        var n = 1
        for i in 1..<out.count {
            if compare(out[n - 1], out[i]) != 0 {
                out[n] = out[i]
                n += 1
            } else if kept == .last {
                out[n - 1] = out[i]
            }
        }
        out.removeLast(out.count - n)
        return out
    }
}
