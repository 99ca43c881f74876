import RealmStorage

/// An object of a class.
public struct ObjectRef: Hashable, Sendable {
    public var className: String
    public var key: ObjectKey
    public init(className: String, key: ObjectKey) {
        self.className = className
        self.key = key
    }
}

/// The result of a query or a sort: the keys to show, in order. Compared by identity, never by its keys
/// (a million-key result is not hashed on every action).
public final class KeyFilter: Equatable, @unchecked Sendable {
    // @unchecked: immutable after init.
    public let keys: [ObjectKey]
    /// What made it (`age > 30 SORT(name ASC)`), for the breadcrumbs and status bar.
    public let description: String

    public init(keys: [ObjectKey], description: String) {
        self.keys = keys
        self.description = description
    }

    public static func == (a: KeyFilter, b: KeyFilter) -> Bool { a === b }
}

/// What a collection table shows, read once per version: a list's or set's elements, the origins of incoming
/// links (as `.link`), or a dictionary's values with its keys in the same order. Compared by identity, like
/// `KeyFilter`.
public final class CollectionContents: Equatable, @unchecked Sendable {
    // @unchecked: immutable after init.
    public let values: [Value]
    public let dictionaryKeys: [String]?

    public init(values: [Value], dictionaryKeys: [String]?) {
        self.values = values
        self.dictionaryKeys = dictionaryKeys
    }

    public static func == (a: CollectionContents, b: CollectionContents) -> Bool { a === b }
}

/// A step into a collection: a position in a list or a key of a dictionary.
public enum PathStep: Hashable, Sendable {
    case index(Int)
    case key(String)

    /// `[2]`, `["key"]`.
    public var text: String {
        switch self {
        case .index(let i): return "[\(i)]"
        case .key(let k): return "[\"\(k)\"]"
        }
    }
}

/// What a table shows: the objects of a class (optionally filtered and sorted by a query result), the
/// elements of a list or set, the entries of a dictionary, or the objects linking to an object.
public enum TableSource: Equatable, Sendable {
    /// All objects of a class in key order, or the keys of `filter` in its order (the seam for queries and
    /// sorting: `RealmQuery` produces the keys, the table shows them).
    case objects(className: String, filter: KeyFilter?)
    /// A list or set property of an object: links (a table of objects) or primitives (a table of values).
    case list(owner: ObjectRef, property: String)
    /// A dictionary property of an object (a key/value table), or a list or dictionary nested in a mixed value:
    /// the property's value followed along `path` (a dictionary property's first step is one of its keys, a
    /// list property's one of its positions).
    case entries(owner: ObjectRef, property: String, path: [PathStep])
    /// A declared `LinkingObjects` property of an object.
    case linkingObjects(owner: ObjectRef, property: String)
    /// Every object of `originClass` whose link `property` points at the owner, declared or not.
    case backlinks(owner: ObjectRef, originClass: String, property: String)
    /// A list, linking objects or backlinks table narrowed or reordered by a query: the keys of `filter`.
    indirect case filtered(TableSource, KeyFilter)

    /// The table without its query or sort.
    public var base: TableSource {
        switch self {
        case .objects(let c, _): return .objects(className: c, filter: nil)
        case .filtered(let b, _): return b.base
        default: return self
        }
    }

    /// The query result shown, if any.
    public var filter: KeyFilter? {
        switch self {
        case .objects(_, let f): return f
        case .filtered(_, let f): return f
        default: return nil
        }
    }

    /// The same table showing `filter` (nil: all of it).
    public func with(filter: KeyFilter?) -> TableSource {
        switch base {
        case .objects(let c, _): return .objects(className: c, filter: filter)
        case let b: return filter.map { .filtered(b, $0) } ?? b
        }
    }

    /// The object this table belongs to, if it is not a whole class.
    public var owner: ObjectRef? {
        switch self {
        case .objects: return nil
        case .list(let o, _), .linkingObjects(let o, _), .backlinks(let o, _, _), .entries(let o, _, _): return o
        case .filtered(let b, _): return b.owner
        }
    }

    /// The property of the owner a list, set or dictionary table shows (nil for other tables).
    public var collectionProperty: String? {
        switch self {
        case .list(_, let p), .entries(_, let p, _): return p
        default: return nil
        }
    }

    /// Whether rows get an index column (lists, where the order is data).
    public var hasIndexColumn: Bool {
        if case .list = self { return true }
        return false
    }

    /// The breadcrumb for this table.
    public var crumb: String {
        switch self {
        case .objects(let c, let f): return f.map { "\(c) (\($0.description))" } ?? c
        case .list(_, let p), .linkingObjects(_, let p): return p
        case .entries(_, let p, let path): return p + path.map(\.text).joined()
        case .backlinks(_, let c, let p): return "← \(c).\(p)"
        case .filtered(let b, let f): return "\(b.crumb) (\(f.description))"
        }
    }
}

/// One column of a table.
public struct Column: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// The position in a list.
        case index
        /// A property of the row objects.
        case property(PropertySchema)
        /// Incoming links from `originClass.property` that no `LinkingObjects` property declares.
        case incoming(originClass: String, property: String)
        /// The element of a list of primitives (or the value of a dictionary entry).
        case element(PropertySchema)
        /// The key of a dictionary entry.
        case key
    }

    public var kind: Kind
    /// `age Int`, `owner → Person`, `← Dog.owner`.
    public var header: String
    public var isPrimaryKey = false
    public var rightAligned = false

    /// The property name (or `#` for the index column).
    public var name: String {
        switch kind {
        case .index: return "#"
        case .property(let p): return p.name
        case .incoming(let c, let p): return "\(c).\(p)"
        case .element: return "value"
        case .key: return "key"
        }
    }
}
