import RealmStorage

/// An enum that can be stored in a `@Persisted` property and in a `List`: stored as its raw value.
///
/// ```swift
/// enum TaskStatus: String, PersistableEnum {
///     case open, inProgress, done
/// }
/// enum Priority: Int, PersistableEnum {
///     case low = 1, medium = 5, high = 10
/// }
/// class Task: Object {
///     @Persisted var status = TaskStatus.open
///     @Persisted var priority: Priority        // no default: the first case, .low
///     @Persisted var reviewed: TaskStatus?
///     @Persisted var history: List<TaskStatus>
/// }
/// ```
///
/// The raw type may be any type a property can have that an enum can use as a raw type: `Int`, `Int8`,
/// `Int16`, `Int32`, `Int64`, `Float`, `Double` or `String`. The property is a column of the raw type
/// (`Task.status` is a `string` property, `Task.priority` an `int`), so queries compare raw values
/// (`status == 'done'`, `priority > 1`), sorting orders by raw value, and tools that know nothing of the enum
/// show the raw value. Key-value access (`task["status"]`, `value(forProperty:)`, `DynamicObject`, the
/// values of `PropertyChange`) gives the raw value too, as in realm-swift.
///
/// As in realm-swift, a stored value that is the raw value of no case (written by other code or an older
/// version of the enum) reads as nil from an optional property or list element, and stops the process,
/// naming the class, property and enum, from a non-optional one.
public protocol PersistableEnum: _AnyPersistableEnum, RealmCollectionValue, RawRepresentable, CaseIterable, Comparable
where RawValue: RealmCollectionValue & Comparable {}

/// What conversions from loosely typed values need of any persistable enum, without its type.
public protocol _AnyPersistableEnum {
    /// The raw value, as a Swift value (`String`, `Int`, ...).
    var _rlmRawValueAny: Any { get }
    /// Whether `any` is a value of the raw type (whether or not some case has it).
    static func _rlmIsRawValue(_ any: Any) -> Bool
}

extension PersistableEnum {
    /// The first case, the value of a property declared without a default (as in realm-swift).
    public init() { self = Self._rlmDefaultValue() }

    /// Cases order by their raw values, as their stored values sort.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var _rlmRawValueAny: Any { rawValue }

    public var _rlmKeyValue: Any? { rawValue }

    public static func _rlmIsRawValue(_ any: Any) -> Bool { RawValue._rlmFromAny(any) != nil }

    public static var _rlmDescriptor: _PropertyDescriptor { RawValue._rlmDescriptor }

    public static func _rlmDefaultValue() -> Self {
        guard let first = allCases.first else { fatalError("\(Self.self) has no cases, so it has no default value") }
        return first
    }

    /// The raw value of a stored value, exactly (a stored 300 is no `Int8`, rather than 44).
    static func storedRawValue(_ v: RealmStorage.Value, _ realm: Realm) -> RawValue? {
        let any = AnyConversion.swiftValue(v, type: RawValue._rlmDescriptor.type)
        return any.flatMap { RawValue._rlmFromAny($0) }
    }

    public static func _rlmFromStoredInsideOptional(_ v: RealmStorage.Value, _ realm: Realm) -> Self? {
        storedRawValue(v, realm).flatMap(Self.init(rawValue:))
    }

    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Self {
        guard let e = _rlmFromStoredInsideOptional(v, realm) else {
            fatalError("a stored \(RawValue.self) is the raw value of no case of \(Self.self); "
                       + "declare the property or list element optional (\(Self.self)?) to read such a value as nil")
        }
        return e
    }

    public static func _rlmGet(_ object: Object, _ index: Int) -> Self {
        let (realm, stored) = object._rlmRead(index)
        guard let e = _rlmFromStoredInsideOptional(stored, realm) else {
            let name = object._info.map { "\($0.name).\($0.properties[index].name)" } ?? "a property"
            fatalError("the value stored in \(name) is the raw value of no case of \(Self.self); "
                       + "declare the property as \(Self.self)? to read such a value as nil")
        }
        return e
    }

    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { try rawValue._rlmToStored(realm) }

    /// The enum itself, or the case whose raw value `any` is.
    public static func _rlmFromAny(_ any: Any) -> Self? {
        if let e = any as? Self { return e }
        if let e = any as? _AnyPersistableEnum { return RawValue._rlmFromAny(e._rlmRawValueAny).flatMap(Self.init(rawValue:)) }
        return RawValue._rlmFromAny(any).flatMap(Self.init(rawValue:))
    }

    /// Key-value access gives the raw value, never stopping for one that is no case's.
    public static func _rlmKeyValue(_ object: Object, _ index: Int) -> Any? {
        let (realm, stored) = object._rlmRead(index)
        return _rlmKeyValue(stored: stored, realm)
    }

    public static func _rlmKeyValue(stored v: RealmStorage.Value, _ realm: Realm) -> Any? {
        if case .null = v { return nil }
        return storedRawValue(v, realm)
    }
}

/// `any` with an enum replaced by its raw value: what conversions from loosely typed values see of an enum.
func rawValueOfEnum(_ any: Any?) -> Any? {
    guard let any else { return nil }
    if let e = any as? _AnyPersistableEnum { return e._rlmRawValueAny }
    return any
}
