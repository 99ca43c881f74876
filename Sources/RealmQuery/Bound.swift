import RealmStorage

/// Where the binder looks classes up: a snapshot, or the object layer's model schema.
public protocol QuerySchema {
    func classSchema(_ name: String) -> ClassSchema?
}

/// The schema of what an `ObjectReader` reads, for the binder.
struct ReaderSchema: QuerySchema {
    let reader: any ObjectReader
    func classSchema(_ name: String) -> ClassSchema? { reader.classSchema(name) }
}

/// A value a caller binds to `$0`, `$1`, ...: one value, or several for `IN $0`.
public enum QueryArgument: Hashable, Sendable {
    case value(Value)
    case list([Value])
}

enum Aggregate: String, Sendable {
    case count = "@count", min = "@min", max = "@max", sum = "@sum", avg = "@avg"
}

/// One step of a key path, resolved against the schema (names only; handles come at execution).
enum BoundStep: Sendable {
    /// A to-one link followed to the target object (null stops the walk).
    case toOne(cls: String, prop: String, target: String)
    /// A collection of objects (list of links, linking objects or `@links.Class.property`), optionally
    /// aggregated; without an aggregate each element continues the walk.
    case many(ManySource, aggregate: Aggregate?, aggregateProperty: String?)
    /// The value of a property (a link gives `.link(key)` or `.null`).
    case value(cls: String, prop: String)
    /// The elements of a list or set of values, optionally aggregated.
    case primitiveList(cls: String, prop: String, aggregate: Aggregate?)
    /// One element of a list of values (`scores[0]`, `[FIRST]`, `[LAST]` as -1), as Realm Core's
    /// `ColumnsCollection` gives it: an empty list gives no value, a position past the end of another list null.
    case listElement(cls: String, prop: String, index: Int)
    /// A dictionary of values: its values (optionally aggregated), its keys, or the value of one key (null when
    /// the dictionary has no such key).
    case dictionary(cls: String, prop: String, part: DictionaryPart, aggregate: Aggregate?)
    /// A value inside a mixed property (or a list or dictionary of mixed values) reached by keys, positions,
    /// `[*]` and properties of typed links: null when the path leads nowhere, any number of values after `[*]`.
    case mixedPath(cls: String, prop: String, path: [MixedStep])
    /// `@count`/`@size` of a string or data value: its length in bytes.
    case length(cls: String, prop: String)
    /// `@links.@count`: the number of incoming links from every class and property.
    case allLinksCount(cls: String)
    /// The object reached so far, as `.link(key)` (a path ending at a list of objects, `$x` alone).
    case selfKey
}

enum MixedStep: Sendable, Equatable {
    /// The value of a key of a dictionary, or of a property of the object a typed link leads to.
    case key(String)
    /// The element at a position of a list (-1: the last).
    case index(Int)
    /// `[*]`: every element of a list or value of a dictionary.
    case all
    /// `@size` (`[SIZE]`), last: the number of elements of a list or dictionary, the length of a string or data.
    case size
    /// `@keys`, last: every key of a dictionary (its value when it has a key named `@keys`, as Realm Core's
    /// `Collection::get_any`); nothing for any other value.
    case keys
    /// `@values`: every value of a dictionary; nothing for any other value (Realm Core reads it as a key).
    case values
}

enum DictionaryPart: Sendable, Equatable {
    case values, keys
    case key(String)
}

enum ManySource: Sendable {
    /// A list or set of links.
    case list(cls: String, prop: String, target: String)
    /// The object at one position of a list of links (`items[FIRST]`; -1 the last); none past its end.
    case listElement(cls: String, prop: String, target: String, index: Int)
    case linkingObjects(cls: String, prop: String, origin: String)
    case links(cls: String, origin: String, originProperty: String)
    /// The objects a dictionary's values link to (all of them, or the one of a key; null values skipped).
    case dictionary(cls: String, prop: String, key: String?, target: String)

    var targetClass: String {
        switch self {
        case .list(_, _, let t), .listElement(_, _, let t, _): return t
        case .linkingObjects(_, _, let o): return o
        case .links(_, let o, _): return o
        case .dictionary(_, _, _, let t): return t
        }
    }
}

/// What a key path yields, for type checks.
struct ValueKind: Sendable {
    /// nil: any type (mixed).
    var type: PropertyType?
    /// The class of the objects for links.
    var objectClass: String?
    /// Several values per object (ANY by default).
    var isMulti: Bool
    /// Whether null can occur.
    var nullable: Bool
}

struct BoundPath: Sendable {
    /// The variable the path starts from, nil for the queried object.
    var variable: String?
    var steps: [BoundStep]
    var kind: ValueKind
    var range: SourceRange
    /// `@type` ends the path: the values the steps yield are tested by their type (`TypeNode`), not compared.
    var typeOf = false
    /// The whole path is a single non-list property of the object itself (a column scan applies).
    var directProperty: String? {
        guard variable == nil, !typeOf, steps.count == 1, case .value(_, let p) = steps[0] else { return nil }
        return p
    }
}

/// A side of a comparison.
indirect enum BoundOperand: Sendable {
    case constant([Value], isList: Bool, SourceRange)
    case path(BoundPath)
    case subqueryCount(collection: BoundPath, elementClass: String, predicate: BoundPredicate, SourceRange)
    /// `age + 5`: one number from each side (`ArithmeticNode`).
    case arithmetic(ArithmeticOperator, BoundOperand, BoundOperand, SourceRange)

    var hasArithmetic: Bool { if case .arithmetic = self { return true } else { return false } }
    var isPathOrArithmetic: Bool {
        switch self {
        case .path, .arithmetic: return true
        case .constant, .subqueryCount: return false
        }
    }

    var range: SourceRange {
        switch self {
        case .constant(_, _, let r): return r
        case .path(let p): return p.range
        case .subqueryCount(_, _, _, let r): return r
        case .arithmetic(_, _, _, let r): return r
        }
    }
}

struct BoundComparison: Sendable {
    var quantifier: Comparison.Quantifier
    var lhs: BoundOperand
    var op: Comparison.Operator
    var options: Comparison.Options
    var rhs: BoundOperand
}

indirect enum BoundPredicate: Sendable {
    case constant(Bool)
    case and([BoundPredicate])
    case or([BoundPredicate])
    case not(BoundPredicate)
    case comparison(BoundComparison)
}

/// A query resolved against a class: ready to plan and run.
public struct BoundQuery: Sendable {
    public let className: String
    public let query: Query
    var predicate: BoundPredicate
    let ordering: [BoundOrdering]
    /// The constants that hold `obj(...)` literals, by place: looked up in the snapshot each evaluation runs in.
    var objectLiterals: [ConstantPlace: [ObjectPart]] = [:]
}

enum BoundOrdering: Sendable {
    case sort([(path: BoundPath, ascending: Bool)])
    case distinct([BoundPath])
    case limit(Int)
}
