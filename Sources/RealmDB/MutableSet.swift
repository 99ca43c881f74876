import Foundation
import RealmStorage

/// Type-erased access to sets, for conversions.
protocol _AnyMutableSet {
    func _rlmStoredElements(_ realm: Realm) throws -> [RealmStorage.Value]
    func _rlmAnyElements() -> [Any?]
}

/// An unordered collection of unique values or objects (Realm's `MutableSet`): a to-many relationship without
/// duplicates (`MutableSet<Dog>`) or a set of primitives (`MutableSet<String>`, `MutableSet<Int?>`).
///
/// Managed sets keep Realm Core's order (by value; numbers of every type compare by value, so 1 and 1.0 are one
/// element of a `MutableSet<AnyRealmValue>`), stable within a version; unmanaged sets keep insertion order.
public final class MutableSet<Element: RealmCollectionValue>: CollectionProperty {
    static var typeName: String { "MutableSet" }
    var unmanaged: [Element] = []
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
        return storedElements().map { Element._rlmFromStored($0, realm) }
    }

    public var count: Int { managedContext == nil ? unmanaged.count : storedElements().count }

    /// The element at `position`, in the set's order (stable within a version; not insertion order).
    public subscript(position: Int) -> Element {
        let all = elements
        precondition(position >= 0 && position < all.count, "MutableSet position \(position) is out of bounds (count \(all.count))")
        return all[position]
    }


    /// Two unmanaged elements are the same element: the same object, or equal values.
    static func same(_ a: Element, _ b: Element) -> Bool {
        if let x = a as? Object, let y = b as? Object { return x === y || x.isSameObject(as: y) }
        if let x = a as? AnyHashable, let y = b as? AnyHashable { return x == y }
        return false
    }

    public func contains(_ element: Element) -> Bool {
        guard let (realm, owner, p) = managedContext else { return unmanaged.contains { Self.same($0, element) } }
        if let o = element as? Object, o.realm == nil { return false }  // an unmanaged object is in no managed set
        return readStored(realm, owner, p) { try $0.setContains($1, $2, try element._rlmToStored(realm)) }
    }

    /// Whether every element of this set is in `other`.
    public func isSubset(of other: MutableSet<Element>) -> Bool { elements.allSatisfy { other.contains($0) } }

    /// Whether this set and `other` have an element in common.
    public func intersects(_ other: MutableSet<Element>) -> Bool { elements.contains { other.contains($0) } }

    // MARK: Writing

    /// Adds `element` unless the set holds it already.
    public func insert(_ element: Element) {
        if owner == nil {
            if !unmanaged.contains(where: { Self.same($0, element) }) { unmanaged.append(element) }
            return
        }
        modify("insert into a set") { tx, key, h, realm in _ = try tx.setInsert(key, h, element._rlmToStored(realm)) }
    }

    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        for e in elements { insert(e) }
    }

    /// Removes `element` if the set holds it.
    public func remove(_ element: Element) {
        if owner == nil { unmanaged.removeAll { Self.same($0, element) }; return }
        if let o = element as? Object, o.realm == nil { return }
        modify("remove from a set") { tx, key, h, realm in _ = try tx.setRemove(key, h, element._rlmToStored(realm)) }
    }

    public func removeAll() {
        if owner == nil { unmanaged.removeAll(); return }
        modify("empty a set") { tx, key, h, _ in try tx.setRemoveAll(key, h) }
    }

    /// Keeps only the elements that are also in `other`.
    public func formIntersection(_ other: MutableSet<Element>) {
        for e in elements where !other.contains(e) { remove(e) }
    }

    /// Removes the elements that are in `other`.
    public func subtract(_ other: MutableSet<Element>) {
        for e in other.elements { remove(e) }
    }

    /// Adds the elements of `other`.
    public func formUnion(_ other: MutableSet<Element>) {
        for e in other.elements { insert(e) }
    }

    /// Replaces the whole contents.
    func setAll(_ elements: [Element]) {
        if owner == nil {
            unmanaged = []
            for e in elements { insert(e) }
            return
        }
        modify("replace a set") { tx, key, h, realm in try tx.setAssign(key, h, elements.map { try $0._rlmToStored(realm) }) }
    }

    /// The value of `key` of every element (objects), or the elements themselves for `self`.
    public func value(forKey key: String) -> [AnyObject] {
        elements.map { e -> AnyObject in
            if let o = e as? Object, key != "self" { return (o[key] ?? NSNull()) as AnyObject }
            return e as AnyObject
        }
    }

    public func value(forKeyPath keyPath: String) -> [AnyObject] { value(forKey: keyPath) }
}

extension MutableSet {
    public func makeIterator() -> IndexingIterator<[Element]> { elements.makeIterator() }
}

extension MutableSet: CustomStringConvertible {
    public var description: String { "MutableSet<\(Element.self)> \(elements.map { Object.describe($0) })" }
}

extension MutableSet: _AnyMutableSet {
    func _rlmStoredElements(_ realm: Realm) throws -> [RealmStorage.Value] {
        try elements.map { try $0._rlmToStored(realm) }
    }

    func _rlmAnyElements() -> [Any?] { elements.map { $0 } }
}

extension MutableSet: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }
}

extension MutableSet: RealmCollection {
    /// The position of an element (the same object, or an equal value in Realm's sense), if present.
    public func index(of element: Element) -> Int? {
        guard let (realm, _, _) = managedContext else { return unmanaged.firstIndex { Self.same($0, element) } }
        if let o = element as? Object, o.realm == nil { return nil }
        // A value that cannot be stored (an object of another class) is in no set.
        guard let v = try? element._rlmToStored(realm) else { return nil }  // throws only for a value no set stores: in no set
        return storedElements().firstIndex { SetOrder.compare($0, v) == 0 }
    }

    /// The set's elements as lazy, auto-updating results (in the set's order): its objects, or its values.
    var results: Results<Element> { collectionResults(.list, Element.self) }

    public func filter(query: String, arguments: [Any] = []) throws -> Results<Element> {
        try results.filter(query: query, arguments: arguments)
    }
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        results.sorted(by: descriptors)
    }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        results.distinct(by: keyPaths)
    }
    public func min<T: _Persistable>(ofProperty property: String) -> T? { results.min(ofProperty: property) }
    public func max<T: _Persistable>(ofProperty property: String) -> T? { results.max(ofProperty: property) }
    public func sum<T: _Persistable>(ofProperty property: String) -> T { results.sum(ofProperty: property) }
    public func average<T: _Persistable>(ofProperty property: String) -> T? { results.average(ofProperty: property) }
}

// MARK: - As a property type

extension MutableSet: _Persistable {
    public static var _rlmDescriptor: _PropertyDescriptor {
        var d = Element._rlmDescriptor
        d.isSet = true
        return d
    }

    public static func _rlmDefaultValue() -> MutableSet<Element> { MutableSet() }

    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> MutableSet<Element> {
        fatalError("sets are read through their owner")
    }

    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value {
        throw RealmError.invalidValue(className: "MutableSet", property: "(set)", reason: "a set is not a single value")
    }

    public static func _rlmFromAny(_ any: Any) -> MutableSet<Element>? {
        if let s = any as? MutableSet<Element> {
            if s.owner == nil { return s }
            let c = MutableSet()
            c.unmanaged = s.elements
            return c
        }
        let array: [Any?]
        if let a = Realm.asArray(any) {
            array = a
        } else if let s = any as? Set<AnyHashable> {
            array = Array(s)
        } else {
            return nil
        }
        let out = MutableSet()
        for e in array {
            guard let v = e.flatMap({ Element._rlmFromAny($0) }) ?? (e == nil ? Element._rlmFromAny(NSNull()) : nil) else { return nil }
            out.insert(v)
        }
        return out
    }

    public static func _rlmGet(_ object: Object, _ index: Int) -> MutableSet<Element> { MutableSet(owner: object._ref!, index: index) }

    public static func _rlmSet(_ object: Object, _ index: Int, _ value: MutableSet<Element>) {
        let values = value.elements
        MutableSet(owner: object._ref!, index: index).setAll(values)
    }
}

/// The older style: `let tags = MutableSet<String>()` as a plain stored property.
extension MutableSet: RealmField {
    static func describe(_ field: UnsafeRawPointer, label: String) -> FieldDescription {
        FieldDescription(name: label, descriptor: _rlmDescriptor)
    }

    static func bind(_ field: UnsafeMutableRawPointer, to object: Object, index: Int) {
        let set = field.assumingMemoryBound(to: MutableSet<Element>.self).pointee
        set.unmanaged = []
        set.owner = object._ref
        set.propertyIndex = index
    }

    static func unmanagedContent(_ field: UnsafeRawPointer) -> UnmanagedContent {
        let set = field.assumingMemoryBound(to: MutableSet<Element>.self).pointee
        let elements = set.elements
        return .set { realm in try elements.map { try $0._rlmToStored(realm) } }
    }

    static func setUnmanaged(_ field: UnsafeMutableRawPointer, _ any: Any) -> Bool {
        guard let s = _rlmFromAny(any) else { return false }
        field.assumingMemoryBound(to: MutableSet<Element>.self).pointee.unmanaged = s.elements
        return true
    }

    static func unmanagedValue(_ field: UnsafeRawPointer) -> Any? { field.assumingMemoryBound(to: MutableSet<Element>.self).pointee }

    static func managedValue(_ object: Object, _ index: Int) -> Any? { MutableSet(owner: object._ref!, index: index) }
}

// MARK: - Notifications

extension MutableSet {
    /// Calls `block` with `.initial` now, then after every change to the set with the positions deleted (in the
    /// previous version), inserted and modified (objects whose properties changed; in the previous version).
    /// With `keyPaths`, an object element counts as modified only when one of those properties changed; with
    /// `queue`, the block runs on that serial queue with the set as a Realm confined to it reads it.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<MutableSet<Element>>) -> Void) -> NotificationToken {
        guard let owner else { preconditionFailure("only managed sets can be observed") }
        if let queue {
            return CollectionOnQueue.observe(owner: owner, propertyIndex: propertyIndex, on: queue,
                                             make: { MutableSet<Element>(owner: $0, index: $1) },
                                             observe: { $0.observe(keyPaths: keyPaths, block) },
                                             failed: { block(.error($0)) })
        }
        let set = self
        let notifier = SetNotifier(owner: owner, propertyIndex: propertyIndex) { c in
            block(.update(set, deletions: c.0, insertions: c.1, modifications: c.2))
        } failed: { block(.error($0)) }
        notifier.keyPaths = ObservedKeyPaths(keyPaths)
        return observe(with: notifier) { block(.initial(self)) }
    }
}

/// Delivers a set's changes by position: the elements of the two versions compared (a set's order is its
/// elements' order, so an element keeps its relative place).
final class SetNotifier: CollectionPropertyNotifier<([Int], [Int], [Int])>, Notifier {
    /// When set, the only properties of the elements whose changes make an element modified.
    var keyPaths: ObservedKeyPaths?

    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) throws {
        guard !done else { return }
        let (gone, own) = try state(changes)
        var targetModified = Set<ObjectKey>()
        if property.schema.type == .link, let target = property.schema.objectClassName {
            targetModified = Set(try changes.changes(target).modified.keys)
            if let keyPaths { targetModified = try targetModified.filter { try keyPaths.matches(changes, target, $0) } }
        }
        guard gone || own || !targetModified.isEmpty else { return }
        let before = try read(changes.old, empty: []) { try $0.list(owner.key, $1) }
        let after = try read(changes.new, empty: []) { try $0.list(owner.key, $1) }
        func has(_ list: [RealmStorage.Value], _ v: RealmStorage.Value) -> Bool { list.contains { SetOrder.compare($0, v) == 0 } }
        let deletions = before.indices.filter { !has(after, before[$0]) }
        let insertions = after.indices.filter { !has(before, after[$0]) }
        let modifications = before.indices.filter { i in
            if case .link(let k) = before[i] { return targetModified.contains(k) && has(after, before[i]) }
            return false
        }
        if notify && !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) {
            changed((deletions, insertions, modifications))
        }
    }
}
