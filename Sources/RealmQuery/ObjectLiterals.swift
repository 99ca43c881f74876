import RealmStorage

// `obj('Class', primaryKey)`: bound as a placeholder link with the class and key kept by the constant's place,
// and looked up in the snapshot each evaluation reads (a bound query outlives snapshots).

/// A constant's place in the query text, compared by position (`SourceRange`s all compare equal).
struct ConstantPlace: Hashable, Sendable {
    let start: Int
    let end: Int
    init(_ r: SourceRange) {
        start = r.start
        end = r.end
    }
}

/// An element of a constant holding `obj(...)` literals: a value, or the object of a class with a primary key
/// (`typed`: compared with mixed values, so a typed link, which names its class, as a mixed value holds it).
enum ObjectPart: Sendable {
    case value(Value)
    case object(className: String, primaryKey: Value, typed: Bool)
}

extension Binder {
    /// The value a bound `obj(...)` stands for until the query runs (`BoundQuery.resolvedPredicate`).
    static let objectPlaceholder = Value.link(ObjectKey(0))

    /// `r`, or a place no other object literal holds (trees built in code have no positions).
    func unusedPlace(_ r: SourceRange) -> SourceRange {
        var p = r
        var n = 1
        while objectLiterals[ConstantPlace(p)] != nil {
            p = SourceRange(-n, -n)
            n += 1
        }
        return p
    }

    /// The primary key of `obj('Class', key)`, checked against the class: it exists, has a primary key, and
    /// the key has its type (or is null for an optional one).
    mutating func objectKey(_ o: ObjectLiteral, on cls: String, variables: [String: String]) throws(QueryError) -> Value {
        let target = try classSchema(o.className, o.classRange)
        guard let pk = target.properties.first(where: \.isPrimaryKey) else {
            throw fail(.invalidQuery, "class '\(o.className)' has no primary key; obj(...) finds an object by its primary key", o.classRange)
        }
        guard case .constant(let vs, let isList, let kr) = try operand(o.primaryKey, on: cls, variables: variables), !isList, vs.count == 1 else {
            throw fail(.invalidArgument, "the primary key in obj(...) is one value", o.primaryKey.range)
        }
        // An argument here is bound every time: a template cannot rebuild the looked-up object.
        constantPlaces[ConstantPlace(kr), default: 0] += 1
        let key = vs[0]
        if key.isNull {
            guard pk.isOptional else {
                throw fail(.typeMismatch, "the primary key of '\(o.className)' cannot be null", o.primaryKey.range)
            }
        } else if key.type != pk.type {
            throw fail(.typeMismatch, "the primary key of '\(o.className)' is \(Binder.typeName(pk.type)), not \(Binder.typeName(key.type))", o.primaryKey.range)
        }
        return key
    }

    /// The `obj(...)` literals of `constant` made typed links: it is compared with mixed values, which hold a
    /// link as a typed link (`extra == obj('Dog', 'Rex')`, `anys == obj(...)`, `dict.@values == obj(...)`).
    mutating func typeObjects(_ constant: BoundOperand, against kind: ValueKind) {
        guard kind.type == .mixed || kind.type == nil, case .constant(_, _, let r) = constant,
              let parts = objectLiterals[ConstantPlace(r)] else { return }
        objectLiterals[ConstantPlace(r)] = parts.map { part in
            if case .object(let cls, let key, _) = part { return .object(className: cls, primaryKey: key, typed: true) }
            return part
        }
    }

    /// An `obj(...)` literal of another class than the objects `kind` links to is an error (Realm: "The
    /// relationship ... cannot be compared to an argument of type ...").
    func checkObjectClasses(_ constant: BoundOperand, against kind: ValueKind, _ text: Expression) throws(QueryError) {
        guard case .constant(_, _, let r) = constant, let parts = objectLiterals[ConstantPlace(r)],
              kind.type == .link, let target = kind.objectClass else { return }
        for case .object(let cls, _, _) in parts where cls != target {
            throw fail(.typeMismatch, "'\(text)' links to '\(target)' and cannot be compared with an object of '\(cls)'", r)
        }
    }
}

extension BoundQuery {
    /// The predicate with each `obj(...)` literal replaced by the object it names in the executor's snapshot,
    /// or null when there is none (Realm Core's `ConstantNode::visit`: a key no object has is a null link).
    func resolvedPredicate(_ ex: Executor) throws -> BoundPredicate {
        if objectLiterals.isEmpty { return predicate }
        return try predicate.resolvingObjects(objectLiterals, ex)
    }
}

extension BoundPredicate {
    func resolvingObjects(_ table: [ConstantPlace: [ObjectPart]], _ ex: Executor) throws -> BoundPredicate {
        switch self {
        case .constant: return self
        case .and(let ps): return .and(try ps.map { try $0.resolvingObjects(table, ex) })
        case .or(let ps): return .or(try ps.map { try $0.resolvingObjects(table, ex) })
        case .not(let p): return .not(try p.resolvingObjects(table, ex))
        case .comparison(var c):
            c.lhs = try c.lhs.resolvingObjects(table, ex)
            c.rhs = try c.rhs.resolvingObjects(table, ex)
            return .comparison(c)
        }
    }
}

extension BoundOperand {
    func resolvingObjects(_ table: [ConstantPlace: [ObjectPart]], _ ex: Executor) throws -> BoundOperand {
        switch self {
        case .constant(_, let isList, let r):
            guard let parts = table[ConstantPlace(r)] else { return self }
            return .constant(try parts.map { part -> Value in
                switch part {
                case .value(let v): return v
                case .object(let cls, let key, let typed):
                    // A class the file does not have yet has no objects.
                    guard ex.snapshot.classSchema(cls) != nil,
                          let k = try ex.snapshot.object(ex.table(cls), primaryKey: key) else { return .null }
                    guard typed else { return .link(k) }
                    return ex.snapshot.classID(named: cls).map { .typedLink(classID: $0, key: k) } ?? .null
                }
            }, isList: isList, r)
        case .path: return self
        case .subqueryCount(let collection, let element, let predicate, let r):
            return .subqueryCount(collection: collection, elementClass: element, predicate: try predicate.resolvingObjects(table, ex), r)
        case .arithmetic(let op, let l, let r, let range):
            return .arithmetic(op, try l.resolvingObjects(table, ex), try r.resolvingObjects(table, ex), range)
        }
    }
}
