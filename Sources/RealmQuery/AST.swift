import Foundation
import RealmStorage

/// A parsed query: a predicate and the ordering clauses after it, in the order written.
///
/// `description` prints valid query text, and parsing it gives an equal tree (source positions are
/// ignored by `==`).
public struct Query: Hashable, Sendable {
    public var predicate: Predicate
    public var ordering: [OrderingClause]
    /// The text this query was parsed from (empty for a tree built in code).
    public var text: String

    public init(predicate: Predicate, ordering: [OrderingClause] = [], text: String = "") {
        self.predicate = predicate
        self.ordering = ordering
        self.text = text
    }

    public static func == (a: Query, b: Query) -> Bool { a.predicate == b.predicate && a.ordering == b.ordering }
    public func hash(into h: inout Hasher) {
        h.combine(predicate)
        h.combine(ordering)
    }
}

/// `SORT(...)`, `DISTINCT(...)` or `LIMIT(n)`.
public enum OrderingClause: Hashable, Sendable {
    case sort([SortKey])
    case distinct([KeyPath])
    case limit(Int, SourceRange)
}

public struct SortKey: Hashable, Sendable {
    public var keyPath: KeyPath
    public var ascending: Bool
    public init(keyPath: KeyPath, ascending: Bool) {
        self.keyPath = keyPath
        self.ascending = ascending
    }
}

/// A condition on an object.
public indirect enum Predicate: Hashable, Sendable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool, SourceRange)
    /// Two or more conditions, all true (`AND`, `&&`).
    case and([Predicate])
    /// Two or more conditions, any true (`OR`, `||`).
    case or([Predicate])
    /// `NOT` / `!`.
    case not(Predicate, SourceRange)
    case comparison(Comparison)
}

/// `lhs op rhs`, with an optional quantifier over a list on the left and string options.
public struct Comparison: Hashable, Sendable {
    public enum Quantifier: String, Hashable, Sendable { case any = "ANY", all = "ALL", none = "NONE" }

    public enum Operator: String, Hashable, Sendable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case `in` = "IN"
        case between = "BETWEEN"

        var isStringOperator: Bool { self == .beginsWith || self == .endsWith || self == .contains || self == .like }

        /// The operator with its operands swapped (`a < b` is `b > a`); nil when there is none.
        var flipped: Operator? {
            switch self {
            case .equal, .notEqual: return self
            case .less: return .greater
            case .lessOrEqual: return .greaterOrEqual
            case .greater: return .less
            case .greaterOrEqual: return .lessOrEqual
            default: return nil
            }
        }
    }

    public struct Options: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `[c]`: ASCII and Latin-1 letters compare without case.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: diacritics are removed before comparing (é → e).
        public static let diacriticInsensitive = Options(rawValue: 2)
    }

    public var quantifier: Quantifier?
    public var lhs: Expression
    public var op: Operator
    public var options: Options
    public var rhs: Expression
    /// The operator token.
    public var range: SourceRange

    public init(quantifier: Quantifier? = nil, lhs: Expression, op: Operator, options: Options = [], rhs: Expression,
                range: SourceRange = SourceRange(0, 0)) {
        self.quantifier = quantifier
        self.lhs = lhs
        self.op = op
        self.options = options
        self.rhs = rhs
        self.range = range
    }
}

/// A value in a comparison.
public indirect enum Expression: Hashable, Sendable {
    case keyPath(KeyPath)
    case literal(Literal, SourceRange)
    /// `$0`, `$1`, ...
    case argument(Int, SourceRange)
    /// `{a, b, ...}`, for `IN` and `BETWEEN`.
    case list([Expression], SourceRange)
    /// `SUBQUERY(collection, $x, predicate).@count` (or `.@size`).
    case subqueryCount(Subquery, SourceRange)
    /// `age + 5`, `height * 100`, `age / 10` (`*` and `/` before `+` and `-`, each left to right).
    case arithmetic(ArithmeticOperator, Expression, Expression, SourceRange)
    /// `obj('Person', 'Ann')`: the object of a class with a primary key, looked up when the query runs.
    case object(ObjectLiteral, SourceRange)

    var range: SourceRange {
        switch self {
        case .keyPath(let k): return k.range
        case .literal(_, let r), .argument(_, let r), .list(_, let r), .subqueryCount(_, let r), .arithmetic(_, _, _, let r),
             .object(_, let r): return r
        }
    }
}

/// Realm's object literal, `obj('Class', primaryKey)`: the object of `className` whose primary key is the
/// value (a literal or an argument). No such object is null, as in Realm Core.
public struct ObjectLiteral: Hashable, Sendable {
    public var className: String
    /// A `.literal` or an `.argument`.
    public var primaryKey: Expression
    /// The class name's place in the text.
    public var classRange: SourceRange

    public init(className: String, primaryKey: Expression, classRange: SourceRange = SourceRange(0, 0)) {
        self.className = className
        self.primaryKey = primaryKey
        self.classRange = classRange
    }
}

/// `+`, `-`, `*`, `/` between numbers.
public enum ArithmeticOperator: String, Hashable, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/"

    var precedence: Int { self == .add || self == .subtract ? 1 : 2 }
}

public struct Subquery: Hashable, Sendable {
    public var collection: KeyPath
    /// The variable's name without `$`.
    public var variable: String
    public var predicate: Predicate
}

/// `owner.name`, `items.@avg.price`, `@links.Person.dogs.@count`, `$x.name`.
public struct KeyPath: Hashable, Sendable {
    public struct Component: Hashable, Sendable {
        /// The name as written; aggregates and `@links` keep their `@`. A dictionary subscript (`['key']`) is a
        /// component of its own whose `key` is set and whose name is empty.
        public var name: String
        public var range: SourceRange
        /// The key of a dictionary subscript: `scores['math']`.
        public var key: String?
        /// The position of a list subscript: `value[0]`, `items[FIRST]` (0), `items[LAST]` (-1).
        public var index: Int?
        /// `[*]`: every element of a list, every value of a dictionary.
        public var isAll = false
        /// A subscript given by an argument (`dict[$0]`, `list[%@]`): a key when the argument is a string, a
        /// position when it is an integer; the binder puts the key or position in its place.
        public var argument: Int?
        public init(_ name: String, _ range: SourceRange = SourceRange(0, 0)) {
            self.name = name
            self.range = range
        }
        public init(key: String, _ range: SourceRange = SourceRange(0, 0)) {
            self.name = ""
            self.range = range
            self.key = key
        }
        public init(index: Int, _ range: SourceRange = SourceRange(0, 0)) {
            self.name = ""
            self.range = range
            self.index = index
        }
        public init(argument: Int, _ range: SourceRange = SourceRange(0, 0)) {
            self.name = ""
            self.range = range
            self.argument = argument
        }
        /// `[*]`.
        public static func all(_ range: SourceRange = SourceRange(0, 0)) -> Component {
            var c = Component("", range)
            c.isAll = true
            return c
        }
        /// A subscript in brackets: a key, a position or `[*]`.
        public var isSubscript: Bool { key != nil || index != nil || isAll || argument != nil }
        /// The position `[LAST]` stands for.
        public static let lastIndex = -1
    }

    /// The subquery variable the path starts from (`x` for `$x.name`), or nil for the queried object.
    public var variable: String?
    public var components: [Component]

    public init(variable: String? = nil, components: [Component]) {
        self.variable = variable
        self.components = components
    }

    /// Convenience: `KeyPath("owner.name")` (no positions).
    public init(_ path: String) {
        self.variable = nil
        self.components = path.split(separator: ".").map { Component(String($0)) }
    }

    public var range: SourceRange {
        guard let f = components.first, let l = components.last else { return SourceRange(0, 0) }
        return f.range.union(l.range)
    }

    public var names: [String] { components.map(\.name) }
}

/// A constant written in the query.
public enum Literal: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    /// A number with a fraction or an exponent whose value no double holds (`12345678901234567890.15`,
    /// `0.1000000000000000000000000000000001`, `1e400`), read as decimal128 reads it (34 significant digits,
    /// rounded half-to-even). Compared with a decimal128 it is this value; with anything else, the nearest
    /// double, as Realm reads such a number. The parser gives `.double` when the double's shortest digits
    /// are the number written, so the two never stand for the same number.
    case decimal(Decimal128)
    case string(String)
    case binary([UInt8])
    case date(Timestamp)
    case objectId(ObjectId)
    case uuid(UUID)

    public static func == (a: Literal, b: Literal) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        // NaN equals NaN here: a tree equals itself.
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.decimal(let x), .decimal(let y)): return x == y
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.binary(let x), .binary(let y)): return x == y
        case (.date(let x), .date(let y)): return x == y
        case (.objectId(let x), .objectId(let y)): return x == y
        case (.uuid(let x), .uuid(let y)): return x == y
        default: return false
        }
    }

    public func hash(into h: inout Hasher) {
        switch self {
        case .null: h.combine(0)
        case .bool(let b): h.combine(b)
        case .int(let i): h.combine(i)
        case .double(let d): h.combine(d.isNaN ? 0 : d.bitPattern)
        case .decimal(let d): h.combine(d)
        case .string(let s): h.combine(s)
        case .binary(let b): h.combine(b)
        case .date(let t): h.combine(t)
        case .objectId(let o): h.combine(o)
        case .uuid(let u): h.combine(u)
        }
    }

    /// The value this literal stands for when compared with a value of type `hint` (nil: unknown or mixed):
    /// a number with a fraction or exponent is a decimal128 against a decimal128, else a double.
    func value(hint: PropertyType?) -> Value {
        guard hint == .decimal128 else { return value }
        switch self {
        case .double(let d): return .decimal128(Decimal128(d))
        case .decimal(let d): return .decimal128(d)
        default: return value
        }
    }

    /// The stored value this literal stands for (a number with a fraction or exponent as a double).
    var value: Value {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .decimal(let d): return .double(d.doubleValue)
        case .string(let s): return .string(s)
        case .binary(let b): return .data(b)
        case .date(let t): return .date(t)
        case .objectId(let o): return .objectId(o)
        case .uuid(let u): return .uuid(u)
        }
    }
}
