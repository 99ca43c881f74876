extension WriteTransaction {
    // MARK: Lists

    /// The current elements of a list, moved into the dirty set for changing.
    func listForUpdate(_ classID: UInt32, _ key: UInt64, _ p: PropertyInfo) throws -> [Value] {
        let slot = SlotKey(classID: classID, key: key, columnID: p.columnID)
        if let l = dirtyLists[slot] { return l }
        guard let loc = try locate(classID, key) else {
            throw StorageError.noSuchObject(className: catalogue.classInfo(id: classID)?.name ?? "?", key: key)
        }
        let values = try super.listValues(classID, key, p, loc)
        dirtyLists[slot] = values  // commit stores the new value in the cluster
        return values
    }

    func listContext(_ key: ObjectKey, _ p: PropertyHandle) throws -> (ClassInfo, PropertyInfo) {
        try checkActive()
        let (c, info) = try currentInfo(p)
        guard info.isList, info.type != .linkingObjects else {
            throw StorageError.typeMismatch(className: c.name, property: info.name, expected: "a single value",
                                            got: info.type == .linkingObjects ? "a change to computed backlinks" : "a list")
        }
        guard try locate(c.classID, key.rawValue) != nil else { throw StorageError.noSuchObject(className: c.name, key: key.rawValue) }
        return (c, info)
    }

    /// Replaces the whole list.
    public func setList(_ key: ObjectKey, _ p: PropertyHandle, _ values: [Value]) throws {
        let (c, info) = try listContext(key, p)
        let new = try values.map { try validated($0, for: info, in: c, element: true) }
        let old = try listForUpdate(c.classID, key.rawValue, info)
        if info.type == .link {
            for case .link(let t) in old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
            for case .link(let t) in new { try addBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        } else if info.type == .mixed {
            for v in old where MixedLinks.containsTypedLink(v) { try removeMixedBacklinks(v, via: info, from: c.classID, origin: key.rawValue) }
            for v in new where MixedLinks.containsTypedLink(v) { try addMixedBacklinks(v, via: info, from: c.classID, origin: key.rawValue) }
        }
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = new
        // Embedded objects go with the list that owned them (the new list holds none of them: `validated`).
        if ownsTarget(info) { for case .link(let t) in old { try deleteObject(info.targetClassID, t.rawValue) } }
    }

    /// Inserts `value` at `index` (`index == count` appends).
    public func listInsert(_ key: ObjectKey, _ p: PropertyHandle, _ value: Value, at index: Int) throws {
        let (c, info) = try listContext(key, p)
        let v = try validated(value, for: info, in: c, element: true)
        var list = try listForUpdate(c.classID, key.rawValue, info)
        guard index >= 0, index <= list.count else { throw StorageError.indexOutOfRange(index: index, count: list.count) }
        list.insert(v, at: index)
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = list
        if case .link(let t) = v { try addBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        try addElementBacklinks(v, info, c, key)
    }

    /// The backlinks of the typed links in a new element of a list of mixed values.
    func addElementBacklinks(_ v: Value, _ info: PropertyInfo, _ c: ClassInfo, _ key: ObjectKey) throws {
        if info.type == .mixed, MixedLinks.containsTypedLink(v) { try addMixedBacklinks(v, via: info, from: c.classID, origin: key.rawValue) }
    }

    /// Forgets the backlinks of the typed links in an element leaving a list of mixed values.
    func removeElementBacklinks(_ v: Value, _ info: PropertyInfo, _ c: ClassInfo, _ key: ObjectKey) throws {
        if info.type == .mixed, MixedLinks.containsTypedLink(v) { try removeMixedBacklinks(v, via: info, from: c.classID, origin: key.rawValue) }
    }

    public func listAppend(_ key: ObjectKey, _ p: PropertyHandle, _ value: Value) throws {
        let count = try list(key, p).count
        try listInsert(key, p, value, at: count)
    }

    /// Replaces the element at `index`.
    public func listSet(_ key: ObjectKey, _ p: PropertyHandle, _ value: Value, at index: Int) throws {
        let (c, info) = try listContext(key, p)
        let v = try validated(value, for: info, in: c, element: true)
        var list = try listForUpdate(c.classID, key.rawValue, info)
        guard index >= 0, index < list.count else { throw StorageError.indexOutOfRange(index: index, count: list.count) }
        let old = list[index]
        list[index] = v
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = list
        if case .link(let t) = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        if case .link(let t) = v { try addBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        try removeElementBacklinks(old, info, c, key)
        try addElementBacklinks(v, info, c, key)
        if case .link(let t) = old, ownsTarget(info) { try deleteObject(info.targetClassID, t.rawValue) }
    }

    /// Removes the element at `index`.
    public func listRemove(_ key: ObjectKey, _ p: PropertyHandle, at index: Int) throws {
        let (c, info) = try listContext(key, p)
        var list = try listForUpdate(c.classID, key.rawValue, info)
        guard index >= 0, index < list.count else { throw StorageError.indexOutOfRange(index: index, count: list.count) }
        let old = list.remove(at: index)
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = list
        if case .link(let t) = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
        try removeElementBacklinks(old, info, c, key)
        if case .link(let t) = old, ownsTarget(info) { try deleteObject(info.targetClassID, t.rawValue) }
    }

    /// Moves the element at `from` to position `to`.
    public func listMove(_ key: ObjectKey, _ p: PropertyHandle, from: Int, to: Int) throws {
        let (c, info) = try listContext(key, p)
        var list = try listForUpdate(c.classID, key.rawValue, info)
        guard from >= 0, from < list.count else { throw StorageError.indexOutOfRange(index: from, count: list.count) }
        guard to >= 0, to < list.count else { throw StorageError.indexOutOfRange(index: to, count: list.count) }
        list.insert(list.remove(at: from), at: to)
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = list
    }

    public func listRemoveAll(_ key: ObjectKey, _ p: PropertyHandle) throws { try setList(key, p, []) }

    // MARK: Backlinks

    func backlinkColumn(target: UInt32, via p: PropertyInfo, from origin: UInt32) throws -> PropertyInfo {
        // Through a buffer pointer, reading single fields in place: `first(where:)` over the class's properties
        // copied each one it looked at (a thousand instructions for every link a bulk insert makes).
        let column = p.columnID
        let found = catalogue.classIndex(id: target).flatMap { c in
            catalogue.classes[c].properties.withUnsafeBufferPointer { ps -> PropertyInfo? in
                ps.indices.first { ps[$0].type == .backlink && ps[$0].targetClassID == origin && ps[$0].originColumnID == column }
                    .map { ps[$0] }
            }
        }
        guard let bl = found else {
            throw StorageError.corrupt(path: database.path, location: "schema", reason: "missing backlink column for link \(p.name)")
        }
        return bl
    }
}
