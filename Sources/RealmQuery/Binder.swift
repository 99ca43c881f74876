import RealmStorage

extension Query {
    /// Resolves the query against `className` in `schema`: every key path, type and argument is checked here,
    /// so a bound query only fails at run time on storage errors.
    public func bind(to className: String, in schema: QuerySchema, arguments: [QueryArgument] = []) throws(QueryError) -> BoundQuery {
        var b = Binder(query: self, schema: schema, arguments: arguments)
        return try bind(to: className, with: &b)
    }

    /// `bind` in the classes `reader` reads (a snapshot of our files, or a reader of a Realm Core file).
    public func bind(to className: String, in reader: any ObjectReader, arguments: [QueryArgument] = []) throws(QueryError) -> BoundQuery {
        try bind(to: className, in: ReaderSchema(reader: reader), arguments: arguments)
    }

    /// `bind`, leaving in `b` what a prepared query needs to reuse the result (`PreparedQuery`).
    func bind(to className: String, with b: inout Binder) throws(QueryError) -> BoundQuery {
        guard let root = b.schema.classSchema(className) else {
            throw QueryError(.unknownClass, "no class named '\(className)'", query: text, range: SourceRange(0, 0))
        }
        b.consulted[className] = root
        let p = try b.bind(predicate, on: className, variables: [:])
        var ordering: [BoundOrdering] = []
        for o in self.ordering {
            switch o {
            case .sort(let keys):
                var bound: [(BoundPath, Bool)] = []
                for k in keys { bound.append((try b.orderingPath(k.keyPath, on: className, clause: "SORT"), k.ascending)) }
                ordering.append(.sort(bound))
            case .distinct(let paths):
                var bound: [BoundPath] = []
                for k in paths { bound.append(try b.orderingPath(k, on: className, clause: "DISTINCT")) }
                ordering.append(.distinct(bound))
            case .limit(let n, _): ordering.append(.limit(n))
            }
        }
        return BoundQuery(className: className, query: self, predicate: p, ordering: ordering, objectLiterals: b.objectLiterals)
    }
}

struct Binder {
    let query: Query
    let schema: QuerySchema
    let arguments: [QueryArgument]
    /// How each constant that holds argument values is made, by its place in the text (`PreparedQuery`).
    var templates: [ConstantPlace: [ArgumentPart]] = [:]
    /// How many constants each place in the text produced (a template is only usable when that is one).
    var constantPlaces: [ConstantPlace: Int] = [:]
    /// Every class schema the binding looked at.
    var consulted: [String: ClassSchema] = [:]
    /// Whether a key path took a key or position from an argument (`dict[$0]`): the bound paths then depend on
    /// the arguments, so a prepared query binds afresh each time.
    var hasArgumentSubscripts = false
    /// The constants holding `obj(...)` literals (each bound as a placeholder link until the query runs).
    var objectLiterals: [ConstantPlace: [ObjectPart]] = [:]

    init(query: Query, schema: QuerySchema, arguments: [QueryArgument]) {
        self.query = query
        self.schema = schema
        self.arguments = arguments
    }

    func fail(_ kind: QueryError.Kind, _ message: String, _ range: SourceRange) -> QueryError {
        QueryError(kind, message, query: query.text, range: range)
    }

    mutating func classSchema(_ name: String, _ range: SourceRange) throws(QueryError) -> ClassSchema {
        guard let c = schema.classSchema(name) else { throw fail(.unknownClass, "no class named '\(name)'", range) }
        consulted[name] = c
        return c
    }

    // MARK: Predicates

    mutating func bind(_ p: Predicate, on cls: String, variables: [String: String]) throws(QueryError) -> BoundPredicate {
        switch p {
        case .constant(let b, _): return .constant(b)
        case .and(let ps):
            var out: [BoundPredicate] = []
            for x in ps { out.append(try bind(x, on: cls, variables: variables)) }
            return .and(out)
        case .or(let ps):
            var out: [BoundPredicate] = []
            for x in ps { out.append(try bind(x, on: cls, variables: variables)) }
            return .or(out)
        case .not(let x, _): return .not(try bind(x, on: cls, variables: variables))
        case .comparison(let c): return try bind(c, on: cls, variables: variables)
        }
    }

    mutating func operand(_ e: Expression, on cls: String, variables: [String: String]) throws(QueryError) -> BoundOperand {
        switch e {
        case .keyPath(let k): return .path(try path(k, on: cls, variables: variables))
        case .literal(let l, let r):
            constantPlaces[ConstantPlace(r), default: 0] += 1
            return .constant([l.value], isList: false, r)
        case .argument(let n, let r):
            guard n < arguments.count else {
                throw fail(.invalidArgument, "no value for argument $\(n): \(arguments.count == 1 ? "1 argument was" : "\(arguments.count) arguments were") given", r)
            }
            constantPlaces[ConstantPlace(r), default: 0] += 1
            templates[ConstantPlace(r)] = [.argument(n)]
            switch arguments[n] {
            case .value(let v): return .constant([v], isList: false, r)
            case .list(let vs): return .constant(vs, isList: true, r)
            }
        case .object(let o, let r):
            let key = try objectKey(o, on: cls, variables: variables)
            let place = unusedPlace(r)
            objectLiterals[ConstantPlace(place)] = [.object(className: o.className, primaryKey: key, typed: false)]
            constantPlaces[ConstantPlace(place), default: 0] += 1
            return .constant([Binder.objectPlaceholder], isList: false, place)
        case .list(let items, let r0):
            var values: [Value] = []
            var parts: [ObjectPart] = []
            for item in items {
                guard case .constant(let vs, let isList, let ir) = try operand(item, on: cls, variables: variables) else {
                    throw fail(.invalidQuery, "a list in braces holds values, not key paths", item.range)
                }
                if isList { throw fail(.invalidArgument, "an argument holding several values cannot be an element of a list", ir) }
                values.append(contentsOf: vs)
                if case .object = item, let p = objectLiterals.removeValue(forKey: ConstantPlace(ir)) {
                    parts.append(contentsOf: p)
                } else {
                    parts.append(contentsOf: vs.map(ObjectPart.value))
                }
            }
            let hasObjects = items.contains { if case .object = $0 { return true } else { return false } }
            let r = hasObjects ? unusedPlace(r0) : r0
            if hasObjects {
                objectLiterals[ConstantPlace(r)] = parts
                constantPlaces[ConstantPlace(r), default: 0] += 1  // a template cannot rebuild the objects: bound every time
            }
            constantPlaces[ConstantPlace(r), default: 0] += 1
            if items.contains(where: { if case .argument = $0 { return true } else { return false } }) {
                templates[ConstantPlace(r)] = items.map { item in
                    if case .argument(let n, _) = item { return .argument(n) }
                    if case .literal(let l, _) = item { return .literal(l.value) }
                    return .literal(.null)  // not reached: other items were refused above
                }
            }
            return .constant(values, isList: true, r)
        case .arithmetic(let op, let l, let r, let range):
            var lo = try operand(l, on: cls, variables: variables)
            var ro = try operand(r, on: cls, variables: variables)
            // A number literal beside a decimal is the decimal written (`balance + 0.05`), as in a comparison.
            if kind(of: lo).type == .decimal128 { ro = decimalLiterals(ro, from: r) }
            if kind(of: ro).type == .decimal128 { lo = decimalLiterals(lo, from: l) }
            for (o, e) in [(lo, l), (ro, r)] {
                if case .subqueryCount = o { throw fail(.invalidQuery, "a SUBQUERY count cannot be part of arithmetic", e.range) }
                let k = kind(of: o)
                if k.isMulti {
                    throw fail(.invalidQuery, "'\(op.rawValue)' needs one number on each side, and '\(e)' is \(k.type == nil ? "several values" : "a list")", e.range)
                }
                guard let t = k.type, t != .mixed else { continue }  // null or mixed: null when not a number
                guard Binder.isNumeric(t) else {
                    throw fail(.typeMismatch, "'\(op.rawValue)' needs numbers, and '\(e)' is \(Binder.typeName(t))", e.range)
                }
            }
            return .arithmetic(op, lo, ro, range)
        case .subqueryCount(let s, let r):
            let collection = try path(s.collection, on: cls, variables: variables)
            guard collection.kind.isMulti, collection.kind.type == .link, let element = collection.kind.objectClass else {
                throw fail(.invalidQuery, "the first argument of SUBQUERY must be a list of objects", s.collection.range)
            }
            if variables[s.variable] != nil {
                throw fail(.invalidQuery, "variable $\(s.variable) is already in use", r)
            }
            var inner = variables
            inner[s.variable] = element
            let p = try bind(s.predicate, on: element, variables: inner)
            return .subqueryCount(collection: collection, elementClass: element, predicate: p, r)
        }
    }

    mutating func bind(_ c: Comparison, on cls: String, variables: [String: String]) throws(QueryError) -> BoundPredicate {
        var lhs = try operand(c.lhs, on: cls, variables: variables)
        var rhs = try operand(c.rhs, on: cls, variables: variables)
        var op = c.op
        var quantifier = c.quantifier

        // A value on the left and a key path on the right: `5.5 IN items.price`, `NULL != name`.
        var constantSide = c.rhs
        if case .constant(_, let isList, let r) = lhs, !isList, case .path = rhs {
            constantSide = c.lhs
            if op == .in {
                op = .equal
            } else if let f = op.flipped {
                op = f
            } else {
                throw fail(.invalidQuery, "the left side of \(op.rawValue) must be a key path", r)
            }
            if quantifier != nil { throw fail(.invalidQuery, "\(quantifier!.rawValue) needs a key path on its left", r) }
            swap(&lhs, &rhs)
        }
        if case .constant(let vs, true, let r) = lhs {
            // `{1, 2} == age`, `ALL {10, 20} < age`: each value of the list against the key path, the quantifier
            // (ANY by default) over the list.
            guard case .path(let p) = rhs else {
                throw fail(.invalidQuery, "a list of values on the left of '\(op.rawValue)' needs a key path on its right", rhs.range)
            }
            if op == .between { throw fail(.invalidQuery, "BETWEEN needs a key path on its left", r) }
            if let rt = p.kind.type {
                let items: [Expression]
                if case .list(let xs, _) = c.lhs, xs.count == vs.count { items = xs } else { items = [] }
                for (n, v) in vs.enumerated() {
                    guard let vt = v.type, !Binder.compatible(vt, rt) else { continue }
                    throw fail(.typeMismatch, "type mismatch: \(Binder.typeName(vt)) in the list cannot be compared with '\(c.rhs)', \(Binder.typeName(rt))",
                               items.isEmpty ? r : items[n].range)
                }
            }
            if p.typeOf { throw fail(.invalidQuery, "@type needs a type name on its right, such as 'string'", r) }
            try checkObjectClasses(lhs, against: p.kind, c.rhs)
            typeObjects(lhs, against: p.kind)
            return .comparison(BoundComparison(quantifier: quantifier ?? .any, lhs: lhs, op: op, options: c.options, rhs: rhs))
        }

        let lhsKind = kind(of: lhs)
        if lhsKind.type == .decimal128, lhs.isPathOrArithmetic { rhs = decimalLiterals(rhs, from: constantSide) }
        if lhsKind.type == .data, case .path = lhs, Binder.isLiterals(constantSide) { rhs = binaryStrings(rhs) }
        if let q = quantifier, !lhsKind.isMulti {
            throw fail(.invalidQuery, "\(q.rawValue) needs a key path through a list, and '\(c.lhs)' is not one", c.lhs.range)
        }
        if quantifier == nil { quantifier = .any }
        if case .path(let p) = rhs, p.typeOf {
            throw fail(.invalidQuery, "@type compares with a type name: write '\(c.rhs) == 'string'' or IN {...}", p.range)
        }
        if case .path(let p) = lhs, p.typeOf {
            return try typeComparison(quantifier: quantifier!, lhs: lhs, op: op, rhs: rhs, comparison: c)
        }

        // IN: the right side is a list of values, or a key path through a list.
        if op == .in {
            switch rhs {
            case .constant(let vs, let isList, let r):
                if !isList && vs.count == 1 {
                    // `x IN $0` with a single value is equality.
                    _ = r
                }
            case .path(let p):
                guard p.kind.isMulti else {
                    throw fail(.invalidQuery, "the right side of IN must be a list of values or a key path through a list", p.range)
                }
            case .subqueryCount(_, _, _, let r), .arithmetic(_, _, _, let r):
                throw fail(.invalidQuery, "the right side of IN must be a list of values or a key path through a list", r)
            }
        } else if op == .between {
            guard case .constant(let vs, _, let r) = rhs, vs.count == 2 else {
                throw fail(.invalidQuery, "BETWEEN needs two values, {low, high}", rhs.range)
            }
            _ = r
        }
        // A list of values on the right of any other operator (`age == {1, 2}`, `name BEGINSWITH {'a', 'b'}`):
        // true when the operator holds for any of them, as in Realm.

        // A string operator on a key path that holds no text, with text on the right (`age BEGINSWITH 'x'`):
        // Realm accepts it and no value matches (`Compare<BeginsWith>` over an int column).
        if op.isStringOperator, case .path = lhs, let lt = lhsKind.type, lt != .string, lt != .data, lt != .mixed,
           Binder.isText(rhs) {
            switch quantifier! {
            case .any: return .constant(false)
            case .none: return .constant(true)
            case .all: return .comparison(BoundComparison(quantifier: .all, lhs: lhs, op: op, options: c.options, rhs: rhs))
            }
        }
        try typeCheck(lhs: lhs, lhsKind: lhsKind, op: op, options: c.options, rhs: rhs, comparison: c)
        try checkObjectClasses(rhs, against: lhsKind, constantSide == c.rhs ? c.lhs : c.rhs)
        if lhs.isPathOrArithmetic { typeObjects(rhs, against: lhsKind) }
        return .comparison(BoundComparison(quantifier: quantifier!, lhs: lhs, op: op, options: c.options, rhs: rhs))
    }

    func kind(of o: BoundOperand) -> ValueKind {
        switch o {
        case .constant(let vs, let isList, _):
            return ValueKind(type: vs.first?.type, objectClass: nil, isMulti: isList, nullable: vs.contains(.null))
        case .path(let p): return p.kind
        case .subqueryCount: return ValueKind(type: .int, objectClass: nil, isMulti: false, nullable: false)
        case .arithmetic(_, let l, let r, _):
            // An int from two ints, a decimal with a decimal, else a double; unknown with a mixed value.
            let a = kind(of: l).type, b = kind(of: r).type
            let type: PropertyType?
            if a == nil || b == nil || a == .mixed || b == .mixed { type = nil }
            else if a == .decimal128 || b == .decimal128 { type = .decimal128 }
            else if a == .int && b == .int { type = .int }
            else { type = .double }
            return ValueKind(type: type, objectClass: nil, isMulti: false, nullable: true)
        }
    }

    /// `x.@type == 'string'`, `!=`, `IN {'int', 'double'}`: the names checked and expanded to the type names
    /// values give (`numeric` is four), then a membership test. `!=` is "not among": with the quantifier over a
    /// list turned around (ANY not-among is NOT ALL among).
    mutating func typeComparison(quantifier: Comparison.Quantifier, lhs: BoundOperand, op: Comparison.Operator,
                                 rhs: BoundOperand, comparison c: Comparison) throws(QueryError) -> BoundPredicate {
        guard op == .equal || op == .notEqual || op == .in else {
            throw fail(.typeMismatch, "@type compares with ==, != or IN and a type name, not '\(op.rawValue)'", c.range)
        }
        guard case .constant(let vs, _, let r) = rhs else {
            throw fail(.typeMismatch, "@type compares with a type name in quotes, such as 'string' or 'numeric'", rhs.range)
        }
        var names: [Value] = []
        for v in vs {
            guard case .string(let s) = v else {
                throw fail(.typeMismatch, "@type compares with a type name in quotes, such as 'string' or 'numeric', not \(Binder.typeName(v.type))", r)
            }
            guard let expanded = Semantics.typeNames[s.lowercased()] else {
                throw fail(.typeMismatch, "unknown type name '\(s)'; expected one of 'int', 'double', 'float', 'decimal', 'numeric', 'string', 'bool', 'date', 'objectId', 'uuid', 'binary', 'null', 'link', 'list', 'dictionary', 'collection'", r)
            }
            for n in expanded where !names.contains(.string(n)) { names.append(.string(n)) }
        }
        // The names depend on the argument's value, not only its type: an argument here is bound every time.
        constantPlaces[ConstantPlace(r), default: 0] += 1
        let among = BoundOperand.constant(names, isList: true, r)
        func test(_ q: Comparison.Quantifier) -> BoundPredicate {
            .comparison(BoundComparison(quantifier: q, lhs: lhs, op: .in, options: [], rhs: among))
        }
        if op != .notEqual { return test(quantifier) }
        switch quantifier {
        case .any: return .not(test(.all))
        case .all: return test(.none)
        case .none: return test(.all)
        }
    }
}
