import Foundation
import RealmQuery
import RealmStorage

protocol _AnyResults {
    func _rlmAnyElements() -> [Any?]
}

/// A sort key: a property (or a key path through to-one links, `owner.name`) and a direction.
public struct SortDescriptor: Sendable, Equatable, Hashable {
    public let keyPath: String
    public let ascending: Bool

    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }
}

/// `sorted(by: ["name", SortDescriptor(keyPath: "age", ascending: false)])`, as in realm-swift.
extension SortDescriptor: ExpressibleByStringLiteral {
    public init(stringLiteral keyPath: String) { self.init(keyPath: keyPath) }
}

extension SortDescriptor: CustomStringConvertible {
    public var description: String { "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))" }
}

/// Lazy, auto-updating results: the objects of a class, list or linking objects, or the values of a list of
/// primitives, filtered, sorted and made distinct in the order the operations were chained. Nothing is read
/// until the results are used, and they re-evaluate whenever what their Realm reads has changed (a commit, a
/// refresh, a write in progress).
///
/// Results of objects evaluate to object keys; results of values (`List<Int>.sorted(ascending:)`,
/// `.filter("self > 3")`) evaluate to the stored values themselves.
public struct Results<Element: RealmCollectionValue> {
    enum Source {
        /// Every object of a class.
        case table(String)
        /// The objects of a list or set property, or of a map's values.
        case list(ObjectRef, Int)
        case linkingObjects(ObjectRef, Int)
        /// Values, not objects: a collection of primitives (or other non-object elements) in one property.
        case values(ValueCollection)
    }

    enum Operation {
        case filter((Element) -> Bool)
        case sort([SortDescriptor])
        case distinct([String])
        /// A query in the query language, with its arguments (RealmQuery); includes its SORT/DISTINCT/LIMIT.
        case query(RealmQuery.Query, [QueryArgument])
    }

    public let realm: Realm?
    let source: Source
    let model: Element.Type
    /// The model class of results of objects (`Element` itself, or `DynamicObject`); nil for results of values.
    let objectModel: Object.Type?
    /// Whether the source is a collection of values (kept apart so element access never copies the source).
    let holdsValues: Bool
    let operations: [Operation]
    let cache = ResultsCache()

    init(realm: Realm, source: Source, model: Element.Type, operations: [Operation] = []) {
        self.realm = realm
        self.source = source
        self.model = model
        self.operations = operations
        // Results of a map's optional objects (`Results<Dog?>` of a `Map<String, Dog?>`) are of their class.
        objectModel = model as? Object.Type ?? (model as? _RecordingLink.Type)?._rlmObjectType
        if case .values = source { holdsValues = true } else {
            holdsValues = false
            precondition(objectModel != nil, "results of \(Element.self) need a collection of values")
        }
    }

    var rlmRealm: Realm { realm! }

    func appending(_ op: Operation) -> Results<Element> {
        Results(realm: rlmRealm, source: source, model: model, operations: operations + [op])
    }

    /// The collection of values these results read, or nil for results of objects.
    var valueCollection: ValueCollection? {
        if case .values(let c) = source { return c }
        return nil
    }

    /// The class of the objects (for results of values, the owning object's class and property, for messages).
    var className: String {
        switch source {
        case .table(let name): return name
        case .list(let o, let i), .linkingObjects(let o, let i): return o.info.properties[i].schema.objectClassName ?? ""
        case .values(let c): return "\(c.owner.info.name).\(c.property.name)"
        }
    }

    // MARK: Evaluation

    /// The keys of the objects, in order; recomputed when the Realm's contents may have changed. Empty for
    /// results of values.
    var keys: [ObjectKey] {
        do {
            return try evaluatedKeys()
        } catch {
            rlmRealm.rlm.readFailed(error, "evaluate results of \(className)")
        }
    }

    /// `keys`, throwing what evaluating them met (notifications deliver it as `.error`).
    func evaluatedKeys() throws -> [ObjectKey] {
        let realm = rlmRealm
        realm.verifyThread("Results")
        let stamp = realm.rlm.changeCount
        if cache.stamp == stamp, let keys = cache.keys, cache.core === realm.rlm { return keys }
        let keys = try evaluate(realm)
        cache.core = realm.rlm
        cache.keys = keys
        cache.stamp = stamp
        return keys
    }

    /// The stored values of results of values, in order; recomputed when the Realm's contents may have changed.
    var storedValues: [RealmStorage.Value] {
        do {
            return try evaluatedValues()
        } catch {
            rlmRealm.rlm.readFailed(error, "evaluate results of \(className)")
        }
    }

    /// `storedValues`, throwing what evaluating them met.
    func evaluatedValues() throws -> [RealmStorage.Value] {
        let realm = rlmRealm
        realm.verifyThread("Results")
        guard let c = valueCollection else { return [] }
        let stamp = realm.rlm.changeCount
        if cache.stamp == stamp, let values = cache.values, cache.core === realm.rlm { return values }
        let values = try evaluateValues(realm, c)
        cache.core = realm.rlm
        cache.values = values
        cache.stamp = stamp
        return values
    }

    /// The number of elements (objects or values).
    var elementCount: Int { holdsValues ? storedValues.count : keys.count }

    private func baseKeys(_ realm: Realm) throws -> [ObjectKey] {
        let reader = realm.reader
        switch source {
        case .table(let name):
            guard reader.classSchema(name) != nil else { return [] }
            return try RealmError.wrap { try reader.keys(reader.table(name)) }
        case .list(let o, let i), .linkingObjects(let o, let i):
            // An owner deleted in this version has no list: its results are empty (its List is invalidated).
            guard try RealmError.wrap({ try reader.exists(o.info.table, o.key) }) else { return [] }
            let h = o.info.properties[i].handle
            // A map of objects gives its values' objects in its keys' order; a null value is no object, as in Realm
            // Core's queries over a dictionary of links.
            let values = try RealmError.wrap { h.isDictionary ? try reader.dictionary(o.key, h).map(\.1) : try reader.list(o.key, h) }
            return values.compactMap { v -> ObjectKey? in
                if case .link(let k) = v { return k }
                return nil
            }
        case .values:
            return []
        }
    }

    private func evaluate(_ realm: Realm) throws -> [ObjectKey] {
        if holdsValues { return [] }
        var operations = self.operations[...]
        var keys: [ObjectKey]
        // A query first on a whole class is planned over the table (indexes, column scans), not over its keys.
        if case .table = source, case .query(let q, let args)? = operations.first {
            keys = try evaluateQuery(q, args, realm, nil)
            operations = operations.dropFirst()
        } else {
            keys = try baseKeys(realm)
        }
        let name = className
        for op in operations {
            switch op {
            case .query(let q, let args):
                keys = try evaluateQuery(q, args, realm, keys)
            case .filter(let isIncluded):
                keys = keys.filter { isIncluded(object(realm, name, $0)) }
            case .sort(let descriptors):
                // As Realm Core: a null link on the way sorts after every value ascending, before them descending.
                let paths = try descriptors.map { try KeyPathReader(realm: realm, className: name, keyPath: $0.keyPath) }
                let values = try keys.map { k in try paths.map { try $0.value(k) } }
                var order = Array(keys.indices)
                order.sort { a, b in
                    for (d, (va, vb)) in zip(descriptors, zip(values[a], values[b])) {
                        if va.isEmpty || vb.isEmpty {
                            if va.isEmpty == vb.isEmpty { continue }
                            return d.ascending ? vb.isEmpty : va.isEmpty
                        }
                        let c = StoredOrder.compare(va[0], vb[0])
                        if c != 0 { return d.ascending ? c < 0 : c > 0 }
                    }
                    return a < b
                }
                keys = order.map { keys[$0] }
            case .distinct(let keyPaths):
                // As Realm Core: an object whose key path meets a null link is left out.
                let paths = try keyPaths.map { try KeyPathReader(realm: realm, className: name, keyPath: $0) }
                var seen = Set<[RealmStorage.Value]>()
                keys = try keys.filter { k in
                    var combo: [RealmStorage.Value] = []
                    for p in paths {
                        guard let v = try p.value(k).first else { return false }
                        combo.append(v)
                    }
                    return seen.insert(combo).inserted
                }
            }
        }
        return keys
    }

    /// Results of values: the collection's values, then each operation. Sorting and distinct are by the value
    /// itself (`self`, the only key path a value has), in the order the query language's SORT and DISTINCT use.
    private func evaluateValues(_ realm: Realm, _ c: ValueCollection) throws -> [RealmStorage.Value] {
        var values = try c.read(realm)
        for op in operations {
            switch op {
            case .query(let q, let args):
                let bound = try c.bind(q, args)
                values = bound.evaluate(values).map { values[$0] }
            case .filter(let isIncluded):
                values = values.filter { isIncluded(Element._rlmFromStored($0, realm)) }
            case .sort(let descriptors):
                // Every descriptor is `self`: the first decides; the sort is stable.
                let ascending = descriptors.first?.ascending ?? true
                values = values.enumerated().sorted { a, b in
                    let c = StoredOrder.compare(a.element, b.element)
                    if c != 0 { return ascending ? c < 0 : c > 0 }
                    return a.offset < b.offset
                }.map(\.element)
            case .distinct:
                var seen = Set<RealmStorage.Value>()
                values = values.filter { seen.insert(StoredOrder.distinctKey($0)).inserted }
            }
        }
        return values
    }

    func object(_ realm: Realm, _ className: String, _ key: ObjectKey) -> Element {
        if model == DynamicObject.self {
            do {
                return realm.dynamicObject(try realm.rlm.dynamicInfo(className), key) as! Element
            } catch {
                realm.rlm.readFailed(error, "read the class \(className)")
            }
        }
        let model = objectModel!
        if let info = cache.info(realm, model) {
            if ObjectIdentifier(model) != ObjectIdentifier(Element.self) {
                // `Element` is the optional of the model class (a map's values).
                return realm.makeObject(model, key: key, info: info) as! Element
            }
            // `Element` is the model class itself (results of objects are made only for object elements).
            return unsafeBitCast(realm.makeObject(model, key: key, info: info), to: Element.self)
        }
        guard let o = realm.object(of: className, key: key, preferring: model) as? Element else {
            fatalError("results of \(className) cannot hold \(Element.self)")
        }
        return o
    }

    // MARK: Chaining

    /// The objects for which `isIncluded` is true (evaluated lazily, again after each change).
    public func filter(_ isIncluded: @escaping (Element) -> Bool) -> Results<Element> { appending(.filter(isIncluded)) }

    /// Sorted by a property or a key path through to-one links. Nulls sort first; strings sort by Unicode
    /// code point; the sort is stable. An object whose key path meets a null link (`owner.name` without an
    /// owner) sorts last ascending and first descending, as in Realm.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        let d = Array(descriptors)
        validate(d.map(\.keyPath))
        return appending(.sort(d))
    }

    /// The first object of each distinct combination of values of `keyPaths`; an object whose key path meets
    /// a null link is left out, as in Realm.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        let k = Array(keyPaths)
        validate(k)
        return appending(.distinct(k))
    }

    private func validate(_ keyPaths: [String]) {
        let realm = rlmRealm
        if holdsValues {
            for k in keyPaths where k != "self" {
                preconditionFailure("'\(k)' is not 'self': results of \(Element.self) values are sorted and made distinct by 'self'")
            }
            return
        }
        guard realm.reader.classSchema(className) != nil else { return }
        for k in keyPaths {
            do {
                _ = try KeyPathReader(realm: realm, className: className, keyPath: k)
            } catch {
                preconditionFailure("\(error)")
            }
        }
    }

    // MARK: Aggregates

    /// The non-null values of a property of the results' objects (`self` for results of values).
    func storedValues(ofProperty name: String) -> [RealmStorage.Value] { values(ofProperty: name) }

    private func values(ofProperty name: String) -> [RealmStorage.Value] {
        let realm = rlmRealm
        if holdsValues {
            precondition(name == "self", "'\(name)' is not 'self': an aggregate of \(Element.self) values is of 'self'")
            return storedValues.filter { !$0.isNull }
        }
        do {
            let reader = try KeyPathReader(realm: realm, className: className, keyPath: name)
            return try keys.map { try reader.value($0).first ?? .null }.filter { !$0.isNull }
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// The smallest value of a property (numbers across types, exactly; NaN and nulls skipped), or nil.
    public func min<T: _Persistable>(ofProperty property: String) -> T? {
        StoredAggregate.min(values(ofProperty: property), rlmRealm)
    }

    /// The largest value of a property (numbers across types, exactly; NaN and nulls skipped), or nil.
    public func max<T: _Persistable>(ofProperty property: String) -> T? {
        StoredAggregate.max(values(ofProperty: property), rlmRealm)
    }

    /// The sum of a numeric property (0 when empty); nulls are skipped. A decimal128 property is summed in
    /// decimal arithmetic, exact to 34 digits, as the query language's `@sum` (`ValueAggregate`).
    public func sum<T: _Persistable>(ofProperty property: String) -> T {
        StoredAggregate.sum(values(ofProperty: property))
    }

    /// The mean of a numeric property, or nil when there are no non-null values; a decimal128 property's is
    /// a decimal (its decimal sum divided by the count), as the query language's `@avg`.
    public func average<T: _Persistable>(ofProperty property: String) -> T? {
        StoredAggregate.average(values(ofProperty: property))
    }

    /// The position of an object (or value) in the results, if present.
    public func index(of element: Element) -> Int? {
        let realm = rlmRealm
        if holdsValues {
            // A value that cannot be stored (never the case for the value types) is in no collection.
            guard let v = try? element._rlmToStored(realm) else { return nil }  // throws only for a value no property stores: in no results
            return storedValues.firstIndex { StoredAggregate.same($0, v) }
        }
        guard let object = element as? Object, object._realm?.rlm.database === realm.rlm.database,
              object._info?.name == className else { return nil }
        return keys.firstIndex(of: object._key)
    }
}

/// The evaluated keys of a `Results`, with the change count they were computed at.
final class ResultsCache {
    weak var core: RealmCore?
    var keys: [ObjectKey]?
    var values: [RealmStorage.Value]?
    var stamp: UInt64 = 0
    private var typedInfo: ClassInfo?

    func info(_ realm: Realm, _ model: Object.Type) -> ClassInfo? {
        if let i = typedInfo, realm.rlm.typedInfos[ObjectIdentifier(model)] === i { return i }
        do {
            // Nil: the file has no table for the class yet.
            typedInfo = try realm.rlm.info(for: model)
        } catch {
            realm.rlm.readFailed(error, "read the class \(model.className())")
        }
        return typedInfo
    }
}

extension Results: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { elementCount }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    public subscript(position: Int) -> Element {
        let realm = rlmRealm
        if holdsValues {
            let v = storedValues
            precondition(position >= 0 && position < v.count, "Results index \(position) is out of bounds (count \(v.count))")
            return Element._rlmFromStored(v[position], realm)
        }
        let k = keys
        precondition(position >= 0 && position < k.count, "Results index \(position) is out of bounds (count \(k.count))")
        return object(realm, className, k[position])
    }

    public var count: Int { elementCount }

    public struct Iterator: IteratorProtocol {
        let results: Results<Element>
        let keys: [ObjectKey]
        let values: [RealmStorage.Value]
        let name: String
        var i = 0

        public mutating func next() -> Element? {
            if results.holdsValues {
                guard i < values.count else { return nil }
                defer { i += 1 }
                return Element._rlmFromStored(values[i], results.rlmRealm)
            }
            guard i < keys.count else { return nil }
            defer { i += 1 }
            return results.object(results.rlmRealm, name, keys[i])
        }
    }

    /// Iterates over the elements as they were when iteration began.
    public func makeIterator() -> Iterator {
        if holdsValues { return Iterator(results: self, keys: [], values: storedValues, name: className) }
        return Iterator(results: self, keys: keys, values: [], name: className)
    }
}

extension Results: _AnyResults {
    func _rlmAnyElements() -> [Any?] { map { $0 } }
}

extension Results: CustomStringConvertible {
    public var description: String {
        holdsValues ? "Results<\(Element.self)> (\(count) values)" : "Results<\(className)> (\(count) objects)"
    }
}

/// Reads the value at a key path (`name`, `owner.name`) of objects of one class.
struct KeyPathReader {
    let steps: [(ClassInfo, Int)]

    init(realm: Realm, className: String, keyPath: String) throws {
        var steps: [(ClassInfo, Int)] = []
        var current = className
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (n, part) in parts.enumerated() {
            let info = try realm.rlm.dynamicInfo(current)
            guard let i = info.index(of: part) else {
                throw RealmError.noSuchProperty(className: current, property: part)
            }
            let s = info.properties[i].schema
            if s.isList || s.isCollection || s.type == .linkingObjects {
                throw RealmError.invalidValue(className: current, property: part,
                                              reason: "key path '\(keyPath)' goes through a list; only to-one links can be followed when sorting")
            }
            if n < parts.count - 1 {
                guard s.type == .link, let target = s.objectClassName else {
                    throw RealmError.invalidValue(className: current, property: part,
                                                  reason: "key path '\(keyPath)' continues after a property that is not a link")
                }
                current = target
            }
            steps.append((info, i))
        }
        self.steps = steps
        self.realm = realm
    }

    let realm: Realm

    /// The value as a one-element array, or no element when a link on the way is null (sorting and distinct
    /// treat that apart from a null value, as Realm does).
    func value(_ key: ObjectKey) throws -> [RealmStorage.Value] {
        var k = key
        let reader = realm.reader
        for (n, (info, i)) in steps.enumerated() {
            let v = try RealmError.wrap { try reader.value(k, info.properties[i].handle) }
            if n == steps.count - 1 { return [v] }
            guard case .link(let next) = v else { return [] }
            k = next
        }
        return [.null]
    }
}

/// Ordering and numeric helpers for stored values; the order itself is RealmQuery's `ValueOrder`.
enum StoredOrder {
    static func isNaN(_ v: RealmStorage.Value) -> Bool {
        switch v {
        case .float(let f): return f.isNaN
        case .double(let d): return d.isNaN
        case .decimal128(let d): return d.isNaN
        default: return false
        }
    }

    /// The same order as the query language's SORT.
    static func compare(_ a: RealmStorage.Value, _ b: RealmStorage.Value) -> Int { ValueOrder.compare(a, b) }

    /// What DISTINCT compares: strings bytewise (not by canonical equivalence), every NaN alike.
    static func distinctKey(_ v: RealmStorage.Value) -> RealmStorage.Value {
        switch v {
        case .string(let s): return .data(Array(s.utf8))
        case .double(let d) where d.isNaN: return .double(.nan)
        case .float(let f) where f.isNaN: return .float(.nan)
        default: return v
        }
    }
}
