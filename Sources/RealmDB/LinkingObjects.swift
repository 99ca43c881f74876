import RealmStorage

protocol _AnyLinkingObjects {
    static func _rlmEmpty(origin: String) -> Any
}

/// The objects of `Element` that link to an object through one property: the inverse of a to-one link or a
/// list, always current. Stored backlinks make this a lookup, not a scan.
///
/// ```swift
/// @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// // or, older style:
/// let owners = LinkingObjects(fromType: Person.self, property: "dogs")
/// ```
public final class LinkingObjects<Element: Object> {
    public let propertyName: String
    var owner: ObjectRef?
    var propertyIndex = 0

    public init(fromType: Element.Type, property propertyName: String) {
        self.propertyName = propertyName
    }

    init(propertyName: String, owner: ObjectRef, index: Int) {
        self.propertyName = propertyName
        self.owner = owner
        self.propertyIndex = index
    }

    public var realm: Realm? { owner?.realm }
    public var isInvalidated: Bool { owner?.isInvalidated ?? false }

    /// The linking objects as lazy, auto-updating results.
    var results: Results<Element>? {
        guard let owner else { return nil }
        return Results(realm: owner.realm, source: .linkingObjects(owner, propertyIndex), model: Element.self)
    }

    public func filter(_ isIncluded: @escaping (Element) -> Bool) -> Results<Element> {
        guard let r = results else { preconditionFailure("queries on unmanaged LinkingObjects are not supported") }
        return r.filter(isIncluded)
    }

    /// The linking objects matching a query; see `Results.filter(_:_:)`.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        guard let r = results else { preconditionFailure("queries on unmanaged LinkingObjects are not supported") }
        return r.filterOrFail(predicateFormat, args)
    }

    /// `filter(_:_:)` that throws `RealmError.query` instead of stopping.
    public func filter(query: String, arguments: [Any] = []) throws -> Results<Element> {
        guard let r = results else { preconditionFailure("queries on unmanaged LinkingObjects are not supported") }
        return try r.filter(query: query, arguments: arguments)
    }

    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        guard let r = results else { preconditionFailure("queries on unmanaged LinkingObjects are not supported") }
        return r.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        guard let r = results else { preconditionFailure("queries on unmanaged LinkingObjects are not supported") }
        return r.sorted(by: descriptors)
    }

    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        guard let r = results else { preconditionFailure("queries on unmanaged LinkingObjects are not supported") }
        return r.distinct(by: keyPaths)
    }

    /// The position of an object among the linking objects, if present.
    public func index(of object: Element) -> Int? { results?.index(of: object) }

    // Unmanaged linking objects are empty: no value, a sum of 0.
    public func min<T: _Persistable>(ofProperty property: String) -> T? { results?.min(ofProperty: property) }
    public func max<T: _Persistable>(ofProperty property: String) -> T? { results?.max(ofProperty: property) }
    public func sum<T: _Persistable>(ofProperty property: String) -> T { results?.sum(ofProperty: property) ?? T._rlmDefaultValue() }
    public func average<T: _Persistable>(ofProperty property: String) -> T? { results?.average(ofProperty: property) }

    var keys: [ObjectKey] { results?.keys ?? [] }
}

extension LinkingObjects: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { results?.count ?? 0 }
    public subscript(index: Int) -> Element { results![index] }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }
}

extension LinkingObjects: CustomStringConvertible {
    public var description: String { "LinkingObjects<\(Element.className())> (\(count) objects)" }
}

extension LinkingObjects: _AnyLinkingObjects {
    static func _rlmEmpty(origin: String) -> Any { LinkingObjects(fromType: Element.self, property: origin) }
}

extension LinkingObjects: _Persistable {
    public static var _rlmDescriptor: _PropertyDescriptor {
        var d = _PropertyDescriptor(.linkingObjects)
        d.isList = true
        d.objectType = Element.self
        return d
    }

    public static func _rlmDefaultValue() -> LinkingObjects<Element> { LinkingObjects(fromType: Element.self, property: "") }

    public static func _rlmFromStored(_ v: RealmStorage.Value, _ realm: Realm) -> LinkingObjects<Element> {
        fatalError("linking objects are read through their owner")
    }

    public func _rlmToStored(_ realm: Realm) throws -> RealmStorage.Value {
        throw RealmError.invalidValue(className: Element.className(), property: propertyName, reason: "linking objects cannot be set")
    }

    public static func _rlmFromAny(_ any: Any) -> LinkingObjects<Element>? { any as? LinkingObjects<Element> }

    public static func _rlmGet(_ object: Object, _ index: Int) -> LinkingObjects<Element> {
        let origin = object._info?.properties[index].schema.originProperty ?? ""
        return LinkingObjects(propertyName: origin, owner: object._ref!, index: index)
    }

    public static func _rlmSet(_ object: Object, _ index: Int, _ value: LinkingObjects<Element>) {
        fatalError("linking objects cannot be set")
    }
}

/// The older style: `let owners = LinkingObjects(fromType: Person.self, property: "dogs")`.
extension LinkingObjects: RealmField {
    static func describe(_ field: UnsafeRawPointer, label: String) -> FieldDescription {
        let lo = field.assumingMemoryBound(to: LinkingObjects<Element>.self).pointee
        var d = _rlmDescriptor
        d.originProperty = lo.propertyName
        return FieldDescription(name: label, descriptor: d)
    }

    static func bind(_ field: UnsafeMutableRawPointer, to object: Object, index: Int) {
        let lo = field.assumingMemoryBound(to: LinkingObjects<Element>.self).pointee
        lo.owner = object._ref
        lo.propertyIndex = index
    }

    static func unmanagedContent(_ field: UnsafeRawPointer) -> UnmanagedContent { .none }
    static func setUnmanaged(_ field: UnsafeMutableRawPointer, _ any: Any) -> Bool { false }
    static func unmanagedValue(_ field: UnsafeRawPointer) -> Any? { field.assumingMemoryBound(to: LinkingObjects<Element>.self).pointee }
    static func managedValue(_ object: Object, _ index: Int) -> Any? { _rlmGet(object, index) }
}
