import RealmStorage

extension Query {
    /// Resolves the query against `className` in `schema`: every key path, type and argument is checked here,
    /// so a bound query only fails at run time on storage errors.
    public func bind(to className: String, in schema: QuerySchema, arguments: [QueryArgument] = []) throws(QueryError) -> BoundQuery {
        var b = Binder(query: self, schema: schema, arguments: arguments)
        return try bind(to: className, with: &b)
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

    // MARK: Key paths

    mutating func path(_ k: KeyPath, on rootClass: String, variables: [String: String]) throws(QueryError) -> BoundPath {
        var cls = rootClass
        if let v = k.variable {
            guard let c = variables[v] else {
                throw fail(.invalidQuery, "unknown variable $\(v)", k.components.first?.range ?? k.range)
            }
            cls = c
        } else if !variables.isEmpty {
            let first = k.components.first?.range ?? k.range
            throw fail(.invalidQuery, "inside SUBQUERY a key path starts with its variable ($\(variables.keys.sorted().joined(separator: ", $")))", first)
        }
        var steps: [BoundStep] = []
        var multi = false
        var nullable = false
        var aggType: PropertyType?
        var aggregateKind: Aggregate?
        let comps = try argumentSubscriptsResolved(k.components)
        if comps.isEmpty {
            // `$x` alone: the element object.
            return BoundPath(variable: k.variable, steps: [.selfKey], kind: ValueKind(type: .link, objectClass: cls, isMulti: false, nullable: false), range: k.range)
        }
        var i = 0
        func done(_ kind: ValueKind) -> BoundPath {
            BoundPath(variable: k.variable, steps: steps, kind: kind, range: k.range)
        }
        while i < comps.count {
            let c = comps[i]
            let isLast = i == comps.count - 1
            let schema = try classSchema(cls, c.range)
            if c.isSubscript {
                throw fail(.invalidQuery, "'\(spelled(c))' must follow a list, a dictionary or a mixed property", c.range)
            }
            if c.name == "@links" {
                guard i + 1 < comps.count else {
                    throw fail(.invalidQuery, "@links must be followed by .@count or .Class.property", c.range)
                }
                let next = comps[i + 1]
                if next.name == "@count" || next.name == "@size" {
                    guard i + 2 == comps.count else { throw fail(.invalidQuery, "nothing can follow @links.@count", comps[i + 2].range) }
                    steps.append(.allLinksCount(cls: cls))
                    return done(ValueKind(type: .int, objectClass: nil, isMulti: multi, nullable: false))
                }
                guard i + 2 < comps.count else {
                    throw fail(.invalidQuery, "@links.\(next.name) must name a link property: @links.\(next.name).property", next.range)
                }
                let originName = next.name
                let propComp = comps[i + 2]
                guard let origin = self.schema.classSchema(originName) else {
                    throw fail(.unknownClass, "no class named '\(originName)'", next.range)
                }
                consulted[originName] = origin
                guard let op = origin.property(named: propComp.name) else {
                    throw fail(.unknownProperty, unknownMessage(propComp.name, origin), propComp.range)
                }
                guard op.type == .link, op.objectClassName == cls else {
                    throw fail(.invalidQuery, "'\(originName).\(propComp.name)' is not a link to '\(cls)'", propComp.range)
                }
                i += 3
                try many(.links(cls: cls, origin: originName, originProperty: propComp.name), target: originName)
                if let p = steps.last, case .many(_, .some, _) = p { return finishAggregate() }
                continue
            }
            if c.name.hasPrefix("@") {
                throw fail(.invalidQuery, "'\(c.name)' must follow a list (for example items.\(c.name)), or is not a known aggregate", c.range)
            }
            guard let p = schema.property(named: c.name) else {
                throw fail(.unknownProperty, unknownMessage(c.name, schema), c.range)
            }
            i += 1
            if p.type == .linkingObjects {
                try many(.linkingObjects(cls: cls, prop: p.name, origin: p.objectClassName ?? ""), target: p.objectClassName ?? "")
                if let s = steps.last, case .many(_, .some, _) = s { return finishAggregate() }
                continue
            }
            if p.type == .mixed, !p.isSet, i < comps.count, mixedPathFollows(p, comps[i...]) {
                // Into a mixed value's nested lists and dictionaries, and the objects its typed links lead to
                // (or a list or dictionary of mixed values' elements): Realm Core's `Collection::get_any`.
                var path: [MixedStep] = []
                while i < comps.count {
                    let n = comps[i]
                    if n.isAll { path.append(.all) }
                    else if let x = n.index { path.append(.index(x)) }
                    else if let k = n.key { path.append(.key(k)) }
                    else if !n.name.hasPrefix("@") { path.append(.key(n.name)) }
                    else if n.name == "@values" || n.name == "@allValues" { path.append(.values) }
                    else if n.name == "@keys" || n.name == "@allKeys" {
                        // The keys of a dictionary: nothing follows them (Realm Core asserts so).
                        if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '\(n.name)'", comps[i + 1].range) }
                        path.append(.keys)
                        i += 1
                        steps.append(.mixedPath(cls: cls, prop: p.name, path: path))
                        return done(ValueKind(type: .string, objectClass: nil, isMulti: true, nullable: false))
                    }
                    else { break }
                    i += 1
                }
                let fansOut = multi || path.contains(.all) || path.contains(.values)
                if i < comps.count, comps[i].name == "@size" || comps[i].name == "@count" {
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '\(spelled(comps[i]))'", comps[i + 1].range) }
                    path.append(.size)
                    steps.append(.mixedPath(cls: cls, prop: p.name, path: path))
                    return done(ValueKind(type: .int, objectClass: nil, isMulti: fansOut, nullable: true))
                }
                steps.append(.mixedPath(cls: cls, prop: p.name, path: path))
                if i < comps.count, comps[i].name == "@type" {
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '@type'", comps[i + 1].range) }
                    var typed = done(ValueKind(type: .string, objectClass: nil, isMulti: fansOut, nullable: false))
                    typed.typeOf = true
                    return typed
                }
                if i < comps.count {
                    throw fail(.invalidQuery, "only a key, a position, [*], a property name, @size or @type can follow '\(p.name)' here", comps[i].range)
                }
                return done(ValueKind(type: .mixed, objectClass: nil, isMulti: fansOut, nullable: true))
            }
            if p.isDictionary {
                // What follows: `['key']` or `.key` (one value), `@keys`, `@values` (also realm-swift's
                // `@allKeys`/`@allValues`), or nothing (every value, ANY by default).
                var part = DictionaryPart.values
                if i < comps.count {
                    let n = comps[i]
                    if let key = n.key {
                        part = .key(key)
                        i += 1
                    } else if n.isAll {
                        i += 1
                    } else if n.index != nil {
                        throw fail(.invalidQuery, "'\(p.name)' is a dictionary: its values have no positions; write a key, \(p.name)['key'], or [*]", n.range)
                    } else if n.name == "@keys" || n.name == "@allKeys" {
                        part = .keys
                        i += 1
                    } else if n.name == "@values" || n.name == "@allValues" {
                        i += 1
                    } else if !n.name.hasPrefix("@"), try dotIsKey(n, after: p) {
                        // A key after a dot (`scores.math`); through links only when the target class has no
                        // property of that name (`relations.colleague.name`), as Realm Core's `PathNode::visit`.
                        part = .key(n.name)
                        i += 1
                    }
                }
                if part == .keys {
                    if i < comps.count, comps[i].name == "@count" || comps[i].name == "@size" {
                        if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '\(comps[i].name)'", comps[i + 1].range) }
                        steps.append(.dictionary(cls: cls, prop: p.name, part: .values, aggregate: .count))
                        return done(ValueKind(type: .int, objectClass: nil, isMulti: multi, nullable: false))
                    }
                    if i < comps.count { throw fail(.invalidQuery, "nothing can follow '@keys' but @count", comps[i].range) }
                    steps.append(.dictionary(cls: cls, prop: p.name, part: .keys, aggregate: nil))
                    return done(ValueKind(type: .string, objectClass: nil, isMulti: true, nullable: false))
                }
                if p.type == .link {
                    let target = p.objectClassName ?? ""
                    if part == .values, i == comps.count {
                        // The values themselves, the null ones too (`pets.@values == nil`), as Realm Core's
                        // `Columns<Dictionary>` gives them; a property after them follows the links only.
                        steps.append(.dictionary(cls: cls, prop: p.name, part: .values, aggregate: nil))
                        return done(ValueKind(type: .link, objectClass: target, isMulti: true, nullable: true))
                    }
                    var key: String?
                    if case .key(let k) = part { key = k }
                    try many(.dictionary(cls: cls, prop: p.name, key: key, target: target), target: target)
                    if let s = steps.last, case .many(_, .some, _) = s { return finishAggregate() }
                    continue
                }
                if i < comps.count, comps[i].name == "@type" {
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '@type'", comps[i + 1].range) }
                    steps.append(.dictionary(cls: cls, prop: p.name, part: part, aggregate: nil))
                    var typed = done(ValueKind(type: .string, objectClass: nil, isMulti: part == .values || multi, nullable: false))
                    typed.typeOf = true
                    return typed
                }
                if case .key = part {
                    if i < comps.count {
                        throw fail(.invalidQuery, "'\(p.name)' holds \(Binder.typeName(p.type)) values: '\(comps[i].name)' cannot follow a key", comps[i].range)
                    }
                    steps.append(.dictionary(cls: cls, prop: p.name, part: part, aggregate: nil))
                    return done(ValueKind(type: p.type, objectClass: nil, isMulti: multi, nullable: true))
                }
                var agg: Aggregate?
                if i < comps.count {
                    agg = try aggregate(comps[i])
                    guard let a = agg else {
                        throw fail(.invalidQuery, "'\(p.name)' is a dictionary of values; a key, @keys, @values or an aggregate such as @count can follow it", comps[i].range)
                    }
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '\(comps[i].name)' here", comps[i + 1].range) }
                    try checkAggregate(a, p.type, comps[i])
                }
                steps.append(.dictionary(cls: cls, prop: p.name, part: .values, aggregate: agg))
                if let a = agg {
                    return done(ValueKind(type: aggregateType(a, p.type), objectClass: nil, isMulti: multi, nullable: a != .count && a != .sum))
                }
                return done(ValueKind(type: p.type, objectClass: nil, isMulti: true, nullable: p.isOptional || p.type == .mixed))
            }
            if p.type == .link && (p.isList || p.isSet) {
                let target = p.objectClassName ?? ""
                var source = ManySource.list(cls: cls, prop: p.name, target: target)
                if i < comps.count, comps[i].isSubscript {
                    // `[*]`: every object, as without it; `[FIRST]`, `[LAST]`, `[n]`: the object at a position.
                    let n = comps[i]
                    if let x = n.index, !p.isSet {
                        source = .listElement(cls: cls, prop: p.name, target: target, index: x)
                    } else if !n.isAll {
                        throw fail(.invalidQuery, positionMessage(p, n), n.range)
                    }
                    i += 1
                }
                try many(source, target: target)
                if let s = steps.last, case .many(_, .some, _) = s { return finishAggregate() }
                continue
            }
            if p.type == .link {
                if i < comps.count, comps[i].name == "@type" {
                    // The link itself: 'object' (a link) or 'null'.
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '@type'", comps[i + 1].range) }
                    steps.append(.value(cls: cls, prop: p.name))
                    var typed = done(ValueKind(type: .string, objectClass: nil, isMulti: multi, nullable: false))
                    typed.typeOf = true
                    return typed
                }
                if isLast {
                    steps.append(.value(cls: cls, prop: p.name))
                    return done(ValueKind(type: .link, objectClass: p.objectClassName, isMulti: multi, nullable: true))
                }
                if comps[i].isSubscript {
                    throw fail(.invalidQuery, "'\(p.name)' links to one object: '\(spelled(comps[i]))' needs a list, a dictionary or a mixed property", comps[i].range)
                }
                steps.append(.toOne(cls: cls, prop: p.name, target: p.objectClassName ?? ""))
                nullable = true
                cls = p.objectClassName ?? ""
                continue
            }
            if p.isList || p.isSet {
                var agg: Aggregate?
                if i < comps.count, comps[i].isSubscript {
                    // `[*]`: every element, as without it; `[FIRST]`, `[LAST]`, `[n]`: the element at a position.
                    // A set of values takes neither (Realm Core's `Columns<Set<T>>::index`).
                    let n = comps[i]
                    guard !p.isSet, n.key == nil else { throw fail(.invalidQuery, positionMessage(p, n), n.range) }
                    i += 1
                    if let x = n.index {
                        steps.append(.listElement(cls: cls, prop: p.name, index: x))
                        if i < comps.count, comps[i].name == "@type", i + 1 == comps.count {
                            var typed = done(ValueKind(type: .string, objectClass: nil, isMulti: multi, nullable: false))
                            typed.typeOf = true
                            return typed
                        }
                        if i < comps.count {
                            throw fail(.invalidQuery, "'\(p.name)' holds \(Binder.typeName(p.type)) values: only @type can follow '\(spelled(n))'", comps[i].range)
                        }
                        return done(ValueKind(type: p.type, objectClass: nil, isMulti: multi, nullable: true))
                    }
                }
                if i < comps.count, comps[i].name == "@type" {
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '@type'", comps[i + 1].range) }
                    steps.append(.primitiveList(cls: cls, prop: p.name, aggregate: nil))
                    var typed = done(ValueKind(type: .string, objectClass: nil, isMulti: true, nullable: false))
                    typed.typeOf = true
                    return typed
                }
                if i < comps.count {
                    agg = try aggregate(comps[i])
                    guard let a = agg else {
                        throw fail(.invalidQuery, "'\(p.name)' is a list of values; only an aggregate such as @count can follow it", comps[i].range)
                    }
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '\(comps[i].name)' here", comps[i + 1].range) }
                    try checkAggregate(a, p.type, comps[i])
                }
                steps.append(.primitiveList(cls: cls, prop: p.name, aggregate: agg))
                if let a = agg {
                    return done(ValueKind(type: aggregateType(a, p.type), objectClass: nil, isMulti: multi, nullable: a != .count && a != .sum))
                }
                return done(ValueKind(type: p.type, objectClass: nil, isMulti: true, nullable: p.isOptional))
            }
            // A value.
            if i < comps.count {
                let next = comps[i]
                if next.isSubscript {
                    throw fail(.invalidQuery, "'\(p.name)' is \(Binder.typeName(p.type)), not a list, a dictionary or a mixed value: '\(spelled(next))' cannot follow it", next.range)
                }
                if next.name == "@type" {
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '@type'", comps[i + 1].range) }
                    steps.append(.value(cls: cls, prop: p.name))
                    var typed = done(ValueKind(type: .string, objectClass: nil, isMulti: multi, nullable: false))
                    typed.typeOf = true
                    return typed
                }
                // `.length` is Realm's other name for `@size` of a string or binary value.
                if (next.name == "@count" || next.name == "@size" || next.name == "length"), p.type == .string || p.type == .data {
                    if i + 1 < comps.count { throw fail(.invalidQuery, "nothing can follow '\(next.name)'", comps[i + 1].range) }
                    steps.append(.length(cls: cls, prop: p.name))
                    return done(ValueKind(type: .int, objectClass: nil, isMulti: multi, nullable: p.isOptional || nullable))
                }
                if next.name.hasPrefix("@") {
                    throw fail(.invalidQuery, "'\(next.name)' needs a list, and '\(p.name)' is \(Binder.typeName(p.type))", next.range)
                }
                throw fail(.invalidQuery, "'\(p.name)' is \(Binder.typeName(p.type)), not a link: '\(next.name)' cannot follow it", next.range)
            }
            steps.append(.value(cls: cls, prop: p.name))
            return done(ValueKind(type: p.type, objectClass: nil, isMulti: multi, nullable: p.isOptional || nullable || p.type == .mixed))
        }
        // Ended on a collection of objects: its elements.
        steps.append(.selfKey)
        return done(ValueKind(type: .link, objectClass: cls, isMulti: multi, nullable: false))

        // Local helpers (nested functions capture the loop state).
        func many(_ source: ManySource, target: String) throws(QueryError) {
            if i < comps.count, let a = try aggregate(comps[i]) {
                let aggComp = comps[i]
                var aggProp: String?
                if a != .count {
                    guard i + 1 < comps.count else {
                        throw fail(.invalidQuery, "\(a.rawValue) of a list of objects needs a property: \(aggComp.name).property", aggComp.range)
                    }
                    let pc = comps[i + 1]
                    let ts = try classSchema(target, pc.range)
                    guard let tp = ts.property(named: pc.name) else { throw fail(.unknownProperty, unknownMessage(pc.name, ts), pc.range) }
                    guard !tp.isList, tp.type != .link, tp.type != .linkingObjects else {
                        throw fail(.invalidQuery, "\(a.rawValue) needs a property holding values, and '\(pc.name)' is not one", pc.range)
                    }
                    try checkAggregate(a, tp.type, aggComp)
                    aggProp = tp.name
                    aggType = aggregateType(a, tp.type)
                    i += 2
                } else {
                    aggType = .int
                    i += 1
                }
                if i < comps.count { throw fail(.invalidQuery, "nothing can follow an aggregate", comps[i].range) }
                steps.append(.many(source, aggregate: a, aggregateProperty: aggProp))
                aggregateKind = a
                return
            }
            steps.append(.many(source, aggregate: nil, aggregateProperty: nil))
            multi = true
            cls = target
        }
        func finishAggregate() -> BoundPath {
            done(ValueKind(type: aggType, objectClass: nil, isMulti: multi,
                           nullable: aggregateKind != .count && aggregateKind != .sum))
        }
    }

    func aggregate(_ c: KeyPath.Component) throws(QueryError) -> Aggregate? {
        switch c.name {
        case "@count", "@size": return .count
        case "@min": return .min
        case "@max": return .max
        case "@sum": return .sum
        case "@avg": return .avg
        default:
            if c.name.hasPrefix("@") { throw fail(.invalidQuery, "unknown aggregate '\(c.name)'; expected @count, @size, @min, @max, @sum or @avg", c.range) }
            return nil
        }
    }

    func checkAggregate(_ a: Aggregate, _ t: PropertyType, _ c: KeyPath.Component) throws(QueryError) {
        switch a {
        case .count: return
        case .min, .max:
            if Binder.isNumeric(t) || t == .date || t == .mixed { return }
        case .sum, .avg:
            if Binder.isNumeric(t) || t == .mixed { return }
        }
        throw fail(.typeMismatch, "\(a.rawValue) cannot apply to \(Binder.typeName(t))", c.range)
    }

    func aggregateType(_ a: Aggregate, _ t: PropertyType) -> PropertyType? {
        switch a {
        case .count: return .int
        case .min, .max: return t == .mixed ? nil : t
        case .sum: return t == .mixed ? nil : (t == .float ? .double : t)
        case .avg: return t == .decimal128 ? .decimal128 : (t == .mixed ? nil : .double)
        }
    }

    /// A key path for SORT or DISTINCT: to-one links only, ending at a value.
    mutating func orderingPath(_ k: KeyPath, on cls: String, clause: String) throws(QueryError) -> BoundPath {
        let p = try path(k, on: cls, variables: [:])
        if p.typeOf { throw fail(.invalidQuery, "\(clause) key path '\(k)' must lead through to-one links to a value", k.range) }
        for s in p.steps {
            switch s {
            case .toOne, .value: continue
            default:
                throw fail(.invalidQuery, "\(clause) key path '\(k)' must lead through to-one links to a value", k.range)
            }
        }
        return p
    }
}
