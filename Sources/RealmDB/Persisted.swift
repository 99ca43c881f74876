import RealmStorage

/// Declares a stored property of a model class.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(primaryKey: true) var id = 0
///     @Persisted(indexed: true) var name = ""
///     @Persisted var owner: Person?
///     @Persisted var toys: List<String>
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// ```
/// Unmanaged objects keep the value in the wrapper; managed objects read and write through their Realm.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    enum Storage {
        case unmanaged(Value)
        case unmanagedNoDefault
        /// The index of the property in the object's class info.
        case managed(Int)
        /// On an instance that names key paths (`KeyPathNames`): reading records the property's index.
        case recording(Int)
    }

    var storage: Storage
    let isPrimaryKey: Bool
    let isIndexed: Bool
    let originProperty: String?

    public init() {
        storage = .unmanagedNoDefault
        isPrimaryKey = false
        isIndexed = false
        originProperty = nil
    }

    public init(wrappedValue: Value) {
        storage = .unmanaged(wrappedValue)
        isPrimaryKey = false
        isIndexed = false
        originProperty = nil
    }

    public init(wrappedValue: Value, primaryKey: Bool) {
        storage = .unmanaged(wrappedValue)
        isPrimaryKey = primaryKey
        isIndexed = false
        originProperty = nil
    }

    public init(primaryKey: Bool) {
        storage = .unmanagedNoDefault
        isPrimaryKey = primaryKey
        isIndexed = false
        originProperty = nil
    }

    public init(wrappedValue: Value, indexed: Bool) {
        storage = .unmanaged(wrappedValue)
        isPrimaryKey = false
        isIndexed = indexed
        originProperty = nil
    }

    public init(indexed: Bool) {
        storage = .unmanagedNoDefault
        isPrimaryKey = false
        isIndexed = indexed
        originProperty = nil
    }

    /// A `LinkingObjects` property: the objects of `Value.Element` whose `originProperty` links here.
    public init<O: Object>(originProperty: String) where Value == LinkingObjects<O> {
        storage = .unmanagedNoDefault
        isPrimaryKey = false
        isIndexed = false
        self.originProperty = originProperty
    }

    @available(*, unavailable, message: "@Persisted can only be used on properties of Object subclasses")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            switch object[keyPath: storageKeyPath].storage {
            case .managed(let index): return Value._rlmGet(object, index)
            case .recording(let index): return KeyPathNames.record(object, index, Value.self)
            case .unmanaged(let v): return v
            case .unmanagedNoDefault:
                if let origin = object[keyPath: storageKeyPath].originProperty {
                    return Value._rlmUnmanagedLinkingObjects(origin) ?? Value._rlmDefaultValue()
                }
                // Fixed on first read, so that a generated default (an ObjectId, a UUID) stays the same.
                let v = Value._rlmDefaultValue()
                object[keyPath: storageKeyPath].storage = .unmanaged(v)
                return v
            }
        }
        set {
            switch object[keyPath: storageKeyPath].storage {
            case .managed(let index): Value._rlmSet(object, index, newValue)
            case .recording: preconditionFailure("a key path names a property; it is not written through")
            default: object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
            }
        }
    }
}


// MARK: - Reflection

/// What reflection found about one stored field of a model class.
struct FieldDescription {
    var name: String
    var descriptor: _PropertyDescriptor
    var isPrimaryKey = false
    var isIndexed = false
}

/// The contents of an unmanaged field, taken before the object becomes managed.
enum UnmanagedContent {
    case value((Realm) throws -> RealmStorage.Value)
    case list((Realm) throws -> [RealmStorage.Value])
    /// A to-one link to an object (nil is `.value` of null): kept as the object, so an embedded one is made
    /// through its parent.
    case object(Object)
    /// A list of objects.
    case objectList([Object])
    case set((Realm) throws -> [RealmStorage.Value])
    case dictionary((Realm) throws -> ValueDictionary)
    /// Linking objects: nothing stored.
    case none
}

/// A field of a model class that holds a property: `@Persisted` wrappers, and `List`, `LinkingObjects` and
/// `RealmProperty` fields declared in the older `let dogs = List<Dog>()` style.
protocol RealmField {
    static func describe(_ field: UnsafeRawPointer, label: String) -> FieldDescription
    /// Makes the field read and write through `object`'s Realm as property `index`.
    static func bind(_ field: UnsafeMutableRawPointer, to object: Object, index: Int)
    /// Makes the field record its index when read (`KeyPathNames`); fields of other kinds than `@Persisted`
    /// cannot, and key paths to them are refused.
    static func bindRecording(_ field: UnsafeMutableRawPointer, index: Int)
    /// The field's unmanaged contents, converted lazily (links add their targets to the Realm).
    static func unmanagedContent(_ field: UnsafeRawPointer) -> UnmanagedContent
    /// Sets an unmanaged field from a loosely typed value; false when the value does not fit.
    static func setUnmanaged(_ field: UnsafeMutableRawPointer, _ any: Any) -> Bool
    /// The field's value on an unmanaged object, for key-value access.
    static func unmanagedValue(_ field: UnsafeRawPointer) -> Any?
    /// The typed value of property `index` of a managed object, for key-value access.
    static func managedValue(_ object: Object, _ index: Int) -> Any?
    /// A stored value of this property as the typed Swift value (nil for lists and linking objects), for
    /// the old values of object notifications.
    static func typedValue(_ stored: RealmStorage.Value, _ realm: Realm) -> Any?
}

extension RealmField {
    static func bindRecording(_ field: UnsafeMutableRawPointer, index: Int) {}
    static func typedValue(_ stored: RealmStorage.Value, _ realm: Realm) -> Any? { nil }
}

extension Persisted: RealmField {
    static func describe(_ field: UnsafeRawPointer, label: String) -> FieldDescription {
        let p = field.assumingMemoryBound(to: Self.self).pointee
        var d = Value._rlmDescriptor
        if let origin = p.originProperty { d.originProperty = origin }
        let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
        return FieldDescription(name: name, descriptor: d, isPrimaryKey: p.isPrimaryKey, isIndexed: p.isIndexed)
    }

    static func bind(_ field: UnsafeMutableRawPointer, to object: Object, index: Int) {
        field.assumingMemoryBound(to: Self.self).pointee.storage = .managed(index)
    }

    static func bindRecording(_ field: UnsafeMutableRawPointer, index: Int) {
        field.assumingMemoryBound(to: Self.self).pointee.storage = .recording(index)
    }

    static func current(_ field: UnsafeRawPointer) -> Value {
        let p = field.assumingMemoryBound(to: Self.self)
        switch p.pointee.storage {
        case .unmanaged(let v): return v
        case .unmanagedNoDefault, .managed, .recording:
            let v = Value._rlmDefaultValue()
            UnsafeMutablePointer(mutating: p).pointee.storage = .unmanaged(v)
            return v
        }
    }

    static func unmanagedContent(_ field: UnsafeRawPointer) -> UnmanagedContent {
        let v = current(field)
        return Value._rlmUnmanagedContent(v)
    }

    static func setUnmanaged(_ field: UnsafeMutableRawPointer, _ any: Any) -> Bool {
        guard let v = Value._rlmFromAny(any) else { return false }
        field.assumingMemoryBound(to: Self.self).pointee.storage = .unmanaged(v)
        return true
    }

    static func unmanagedValue(_ field: UnsafeRawPointer) -> Any? { current(field)._rlmKeyValue }

    static func managedValue(_ object: Object, _ index: Int) -> Any? { Value._rlmKeyValue(object, index) }

    static func typedValue(_ stored: RealmStorage.Value, _ realm: Realm) -> Any? {
        if Value.self is _AnyList.Type || Value.self is _AnyLinkingObjects.Type || Value.self is _AnyMutableSet.Type
            || Value.self is _AnyMap.Type { return nil }
        return Value._rlmKeyValue(stored: stored, realm)
    }
}

// MARK: - Managed access, overridable per kind of property

extension _Persistable {
    public static func _rlmGet(_ object: Object, _ index: Int) -> Self {
        let (realm, stored) = object._rlmRead(index)
        return _rlmFromStored(stored, realm)
    }

    public static func _rlmSet(_ object: Object, _ index: Int, _ value: Self) {
        if _rlmDescriptor.type == .link, !_rlmDescriptor.isList, let realm = object._realm, let info = object._info,
           realm.linksToEmbedded(info.properties[index].schema) {
            object._rlmWriteEmbedded(index, value as? Object)
            return
        }
        object._rlmWrite(index) { realm in try value._rlmToStored(realm) }
    }

    static func _rlmUnmanagedContent(_ value: Self) -> UnmanagedContent {
        if let o = value as? Object { return .object(o) }
        if let list = value as? _AnyList {
            if _rlmDescriptor.type == .link { return .objectList(list._rlmAnyElements().compactMap { $0 as? Object }) }
            return .list { realm in try list._rlmStoredElements(realm) }
        }
        if let set = value as? _AnyMutableSet { return .set { realm in try set._rlmStoredElements(realm) } }
        if let map = value as? _AnyMap { return .dictionary { realm in try map._rlmStoredEntries(realm) } }
        if value is _AnyLinkingObjects { return .none }
        return .value { realm in try value._rlmToStored(realm) }
    }

    static func _rlmUnmanagedLinkingObjects(_ origin: String) -> Self? {
        guard let t = Self.self as? _AnyLinkingObjects.Type else { return nil }
        return t._rlmEmpty(origin: origin) as? Self
    }
}
