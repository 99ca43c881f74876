/// Schema edits that keep the stored data: renaming a property and adding or removing its index.
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
            guard p.type.isIndexable, !p.isList else {
                throw StorageError.invalidSchema("\(className).\(name): properties of type \(p.type)\(p.isList ? " list" : "") cannot be indexed")
            }
            catalogue.classes[ci].properties[pi].flags.insert(.indexed)
            catalogue.classes[ci].properties[pi].indexRoot = 0
            catalogueChanged = true
            plans.removeAll()
            let info = catalogue.classes[ci].properties[pi]
            let table = TableHandle(name: className, classID: c.classID)
            let handle = try property(table, name)
            for k in try keys(table) {
                try addToIndex(c.classID, info, try value(k, handle), k.rawValue)
            }
        } else {
            try dropIndex(c.classID, p)
            catalogue.classes[ci].properties[pi].flags.remove(.indexed)
            catalogue.classes[ci].properties[pi].indexRoot = 0
            catalogueChanged = true
            plans.removeAll()
        }
    }
}
