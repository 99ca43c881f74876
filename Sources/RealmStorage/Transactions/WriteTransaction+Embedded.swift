/// Embedded objects (Realm's `EmbeddedObject`, format 7): an object of an embedded class is owned by exactly one
/// link or list element. It is created through its owner, never linked a second time, and deleted when its
/// owner lets it go: the link is set to null, the element is removed or replaced, the owner is deleted, or the
/// owning property or class is removed. Deleting it directly is allowed; its owner's link becomes null, or the
/// element leaves the list, as for any deleted target (DECISIONS 79).
extension WriteTransaction {
    // MARK: Creating embedded objects

    /// Creates a new object of the embedded class `p` links to and makes it the value of `p` in `parent`. The
    /// embedded object `p` held before, if any, is deleted (with the objects it owned). `values` and `lists` are
    /// as for `createObject`; an embedded object nested in the new one is created by a further call with the new
    /// object as its parent.
    @discardableResult
    public func createEmbeddedObject(in parent: ObjectKey, _ p: PropertyHandle, _ values: [String: Value] = [:],
                                     lists: [String: [Value]] = [:]) throws -> ObjectKey {
        try checkActive()
        let (c, info) = try currentInfo(p)
        let target = try embeddedTarget(c, info, kind: "a to-one link", ok: !info.isCollection)
        guard let loc = try locate(c.classID, parent.rawValue) else {
            throw StorageError.noSuchObject(className: c.name, key: parent.rawValue)
        }
        let old = try rawValue(loc, info)
        let child = try newEmbeddedObject(target, values, lists: lists)
        let (leaf, row) = try mutableRow(c.classID, parent.rawValue)
        try leaf.set(row: row, property: info, .link(child))
        if case .link(let t) = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: parent.rawValue) }
        try addBacklink(target: child.rawValue, via: info, from: c.classID, origin: parent.rawValue)
        if case .link(let t) = old { try deleteObject(info.targetClassID, t.rawValue) }
        return child
    }

    /// Creates a new object of the embedded class list `p` holds and inserts it at `index` (`index == count`
    /// appends).
    @discardableResult
    public func listInsertEmbedded(_ parent: ObjectKey, _ p: PropertyHandle, at index: Int, _ values: [String: Value] = [:],
                                   lists: [String: [Value]] = [:]) throws -> ObjectKey {
        let (c, info) = try listContext(parent, p)
        let target = try embeddedTarget(c, info, kind: "a list of links", ok: true)
        let count = try listForUpdate(c.classID, parent.rawValue, info).count
        guard index >= 0, index <= count else { throw StorageError.indexOutOfRange(index: index, count: count) }
        let child = try newEmbeddedObject(target, values, lists: lists)
        var list = try listForUpdate(c.classID, parent.rawValue, info)
        list.insert(.link(child), at: index)
        dirtyLists[SlotKey(classID: c.classID, key: parent.rawValue, columnID: info.columnID)] = list
        try addBacklink(target: child.rawValue, via: info, from: c.classID, origin: parent.rawValue)
        return child
    }

    /// Creates a new object of the embedded class list `p` holds and puts it at `index` in place of the element
    /// there, whose object is deleted (with the objects it owned).
    @discardableResult
    public func listSetEmbedded(_ parent: ObjectKey, _ p: PropertyHandle, at index: Int, _ values: [String: Value] = [:],
                                lists: [String: [Value]] = [:]) throws -> ObjectKey {
        let (c, info) = try listContext(parent, p)
        let target = try embeddedTarget(c, info, kind: "a list of links", ok: true)
        let count = try listForUpdate(c.classID, parent.rawValue, info).count
        guard index >= 0, index < count else { throw StorageError.indexOutOfRange(index: index, count: count) }
        let child = try newEmbeddedObject(target, values, lists: lists)
        var list = try listForUpdate(c.classID, parent.rawValue, info)
        let old = list[index]
        list[index] = .link(child)
        dirtyLists[SlotKey(classID: c.classID, key: parent.rawValue, columnID: info.columnID)] = list
        if case .link(let t) = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: parent.rawValue) }
        try addBacklink(target: child.rawValue, via: info, from: c.classID, origin: parent.rawValue)
        if case .link(let t) = old { try deleteObject(info.targetClassID, t.rawValue) }
        return child
    }

    /// Creates a new object of the embedded class dictionary `p` holds as the value of `dictionaryKey`, in place
    /// of the object the key held (deleted, with the objects it owned).
    @discardableResult
    public func dictionarySetEmbedded(_ parent: ObjectKey, _ p: PropertyHandle, key dictionaryKey: String, _ values: [String: Value] = [:],
                                      lists: [String: [Value]] = [:]) throws -> ObjectKey {
        let (c, info, loc) = try dictionaryContext(parent, p)
        try checkDictionaryKey(dictionaryKey, for: info, in: c)
        let target = try embeddedTarget(c, info, kind: "a dictionary of links", ok: true)
        let child = try newEmbeddedObject(target, values, lists: lists)
        var d = try dictionaryValues(c.classID, parent.rawValue, info, loc)
        let old = d[dictionaryKey]
        d[dictionaryKey] = .link(child)
        dirtyDictionaries[SlotKey(classID: c.classID, key: parent.rawValue, columnID: info.columnID)] = d
        if case .link(let t)? = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: parent.rawValue) }
        try addBacklink(target: child.rawValue, via: info, from: c.classID, origin: parent.rawValue)
        if case .link(let t)? = old { try deleteObject(info.targetClassID, t.rawValue) }
        return child
    }

    /// The embedded class link property `info` of `c` targets; throws when `info` is not a link (of the kind
    /// `ok` says) to an embedded class.
    private func embeddedTarget(_ c: ClassInfo, _ info: PropertyInfo, kind: String, ok: Bool) throws -> ClassInfo {
        guard info.type == .link, ok, let target = catalogue.classInfo(id: info.targetClassID), target.isEmbedded else {
            let got = info.type != .link ? info.type.description
                : "a link to '\(catalogue.classInfo(id: info.targetClassID)?.name ?? "?")', which is not embedded"
            throw StorageError.typeMismatch(className: c.name, property: info.name,
                                            expected: "\(kind) to an embedded class", got: ok ? got : "a collection")
        }
        return target
    }

    /// Creates an object of embedded class `c` without an owner: the caller links it at once (a link, a list
    /// element, a dictionary value). `values` and `lists` are validated as `createObject` does.
    func newEmbeddedObject(_ c: ClassInfo, _ values: [String: Value], lists: [String: [Value]]) throws -> ObjectKey {
        precondition(c.isEmbedded, "newEmbeddedObject of a class that is not embedded")
        return try createObject(c, values, lists: lists)
    }

    // MARK: Ownership

    /// Whether link property `p` owns its targets: they are of an embedded class.
    func ownsTarget(_ p: PropertyInfo) -> Bool { p.type == .link && isEmbeddedClass(p.targetClassID) }

    /// Whether class `id` is embedded, read in place (no copy of the class's description).
    func isEmbeddedClass(_ id: UInt32) -> Bool {
        guard let i = catalogue.classIndex(id: id) else { return false }
        return catalogue.classes[i].isEmbedded
    }

    /// The embedded objects owned through property `p` of class `originClass` (as class ID and key, read from
    /// the targets' backlink tree for `p`).
    func ownedObjects(via p: PropertyInfo, of originClass: UInt32) throws -> [(UInt32, UInt64)] {
        guard ownsTarget(p) else { return [] }
        let bl = try backlinkColumn(target: p.targetClassID, via: p, from: originClass)
        var out: [(UInt32, UInt64)] = []
        try forEachBacklink(p.targetClassID, bl) { t, _ in out.append((p.targetClassID, t)) }
        return out
    }

    /// The embedded objects the objects of class `c` own (not counting objects of `c` itself).
    func ownedObjects(of c: ClassInfo) throws -> [(UInt32, UInt64)] {
        var out: [(UInt32, UInt64)] = []
        for p in c.properties where p.type == .link && p.targetClassID != c.classID {
            out += try ownedObjects(via: p, of: c.classID)
        }
        return out
    }

    // MARK: Schema

    /// Refuses a catalogue in which links from embedded classes lead back to an embedded class they started
    /// from, as Realm's object store does ("Cycles containing embedded objects are not currently supported"):
    /// a walk from each embedded class along links to embedded classes.
    func checkEmbeddedCycles() throws {
        for start in catalogue.classes where start.isEmbedded {
            var queue: [(ClassInfo, String)] = [(start, start.name)]
            var seen = Set<UInt32>()
            var i = 0
            while i < queue.count {
                let (c, path) = queue[i]
                i += 1
                for p in c.properties where p.type == .link {
                    guard let t = catalogue.classInfo(id: p.targetClassID), t.isEmbedded, !seen.contains(t.classID) else { continue }
                    let next = path + "." + p.name
                    if t.classID == start.classID {
                        throw StorageError.invalidSchema("Cycles containing embedded objects are not currently supported: '\(next)'")
                    }
                    seen.insert(t.classID)
                    queue.append((t, next))
                }
            }
        }
    }
}

extension WriteTransaction {
    /// Makes a class embedded or top-level (a migration's change of a model's `EmbeddedObject` base class).
    ///
    /// Made embedded, every object must be owned by exactly one link, list element or dictionary value:
    /// objects that nothing links to are deleted (as Realm's migrations delete them), and an object linked
    /// from two places, from a set or from a mixed value is refused, naming it, before anything changes. The
    /// class may then have no primary key and must not close a cycle of embedded classes. Made top-level,
    /// its objects stay where they are and are no longer deleted with their owners.
    public func setEmbedded(_ className: String, _ embedded: Bool) throws {
        try checkActive()
        guard let ci = catalogue.classIndex(named: className) else { throw StorageError.noSuchClass(className) }
        let c = catalogue.classes[ci]
        guard c.isEmbedded != embedded else { return }
        guard embedded else {
            catalogue.classes[ci].flags &= ~1
            catalogueChanged = true
            plans.removeAll()
            return
        }
        if !meta.hasPageBoundChecksums { throw formatTooOld("embedded class '\(className)'") }
        if let pk = c.properties.first(where: \.isPrimaryKey) {
            throw StorageError.invalidSchema("embedded class '\(className)' cannot have a primary key ('\(pk.name)')")
        }
        for o in catalogue.classes {
            for p in o.properties where p.type == .link && p.isSet && p.targetClassID == c.classID {
                throw StorageError.invalidSchema("\(o.name).\(p.name): a set cannot hold objects of embedded class '\(className)'")
            }
        }
        // Every object's owners, checked before anything changes.
        let table = TableHandle(name: className, classID: c.classID)
        var orphans: [ObjectKey] = []
        for k in try keys(table) {
            var owners = 0
            for bl in c.properties where bl.type == .backlink {
                let n = try backlinkKeys(c.classID, k.rawValue, bl).count
                guard n > 0 else { continue }
                if let origin = catalogue.classInfo(id: bl.targetClassID), let op = origin.property(column: bl.originColumnID),
                   op.type == .mixed {
                    throw StorageError.invalidSchema("'\(className)' cannot become embedded: object \(k.rawValue) is linked from the mixed property \(origin.name).\(op.name)")
                }
                owners += n
            }
            if owners == 0 { orphans.append(k) }
            if owners > 1 {
                throw StorageError.invalidSchema("'\(className)' cannot become embedded: object \(k.rawValue) is linked from \(owners) places (an embedded object has one owner)")
            }
        }
        let saved = catalogue
        catalogue.classes[ci].flags |= 1
        do {
            try checkEmbeddedCycles()
        } catch {
            catalogue = saved
            throw error
        }
        catalogueChanged = true
        plans.removeAll()
        for k in orphans { try delete(className, k) }
    }
}
