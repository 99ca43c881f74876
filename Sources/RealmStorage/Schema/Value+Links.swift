/// The typed links of a mixed value, at any depth: what backlinks, deletes and `verify` walk. These work on a
/// `Value` alone, so every kind of property holding mixed values (a mixed property, a list, set or dictionary
/// of mixed) calls the same functions: a list or set property passes its elements as `.list`, a dictionary
/// property its entries as `.dictionary`.
enum MixedLinks {
    /// Every typed link in `value` (itself, or in its nested lists and dictionaries at any depth), once per
    /// occurrence, in order: a value holding the same link twice lists it twice.
    static func typedLinks(in value: Value) -> [(classID: UInt32, key: ObjectKey)] {
        var out: [(classID: UInt32, key: ObjectKey)] = []
        appendTypedLinks(in: value, to: &out)
        return out
    }

    static func appendTypedLinks(in value: Value, to out: inout [(classID: UInt32, key: ObjectKey)]) {
        switch value {
        case .typedLink(let c, let k): out.append((c, k))
        case .list(let l): for e in l { appendTypedLinks(in: e, to: &out) }
        case .dictionary(let d): for e in d.values { appendTypedLinks(in: e, to: &out) }
        default: return
        }
    }

    /// Whether `value` holds a typed link anywhere.
    static func containsTypedLink(_ value: Value) -> Bool {
        switch value {
        case .typedLink: return true
        case .list(let l): return l.contains(where: containsTypedLink)
        case .dictionary(let d): return d.values.contains(where: containsTypedLink)
        default: return false
        }
    }

    /// `value` without the typed links `drop` picks, as Realm Core nullifies links to a deleted object
    /// (`Lst<Mixed>::nullify`, `Dictionary::nullify`, searched recursively): a link that is the value itself
    /// becomes null, a list element that is a link is erased, a dictionary value that is a link becomes null
    /// (its key stays). Nil when nothing is dropped (the value is unchanged).
    static func removingLinks(in value: Value, where drop: (UInt32, ObjectKey) -> Bool) -> Value? {
        switch value {
        case .typedLink(let c, let k):
            return drop(c, k) ? .null : nil
        case .list(let l):
            var out: [Value] = []
            var changed = false
            for e in l {
                if case .typedLink(let c, let k) = e, drop(c, k) {
                    changed = true
                    continue
                }
                if let kept = removingLinks(in: e, where: drop) {
                    out.append(kept)
                    changed = true
                } else {
                    out.append(e)
                }
            }
            return changed ? .list(out) : nil
        case .dictionary(var d):
            var changed = false
            for i in d.indices {
                if let kept = removingLinks(in: d.values[i], where: drop) {
                    d[d.keys[i]] = kept
                    changed = true
                }
            }
            return changed ? .dictionary(d) : nil
        default:
            return nil
        }
    }

    /// `value` without its typed links to object `key` of class `classID`.
    static func removingLinks(to key: ObjectKey, of classID: UInt32, in value: Value) -> Value? {
        removingLinks(in: value) { $0 == classID && $1 == key }
    }
}
