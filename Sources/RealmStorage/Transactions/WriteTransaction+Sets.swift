/// Sets (format 7, docs/FILE_FORMAT.md "Serialized set"): a set is stored as a serialized list whose elements
/// are strictly increasing in `SetOrder` (Realm Core's order of mixed values), so membership is a binary
/// search and two values Realm Core holds equal (1, 1.0 and decimal 1 in a set of mixed; -0.0 and 0.0) are one
/// element, the first stored. A writer keeps a changed set in `dirtyLists`, as a list.
enum SetElements {
    /// Where `value` is in `elements` (strictly increasing), or where it would go.
    static func search(_ elements: [Value], _ value: Value) -> (index: Int, found: Bool) {
        var lo = 0, hi = elements.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = SetOrder.compare(elements[mid], value)
            if c == 0 { return (mid, true) }
            if c < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (lo, false)
    }

    /// `values` in set order, each value equal to an earlier one (in `SetOrder`) dropped.
    static func normalized(_ values: [Value]) -> [Value] {
        if firstDisorder(values) == nil { return values }
        return values.sortedUnique(keeping: .first, by: SetOrder.compare)
    }

    /// The position of the first element that is not strictly greater than the one before it, or nil.
    static func firstDisorder(_ elements: [Value]) -> Int? {
        if elements.count < 2 { return nil }
        for i in 1..<elements.count where SetOrder.compare(elements[i - 1], elements[i]) >= 0 { return i }
        return nil
    }
}

extension Snapshot {
    /// Whether a set property of an object holds `value` (an element equal to it in Realm Core's set order).
    public func setContains(_ key: ObjectKey, _ p: PropertyHandle, _ value: Value) throws -> Bool {
        try naming(p.classID) {
            let (c, info) = try currentInfo(p)
            guard info.isSet else {
                throw StorageError.typeMismatch(className: c.name, property: info.name, expected: "set access", got: "a set lookup")
            }
            let v = try lookupElement(value, for: info, in: c)
            guard let loc = try locate(c.classID, key.rawValue) else { throw StorageError.noSuchObject(className: c.name, key: key.rawValue) }
            return SetElements.search(try listValues(c.classID, key.rawValue, info, loc), v).found
        }
    }

    /// The objects whose set property `p` holds an element equal to `value` (converted as `setContains` converts
    /// it), in key order, read from the set's element index; nil when `p` is not an indexed set.
    public func objects(_ p: PropertyHandle, withElement value: Value) throws -> [ObjectKey]? {
        try naming(p.classID) {
            let (c, info) = try currentInfo(p)
            guard info.isElementIndexed else { return nil }
            let v = try lookupElement(value, for: info, in: c)
            return try indexLookup(c.classID, info, v, limit: Int.max).map(ObjectKey.init)  // equal values order by key
        }
    }

    /// `value` as an element of a set or dictionary of property `p` would be stored, for finding it: the
    /// element type's conversions (int to double, ...) and its nullability, but a link's target need not exist.
    func lookupElement(_ value: Value, for p: PropertyInfo, in c: ClassInfo) throws -> Value {
        func mismatch() -> StorageError {
            .typeMismatch(className: c.name, property: p.name,
                          expected: p.type == .link ? "a link to \(catalogue.classInfo(id: p.targetClassID)?.name ?? "?")" : p.type.description,
                          got: value.type?.description ?? "null")
        }
        switch (p.type, value) {
        case (_, .null): if p.collectionValuesNullable { return .null }; throw mismatch()
        case (.mixed, .link): throw mismatch()
        case (.mixed, _): return value
        case (.float, .int(let i)): return .float(Float(i))
        case (.float, .double(let d)): return .float(Float(d))
        case (.double, .int(let i)): return .double(Double(i))
        case (.double, .float(let f)): return .double(Double(f))
        case (.link, .link): return value
        default:
            if value.type == p.type { return value }
            throw mismatch()
        }
    }
}

extension WriteTransaction {
    // MARK: Sets

    /// The class and property of a set, checking that the object exists.
    func setContext(_ key: ObjectKey, _ p: PropertyHandle) throws -> (ClassInfo, PropertyInfo, RowLocation) {
        try collectionContext(key, p, kind: "set", is: \.isSet, otherwise: "list or dictionary access")
    }

    /// The class and property of a set or dictionary (`is` says which), checking that the object exists; a
    /// property of another kind is a type mismatch naming what it takes (`otherwise` for another collection).
    func collectionContext(_ key: ObjectKey, _ p: PropertyHandle, kind: String, is isKind: (PropertyInfo) -> Bool,
                           otherwise: String) throws -> (ClassInfo, PropertyInfo, RowLocation) {
        try checkActive()
        let (c, info) = try currentInfo(p)
        guard isKind(info) else {
            throw StorageError.typeMismatch(className: c.name, property: info.name,
                                            expected: info.isCollection && info.type != .linkingObjects ? otherwise : "a single value",
                                            got: "a \(kind) change")
        }
        guard let loc = try locate(c.classID, key.rawValue) else { throw StorageError.noSuchObject(className: c.name, key: key.rawValue) }
        return (c, info, loc)
    }

    /// `value` checked and converted as an element of set `p` (as a list element; a link's target exists). A
    /// set never holds a nested collection.
    func setElement(_ value: Value, for p: PropertyInfo, in c: ClassInfo) throws -> Value {
        if value.isCollection {
            throw StorageError.typeMismatch(className: c.name, property: p.name,
                                            expected: "a set element (a set cannot hold a nested list or dictionary)",
                                            got: { if case .list = value { return "a list" } else { return "a dictionary" } }())
        }
        if value.isNull, p.type == .mixed { return .null }
        return try validated(value, for: p, in: c, element: true)
    }

    /// `values` checked as elements of set `p`, in set order, each one equal to an earlier one dropped.
    func setElements(_ values: [Value], for p: PropertyInfo, in c: ClassInfo) throws -> [Value] {
        SetElements.normalized(try values.map { try setElement($0, for: p, in: c) })
    }

    /// Adds `value` to a set. Returns false, and writes nothing, when the set already holds an element equal to
    /// it in Realm Core's set order (that element stays as it was stored).
    @discardableResult
    public func setInsert(_ key: ObjectKey, _ p: PropertyHandle, _ value: Value) throws -> Bool {
        let (c, info, loc) = try setContext(key, p)
        let v = try setElement(value, for: info, in: c)
        var elements = try listValues(c.classID, key.rawValue, info, loc)
        let at = SetElements.search(elements, v)
        if at.found { return false }
        elements.insert(v, at: at.index)
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = elements
        if info.isElementIndexed { try addToIndex(c.classID, info, v, key.rawValue) }
        if case .link(let t) = v { try addBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        try addElementBacklinks(v, info, c, key)
        return true
    }

    /// Removes the element equal to `value` from a set. Returns false, and writes nothing, when there is none.
    @discardableResult
    public func setRemove(_ key: ObjectKey, _ p: PropertyHandle, _ value: Value) throws -> Bool {
        let (c, info, loc) = try setContext(key, p)
        let v = try lookupElement(value, for: info, in: c)
        var elements = try listValues(c.classID, key.rawValue, info, loc)
        let at = SetElements.search(elements, v)
        guard at.found else { return false }
        let old = elements.remove(at: at.index)
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = elements
        if info.isElementIndexed { try removeElementEntry(c.classID, info, old, remaining: elements, key.rawValue) }
        if case .link(let t) = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        try removeElementBacklinks(old, info, c, key)
        return true
    }

    /// Empties a set.
    public func setRemoveAll(_ key: ObjectKey, _ p: PropertyHandle) throws {
        try setAssign(key, p, [])
    }

    /// Replaces a set's elements with `values`: put in set order, a value equal to an earlier one dropped.
    public func setAssign(_ key: ObjectKey, _ p: PropertyHandle, _ values: [Value]) throws {
        let (c, info, loc) = try setContext(key, p)
        let new = try setElements(values, for: info, in: c)
        let old = try listValues(c.classID, key.rawValue, info, loc)
        if old.count == new.count && zip(old, new).allSatisfy({ $0.isStoredIdentically(to: $1) }) { return }
        if info.type == .link {
            for case .link(let t) in old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
            for case .link(let t) in new { try addBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        } else if info.type == .mixed {
            for v in old { try removeElementBacklinks(v, info, c, key) }
            for v in new { try addElementBacklinks(v, info, c, key) }
        }
        if info.isElementIndexed {
            // Only the entries that come or go.
            let before = elementEntries(old, key.rawValue), after = elementEntries(new, key.rawValue)
            for e in before.subtracting(after) { try withIndex(c.classID, info) { _ = try $0.remove(e, sink: self) } }
            for v in new where !before.contains(indexEntry(v, key.rawValue)) { try addToIndex(c.classID, info, v, key.rawValue) }
        }
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = new
    }

    // MARK: Element indexes

    /// The entries of an indexed set's elements: one per distinct entry, since two strings longer than an index
    /// key keeps (`IndexKey.maxStringBytes`) that share that prefix have one entry for the object, present while
    /// either is in the set.
    func elementEntries(_ elements: [Value], _ key: UInt64) -> Set<[UInt8]> {
        Set(elements.map { indexEntry($0, key) })
    }

    /// Removes the entry of `element`, which left the set of object `key`, unless an element still in the set
    /// (`remaining`) has the same entry.
    func removeElementEntry(_ classID: UInt32, _ p: PropertyInfo, _ element: Value, remaining: [Value], _ key: UInt64) throws {
        let entry = indexEntry(element, key)
        if IndexKey.isTruncated(encoded: entry.dropLast(8)), remaining.contains(where: { indexEntry($0, key) == entry }) { return }
        try withIndex(classID, p) { _ = try $0.remove(entry, sink: self) }
    }

    /// Stores `bytes` as the serialized value of collection property `p` of an object, unchecked: for tests
    /// that need a damaged set or dictionary in a file.
    func storeRawCollection(_ key: ObjectKey, _ p: PropertyHandle, _ bytes: [UInt8]) throws {
        try checkActive()
        let (c, info) = try currentInfo(p)
        precondition(info.isCollection && info.type != .linkingObjects, "storeRawCollection on \(c.name).\(info.name)")
        let slot = SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)
        dirtyLists[slot] = nil
        dirtyDictionaries[slot] = nil
        let (leaf, row) = try mutableRow(c.classID, key.rawValue)
        try leaf.set(row: row, property: info, .data(bytes))
    }
}
