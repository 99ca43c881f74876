import RealmStorage

// How constants are read against the key path they are compared with: number literals as decimals beside a
// decimal128, strings as bytes beside binary data, and which operands give text.

extension Binder {
    /// Whether `e` is literals only (a literal or a list of them): no argument a prepared query puts back.
    static func isLiterals(_ e: Expression) -> Bool {
        switch e {
        case .literal: return true
        case .list(let items, _): return items.allSatisfy { if case .literal = $0 { return true } else { return false } }
        default: return false
        }
    }

    /// The constant `o` with its strings as their UTF-8 bytes: compared with binary data, a string written in
    /// the query (`'Ann'`, `B64"QW5u"`) is its bytes, as the string operators take it (Realm refuses `==`
    /// between a string and binary data; `docs/QUERY_LANGUAGE.md`).
    func binaryStrings(_ o: BoundOperand) -> BoundOperand {
        guard case .constant(let values, let isList, let r) = o, values.contains(where: { $0.type == .string }) else { return o }
        return .constant(values.map { v in
            if case .string(let s) = v { return .data(Array(s.utf8)) }
            return v
        }, isList: isList, r)
    }

    /// The constant `o`, bound from `e`, with its number literals read as decimal128 (`Literal.value(hint:)`):
    /// compared with a decimal128 key path, `12345678901234567890.15` is that decimal, not a rounded double.
    mutating func decimalLiterals(_ o: BoundOperand, from e: Expression) -> BoundOperand {
        guard case .constant(var values, let isList, let r) = o else { return o }
        switch e {
        case .literal(let l, _):
            return .constant([l.value(hint: .decimal128)], isList: isList, r)
        case .list(let items, _):
            // Every item gave one value (an argument holding several is refused in a list).
            guard items.count == values.count else { return o }
            for (i, item) in items.enumerated() {
                if case .literal(let l, _) = item { values[i] = l.value(hint: .decimal128) }
            }
            if templates[ConstantPlace(r)] != nil {
                templates[ConstantPlace(r)] = items.map { item in
                    if case .argument(let n, _) = item { return .argument(n) }
                    if case .literal(let l, _) = item { return .literal(l.value(hint: .decimal128)) }
                    return .literal(.null)
                }
            }
            return .constant(values, isList: isList, r)
        default:
            return o
        }
    }

    /// Whether an operand gives text: strings or binary data (or null, or a mixed value).
    static func isText(_ o: BoundOperand) -> Bool {
        switch o {
        case .constant(let vs, _, _): return vs.allSatisfy { $0.isNull || $0.type == .string || $0.type == .data }
        case .path(let p): return p.kind.type == nil || p.kind.type == .string || p.kind.type == .data || p.kind.type == .mixed
        case .subqueryCount, .arithmetic: return false
        }
    }
}
