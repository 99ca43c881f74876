import Foundation
import RealmStorage

/// The base class of model classes.
///
/// ```swift
/// class Dog: Object {
///     @Persisted var name = ""
///     @Persisted var age = 0
///     @Persisted var owner: Person?
/// }
/// ```
/// An object created with `Dog()` or `Dog(value:)` is unmanaged: a plain object. Once added to a Realm it is
/// managed: its properties read and write through to the database and always show the version its Realm is at.
open class Object: CustomStringConvertible {
    // Managed state; `_realm` is nil for unmanaged objects.
    final var _realm: Realm?
    final var _key = ObjectKey(0)
    final var _info: ClassInfo?

    public required init() {}

    /// An unmanaged object initialised from a dictionary of property names to values, an array of values in
    /// property order, or another object. Nested dictionaries and arrays become linked objects.
    public convenience init(value: Any) {
        self.init()
        do {
            try _rlmSetUnmanagedValues(value)
        } catch {
            fatalError("\(error)")
        }
    }

    /// The name of the class in the schema: the Swift class name without its module.
    open class func className() -> String {
        let full = String(reflecting: self)
        return full.split(separator: ".").last.map(String.init) ?? full
    }

    /// Older style: the name of the primary key property (or use `@Persisted(primaryKey: true)`).
    open class func primaryKey() -> String? { nil }
    /// Older style: the names of indexed properties (or use `@Persisted(indexed: true)`).
    open class func indexedProperties() -> [String] { [] }
    /// Names of fields that are not stored.
    open class func ignoredProperties() -> [String] { [] }

    /// The Realm managing this object, or nil when unmanaged.
    public var realm: Realm? { _realm }

    /// Whether the object was deleted or its Realm invalidated. Unmanaged objects are never invalidated. A read
    /// that fails (a damaged file) stops the process with the error; it never reads as "deleted".
    public var isInvalidated: Bool {
        guard let realm = _realm, let info = _info else { return false }
        realm.verifyThread("Object")
        do {
            return try _rlmIsInvalidated()
        } catch {
            realm.rlm.readFailed(error, "check whether an object of \(info.name) exists")
        }
    }

    /// `isInvalidated`, throwing a failed read instead of stopping (for callers that can throw).
    final func _rlmIsInvalidated() throws -> Bool {
        guard let realm = _realm, let info = _info else { return false }
        // An object whose class the version no longer has reads as absent (its table root is empty), not as an error.
        return try !RealmError.wrap { try realm.reader.exists(info.table, _key) }
    }

    /// The schema of the object's class.
    public var objectSchema: ObjectSchema {
        if let info = _info { return ObjectSchema(info.schema) }
        do {
            return ObjectSchema(try ModelMapping.mapping(for: type(of: self)).schema)
        } catch RealmError.invalidModel {
            // A class that cannot be a model (an unmanaged DynamicObject, say) has no properties to show.
            return ObjectSchema(ClassSchema(name: Self.className(), properties: []))
        } catch {
            preconditionFailure("mapping \(Self.className()) reads no file and throws only invalidModel, not \(error)")
        }
    }

    /// Whether `other` is the same stored object (same Realm file and key), or the same instance.
    public func isSameObject(as other: Object?) -> Bool {
        guard let other else { return false }
        if self === other { return true }
        guard let a = _realm, let b = other._realm, let ia = _info, let ib = other._info else { return false }
        return a.rlm.database === b.rlm.database && ia.name == ib.name && _key == other._key
    }

    open var description: String {
        let name = _info?.name ?? Self.className()
        let schema = objectSchema
        if isInvalidated { return "\(name) <invalidated>" }
        let props = schema.properties.map { p -> String in
            let v = self[p.name]
            return "\t\(p.name) = \(Object.describe(v));"
        }
        return "\(name) {\n" + props.joined(separator: "\n") + "\n}"
    }

    static func describe(_ v: Any?) -> String {
        guard let v else { return "nil" }
        if case Optional<Any>.none = v as Any? { return "nil" }
        if let o = v as? Object { return o._info.map { "\($0.name) #\(o._key.rawValue)" } ?? "\(type(of: o).className()) (unmanaged)" }
        if let s = v as? String { return "\"\(s)\"" }
        return "\(v)"
    }

    /// Key-value access by property name: values as Swift values, links as objects, lists as `List`s.
    public subscript(key: String) -> Any? {
        get {
            do { return try value(forProperty: key) } catch { fatalError("\(error)") }
        }
        set {
            do { try setValue(newValue, forProperty: key) } catch { fatalError("\(error)") }
        }
    }

    /// The value of a property by name (throws for an unknown name or an invalidated object).
    public func value(forProperty name: String) throws -> Any? {
        if let realm = _realm, let info = _info {
            realm.verifyThread("Object")
            guard let i = info.index(of: name) else { throw RealmError.noSuchProperty(className: info.name, property: name) }
            return try realm.anyValue(of: self, property: i)
        }
        let m = try ModelMapping.mapping(for: type(of: self))
        guard let i = m.index(of: name) else { throw RealmError.noSuchProperty(className: m.className, property: name) }
        let f = m.fields[i]
        return withFieldPointer(f.offset) { f.accessor.unmanagedValue(UnsafeRawPointer($0)) }
    }

    /// Sets a property by name, converting the value (numbers to the property's width, dictionaries to linked
    /// objects, arrays to lists); a value that does not fit is an error naming the property.
    public func setValue(_ value: Any?, forProperty name: String) throws {
        if let realm = _realm, let info = _info {
            realm.verifyThread("Object")
            guard let i = info.index(of: name) else { throw RealmError.noSuchProperty(className: info.name, property: name) }
            try realm.setAny(value, on: self, property: i, update: .all)
            return
        }
        let m = try ModelMapping.mapping(for: type(of: self))
        guard let i = m.index(of: name) else { throw RealmError.noSuchProperty(className: m.className, property: name) }
        let f = m.fields[i]
        let ok = withFieldPointer(f.offset) { f.accessor.setUnmanaged($0, value ?? NSNull()) }
        if !ok {
            throw RealmError.invalidValue(className: m.className, property: name,
                                          reason: "expected \(m.schema.properties[i].typeDescription), got \(type(of: value ?? NSNull()))")
        }
    }

    final func withFieldPointer<R>(_ offset: Int, _ body: (UnsafeMutableRawPointer) -> R) -> R {
        let base = Unmanaged.passUnretained(self).toOpaque()
        return withExtendedLifetime(self) { body(base + offset) }
    }

    /// Sets values on an unmanaged object from a dictionary, an array in property order, or an object.
    final func _rlmSetUnmanagedValues(_ value: Any) throws {
        let m = try ModelMapping.mapping(for: type(of: self))
        if let dict = value as? [String: Any?] {
            for (k, v) in dict { try setValue(v, forProperty: k) }
        } else if let array = value as? [Any?] {
            let stored = m.fields.enumerated().filter { m.schema.properties[$0.offset].type != .linkingObjects }
            guard array.count <= stored.count else {
                throw RealmError.invalidValue(className: m.className, property: "(array)",
                                              reason: "\(array.count) values for \(stored.count) properties")
            }
            for (v, f) in zip(array, stored) { try setValue(v, forProperty: f.element.name) }
        } else if let other = value as? Object {
            let om = try other._info?.schema ?? ModelMapping.mapping(for: type(of: other)).schema
            for p in om.properties where p.type != .linkingObjects && m.index(of: p.name) != nil {
                try setValue(other.value(forProperty: p.name), forProperty: p.name)
            }
        } else {
            throw RealmError.invalidValue(className: m.className, property: "(value)",
                                          reason: "expected a dictionary, an array or an object, got \(type(of: value))")
        }
    }

    // MARK: Managed access used by @Persisted

    /// The stored value of property `index` and the object's Realm; a deleted object is a fatal error.
    final func _rlmRead(_ index: Int) -> (Realm, RealmStorage.Value) {
        guard let realm = _realm, let info = _info else { fatalError("object is not managed") }
        realm.verifyThread("Object")
        do {
            return (realm, try realm.reader.value(_key, info.properties[index].handle))
        } catch StorageError.noSuchObject {
            fatalError(RealmError.invalidatedObject(className: info.name).description)
        } catch {
            realm.rlm.readFailed(error, "read \(info.name).\(info.properties[index].name)")
        }
    }

    /// Writes property `index`; outside a write transaction, or for a deleted object, a fatal error.
    final func _rlmWrite(_ index: Int, _ value: (Realm) throws -> RealmStorage.Value) {
        guard let realm = _realm, let info = _info else { fatalError("object is not managed") }
        realm.verifyThread("Object")
        do {
            try realm.setStored(value(realm), on: self, property: index)
        } catch {
            fatalError("cannot set '\(info.name).\(info.properties[index].name)': \(error)")
        }
    }
}

/// What a managed object is, without the Swift instance: lists and linking objects hold this, so that they
/// neither keep their object alive nor depend on it.
struct ObjectRef {
    let realm: Realm
    let key: ObjectKey
    let info: ClassInfo

    var isInvalidated: Bool {
        realm.verifyThread("Object")
        do {
            return try !RealmError.wrap { try realm.reader.exists(info.table, key) }
        } catch {
            realm.rlm.readFailed(error, "check whether an object of \(info.name) exists")
        }
    }
}

extension Object {
    var _ref: ObjectRef? {
        guard let r = _realm, let i = _info else { return nil }
        return ObjectRef(realm: r, key: _key, info: i)
    }
}

extension Object: Hashable {
    public static func == (a: Object, b: Object) -> Bool { a.isSameObject(as: b) }

    public func hash(into h: inout Hasher) {
        if let info = _info, _realm != nil {
            h.combine(info.name)
            h.combine(_key)
        } else {
            h.combine(ObjectIdentifier(self))
        }
    }
}

// MARK: - Objects as property values (to-one links) and list elements

extension Object: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor {
        var d = _PropertyDescriptor(.link)
        d.objectType = self
        return d
    }

    public static func _rlmDefaultValue() -> Self {
        fatalError("a to-one link to \(className()) must be optional")
    }

    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Self {
        guard case .link(let key) = v else { fatalError("a to-one link to \(className()) is null") }
        do {
            return try realm.managedObject(self, key: key)
        } catch {
            fatalError("\(error)")
        }
    }

    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value {
        .link(try realm.addOrReuse(self))
    }

    public static func _rlmFromAny(_ any: Any) -> Self? {
        if let o = any as? Self { return o }
        if any is [String: Any?] || any is [Any?] {
            let o = self.init()
            do { try o._rlmSetUnmanagedValues(any) } catch { return nil }
            return o
        }
        return nil
    }
}
