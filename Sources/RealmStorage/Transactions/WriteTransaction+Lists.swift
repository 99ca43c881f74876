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
        }
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = new
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
    }

    /// Removes the element at `index`.
    public func listRemove(_ key: ObjectKey, _ p: PropertyHandle, at index: Int) throws {
        let (c, info) = try listContext(key, p)
        var list = try listForUpdate(c.classID, key.rawValue, info)
        guard index >= 0, index < list.count else { throw StorageError.indexOutOfRange(index: index, count: list.count) }
        let old = list.remove(at: index)
        dirtyLists[SlotKey(classID: c.classID, key: key.rawValue, columnID: info.columnID)] = list
        if case .link(let t) = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
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
        guard let t = catalogue.classInfo(id: target),
              let bl = t.properties.first(where: { $0.type == .backlink && $0.targetClassID == origin && $0.originColumnID == p.columnID }) else {
            throw StorageError.corrupt(path: database.path, location: "schema", reason: "missing backlink column for link \(p.name)")
        }
        return bl
    }

    func setBacklinks(_ classID: UInt32, _ key: UInt64, _ bl: PropertyInfo, _ keys: [UInt64]) throws {
        try settleBacklinks()
        dirtyBacklinks[SlotKey(classID: classID, key: key, columnID: bl.columnID)] = keys  // stored at commit
    }

    /// Records that `origin` now links to `target` (a list may link the same target twice: one entry per
    /// link). Nothing is read here; the set is merged when next read, or at commit.
    func addBacklink(target: UInt64, via p: PropertyInfo, from originClass: UInt32, origin: UInt64) throws {
        let bl = try backlinkColumn(target: p.targetClassID, via: p, from: originClass)
        addedBacklinks.append(AddedBacklink(slot: SlotKey(classID: p.targetClassID, key: target, columnID: bl.columnID), origin: origin))
    }

    /// The added backlinks sorted by slot, then origin, and cut into one run per slot (the run's origins
    /// sorted); clears them.
    func takeAddedBacklinks() -> [(slot: SlotKey, origins: ArraySlice<UInt64>)] {
        if addedBacklinks.isEmpty { return [] }
        addedBacklinks.sort { SlotKey.ordered($0.slot, $1.slot) || ($0.slot == $1.slot && $0.origin < $1.origin) }
        let origins = addedBacklinks.map(\.origin)
        var runs: [(slot: SlotKey, origins: ArraySlice<UInt64>)] = []
        var start = 0
        for i in 1...addedBacklinks.count where i == addedBacklinks.count || addedBacklinks[i].slot != addedBacklinks[start].slot {
            runs.append((addedBacklinks[start].slot, origins[start..<i]))
            start = i
        }
        addedBacklinks.removeAll()
        return runs
    }

    /// Merges the added backlinks into `dirtyBacklinks`, so that reads and edits of backlink sets see them.
    func settleBacklinks() throws {
        if addedBacklinks.isEmpty { return }
        for (slot, origins) in takeAddedBacklinks() {
            guard let bl = catalogue.classInfo(id: slot.classID)?.property(column: slot.columnID),
                  try locate(slot.classID, slot.key) != nil else { continue }
            let current = try backlinkKeys(slot.classID, slot.key, bl)  // nothing is added now: no recursion
            dirtyBacklinks[slot] = ListCoding.mergeSorted(current, origins)
        }
    }

    func removeBacklink(target: UInt64, via p: PropertyInfo, from originClass: UInt32, origin: UInt64) throws {
        try settleBacklinks()
        guard try locate(p.targetClassID, target) != nil else { return }
        let bl = try backlinkColumn(target: p.targetClassID, via: p, from: originClass)
        var keys = try backlinkKeys(p.targetClassID, target, bl)
        if let i = keys.firstIndex(of: origin) { keys.remove(at: i) }
        try setBacklinks(p.targetClassID, target, bl, keys)
    }
}
