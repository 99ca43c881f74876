import Foundation
import RealmStorage

extension Realm {
    /// Every object of a class, lazily, always current.
    public func objects<T: Object>(_ type: T.Type) -> Results<T> {
        verifyThread("Realm")
        return Results(realm: self, source: .table(type.className()), model: type)
    }

    /// The object of `type` whose primary key is `key`, or nil. A read that fails (a damaged file) stops the
    /// process with the error; it never reads as "no such object".
    public func object<T: Object, K>(ofType type: T.Type, forPrimaryKey key: K) -> T? {
        verifyThread("Realm")
        let info: ClassInfo
        do {
            // Nil: the file has no table for the class yet (nothing of it was ever added), so no such object.
            guard let i = try rlm.info(for: type) else { return nil }
            info = i
        } catch {
            rlm.readFailed(error, "look up \(type.className()) by primary key")
        }
        guard let k = primaryKeyLookup(info, key) else { return nil }
        return makeObject(type, key: k, info: info)
    }

    /// Every object of a class by name, as dynamic objects (no model class needed).
    public func dynamicObjects(_ className: String) -> Results<DynamicObject> {
        verifyThread("Realm")
        return Results(realm: self, source: .table(className), model: DynamicObject.self)
    }

    /// The object of a class by name whose primary key is `key`, or nil.
    public func dynamicObject(ofType className: String, forPrimaryKey key: Any) -> DynamicObject? {
        verifyThread("Realm")
        let info: ClassInfo
        do {
            // Nil: the file has no class of that name.
            guard let i = try rlm.dynamicInfoIfPresent(className) else { return nil }
            info = i
        } catch {
            rlm.readFailed(error, "look up \(className) by primary key")
        }
        guard let k = primaryKeyLookup(info, key) else { return nil }
        return dynamicObject(info, k)
    }

    /// The object whose primary key is `key`; nil when the class has no primary key, `key` cannot be one of
    /// its type, or no object has it. A failed read stops (`readFailed`), never reads as "no such object".
    private func primaryKeyLookup(_ info: ClassInfo, _ key: Any?) -> ObjectKey? {
        guard let pki = info.primaryKeyIndex else { return nil }
        let s = info.properties[pki].schema
        guard let v = AnyConversion.stored(key, type: s.type, optional: s.isOptional) else { return nil }
        do {
            return try RealmError.wrap { try reader.object(info.table, primaryKey: v) }
        } catch {
            rlm.readFailed(error, "look up \(info.name) by primary key")
        }
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
        do {
            // A model of another class (or none) does not apply: the object is of a model in use, or dynamic.
            if let model, model != DynamicObject.self, model.className() == className, let info = try rlm.info(for: model) {
                return makeObject(model, key: key, info: info)
            }
            if let typed = rlm.typedInfos.values.first(where: { $0.name == className }), let m = typed.model {
                return makeObject(m.type, key: key, info: typed)
            }
            return dynamicObject(try rlm.dynamicInfo(className), key)
        } catch {
            rlm.readFailed(error, "read the class \(className)")
        }
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
            if s.isDictionary {
                var out: [String: Any?] = [:]
                for (k, v) in try reader.dictionary(object._key, p.handle) {
                    if case .link(let t) = v {
                        out[k] = dynamicObject(try rlm.linkTargetInfo(from: info, s.objectClassName!), t)
                    } else {
                        out[k] = s.type == .mixed ? AnyRealmValue(stored: v, self) : AnyConversion.swiftValue(v, type: s.type)
                    }
                }
                return out
            }
            if s.type == .linkingObjects || s.isList || s.isSet {
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
            if s.type == .mixed { return AnyRealmValue(stored: v, self) }
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
