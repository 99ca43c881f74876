import Foundation
@_exported import struct RealmStorage.ObjectId
@_exported import struct RealmStorage.Decimal128
import RealmStorage

/// How a property of some Swift type is stored: the storage type, optionality and, for links, the target.
public struct _PropertyDescriptor: Sendable {
    public var type: PropertyType
    public var isOptional: Bool
    public var isList = false
    /// A `MutableSet` of the type.
    public var isSet = false
    /// A `Map<String, …>` of the type.
    public var isDictionary = false
    /// For links, lists of links and linking objects: the target model class.
    public var objectType: Object.Type?
    /// For linking objects: the origin property of `objectType`.
    public var originProperty: String?

    public init(_ type: PropertyType, optional: Bool = false) {
        self.type = type
        self.isOptional = optional
    }

    var objectClassName: String? { objectType.map { $0.className() } }
}

/// A type that can be stored in a `@Persisted` property or in a `List`.
///
/// The requirements are the bridge between Swift values and stored values; they are public only so that
/// the standard types can conform. Do not conform types of your own.
public protocol _Persistable {
    /// How a property of this type is stored.
    static var _rlmDescriptor: _PropertyDescriptor { get }
    /// The value of a property declared without a default.
    static func _rlmDefaultValue() -> Self
    /// The Swift value of a stored value, read through `realm` (links become managed objects).
    static func _rlmFromStored(_ value: RealmStorage.Value, _ realm: Realm) -> Self
    /// The stored value of this Swift value; linked objects that are not yet managed are added to `realm`.
    func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value
    /// Converts a loosely typed value (as found in dictionaries given to `create` or `Object(value:)`).
    static func _rlmFromAny(_ any: Any) -> Self?
    /// Reads property `index` of a managed object.
    static func _rlmGet(_ object: Object, _ index: Int) -> Self
    /// Writes property `index` of a managed object (inside a write transaction).
    static func _rlmSet(_ object: Object, _ index: Int, _ value: Self)
    /// `_rlmFromStored` for a value inside an optional: nil when the stored value has no Swift value of this
    /// type (an enum's raw value that no case has), where `_rlmFromStored` stops.
    static func _rlmFromStoredInsideOptional(_ value: RealmStorage.Value, _ realm: Realm) -> Self?
    /// This value for key-value access: itself, an enum's raw value, nil for an optional holding nothing.
    var _rlmKeyValue: Any? { get }
    /// Property `index` of a managed object for key-value access (an enum gives its raw value).
    static func _rlmKeyValue(_ object: Object, _ index: Int) -> Any?
    /// A stored value for key-value access and the values of `PropertyChange` (an enum gives its raw value).
    static func _rlmKeyValue(stored: RealmStorage.Value, _ realm: Realm) -> Any?
}

extension _Persistable {
    public static func _rlmFromAny(_ any: Any) -> Self? { any as? Self }

    public static func _rlmFromStoredInsideOptional(_ value: RealmStorage.Value, _ realm: Realm) -> Self? {
        _rlmFromStored(value, realm)
    }

    public var _rlmKeyValue: Any? { self }

    public static func _rlmKeyValue(_ object: Object, _ index: Int) -> Any? { _rlmGet(object, index)._rlmKeyValue }

    public static func _rlmKeyValue(stored: RealmStorage.Value, _ realm: Realm) -> Any? {
        _rlmFromStored(stored, realm)._rlmKeyValue
    }
}

/// Types that can be elements of a `List` or a `Results` of values.
public protocol RealmCollectionValue: _Persistable {}

// MARK: - Standard types

extension Bool: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.bool) }
    public static func _rlmDefaultValue() -> Bool { false }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Bool {
        if case .bool(let b) = v { return b }
        return false
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .bool(self) }
}

/// Fixed-width integers, stored as 64-bit ints.
public protocol _RealmInteger: FixedWidthInteger, RealmCollectionValue {}

extension _RealmInteger {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.int) }
    public static func _rlmDefaultValue() -> Self { 0 }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Self {
        if case .int(let i) = v { return Self(truncatingIfNeeded: i) }
        return 0
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .int(Int64(self)) }
    public static func _rlmFromAny(_ any: Any) -> Self? {
        switch any {
        case let v as Self: return v
        case let v as Int: return Self(exactly: v)
        case let v as Int64: return Self(exactly: v)
        case let v as Int32: return Self(exactly: v)
        case let v as Int16: return Self(exactly: v)
        case let v as Int8: return Self(exactly: v)
        case let v as Double: return Self(exactly: v)
        default: return nil
        }
    }
}

extension Int: _RealmInteger {}
extension Int8: _RealmInteger {}
extension Int16: _RealmInteger {}
extension Int32: _RealmInteger {}
extension Int64: _RealmInteger {}

extension Float: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.float) }
    public static func _rlmDefaultValue() -> Float { 0 }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Float {
        if case .float(let f) = v { return f }
        return 0
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .float(self) }
    public static func _rlmFromAny(_ any: Any) -> Float? {
        switch any {
        case let v as Float: return v
        case let v as Double: return Float(v)
        case let v as Int: return Float(v)
        default: return nil
        }
    }
}

extension Double: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.double) }
    public static func _rlmDefaultValue() -> Double { 0 }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Double {
        if case .double(let d) = v { return d }
        return 0
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .double(self) }
    public static func _rlmFromAny(_ any: Any) -> Double? {
        switch any {
        case let v as Double: return v
        case let v as Float: return Double(v)
        case let v as Int: return Double(v)
        default: return nil
        }
    }
}

extension String: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.string) }
    public static func _rlmDefaultValue() -> String { "" }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> String {
        if case .string(let s) = v { return s }
        return ""
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .string(self) }
    public static func _rlmFromAny(_ any: Any) -> String? {
        switch any {
        case let v as String: return v
        case let v as Substring: return String(v)
        default: return nil
        }
    }
}

extension Data: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.data) }
    public static func _rlmDefaultValue() -> Data { Data() }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Data {
        if case .data(let d) = v { return Data(d) }
        return Data()
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .data([UInt8](self)) }
    public static func _rlmFromAny(_ any: Any) -> Data? {
        switch any {
        case let v as Data: return v
        case let v as [UInt8]: return Data(v)
        default: return nil
        }
    }
}

extension Date: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.date) }
    public static func _rlmDefaultValue() -> Date { Date() }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Date {
        if case .date(let t) = v { return t.date }
        return Date(timeIntervalSince1970: 0)
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .date(Timestamp(self)) }
}

extension ObjectId: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.objectId) }
    public static func _rlmDefaultValue() -> ObjectId { .generate() }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> ObjectId {
        if case .objectId(let o) = v { return o }
        return .zero
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .objectId(self) }
    public static func _rlmFromAny(_ any: Any) -> ObjectId? {
        switch any {
        case let v as ObjectId: return v
        case let v as String: return ObjectId(hexString: v)
        default: return nil
        }
    }
}

extension UUID: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.uuid) }
    public static func _rlmDefaultValue() -> UUID { UUID() }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> UUID {
        if case .uuid(let u) = v { return u }
        return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .uuid(self) }
    public static func _rlmFromAny(_ any: Any) -> UUID? {
        switch any {
        case let v as UUID: return v
        case let v as String: return UUID(uuidString: v)
        default: return nil
        }
    }
}

extension Decimal128: RealmCollectionValue {
    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.decimal128) }
    public static func _rlmDefaultValue() -> Decimal128 { .zero }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Decimal128 {
        if case .decimal128(let d) = v { return d }
        return .zero
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { .decimal128(self) }
    public static func _rlmFromAny(_ any: Any) -> Decimal128? {
        switch any {
        case let v as Decimal128: return v
        case let v as Int: return Decimal128(Int64(v))
        // As realm-swift converts a number (Realm Core's conversion, 15 significant digits), and as a double
        // query argument is compared with a decimal: a value stored from a double is found with it.
        case let v as Double: return Decimal128(v, significantDigits: 15)
        case let v as Float: return Decimal128(Double(v), significantDigits: 15)
        case let v as String: return Decimal128(string: v)
        default: return nil
        }
    }
}

extension Optional: _Persistable where Wrapped: _Persistable {
    public static var _rlmDescriptor: _PropertyDescriptor {
        var d = Wrapped._rlmDescriptor
        d.isOptional = true
        return d
    }
    public static func _rlmDefaultValue() -> Wrapped? { nil }
    public var _rlmKeyValue: Any? { self.flatMap { $0._rlmKeyValue } }
    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Wrapped? {
        if case .null = v { return nil }
        return Wrapped._rlmFromStoredInsideOptional(v, realm)
    }
    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value {
        guard let w = self else { return .null }
        return try w._rlmToStored(realm)
    }
    public static func _rlmFromAny(_ any: Any) -> Wrapped?? {
        if case Optional<Any>.none = any as Any? { return .some(nil) }
        if any is NSNull { return .some(nil) }
        if let inner = any as? Wrapped? { return .some(inner) }
        if let v = Wrapped._rlmFromAny(any) { return .some(v) }
        // A raw value no case of an enum has is nil, as in realm-swift.
        if let e = Wrapped.self as? _AnyPersistableEnum.Type, e._rlmIsRawValue(any) { return .some(nil) }
        return nil
    }
}

extension Optional: RealmCollectionValue where Wrapped: RealmCollectionValue {}
