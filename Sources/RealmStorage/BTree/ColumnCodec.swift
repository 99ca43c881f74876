import Foundation

/// The `encoding` byte of a column block (FILE_FORMAT.md, "Cluster (type 2)").
enum ColumnEncoding: UInt8, Sendable, CaseIterable {
    case int = 1, bool, float, double, date, objectId, bytes16, bytes

    /// The encoding of a column holding `type`. List-ref columns use `.int` (encode them as `type: .int`).
    /// `linkingObjects` has no column: asking for it is a programmer error.
    static func encoding(for type: PropertyType) -> ColumnEncoding {
        switch type {
        case .int, .link, .backlink: return .int
        case .bool: return .bool
        case .float: return .float
        case .double: return .double
        case .date: return .date
        case .objectId: return .objectId
        case .uuid, .decimal128: return .bytes16
        case .string, .data, .mixed: return .bytes
        case .linkingObjects: preconditionFailure("linkingObjects properties have no column")
        }
    }

    /// The encoding of `type`, or nil for `linkingObjects`.
    static func encodingIfStored(for type: PropertyType) -> ColumnEncoding? {
        type == .linkingObjects ? nil : encoding(for: type)
    }
}

/// How a `.link` column stores a key: `plusOne` in clusters (key + 1, 0 = null, no null bitmap);
/// `raw` in list nodes (the key itself; a null, if any, uses the null bitmap).
enum LinkStorage: Sendable {
    case plusOne, raw
}

/// Encodes column blocks. See `ColumnReader` for decoding.
enum ColumnCodec {
    /// String, data and mixed values whose stored bytes (for mixed: tag + payload) are longer than
    /// this go to a blob node.
    static let inlineLimit = 1024
    /// Largest blob length a reader accepts (a sanity bound against corrupt lengths; values are
    /// limited to 16 MB, plus one tag byte for mixed).
    static let maxBlobLength = 1 << 31

    /// Appends the column block of `values` to `w` and returns its byte length (a multiple of 8).
    ///
    /// - `type`: the property type; pass `.int` for list-ref columns and `.backlink` for backlink
    ///   columns (both hold `Value.int(raw)`).
    /// - `nullable`: whether `.null` may appear; a `.null` in a required column is a programmer
    ///   error (the engine validates values first).
    /// - `linkStorage`: for `.link` columns, key + 1 (clusters) or the raw key (lists of links).
    /// - `storeBlob`: called with the stored bytes of each string/data/mixed value longer than
    ///   `inlineLimit`; returns the ref of the blob node holding them. All calls happen before
    ///   anything is appended, so when it throws `w` is unchanged.
    ///
    /// Precondition: `w.count` is a multiple of 8 (8-byte aligned relative to the node start).
    /// - `dictionary`: a string column may be written in dictionary form (each distinct value once, a code per
    ///   row; DECISIONS 105) when that is smaller; the cluster writer allows it for its string columns.
    @discardableResult
    static func encodeColumn(_ values: ArraySlice<Value>, type: PropertyType, nullable: Bool,
                             linkStorage: LinkStorage = .plusOne, into w: inout ByteWriter,
                             inlineLimit: Int = ColumnCodec.inlineLimit, dictionary: Bool = false,
                             storeBlob: (UnsafeRawBufferPointer) throws -> UInt64) rethrows -> Int {
        precondition(w.count & 7 == 0, "a column block must start 8-byte aligned")
        let encoding = ColumnEncoding.encoding(for: type)
        let n = values.count
        let nullAsZero = type == .link && linkStorage == .plusOne
        var nullCount = 0
        for v in values where v.isNull { nullCount += 1 }
        precondition(nullCount == 0 || nullable, "null in a required \(type) column")
        let blockStart = w.count
        if dictionary, type == .string, n >= StringDictionary.minimumRows,
           encodeDictionary(values, nullCount: nullCount, inlineLimit: inlineLimit, into: &w) {
            return w.count - blockStart
        }

        // Blobs first, so a throwing store leaves `w` untouched.
        // `blobs` stays empty unless some value goes out-of-line; then it has one slot per row.
        var blobs: [(ref: UInt64, length: Int)?] = []
        if encoding == .bytes {
            for (j, v) in values.enumerated() where storedLength(v, type: type) > inlineLimit {
                var tmp = ByteWriter()
                appendStored(v, type: type, into: &tmp)
                let ref = try tmp.bytes.withUnsafeBytes { try storeBlob($0) }
                if blobs.isEmpty { blobs = Array(repeating: nil, count: n) }
                blobs[j] = (ref, tmp.count)
            }
        }

        let start = w.count
        let hasNulls = nullCount > 0 && !nullAsZero
        w.u8(hasNulls ? 1 : 0)
        w.zeros(7)
        if hasNulls {
            PackedInts.appendBitmap(count: n, into: &w) { values[values.startIndex + $0].isNull }
        }

        switch encoding {
        case .int:
            withUnsafeTemporaryAllocation(of: Int64.self, capacity: n) { buf in
                for (j, v) in values.enumerated() {
                    buf.initializeElement(at: j, to: intStorage(v, type: type, linkStorage: linkStorage))
                }
                PackedInts.encode(UnsafeBufferPointer(buf), into: &w)
            }
        case .bool:
            PackedInts.appendBitmap(count: n, into: &w) { j in
                switch values[values.startIndex + j] {
                case .bool(let b): return b
                case .null: return false
                case let v: preconditionFailure("bool column given \(v)")
                }
            }
        case .float, .double, .objectId, .bytes16:
            for v in values where !appendFixed(v, type: type, into: &w) { preconditionFailure("\(type) column given \(v)") }
        case .date:
            withUnsafeTemporaryAllocation(of: Int64.self, capacity: n) { buf in
                for (j, v) in values.enumerated() { buf.initializeElement(at: j, to: timestamp(v).seconds) }
                PackedInts.encode(UnsafeBufferPointer(buf), into: &w)
                for (j, v) in values.enumerated() { buf[j] = Int64(timestamp(v).nanoseconds) }
                PackedInts.encode(UnsafeBufferPointer(buf), into: &w)
            }
        case .bytes:
            let anyBlob = !blobs.isEmpty
            withUnsafeTemporaryAllocation(of: Int64.self, capacity: n) { ends in
                var end: Int64 = 0
                for (j, v) in values.enumerated() {
                    end += Int64(anyBlob && blobs[j] != nil ? 16 : storedLength(v, type: type))
                    ends.initializeElement(at: j, to: end)
                }
                PackedInts.encode(UnsafeBufferPointer(ends), into: &w)
                for j in 0..<n { ends[j] = anyBlob && blobs[j] != nil ? 1 : 0 }
                PackedInts.encode(UnsafeBufferPointer(ends), into: &w)
            }
            for (j, v) in values.enumerated() {
                if anyBlob, let blob = blobs[j] {
                    w.u64(blob.ref)
                    w.u64(UInt64(blob.length))
                } else {
                    appendStored(v, type: type, into: &w)
                }
            }
        }
        w.align(8)
        return w.count - start
    }

    @discardableResult
    static func encodeColumn(_ values: [Value], type: PropertyType, nullable: Bool,
                             linkStorage: LinkStorage = .plusOne, into w: inout ByteWriter,
                             storeBlob: (UnsafeRawBufferPointer) throws -> UInt64) rethrows -> Int {
        try encodeColumn(values[...], type: type, nullable: nullable, linkStorage: linkStorage,
                         into: &w, storeBlob: storeBlob)
    }

    // MARK: Value mapping

    @inline(__always)
    private static func intStorage(_ v: Value, type: PropertyType, linkStorage: LinkStorage) -> Int64 {
        guard let i = intStorageIfValid(v, type: type, linkStorage: linkStorage) else { preconditionFailure("\(type) column given \(v)") }
        return i
    }

    /// The stored integer of a value of an `.int` column (a link: key + 1 with `.plusOne`; null: 0); nil for
    /// a value of another type, or a key too large for a link column.
    @inline(__always)
    static func intStorageIfValid(_ v: Value, type: PropertyType, linkStorage: LinkStorage) -> Int64? {
        switch (v, type) {
        case (.null, _): return 0
        case (.link(let key), .link):
            if linkStorage == .raw { return Int64(bitPattern: key.rawValue) }
            guard key.rawValue != UInt64.max else { return nil }
            return Int64(bitPattern: key.rawValue &+ 1)
        case (.int(let i), .int), (.int(let i), .backlink): return i
        default: return nil
        }
    }

    @inline(__always)
    private static func timestamp(_ v: Value) -> Timestamp {
        switch v {
        case .date(let t): return t
        case .null: return Timestamp(seconds: 0)
        default: preconditionFailure("date column given \(v)")
        }
    }

    /// Writes the stored bytes of a fixed-width value (float, double, objectId, uuid, decimal128) or of its
    /// null; false, writing nothing, for a value of another type.
    @inline(__always)
    static func appendFixed(_ v: Value, type: PropertyType, into w: inout ByteWriter) -> Bool {
        switch v {
        case .float(let f) where type == .float: w.u32(f.bitPattern)
        case .double(let d) where type == .double: w.u64(d.bitPattern)
        case .objectId(let o) where type == .objectId: withUnsafeBytes(of: o.bytes) { w.raw($0) }
        case .uuid(let u) where type == .uuid: withUnsafeBytes(of: u.uuid) { w.raw($0) }
        case .decimal128(let d) where type == .decimal128: w.u64(d.low); w.u64(d.high)
        case .null:
            switch type {
            case .float: w.u32(0)
            case .double: w.u64(0)
            case .objectId: w.zeros(12)
            case .uuid, .decimal128: w.zeros(16)
            default: return false
            }
        default: return false
        }
        return true
    }

    /// Length of the stored bytes of a string/data/mixed value (0 for null).
    static func storedLength(_ v: Value, type: PropertyType) -> Int {
        switch v {
        case .null: return 0
        case .string(let s) where type == .string: return s.utf8.count
        case .data(let d) where type == .data: return d.count
        default:
            precondition(type == .mixed, "\(type) column given \(v)")
            return 1 + mixedPayloadLength(v)
        }
    }

    /// Appends the stored bytes of a string/data/mixed value (nothing for null).
    static func appendStored(_ v: Value, type: PropertyType, into w: inout ByteWriter) {
        switch v {
        case .null: return
        case .string(var s) where type == .string: s.withUTF8 { w.raw($0) }  // contiguous: one copy
        case .data(let d) where type == .data: w.raw(d)
        default:
            precondition(type == .mixed, "\(type) column given \(v)")
            appendMixed(v, into: &w)
        }
    }

    /// Mixed tags beyond the property type codes: a nested list and a nested dictionary (format 7). A typed
    /// link uses the link type code (12).
    static let nestedListTag: UInt8 = 16
    static let nestedDictionaryTag: UInt8 = 17
    /// The deepest nesting of collections in a mixed value, as Realm Core (`CollectionParent::s_max_level`).
    public static let maxNestingLevel = 100

    private static func mixedPayloadLength(_ v: Value) -> Int {
        switch v {
        case .null: return 0
        case .bool: return 1
        case .int, .double: return 8
        case .float: return 4
        case .string(let s): return s.utf8.count
        case .data(let d): return d.count
        case .date: return 12
        case .objectId: return 12
        case .uuid, .decimal128: return 16
        case .typedLink: return 12
        case .list(let l): return ListCoding.encode(l, type: .mixed, nullable: true).count
        case .dictionary(let d): return DictionaryCoding.encode(d, type: .mixed, nullable: true).count
        case .link: preconditionFailure("a mixed value holds a typed link, not a link")
        }
    }

    /// Mixed values as their stored bytes (tag + payload, as `.data`; nulls stay null): a `.data` column block of
    /// these is byte for byte the mixed column block of the values.
    static func preEncodedMixed(_ values: ArraySlice<Value>) -> ArraySlice<Value> {
        ArraySlice(values.map { v -> Value in
            if v.isNull { return .null }
            var w = ByteWriter()
            appendMixed(v, into: &w)
            return .data(w.bytes)
        })
    }

    /// Appends tag byte + payload of a non-null mixed value.
    static func appendMixed(_ v: Value, into w: inout ByteWriter) {
        switch v {
        case .list(let l): w.u8(nestedListTag); w.raw(ListCoding.encode(l, type: .mixed, nullable: true)); return
        case .dictionary(let d): w.u8(nestedDictionaryTag); w.raw(DictionaryCoding.encode(d, type: .mixed, nullable: true)); return
        case .null, .link: preconditionFailure("mixed column given \(v)")
        default: break
        }
        w.u8(v.type!.rawValue)
        switch v {
        case .bool(let b): w.u8(b ? 1 : 0)
        case .int(let i): w.i64(i)
        case .float(let f): w.u32(f.bitPattern)
        case .double(let d): w.u64(d.bitPattern)
        case .string(let s): w.raw(s.utf8)
        case .data(let d): w.raw(d)
        case .date(let t): w.i64(t.seconds); w.u32(UInt32(bitPattern: t.nanoseconds))
        case .objectId(let o): withUnsafeBytes(of: o.bytes) { w.raw($0) }
        case .uuid(let u): withUnsafeBytes(of: u.uuid) { w.raw($0) }
        case .decimal128(let d): w.u64(d.low); w.u64(d.high)
        case .typedLink(let c, let k): w.u32(c); w.u64(k.rawValue)
        case .null, .link, .list, .dictionary: preconditionFailure("unreachable")
        }
    }

    /// Decodes tag byte + payload of a mixed value. `level` is the nesting level of the collection the value
    /// is in (1: a property or a collection property's element); nested collections deeper than
    /// `maxNestingLevel` are refused, so a damaged or hostile value cannot exhaust the stack.
    static func decodeMixed(_ b: UnsafeRawBufferPointer, level: Int = 1) throws(CodecError) -> Value {
        guard let tag = b.first else { throw CodecError("empty mixed value") }
        let payload = UnsafeRawBufferPointer(rebasing: b[1...])
        func need(_ n: Int) throws(CodecError) {
            if payload.count != n { throw CodecError("mixed \(tag) payload of \(payload.count) bytes, expected \(n)") }
        }
        if tag == nestedListTag || tag == nestedDictionaryTag {
            guard level < maxNestingLevel else { throw CodecError("collections nested deeper than \(maxNestingLevel) levels") }
            do {
                if tag == nestedListTag { return .list(try ListCoding.decodeNested(payload, level: level + 1)) }
                return .dictionary(try DictionaryCoding.decodeNested(payload, level: level + 1))
            } catch let e as CodecError {
                throw e
            } catch {
                throw CodecError("nested collection: \(error)")
            }
        }
        switch PropertyType(rawValue: tag) {
        case .bool?:
            try need(1)
            guard payload[0] <= 1 else { throw CodecError("mixed bool byte \(payload[0])") }
            return .bool(payload[0] == 1)
        case .int?:
            try need(8)
            return .int(Int64(bitPattern: payload.u64(at: 0)))
        case .float?:
            try need(4)
            return .float(Float(bitPattern: payload.u32(at: 0)))
        case .double?:
            try need(8)
            return .double(Double(bitPattern: payload.u64(at: 0)))
        case .string?:
            guard let s = decodeUTF8(payload) else { throw CodecError("mixed string is not UTF-8") }
            return .string(s)
        case .data?:
            return .data(Array(payload))
        case .date?:
            try need(12)
            return .date(Timestamp(seconds: Int64(bitPattern: payload.u64(at: 0)),
                                   nanoseconds: Int32(bitPattern: payload.u32(at: 8))))
        case .objectId?:
            try need(12)
            return .objectId(ObjectId(byteArray: payload))
        case .uuid?:
            try need(16)
            return .uuid(uuidFrom(payload.baseAddress!))
        case .decimal128?:
            try need(16)
            return .decimal128(Decimal128(low: payload.u64(at: 0), high: payload.u64(at: 8)))
        case .link?:
            try need(12)
            let c = payload.u32(at: 0)
            guard c != 0 else { throw CodecError("typed link to class 0") }
            return .typedLink(classID: c, key: ObjectKey(payload.u64(at: 4)))
        default:
            throw CodecError("mixed value with type tag \(tag)")
        }
    }

    @inline(__always)
    static func uuidFrom(_ p: UnsafeRawPointer) -> UUID {
        UUID(uuid: p.loadUnaligned(as: uuid_t.self))
    }
}
