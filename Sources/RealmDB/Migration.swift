import Foundation
import RealmStorage

/// The objects of a migration: `oldObject` reads the file as it was, `newObject` the models' schema.
public typealias MigrationObject = DynamicObject

/// Passed to the migration block when the schema version is raised. Everything happens in one write
/// transaction with the schema change: if the block fails, nothing is changed.
///
/// Before the block runs, properties the models add exist (with default values, or the old values when only
/// optionality changed); properties the models remove or change still hold their old values for `oldObject`
/// and are dropped after the block.
public final class Migration {
    let realm: Realm
    /// The schema of the file before the migration.
    public let oldSchema: Schema
    /// The schema of the models.
    public let newSchema: Schema
    private var oldInfos: [String: ClassInfo] = [:]
    /// (class, name in the file) to drop after the block.
    private var pendingRemovals: [(String, String)] = []
    private let models: [ModelMapping]

    private init(realm: Realm, oldSchema: Schema, newSchema: Schema, models: [ModelMapping]) {
        self.realm = realm
        self.oldSchema = oldSchema
        self.newSchema = newSchema
        self.models = models
    }

    static func run(core: RealmCore, models: [ModelMapping], diffs: [SchemaDifference], oldVersion: UInt64) throws {
        let realm = Realm(core: core)
        let tx = core.transaction!
        let oldClassSchemas = tx.schema
        let m = Migration(realm: realm, oldSchema: Schema(objectSchema: oldClassSchemas.map(ObjectSchema.init)),
                          newSchema: Schema(objectSchema: models.map { ObjectSchema($0.schema) }), models: models)
        var fileNames: [String: [String: String]] = [:]  // class -> old name -> name in the file now
        try RealmError.wrap {
            // Changed properties keep their old column under a temporary name, for oldObject.
            for d in diffs where d.kind == .propertyChanged || d.kind == .primaryKeyChanged {
                let temp = "__migrating_\(d.property!)"
                if d.kind == .primaryKeyChanged {
                    throw RealmError.invalidModel(className: d.className,
                        reason: "changing the primary key of an existing class ('\(d.property!)') is not supported by migrations yet")
                }
                try tx.renameProperty(d.className, from: d.property!, to: temp)
                fileNames[d.className, default: [:]][d.property!] = temp
                m.pendingRemovals.append((d.className, temp))
            }
            for d in diffs where d.kind == .propertyRemoved { m.pendingRemovals.append((d.className, d.property!)) }
            let added = diffs.filter { $0.kind == .propertyAdded || $0.kind == .propertyChanged }
            for pass in 0..<2 {
                for d in added {
                    guard let model = models.first(where: { $0.className == d.className }),
                          let p = model.schema.property(named: d.property!),
                          (p.type == .linkingObjects) == (pass == 1) else { continue }
                    try tx.addProperty(d.className, p)
                }
            }
            // Only optionality changed: carry the values over (nulls become the type's default).
            for d in diffs where d.kind == .propertyChanged {
                guard let model = models.first(where: { $0.className == d.className }),
                      let p = model.schema.property(named: d.property!),
                      let old = oldClassSchemas.first(where: { $0.name == d.className })?.property(named: d.property!),
                      old.type == p.type, old.isList == p.isList, old.objectClassName == p.objectClassName,
                      p.type != .linkingObjects else { continue }
                let t = try tx.table(d.className)
                let from = try tx.property(t, "__migrating_\(d.property!)")
                let to = try tx.property(t, p.name)
                for k in try tx.keys(t) {
                    if p.isList {
                        try tx.setList(k, to, try tx.list(k, from).filter { !$0.isNull || p.isOptional })
                    } else {
                        let v = try tx.value(k, from)
                        try tx.set(k, to, v.isNull && !p.isOptional ? p.type.defaultValue : v)
                    }
                }
            }
            try SchemaSync(core: core).applyIndexChanges(diffs, tx)
        }
        core.schemaChanged()
        for c in oldClassSchemas {
            let names = c.properties.map { fileNames[c.name]?[$0.name] ?? $0.name }
            m.oldInfos[c.name] = try RealmError.wrap { try ClassInfo(reader: tx, schema: c, model: nil, fileNames: names) }
        }
        if let block = core.configuration.migrationBlock {
            block(m, oldVersion)
        }
        try RealmError.wrap {
            let current = tx.schema
            let ordered = m.pendingRemovals.sorted { a, b in
                let ta = current.first { $0.name == a.0 }?.property(named: a.1)?.type == .linkingObjects
                let tb = current.first { $0.name == b.0 }?.property(named: b.1)?.type == .linkingObjects
                return ta && !tb
            }
            for (c, name) in ordered where tx.classSchema(c)?.property(named: name) != nil {
                try tx.removeProperty(c, name)
            }
        }
        core.schemaChanged()
    }

    /// Calls `block` for every object of a class that existed before the migration, with its old values and
    /// its new (writable) form.
    public func enumerateObjects(ofType typeName: String, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void) {
        guard let oldInfo = oldInfos[typeName] else { return }
        let tx = realm.rlm.transaction!
        guard let keys = try? tx.keys(oldInfo.table) else { return }
        let newInfo = try? realm.rlm.dynamicInfo(typeName)
        for k in keys where (try? tx.exists(oldInfo.table, k)) == true {
            let old = realm.dynamicObject(oldInfo, k)
            let new = newInfo.map { realm.dynamicObject($0, k) }
            block(old, new)
        }
    }

    /// Creates an object of the new schema.
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        do {
            return try realm.dynamicCreate(typeName, value: value)
        } catch {
            fatalError("migration: cannot create \(typeName): \(error)")
        }
    }

    /// Deletes an object during the migration.
    public func delete(_ object: MigrationObject) {
        do { try realm.delete(object) } catch { fatalError("migration: cannot delete: \(error)") }
    }

    /// Deletes every object of a class, and the class itself when the models no longer have it.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        let tx = realm.rlm.transaction!
        guard tx.classSchema(typeName) != nil else { return false }
        do {
            try RealmError.wrap {
                try tx.deleteAll(tx.table(typeName))
                if !models.contains(where: { $0.className == typeName }) {
                    for c in tx.schema {
                        for p in c.properties where p.objectClassName == typeName && p.type == .linkingObjects {
                            try tx.removeProperty(c.name, p.name)
                        }
                    }
                    for c in tx.schema where c.name != typeName {
                        for p in c.properties where p.objectClassName == typeName && p.type == .link {
                            try tx.removeProperty(c.name, p.name)
                        }
                    }
                    try tx.removeClass(typeName)
                }
            }
            oldInfos[typeName] = nil
            realm.rlm.schemaChanged()
            return true
        } catch {
            fatalError("migration: cannot delete data of \(typeName): \(error)")
        }
    }

    /// Renames a property, keeping its values (and index, links and backlinks): the file's `oldName` becomes
    /// the models' `newName`.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        let tx = realm.rlm.transaction!
        do {
            try RealmError.wrap {
                guard let c = tx.classSchema(typeName) else { throw RealmError.noSuchClass(typeName) }
                guard let old = c.property(named: oldName) else { throw RealmError.noSuchProperty(className: typeName, property: oldName) }
                if let added = c.property(named: newName) {
                    guard added.type == old.type, added.isList == old.isList, added.objectClassName == old.objectClassName else {
                        throw RealmError.invalidValue(className: typeName, property: newName,
                            reason: "cannot rename '\(oldName)' (\(old.typeDescription)) to '\(newName)' (\(added.typeDescription)): the types differ")
                    }
                    try tx.removeProperty(typeName, newName)
                }
                try tx.renameProperty(typeName, from: oldName, to: newName)
                if let model = models.first(where: { $0.className == typeName }), let p = model.schema.property(named: newName),
                   p.isIndexed != old.isIndexed, !p.isPrimaryKey {
                    try tx.setIndexed(typeName, newName, p.isIndexed)
                }
            }
            pendingRemovals.removeAll { $0.0 == typeName && $0.1 == oldName }
            realm.rlm.schemaChanged()
            if let info = oldInfos[typeName] {
                let names = info.schema.properties.map { $0.name == oldName ? newName : $0.name }
                oldInfos[typeName] = try? ClassInfo(reader: tx, schema: info.schema, model: nil, fileNames: names)
            }
        } catch {
            fatalError("migration: cannot rename \(typeName).\(oldName): \(error)")
        }
    }
}

/// The schema version of the Realm file at `fileURL`, read without opening it as a Realm (no models, no
/// migration). A file that does not exist is an error.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    if encryptionKey != nil {
        throw RealmError.invalidConfiguration("encrypted Realms are not supported yet (no encryption key can be used)")
    }
    return try RealmError.wrap {
        let db = try Database.open(path: fileURL.path, options: DatabaseOptions(readOnly: true))
        return try db.read { $0.schemaVersion }
    }
}
