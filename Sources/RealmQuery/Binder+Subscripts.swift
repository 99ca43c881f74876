import RealmStorage

// Subscripts in key paths (`[0]`, `[FIRST]`, `[LAST]`, `[*]`, `['key']`) and keys after a dot: where they
// lead, and what the messages say when they cannot follow a property (DECISIONS 86).

extension Binder {
    /// Whether the components after the mixed property `p` lead into its value (`Executor.walk`): a key,
    /// position or `[*]`, and on a single mixed value also a property name (a key, or a property of the object a
    /// typed link leads to, as in Realm Core) or `@size`. A dictionary of mixed values goes in only when
    /// something follows its first key or `[*]` (`dict['k'][0]`, `dict.k.name`); alone, these are the
    /// dictionary's own (`dict['k']`, `dict[*]`, `dict.k.@type`).
    func mixedPathFollows(_ p: PropertySchema, _ rest: ArraySlice<KeyPath.Component>) -> Bool {
        guard let first = rest.first else { return false }
        // What a mixed value's walk reads besides keys, positions and `[*]`.
        func walks(_ n: KeyPath.Component) -> Bool {
            n.isSubscript || !n.name.hasPrefix("@") || ["@size", "@count", "@keys", "@allKeys", "@values", "@allValues"].contains(n.name)
        }
        if p.isDictionary {
            guard first.key != nil || first.isAll || !first.name.hasPrefix("@"), rest.count > 1 else { return false }
            return walks(rest[rest.startIndex + 1])
        }
        if p.isList { return first.isSubscript }
        return walks(first)
    }

    /// Whether `n`, after a dot following the dictionary `p`, is one of its keys: always for values; through
    /// links only when the target class has no property of that name.
    mutating func dotIsKey(_ n: KeyPath.Component, after p: PropertySchema) throws(QueryError) -> Bool {
        guard p.type == .link else { return true }
        return try classSchema(p.objectClassName ?? "", n.range).property(named: n.name) == nil
    }

    /// Why a subscript cannot follow the list or set `p`.
    func positionMessage(_ p: PropertySchema, _ n: KeyPath.Component) -> String {
        if p.isSet { return "'\(p.name)' is a set: its elements have no positions, and '\(spelled(n))' cannot follow it" }
        return "'\(p.name)' is a list: '\(spelled(n))' cannot follow it; a position ([0], [FIRST], [LAST]) or [*] can"
    }

    /// A component as written in the query (`[FIRST]`, `['k']`), or printed when the tree was built in code.
    /// `components` with each subscript given by an argument replaced by the key (a string argument) or the
    /// position (an integer) it holds, as Realm Core's `get_arg_for_index`; any other argument is an error.
    mutating func argumentSubscriptsResolved(_ components: [KeyPath.Component]) throws(QueryError) -> [KeyPath.Component] {
        guard components.contains(where: { $0.argument != nil }) else { return components }
        hasArgumentSubscripts = true
        var out = components
        for (i, c) in components.enumerated() {
            guard let n = c.argument else { continue }
            guard n < arguments.count else {
                throw fail(.invalidArgument, "no value for argument $\(n): \(arguments.count == 1 ? "1 argument was" : "\(arguments.count) arguments were") given", c.range)
            }
            let why: String
            switch arguments[n] {
            case .value(.string(let key)):
                out[i] = KeyPath.Component(key: key, c.range)
                continue
            case .value(.int(let x)):
                guard let position = Int(exactly: x) else { why = "the position \(x) is too large"; break }
                out[i] = KeyPath.Component(index: position, c.range)
                continue
            case .value(.null): why = "it is null"
            case .list: why = "it holds several values"
            case .value(let v): why = "it is of type \(Semantics.typeName(v))"
            }
            throw fail(.invalidArgument, "argument $\(n) in brackets must be a string (a key) or an integer (a position): \(why)", c.range)
        }
        return out
    }

    func spelled(_ c: KeyPath.Component) -> String {
        let b = Array(query.text.utf8)
        if c.range.end > c.range.start, c.range.end <= b.count {
            return String(decoding: b[c.range.start..<c.range.end], as: UTF8.self)
        }
        return KeyPath(components: [c]).description
    }
}
