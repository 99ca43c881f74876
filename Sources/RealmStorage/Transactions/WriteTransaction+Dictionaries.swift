/// Dictionaries (format 7, docs/FILE_FORMAT.md "Serialized dictionary"): string keys in UTF-8 byte order, each
/// with a value of the property's type. A writer keeps a changed dictionary in `dirtyDictionaries` and commit
/// stores it in its cluster. A link value has one backlink per key holding it (counted entries when several
/// keys hold the same target).
extension Snapshot {
    /// The value of `key` in a dictionary property of an object: nil when there is no such key, `.null` for a
    /// stored null.
    public func dictionaryValue(_ key: ObjectKey, _ p: PropertyHandle, key dictionaryKey: String) throws -> Value? {
        try dictionary(key, p)[dictionaryKey]
    }
}

extension WriteTransaction {
    // MARK: Dictionaries

    /// The class and property of a dictionary, checking that the object exists.
    func dictionaryContext(_ key: ObjectKey, _ p: PropertyHandle) throws -> (ClassInfo, PropertyInfo, RowLocation) {
        try collectionContext(key, p, kind: "dictionary", is: \.isDictionary, otherwise: "list or set access")
    }

    /// Refuses a key a writer may not store: empty, starting with `$`, containing `.` (Realm Core's rules) or
    /// NUL, or longer than a string value may be. Keys already stored are read whatever they are.
    func checkDictionaryKey(_ k: String, for p: PropertyInfo, in c: ClassInfo) throws {
        func refuse(_ reason: String) -> StorageError {
            .invalidDictionaryKey(className: c.name, property: p.name, key: k, reason: reason)
        }
        if k.isEmpty { throw refuse("a key may not be empty") }
        if k.utf8.first == UInt8(ascii: "$") { throw refuse("a key may not start with '$'") }
        if k.utf8.contains(UInt8(ascii: ".")) { throw refuse("a key may not contain '.'") }
        if k.utf8.contains(0) { throw refuse("a key may not contain a NUL character") }
        if k.utf8.count > SchemaLimits.maxValueBytes {
            throw StorageError.valueTooLarge(className: c.name, property: p.name, bytes: k.utf8.count, limit: SchemaLimits.maxValueBytes)
        }
    }

    /// `value` checked and converted as a value of dictionary `p` (as a list element; a link's target exists;
    /// null when the values are optional, and always in a dictionary of mixed values).
    func dictionaryElement(_ value: Value, for p: PropertyInfo, in c: ClassInfo) throws -> Value {
        if value.isNull, p.collectionValuesNullable { return .null }
        return try validated(value, for: p, in: c, element: true)
    }

    /// `entries` with every key and value checked.
    func dictionaryEntries(_ entries: ValueDictionary, for p: PropertyInfo, in c: ClassInfo) throws -> ValueDictionary {
        // The keys stay as they are, in their order.
        try entries.mapValues { k, v in
            try checkDictionaryKey(k, for: p, in: c)
            return try dictionaryElement(v, for: p, in: c)
        }
    }

    /// Sets the value of `dictionaryKey` (adding the key when it is new). Storing the value the key already
    /// holds writes nothing (and adds no backlink).
    public func dictionarySet(_ key: ObjectKey, _ p: PropertyHandle, key dictionaryKey: String, _ value: Value) throws {
        let (c, info, loc) = try dictionaryContext(key, p)
        try checkDictionaryKey(dictionaryKey, for: info, in: c)
        let v = try dictionaryElement(value, for: info, in: c)
        var d = try dictionaryValues(c.classID, key.rawValue, info, loc)
        let old = d[dictionaryKey]
        if let old, old.isStoredIdentically(to: v) { return }
        d[dictionaryKey] = v
        dirtyDictionaries[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = d
        if case .link(let t)? = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        if case .link(let t) = v { try addBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        if let old { try removeElementBacklinks(old, info, c, key) }
        try addElementBacklinks(v, info, c, key)
        if case .link(let t)? = old, ownsTarget(info) { try deleteObject(info.targetClassID, t.rawValue) }
    }

    /// Removes `dictionaryKey` and its value. Returns false, and writes nothing, when there is no such key.
    @discardableResult
    public func dictionaryRemove(_ key: ObjectKey, _ p: PropertyHandle, key dictionaryKey: String) throws -> Bool {
        let (c, info, loc) = try dictionaryContext(key, p)
        var d = try dictionaryValues(c.classID, key.rawValue, info, loc)
        guard let old = d[dictionaryKey] else { return false }
        d[dictionaryKey] = nil
        dirtyDictionaries[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = d
        if case .link(let t) = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        try removeElementBacklinks(old, info, c, key)
        if case .link(let t) = old, ownsTarget(info) { try deleteObject(info.targetClassID, t.rawValue) }
        return true
    }

    /// Empties a dictionary.
    public func dictionaryRemoveAll(_ key: ObjectKey, _ p: PropertyHandle) throws {
        try setDictionary(key, p, ValueDictionary())
    }

    /// Replaces a dictionary's entries with `entries`.
    public func setDictionary(_ key: ObjectKey, _ p: PropertyHandle, _ entries: ValueDictionary) throws {
        let (c, info, loc) = try dictionaryContext(key, p)
        let new = try dictionaryEntries(entries, for: info, in: c)
        let old = try dictionaryValues(c.classID, key.rawValue, info, loc)
        if old.keys.elementsEqual(new.keys, by: { SetOrder.compareUTF8($0, $1) == 0 }) && zip(old.values, new.values).allSatisfy({ $0.isStoredIdentically(to: $1) }) { return }
        if info.type == .link {
            for case .link(let t) in old.values { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
            for case .link(let t) in new.values { try addBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        } else if info.type == .mixed {
            for v in old.values { try removeElementBacklinks(v, info, c, key) }
            for v in new.values { try addElementBacklinks(v, info, c, key) }
        }
        dirtyDictionaries[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = new
        if ownsTarget(info) {
            let kept = Set(new.values.compactMap { if case .link(let t) = $0 { return t } else { return nil } })
            for case .link(let t) in old.values where !kept.contains(t) { try deleteObject(info.targetClassID, t.rawValue) }
        }
    }
}
