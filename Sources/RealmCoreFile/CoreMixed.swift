/// Mixed values and collections (lists, sets, dictionaries), formats ≥ 10.
extension CoreGroup {
    /// Element `i` of an `ArrayMixed` leaf: `[composite, ints, int pairs, strings, refs?, keys?]`.
    func mixed(_ node: CoreNode, _ i: Int, depth: Int) throws -> CoreValue {
        guard node.hasRefs, node.count >= 1, let compositeRef = try node.ref(0) else { throw badLeaf(node, "mixed") }
        let c = try reader.node(compositeRef).int(i)
        if c == 0 { return .null }
        let type = (c & 0x1F) - 1
        let payload = (c & 0xE0) >> 5
        let v = c >> 8
        func slot(_ s: Int) throws -> CoreNode {
            guard s < node.count, let ref = try node.ref(s) else {
                throw RealmCoreFileError.corrupt(what: "mixed value of type \(type) without its payload node \(s)", offset: node.ref, context: "")
            }
            return try reader.node(ref)
        }
        func index(_ v: Int64) throws -> Int {
            guard v >= 0, v < Int64(Int32.max) else {
                throw RealmCoreFileError.corrupt(what: "mixed payload index \(v)", offset: node.ref, context: "")
            }
            return Int(v)
        }
        func stringPayload() throws -> [UInt8] {
            try stringBytes(try slot(3), try index(v), enumKeys: nil) ?? []
        }
        switch type {
        case 0: return payload == 0 ? .int(v) : .int(try slot(1).int(try index(v)))
        case 1: return .bool(v != 0)
        case 2: return .string(String(decoding: try stringPayload(), as: UTF8.self))
        case 4: return .binary(try stringPayload())
        case 9: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: try slot(1).int(try index(v)))))
        case 10: return .double(Double(bitPattern: UInt64(bitPattern: try slot(1).int(try index(v)))))
        case 8:
            let pairs = try slot(2), j = try index(v) * 2
            return .timestamp(seconds: try pairs.int(j), nanoseconds: Int32(truncatingIfNeeded: try pairs.int(j + 1)))
        case 11:
            let pairs = try slot(2), j = try index(v) * 2
            return .decimal128(CoreDecimal128(low: UInt64(bitPattern: try pairs.int(j)), high: UInt64(bitPattern: try pairs.int(j + 1))))
        case 15, 17:
            let bytes = try stringPayload()
            let width = type == 15 ? 12 : 16
            guard bytes.count >= width else {
                throw RealmCoreFileError.corrupt(what: "mixed \(type == 15 ? "ObjectId" : "UUID") of \(bytes.count) bytes", offset: node.ref, context: "")
            }
            return type == 15 ? .objectId(Array(bytes.prefix(12))) : .uuid(Array(bytes.prefix(16)))
        case 12:
            // A plain link inside a Mixed names no table; SDKs store typed links instead.
            return .int(try slot(1).int(try index(v)))
        case 16:
            let pairs = try slot(2), j = try index(v) * 2
            let table = try pairs.int(j), key = try pairs.int(j + 1)
            guard let name = className(tableKey: Int64(UInt32(truncatingIfNeeded: table))) else {
                throw RealmCoreFileError.corrupt(what: "typed link to unknown table key \(table)", offset: node.ref, context: "")
            }
            return .link(CoreLink(className: name, key: key))
        case 19, 20, 21:
            guard payload == 4 else {
                throw RealmCoreFileError.corrupt(what: "mixed collection without a ref payload", offset: node.ref, context: "")
            }
            guard depth < CoreNodeReader.maximumDepth else {
                throw RealmCoreFileError.corrupt(what: "collections nested too deep", offset: node.ref, context: "")
            }
            let ref = try slot(4).int(try index(v))
            let root = ref == 0 ? nil : Int(ref)
            if type == 21 { return .dictionary(try dictionary(root, keyIsString: true, legacyCluster: false, depth: depth + 1)) }
            let values = try elements(root, .mixed, nullable: true, target: nil, depth: depth + 1)
            return type == 19 ? .list(values) : .set(values)
        default:
            throw RealmCoreFileError.corrupt(what: "mixed value of unknown type \(type)", offset: node.ref, context: "")
        }
    }

    /// Every element of the B+tree at `root` (nil = empty), decoded as `kind`.
    func elements(_ root: Int?, _ kind: LeafKind, nullable: Bool, target: String?, depth: Int = 0) throws -> [CoreValue] {
        guard let root else { return [] }
        var budget = WalkBudget(reader)
        var values: [CoreValue] = []
        try reader.forEachLeaf(try reader.node(root), budget: &budget) { leaf in
            let n = try leafCount(kind, leaf)
            values.reserveCapacity(values.count + n)
            for j in 0..<n {
                if case .mixed = kind {
                    values.append(try mixed(leaf, j, depth: depth))
                } else {
                    values.append(try leafValue(kind, leaf, j, nullable: nullable, target: target))
                }
            }
        }
        return values
    }

    /// Every integer of the B+tree at `root` (raw keys or row numbers).
    func integers(_ root: Int?) throws -> [Int64] {
        guard let root else { return [] }
        var budget = WalkBudget(reader)
        var values: [Int64] = []
        try reader.forEachLeaf(try reader.node(root), budget: &budget) { leaf in
            for j in 0..<leaf.count { values.append(try leaf.int(j)) }
        }
        return values
    }

    /// A dictionary: formats ≥ 23 `[keys B+tree, values B+tree of Mixed]`; formats 21–22 a cluster tree whose
    /// leaves hold keys (column 0) and values (column 1).
    func dictionary(_ root: Int?, keyIsString: Bool, legacyCluster: Bool, depth: Int = 0) throws -> [CoreDictionaryEntry] {
        guard let root else { return [] }
        var keys: [CoreValue] = []
        var values: [CoreValue] = []
        let keyKind: LeafKind = keyIsString ? .string(enumKeys: nil) : .int(nullable: false)
        if legacyCluster {
            var budget = WalkBudget(reader)
            try forEachClusterLeaf(try reader.node(root), budget: &budget) { leaf, n in
                guard leaf.count >= 3, let k = try leaf.ref(1), let v = try leaf.ref(2) else {
                    throw RealmCoreFileError.corrupt(what: "dictionary cluster without keys and values", offset: leaf.ref, context: "")
                }
                let kLeaf = try reader.node(k), vLeaf = try reader.node(v)
                for j in 0..<n {
                    keys.append(try leafValue(keyKind, kLeaf, j, nullable: false, target: nil))
                    values.append(try mixed(vLeaf, j, depth: depth))
                }
            }
        } else {
            let node = try reader.node(root)
            guard node.hasRefs, node.count >= 2 else { throw badLeaf(node, "dictionary") }
            keys = try elements(try node.ref(0), keyKind, nullable: false, target: nil, depth: depth)
            values = try elements(try node.ref(1), .mixed, nullable: true, target: nil, depth: depth)
        }
        guard keys.count == values.count else {
            throw RealmCoreFileError.corrupt(what: "dictionary with \(keys.count) keys and \(values.count) values", offset: root, context: "")
        }
        return zip(keys, values).map { key, value in
            switch key {
            case let .string(s): CoreDictionaryEntry(key: s, value: value)
            case let .int(i): CoreDictionaryEntry(key: String(i), value: value)
            default: CoreDictionaryEntry(key: "", value: value)
            }
        }
    }
}
