import Foundation
import RealmStorage

/// A value of any storable type, for `mixed` properties: a primitive, an object (a link to an object of any
/// class that is not embedded), or a list or dictionary of such values nested to any depth (as Realm Core 14).
///
/// A nested `.list` or `.dictionary` read from a managed mixed property, or from an element of a managed list
/// or a value of a managed map of mixed values, reads and writes through (inside a write transaction).
public enum AnyRealmValue: Hashable, RealmCollectionValue {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case object(Object)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case uuid(UUID)
    case dictionary(Map<String, AnyRealmValue>)
    case list(List<AnyRealmValue>)

    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.mixed, optional: true) }
    public static func _rlmDefaultValue() -> AnyRealmValue { .none }

    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> AnyRealmValue { AnyRealmValue(stored: v, realm) }

    /// Property `index` of a managed object: a nested list or dictionary in it reads and writes through.
    public static func _rlmGet(_ object: Object, _ index: Int) -> AnyRealmValue {
        let (realm, stored) = object._rlmRead(index)
        switch stored {
        case .list, .dictionary:
            guard let ref = object._ref else { return AnyRealmValue(stored: stored, realm) }
            return AnyRealmValue(stored: stored, realm, place: NestedMixedPlace(owner: ref, propertyIndex: index, path: []))
        default:
            return AnyRealmValue(stored: stored, realm)
        }
    }

    /// A stored value as an `AnyRealmValue`; links are objects of `realm` (typed when a model class has the name).
    /// With `place`, a nested list or dictionary is the one stored there (it reads and writes through).
    init(stored v: RealmStorage.Value, _ realm: Realm?, place: NestedMixedPlace?) {
        guard let place else {
            self = AnyRealmValue(stored: v, realm)
            return
        }
        switch v {
        case .list:
            let list = List<AnyRealmValue>()
            list.nested = place
            self = .list(list)
        case .dictionary:
            let map = Map<String, AnyRealmValue>()
            map.nested = place
            self = .dictionary(map)
        default:
            self = AnyRealmValue(stored: v, realm)
        }
    }

    init(stored v: RealmStorage.Value, _ realm: Realm?) {
        switch v {
        case .null, .link: self = .none
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(Int(i))
        case .float(let f): self = .float(f)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .data(let d): self = .data(Data(d))
        case .date(let t): self = .date(t.date)
        case .objectId(let o): self = .objectId(o)
        case .uuid(let u): self = .uuid(u)
        case .decimal128(let d): self = .decimal128(d)
        case .typedLink(let c, let k):
            guard let realm, let name = realm.reader.className(classID: c) else { self = .none; return }
            do {
                let info = try realm.targetInfo(name)
                if let model = info.model {
                    self = .object(try realm.managedObject(model.type, key: k))
                } else {
                    self = .object(realm.dynamicObject(info, k))
                }
            } catch {
                realm.rlm.readFailed(error, "read a link to \(name) in a mixed value")
            }
        case .list(let l):
            let list = List<AnyRealmValue>()
            list.unmanaged = l.map { AnyRealmValue(stored: $0, realm) }
            self = .list(list)
        case .dictionary(let d):
            let map = Map<String, AnyRealmValue>()
            map.unmanaged = d.map { ($0.key, AnyRealmValue(stored: $0.value, realm)) }
            self = .dictionary(map)
        }
    }

    /// The stored form; an unmanaged object is added to `realm` (in a write transaction).
    func stored(_ realm: Realm?) throws -> RealmStorage.Value {
        switch self {
        case .none: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(Int64(i))
        case .float(let f): return .float(f)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .data(let d): return .data([UInt8](d))
        case .date(let d): return .date(Timestamp(d))
        case .objectId(let o): return .objectId(o)
        case .uuid(let u): return .uuid(u)
        case .decimal128(let d): return .decimal128(d)
        case .object(let o):
            guard let r = o.realm ?? realm else {
                throw RealmError.invalidValue(className: "AnyRealmValue", property: "(object)", reason: "an unmanaged object outside a Realm cannot be stored")
            }
            let key = o.realm == nil ? try r.addOrReuse(o) : o._key
            let name = o._info?.name ?? type(of: o).className()
            guard let id = r.reader.classID(named: name) else { throw RealmError.storage(.noSuchClass(name)) }
            return .typedLink(classID: id, key: key)
        case .list(let l): return .list(try l.elements.map { try $0.stored(realm) })
        case .dictionary(let m): return .dictionary(ValueDictionary(try m.entries.map { ($0.key, try $0.value.stored(realm)) }))
        }
    }

    /// The stored form of a value without objects; nil when it holds one.
    var stored: RealmStorage.Value? { try? stored(nil) }  // nil: it holds an unmanaged object, which needs a Realm

    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { try stored(realm) }

    public static func == (a: AnyRealmValue, b: AnyRealmValue) -> Bool {
        switch (a, b) {
        case (.none, .none): return true
        case (.int(let x), .int(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.float(let x), .float(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.data(let x), .data(let y)): return x == y
        case (.date(let x), .date(let y)): return x == y
        case (.object(let x), .object(let y)): return x == y
        case (.objectId(let x), .objectId(let y)): return x == y
        case (.decimal128(let x), .decimal128(let y)): return x == y
        case (.uuid(let x), .uuid(let y)): return x == y
        // As realm-swift: collections are equal when they are the same collection.
        case (.dictionary(let x), .dictionary(let y)): return x === y
        case (.list(let x), .list(let y)): return x === y
        default: return false
        }
    }

    public func hash(into h: inout Hasher) {
        switch self {
        case .none: h.combine(0)
        case .int(let v): h.combine(v)
        case .bool(let v): h.combine(v)
        case .float(let v): h.combine(v)
        case .double(let v): h.combine(v)
        case .string(let v): h.combine(v)
        case .data(let v): h.combine(v)
        case .date(let v): h.combine(v)
        case .object(let v): h.combine(v)
        case .objectId(let v): h.combine(v)
        case .decimal128(let v): h.combine(v)
        case .uuid(let v): h.combine(v)
        case .dictionary: h.combine(12)
        case .list: h.combine(13)
        }
    }

    // MARK: Accessors, as realm-swift has them

    public var intValue: Int? { if case .int(let v) = self { return v } else { return nil } }
    public var boolValue: Bool? { if case .bool(let v) = self { return v } else { return nil } }
    public var floatValue: Float? { if case .float(let v) = self { return v } else { return nil } }
    public var doubleValue: Double? { if case .double(let v) = self { return v } else { return nil } }
    public var stringValue: String? { if case .string(let v) = self { return v } else { return nil } }
    public var dataValue: Data? { if case .data(let v) = self { return v } else { return nil } }
    public var dateValue: Date? { if case .date(let v) = self { return v } else { return nil } }
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { return v } else { return nil } }
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { return v } else { return nil } }
    public var uuidValue: UUID? { if case .uuid(let v) = self { return v } else { return nil } }
    public var listValue: List<AnyRealmValue>? { if case .list(let v) = self { return v } else { return nil } }
    public var dictionaryValue: Map<String, AnyRealmValue>? { if case .dictionary(let v) = self { return v } else { return nil } }
    /// The object, when the value is one of class `T`.
    public func object<T: Object>(_ type: T.Type) -> T? { if case .object(let o) = self { return o as? T } else { return nil } }
    /// The object as a `DynamicObject`, whatever its class.
    public var dynamicObject: DynamicObject? {
        guard case .object(let o) = self else { return nil }
        if let d = o as? DynamicObject { return d }
        guard let realm = o.realm, let info = o._info else { return nil }
        return realm.dynamicObject(info, o._key)
    }

    public init() { self = .none }

    /// A dictionary value from a Swift dictionary.
    public static func fromDictionary(_ d: [String: AnyRealmValue]) -> AnyRealmValue {
        let m = Map<String, AnyRealmValue>()
        m.unmanaged = d.sorted { SetOrder.compareUTF8($0.key, $1.key) < 0 }.map { ($0.key, $0.value) }
        return .dictionary(m)
    }

    /// A list value from a Swift array.
    public static func fromArray(_ a: [AnyRealmValue]) -> AnyRealmValue {
        let l = List<AnyRealmValue>()
        l.unmanaged = a
        return .list(l)
    }

    public static func _rlmFromAny(_ any: Any) -> AnyRealmValue? {
        switch any {
        case let v as AnyRealmValue: return v
        case is NSNull: return AnyRealmValue.none
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(v)
        case let v as Float: return .float(v)
        case let v as Double: return .double(v)
        case let v as String: return .string(v)
        case let v as Data: return .data(v)
        case let v as Date: return .date(v)
        case let v as ObjectId: return .objectId(v)
        case let v as UUID: return .uuid(v)
        case let v as Decimal128: return .decimal128(v)
        case let v as _AnyPersistableEnum: return _rlmFromAny(v._rlmRawValueAny)
        case let v as Object: return .object(v)
        case let v as List<AnyRealmValue>: return .list(v)
        case let v as Map<String, AnyRealmValue>: return .dictionary(v)
        case let v as [Any?]:
            var out: [AnyRealmValue] = []
            for e in v {
                guard let x = e.flatMap({ _rlmFromAny($0) }) ?? (e == nil ? AnyRealmValue.none : nil) else { return nil }
                out.append(x)
            }
            return fromArray(out)
        case let v as [String: Any?]:
            var out: [String: AnyRealmValue] = [:]
            for (k, e) in v {
                guard let x = e.flatMap({ _rlmFromAny($0) }) ?? (e == nil ? AnyRealmValue.none : nil) else { return nil }
                out[k] = x
            }
            return fromDictionary(out)
        default:
            if case Optional<Any>.none = any as Any? { return AnyRealmValue.none }
            return nil
        }
    }
}
