extension WriteTransaction {
    func validateName(_ name: String, kind: String, limit: Int) throws {
        if name.isEmpty { throw StorageError.invalidName(kind: kind, name: name, reason: "it is empty") }
        if name.utf8.count > limit {
            throw StorageError.invalidName(kind: kind, name: name, reason: "it is \(name.utf8.count) bytes long; the limit is \(limit) bytes")
        }
        if name.hasPrefix("@") || name.contains("\0") {
            throw StorageError.invalidName(kind: kind, name: name, reason: "it may not start with '@' or contain NUL")
        }
    }

    /// The error for a structure of format 7 in a file still of format 5 (shared with another process when it
    /// was opened, so not yet upgraded): a build reading format 5 would misread it.
    func formatTooOld(_ what: String) -> StorageError {
        .invalidSchema("\(what) needs file format 7; this file is format \(meta.format) (another process had it open when it was opened): run `realm-browser upgrade \(database.path)` or reopen it when no other process has it open")
    }

    public func setSchemaVersion(_ version: UInt64) throws {
        try checkActive()
        catalogue.schemaVersion = version
        catalogueChanged = true
        plans.removeAll()
    }

    /// Creates several classes at once (they may link to each other).
    public func createClasses(_ schemas: [ClassSchema]) throws {
        try checkActive()
        var seen = Set<String>()
        for s in schemas {
            try validateName(s.name, kind: "class", limit: SchemaLimits.maxClassNameBytes)
            if catalogue.classInfo(named: s.name) != nil || !seen.insert(s.name).inserted { throw StorageError.classExists(s.name) }
            if s.properties.filter(\.isPrimaryKey).count > 1 {
                throw StorageError.invalidSchema("class '\(s.name)' declares more than one primary key")
            }
            if s.isEmbedded && !meta.hasPageBoundChecksums { throw formatTooOld("embedded class '\(s.name)'") }
            if s.isEmbedded, let pk = s.primaryKey {
                throw StorageError.invalidSchema("embedded class '\(s.name)' cannot have a primary key ('\(pk)')")
            }
        }
        let saved = catalogue
        do {
            for s in schemas {
                catalogue.classes.append(ClassInfo(classID: catalogue.nextClassID, name: s.name, nextColumnID: 1, nextObjectKey: 0,
                                                   objectCount: 0, tableRoot: 0, primaryKeyColumnID: 0, properties: [],
                                                   flags: s.isEmbedded ? 1 : 0))
                catalogue.nextClassID += 1
            }
            // Plain properties and links first, then linkingObjects (which refer to links).
            for s in schemas {
                for p in s.properties where p.type != .linkingObjects {
                    try appendProperty(s.name, p, keyIsValue: p.isPrimaryKey && p.type == .int && !p.isOptional && !p.isCollection)
                }
            }
            for s in schemas {
                for p in s.properties where p.type == .linkingObjects { try appendProperty(s.name, p) }
            }
            try checkEmbeddedCycles()
        } catch {
            catalogue = saved
            throw error
        }
        catalogueChanged = true
        plans.removeAll()
    }

    public func createClass(_ schema: ClassSchema) throws { try createClasses([schema]) }

    /// Adds a property to an existing class. Existing objects read the default (null when optional).
    public func addProperty(_ className: String, _ p: PropertySchema) throws {
        try checkActive()
        guard let c = catalogue.classInfo(named: className) else { throw StorageError.noSuchClass(className) }
        if p.isPrimaryKey, c.isEmbedded {
            throw StorageError.invalidSchema("embedded class '\(className)' cannot have a primary key ('\(p.name)')")
        }
        if p.isPrimaryKey, c.primaryKeyColumnID != 0 {
            throw StorageError.invalidSchema("class '\(className)' already has a primary key")
        }
        if p.isPrimaryKey, c.objectCount > 1 {
            throw StorageError.invalidSchema("cannot add primary key '\(p.name)' to '\(className)': its \(c.objectCount) objects would share the default value")
        }
        let saved = catalogue
        do {
            try appendProperty(className, p)
            try checkEmbeddedCycles()
        } catch {
            catalogue = saved
            throw error
        }
        catalogueChanged = true
        plans.removeAll()
        let info = catalogue.classInfo(named: className)!.property(named: p.name)!
        if info.isIndexed && c.objectCount > 0 {
            for k in try keys(TableHandle(name: className, classID: c.classID)) {
                try addToIndex(c.classID, info, info.defaultValue, k.rawValue)
            }
        }
    }

    private func appendProperty(_ className: String, _ s: PropertySchema, keyIsValue: Bool = false) throws {
        guard let ci = catalogue.classIndex(named: className) else { throw StorageError.noSuchClass(className) }
        let c = catalogue.classes[ci]
        try validateName(s.name, kind: "property", limit: SchemaLimits.maxPropertyNameBytes)
        if c.property(named: s.name) != nil { throw StorageError.propertyExists(className: className, property: s.name) }
        let where_ = "\(className).\(s.name)"
        guard s.type != .backlink else { throw StorageError.invalidSchema("\(where_): backlink columns are managed by the engine") }
        var flags: PropertyInfo.Flags = []
        if s.isOptional { flags.insert(.optional) }
        let kinds = [s.isList, s.isSet, s.isDictionary].filter { $0 }.count
        if kinds > 1 || (s.type == .linkingObjects && (s.isSet || s.isDictionary)) {
            throw StorageError.invalidSchema("\(where_): a property is at most one of list, set and dictionary")
        }
        if (s.isSet || s.isDictionary) && !meta.hasPageBoundChecksums { throw formatTooOld(where_) }
        if s.isList { flags.insert(.list) }
        if s.isSet { flags.insert(.set) }
        if s.isDictionary { flags.insert(.dictionary) }
        let kind = s.isList ? " list" : s.isSet ? " set" : s.isDictionary ? " dictionary" : ""
        if s.isIndexed {
            guard PropertyInfo.mayBeIndexed(s.type, kind: kind) else {
                throw StorageError.invalidSchema("\(where_): properties of type \(s.type)\(kind) cannot be indexed")
            }
            if s.type == .mixed && !meta.hasPageBoundChecksums { throw formatTooOld(where_) }
            flags.insert(.indexed)
        }
        if s.isPrimaryKey {
            guard s.type.canBePrimaryKey, kind.isEmpty else {
                throw StorageError.invalidSchema("\(where_): a primary key must be int, string, objectId or uuid, not \(s.type)")
            }
            flags.insert(.primaryKey)
            if keyIsValue { flags.insert(.keyIsValue) }
        }
        var target: UInt32 = 0
        var origin: UInt32 = 0
        switch s.type {
        case .link:
            guard let t = s.objectClassName, let tc = catalogue.classInfo(named: t) else {
                throw StorageError.invalidSchema("\(where_): link target class '\(s.objectClassName ?? "")' does not exist")
            }
            target = tc.classID
            if s.isSet && tc.isEmbedded {
                throw StorageError.invalidSchema("\(where_): a set cannot hold objects of embedded class '\(tc.name)'")
            }
            // A to-one link and a dictionary's link values may be null; list and set elements may not.
            if !s.isList && !s.isSet { flags.insert(.optional) }
        case .linkingObjects:
            guard let o = s.objectClassName, let oc = catalogue.classInfo(named: o) else {
                throw StorageError.invalidSchema("\(where_): linkingObjects origin class '\(s.objectClassName ?? "")' does not exist")
            }
            guard let op = oc.property(named: s.originProperty ?? ""), op.type == .link, op.targetClassID == c.classID else {
                throw StorageError.invalidSchema("\(where_): '\(o).\(s.originProperty ?? "")' is not a link to '\(className)'")
            }
            target = oc.classID
            origin = op.columnID
            flags.insert(.list)
        default:
            if s.objectClassName != nil { throw StorageError.invalidSchema("\(where_): only links name a class") }
        }
        let col = catalogue.classes[ci].nextColumnID
        catalogue.classes[ci].nextColumnID += 1
        catalogue.classes[ci].properties.append(PropertyInfo(columnID: col, name: s.name, type: s.type, flags: flags,
                                                             targetClassID: target, originColumnID: origin, indexRoot: 0))
        if s.isPrimaryKey { catalogue.classes[ci].primaryKeyColumnID = col }
        if s.type == .link {
            // The hidden backlink property in the target class (its links go in a tree of their own).
            let ti = catalogue.classIndex(id: target)!
            let bcol = catalogue.classes[ti].nextColumnID
            catalogue.classes[ti].nextColumnID += 1
            catalogue.classes[ti].properties.append(PropertyInfo(
                columnID: bcol, name: "@links.\(className).\(s.name)", type: .backlink, flags: [.hidden],
                targetClassID: c.classID, originColumnID: col, indexRoot: 0))
        }
    }

    /// Removes a property and everything stored for it (its index, lists and the backlinks it caused).
    public func removeProperty(_ className: String, _ name: String) throws {
        try checkActive()
        guard let c = catalogue.classInfo(named: className) else { throw StorageError.noSuchClass(className) }
        let p = try info(c, name)
        for other in catalogue.classes {
            for lp in other.properties where lp.type == .linkingObjects && lp.targetClassID == c.classID && lp.originColumnID == p.columnID {
                throw StorageError.invalidSchema("cannot remove \(className).\(name): \(other.name).\(lp.name) lists its origins")
            }
        }
        // Pending list changes go; the backlinks the property made go with its backlink tree, whole.
        if p.isCollection && p.type != .linkingObjects {
            for slot in Array(dirtyLists.keys) where slot.classID == c.classID && slot.columnID == p.columnID {
                dirtyLists[slot] = nil
            }
            for slot in Array(dirtyDictionaries.keys) where slot.classID == c.classID && slot.columnID == p.columnID {
                dirtyDictionaries[slot] = nil
            }
        }
        // The embedded objects the property owns go with it (read before its backlink tree is dropped).
        let owned = try ownedObjects(via: p, of: c.classID)
        if p.hasIndexTree { try dropIndex(c.classID, p) }
        if p.type == .link { try dropBacklinkColumn(target: p.targetClassID, origin: c.classID, column: p.columnID) }
        if p.type == .mixed {
            for (tc, _) in mixedBacklinkColumns(via: p, from: c.classID) {
                try dropBacklinkColumn(target: tc, origin: c.classID, column: p.columnID)
            }
        }
        if p.hasColumn { try dropDirtyColumn(classID: c.classID, columnID: p.columnID) }
        let ci = catalogue.classIndex(id: c.classID)!
        catalogue.classes[ci].properties.removeAll { $0.columnID == p.columnID }
        if p.isPrimaryKey { catalogue.classes[ci].primaryKeyColumnID = 0 }
        catalogueChanged = true
        plans.removeAll()
        for (classID, key) in owned { try deleteObject(classID, key) }
    }

    /// Removes a class and all its objects. Refused while a link property of another class links to it; typed
    /// links to its objects in mixed values become null (or leave their lists) as when the objects are deleted.
    public func removeClass(_ name: String) throws {
        try checkActive()
        guard let c = catalogue.classInfo(named: name) else { throw StorageError.noSuchClass(name) }
        for other in catalogue.classes where other.classID != c.classID {
            for p in other.properties where (p.type == .link || p.type == .linkingObjects) && p.targetClassID == c.classID {
                throw StorageError.invalidSchema("cannot remove class '\(name)': \(other.name).\(p.name) refers to it")
            }
        }
        let table = TableHandle(name: name, classID: c.classID)
        for k in try keys(table) { try deleteObject(c.classID, k.rawValue) }
        for p in c.properties where p.hasIndexTree || p.type == .backlink { try dropIndex(c.classID, p) }
        for p in c.properties where p.type == .link && p.targetClassID != c.classID {
            try dropBacklinkColumn(target: p.targetClassID, origin: c.classID, column: p.columnID)
        }
        // The backlink properties the typed links of its mixed properties made in other classes (its objects,
        // deleted above, took their entries; typed links into it from other classes became null).
        for p in c.properties where p.type == .mixed {
            for (tc, _) in mixedBacklinkColumns(via: p, from: c.classID) where tc != c.classID {
                try dropBacklinkColumn(target: tc, origin: c.classID, column: p.columnID)
            }
        }
        try freeTree(root(of: c.classID), c)
        roots[c.classID] = nil
        catalogue.classes.removeAll { $0.classID == c.classID }
        catalogueChanged = true
        plans.removeAll()
    }

    func dropIndex(_ classID: UInt32, _ p: PropertyInfo) throws {
        let slot = SlotKey(classID: classID, key: 0, columnID: p.columnID)
        pendingIndexEntries[slot] = nil
        var tree = indexes[slot] ?? indexTree(root: p.indexRoot)
        // Commit whatever is dirty so every node is a committed one, then free them all.
        let root = try tree.commit(sink: self)
        if root != 0 {
            var refs: [UInt64] = []
            try EntryTree(root: root).collectRefs(source: self, into: &refs)
            for r in refs {
                if written.contains(where: { $0.page == r }) { try discard(r) } else { try free(r) }
            }
        }
        indexes[slot] = nil
    }

    private func dropBacklinkColumn(target: UInt32, origin: UInt32, column: UInt32) throws {
        guard let ti = catalogue.classIndex(id: target),
              let bl = catalogue.classes[ti].properties.first(where: { $0.type == .backlink && $0.targetClassID == origin && $0.originColumnID == column })
        else { return }
        try dropBacklinkTree(target, bl)
        catalogue.classes[ti].properties.removeAll { $0.columnID == bl.columnID }
    }

    /// A removed column leaves the clusters of `classID` this transaction already holds (a cluster decoded
    /// later never takes it: `DirtyLeaf.decode` frees its blobs). Without this, the out-of-line values of a
    /// cluster made dirty before the removal stayed allocated and unreachable (found by the random model soak).
    private func dropDirtyColumn(classID: UInt32, columnID: UInt32) throws {
        func visit(_ child: TreeChild) throws {
            switch child {
            case .clean: return
            case .leaf(let l): try l.dropColumn(columnID)
            case .inner(let n): for c in n.children { try visit(c) }
            }
        }
        if let root = roots[classID] { try visit(root) }
    }
}
