import Foundation
import RealmStorage

/// One way the models differ from the file.
struct SchemaDifference: CustomStringConvertible {
    enum Kind {
        case classAdded, propertyAdded, propertyRemoved, propertyChanged, primaryKeyChanged, indexAdded, indexRemoved
        /// The class became embedded, or stopped being embedded.
        case embeddedChanged
    }
    let kind: Kind
    let className: String
    let property: String?
    let detail: String

    /// Additive changes (new classes, index changes) need no schema version bump; the rest do.
    var needsMigration: Bool {
        switch kind {
        case .classAdded, .indexAdded, .indexRemoved: return false
        default: return true
        }
    }

    var description: String { detail }
}

/// Brings the file's schema in line with the models when a Realm opens: creates missing classes, adjusts
/// indexes, and migrates (with the configuration's migration block) when the schema version was raised.
struct SchemaSync {
    let core: RealmCore

    static func differences(model: ClassSchema, file: ClassSchema) -> [SchemaDifference] {
        var out: [SchemaDifference] = []
        let c = model.name
        if model.isEmbedded != file.isEmbedded {
            out.append(SchemaDifference(kind: .embeddedChanged, className: c, property: nil,
                                        detail: model.isEmbedded ? "class '\(c)' has become embedded" : "class '\(c)' is no longer embedded"))
        }
        for p in model.properties {
            guard let f = file.property(named: p.name) else {
                out.append(SchemaDifference(kind: .propertyAdded, className: c, property: p.name,
                                            detail: "property '\(c).\(p.name)' (\(p.typeDescription)) has been added"))
                continue
            }
            if p.type != f.type || p.isList != f.isList || p.isSet != f.isSet || p.isDictionary != f.isDictionary
                || p.objectClassName != f.objectClassName
                || (p.isOptional != f.isOptional && p.type != .link && p.type != .mixed && p.type != .linkingObjects)
                || p.originProperty != f.originProperty {
                out.append(SchemaDifference(kind: .propertyChanged, className: c, property: p.name,
                                            detail: "property '\(c).\(p.name)' has changed from \(f.typeDescription) to \(p.typeDescription)"))
            } else if p.isPrimaryKey != f.isPrimaryKey {
                out.append(SchemaDifference(kind: .primaryKeyChanged, className: c, property: p.name,
                                            detail: p.isPrimaryKey ? "primary key '\(c).\(p.name)' has been added"
                                                                   : "primary key '\(c).\(p.name)' has been removed"))
            } else if !p.isPrimaryKey && p.isIndexed != f.isIndexed {
                out.append(SchemaDifference(kind: p.isIndexed ? .indexAdded : .indexRemoved, className: c, property: p.name,
                                            detail: "index on '\(c).\(p.name)' has been \(p.isIndexed ? "added" : "removed")"))
            }
        }
        for f in file.properties where model.property(named: f.name) == nil {
            out.append(SchemaDifference(kind: .propertyRemoved, className: c, property: f.name,
                                        detail: "property '\(c).\(f.name)' (\(f.typeDescription)) has been removed"))
        }
        return out
    }

    /// What opening needs to do, found from one version of the file.
    struct Plan {
        enum Action { case nothing, additive, migrate, deleteAndRecreate }
        var action: Action = .nothing
        var fileVersion: UInt64 = 0
        var fileIsEmpty = true
        var missing: [ModelMapping] = []
        var diffs: [SchemaDifference] = []
    }

    /// Compares the models with the file as `reader` sees it; throws for a lower schema version, for changes
    /// that need a migration without a higher version, and for anything a read-only Realm would have to write.
    func plan(_ reader: Snapshot, _ models: [ModelMapping]) throws -> Plan {
        let config = core.configuration
        var plan = Plan(fileVersion: reader.schemaVersion, fileIsEmpty: reader.schema.isEmpty)
        for m in models {
            if let f = reader.classSchema(m.className) {
                plan.diffs += SchemaSync.differences(model: m.schema, file: f)
            } else {
                plan.missing.append(m)
            }
        }
        let needsMigration = plan.diffs.contains(where: \.needsMigration)
        if !plan.fileIsEmpty && config.schemaVersion < plan.fileVersion {
            throw RealmError.schemaVersionDecreased(path: config.displayPath, fileVersion: plan.fileVersion, configured: config.schemaVersion)
        }
        let bump = config.schemaVersion > plan.fileVersion
        if config.readOnly {
            if needsMigration || (bump && !plan.fileIsEmpty) {
                throw RealmError.schemaMismatch(path: config.displayPath,
                                                differences: ["the file needs a migration, which a read-only Realm cannot do"]
                                                    + plan.diffs.filter(\.needsMigration).map(\.description))
            }
            return plan  // missing classes read as empty; index differences do not matter for reading
        }
        if needsMigration && config.deleteRealmIfMigrationNeeded {
            // As in realm-swift: whenever a migration would be needed, with or without a higher version.
            plan.action = .deleteAndRecreate
        } else if needsMigration && !bump {
            throw RealmError.schemaMismatch(path: config.displayPath, differences: plan.diffs.filter(\.needsMigration).map(\.description))
        } else if bump && !plan.fileIsEmpty {
            plan.action = .migrate
        } else if bump || !plan.missing.isEmpty || !plan.diffs.isEmpty {
            plan.action = .additive
        }
        return plan
    }

    func run() throws {
        let config = core.configuration
        let types = config.objectTypes ?? ModelMapping.allMapped.map(\.type)
        let models = try ModelMapping.closure(of: types)
        for m in models { core.models[m.className] = m }
        guard try plan(core.reader, models).action != .nothing else { return }
        let realm = Realm(core: core)
        try realm.tryBeginWrite()
        do {
            let tx = core.transaction!
            // Planned again on the newest version: another thread or process may have migrated meanwhile.
            let plan = try self.plan(tx, models)
            switch plan.action {
            case .nothing:
                realm.cancelWrite()
                return
            case .deleteAndRecreate:
                try deleteAndRecreate(models, tx)
            case .migrate:
                do {
                    let oldSchemas = tx.schema
                    // New classes without their linkingObjects, which may name links the migration adds.
                    try RealmError.wrap {
                        if !plan.missing.isEmpty {
                            try tx.createClasses(plan.missing.map { m in
                                ClassSchema(name: m.className, properties: m.schema.properties.filter { $0.type != .linkingObjects })
                            })
                        }
                    }
                    try Migration.run(core: core, models: models, oldSchemas: oldSchemas, diffs: plan.diffs, oldVersion: plan.fileVersion)
                    try RealmError.wrap { try tx.setSchemaVersion(config.schemaVersion) }
                } catch let e as RealmError {
                    throw RealmError.migrationFailed(path: config.displayPath, fromVersion: plan.fileVersion,
                                                     toVersion: config.schemaVersion, underlying: e)
                }
            case .additive:
                try RealmError.wrap {
                    if !plan.missing.isEmpty { try tx.createClasses(plan.missing.map(\.schema)) }
                    try SchemaSync.applyIndexChanges(plan.diffs, tx)
                    try tx.setSchemaVersion(config.schemaVersion)
                }
            }
            core.schemaChanged()
            try realm.commitWrite()
        } catch {
            if core.transaction != nil { realm.cancelWrite() }
            core.schemaChanged()
            throw error
        }
    }

    static func applyIndexChanges(_ diffs: [SchemaDifference], _ tx: WriteTransaction) throws {
        try RealmError.wrap {
            for d in diffs {
                switch d.kind {
                case .indexAdded: try tx.setIndexed(d.className, d.property!, true)
                case .indexRemoved: try tx.setIndexed(d.className, d.property!, false)
                default: break
                }
            }
        }
    }

    /// `deleteRealmIfMigrationNeeded`: every class is dropped and the models' classes created afresh, in the
    /// open write transaction (other readers keep their snapshots; the space is reused or compacted later).
    private func deleteAndRecreate(_ models: [ModelMapping], _ tx: WriteTransaction) throws {
        try RealmError.wrap {
            for c in tx.schema {
                for p in c.properties where p.type == .linkingObjects { try tx.removeProperty(c.name, p.name) }
            }
            for c in tx.schema {
                for p in c.properties where p.type == .link { try tx.removeProperty(c.name, p.name) }
            }
            for c in tx.schema { try tx.removeClass(c.name) }
            try tx.createClasses(models.map(\.schema))
            try tx.setSchemaVersion(core.configuration.schemaVersion)
        }
    }
}
