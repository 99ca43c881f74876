import RealmStorage

/// How a constant that holds argument values is rebuilt from new arguments.
enum ArgumentPart: Sendable {
    case literal(Value)
    case argument(Int)
}

/// What binding depends on in an argument: its value types and, for several values, how many.
enum ArgumentKind: Equatable {
    case value(PropertyType?)
    case list([PropertyType?])

    init(_ a: QueryArgument) {
        switch a {
        case .value(let v): self = .value(v.type)
        case .list(let vs): self = .list(vs.map(\.type))
        }
    }
}

/// A query prepared for one class, to be evaluated many times with new argument values: the engine's
/// prepared statement (DECISIONS 40).
///
/// The first evaluation binds the query (every name, type and argument checked, errors as from `bind`);
/// later ones whose arguments have the same kinds (types, and counts for several values) put the new
/// values in place of the old without binding again, and reuse the property handles resolved in the same
/// snapshot. A different schema for any class the query names, or arguments of other kinds, bind it
/// again. Not thread-safe: one prepared query per thread.
public final class PreparedQuery {
    public let query: Query
    public let className: String

    private struct Binding {
        var bound: BoundQuery
        var templates: [ConstantPlace: [ArgumentPart]]
        var kinds: [ArgumentKind]
        var consulted: [String: ClassSchema]
    }
    private var binding: Binding?
    /// The snapshot the handles were resolved in, by identity and version (not a reference: a prepared query
    /// must not keep a snapshot, and with it its version's pages, alive; and a weak reference would slow
    /// every retain of the snapshot).
    private var handleSnapshot: (id: ObjectIdentifier, database: ObjectIdentifier, version: UInt64)?
    private var handles = ResolvedHandles()
    /// Set with `binding` when the query is one `==` on an indexed property, of the class or through one link:
    /// evaluations then look the index up directly.
    private var indexed: IndexedEquality?
    /// How many times the query was bound afresh (the binding not reused), for tests.
    private(set) var bindings = 0
    /// How many evaluations the index answered directly (`IndexedEquality`), for tests.
    private(set) var indexedLookups = 0

    public init(_ query: Query, on className: String) {
        self.query = query
        self.className = className
    }

    public convenience init(_ text: String, on className: String) throws(QueryError) {
        self.init(try Query.parse(text), on: className)
    }

    /// The query bound with `arguments`, reusing the last binding when it still applies.
    public func bind(in schema: QuerySchema, arguments: [QueryArgument] = []) throws(QueryError) -> BoundQuery {
        try bind(in: schema, arguments: arguments, schemaChecked: false)
    }

    /// The query bound in the classes `reader` reads.
    public func bind(in reader: any ObjectReader, arguments: [QueryArgument] = []) throws(QueryError) -> BoundQuery {
        try bind(in: ReaderSchema(reader: reader), arguments: arguments, schemaChecked: false)
    }

    /// `schemaChecked`: the binding was last checked against this very schema (a read snapshot's schema
    /// never changes), so the classes it consulted need not be compared again (`perf`: comparing them was most of
    /// binding a prepared link query).
    private func bind(in schema: QuerySchema, arguments: [QueryArgument], schemaChecked: Bool) throws(QueryError) -> BoundQuery {
        let kinds = arguments.map(ArgumentKind.init)
        if let b = binding, b.kinds == kinds, schemaChecked || b.consulted.allSatisfy({ schema.classSchema($0.key) == $0.value }) {
            if b.templates.isEmpty { return b.bound }
            var bound = b.bound
            bound.predicate = bound.predicate.substituting(b.templates, arguments)
            return bound
        }
        checkedSnapshot = nil
        bindings += 1
        var binder = Binder(query: query, schema: schema, arguments: arguments)
        let bound = try query.bind(to: className, with: &binder)
        let reusable = !binder.hasArgumentSubscripts && binder.templates.keys.allSatisfy { binder.constantPlaces[$0] == 1 }
        binding = reusable ? Binding(bound: bound, templates: binder.templates, kinds: kinds, consulted: binder.consulted) : nil
        indexed = reusable ? IndexedEquality(bound, binder.templates, binder.consulted, kinds: kinds) : nil
        return bound
    }

    /// The snapshot (as `handleSnapshot`) the current binding was last checked against or made in.
    private var checkedSnapshot: (id: ObjectIdentifier, database: ObjectIdentifier, version: UInt64)?

    /// The keys of the matching objects, as `BoundQuery.evaluate(in:)` gives them.
    public func evaluate(in snapshot: any ObjectReader, arguments: [QueryArgument] = []) throws -> [ObjectKey] {
        let current = (ObjectIdentifier(snapshot), snapshot.databaseIdentity, snapshot.version)
        // A write transaction's schema can change under the same version: it is checked every time.
        let frozen = !(snapshot is WriteTransaction)
        let schemaChecked = frozen && checkedSnapshot.map { $0 == current } ?? false
        // One `==` on an indexed property, bound and checked in this snapshot, arguments of the same kinds: the
        // index answers without a predicate being rebuilt, compiled or run (DECISIONS 112).
        if schemaChecked, let plan = indexed, ArgumentKind.match(plan.kinds, arguments),
           let keys = try plan.keys(in: snapshot, queriedClass: className, arguments: arguments) {
            indexedLookups += 1
            return keys
        }
        let bound = try bind(in: ReaderSchema(reader: snapshot), arguments: arguments, schemaChecked: schemaChecked)
        checkedSnapshot = binding == nil || !frozen ? nil : current
        if handleSnapshot.map({ $0 != current }) ?? true {
            handles = ResolvedHandles()
            handleSnapshot = current
        }
        let executor = Executor(snapshot, handles: handles)
        // The handles for the lookups that follow in this snapshot (none in a write transaction).
        if let plan = indexed {
            if frozen { try plan.resolve(executor, queriedClass: className) } else { plan.handle = nil }
        }
        return try bound.evaluate(in: snapshot, executor: executor)
    }
}

/// A prepared query that is one `prop == value` on an indexed (or primary key) property of the queried
/// class, of a type the index holds as stored (not mixed), with no ordering clauses and no object literal:
/// what `ColumnNode.indexed` answers, looked up without the rest of an evaluation. Or one `link.prop == value`
/// through a to-one link or a list of links to such a property: what `GenericNode.backwards` answers, the
/// index looked up and the backlinks of its matches read, again without the rest.
final class IndexedEquality {
    /// The class whose index is looked up: the queried class, or the target of `link`.
    let indexedClass: String
    let property: String
    let type: PropertyType
    /// The value compared with: a literal, or the argument it is taken from.
    let part: ArgumentPart
    /// The kinds of the arguments it was bound with.
    let kinds: [ArgumentKind]
    /// For `link.prop == value`: the queried class's link property (to-one or a list) leading to `indexedClass`.
    let link: String?
    /// The property's handle in the snapshot the prepared query last checked its binding against.
    var handle: PropertyHandle?
    /// With `link`: the tables of the link's target and of the queried class, in that snapshot.
    var tables: (target: TableHandle, origin: TableHandle)?

    init?(_ bound: BoundQuery, _ templates: [ConstantPlace: [ArgumentPart]], _ consulted: [String: ClassSchema],
          kinds: [ArgumentKind]) {
        guard bound.ordering.isEmpty, bound.objectLiterals.isEmpty, case .comparison(let c) = bound.predicate,
              c.quantifier == .any, c.op == .equal, c.options.isEmpty,
              case .path(let path) = c.lhs, path.variable == nil, !path.typeOf,
              case .constant(let values, let isList, let range) = c.rhs, !isList, values.count == 1 else { return nil }
        switch (path.steps.first, path.steps.count) {
        case (.value(_, let prop), 1):
            indexedClass = bound.className
            property = prop
            link = nil
        case (.toOne(let cls, let linkProp, let target), 2), (.many(.list(let cls, let linkProp, let target), nil, _), 2):
            // The hop as `GenericNode.backwards` follows it back: the target's backlinks from this property.
            guard cls == bound.className, case .value(target, let prop) = path.steps[1] else { return nil }
            indexedClass = target
            property = prop
            link = linkProp
        default:
            return nil
        }
        guard let schema = consulted[indexedClass]?.property(named: property),
              schema.isIndexed || schema.isPrimaryKey, schema.type != .mixed, !schema.isCollection else { return nil }
        if let t = templates[ConstantPlace(range)] {
            guard t.count == 1, case .argument = t[0] else { return nil }
            part = t[0]
        } else {
            part = .literal(values[0])
        }
        type = schema.type
        self.kinds = kinds
    }

    /// Resolves the handles for the lookups that follow in the executor's snapshot.
    func resolve(_ executor: Executor, queriedClass: String) throws {
        handle = try executor.handle(indexedClass, property)
        tables = link == nil ? nil : (try executor.table(indexedClass), try executor.table(queriedClass))
    }

    /// The matching keys in key order, as the general evaluation gives them; nil when it must run instead (a
    /// null compared, which the scan answers; through a link, more matches than `GenericNode.backwards`
    /// follows back).
    func keys(in snapshot: any ObjectReader, queriedClass: String, arguments: [QueryArgument]) throws -> [ObjectKey]? {
        guard let handle else { return nil }
        let value: Value
        switch part {
        case .literal(let v): value = v
        case .argument(let n):
            guard n < arguments.count, case .value(let v) = arguments[n] else { return nil }
            value = v
        }
        guard let v = ColumnNode.converted(value, to: type) else { return value.isNull ? nil : [] }
        var keys = try snapshot.find(handle, equalTo: v)
        if let link {
            guard let tables else { return nil }
            if keys.isEmpty { return [] }
            // The same limit as `GenericNode.backwards`: past it the general path scans.
            if keys.count * 8 > max(64, try snapshot.count(tables.origin)) { return nil }
            let origins = try snapshot.backlinks(of: keys, in: tables.target, from: queriedClass, property: link)
            return origins.sortedUnique()
        }
        if !keys.isSortedAscending { keys.sort() }
        return keys
    }
}

extension Array where Element == ObjectKey {
    /// The keys in ascending order, each once (an origin comes twice when a list holds a target twice, or links
    /// two targets): a sort and a pass, cheaper than hashing every key into a set.
    func sortedUnique() -> [ObjectKey] {
        var sorted = self
        if !sorted.isSortedAscending { sorted.sort() }
        var out: [ObjectKey] = []
        out.reserveCapacity(sorted.count)
        for k in sorted where out.last != k { out.append(k) }
        return out
    }

    var isSortedAscending: Bool {
        var i = 1
        while i < count {
            if self[i] < self[i - 1] { return false }
            i += 1
        }
        return true
    }
}

extension ArgumentKind {
    /// Whether `arguments` have the kinds `kinds` (`kinds == arguments.map(ArgumentKind.init)`, without the array).
    static func match(_ kinds: [ArgumentKind], _ arguments: [QueryArgument]) -> Bool {
        guard kinds.count == arguments.count else { return false }
        for i in 0..<kinds.count {
            switch (kinds[i], arguments[i]) {
            case (.value(let t), .value(let v)): if t != v.type { return false }
            case (.list, .list): if kinds[i] != ArgumentKind(arguments[i]) { return false }
            default: return false
            }
        }
        return true
    }
}

extension BoundPredicate {
    /// The predicate with the constants made from arguments rebuilt from `arguments`.
    func substituting(_ templates: [ConstantPlace: [ArgumentPart]], _ arguments: [QueryArgument]) -> BoundPredicate {
        switch self {
        case .constant: return self
        case .and(let ps): return .and(ps.map { $0.substituting(templates, arguments) })
        case .or(let ps): return .or(ps.map { $0.substituting(templates, arguments) })
        case .not(let p): return .not(p.substituting(templates, arguments))
        case .comparison(var c):
            c.lhs = c.lhs.substituting(templates, arguments)
            c.rhs = c.rhs.substituting(templates, arguments)
            return .comparison(c)
        }
    }
}

extension BoundOperand {
    func substituting(_ templates: [ConstantPlace: [ArgumentPart]], _ arguments: [QueryArgument]) -> BoundOperand {
        switch self {
        case .constant(_, let isList, let r):
            guard let parts = templates[ConstantPlace(r)] else { return self }
            var values: [Value] = []
            for part in parts {
                switch part {
                case .literal(let v): values.append(v)
                case .argument(let n):
                    switch arguments[n] {
                    case .value(let v): values.append(v)
                    case .list(let vs): values.append(contentsOf: vs)
                    }
                }
            }
            return .constant(values, isList: isList, r)
        case .path:
            return self
        case .subqueryCount(let collection, let element, let predicate, let r):
            return .subqueryCount(collection: collection, elementClass: element, predicate: predicate.substituting(templates, arguments), r)
        case .arithmetic(let op, let l, let r, let range):
            return .arithmetic(op, l.substituting(templates, arguments), r.substituting(templates, arguments), range)
        }
    }
}
