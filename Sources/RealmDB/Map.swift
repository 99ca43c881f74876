import Foundation
import RealmStorage

/// The key type of a `Map`: `String` only, as in Realm.
public protocol _MapKey: Hashable, Comparable, Sendable {
    var _rlmKey: String { get }
    static func _rlmFromKey(_ key: String) -> Self
}

extension String: _MapKey {
    public var _rlmKey: String { self }
    public static func _rlmFromKey(_ key: String) -> String { key }
}

/// Type-erased access to maps, for conversions.
protocol _AnyMap {
    func _rlmStoredEntries(_ realm: Realm) throws -> ValueDictionary
    /// The entries with their Swift values (embedded objects are made from these, not stored first).
    func _rlmAnyEntries() -> [(String, Any?)]
}

/// One entry of a `Map` as it iterates: its key and value.
public struct SingleMapEntry<Key: _MapKey, Value: RealmCollectionValue> {
    public let key: Key
    public let value: Value
}

/// A dictionary with string keys (Realm's `Map`): values of a primitive type (`Map<String, Int>`,
/// `Map<String, String?>`), objects (`Map<String, Dog?>`, where a value may be nil) or `AnyRealmValue`.
///
/// Keys may not be empty, start with `$` or contain `.`. A managed map iterates its keys in the order of their
/// UTF-8 bytes, as Realm Core keeps them; setting a key to nil (`map["k"] = nil`) removes it.
public final class Map<Key: _MapKey, Value: RealmCollectionValue>: CollectionProperty {
    static var typeName: String { "Map" }
    /// The entries of an unmanaged map; for a dictionary nested in a managed mixed value (`nested`), the stored
    /// entries, read and written back on each use.
    var unmanaged: [(key: Key, value: Value)] {
        get {
            guard let nested else { return ownEntries }
            return nested.readDictionary() as! [(key: Key, value: Value)]  // `nested` is set on Map<String, AnyRealmValue> only
        }
        set {
            guard let nested else { ownEntries = newValue; return }
            nested.writeDictionary(newValue as! [(key: String, value: AnyRealmValue)])  // as above
        }
    }
    private var ownEntries: [(key: Key, value: Value)] = []
    /// Set on a dictionary read from a managed mixed value.
    var nested: NestedMixedPlace?
    /// The owning object and its property index when managed.
    var owner: ObjectRef?
    var propertyIndex = 0

    public init() {}

    init(owner: ObjectRef, index: Int) {
        self.owner = owner
        self.propertyIndex = index
    }

    /// The Realm of the owning object, or nil when unmanaged.
    public var realm: Realm? { owner?.realm }

    /// Whether the owning object was deleted.
    public var isInvalidated: Bool { owner?.isInvalidated ?? false }

    // MARK: Reading

    func storedEntries() -> ValueDictionary {
        guard let (realm, owner, p) = managedContext else { return ValueDictionary() }
        return readStored(realm, owner, p) { try $0.dictionary($1, $2) }
    }

    /// The entries in iteration order.
    var entries: [(key: Key, value: Value)] {
        guard let (realm, _, _) = managedContext else { return unmanaged }
        return storedEntries().map { (Key._rlmFromKey($0.key), storedElement($0.value, .entry($0.key), realm)) }
    }

    public var count: Int { managedContext == nil ? unmanaged.count : storedEntries().count }

    public var isEmpty: Bool { count == 0 }

    /// Every key, in iteration order.
    public var keys: [Key] { entries.map(\.key) }

    /// Every value, in the order of their keys.
    public var values: [Value] { entries.map(\.value) }

    /// The value of `key`, or nil when the map has no such key; setting nil removes the key.
    public subscript(key: Key) -> Value? {
        get {
            guard let (realm, owner, p) = managedContext else { return unmanaged.first { $0.key == key }?.value }
            return readStored(realm, owner, p) { try $0.dictionaryValue($1, $2, key: key._rlmKey) }
                .map { storedElement($0, .entry(key._rlmKey), realm) }
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeObject(for: key) }
        }
    }

    /// The value of `key` (the same as the subscript).
    public func object(forKey key: Key) -> Value? { self[key] }

    /// Whether some entry satisfies `predicate`.
    public func contains(where predicate: ((key: Key, value: Value)) throws -> Bool) rethrows -> Bool {
        try entries.contains { try predicate($0) }
    }

    /// The entries as `(key:, value:)` pairs.
    public func asKeyValueSequence() -> [(key: Key, value: Value)] { entries }

    // MARK: Writing

    static func checkKey(_ key: String) throws {
        let reason: String? = key.isEmpty ? "it is empty"
            : key.hasPrefix("$") ? "it starts with '$'"
            : key.contains(".") ? "it contains '.'"
            : key.contains("\0") ? "it contains NUL" : nil
        if let reason { throw RealmError.invalidValue(className: "Map", property: "(key)", reason: "invalid key '\(key)': \(reason)") }
    }

    /// Sets the value of `key`, adding the key when the map has none.
    public func updateValue(_ value: Value, forKey key: Key) {
        if owner == nil {
            do { try Self.checkKey(key._rlmKey) } catch { fatalError("\(error)") }
            if let i = unmanaged.firstIndex(where: { $0.key == key }) { unmanaged[i].value = value } else { unmanaged.append((key, value)) }
            return
        }
        if let (realm, owner, p) = managedContext, realm.linksToEmbedded(p.schema), let o = value as? Object {
            do {
                try realm.createEmbedded(o, parent: owner.key, parentInfo: owner.info, property: propertyIndex, at: .dictionary(key._rlmKey))
            } catch {
                fatalError("cannot set a value of '\(owner.info.name).\(p.name)': \(error)")
            }
            return
        }
        modify("set a map value") { tx, k, h, realm in try tx.dictionarySet(k, h, key: key._rlmKey, value._rlmToStored(realm)) }
    }

    /// Removes `key` and its value.
    public func removeObject(for key: Key) {
        if owner == nil { unmanaged.removeAll { $0.key == key }; return }
        modify("remove a map value") { tx, k, h, _ in _ = try tx.dictionaryRemove(k, h, key: key._rlmKey) }
    }

    public func removeAll() {
        if owner == nil { unmanaged.removeAll(); return }
        modify("empty a map") { tx, k, h, _ in try tx.dictionaryRemoveAll(k, h) }
    }

    /// Adds the entries of `sequence`; for a key the map has, `combine` chooses between the old and new values.
    public func merge<S: Sequence>(_ sequence: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S.Element == (key: Key, value: Value) {
        for (k, v) in sequence {
            if let old = self[k] { updateValue(try combine(old, v), forKey: k) } else { updateValue(v, forKey: k) }
        }
    }

    public func merge(_ other: Map<Key, Value>, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.entries, uniquingKeysWith: combine)
    }

    /// Replaces the whole contents.
    func setAll(_ entries: [(key: Key, value: Value)]) {
        if owner == nil { unmanaged = entries; return }
        modify("replace a map") { tx, k, h, realm in
            try tx.setDictionary(k, h, ValueDictionary(try entries.map { ($0.key._rlmKey, try $0.value._rlmToStored(realm)) }))
        }
    }

    // MARK: Key-value coding

    /// The value of `key`, as an object (nil when the map has no such key).
    public func value(forKey key: String) -> AnyObject? {
        guard let v = self[Key._rlmFromKey(key)] else { return nil }
        return (v._rlmKeyValue ?? NSNull()) as AnyObject
    }

    public func value(forKeyPath keyPath: String) -> AnyObject? { value(forKey: keyPath) }

    /// Sets `key` from a loosely typed value (nil removes it).
    public func setValue(_ value: Any?, forKey key: String) {
        guard let value, !(value is NSNull) || Value.self is ExpressibleByNilLiteral.Type else {
            removeObject(for: Key._rlmFromKey(key))
            return
        }
        guard let v = Value._rlmFromAny(value) else {
            fatalError("Map<\(Key.self), \(Value.self)>: \(type(of: value)) is not a value of type \(Value.self)")
        }
        updateValue(v, forKey: Key._rlmFromKey(key))
    }
}

extension Map: Sequence {
    public func makeIterator() -> IndexingIterator<[SingleMapEntry<Key, Value>]> {
        entries.map { SingleMapEntry(key: $0.key, value: $0.value) }.makeIterator()
    }
}

// MARK: - Queries over the values

extension Map {
    /// The values as results (in the keys' order), for queries, sorting and aggregates. For a map of values
    /// `self` is each value; for a map of objects (`Map<String, Dog?>`) the results hold the objects its values
    /// link to, queried and sorted by their properties, and a nil value is no object (as in Realm Core, a query
    /// over a dictionary of links never matches a null).
    public var valueResults: Results<Value> {
        guard Value.self is Object.Type || Value.self is _RecordingLink.Type else {
            return collectionResults(.dictionaryValues, Value.self)
        }
        guard let owner else {
            preconditionFailure("queries on an unmanaged Map are not supported; use Swift's filter and sorted")
        }
        return Results(realm: owner.realm, source: .list(owner, propertyIndex), model: Value.self)
    }

    /// The values matching a query: `self` is each value of a map of values (`filter("self > 3")`); the
    /// properties of the objects of a map of objects (`filter("age > 3")`).
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value> {
        do {
            return try valueResults.filter(query: predicateFormat, arguments: args)
        } catch {
            fatalError("invalid query: \(error)")
        }
    }

    /// The values for which a type-safe query holds, as `RealmCollection.where`: `pets.where { $0.age > 3 }`.
    public func `where`(_ isIncluded: (Query<Value>) -> Query<Bool>) -> Results<Value> {
        valueResults.where(isIncluded)
    }

    /// The values sorted: by `self` for a map of values, by a property of the objects of a map of objects.
    public func sorted(byKeyPath keyPath: String = "self", ascending: Bool = true) -> Results<Value> {
        valueResults.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The values sorted by several key paths (`self` for a map of values).
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Value> where S.Element == SortDescriptor {
        valueResults.sorted(by: descriptors)
    }

    /// The smallest value (`self`), or nil when there is none.
    public func min<T: _Persistable>(ofProperty property: String) -> T? { valueResults.min(ofProperty: property) }
    /// The largest value (`self`), or nil when there is none.
    public func max<T: _Persistable>(ofProperty property: String) -> T? { valueResults.max(ofProperty: property) }
    /// The sum of the values (`self`); 0 when empty.
    public func sum<T: _Persistable>(ofProperty property: String) -> T { valueResults.sum(ofProperty: property) }
    /// The mean of the values (`self`), or nil when empty.
    public func average<T: _Persistable>(ofProperty property: String) -> T? { valueResults.average(ofProperty: property) }
}

extension Map: CustomStringConvertible {
    public var description: String {
        "Map<\(Key.self), \(Value.self)> {" + entries.map { "\($0.key): \(Object.describe($0.value))" }.joined(separator: ", ") + "}"
    }
}

extension Map: _AnyMap {
    func _rlmStoredEntries(_ realm: Realm) throws -> ValueDictionary {
        ValueDictionary(try entries.map { ($0.key._rlmKey, try $0.value._rlmToStored(realm)) })
    }

    func _rlmAnyEntries() -> [(String, Any?)] { entries.map { ($0.key._rlmKey, $0.value as Any?) } }
}

extension Map where Value: Comparable {
    public func min() -> Value? { values.min() }
    public func max() -> Value? { values.max() }
    /// The values sorted.
    public func sorted(ascending: Bool = true) -> [Value] { ascending ? values.sorted() : values.sorted(by: >) }
}

extension Map where Value: AdditiveArithmetic {
    public func sum() -> Value { values.reduce(.zero, +) }
}

// MARK: - As a property type

extension Map: _Persistable {
    public static var _rlmDescriptor: _PropertyDescriptor {
        var d = Value._rlmDescriptor
        d.isDictionary = true
        return d
    }

    public static func _rlmDefaultValue() -> Map<Key, Value> { Map() }

    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> Map<Key, Value> {
        fatalError("maps are read through their owner")
    }

    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value {
        throw RealmError.invalidValue(className: "Map", property: "(map)", reason: "a map is not a single value")
    }

    public static func _rlmFromAny(_ any: Any) -> Map<Key, Value>? {
        if let m = any as? Map<Key, Value> {
            if m.owner == nil { return m }
            let c = Map()
            c.unmanaged = m.entries
            return c
        }
        let pairs: [(String, Any?)]
        if let d = any as? [String: Any?] {
            pairs = d.map { ($0.key, $0.value) }
        } else if let d = any as? [String: Any] {
            pairs = d.map { ($0.key, $0.value) }
        } else {
            return nil
        }
        let out = Map()
        for (k, e) in pairs.sorted(by: { SetOrder.compareUTF8($0.0, $1.0) < 0 }) {
            guard let v = e.flatMap({ Value._rlmFromAny($0) }) ?? (e == nil ? Value._rlmFromAny(NSNull()) : nil) else { return nil }
            out.unmanaged.append((Key._rlmFromKey(k), v))
        }
        return out
    }

    public static func _rlmGet(_ object: Object, _ index: Int) -> Map<Key, Value> { Map(owner: object._ref!, index: index) }

    public static func _rlmSet(_ object: Object, _ index: Int, _ value: Map<Key, Value>) {
        let entries = value.entries
        Map(owner: object._ref!, index: index).setAll(entries)
    }
}

/// The older style: `let scores = Map<String, Int>()` as a plain stored property.
extension Map: RealmField {
    static func describe(_ field: UnsafeRawPointer, label: String) -> FieldDescription {
        FieldDescription(name: label, descriptor: _rlmDescriptor)
    }

    static func bind(_ field: UnsafeMutableRawPointer, to object: Object, index: Int) {
        let map = field.assumingMemoryBound(to: Map<Key, Value>.self).pointee
        map.unmanaged = []
        map.owner = object._ref
        map.propertyIndex = index
    }

    static func unmanagedContent(_ field: UnsafeRawPointer) -> UnmanagedContent {
        let map = field.assumingMemoryBound(to: Map<Key, Value>.self).pointee
        let entries = map.entries
        return .dictionary { realm in ValueDictionary(try entries.map { ($0.key._rlmKey, try $0.value._rlmToStored(realm)) }) }
    }

    static func setUnmanaged(_ field: UnsafeMutableRawPointer, _ any: Any) -> Bool {
        guard let m = _rlmFromAny(any) else { return false }
        field.assumingMemoryBound(to: Map<Key, Value>.self).pointee.unmanaged = m.entries
        return true
    }

    static func unmanagedValue(_ field: UnsafeRawPointer) -> Any? { field.assumingMemoryBound(to: Map<Key, Value>.self).pointee }

    static func managedValue(_ object: Object, _ index: Int) -> Any? { Map(owner: object._ref!, index: index) }
}

// MARK: - Notifications

/// A change to a `Map`: the keys deleted (of the previous version), inserted and modified.
public enum RealmMapChange<Collection> {
    case initial(Collection)
    case update(Collection, deletions: [String], insertions: [String], modifications: [String])
    case error(Error)
}

extension Map {
    /// Calls `block` with `.initial` now, then with the keys deleted, inserted and modified after every change to
    /// the map (by key, as Realm). When the owning object is deleted, a last update deletes every key.
    /// `keyPaths` is accepted for realm-swift's signature: a map reports the keys whose values changed, and a
    /// change inside an object a value links to is not a change of the map. With `queue`, the block runs on
    /// that serial queue with the map as a Realm confined to it reads it.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmMapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        guard let owner else { preconditionFailure("only managed maps can be observed") }
        if let queue {
            return CollectionOnQueue.observe(owner: owner, propertyIndex: propertyIndex, on: queue,
                                             make: { Map<Key, Value>(owner: $0, index: $1) },
                                             observe: { $0.observe(keyPaths: keyPaths, block) },
                                             failed: { block(.error($0)) })
        }
        let map = self
        let notifier = MapNotifier(owner: owner, propertyIndex: propertyIndex) { c in
            block(.update(map, deletions: c.0, insertions: c.1, modifications: c.2))
        } failed: { block(.error($0)) }
        return observe(with: notifier) { block(.initial(self)) }
    }
}

/// Delivers a map's changes by key: the dictionaries of the two versions compared.
final class MapNotifier: CollectionPropertyNotifier<([String], [String], [String])>, Notifier {
    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) throws {
        guard !done else { return }
        let (gone, own) = try state(changes)
        guard gone || own else { return }
        let before = try read(changes.old, empty: ValueDictionary()) { try $0.dictionary(owner.key, $1) }
        let after = try read(changes.new, empty: ValueDictionary()) { try $0.dictionary(owner.key, $1) }
        var deletions: [String] = [], insertions: [String] = [], modifications: [String] = []
        for (k, v) in before {
            if let w = after[k] { if w != v { modifications.append(k) } } else { deletions.append(k) }
        }
        for (k, _) in after where before[k] == nil { insertions.append(k) }
        if notify && !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) {
            changed((deletions, insertions, modifications))
        }
    }
}
