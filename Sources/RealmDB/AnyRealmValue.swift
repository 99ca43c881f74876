import Foundation
import RealmStorage

/// A value of any storable type, for `mixed` properties. Links to objects are not supported in mixed values.
public enum AnyRealmValue: Hashable, Sendable, RealmCollectionValue {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case uuid(UUID)

    public static var _rlmDescriptor: _PropertyDescriptor { _PropertyDescriptor(.mixed, optional: true) }
    public static func _rlmDefaultValue() -> AnyRealmValue { .none }

    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> AnyRealmValue { AnyRealmValue(stored: v) }

    init(stored v: RealmStorage.Value) {
        switch v {
        // Typed links and nested collections are not written by this API yet (the engine refuses them in mixed).
        case .null, .link, .typedLink, .list, .dictionary: self = .none
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
        }
    }

    var stored: RealmStorage.Value {
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
        }
    }

    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value { stored }

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
        default:
            if case Optional<Any>.none = any as Any? { return AnyRealmValue.none }
            return nil
        }
    }
}
