import Foundation
import RealmStorage

/// The objects of a migration: `oldObject` reads the file as it was, `newObject` the models' schema.
public typealias MigrationObject = DynamicObject

/// Passed to the migration block when the schema version is raised. Everything happens in one write
/// transaction with the schema change: if any step fails, the file is left as it was (see DECISIONS 15).
///
/// Before the block runs, properties the models add exist (with the type's default value, not the model's
/// initial value, as in Realm; the old values when only optionality changed); properties the models remove
/// or change still hold their old values for `oldObject` and are dropped after the block. Primary keys the
/// models change are set after the block, when the values must be unique.
public final class Migration {
    let realm: Realm
    /// The schema of the file before the migration.
    public let oldSchema: Schema
    /// The schema of the models.
    public let newSchema: Schema
    var oldInfos: [String: ClassInfo] = [:] {
        didSet { realm.rlm.migrationOldInfos = oldInfos }
    }
    /// (class, name in the file) to drop after the block.
    var pendingRemovals: [(String, String)] = []
    /// Class → old property name → its name in the file now (a temporary name, or the new name after a rename).
    var fileNames: [String: [String: String]] = [:]
    /// Objects created by `create`, which have no old form and are not enumerated.
    var created: [String: Set<ObjectKey>] = [:]
    /// The first error reading the objects `enumerateObjects` was asked for (a damaged file): the migration
    /// fails with it after the block, instead of committing with objects the block never saw.
    var readError: Error?
    let models: [ModelMapping]
    let oldClassSchemas: [ClassSchema]

    init(realm: Realm, oldSchemas: [ClassSchema], models: [ModelMapping]) {
        self.realm = realm
        oldClassSchemas = oldSchemas
        oldSchema = Schema(objectSchema: oldSchemas.map(ObjectSchema.init))
        newSchema = Schema(objectSchema: models.map { ObjectSchema($0.schema) })
        self.models = models
    }

    /// Calls `block` for every object of a class that existed before the migration, with its old values and
    /// its new (writable) form; `newObject` is nil for a class the models no longer have. Objects created
    /// during the migration are not enumerated; objects deleted by the block are skipped.
    public func enumerateObjects(ofType typeName: String, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void) {
        guard let oldInfo = oldInfos[typeName] else { return }
        let tx = realm.rlm.transaction!
        let keys: [ObjectKey]
        do { keys = try tx.keys(oldInfo.table) } catch { readError = readError ?? error; return }
        let newInfo: ClassInfo?
        do {
            // Nil for a class the models no longer have: its `newObject` is nil.
            newInfo = try models.contains { $0.className == typeName } ? realm.rlm.dynamicInfo(typeName) : nil
        } catch {
            readError = readError ?? error
            return
        }
        let skip = created[typeName] ?? []
        for k in keys where !skip.contains(k) {
            do {
                guard try tx.exists(oldInfo.table, k) else { continue }  // deleted by the block
            } catch {
                readError = readError ?? error
                return
            }
            let old = realm.dynamicObject(oldInfo, k)
            let new = newInfo.map { realm.dynamicObject($0, k) }
            block(old, new)
        }
    }

    /// Creates an object of the new schema.
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        do {
            let o = try realm.tryDynamicCreate(typeName, value: value)
            created[typeName, default: []].insert(o._key)
            return o
        } catch {
            fatalError("migration: cannot create \(typeName): \(error)")
        }
    }

    /// Deletes an object during the migration.
    public func delete(_ object: MigrationObject) {
        do { try realm.tryDelete(object) } catch { fatalError("migration: cannot delete: \(error)") }
    }

    /// Deletes every object of a class, and the class itself when the models no longer have it. False when
    /// the file has no such class.
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
    /// the models' `newName`. When the models give the new name another optionality, the values are copied
    /// to it (nulls becoming the type's default); the models' index setting is applied after the block.
    /// Call it outside `enumerateObjects`.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        do {
            try RealmError.wrap { try rename(typeName, from: oldName, to: newName) }
        } catch {
            fatalError("migration: cannot rename \(typeName).\(oldName) to \(newName): \(error)")
        }
    }
}

/// The schema version of the Realm file at `fileURL`, read without opening it as a Realm (no models, no
/// migration). A file that does not exist is an error.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    return try RealmError.wrap {
        let db = try Database.open(path: fileURL.path, options: DatabaseOptions(readOnly: true, encryptionKey: encryptionKey.map { [UInt8]($0) }))
        return try db.read { $0.schemaVersion }
    }
}
