import Foundation
import RealmStorage

/// Element types whose collections have `min()` and `max()` (numbers and dates), as in realm-swift.
public protocol MinMaxType {}
/// Element types whose collections have `sum()` and `average()` (numbers), as in realm-swift.
public protocol AddableType {}
/// Element types whose collections have `sorted(ascending:)` and `distinct()`, as in realm-swift.
public protocol SortableType {}

extension Int: MinMaxType, AddableType, SortableType {}
extension Int8: MinMaxType, AddableType, SortableType {}
extension Int16: MinMaxType, AddableType, SortableType {}
extension Int32: MinMaxType, AddableType, SortableType {}
extension Int64: MinMaxType, AddableType, SortableType {}
extension Float: MinMaxType, AddableType, SortableType {}
extension Double: MinMaxType, AddableType, SortableType {}
extension Decimal128: MinMaxType, AddableType, SortableType {}
extension Date: MinMaxType, SortableType {}
extension String: SortableType {}
extension Data: SortableType {}
extension AnyRealmValue: MinMaxType, AddableType, SortableType {}
extension Optional: MinMaxType where Wrapped: MinMaxType {}
extension Optional: AddableType where Wrapped: AddableType {}
extension Optional: SortableType where Wrapped: SortableType {}

/// What `Results`, `List` and `LinkingObjects` (and `AnyRealmCollection`, which wraps any of them) have in
/// common: realm-swift's collection protocol, so that code generic over collections works with each.
///
/// Queries, sorting and `distinct` give lazy `Results`; on a collection of values (a list of primitives)
/// `self` is each value (`filter("self > 3")`, `sorted(ascending:)`, `min()`).
public protocol RealmCollection: RandomAccessCollection, CustomStringConvertible
where Element: RealmCollectionValue, Index == Int {
    /// The Realm of the collection, or nil when it is unmanaged.
    var realm: Realm? { get }
    /// Whether the collection can no longer be used (its owning object was deleted).
    var isInvalidated: Bool { get }
    var count: Int { get }

    /// The position of an object (the same object) or value, if present.
    func index(of object: Element) -> Int?

    /// The elements matching a query in Realm's query language; throws `RealmError.query` when it does not
    /// parse or fit. `filter(_:_:)` stops instead, as realm-swift raises.
    func filter(query: String, arguments: [Any]) throws -> Results<Element>

    /// Sorted by key paths (`self` for a collection of values); stable.
    func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor

    /// The first element of each distinct combination of values of `keyPaths` (`self` for values).
    func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String

    /// The smallest value of a property (`self` for values), or nil when there is none.
    func min<T: _Persistable>(ofProperty property: String) -> T?
    /// The largest value of a property (`self` for values), or nil when there is none.
    func max<T: _Persistable>(ofProperty property: String) -> T?
    /// The sum of a numeric property (`self` for values); 0 when empty.
    func sum<T: _Persistable>(ofProperty property: String) -> T
    /// The mean of a numeric property (`self` for values), or nil when empty.
    func average<T: _Persistable>(ofProperty property: String) -> T?

    /// Calls `block` with `.initial` at once, then `.update` with the changed indices after each change; with
    /// `keyPaths` only changes of those properties make an element modified, and with `queue` the block runs on
    /// that serial queue.
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken

    /// Whether the collection belongs to a frozen Realm.
    var isFrozen: Bool { get }
    /// The collection as a frozen Realm of the version its Realm reads now sees it, readable on any thread.
    func freeze() -> Self
    /// The collection in the calling thread's live Realm, or nil when what it comes from is gone.
    func thaw() -> Self?
}

extension RealmCollection {
    /// `observe(keyPaths:on:_:)` with every property and the calling thread.
    public func observe(_ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: nil, on: nil, block)
    }
}

extension RealmCollection {
    /// The elements matching a query, with `$0`, `$1`, ... (or `%@`) bound to `args`; a query that does not
    /// parse or fit stops the program with its diagnostic, as realm-swift raises.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        do {
            return try filter(query: predicateFormat, arguments: args)
        } catch {
            fatalError("invalid query: \(error)")
        }
    }

    /// The position of the first element matching a query, or nil.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        let matching: Results<Element>
        do {
            matching = try filter(query: predicateFormat, arguments: args)
        } catch {
            fatalError("invalid query: \(error)")
        }
        // The matches keep the collection's order, and an equal element earlier would match too.
        return matching.first.flatMap { index(of: $0) }
    }

    /// Sorted by one key path.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The elements at `indexes`.
    public func objects(at indexes: IndexSet) -> [Element] {
        indexes.map { self[$0] }
    }

    /// The value of `key` for each element (`self`: the elements), as an array; nil values are `NSNull`.
    public func value(forKey key: String) -> Any? { value(forKeyPath: key) }

    /// The value at a key path (`owner.name`) for each element, as an array; nil values are `NSNull`.
    /// `@count` is the number of elements.
    public func value(forKeyPath keyPath: String) -> Any? {
        if keyPath == "@count" { return count }
        let parts = keyPath.split(separator: ".").map(String.init)
        return map { element -> Any in
            var current: Any? = element
            for part in parts where part != "self" {
                guard let o = current.flatMap({ AnyConversion.unwrap($0) }) as? Object else {
                    preconditionFailure("'\(keyPath)' goes through '\(part)' of a value that is not an object")
                }
                do {
                    current = try o.value(forProperty: part)
                } catch {
                    preconditionFailure("\(error)")
                }
            }
            return current.flatMap { AnyConversion.unwrap($0) } ?? NSNull()
        }
    }

    /// Sets property `key` of every object of the collection (inside a write transaction).
    public func setValue(_ value: Any?, forKey key: String) {
        for element in self {
            guard let o = element as? Object else { preconditionFailure("setValue(_:forKey:) needs a collection of objects") }
            do {
                try o.setValue(value, forProperty: key)
            } catch {
                fatalError("\(error)")
            }
        }
    }
}

extension RealmCollection where Element: SortableType {
    /// The values sorted by themselves.
    public func sorted(ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: "self", ascending: ascending)])
    }

    /// The distinct values, first occurrence kept.
    public func distinct() -> Results<Element> { distinct(by: ["self"]) }
}

extension RealmCollection where Element: MinMaxType {
    /// The smallest value, or nil when there is none.
    public func min() -> Element? { min(ofProperty: "self") }
    /// The largest value, or nil when there is none.
    public func max() -> Element? { max(ofProperty: "self") }
}

extension RealmCollection where Element: AddableType {
    /// The sum of the values (0 when empty).
    public func sum() -> Element { sum(ofProperty: "self") }
    /// The mean of the values, or nil when empty.
    public func average<T: _Persistable>() -> T? { average(ofProperty: "self") }
}

extension Results: RealmCollection {}
extension List: RealmCollection {}
extension LinkingObjects: RealmCollection {}

// MARK: - AnyRealmCollection

/// Any `RealmCollection` of `Element`, type-erased: store results, lists and linking objects in one property
/// or pass them to one function.
public struct AnyRealmCollection<Element: RealmCollectionValue>: RealmCollection {
    let base: AnyRealmCollectionBox<Element>

    /// Wraps `base` (an `AnyRealmCollection` is not wrapped twice).
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        if let any = base as? AnyRealmCollection<Element> {
            self.base = any.base
        } else {
            self.base = RealmCollectionBox(base)
        }
    }

    init(box: AnyRealmCollectionBox<Element>) { base = box }

    public var realm: Realm? { base.realm }
    public var isInvalidated: Bool { base.isInvalidated }
    public var count: Int { base.count }
    public var startIndex: Int { 0 }
    public var endIndex: Int { base.count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }
    public subscript(position: Int) -> Element { base.element(position) }
    public var description: String { base.description }

    public func index(of object: Element) -> Int? { base.index(of: object) }
    public func filter(query: String, arguments: [Any] = []) throws -> Results<Element> { try base.filter(query, arguments) }
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        base.sorted(Array(sortDescriptors))
    }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String { base.distinct(Array(keyPaths)) }
    public func min<T: _Persistable>(ofProperty property: String) -> T? { base.min(property) }
    public func max<T: _Persistable>(ofProperty property: String) -> T? { base.max(property) }
    public func sum<T: _Persistable>(ofProperty property: String) -> T { base.sum(property) }
    public func average<T: _Persistable>(ofProperty property: String) -> T? { base.average(property) }

    public var isFrozen: Bool { base.isFrozen }
    public func freeze() -> AnyRealmCollection<Element> { AnyRealmCollection(box: base.freeze()) }
    public func thaw() -> AnyRealmCollection<Element>? { base.thaw().map { AnyRealmCollection(box: $0) } }

    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<AnyRealmCollection<Element>>) -> Void) -> NotificationToken {
        precondition(queue == nil, "AnyRealmCollection.observe(on:) is not supported: observe the wrapped collection on the queue")
        let wrapped = self
        return base.observe(keyPaths: keyPaths) { change in
            switch change {
            case .initial: block(.initial(wrapped))
            case .update(let d, let i, let m): block(.update(wrapped, deletions: d, insertions: i, modifications: m))
            case .error(let e): block(.error(e))
            }
        }
    }
}

/// What a wrapped collection's change is, without its type.
enum ErasedCollectionChange {
    case initial
    case update(deletions: [Int], insertions: [Int], modifications: [Int])
    case error(Error)
}

/// The wrapped collection behind `AnyRealmCollection` (an abstract class; `RealmCollectionBox` is the one kind).
class AnyRealmCollectionBox<Element: RealmCollectionValue> {
    var realm: Realm? { fatalError("abstract") }
    var isInvalidated: Bool { fatalError("abstract") }
    var count: Int { fatalError("abstract") }
    var description: String { fatalError("abstract") }
    func element(_ position: Int) -> Element { fatalError("abstract") }
    func index(of object: Element) -> Int? { fatalError("abstract") }
    func filter(_ query: String, _ arguments: [Any]) throws -> Results<Element> { fatalError("abstract") }
    func sorted(_ descriptors: [SortDescriptor]) -> Results<Element> { fatalError("abstract") }
    func distinct(_ keyPaths: [String]) -> Results<Element> { fatalError("abstract") }
    func min<T: _Persistable>(_ property: String) -> T? { fatalError("abstract") }
    func max<T: _Persistable>(_ property: String) -> T? { fatalError("abstract") }
    func sum<T: _Persistable>(_ property: String) -> T { fatalError("abstract") }
    func average<T: _Persistable>(_ property: String) -> T? { fatalError("abstract") }
    func observe(keyPaths: [String]?, _ block: @escaping (ErasedCollectionChange) -> Void) -> NotificationToken { fatalError("abstract") }
    var isFrozen: Bool { fatalError("abstract") }
    func freeze() -> AnyRealmCollectionBox<Element> { fatalError("abstract") }
    func thaw() -> AnyRealmCollectionBox<Element>? { fatalError("abstract") }
}

final class RealmCollectionBox<C: RealmCollection>: AnyRealmCollectionBox<C.Element> {
    let base: C

    init(_ base: C) { self.base = base }

    override var realm: Realm? { base.realm }
    override var isInvalidated: Bool { base.isInvalidated }
    override var count: Int { base.count }
    override var description: String { base.description }
    override func element(_ position: Int) -> C.Element { base[position] }
    override func index(of object: C.Element) -> Int? { base.index(of: object) }
    override func filter(_ query: String, _ arguments: [Any]) throws -> Results<C.Element> {
        try base.filter(query: query, arguments: arguments)
    }
    override func sorted(_ descriptors: [SortDescriptor]) -> Results<C.Element> { base.sorted(by: descriptors) }
    override func distinct(_ keyPaths: [String]) -> Results<C.Element> { base.distinct(by: keyPaths) }
    override func min<T: _Persistable>(_ property: String) -> T? { base.min(ofProperty: property) }
    override func max<T: _Persistable>(_ property: String) -> T? { base.max(ofProperty: property) }
    override func sum<T: _Persistable>(_ property: String) -> T { base.sum(ofProperty: property) }
    override func average<T: _Persistable>(_ property: String) -> T? { base.average(ofProperty: property) }
    override var isFrozen: Bool { base.isFrozen }
    override func freeze() -> AnyRealmCollectionBox<C.Element> { RealmCollectionBox(base.freeze()) }
    override func thaw() -> AnyRealmCollectionBox<C.Element>? { base.thaw().map { RealmCollectionBox($0) } }
    override func observe(keyPaths: [String]?, _ block: @escaping (ErasedCollectionChange) -> Void) -> NotificationToken {
        base.observe(keyPaths: keyPaths, on: nil) { change in
            switch change {
            case .initial: block(.initial)
            case .update(_, let d, let i, let m): block(.update(deletions: d, insertions: i, modifications: m))
            case .error(let e): block(.error(e))
            }
        }
    }
}
