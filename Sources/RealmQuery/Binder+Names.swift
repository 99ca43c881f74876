import RealmStorage

// Messages about names: unknown properties with the closest name suggested.

extension Binder {
    func unknownMessage(_ name: String, _ c: ClassSchema) -> String {
        var m = "unknown property '\(name)' on class '\(c.name)'"
        if let s = Binder.suggestion(name, c.properties.map(\.name)) { m += "; did you mean '\(s)'?" }
        return m
    }

    /// The closest name by edit distance (case-insensitive), if close enough to be a likely typo.
    static func suggestion(_ name: String, _ candidates: [String]) -> String? {
        let n = Array(name.lowercased().unicodeScalars)
        var best: (String, Int)?
        for c in candidates {
            let d = editDistance(n, Array(c.lowercased().unicodeScalars))
            if d <= max(2, n.count / 3), best == nil || d < best!.1 { best = (c, d) }
        }
        return best?.0
    }

    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev = Array(0...b.count)
        var cur = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                cur[j] = Swift.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&prev, &cur)
        }
        return prev[b.count]
    }
}
