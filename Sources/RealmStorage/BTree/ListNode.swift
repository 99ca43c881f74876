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
        if type == .mixed {
            // Each value's tagged bytes made once, then stored as opaque bytes (the same column block): asking
            // a nested collection's length and then its bytes would encode it twice at every level.
            ColumnCodec.encodeColumn(ColumnCodec.preEncodedMixed(values[...]), type: .data, nullable: true, linkStorage: .raw, into: &w,
                                     inlineLimit: Int.max, storeBlob: { _ in preconditionFailure("list values are stored inline") })
        } else {
            ColumnCodec.encodeColumn(values[...], type: type, nullable: nullable, linkStorage: .raw, into: &w,
                                     inlineLimit: Int.max, storeBlob: { _ in preconditionFailure("list values are stored inline") })
        }
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

    /// The elements of a list nested in a mixed value (`ColumnCodec.decodeMixed`): mixed elements, all inline,
    /// decoded at nesting `level`.
    static func decodeNested(_ buf: UnsafeRawBufferPointer, level: Int) throws -> [Value] {
        if buf.isEmpty { return [] }
        guard buf.count >= 8 else { throw CodecError("nested list shorter than its header") }
        let count = Int(buf.u32(at: 0))
        guard buf[4] == PropertyType.mixed.rawValue, buf[5] == 1 else { throw CodecError("nested list of type \(buf[4])") }
        guard count > 0, count <= buf.count * 8 else { throw CodecError("nested list count \(count) does not fit its bytes") }
        // An aligned copy: the payload may start at any offset.
        let copy = Array(buf)
        return try copy.withUnsafeBytes { b throws -> [Value] in
            let r = try ColumnReader(node: b, offset: 8, length: b.count - 8, count: count, encoding: .bytes, type: .mixed, linkStorage: .raw)
            return try nestedValues(r, count: count, level: level)
        }
    }

    /// The values of a mixed column block of a nested collection: nulls and inline tagged values.
    static func nestedValues(_ r: ColumnReader, count: Int, level: Int) throws -> [Value] {
        var out: [Value] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            if r.isNull(i) { out.append(.null); continue }
            guard let value = try r.withBytes(at: i, { b in try ColumnCodec.decodeMixed(b, level: level) }) else {
                throw CodecError("nested value out of line")
            }
            out.append(value)
        }
        return out
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

/// The entries of one dictionary property of one object, or of a dictionary nested in a mixed value, serialized
/// as one byte string: inline in the cluster's bytes column when small, as a blob when long. An empty
/// dictionary is empty bytes.
///
/// Layout: `u32 count`, `u8 value type`, `u8 nullable`, 2 reserved bytes, `u32 keys block length`, 4 reserved
/// bytes, then two column blocks (8-aligned from the start of the string): the keys (a string block without
/// nulls, strictly increasing by UTF-8 bytes) and the values (links as raw keys; mixed values tagged), every
/// value inline.
enum DictionaryCoding {
    static func encode(_ d: ValueDictionary, type: PropertyType, nullable: Bool) -> [UInt8] {
        if d.isEmpty { return [] }
        var w = ByteWriter(capacity: 16 + d.count * 16)
        w.u32(UInt32(d.count))
        w.u8(type.rawValue)
        w.u8(nullable ? 1 : 0)
        w.u16(0)
        w.u32(0)  // keys block length, filled in below
        w.u32(0)
        let keysLength = ColumnCodec.encodeColumn(d.keys.map { Value.string($0) }[...], type: .string, nullable: false, linkStorage: .raw,
                                                  into: &w, inlineLimit: Int.max, storeBlob: { _ in preconditionFailure("inline") })
        ColumnCodec.encodeColumn(type == .mixed ? ColumnCodec.preEncodedMixed(d.values[...]) : d.values[...], type: type == .mixed ? .data : type,
                                 nullable: nullable, linkStorage: .raw, into: &w,
                                 inlineLimit: Int.max, storeBlob: { _ in preconditionFailure("dictionary values are stored inline") })
        var bytes = w.bytes
        withUnsafeBytes(of: UInt32(keysLength).littleEndian) { for i in 0..<4 { bytes[8 + i] = $0[i] } }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> ValueDictionary {
        if bytes.isEmpty { return ValueDictionary() }
        return try bytes.withUnsafeBytes { b in try decode(b, level: 1, nested: false) }
    }

    /// A dictionary nested in a mixed value at nesting `level`.
    static func decodeNested(_ buf: UnsafeRawBufferPointer, level: Int) throws -> ValueDictionary {
        if buf.isEmpty { return ValueDictionary() }
        let copy = Array(buf)  // aligned
        return try copy.withUnsafeBytes { b in try decode(b, level: level, nested: true) }
    }

    private static func decode(_ b: UnsafeRawBufferPointer, level: Int, nested: Bool) throws -> ValueDictionary {
        guard b.count >= 16 else { throw CodecError("dictionary shorter than its header") }
        let count = Int(b.u32(at: 0))
        guard let type = PropertyType(rawValue: b[4]), type != .linkingObjects, type != .backlink else {
            throw CodecError("dictionary has value type \(b[4])")
        }
        if nested { guard type == .mixed, b[5] == 1 else { throw CodecError("nested dictionary of type \(type)") } }
        let nullable = b[5] == 1
        let keysLength = Int(b.u32(at: 8))
        guard count > 0, count <= b.count * 8 else { throw CodecError("dictionary count \(count) does not fit its bytes") }
        guard keysLength >= 8, keysLength & 7 == 0, keysLength <= b.count - 16 else {
            throw CodecError("dictionary keys block of \(keysLength) bytes does not fit")
        }
        let kr = try ColumnReader(node: b, offset: 16, length: keysLength, count: count, encoding: .bytes, type: .string,
                                  linkStorage: .raw, nullable: false)
        var keys: [String] = []
        keys.reserveCapacity(count)
        for i in 0..<count {
            let kv: Value
            kv = try kr.value(at: i, loadBlob: { _, _ in throw CodecError("dictionary key \(i) out of line") })
            guard case .string(let k) = kv else { throw CodecError("dictionary key \(i) is null") }
            if let last = keys.last, SetOrder.compareUTF8(last, k) >= 0 {
                throw CodecError("dictionary keys out of order or repeated at \(i)")
            }
            keys.append(k)
        }
        let vr = try ColumnReader(node: b, offset: 16 + keysLength, length: b.count - 16 - keysLength, count: count,
                                  encoding: ColumnEncoding.encoding(for: type), type: type, linkStorage: .raw, nullable: nullable)
        let values: [Value]
        if type == .mixed {
            values = try ListCoding.nestedValues(vr, count: count, level: level)
        } else {
            var vs: [Value] = []
            vs.reserveCapacity(count)
            for i in 0..<count {
                vs.append(try vr.value(at: i, loadBlob: { _, _ in throw CodecError("dictionary value out of line") }))
            }
            values = vs
        }
        return ValueDictionary(sortedKeys: keys, values: values)
    }
}
