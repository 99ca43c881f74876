import RealmStorage

/// Binding key paths: each component resolved against the schema (links, lists, sets, dictionaries, mixed
/// values, backlinks, aggregates), and the paths of SORT and DISTINCT.
extension Binder {
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
