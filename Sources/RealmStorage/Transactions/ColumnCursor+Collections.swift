// Read-only accessors for the query evaluator's scans of set, list and dictionary properties: the serialized
// collection of a row read where it lies in the cluster (docs/FILE_FORMAT.md "Serialized list", "Serialized
// dictionary"), one element or one key at a time, without decoding the whole collection into `Value`s.
//
// These read the committed leaf: a write transaction keeps its changed collections apart until commit, so a scan
// inside one must read them through `Snapshot.list` and `Snapshot.dictionary` instead.

extension ColumnCursor {
    /// Calls `body` with the UTF-8 bytes of each element of the list or set of strings at `row` (nil for a null
    /// element), in stored order, until it returns true; returns whether it did. An empty collection calls
    /// nothing and returns false. A collection that is not of strings, or malformed, is `StorageError.corrupt`.
    public func firstStringElement(_ row: Int, where body: (UnsafeRawBufferPointer?) throws -> Bool) throws -> Bool {
        try withCollectionBytes(row) { b -> Bool in
            if b.isEmpty { return false }
            do {
                guard b.count >= 8 else { throw CodecError("list shorter than its header") }
                let count = Int(b.u32(at: 0))
                guard b[4] == PropertyType.string.rawValue else { throw CodecError("list of type \(b[4]) read as strings") }
                guard count <= b.count * 8 else { throw CodecError("list count \(count) too large for its bytes") }
                // Each element's bounds are checked as it is read (`checkAllOffsets: false`): a search that stops at
                // the first element found reads no further.
                let r = try ColumnReader(node: b, offset: 8, length: b.count - 8, count: count, encoding: .bytes, type: .string,
                                         linkStorage: .raw, nullable: b[5] == 1, checkAllOffsets: false)
                for i in 0..<count {
                    if r.isNull(i) {
                        if try body(nil) { return true }
                        continue
                    }
                    guard let hit = try r.withBytes(at: i, { try body($0) }) else { throw CodecError("list element \(i) out of line or outside the list") }
                    if hit { return true }
                }
                return false
            } catch let e as CodecError {
                throw StorageError.corrupt(path: nodeSource.displayPath, location: "list \(box.info.name) of row \(row)", reason: e.reason)
            }
        }
    }

    /// The value of `key` (UTF-8 bytes) in the dictionary at `row`: nil when there is no such key, `.null` for a
    /// stored null. Only that value is decoded (the keys are found by binary search, compared in place).
    public func dictionaryValue(_ row: Int, forKey key: UnsafeRawBufferPointer) throws -> Value? {
        try withCollectionBytes(row) { b -> Value? in
            if b.isEmpty { return nil }
            do {
                guard b.count >= 16 else { throw CodecError("dictionary shorter than its header") }
                let count = Int(b.u32(at: 0))
                guard let type = PropertyType(rawValue: b[4]), type != .linkingObjects, type != .backlink else {
                    throw CodecError("dictionary has value type \(b[4])")
                }
                let keysLength = Int(b.u32(at: 8))
                guard count > 0, count <= b.count * 8 else { throw CodecError("dictionary count \(count) does not fit its bytes") }
                guard keysLength >= 8, keysLength & 7 == 0, keysLength <= b.count - 16 else {
                    throw CodecError("dictionary keys block of \(keysLength) bytes does not fit")
                }
                let kr = try ColumnReader(node: b, offset: 16, length: keysLength, count: count, encoding: .bytes, type: .string,
                                          linkStorage: .raw, nullable: false, checkAllOffsets: false)
                // The keys are strictly increasing by their UTF-8 bytes (as `ValueDictionary` keeps them).
                var lo = 0, hi = count, found = -1
                while lo < hi {
                    let mid = (lo + hi) / 2
                    guard let c = kr.withBytes(at: mid, { SetOrder.compareBytes($0, key) }) else {
                        throw CodecError("dictionary key \(mid) out of line or outside the dictionary")
                    }
                    if c == 0 { found = mid; break }
                    if c < 0 { lo = mid + 1 } else { hi = mid }
                }
                guard found >= 0 else { return nil }
                let vr = try ColumnReader(node: b, offset: 16 + keysLength, length: b.count - 16 - keysLength, count: count,
                                          encoding: ColumnEncoding.encoding(for: type), type: type, linkStorage: .raw, nullable: b[5] == 1,
                                          checkAllOffsets: false)
                if type == .mixed {
                    if vr.isNull(found) { return .null }
                    guard let v = try vr.withBytes(at: found, { try ColumnCodec.decodeMixed($0) }) else {
                        throw CodecError("dictionary value \(found) out of line or outside the dictionary")
                    }
                    return v
                }
                return try vr.value(at: found, loadBlob: { _, _ in throw CodecError("dictionary value out of line") })
            } catch let e as CodecError {
                throw StorageError.corrupt(path: nodeSource.displayPath, location: "dictionary \(box.info.name) of row \(row)", reason: e.reason)
            }
        }
    }

    /// Calls `body` with the serialized collection at `row`: in place when it is stored inline, else the bytes
    /// of its blob; empty for an empty (or never written) collection.
    private func withCollectionBytes<R>(_ row: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        if let reader = box.reader {
            var result: R?
            if try reader.withBytes(at: row, { result = try body($0) }) != nil, let result { return result }
            if reader.isNull(row) { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        }
        guard case .data(let bytes) = try value(row) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try bytes.withUnsafeBytes(body)
    }
}
