import Foundation

extension Snapshot {
    /// The objects whose indexed mixed property `p` may equal `value` (in key order): a superset of those equal
    /// to it by `SetOrder` or by the query language's comparison of mixed values (numbers across types, a
    /// float with a double at float precision, a decimal with a double at 15 digits), for the caller to
    /// confirm against each object's value. nil when `p` is not an indexed mixed property, or `value` is a
    /// link or nested collection (which the index does not search).
    public func indexCandidates(_ p: PropertyHandle, mayEqual value: Value) throws -> [ObjectKey]? {
        try naming(p.classID) {
            let (c, info) = try currentInfo(p)
            guard info.isIndexed, info.type == .mixed, !info.isCollection else { return nil }
            return try mixedIndexCandidates(c.classID, info, value)?.map(ObjectKey.init)
        }
    }

    /// The objects whose mixed property `p` equals `value` by `SetOrder` (`Value.equalsMixed`), at most `limit`,
    /// through its index: the candidates confirmed against each object's value.
    func mixedIndexLookup(_ classID: UInt32, _ p: PropertyInfo, _ value: Value, limit: Int) throws -> [UInt64] {
        guard let candidates = try mixedIndexCandidates(classID, p, value) else {
            preconditionFailure("a link or nested collection is looked up by a scan, not through the index")
        }
        var out: [UInt64] = []
        for key in candidates {
            guard let loc = try locate(classID, key) else {
                throw StorageError.corrupt(path: displayPath, location: "index of \(className(classID)).\(p.name)",
                                           reason: "entry for object #\(key), which does not exist")
            }
            guard try rawValue(loc, p).equalsMixed(value) else { continue }
            out.append(key)
            if out.count >= limit { break }
        }
        return out
    }

    /// The object keys of the entries in `IndexKey.mixedSpans(for: value)`, sorted and unique.
    func mixedIndexCandidates(_ classID: UInt32, _ p: PropertyInfo, _ value: Value) throws -> [UInt64]? {
        guard let spans = IndexKey.mixedSpans(for: value) else { return nil }
        let tree = try indexTree(classID, p)
        var keys: [UInt64] = []
        for span in spans {
            switch span {
            case .prefix(let prefix):
                try tree.scan(tailsAfter: prefix, source: self) { tail in
                    // A longer entry under the prefix would be another value (encodings are self-delimiting).
                    if tail.count == 8 { keys.append(UInt64(bigEndian: tail.loadUnaligned(as: UInt64.self))) }
                    return true
                }
            case .range(let lower, let upper):
                try tree.scan(from: lower, source: self) { entry in
                    guard entry.count == 17 else {
                        // Past the numeric tag (or a malformed entry): the span is over.
                        return false
                    }
                    let head = UnsafeRawBufferPointer(rebasing: entry[0..<9])
                    if upper.withUnsafeBytes({ Snapshot.bytesCompare(head, $0) }) > 0 { return false }
                    keys.append(IndexKey.objectKey(fromEntry: entry))
                    return true
                }
            }
        }
        if spans.count > 1 { keys = Array(Set(keys)) }
        keys.sort()
        return keys
    }

    static func bytesCompare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let n = min(a.count, b.count)
        if n > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, n)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
    }
}
