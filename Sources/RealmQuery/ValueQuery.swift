import RealmStorage

/// A query over a collection of values rather than objects (a list of primitives; the values of a set or a
/// dictionary use it the same way): `self` stands for each value, as in Realm (`self > 3`,
/// `self BEGINSWITH[c] 'a'`, `self IN {1, 2}`, `SORT(self DESC)`, `DISTINCT(self)`, `LIMIT(2)`).
///
/// Comparisons mean what they mean for properties (`Semantics`); a comparison needs `self` on one side and
/// values (literals, arguments, a list in braces) on the other.
public struct BoundValueQuery: Sendable {
    public let query: Query
    let predicate: ValuePredicate
    let ordering: [ValueOrdering]

    /// Checks `query` against values of `elementType` (`.mixed`: any kind of value), with `$0`, `$1`, ...
    /// bound to `arguments`.
    public init(_ query: Query, elementType: PropertyType, arguments: [QueryArgument] = []) throws(QueryError) {
        var binder = ValueBinder(query: query, type: elementType, arguments: arguments)
        self.query = query
        predicate = try binder.bind(query.predicate)
        var ordering: [ValueOrdering] = []
        for clause in query.ordering {
            switch clause {
            case .sort(let keys):
                for k in keys { try binder.requireSelf(k.keyPath) }
                ordering.append(.sort(keys.map(\.ascending)))
            case .distinct(let paths):
                for p in paths { try binder.requireSelf(p) }
                ordering.append(.distinct)
            case .limit(let n, _):
                ordering.append(.limit(n))
            }
        }
        self.ordering = ordering
    }

    /// The positions in `values` of the values that match, in order, then sorted, made distinct and limited
    /// by the query's ordering clauses in the order written.
    public func evaluate(_ values: [Value]) -> [Int] {
        var out = values.indices.filter { predicate.matches(values[$0]) }
        for o in ordering {
            switch o {
            case .sort(let directions):
                // Every key is `self`: the first decides, ties keep their order (a stable sort).
                let ascending = directions.first ?? true
                out = out.enumerated().sorted { a, b in
                    let c = Sorter.compare(values[a.element], values[b.element])
                    if c != 0 { return ascending ? c < 0 : c > 0 }
                    return a.offset < b.offset
                }.map(\.element)
            case .distinct:
                var seen = Set<Value>()
                out = out.filter { seen.insert(Sorter.distinctKey(values[$0])).inserted }
            case .limit(let n):
                if out.count > n { out = Array(out.prefix(n)) }
            }
        }
        return out
    }

    /// Whether one value matches the predicate (the ordering clauses do not apply).
    public func matches(_ value: Value) -> Bool { predicate.matches(value) }
}

enum ValueOrdering: Sendable {
    case sort([Bool])
    case distinct
    case limit(Int)
}

indirect enum ValuePredicate: Sendable {
    case constant(Bool)
    case and([ValuePredicate])
    case or([ValuePredicate])
    case not(ValuePredicate)
    /// `self op constants` (a single value, or any of a list).
    case comparison(Comparison.Operator, Comparison.Options, [Value], isList: Bool)

    func matches(_ v: Value) -> Bool {
        switch self {
        case .constant(let b): return b
        case .and(let ps): return ps.allSatisfy { $0.matches(v) }
        case .or(let ps): return ps.contains { $0.matches(v) }
        case .not(let p): return !p.matches(v)
        case .comparison(let op, let options, let constants, _):
            switch op {
            case .between:
                guard constants.count == 2, let lo = Semantics.order(v, constants[0]),
                      let hi = Semantics.order(v, constants[1]) else { return false }
                return lo >= 0 && hi <= 0
            case .in:
                return constants.contains { Semantics.equal(v, $0, options) }
            default:
                // A list on the right: true when the operator holds for any of its values, as in Realm.
                return constants.contains { Semantics.test(v, op, options, $0) }
            }
        }
    }
}

struct ValueBinder {
    let query: Query
    let type: PropertyType
    let arguments: [QueryArgument]

    func fail(_ kind: QueryError.Kind, _ message: String, _ range: SourceRange) -> QueryError {
        QueryError(kind, message, query: query.text, range: range)
    }

    func isSelf(_ k: KeyPath) -> Bool { k.variable == nil && k.names == ["self"] }

    func requireSelf(_ k: KeyPath) throws(QueryError) {
        guard isSelf(k) else {
            throw fail(.unknownProperty, "'\(k.names.joined(separator: "."))' is not 'self': a collection of values has only 'self' to query, sort or make distinct", k.range)
        }
    }

    mutating func bind(_ p: Predicate) throws(QueryError) -> ValuePredicate {
        switch p {
        case .constant(let b, _): return .constant(b)
        case .and(let ps):
            var out: [ValuePredicate] = []
            for q in ps { out.append(try bind(q)) }
            return .and(out)
        case .or(let ps):
            var out: [ValuePredicate] = []
            for q in ps { out.append(try bind(q)) }
            return .or(out)
        case .not(let q, _): return .not(try bind(q))
        case .comparison(let c): return try bind(c)
        }
    }

    /// The values an expression stands for, and whether it is a list; nil for `self`.
    func constants(_ e: Expression) throws(QueryError) -> (values: [Value], isList: Bool)? {
        switch e {
        case .keyPath(let k):
            try requireSelf(k)
            return nil
        case .literal(let l, _):
            return ([l.value(hint: type)], false)
        case .argument(let n, let r):
            guard n >= 0 && n < arguments.count else {
                throw fail(.invalidArgument, "no argument $\(n): \(arguments.count) given", r)
            }
            switch arguments[n] {
            case .value(let v): return ([v], false)
            case .list(let vs): return (vs, true)
            }
        case .list(let items, _):
            var out: [Value] = []
            for item in items {
                guard let (vs, isList) = try constants(item), !isList else {
                    throw fail(.invalidQuery, "a list in braces holds values, not 'self' or another list", item.range)
                }
                out += vs
            }
            return (out, true)
        case .subqueryCount(_, let r), .arithmetic(_, _, _, let r), .object(_, let r):
            throw fail(.invalidQuery, "a collection of values can compare 'self' with values only", r)
        }
    }

    mutating func bind(_ c: Comparison) throws(QueryError) -> ValuePredicate {
        if let q = c.quantifier {
            throw fail(.invalidQuery, "\(q.rawValue) needs a key path through a list, and 'self' is one value", c.range)
        }
        var op = c.op
        let values: [Value], isList: Bool
        switch (try constants(c.lhs), try constants(c.rhs)) {
        case (nil, let right?):
            (values, isList) = right
        case (let left?, nil):
            // `3 < self`, `5 IN self` is `self == 5`.
            guard !left.isList else { throw fail(.invalidQuery, "a list of values must be on the right of 'self'", c.lhs.range) }
            if op == .in { op = .equal } else if let f = op.flipped { op = f } else {
                throw fail(.invalidQuery, "the left side of \(op.rawValue) must be 'self'", c.lhs.range)
            }
            (values, isList) = left
        case (nil, nil):
            throw fail(.invalidQuery, "'self' compared with itself", c.range)
        case (_?, _?):
            throw fail(.invalidQuery, "a comparison needs 'self' on one side", c.range)
        }
        if op == .between && values.count != 2 {
            throw fail(.invalidQuery, "BETWEEN needs two values, {low, high}", c.rhs.range)
        }
        try typeCheck(op, c.options, values, c)
        return .comparison(op, c.options, values, isList: isList)
    }

    func typeCheck(_ op: Comparison.Operator, _ options: Comparison.Options, _ values: [Value], _ c: Comparison) throws(QueryError) {
        guard type != .mixed else { return }
        if op.isStringOperator || !options.isEmpty {
            guard type == .string || type == .data else {
                throw fail(.typeMismatch, "\(op.rawValue)\(options.isEmpty ? "" : " with [c]/[d]") applies to strings and binary data, and 'self' is \(Binder.typeName(type))", c.range)
            }
        }
        if [.less, .lessOrEqual, .greater, .greaterOrEqual, .between].contains(op), type == .bool || type == .data {
            throw fail(.typeMismatch, "'\(op.rawValue)' cannot order \(Binder.typeName(type)); only == and != apply to 'self'", c.range)
        }
        for v in values {
            guard let vt = v.type else { continue }  // null compares with anything
            if op.isStringOperator && !(vt == .string || vt == .data) {
                throw fail(.typeMismatch, "\(op.rawValue) needs a string, not \(Binder.typeName(vt))", c.rhs.range)
            }
            if !Binder.compatible(type, vt) {
                throw fail(.typeMismatch, "type mismatch: 'self' is \(Binder.typeName(type)) and cannot be compared with \(Binder.typeName(vt))", c.rhs.range)
            }
        }
    }
}
