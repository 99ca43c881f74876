import Foundation
import RealmQuery
import RealmStorage

/// A collection of values (not objects) stored in one property of an object: what results of values read.
///
/// `read` is the one place that knows how each kind of collection is stored; a set's elements or a
/// dictionary's values become new `Kind`s here, and everything above (operations, aggregates, notifications)
/// works on the values it returns.
struct ValueCollection {
    enum Kind {
        /// A list (or set) of primitives, in its order.
        case list
        /// The values of a dictionary, in its keys' order.
        case dictionaryValues
    }

    let kind: Kind
    let owner: ObjectRef
    /// The property's index in the owner's class info.
    let index: Int

    var property: ClassInfo.Property { owner.info.properties[index] }

    /// The type of the stored values (`.mixed` for `AnyRealmValue`).
    var elementType: PropertyType { property.schema.type }

    /// The values, in the collection's order; none when the owner was deleted in this version.
    func read(_ realm: Realm) throws -> [RealmStorage.Value] {
        let reader = realm.reader
        guard try RealmError.wrap({ try reader.exists(owner.info.table, owner.key) }) else { return [] }
        switch kind {
        case .list:
            return try RealmError.wrap { try reader.list(owner.key, property.handle) }
        case .dictionaryValues:
            return try RealmError.wrap { try reader.dictionary(owner.key, property.handle).map(\.1) }
        }
    }

    /// The same collection as another Realm of the file sees it: `owner` and `index` translated to that Realm.
    func translated(to owner: ObjectRef, index: Int) -> ValueCollection {
        ValueCollection(kind: kind, owner: owner, index: index)
    }

    /// A query over the values (`self > 3`), checked against their type.
    func bind(_ query: RealmQuery.Query, _ arguments: [QueryArgument]) throws -> BoundValueQuery {
        do {
            return try BoundValueQuery(query, elementType: elementType, arguments: arguments)
        } catch {
            throw RealmError.query(error)
        }
    }
}

/// `min`, `max`, `sum` and `average` over stored values, as the query language computes `@min`, `@max`,
/// `@sum` and `@avg`; shared by every collection (results, lists, unmanaged lists).
enum StoredAggregate {
    /// The smallest value (numbers across types, exactly; NaN and nulls skipped), or nil.
    static func min<T: _Persistable>(_ values: [RealmStorage.Value], _ realm: Realm?) -> T? {
        values.filter { !$0.isNull && !StoredOrder.isNaN($0) }.min { StoredOrder.compare($0, $1) < 0 }.flatMap { convert($0, realm) }
    }

    /// The largest value (numbers across types, exactly; NaN and nulls skipped), or nil.
    static func max<T: _Persistable>(_ values: [RealmStorage.Value], _ realm: Realm?) -> T? {
        values.filter { !$0.isNull && !StoredOrder.isNaN($0) }.max { StoredOrder.compare($0, $1) < 0 }.flatMap { convert($0, realm) }
    }

    /// The sum (0 when empty; nulls skipped); decimals in decimal arithmetic.
    static func sum<T: _Persistable>(_ values: [RealmStorage.Value]) -> T {
        numeric(ValueAggregate.sum(values.filter { !$0.isNull })) ?? T._rlmDefaultValue()
    }

    /// The mean, or nil when there are no non-null values.
    static func average<T: _Persistable>(_ values: [RealmStorage.Value]) -> T? {
        numeric(ValueAggregate.average(values.filter { !$0.isNull }))
    }

    /// A number as `T`: the value itself when `T` holds it, else through a double (a decimal sum asked for
    /// as a `Double`).
    private static func numeric<T: _Persistable>(_ v: RealmStorage.Value) -> T? {
        switch v {
        case .int(let i): return T._rlmFromAny(Int(i))
        case .double(let d): return T._rlmFromAny(d)
        case .decimal128(let d): return T._rlmFromAny(d) ?? T._rlmFromAny(d.doubleValue)
        default: return nil
        }
    }

    private static func convert<T: _Persistable>(_ v: RealmStorage.Value, _ realm: Realm?) -> T? {
        if let t = T._rlmFromAny(AnyConversion.swiftValue(v, type: v.type ?? .mixed) as Any) { return t }
        guard let realm else { return nil }
        return T._rlmFromStored(v, realm)
    }

    /// Whether two stored values are the same element (`index(of:)`): as DISTINCT compares them.
    static func same(_ a: RealmStorage.Value, _ b: RealmStorage.Value) -> Bool {
        StoredOrder.distinctKey(a) == StoredOrder.distinctKey(b)
    }
}
