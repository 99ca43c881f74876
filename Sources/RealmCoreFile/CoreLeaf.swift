/// How the elements of a leaf are stored; chosen from the column's type and attributes, then refined by each
/// leaf's own header (string and binary leaves have three forms, Decimal128 leaves four widths).
enum LeafKind: Sendable, Hashable {
    /// `ArrayInteger`, or `ArrayIntNull` (element 0 is the null sentinel) when `nullable`.
    case int(nullable: Bool)
    /// Formats ≥ 10: 0 false, 1 true, 3 null.
    case bool
    /// Formats ≤ 9: integer leaf (`ArrayIntNull` when nullable) holding 0 or 1.
    case legacyBool(nullable: Bool)
    /// Formats ≤ 4: seconds in an integer leaf.
    case oldDateTime(nullable: Bool)
    case float, double
    /// `enumKeys`: root of the distinct values of an enumerated string column.
    case string(enumKeys: Int?)
    case binary
    case timestamp
    case decimal
    case objectId, uuid
    /// `ArrayKey`: object key + 1, 0 = null (formats ≥ 10); target row + 1 (formats ≤ 9).
    case link
    /// Raw keys or row numbers (lists of links, old link-list and backlink lists).
    case keys
    case typedLink
    case mixed
    /// One ref per element (collections, sub-tables, old link lists), 0 = empty.
    case refs
    /// Per element: 0 none, odd one origin key, even a ref to a list of origin keys.
    case backlink
}

extension CoreGroup {
    /// Number of elements in the leaf `node` of kind `kind`.
    func leafCount(_ kind: LeafKind, _ node: CoreNode) throws -> Int {
        switch kind {
        case .int(nullable: true), .legacyBool(nullable: true), .oldDateTime(nullable: true):
            return max(0, node.count - 1)
        case .string, .binary:
            if node.hasRefs && !node.contextFlag {
                guard node.count >= 2, let offsets = try node.ref(0) else {
                    throw RealmCoreFileError.corrupt(what: "blob leaf without offsets", offset: node.ref, context: "")
                }
                return try reader.node(offsets).count
            }
            return node.count
        case .timestamp:
            guard node.hasRefs, node.count >= 2, let seconds = try node.ref(0) else {
                throw RealmCoreFileError.corrupt(what: "timestamp leaf without seconds", offset: node.ref, context: "")
            }
            return max(0, try reader.node(seconds).count - 1)
        case .objectId: return fixedBytesCount(node.count, 12)
        case .uuid: return fixedBytesCount(node.count, 16)
        case .typedLink: return node.count / 2
        case .mixed:
            guard node.hasRefs, node.count >= 1, let composite = try node.ref(0) else {
                throw RealmCoreFileError.corrupt(what: "mixed leaf without its composite node", offset: node.ref, context: "")
            }
            return try reader.node(composite).count
        default:
            return node.count
        }
    }

    private func fixedBytesCount(_ bytes: Int, _ width: Int) -> Int {
        let block = width * 8 + 1
        return (bytes - (bytes + block - 1) / block) / width
    }

    /// Element `i` of the leaf `node`. `nullable` decides whether null patterns read as null or as a default;
    /// `target` names the class links point to.
    func leafValue(_ kind: LeafKind, _ node: CoreNode, _ i: Int, nullable: Bool, target: String?) throws -> CoreValue {
        switch kind {
        case let .int(isNullable):
            if isNullable {
                let v = try node.int(i + 1)
                return v == (try node.int(0)) ? (nullable ? .null : .int(0)) : .int(v)
            }
            return .int(try node.int(i))
        case .bool:
            let v = try node.int(i)
            return v == 3 ? (nullable ? .null : .bool(false)) : .bool(v != 0)
        case let .legacyBool(isNullable):
            if isNullable {
                let v = try node.int(i + 1)
                return v == (try node.int(0)) ? .null : .bool(v != 0)
            }
            return .bool(try node.int(i) != 0)
        case let .oldDateTime(isNullable):
            if isNullable {
                let v = try node.int(i + 1)
                return v == (try node.int(0)) ? .null : .timestamp(seconds: v, nanoseconds: 0)
            }
            return .timestamp(seconds: try node.int(i), nanoseconds: 0)
        case .float:
            guard node.scheme == 1, node.width == 4 || (node.width == 0 && node.count == 0) else { throw badLeaf(node, "float") }
            let bits = UInt32(littleEndian: try node.bytes(i * 4, 4).loadUnaligned(as: UInt32.self))
            return bits == 0x7FC0_00AA && nullable ? .null : .float(Float(bitPattern: bits))
        case .double:
            guard node.scheme == 1, node.width == 8 || (node.width == 0 && node.count == 0) else { throw badLeaf(node, "double") }
            let bits = UInt64(littleEndian: try node.bytes(i * 8, 8).loadUnaligned(as: UInt64.self))
            return bits == 0x7FF8_0000_0000_00AA && nullable ? .null : .double(Double(bitPattern: bits))
        case let .string(enumKeys):
            guard let bytes = try stringBytes(node, i, enumKeys: enumKeys) else { return nullable ? .null : .string("") }
            return .string(String(decoding: bytes, as: UTF8.self))
        case .binary:
            guard let bytes = try blobBytes(node, i, terminated: false) else { return nullable ? .null : .binary([]) }
            return .binary(bytes)
        case .timestamp:
            guard node.hasRefs, node.count >= 2, let sRef = try node.ref(0), let nRef = try node.ref(1) else {
                throw badLeaf(node, "timestamp")
            }
            let seconds = try reader.node(sRef)
            let s = try seconds.int(i + 1)
            if s == (try seconds.int(0)) { return nullable ? .null : .timestamp(seconds: 0, nanoseconds: 0) }
            let ns = try reader.node(nRef).int(i)
            return .timestamp(seconds: s, nanoseconds: Int32(truncatingIfNeeded: ns))
        case .decimal:
            let d = try decimal(node, i)
            return d == .realmNull && nullable ? .null : .decimal128(d)
        case .objectId:
            guard let b = try fixedBytes(node, i, 12) else { return .null }
            return .objectId(b)
        case .uuid:
            guard let b = try fixedBytes(node, i, 16) else { return .null }
            return .uuid(b)
        case .link:
            let v = try node.int(i)
            // Unresolved links (keys ≤ −2 after the +1) point at tombstones: the SDKs show them as null.
            guard v > 0, let target else { return .null }
            return .link(CoreLink(className: target, key: v - 1))
        case .keys:
            return .int(try node.int(i))
        case .typedLink:
            let table = try node.int(2 * i), key = try node.int(2 * i + 1)
            guard table != 0 else { return .null }
            guard let name = className(tableKey: Int64(UInt32(truncatingIfNeeded: table &- 1) & 0x7FFF_FFFF)) else {
                throw RealmCoreFileError.corrupt(what: "typed link to unknown table key \(table - 1)", offset: node.ref, context: "")
            }
            return .link(CoreLink(className: name, key: key &- 1))
        case .mixed:
            return try mixed(node, i, depth: 0)
        case .refs, .backlink:
            return .int(try node.int(i))
        }
    }

    func badLeaf(_ node: CoreNode, _ what: String) -> RealmCoreFileError {
        .corrupt(what: "\(what) leaf with an unexpected header (flags \(node.flags), width \(node.width), scheme \(node.scheme))",
                 offset: node.ref, context: "")
    }

    /// The bytes of string element `i` (nil for null), from a short, medium, big or enumerated leaf
    /// (`withString`'s bytes, copied).
    func stringBytes(_ node: CoreNode, _ i: Int, enumKeys: Int?) throws -> [UInt8]? {
        var bytes: [UInt8]?
        guard try withString(node, i, enumKeys: enumKeys, { bytes = Array($0) }) else { return nil }
        return bytes
    }

    /// Element `i` of a small-blob (`[offsets, blob, nulls?]`) or big-blob (one ref per element) leaf; strings
    /// (`terminated`) drop their terminating NUL. `notNullFlags`: the string leaves of formats ≤ 9 store "not
    /// null" flags; binary leaves, and every leaf of formats ≥ 10, "null" flags.
    func blobBytes(_ node: CoreNode, _ i: Int, terminated: Bool, notNullFlags: Bool = false) throws -> [UInt8]? {
        guard node.hasRefs else { throw badLeaf(node, "blob") }
        if node.contextFlag {
            guard let ref = try node.ref(i) else { return nil }
            var bytes = try bigBlob(ref)
            if terminated {
                guard bytes.last == 0 else {
                    throw RealmCoreFileError.corrupt(what: "big string without its terminating NUL", offset: ref, context: "")
                }
                bytes.removeLast()
            }
            return bytes
        }
        guard node.count >= 2, let offsetsRef = try node.ref(0) else { throw badLeaf(node, "small blob") }
        let offsets = try reader.node(offsetsRef)
        if node.count >= 3, let nullsRef = try node.ref(2) {
            let isSet = try reader.node(nullsRef).int(i) != 0
            if notNullFlags ? !isSet : isSet { return nil }
        }
        let begin = i == 0 ? 0 : Int(try offsets.int(i - 1)), end = Int(try offsets.int(i))
        let blob: CoreNode
        if let blobRef = try node.ref(1) {
            blob = try reader.node(blobRef)
        } else {
            guard begin == end else { throw badLeaf(node, "small blob") }
            return terminated ? nil : []
        }
        guard begin >= 0, end >= begin, end <= blob.payloadBytes else {
            throw RealmCoreFileError.corrupt(what: "blob offsets \(begin)..<\(end) outside a blob of \(blob.payloadBytes) bytes", offset: blob.ref, context: "")
        }
        if terminated {
            guard end > begin else {
                throw RealmCoreFileError.corrupt(what: "medium string without its terminating NUL", offset: blob.ref, context: "")
            }
            return Array(try blob.bytes(begin, end - begin - 1))
        }
        return Array(try blob.bytes(begin, end - begin))
    }

    /// The bytes of an `ArrayBlob`; with the context flag it lists refs to chunks, concatenated.
    func bigBlob(_ ref: Int) throws -> [UInt8] {
        let blob = try reader.node(ref)
        guard blob.contextFlag else { return Array(try blob.bytes(0, blob.count)) }
        guard blob.hasRefs else { throw badLeaf(blob, "big blob") }
        var bytes: [UInt8] = []
        for c in 0..<blob.count {
            guard let chunkRef = try blob.ref(c) else { continue }
            let chunk = try reader.node(chunkRef)
            guard !chunk.contextFlag else {
                throw RealmCoreFileError.corrupt(what: "big blob chunk that is itself chunked", offset: chunkRef, context: "")
            }
            bytes += try chunk.bytes(0, chunk.count)
        }
        return bytes
    }

    /// Element `i` of an ObjectId/UUID leaf: blocks of one null-bitmap byte and 8 elements; nil for null.
    func fixedBytes(_ node: CoreNode, _ i: Int, _ width: Int) throws -> [UInt8]? {
        guard node.scheme == 1, node.width == 1 || node.count == 0 else { throw badLeaf(node, "fixed-bytes") }
        guard i >= 0, i < fixedBytesCount(node.count, width) else {
            throw RealmCoreFileError.corrupt(what: "element \(i) outside a fixed-bytes leaf", offset: node.ref, context: "")
        }
        let blockStart = (i / 8) * (width * 8 + 1)
        let bitmap = try node.bytes(blockStart, 1)[0]
        if bitmap & (1 << UInt8(i % 8)) != 0 { return nil }
        return Array(try node.bytes(blockStart + 1 + (i % 8) * width, width))
    }

    /// Element `i` of a Decimal128 leaf: width 16 (formats 20–24), or 0, 4, 8 (format 24: none/BID32/BID64).
    func decimal(_ node: CoreNode, _ i: Int) throws -> CoreDecimal128 {
        guard node.scheme == 1, i >= 0, i < node.count else { throw badLeaf(node, "decimal") }
        switch node.width {
        case 0: return node.contextFlag ? .zero : .realmNull
        case 4: return .fromBID32(UInt32(littleEndian: try node.bytes(i * 4, 4).loadUnaligned(as: UInt32.self)))
        case 8: return .fromBID64(UInt64(littleEndian: try node.bytes(i * 8, 8).loadUnaligned(as: UInt64.self)))
        case 16:
            let b = try node.bytes(i * 16, 16)
            return CoreDecimal128(low: UInt64(littleEndian: b.loadUnaligned(as: UInt64.self)),
                                  high: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        default: throw badLeaf(node, "decimal")
        }
    }
}
