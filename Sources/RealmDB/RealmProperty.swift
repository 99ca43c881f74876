import Foundation
import RealmStorage

/// Types a `RealmProperty` can hold: optional values (`Int?`, `String?`, an enum's `Optional`) and
/// `AnyRealmValue`, as in realm-swift.
public protocol RealmPropertyType: _Persistable {}

extension Optional: RealmPropertyType where Wrapped: RealmCollectionValue {}
extension AnyRealmValue: RealmPropertyType {}

/// A property declared in the older style, `let age = RealmProperty<Int?>()`, read and written through
/// `value`. New code uses `@Persisted var age: Int?`.
public final class RealmProperty<Value: RealmPropertyType> {
    var unmanaged: Value = Value._rlmDefaultValue()
    /// The owning object and its property index when managed.
    var owner: ObjectRef?
    var propertyIndex = 0

    public init() {}

    /// The value; setting it on a managed object needs a write transaction.
    public var value: Value {
        get {
            guard let owner else { return unmanaged }
            let realm = owner.realm
            realm.verifyThread("RealmProperty")
            let p = owner.info.properties[propertyIndex]
            do {
                return Value._rlmFromStored(try realm.reader.value(owner.key, p.handle), realm)
            } catch StorageError.noSuchObject {
                fatalError(RealmError.invalidatedObject(className: owner.info.name).description)
            } catch {
                realm.rlm.readFailed(error, "read \(owner.info.name).\(p.name)")
            }
        }
        set {
            guard let owner else { unmanaged = newValue; return }
            let realm = owner.realm
            realm.verifyThread("RealmProperty")
            let p = owner.info.properties[propertyIndex]
            do {
                let tx = try realm.requireWrite("modify an object")
                let stored = try newValue._rlmToStored(realm)
                try RealmError.wrap { try tx.set(owner.key, p.handle, stored) }
                realm.rlm.changed()
            } catch {
                fatalError("cannot set '\(owner.info.name).\(p.name)': \(error)")
            }
        }
    }
}

extension RealmProperty: CustomStringConvertible {
    public var description: String { String(describing: value) }
}

extension RealmProperty: Equatable where Value: Equatable {
    public static func == (a: RealmProperty<Value>, b: RealmProperty<Value>) -> Bool { a.value == b.value }
}

/// The older style's field: described from `Value`, bound to the object when it becomes managed.
extension RealmProperty: RealmField {
    static func describe(_ field: UnsafeRawPointer, label: String) -> FieldDescription {
        FieldDescription(name: label, descriptor: Value._rlmDescriptor)
    }

    static func bind(_ field: UnsafeMutableRawPointer, to object: Object, index: Int) {
        let p = field.assumingMemoryBound(to: RealmProperty<Value>.self).pointee
        p.owner = object._ref
        p.propertyIndex = index
    }

    static func unmanagedContent(_ field: UnsafeRawPointer) -> UnmanagedContent {
        let v = field.assumingMemoryBound(to: RealmProperty<Value>.self).pointee.unmanaged
        return .value { realm in try v._rlmToStored(realm) }
    }

    static func setUnmanaged(_ field: UnsafeMutableRawPointer, _ any: Any) -> Bool {
        let p = field.assumingMemoryBound(to: RealmProperty<Value>.self).pointee
        if let other = any as? RealmProperty<Value> { p.unmanaged = other.value; return true }
        guard let v = Value._rlmFromAny(any) else { return false }
        p.unmanaged = v
        return true
    }

    static func unmanagedValue(_ field: UnsafeRawPointer) -> Any? {
        field.assumingMemoryBound(to: RealmProperty<Value>.self).pointee.unmanaged._rlmKeyValue
    }

    static func managedValue(_ object: Object, _ index: Int) -> Any? {
        let (realm, stored) = object._rlmRead(index)
        return Value._rlmKeyValue(stored: stored, realm)
    }

    static func typedValue(_ stored: RealmStorage.Value, _ realm: Realm) -> Any? { Value._rlmKeyValue(stored: stored, realm) }
}

/// Types a `RealmOptional` can hold (the non-optional value types).
public typealias RealmOptionalType = RealmCollectionValue

/// The oldest style of optional property, `let age = RealmOptional<Int>()`; `value` is `Int?`.
@available(*, deprecated, message: "RealmOptional<T> has been deprecated, use RealmProperty<T?> instead.")
public typealias RealmOptional<Value: RealmOptionalType> = RealmProperty<Value?>
