import RealmStorage

/// The steps of a migration around the user's block, all in the write transaction `SchemaSync` opened.
extension Migration {
    /// Migrates the file from `oldSchemas` (its schema before this open) to `models`. Classes the file lacks
    /// have been created already, without their linkingObjects properties (added in `finish`).
    static func run(core: RealmCore, models: [ModelMapping], oldSchemas: [ClassSchema], diffs: [SchemaDifference],
                    oldVersion: UInt64) throws {
        let tx = core.transaction!
        let m = Migration(realm: Realm(core: core), oldSchemas: oldSchemas, models: models)
        try RealmError.wrap { try m.prepare(tx, diffs) }
        core.schemaChanged()
        for c in oldSchemas {
            m.oldInfos[c.name] = try RealmError.wrap { try m.oldInfo(c, tx) }
        }
        defer { core.migrationOldInfos = [:] }
        if let block = core.configuration.migrationBlock {
            block(m, oldVersion)
        }
        if let e = m.readError { try RealmError.wrap { throw e } }
        core.schemaChanged()
        try RealmError.wrap { try m.finish(tx) }
        core.schemaChanged()
    }

    func model(_ className: String) -> ClassSchema? { models.first { $0.className == className }?.schema }

    /// A class info that reads the old properties under their current names in the file.
    func oldInfo(_ c: ClassSchema, _ tx: WriteTransaction) throws -> ClassInfo {
        try ClassInfo(reader: tx, schema: c, model: nil, fileNames: c.properties.map { fileNames[c.name]?[$0.name] ?? $0.name })
    }

    /// Before the block: primary keys that change are dropped, changed properties move to temporary names,
    /// the models' new properties are added (with defaults, or the old values when only optionality changed).
    func prepare(_ tx: WriteTransaction, _ diffs: [SchemaDifference]) throws {
        for old in oldClassSchemas {
            guard let model = model(old.name), let oldKey = old.properties.first(where: \.isPrimaryKey) else { continue }
            let changed = diffs.contains { $0.className == old.name && $0.property == oldKey.name && $0.kind == .propertyChanged }
            if changed || model.properties.first(where: \.isPrimaryKey)?.name != oldKey.name {
                try tx.setPrimaryKey(old.name, nil)
            }
        }
        var serial = 0
        for d in diffs where d.kind == .propertyChanged {
            var temp: String
            repeat {
                temp = "__migrating_\(serial)"
                serial += 1
            } while tx.classSchema(d.className)?.property(named: temp) != nil
            try tx.renameProperty(d.className, from: d.property!, to: temp)
            fileNames[d.className, default: [:]][d.property!] = temp
            pendingRemovals.append((d.className, temp))
        }
        for d in diffs where d.kind == .propertyRemoved { pendingRemovals.append((d.className, d.property!)) }
        // linkingObjects come after the block: they hold no data and may name links the block renames.
        for d in diffs where d.kind == .propertyAdded || d.kind == .propertyChanged {
            guard var p = model(d.className)?.property(named: d.property!), p.type != .linkingObjects else { continue }
            p.isPrimaryKey = false
            try tx.addProperty(d.className, p)
        }
        for d in diffs where d.kind == .propertyChanged {
            guard let p = model(d.className)?.property(named: d.property!), p.type != .linkingObjects,
                  let old = oldClassSchemas.first(where: { $0.name == d.className })?.property(named: d.property!),
                  old.type == p.type, old.isList == p.isList, old.isSet == p.isSet, old.isDictionary == p.isDictionary,
                  old.objectClassName == p.objectClassName else { continue }
            try copyValues(tx, d.className, from: fileNames[d.className]![d.property!]!, to: p)
        }
    }

    /// Copies a property's values into `to` (same type, other optionality): nulls become the type's default.
    func copyValues(_ tx: WriteTransaction, _ className: String, from: String, to p: PropertySchema) throws {
        let t = try tx.table(className)
        let source = try tx.property(t, from)
        let target = try tx.property(t, p.name)
        func fit(_ v: Value) -> Value { v.isNull && !p.isOptional ? p.type.defaultValue : v }
        for k in try tx.keys(t) {
            if p.isDictionary {
                var d = ValueDictionary()
                for (key, v) in try tx.dictionary(k, source) { d[key] = fit(v) }
                try tx.setDictionary(k, target, d)
            } else if p.isSet {
                try tx.setAssign(k, target, try tx.list(k, source).map(fit))
            } else if p.isList {
                try tx.setList(k, target, try tx.list(k, source).map(fit))
            } else {
                try tx.set(k, target, fit(try tx.value(k, source)))
            }
        }
    }

    /// After the block: old columns go, linkingObjects and primary keys are set, indexes follow the models,
    /// and anything still different from the models is an error naming it.
    func finish(_ tx: WriteTransaction) throws {
        // linkingObjects first: the engine keeps a link while a linkingObjects property names it.
        let doomed = Set(pendingRemovals.map { "\($0.0).\($0.1)" })
        for c in tx.schema {
            for p in c.properties where p.type == .linkingObjects
                && (doomed.contains("\(c.name).\(p.name)") || doomed.contains("\(p.objectClassName ?? "").\(p.originProperty ?? "")")) {
                try tx.removeProperty(c.name, p.name)
            }
        }
        for (c, name) in pendingRemovals where tx.classSchema(c)?.property(named: name) != nil {
            try tx.removeProperty(c, name)
        }
        for m in models {
            guard let file = tx.classSchema(m.className) else { continue }
            for p in m.schema.properties where p.type == .linkingObjects && file.property(named: p.name) == nil {
                try tx.addProperty(m.className, p)
            }
        }
        // A class that stops being embedded may take a primary key; one that becomes embedded must lose its key
        // first (and its orphans are deleted then).
        for m in models where !m.schema.isEmbedded && tx.classSchema(m.className)?.isEmbedded == true {
            try tx.setEmbedded(m.className, false)
        }
        for m in models {
            let key = m.schema.properties.first(where: \.isPrimaryKey)?.name
            if tx.classSchema(m.className)?.properties.first(where: \.isPrimaryKey)?.name != key {
                try tx.setPrimaryKey(m.className, key)
            }
        }
        for m in models where m.schema.isEmbedded && tx.classSchema(m.className)?.isEmbedded == false {
            try tx.setEmbedded(m.className, true)
        }
        var remaining: [SchemaDifference] = []
        for m in models {
            if let file = tx.classSchema(m.className) { remaining += SchemaSync.differences(model: m.schema, file: file) }
        }
        try SchemaSync.applyIndexChanges(remaining, tx)
        let left = remaining.filter(\.needsMigration)
        if !left.isEmpty {
            throw RealmError.schemaMismatch(path: realm.rlm.configuration.displayPath,
                                            differences: ["after the migration block the file still differs from the models"]
                                                + left.map(\.description))
        }
    }

    func rename(_ typeName: String, from oldName: String, to newName: String) throws {
        let tx = realm.rlm.transaction!
        guard let c = tx.classSchema(typeName) else { throw RealmError.noSuchClass(typeName) }
        let fileOld = fileNames[typeName]?[oldName] ?? oldName
        guard oldSchema[typeName]?[oldName] != nil, let old = c.property(named: fileOld) else {
            throw RealmError.noSuchProperty(className: typeName, property: oldName)
        }
        guard old.type != .linkingObjects else {
            throw RealmError.invalidValue(className: typeName, property: oldName, reason: "linkingObjects properties cannot be renamed; declare the new one in the model")
        }
        if oldSchema[typeName]?[newName] != nil && fileNames[typeName]?[newName] == nil {
            throw RealmError.invalidValue(className: typeName, property: newName,
                                          reason: "cannot rename '\(oldName)' to '\(newName)': the file already has '\(newName)'")
        }
        if let added = c.property(named: newName) {
            guard added.type == old.type, added.isList == old.isList, added.isSet == old.isSet, added.isDictionary == old.isDictionary,
                  added.objectClassName == old.objectClassName else {
                throw RealmError.invalidValue(className: typeName, property: newName,
                    reason: "cannot rename '\(oldName)' (\(old.typeDescription)) to '\(newName)' (\(added.typeDescription)): the types differ")
            }
            if added.isOptional != old.isOptional && old.type != .link && old.type != .mixed {
                // The models' optionality: copy the values over; the old column goes after the block.
                try copyValues(tx, typeName, from: fileOld, to: added)
                if !pendingRemovals.contains(where: { $0 == (typeName, fileOld) }) { pendingRemovals.append((typeName, fileOld)) }
                realm.rlm.schemaChanged()
                return
            }
            try tx.removeProperty(typeName, newName)
        }
        try tx.renameProperty(typeName, from: fileOld, to: newName)
        pendingRemovals.removeAll { $0 == (typeName, fileOld) }
        fileNames[typeName, default: [:]][oldName] = newName
        realm.rlm.schemaChanged()
        if let info = oldInfos[typeName] { oldInfos[typeName] = try oldInfo(info.schema, tx) }
    }
}
