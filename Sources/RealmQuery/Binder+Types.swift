import RealmStorage

/// The binder's type rules: which types compare with which, and how they are named in messages.
extension Binder {
    // MARK: Types

    static func typeName(_ t: PropertyType?) -> String {
        guard let t else { return "null" }
        switch t {
        case .int, .float, .double, .decimal128: return "a number"
        case .string: return "a string"
        case .bool: return "a bool"
        case .data: return "binary data"
        case .date: return "a date"
        case .objectId: return "an object id"
        case .uuid: return "a uuid"
        case .link, .linkingObjects, .backlink: return "an object"
        case .mixed: return "a mixed value"
        }
    }

    static func isNumeric(_ t: PropertyType) -> Bool { t == .int || t == .float || t == .double || t == .decimal128 }

    /// Whether values of types `a` and `b` can be compared at all.
    static func compatible(_ a: PropertyType, _ b: PropertyType) -> Bool {
        if a == .mixed || b == .mixed { return true }
        if isNumeric(a) && isNumeric(b) { return true }
        if (a == .string && b == .data) || (a == .data && b == .string) { return true }
        return a == b
    }

    func typeCheck(lhs: BoundOperand, lhsKind: ValueKind, op: Comparison.Operator, options: Comparison.Options,
                   rhs: BoundOperand, comparison c: Comparison) throws(QueryError) {
        // Only the messages need the text: printing it for every binding cost 4 % of an indexed lookup.
        var lhsText: String { "'\(c.lhs)'" }
        guard let lt = lhsKind.type else { return }  // mixed or null on the left
        // Operators that need an order or text.
        if op.isStringOperator || !options.isEmpty {
            guard lt == .string || lt == .data || lt == .mixed else {
                throw fail(.typeMismatch, "\(op.rawValue)\(options.isEmpty ? "" : " with [c]/[d]") applies to strings and binary data, and \(lhsText) is \(Binder.typeName(lt))", c.range)
            }
        }
        if [.less, .lessOrEqual, .greater, .greaterOrEqual, .between].contains(op), lt == .bool || lt == .link || lt == .data {
            throw fail(.typeMismatch, "'\(op.rawValue)' cannot order \(Binder.typeName(lt)); only == and != apply to \(lhsText)", c.range)
        }
        switch rhs {
        case .constant(let vs, _, let r):
            for v in vs {
                guard let vt = v.type else { continue }  // null compares with anything
                if lt == .link {
                    if vt == .link { continue }
                    throw fail(.typeMismatch, "\(lhsText) is a link and cannot be compared with \(Binder.typeName(vt)); compare one of its properties (\(c.lhs).name) or with nil", r)
                }
                if op.isStringOperator && !(vt == .string || vt == .data) {
                    throw fail(.typeMismatch, "\(op.rawValue) needs a string, not \(Binder.typeName(vt))", r)
                }
                if !Binder.compatible(lt, vt) {
                    throw fail(.typeMismatch, "type mismatch: \(lhsText) is \(Binder.typeName(lt)) and cannot be compared with \(Binder.typeName(vt))", r)
                }
            }
        case .path(let p):
            guard let rt = p.kind.type else { return }
            if !Binder.compatible(lt, rt) || (lt == .link && p.kind.objectClass != lhsKind.objectClass) {
                throw fail(.typeMismatch, "type mismatch: \(lhsText) is \(Binder.typeName(lt)) and '\(c.rhs)' is \(Binder.typeName(rt))", p.range)
            }
        case .subqueryCount(_, _, _, let r):
            if !Binder.isNumeric(lt) { throw fail(.typeMismatch, "type mismatch: \(lhsText) is \(Binder.typeName(lt)) and a SUBQUERY count is a number", r) }
        case .arithmetic(_, _, _, let r):
            if !Binder.isNumeric(lt) && lt != .mixed { throw fail(.typeMismatch, "type mismatch: \(lhsText) is \(Binder.typeName(lt)) and '\(c.rhs)' is a number", r) }
        }
    }
}
