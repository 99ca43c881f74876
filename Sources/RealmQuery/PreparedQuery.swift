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
    /// How many times the query was bound afresh (the binding not reused), for tests.
    private(set) var bindings = 0

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
        return bound
    }

    /// The snapshot (as `handleSnapshot`) the current binding was last checked against or made in.
    private var checkedSnapshot: (id: ObjectIdentifier, database: ObjectIdentifier, version: UInt64)?

    /// The keys of the matching objects, as `BoundQuery.evaluate(in:)` gives them.
    public func evaluate(in snapshot: any ObjectReader, arguments: [QueryArgument] = []) throws -> [ObjectKey] {
        let current = (ObjectIdentifier(snapshot), snapshot.databaseIdentity, snapshot.version)
        // A write transaction's schema can change under the same version: it is checked every time.
        let frozen = !(snapshot is WriteTransaction)
        let bound = try bind(in: ReaderSchema(reader: snapshot), arguments: arguments, schemaChecked: frozen && checkedSnapshot.map { $0 == current } ?? false)
        checkedSnapshot = binding == nil || !frozen ? nil : current
        if handleSnapshot.map({ $0 != current }) ?? true {
            handles = ResolvedHandles()
            handleSnapshot = current
        }
        return try bound.evaluate(in: snapshot, executor: Executor(snapshot, handles: handles))
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
