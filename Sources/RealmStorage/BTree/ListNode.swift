/// The elements of one list property of one object (or, in files of format 1 and 2, the origins of one
/// backlink column), serialized as one byte string that the cluster stores in a bytes column: inline when
/// small, as a blob when long.
///
/// Layout: `u32 count`, `u8 element type`, `u8 nullable`, 2 reserved bytes, then one column block (as in
/// clusters, 8-aligned from the start of the string) with every value inline.
enum ListCoding {
    static func encode(_ values: [Value], type: PropertyType, nullable: Bool) -> [UInt8] {
        if values.isEmpty { return [] }
        var w = ByteWriter(capacity: 8 + values.count * 8)
        w.u32(UInt32(values.count))
        w.u8(type.rawValue)
        w.u8(nullable ? 1 : 0)
        w.u16(0)
        ColumnCodec.encodeColumn(values[...], type: type, nullable: nullable, linkStorage: .raw, into: &w,
                                 inlineLimit: Int.max, storeBlob: { _ in preconditionFailure("list values are stored inline") })
        return w.bytes
    }

    struct Malformed: Error { let reason: String }

    static func decode(_ bytes: [UInt8]) throws -> [Value] {
        if bytes.isEmpty { return [] }
        return try bytes.withUnsafeBytes { buf -> [Value] in
            // An aligned copy: values read from a cluster may start at any offset.
            guard buf.count >= 8 else { throw Malformed(reason: "list shorter than its header") }
            let count = Int(buf.u32(at: 0))
            guard let type = PropertyType(rawValue: buf[4]), type != .linkingObjects, type != .backlink else {
                throw Malformed(reason: "list has element type \(buf[4])")
            }
            guard count <= buf.count * 8 else { throw Malformed(reason: "list count \(count) too large for its bytes") }
            let r: ColumnReader
            do {
                r = try ColumnReader(node: buf, offset: 8, length: buf.count - 8, count: count,
                                     encoding: ColumnEncoding.encoding(for: type), type: type, linkStorage: .raw)
            } catch {
                throw Malformed(reason: "\(error)")
            }
            var out: [Value] = []
            out.reserveCapacity(count)
            for i in 0..<count {
                do {
                    out.append(try r.value(at: i, loadBlob: { _, _ in throw Malformed(reason: "list value out of line") }))
                } catch let e as CodecError {
                    throw Malformed(reason: e.reason)
                }
            }
            return out
        }
    }

    static func decodeKeys(_ bytes: [UInt8]) throws -> [UInt64] {
        try bytes.withUnsafeBytes { try decodeKeys($0) }
    }

    /// Calls `body` with each key of a backlink set where it lies (packed arrays are read with unaligned
    /// loads): no array, and for the usual block without a null bitmap no column reader either.
    static func forEachKey(_ buf: UnsafeRawBufferPointer, _ body: (UInt64) -> Void) throws {
        if buf.isEmpty { return }
        guard buf.count >= 8 else { throw Malformed(reason: "backlink set shorter than its header") }
        let count = Int(buf.u32(at: 0))
        guard buf[4] == PropertyType.int.rawValue, buf[5] == 0 else { throw Malformed(reason: "backlink set holds a non-integer") }
        guard count <= buf.count * 8 else { throw Malformed(reason: "backlink set count \(count) too large for its bytes") }
        do {
            if buf.count >= 16, buf.u64(at: 8) == 0 {
                let ints = try PackedIntsReader(UnsafeRawBufferPointer(rebasing: buf[8...]), offset: 8, count: count)
                for i in 0..<count { body(UInt64(bitPattern: ints[i])) }
            } else {
                // A null bitmap (or a block too short for one): the column reader checks it.
                let r = try ColumnReader(node: buf, offset: 8, length: buf.count - 8, count: count, encoding: .int, type: .int, linkStorage: .raw)
                for i in 0..<count { body(UInt64(bitPattern: r.int(at: i))) }
            }
        } catch {
            throw Malformed(reason: "\(error)")
        }
    }

    /// The keys of a backlink set, read where it lies.
    static func decodeKeys(_ buf: UnsafeRawBufferPointer) throws -> [UInt64] {
        var keys: [UInt64] = []
        try forEachKey(buf) { keys.append($0) }
        return keys
    }
}

extension ColumnReader {
    /// The value at row `i`, loading out-of-line bytes from `source`; malformed contents (invalid UTF-8, a bad
    /// mixed tag, a bad blob reference) become `StorageError.corrupt` naming `location`.
    @inline(__always)
    func value(at i: Int, source: NodeSource, location: @autoclosure () -> String) throws -> Value {
        do {
            return try value(at: i, loadBlob: { try source.blob($0, length: $1) })
        } catch let e as CodecError {
            throw StorageError.corrupt(path: source.displayPath, location: location(), reason: e.reason)
        }
    }

    /// Calls `body` with the blob ref of every out-of-line value (bytes columns only).
    func forEachBlobRef(_ body: (UInt64) throws -> Void) rethrows {
        guard encoding == .bytes else { return }
        for i in 0..<count {
            if let b = blobReference(at: i) { try body(b.ref) }
        }
    }
}
