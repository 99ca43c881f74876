extension Snapshot {
    /// The owner of an object of an embedded class: the object whose link or list element holds it, with its
    /// class and property (read from the object's backlinks). Nil when the class is not embedded, or when the
    /// object has no owner (a damaged file: `verify` reports it). Were it to have several (equally damaged),
    /// the first found, in the order of the class's backlink properties and then of keys.
    public func owner(of key: ObjectKey, in table: TableHandle) throws -> (className: String, key: ObjectKey, property: String)? {
        let c = try classInfo(table)
        guard c.isEmbedded else { return nil }
        guard try locate(c.classID, key.rawValue) != nil else { throw StorageError.noSuchObject(className: c.name, key: key.rawValue) }
        for bl in c.properties where bl.type == .backlink {
            guard let origin = catalogue.classInfo(id: bl.targetClassID), let op = origin.property(column: bl.originColumnID) else { continue }
            var origins: [UInt64] = []
            try appendBacklinks(of: key.rawValue, c.classID, bl, to: &origins)
            if let o = origins.first { return (origin.name, ObjectKey(o), op.name) }
        }
        return nil
    }
}
