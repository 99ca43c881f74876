import Foundation
import RealmStorage

extension Realm {
    /// Every object of a class, lazily, always current.
    public func objects<T: Object>(_ type: T.Type) -> Results<T> {
        verifyThread("Realm")
        return Results(realm: self, source: .table(type.className()), model: type)
    }

    /// The object of `type` whose primary key is `key`, or nil.
    public func object<T: Object, K>(ofType type: T.Type, forPrimaryKey key: K) -> T? {
        verifyThread("Realm")
        guard let info = try? rlm.info(for: type), let k = primaryKeyLookup(info, key) else { return nil }
        return try? managedObject(type, key: k)
    }

    /// Every object of a class by name, as dynamic objects (no model class needed).
    public func dynamicObjects(_ className: String) -> Results<DynamicObject> {
        verifyThread("Realm")
        return Results(realm: self, source: .table(className), model: DynamicObject.self)
    }

    /// The object of a class by name whose primary key is `key`, or nil.
    public func dynamicObject(ofType className: String, forPrimaryKey key: Any) -> DynamicObject? {
        verifyThread("Realm")
        guard let info = try? rlm.dynamicInfo(className), let k = primaryKeyLookup(info, key) else { return nil }
        return dynamicObject(info, k)
    }

    private func primaryKeyLookup(_ info: ClassInfo, _ key: Any?) -> ObjectKey? {
        guard let pki = info.primaryKeyIndex else { return nil }
        let s = info.properties[pki].schema
        guard let v = AnyConversion.stored(key, type: s.type, optional: s.isOptional) else { return nil }
        return try? reader.object(info.table, primaryKey: v)
    }

    /// A managed instance of `type` for the object `key`.
    func managedObject<T: Object>(_ type: T.Type, key: ObjectKey) throws -> T {
        if type == DynamicObject.self {
            throw RealmError.invalidValue(className: "DynamicObject", property: "(class)", reason: "a dynamic object needs its class name")
        }
        guard let info = try rlm.info(for: type) else { throw RealmError.noSuchClass(type.className()) }
        return makeObject(type, key: key, info: info)
    }

    func makeObject<T: Object>(_ type: T.Type, key: ObjectKey, info: ClassInfo) -> T {
        let o = type.init()
        bind(o, key: key, info: info)
        return o
    }

    func dynamicObject(_ info: ClassInfo, _ key: ObjectKey) -> DynamicObject {
        let o = DynamicObject()
        o._realm = self
        o._key = key
        o._info = info
        return o
    }

    /// An object of class `className` with `key`: typed when `info` (or a known model) says so.
    func object(of className: String, key: ObjectKey, preferring model: Object.Type?) -> Object {
        if let model, model != DynamicObject.self, let info = try? rlm.info(for: model), info.name == className {
            return makeObject(model, key: key, info: info)
        }
        if let typed = rlm.typedInfos.values.first(where: { $0.name == className }), let m = typed.model {
            return makeObject(m.type, key: key, info: typed)
        }
        return dynamicObject(try! rlm.dynamicInfo(className), key)
    }

    /// The value of property `i` of a managed object as a Swift value: typed for model classes (`List<Dog>`,
    /// `Dog?`, `Int8`), else `Int`, `String`, ..., `DynamicObject` for links and arrays for lists.
    func anyValue(of object: Object, property i: Int) throws -> Any? {
        let info = object._info!
        if let model = info.model, object._info === info, type(of: object) == model.type {
            return model.fields[i].accessor.managedValue(object, i)
        }
        let p = info.properties[i]
        let s = p.schema
        return try RealmError.wrap { () -> Any? in
            if s.type == .linkingObjects || s.isList {
                let values = try reader.list(object._key, p.handle)
                if s.type == .link || s.type == .linkingObjects {
                    let target = try rlm.linkTargetInfo(from: info, s.objectClassName!)
                    return values.compactMap { v -> DynamicObject? in
                        if case .link(let k) = v { return dynamicObject(target, k) }
                        return nil
                    }
                }
                return values.map { AnyConversion.swiftValue($0, type: s.type) }
            }
            let v = try reader.value(object._key, p.handle)
            if case .link(let k) = v { return dynamicObject(try rlm.linkTargetInfo(from: info, s.objectClassName!), k) }
            if s.type == .mixed { return AnyRealmValue(stored: v) }
            return AnyConversion.swiftValue(v, type: s.type)
        }
    }

    // MARK: Files

    /// Writes a compacted copy of the current version to a new file.
    /// `encryptionKey` (64 bytes) encrypts the copy, nil writes it plain: so a copy can encrypt, decrypt or
    /// change the key of a file.
    public func writeCopy(toFile url: URL, encryptionKey: Data? = nil) throws {
        verifyThread("Realm")
        if let k = encryptionKey, k.count != 64 {
            throw RealmError.invalidConfiguration("an encryption key must be 64 bytes, got \(k.count)")
        }
        try RealmError.wrap { try rlm.database.writeCopy(to: url.path, encryptionKey: encryptionKey.map { [UInt8]($0) }) }
    }
}
