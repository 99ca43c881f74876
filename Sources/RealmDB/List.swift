import Foundation
import RealmStorage

/// Type-erased access to lists, for conversions.
protocol _AnyList {
    func _rlmStoredElements(_ realm: Realm) throws -> [RealmStorage.Value]
    func _rlmAnyElements() -> [Any?]
}

/// An ordered list of values or objects: a to-many relationship (`List<Dog>`) or a list of primitives
/// (`List<String>`). Unmanaged lists are plain arrays; managed lists read and write through their object.
public final class List<Element: RealmCollectionValue>: CollectionProperty {
    static var typeName: String { "List" }
    /// The elements of an unmanaged list; for a list nested in a managed mixed value (`nested`), the stored
    /// elements, read and written back on each use.
    var unmanaged: [Element] {
        get {
            guard let nested else { return ownElements }
            return nested.readList() as! [Element]  // `nested` is set on lists of AnyRealmValue only
        }
        set {
            guard let nested else { ownElements = newValue; return }
            nested.writeList(newValue as! [AnyRealmValue])  // `nested` is set on lists of AnyRealmValue only
        }
    }
    private var ownElements: [Element] = []
    /// Set on a list read from a managed mixed value.
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

    func storedElements() -> [RealmStorage.Value] {
        guard let (realm, owner, p) = managedContext else { return [] }
        return readStored(realm, owner, p) { try $0.list($1, $2) }
    }

    var elements: [Element] {
        guard let (realm, _, _) = managedContext else { return unmanaged }
        return storedElements().enumerated().map { storedElement($1, .element($0), realm) }
    }

    public var count: Int {
        managedContext == nil ? unmanaged.count : storedElements().count
    }

    // MARK: Writing

    public func append(_ element: Element) {
        if owner == nil { unmanaged.append(element); return }
        if embed(element, .listInsert(count)) { return }
        modify("append to a list") { tx, key, h, realm in try tx.listAppend(key, h, element._rlmToStored(realm)) }
    }

    /// Stores `element` as a new embedded object at `place` when the list holds embedded objects; false when it
    /// does not.
    private func embed(_ element: Element, _ place: EmbeddedPlace) -> Bool {
        guard let (realm, owner, p) = managedContext, realm.linksToEmbedded(p.schema), let o = element as? Object else { return false }
        do {
            try realm.createEmbedded(o, parent: owner.key, parentInfo: owner.info, property: propertyIndex, at: place)
        } catch {
            fatalError("cannot add to '\(owner.info.name).\(p.name)': \(error)")
        }
        return true
    }

    public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        for e in elements { append(e) }
    }

    public func append<S: Sequence>(contentsOf elements: S) where S.Element == Element { append(objectsIn: elements) }

    public func insert(_ element: Element, at index: Int) {
        if owner == nil { unmanaged.insert(element, at: index); return }
        if embed(element, .listInsert(index)) { return }
        modify("insert into a list") { tx, key, h, realm in try tx.listInsert(key, h, element._rlmToStored(realm), at: index) }
    }

    public func remove(at index: Int) {
        if owner == nil { unmanaged.remove(at: index); return }
        modify("remove from a list") { tx, key, h, _ in try tx.listRemove(key, h, at: index) }
    }

    public func removeFirst() { remove(at: 0) }
    public func removeLast() { remove(at: count - 1) }

    public func removeAll() {
        if owner == nil { unmanaged.removeAll(); return }
        modify("empty a list") { tx, key, h, _ in try tx.listRemoveAll(key, h) }
    }

    public func move(from: Int, to: Int) {
        if owner == nil {
            let e = unmanaged.remove(at: from)
            unmanaged.insert(e, at: to)
            return
        }
        modify("move within a list") { tx, key, h, _ in try tx.listMove(key, h, from: from, to: to) }
    }

    public func replace(index: Int, object: Element) { self[index] = object }

    public func swapAt(_ i: Int, _ j: Int) {
        guard i != j else { return }
        let a = self[i], b = self[j]
        self[i] = b
        self[j] = a
    }

    /// Replaces the whole contents.
    func setAll(_ elements: [Element]) {
        if owner == nil { unmanaged = elements; return }
        if let (realm, owner, p) = managedContext, realm.linksToEmbedded(p.schema) {
            do {
                try realm.setEmbeddedList(elements.compactMap { $0 as? Object }, parent: owner.key, parentInfo: owner.info, property: propertyIndex)
            } catch {
                fatalError("cannot replace '\(owner.info.name).\(p.name)': \(error)")
            }
            return
        }
        modify("replace a list") { tx, key, h, realm in try tx.setList(key, h, elements.map { try $0._rlmToStored(realm) }) }
    }

    public subscript(index: Int) -> Element {
        get {
            if owner == nil { return unmanaged[index] }
            let all = storedElements()
            precondition(index >= 0 && index < all.count, "List index \(index) is out of bounds (count \(all.count))")
            return storedElement(all[index], .element(index), managedContext!.0)
        }
        set {
            if owner == nil { unmanaged[index] = newValue; return }
            if embed(newValue, .listSet(index)) { return }
            modify("set a list element") { tx, key, h, realm in try tx.listSet(key, h, newValue._rlmToStored(realm), at: index) }
        }
    }
}

extension List: RandomAccessCollection, MutableCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    public func makeIterator() -> IndexingIterator<[Element]> { elements.makeIterator() }
}

extension List: CustomStringConvertible {
    public var description: String { "List<\(Element.self)> \(elements.map { Object.describe($0) })" }
}

extension List: _AnyList {
    func _rlmStoredElements(_ realm: Realm) throws -> [RealmStorage.Value] {
        try elements.map { try $0._rlmToStored(realm) }
    }

    func _rlmAnyElements() -> [Any?] { elements.map { $0 } }
}

extension List {
    /// The position of the first element equal to `element` (for objects: the same object), if any.
    public func index(of element: Element) -> Int? {
        if let object = element as? Object {
            return elements.firstIndex { ($0 as? Object)?.isSameObject(as: object) ?? false }
        }
        guard let (realm, _, _) = managedContext else {
            let target = element as? AnyHashable
            return unmanaged.firstIndex { ($0 as? AnyHashable) == target }
        }
        // A value that cannot be stored (never the case for the value types) is in no list.
        guard let v = try? element._rlmToStored(realm) else { return nil }  // throws only for a value no list stores: in no list
        return storedElements().firstIndex { StoredAggregate.same($0, v) }
    }

    /// The list's elements as lazy, auto-updating results (in list order): its objects, or its values.
    var results: Results<Element> { collectionResults(.list, Element.self) }

    /// The list's elements matching a query (list order kept); see `Results.filter(_:_:)`. In a list of
    /// values, `self` is each value: `filter("self > 3")`.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { results.filterOrFail(predicateFormat, args) }
    /// `filter(_:_:)` that throws `RealmError.query` instead of stopping.
    public func filter(query: String, arguments: [Any] = []) throws -> Results<Element> { try results.filter(query: query, arguments: arguments) }
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        results.sorted(by: descriptors)
    }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        results.distinct(by: keyPaths)
    }

    /// The stored values of property `name` of the elements (`self`: the elements themselves), managed or not.
    private func aggregateValues(_ name: String) -> ([RealmStorage.Value], Realm?) {
        if let (realm, _, _) = managedContext {
            if name == "self" && !(Element.self is Object.Type) { return (storedElements().filter { !$0.isNull }, realm) }
            return (results.storedValues(ofProperty: name), realm)
        }
        do {
            let values = try unmanaged.map { e -> RealmStorage.Value in
                if name == "self" { return try RealmQueryArguments.value(e._rlmKeyValue as Any) ?? .null }
                guard let o = e as? Object else {
                    throw RealmError.invalidValue(className: "List", property: name, reason: "a list of \(Element.self) values has only 'self'")
                }
                return try RealmQueryArguments.value(o.value(forProperty: name) as Any) ?? .null
            }
            return (values.filter { !$0.isNull }, nil)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    public func min<T: _Persistable>(ofProperty property: String) -> T? {
        let (v, realm) = aggregateValues(property)
        return StoredAggregate.min(v, realm)
    }

    public func max<T: _Persistable>(ofProperty property: String) -> T? {
        let (v, realm) = aggregateValues(property)
        return StoredAggregate.max(v, realm)
    }

    public func sum<T: _Persistable>(ofProperty property: String) -> T { StoredAggregate.sum(aggregateValues(property).0) }

    public func average<T: _Persistable>(ofProperty property: String) -> T? { StoredAggregate.average(aggregateValues(property).0) }
}

extension List where Element: Object {
    /// The objects for which `isIncluded` is true, as lazy results.
    public func filter(_ isIncluded: @escaping (Element) -> Bool) -> Results<Element> { results.filter(isIncluded) }
}

// MARK: - As a property type

extension List: _Persistable {
    public static var _rlmDescriptor: _PropertyDescriptor {
        var d = Element._rlmDescriptor
        d.isList = true
        return d
    }

    public static func _rlmDefaultValue() -> List<Element> { List() }

    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> List<Element> {
        fatalError("lists are read through their owner")
    }

    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value {
        throw RealmError.invalidValue(className: "List", property: "(list)", reason: "a list is not a single value")
    }

    public static func _rlmFromAny(_ any: Any) -> List<Element>? {
        if let l = any as? List<Element> { return l.owner == nil ? l : { let c = List(); c.unmanaged = l.elements; return c }() }
        guard let array = Realm.asArray(any) else { return nil }
        var out: [Element] = []
        for e in array {
            guard let v = e.flatMap({ Element._rlmFromAny($0) }) ?? (e == nil ? Element._rlmFromAny(NSNull()) : nil) else { return nil }
            out.append(v)
        }
        let l = List()
        l.unmanaged = out
        return l
    }

    public static func _rlmGet(_ object: Object, _ index: Int) -> List<Element> { List(owner: object._ref!, index: index) }

    public static func _rlmSet(_ object: Object, _ index: Int, _ value: List<Element>) {
        let values = value.elements
        List(owner: object._ref!, index: index).setAll(values)
    }
}

/// The older style: `let dogs = List<Dog>()` as a plain stored property.
extension List: RealmField {
    static func describe(_ field: UnsafeRawPointer, label: String) -> FieldDescription {
        FieldDescription(name: label, descriptor: _rlmDescriptor)
    }

    static func bind(_ field: UnsafeMutableRawPointer, to object: Object, index: Int) {
        let list = field.assumingMemoryBound(to: List<Element>.self).pointee
        list.unmanaged = []
        list.owner = object._ref
        list.propertyIndex = index
    }

    static func unmanagedContent(_ field: UnsafeRawPointer) -> UnmanagedContent {
        let list = field.assumingMemoryBound(to: List<Element>.self).pointee
        let elements = list.elements
        if Element._rlmDescriptor.type == .link { return .objectList(elements.compactMap { $0 as? Object }) }
        return .list { realm in try elements.map { try $0._rlmToStored(realm) } }
    }

    static func setUnmanaged(_ field: UnsafeMutableRawPointer, _ any: Any) -> Bool {
        guard let l = _rlmFromAny(any) else { return false }
        field.assumingMemoryBound(to: List<Element>.self).pointee.unmanaged = l.elements
        return true
    }

    static func unmanagedValue(_ field: UnsafeRawPointer) -> Any? { field.assumingMemoryBound(to: List<Element>.self).pointee }

    static func managedValue(_ object: Object, _ index: Int) -> Any? { List(owner: object._ref!, index: index) }
}
