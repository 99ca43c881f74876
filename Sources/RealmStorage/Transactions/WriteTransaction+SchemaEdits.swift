/// Schema edits that keep the stored data: renaming a property, adding or removing its index, and choosing
/// the primary key.
extension WriteTransaction {
    /// Renames a property; its values, index, links and backlinks stay as they are.
    public func renameProperty(_ className: String, from oldName: String, to newName: String) throws {
        try checkActive()
        guard let ci = catalogue.classIndex(named: className) else { throw StorageError.noSuchClass(className) }
        let c = catalogue.classes[ci]
        let p = try info(c, oldName)
        try validateName(newName, kind: "property", limit: SchemaLimits.maxPropertyNameBytes)
        if c.property(named: newName) != nil { throw StorageError.propertyExists(className: className, property: newName) }
        guard let pi = catalogue.classes[ci].properties.firstIndex(where: { $0.columnID == p.columnID }) else { return }
        catalogue.classes[ci].properties[pi].name = newName
        if p.type == .link, let ti = catalogue.classIndex(id: p.targetClassID),
           let bi = catalogue.classes[ti].properties.firstIndex(where: {
               $0.type == .backlink && $0.targetClassID == c.classID && $0.originColumnID == p.columnID
           }) {
            catalogue.classes[ti].properties[bi].name = "@links.\(className).\(newName)"
        }
        if p.type == .mixed {
            // The backlink properties its typed links made, in whatever classes they reach.
            for ti in catalogue.classes.indices {
                for bi in catalogue.classes[ti].properties.indices where catalogue.classes[ti].properties[bi].type == .backlink
                    && catalogue.classes[ti].properties[bi].targetClassID == c.classID
                    && catalogue.classes[ti].properties[bi].originColumnID == p.columnID {
                    catalogue.classes[ti].properties[bi].name = "@links.\(className).\(newName)"
                }
            }
        }
        catalogueChanged = true
        plans.removeAll()
    }

    /// Adds or removes the index of a property, building it from the stored values when added.
    public func setIndexed(_ className: String, _ name: String, _ indexed: Bool) throws {
        try checkActive()
        guard let ci = catalogue.classIndex(named: className) else { throw StorageError.noSuchClass(className) }
        let c = catalogue.classes[ci]
        let p = try info(c, name)
        guard !p.isPrimaryKey else {
            throw StorageError.invalidSchema("\(className).\(name) is the primary key; its index cannot be changed")
        }
        guard p.flags.contains(.indexed) != indexed else { return }
        guard let pi = catalogue.classes[ci].properties.firstIndex(where: { $0.columnID == p.columnID }) else { return }
        if indexed {
            let kind = p.isList ? " list" : p.isSet ? " set" : p.isDictionary ? " dictionary" : ""
            guard PropertyInfo.mayBeIndexed(p.type, kind: kind) else {
                throw StorageError.invalidSchema("\(className).\(name): properties of type \(p.type)\(kind) cannot be indexed")
            }
            if p.type == .mixed && !meta.hasPageBoundChecksums { throw formatTooOld("\(className).\(name)") }
            catalogue.classes[ci].properties[pi].flags.insert(.indexed)
            catalogue.classes[ci].properties[pi].indexRoot = 0
            catalogueChanged = true
            plans.removeAll()
            let info = catalogue.classes[ci].properties[pi]
            let table = TableHandle(name: className, classID: c.classID)
            let handle = try property(table, name)
            if info.isElementIndexed {
                for k in try keys(table) {
                    for e in try list(k, handle) { try addToIndex(c.classID, info, e, k.rawValue) }
                }
            } else {
                for k in try keys(table) {
                    try addToIndex(c.classID, info, try value(k, handle), k.rawValue)
                }
            }
        } else {
            try dropIndex(c.classID, p)
            catalogue.classes[ci].properties[pi].flags.remove(.indexed)
            catalogue.classes[ci].properties[pi].indexRoot = 0
            catalogueChanged = true
            plans.removeAll()
        }
    }

    /// Makes `name` the primary key of a class (nil: the class has none). The values must be unique (one null
    /// at most); duplicates are refused with `duplicatePrimaryKey` and nothing changes. The new key always has
    /// an index: objects keep their keys, so a required int key set here is not the object key (DECISIONS 13).
    /// The old key becomes a plain property; its index is dropped unless it was also marked indexed.
    public func setPrimaryKey(_ className: String, _ name: String?) throws {
        try checkActive()
        guard let ci = catalogue.classIndex(named: className) else { throw StorageError.noSuchClass(className) }
        let c = catalogue.classes[ci]
        let old = c.properties.first(where: \.isPrimaryKey)
        if old?.name == name { return }
        var new: PropertyInfo?
        if let name, c.isEmbedded {
            throw StorageError.invalidSchema("embedded class '\(className)' cannot have a primary key ('\(name)')")
        }
        if let name {
            let p = try info(c, name)
            guard p.type.canBePrimaryKey, !p.isCollection else {
                throw StorageError.invalidSchema("\(className).\(name): a primary key must be int, string, objectId or uuid, not \(p.type)\(p.isList ? " list" : "")")
            }
            new = p
        }
        let table = TableHandle(name: className, classID: c.classID)
        if let new {
            // Refuse duplicates before changing anything. Strings compare by their UTF-8 bytes, as stored.
            let handle = try property(table, new.name)
            var seen = Set<[UInt8]>()
            for k in try keys(table) {
                var bytes: [UInt8] = []
                switch try value(k, handle) {
                case .string(let s): bytes = [0x05] + Array(s.utf8)
                case let v: _ = IndexKey.encode(v, into: &bytes)
                }
                if !seen.insert(bytes).inserted { throw StorageError.duplicatePrimaryKey(className: className, property: new.name) }
            }
        }
        if let old, let oi = c.properties.firstIndex(where: { $0.columnID == old.columnID }) {
            if old.keyIsValue {
                // The objects keep their keys (the key's value plus 2^62); new objects are numbered above them.
                var last: UInt64?
                try forEachKey(table) { k in last = k.rawValue; return true }
                if let last {
                    guard last < UInt64.max else {
                        throw StorageError.invalidSchema("\(className).\(old.name): the primary key cannot be removed (an object key is at the limit)")
                    }
                    catalogue.classes[ci].nextObjectKey = max(c.nextObjectKey, last + 1)
                }
                catalogue.classes[ci].properties[oi].flags.subtract([.primaryKey, .keyIsValue])
            } else {
                if !old.flags.contains(.indexed) { try dropIndex(c.classID, old) }
                catalogue.classes[ci].properties[oi].flags.remove(.primaryKey)
                if !old.flags.contains(.indexed) { catalogue.classes[ci].properties[oi].indexRoot = 0 }
            }
            catalogue.classes[ci].primaryKeyColumnID = 0
        }
        catalogueChanged = true
        plans.removeAll()
        guard let new, let pi = catalogue.classes[ci].properties.firstIndex(where: { $0.columnID == new.columnID }) else { return }
        catalogue.classes[ci].properties[pi].flags.insert(.primaryKey)
        catalogue.classes[ci].properties[pi].flags.remove(.indexed)  // a key is indexed as a key
        catalogue.classes[ci].primaryKeyColumnID = new.columnID
        if !new.isIndexed {
            let info = catalogue.classes[ci].properties[pi]
            let handle = try property(table, new.name)
            for k in try keys(table) { try addToIndex(c.classID, info, try value(k, handle), k.rawValue) }
        }
    }
}
