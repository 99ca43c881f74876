import Foundation

/// realm-swift's type-safe queries: `dogs.where { $0.age > 3 && $0.owner.name.starts(with: "A") }`.
///
/// A `Query` is a key path or an expression over one, built by member access and operators; `where` turns
/// the finished `Query<Bool>` into the query language's text with `%@` arguments and filters with it, so it
/// means exactly what the written query means (docs/QUERY_LANGUAGE.md).
@dynamicMemberLookup
public struct Query<T> {
    /// The key path's property names (empty for `self`), when this query is a key path.
    let path: [String]?
    /// How many of `path`'s names lead into a collection property (the position after the collection's
    /// name): aggregates go there (`dogs.@min.age`).
    let collectionEnd: Int?
    /// The expression, when this query is not a bare key path.
    let expression: String?
    let arguments: [Any]

    init(path: [String], collectionEnd: Int? = nil) {
        self.path = path
        self.collectionEnd = collectionEnd
        expression = nil
        arguments = []
    }

    init(expression: String, arguments: [Any]) {
        path = nil
        collectionEnd = nil
        self.expression = expression
        self.arguments = arguments
    }

    /// The query's text: the key path (`self` for the element itself) or the expression. A key path into a
    /// collection has the collection's part marked (`Query.marked`), so that a subquery can put its variable
    /// there (`($0.dogs.age > 3).count`); `where` removes the marks.
    var text: String {
        if let expression { return expression }
        let p = path ?? []
        if p.isEmpty { return "self" }
        guard let end = collectionEnd else { return p.joined(separator: ".") }
        let collection = Query.marked(p[..<end].joined(separator: "."))
        return ([collection] + p[end...]).joined(separator: ".")
    }

    /// Marks around the collection part of a key path in a query's text: control characters, which no property
    /// name holds (a map's key is an argument, never in the text).
    static var markStart: Character { "\u{1}" }
    static var markEnd: Character { "\u{2}" }
    static func marked(_ collection: String) -> String { "\(markStart)\(collection)\(markEnd)" }

    /// `text` with every collection part replaced: by itself (`unmarked`), or by a subquery's variable.
    /// Returns the collections that were marked, in order.
    static func replacingCollections(in text: String, with variable: String?) -> (String, [String]) {
        var out = "", name = "", inside = false, found: [String] = []
        for c in text {
            if c == markStart {
                inside = true
                name = ""
            } else if c == markEnd {
                inside = false
                found.append(name)
                out += variable ?? name
            } else if inside {
                name.append(c)
            } else {
                out.append(c)
            }
        }
        return (out, found)
    }

    /// The query of property `name` of this key path's value; `isCollection` when that property is a collection
    /// (aggregates of the properties after it go there).
    fileprivate func child<V>(_ name: String, isCollection: Bool) -> Query<V> {
        guard let path else { preconditionFailure("a property of an expression: \(text).\(name)") }
        let next = path + [name]
        return Query<V>(path: next, collectionEnd: collectionEnd ?? (isCollection ? next.count : nil))
    }
}

/// A collection property type (`List`, `MutableSet`, `LinkingObjects`, `Map`), so that a query knows where a
/// key path enters a collection.
public protocol _QueryCollection {}
extension List: _QueryCollection {}
extension MutableSet: _QueryCollection {}
extension LinkingObjects: _QueryCollection {}
extension Map: _QueryCollection {}

/// An optional link (`Dog?`), whose properties a query reaches through it.
public protocol _QueryOptionalObject {
    associatedtype _Wrapped: Object
}
extension Optional: _QueryOptionalObject where Wrapped: Object {
    public typealias _Wrapped = Wrapped
}

extension Query where T: Object {
    /// A property of the object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
        child(KeyPathNames.name(keyPath), isCollection: V.self is _QueryCollection.Type)
    }
}

extension Query where T: _QueryOptionalObject {
    /// A property of the linked object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T._Wrapped, V>) -> Query<V> {
        child(KeyPathNames.name(keyPath), isCollection: V.self is _QueryCollection.Type)
    }
}

extension Query where T: RealmCollection, T.Element: Object {
    /// A property of the collection's objects: a comparison holds when it holds for any of them.
    public subscript<V>(dynamicMember keyPath: KeyPath<T.Element, V>) -> Query<V> {
        child(KeyPathNames.name(keyPath), isCollection: V.self is _QueryCollection.Type)
    }
}

// MARK: - Comparisons

/// The query language's text of a constant, as an argument (`%@`), or `nil`.
private func constant(_ value: Any?) -> (String, [Any]) {
    guard let value, !(value is NSNull) else { return ("nil", []) }
    if case Optional<Any>.none = value as Any? { return ("nil", []) }
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional {
        guard let inner = mirror.children.first?.value else { return ("nil", []) }
        return ("%@", [inner])
    }
    return ("%@", [value])
}

private func compare<A>(_ lhs: Query<A>, _ op: String, _ rhs: Any?) -> Query<Bool> {
    let (c, args) = constant(rhs)
    return Query(expression: "\(lhs.text) \(op) \(c)", arguments: lhs.arguments + args)
}

private func compare<A, B>(_ lhs: Query<A>, _ op: String, _ rhs: Query<B>) -> Query<Bool> {
    Query(expression: "\(lhs.text) \(op) \(rhs.text)", arguments: lhs.arguments + rhs.arguments)
}

extension Query {
    public static func == (lhs: Query, rhs: T) -> Query<Bool> { compare(lhs, "==", rhs as Any?) }
    public static func != (lhs: Query, rhs: T) -> Query<Bool> { compare(lhs, "!=", rhs as Any?) }
    public static func == (lhs: Query, rhs: Query) -> Query<Bool> { compare(lhs, "==", rhs) }
    public static func != (lhs: Query, rhs: Query) -> Query<Bool> { compare(lhs, "!=", rhs) }

    public static func > (lhs: Query, rhs: T) -> Query<Bool> { compare(lhs, ">", rhs as Any?) }
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { compare(lhs, ">=", rhs as Any?) }
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { compare(lhs, "<", rhs as Any?) }
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { compare(lhs, "<=", rhs as Any?) }
    public static func > (lhs: Query, rhs: Query) -> Query<Bool> { compare(lhs, ">", rhs) }
    public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { compare(lhs, ">=", rhs) }
    public static func < (lhs: Query, rhs: Query) -> Query<Bool> { compare(lhs, "<", rhs) }
    public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { compare(lhs, "<=", rhs) }

    /// Whether the value is one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        Query<Bool>(expression: "\(text) IN %@", arguments: arguments + [Array(values)])
    }

    /// Whether the value lies in the closed range.
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        Query<Bool>(expression: "\(text) BETWEEN {%@, %@}", arguments: arguments + [range.lowerBound, range.upperBound])
    }

    /// Whether the value lies in the half-open range. The text names the key path twice, so its arguments
    /// come twice, each before its bound's `%@`.
    public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
        Query<Bool>(expression: "(\(text) >= %@ AND \(text) < %@)", arguments: arguments + [range.lowerBound] + arguments + [range.upperBound])
    }
}

extension Query where T == Bool {
    public static func && (lhs: Query, rhs: Query) -> Query { Query(expression: "(\(lhs.condition)) AND (\(rhs.condition))", arguments: lhs.arguments + rhs.arguments) }
    public static func || (lhs: Query, rhs: Query) -> Query { Query(expression: "(\(lhs.condition)) OR (\(rhs.condition))", arguments: lhs.arguments + rhs.arguments) }
    public static prefix func ! (query: Query) -> Query { Query(expression: "NOT (\(query.condition))", arguments: query.arguments) }

    /// The query as a condition: a bool key path stands for `path == true`.
    var condition: String { expression ?? "\(text) == true" }
}

// MARK: - Subqueries

extension Query where T == Bool {
    /// The number of objects (or values) of one collection for which this condition holds, as realm-swift
    /// writes it: `($0.dogs.age > 3 && $0.dogs.name == "Rex").count > 0` is
    /// `SUBQUERY(dogs, $col1, $col1.age > 3 AND $col1.name == 'Rex').@count > 0`: the conditions hold for the
    /// same element, where `$0.dogs.age > 3 && $0.dogs.name == "Rex"` alone asks each of them of any element.
    /// The condition names exactly one collection (a list, a set or linking objects), as in realm-swift.
    public var count: Query<Int> {
        let condition = self.condition
        // A subquery nested in this one already has its own variables; this one takes the next number.
        let variable = "$col\(condition.components(separatedBy: "SUBQUERY(").count)"
        let (body, collections) = Query.replacingCollections(in: condition, with: variable)
        guard let collection = collections.first else {
            preconditionFailure("a subquery's condition must read a collection's elements: \(Query.unmarked(condition))")
        }
        precondition(collections.allSatisfy { $0 == collection },
                     "a subquery reads one collection, not several: \(Query.unmarked(condition))")
        return Query<Int>(expression: "SUBQUERY(\(collection), \(variable), \(body)).@count", arguments: arguments)
    }
}

extension Query {
    /// `text` without the marks of collection parts.
    static func unmarked(_ text: String) -> String { replacingCollections(in: text, with: nil).0 }
}

// MARK: - Strings and binary data

/// realm-swift's string options: `[c]` and `[d]` in the query language.
public struct StringOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let caseInsensitive = StringOptions(rawValue: 1)
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    var modifier: String {
        switch (contains(.caseInsensitive), contains(.diacriticInsensitive)) {
        case (true, true): return "[cd]"
        case (true, false): return "[c]"
        case (false, true): return "[d]"
        case (false, false): return ""
        }
    }
}

/// String and binary types a query can search in.
public protocol _QueryString {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped: _QueryString {}
extension Data: _QueryString {}

extension Query where T: _QueryString {
    private func op(_ name: String, _ value: Any, _ options: StringOptions) -> Query<Bool> {
        Query<Bool>(expression: "\(text) \(name)\(options.modifier) %@", arguments: arguments + [value])
    }
    public func contains(_ value: some _QueryString, options: StringOptions = []) -> Query<Bool> { op("CONTAINS", value, options) }
    public func starts(with value: some _QueryString, options: StringOptions = []) -> Query<Bool> { op("BEGINSWITH", value, options) }
    public func ends(with value: some _QueryString, options: StringOptions = []) -> Query<Bool> { op("ENDSWITH", value, options) }
    public func equals(_ value: some _QueryString, options: StringOptions = []) -> Query<Bool> { op("==", value, options) }
    public func notEquals(_ value: some _QueryString, options: StringOptions = []) -> Query<Bool> { op("!=", value, options) }
    /// `*` matches any run of characters and `?` one character.
    public func like(_ value: String, caseInsensitive: Bool = false) -> Query<Bool> {
        op("LIKE", value, caseInsensitive ? .caseInsensitive : [])
    }
}

// MARK: - Collections

extension Query where T: _QueryCollection {
    /// The number of elements (`@count`).
    public var count: Query<Int> { Query<Int>(expression: "\(text).@count", arguments: arguments) }
}

extension Query where T: RealmCollection {
    /// Whether the collection holds `value`.
    public func contains(_ value: T.Element) -> Query<Bool> {
        Query<Bool>(expression: "%@ IN \(text)", arguments: arguments + [value])
    }

    /// Whether the collection holds any of `values`.
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T.Element {
        Query<Bool>(expression: "ANY \(text) IN %@", arguments: arguments + [Array(values)])
    }

    public var min: Query<T.Element> { Query<T.Element>(expression: "\(text).@min", arguments: arguments) }
    public var max: Query<T.Element> { Query<T.Element>(expression: "\(text).@max", arguments: arguments) }
    public var sum: Query<T.Element> { Query<T.Element>(expression: "\(text).@sum", arguments: arguments) }
    public var avg: Query<T.Element> { Query<T.Element>(expression: "\(text).@avg", arguments: arguments) }
}

extension Query {
    /// An aggregate of a property reached through a collection (`dogs.age.min` is `dogs.@min.age`).
    private func aggregate(_ name: String) -> Query<T> {
        guard let path, let end = collectionEnd, end < path.count else {
            preconditionFailure("\(text).\(name) is not a property of a collection's objects")
        }
        let text = (path[..<end] + ["@\(name)"] + path[end...]).joined(separator: ".")
        return Query(expression: text, arguments: arguments)
    }

    /// The smallest value of the property over the collection's objects.
    public var min: Query<T> { aggregate("min") }
    /// The largest value of the property over the collection's objects.
    public var max: Query<T> { aggregate("max") }
    /// The sum of the property over the collection's objects.
    public var sum: Query<T> { aggregate("sum") }
    /// The mean of the property over the collection's objects.
    public var avg: Query<T> { aggregate("avg") }
}

/// A map type, whose keys and values a query reaches.
public protocol _QueryMap {
    associatedtype _Value
}
extension Map: _QueryMap {
    public typealias _Value = Value
}

extension Query where T: _QueryMap {
    /// The map's keys (`@keys`): a comparison holds when it holds for any of them.
    public var keys: Query<String> { Query<String>(expression: "\(text).@keys", arguments: arguments) }

    /// The map's values (`@values`): a comparison holds when it holds for any of them.
    public var values: Query<T._Value> { Query<T._Value>(expression: "\(text).@values", arguments: arguments) }

    /// The map's value for `key` (`scores[%@]` with the key as its argument, as realm-swift writes it).
    public subscript(key: String) -> Query<T._Value> {
        Query<T._Value>(expression: "\(text)[%@]", arguments: arguments + [key])
    }
}

// MARK: - Filtering

extension RealmCollection {
    /// The elements for which the query holds: `dogs.where { $0.age > 3 && $0.name.starts(with: "R") }`. An
    /// expression the query language refuses stops the program with its diagnostic, as realm-swift raises.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let q = isIncluded(Query<Element>(path: []))
        let text = Query<Bool>.unmarked(q.condition)
        do {
            return try filter(query: text, arguments: q.arguments)
        } catch {
            fatalError("invalid query \(text): \(error)")
        }
    }
}
