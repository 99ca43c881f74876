import RealmStorage

/// Resolves names to handles once per evaluation and gathers key-path values of single objects.
final class Executor {
    let snapshot: any ObjectReader
    /// Names resolved in `snapshot`; a prepared query shares them between evaluations in one snapshot.
    let resolved: ResolvedHandles

    init(_ snapshot: any ObjectReader, handles: ResolvedHandles = ResolvedHandles()) {
        self.snapshot = snapshot
        self.resolved = handles
    }

    func table(_ name: String) throws -> TableHandle {
        if let t = resolved.tables[name] { return t }
        let t = try snapshot.table(name)
        resolved.tables[name] = t
        return t
    }

    func handle(_ cls: String, _ prop: String) throws -> PropertyHandle {
        let k = HandleKey(cls: cls, prop: prop)
        if let h = resolved.handles[k] { return h }
        let h = try snapshot.property(table(cls), prop)
        resolved.handles[k] = h
        return h
    }

    func schema(_ cls: String, _ prop: String) -> PropertySchema? {
        if resolved.schemas[cls] == nil { resolved.schemas[cls] = snapshot.classSchema(cls) }
        return resolved.schemas[cls]?.property(named: prop)
    }

    // MARK: Gathering values

    /// Appends the values `path` yields for the object `key` (one for a scalar path, any number through lists).
    func gather(_ path: BoundPath, _ key: ObjectKey, into out: inout [Value]) throws {
        try gather(path.steps, 0, key, &out)
    }

    private func gather(_ steps: [BoundStep], _ i: Int, _ key: ObjectKey, _ out: inout [Value]) throws {
        switch steps[i] {
        case .toOne(let cls, let prop, _):
            if case .link(let k) = try snapshot.value(key, handle(cls, prop)) {
                try gather(steps, i + 1, k, &out)
            } else if !steps[(i + 1)...].contains(where: {
                switch $0 {
                case .many(_, nil, _), .primitiveList(_, _, nil), .dictionary(_, _, .values, nil), .dictionary(_, _, .keys, _): return true
                default: return false
                }
            }) {
                // Through a null link a path gives null (unless a list follows: then no values at all).
                out.append(.null)
            }
        case .many(let source, let aggregate, let aggregateProperty):
            let keys = try collection(source, key)
            if let aggregate {
                if aggregate == .count {
                    out.append(.int(Int64(keys.count)))
                } else {
                    let h = try handle(source.targetClass, aggregateProperty!)
                    var values: [Value] = []
                    values.reserveCapacity(keys.count)
                    for k in keys { values.append(try snapshot.value(k, h)) }
                    out.append(Executor.aggregate(aggregate, values))
                }
            } else {
                for k in keys { try gather(steps, i + 1, k, &out) }
            }
        case .value(let cls, let prop):
            out.append(try snapshot.value(key, handle(cls, prop)))
        case .primitiveList(let cls, let prop, let aggregate):
            let values = try snapshot.list(key, handle(cls, prop))
            if let aggregate { out.append(Executor.aggregate(aggregate, values)) } else { out.append(contentsOf: values) }
        case .dictionary(let cls, let prop, let part, let aggregate):
            let d = try snapshot.dictionary(key, handle(cls, prop))
            switch part {
            case .keys: out.append(contentsOf: d.keys.map { Value.string($0) })
            case .key(let k): out.append(d[k] ?? .null)
            case .values:
                if let aggregate { out.append(Executor.aggregate(aggregate, d.values)) } else { out.append(contentsOf: d.values) }
            }
        case .listElement(let cls, let prop, let index):
            let values = try snapshot.list(key, handle(cls, prop))
            if !values.isEmpty {
                let n = index == KeyPath.Component.lastIndex ? values.count - 1 : index
                out.append(n >= 0 && n < values.count ? values[n] : .null)
            }
        case .mixedPath(let cls, let prop, let path):
            let h = try handle(cls, prop)
            let v: Value = h.isDictionary ? .dictionary(try snapshot.dictionary(key, h))
                : h.isList ? .list(try snapshot.list(key, h)) : try snapshot.value(key, h)
            try walk(v, path[...], &out)
        case .length(let cls, let prop):
            switch try snapshot.value(key, handle(cls, prop)) {
            case .string(let s): out.append(.int(Int64(s.utf8.count)))
            case .data(let d): out.append(.int(Int64(d.count)))
            default: out.append(.null)
            }
        case .allLinksCount(let cls):
            let all = try snapshot.allBacklinks(key, in: table(cls))
            out.append(.int(Int64(all.reduce(0) { $0 + $1.keys.count })))
        case .selfKey:
            out.append(.link(key))
        }
    }

    /// Follows `path` from the mixed value `v`: keys into dictionaries and into the objects typed links lead
    /// to, positions into lists, `[*]` over every element or value, `@size` last. A step that leads nowhere
    /// gives null; `[*]` over an empty collection or a value that is none gives nothing.
    private func walk(_ v: Value, _ path: ArraySlice<MixedStep>, _ out: inout [Value]) throws {
        guard let step = path.first else {
            out.append(v)
            return
        }
        let rest = path.dropFirst()
        switch (step, v) {
        case (.key(let k), .dictionary(let d)): try walk(d[k] ?? .null, rest, &out)
        case (.key(let k), .typedLink(let classID, let target)):
            try walk(try property(k, of: target, classID: classID), rest, &out)
        case (.index(let n), .list(let l)):
            let i = n == KeyPath.Component.lastIndex ? l.count - 1 : n
            try walk(i >= 0 && i < l.count ? l[i] : .null, rest, &out)
        case (.all, .list(let l)):
            for e in l { try walk(e, rest, &out) }
        case (.all, .dictionary(let d)):
            for e in d.values { try walk(e, rest, &out) }
        case (.all, _):
            return
        case (.keys, .dictionary(let d)):
            if let v = d["@keys"] { return out.append(v) }
            out.append(contentsOf: d.keys.map { Value.string($0) })
        case (.values, .dictionary(let d)):
            for e in d.values { try walk(e, rest, &out) }
        case (.keys, _), (.values, _):
            return
        case (.size, _):
            out.append(Executor.size(v))
        default:
            try walk(.null, rest, &out)
        }
    }

    /// The value of the property `name` of the object a typed link leads to, as a mixed value: a link as a
    /// typed link, a list or set as a list, a dictionary as one; null when the class has no such property.
    private func property(_ name: String, of key: ObjectKey, classID: UInt32) throws -> Value {
        guard let cls = snapshot.className(classID: classID), let p = schema(cls, name), p.type != .linkingObjects else {
            return .null
        }
        let h = try handle(cls, name)
        let targetID = p.type == .link ? p.objectClassName.flatMap { snapshot.classID(named: $0) } : nil
        func typed(_ v: Value) -> Value {
            if case .link(let k) = v, let targetID { return .typedLink(classID: targetID, key: k) }
            return v
        }
        if p.isDictionary {
            let d = try snapshot.dictionary(key, h)
            return .dictionary(ValueDictionary(zip(d.keys, d.values.map(typed))))
        }
        if p.isList || p.isSet { return .list(try snapshot.list(key, h).map(typed)) }
        return typed(try snapshot.value(key, h))
    }

    /// `@size` of a mixed value, as Realm Core's `SizeOperator<Mixed>`: elements of a list or dictionary, bytes
    /// of a string or data, else null.
    static func size(_ v: Value) -> Value {
        switch v {
        case .list(let l): return .int(Int64(l.count))
        case .dictionary(let d): return .int(Int64(d.count))
        case .string(let s): return .int(Int64(s.utf8.count))
        case .data(let d): return .int(Int64(d.count))
        default: return .null
        }
    }

    func collection(_ source: ManySource, _ key: ObjectKey) throws -> [ObjectKey] {
        switch source {
        case .listElement(let cls, let prop, _, let index):
            let l = try snapshot.list(key, handle(cls, prop))
            let n = index == KeyPath.Component.lastIndex ? l.count - 1 : index
            guard n >= 0, n < l.count, case .link(let k) = l[n] else { return [] }
            return [k]
        case .list(let cls, let prop, _), .linkingObjects(let cls, let prop, _):
            return try snapshot.list(key, handle(cls, prop)).compactMap { if case .link(let k) = $0 { return k } else { return nil } }
        case .links(let cls, let origin, let originProperty):
            return try snapshot.backlinks(key, in: table(cls), from: origin, property: originProperty)
        case .dictionary(let cls, let prop, let k, _):
            let d = try snapshot.dictionary(key, handle(cls, prop))
            let values = k.map { d[$0].map { [$0] } ?? [] } ?? d.values
            return values.compactMap { if case .link(let t) = $0 { return t } else { return nil } }
        }
    }

    /// `@count` of values, `@min`, `@max`, `@sum`, `@avg` (nulls, NaNs in `@min`/`@max` and non-numbers
    /// skipped; empty: sum 0, the others null). With a decimal among the values, `@sum` and `@avg` are
    /// decimal arithmetic (`Decimal128 +` and `divided(by:)`, exact to 34 digits) and skip NaN decimals, as
    /// Realm Core's do; ints and doubles join them converted as `Semantics.decimal` converts them.
    static func aggregate(_ a: Aggregate, _ values: [Value]) -> Value {
        if a == .count { return .int(Int64(values.count)) }
        let vs = values.filter { v in
            switch v {
            case .int, .float, .double, .decimal128: return true
            case .date: return a == .min || a == .max
            default: return false
            }
        }
        switch a {
        case .count: return .int(Int64(vs.count))
        case .min, .max:
            var best: Value?
            for v in vs where !Semantics.isNaN(v) {
                guard let b = best else { best = v; continue }
                if let o = Semantics.order(v, b), a == .min ? o < 0 : o > 0 { best = v }
            }
            return best ?? .null
        case .sum:
            if vs.isEmpty { return .int(0) }
            if vs.allSatisfy({ if case .int = $0 { return true } else { return false } }) {
                return .int(vs.reduce(Int64(0)) { if case .int(let i) = $1 { return $0 &+ i } else { return $0 } })
            }
            if let r = decimalSum(vs) { return .decimal128(r.sum) }
            return .double(vs.reduce(0.0) { $0 + doubleValue($1) })
        case .avg:
            if vs.isEmpty { return .null }
            if let r = decimalSum(vs) { return r.count == 0 ? .null : .decimal128(r.sum.divided(by: r.count)) }
            let mean = vs.reduce(0.0) { $0 + doubleValue($1) } / Double(vs.count)
            return .double(mean)
        }
    }

    /// The decimal sum of numbers and how many were added, when one of them is a decimal (else nil).
    static func decimalSum(_ vs: [Value]) -> (sum: Decimal128, count: Int)? {
        guard vs.contains(where: { if case .decimal128 = $0 { return true } else { return false } }) else { return nil }
        var sum = Decimal128.zero
        var n = 0
        for v in vs {
            if case .decimal128(let d) = v {
                if d.isNaN { continue }
                sum += d
            } else if let d = Semantics.decimal(v) {
                sum += d
            } else {
                sum = .nan  // a NaN double or float
            }
            n += 1
        }
        return (sum, n)
    }

    static func doubleValue(_ v: Value) -> Double {
        switch v {
        case .int(let i): return Double(i)
        case .float(let f): return Double(f)
        case .double(let d): return d
        case .decimal128(let d): return d.doubleValue
        default: return 0
        }
    }
}

/// Aggregates over stored values as the query language computes them (`@min`, `@max`, `@sum`, `@avg`), public
/// so that the object layer's `min`, `max`, `sum` and `average` give the same answers.
public enum ValueAggregate {
    /// The sum of the numbers among `values`: an int when all are ints (0 when there are none), a decimal
    /// when one is a decimal, else a double.
    public static func sum(_ values: [Value]) -> Value { Executor.aggregate(.sum, values) }
    /// The mean of the numbers among `values` (a decimal when one is a decimal, else a double), or null.
    public static func average(_ values: [Value]) -> Value { Executor.aggregate(.avg, values) }
}

struct HandleKey: Hashable {
    var cls: String
    var prop: String
}

/// Tables, property handles and schemas looked up in one snapshot.
final class ResolvedHandles {
    var tables: [String: TableHandle] = [:]
    var handles: [HandleKey: PropertyHandle] = [:]
    var schemas: [String: ClassSchema] = [:]
}

/// `l op rhs` with IN and BETWEEN: the one definition every node uses for a single left value.
@inline(__always)
func matchValue(_ l: Value, _ op: Comparison.Operator, _ options: Comparison.Options, _ rhs: [Value], rhsIsList: Bool) -> Bool {
    switch op {
    case .between:
        return rhs.count == 2 && Semantics.test(l, .greaterOrEqual, options, rhs[0]) && Semantics.test(l, .lessOrEqual, options, rhs[1])
    case .in:
        return rhs.contains { Semantics.equal(l, $0, options) }
    default:
        // A list on the right of another operator (a key path through a list): ANY of its values.
        return rhs.contains { Semantics.test(l, op, options, $0) }
    }
}
