import Foundation
import RealmStorage

/// Conversions between loosely typed Swift values (dictionaries given to `create`, key-value access) and
/// stored values, driven by the property's schema.
enum AnyConversion {
    static func isNull(_ any: Any?) -> Bool {
        guard let any else { return true }
        if any is NSNull { return true }
        if case Optional<Any>.none = any as Any? { return true }
        let m = Mirror(reflecting: any)
        return m.displayStyle == .optional && m.children.isEmpty
    }

    /// Unwraps nested optionals (`Optional<Any>` holding `Optional<Int>` ...).
    static func unwrap(_ any: Any) -> Any? {
        let m = Mirror(reflecting: any)
        guard m.displayStyle == .optional else { return any }
        guard let child = m.children.first else { return nil }
        return unwrap(child.value)
    }

    /// The stored value of a primitive (non-link, non-list) property, or nil when `any` does not fit.
    static func stored(_ any: Any?, type: PropertyType, optional: Bool) -> RealmStorage.Value? {
        // An enum is stored as its raw value.
        guard let raw = rawValueOfEnum(any.flatMap(unwrap)), !(raw is NSNull) else {
            return optional || type == .mixed ? .null : nil
        }
        switch type {
        case .bool: return (raw as? Bool).map { .bool($0) }
        case .int:
            if raw is Bool { return nil }
            return Int64._rlmFromAny(raw).map { .int($0) }
        case .float: return Float._rlmFromAny(raw).map { .float($0) }
        case .double: return Double._rlmFromAny(raw).map { .double($0) }
        case .string: return String._rlmFromAny(raw).map { .string($0) }
        case .data: return Data._rlmFromAny(raw).map { .data([UInt8]($0)) }
        case .date:
            if let d = raw as? Date { return .date(Timestamp(d)) }
            return nil
        case .objectId: return ObjectId._rlmFromAny(raw).map { .objectId($0) }
        case .uuid: return UUID._rlmFromAny(raw).map { .uuid($0) }
        case .decimal128: return Decimal128._rlmFromAny(raw).map { .decimal128($0) }
        case .mixed: return AnyRealmValue._rlmFromAny(raw).flatMap(\.stored)
        case .link, .linkingObjects, .backlink: return nil
        }
    }

    /// A stored primitive as a Swift value (`Int`, `String`, `Date`, ... or nil).
    static func swiftValue(_ v: RealmStorage.Value, type: PropertyType) -> Any? {
        switch v {
        case .null: return nil
        case .bool(let b): return b
        case .int(let i): return Int(i)
        case .float(let f): return f
        case .double(let d): return d
        case .string(let s): return s
        case .data(let d): return Data(d)
        case .date(let t): return t.date
        case .objectId(let o): return o
        case .uuid(let u): return u
        case .decimal128(let d): return d
        case .link(let k), .typedLink(_, let k): return k
        case .list(let l): return l.map { swiftValue($0, type: .mixed) }
        case .dictionary(let d): return Dictionary(uniqueKeysWithValues: d.map { ($0.key, swiftValue($0.value, type: .mixed)) })
        }
    }
}
