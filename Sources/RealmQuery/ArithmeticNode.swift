import RealmStorage

/// A comparison with arithmetic on either side (`age + 5 > 30`, `height * 100 < weight`): each side is
/// computed for the object, then compared as any two values are.
final class ArithmeticNode: Node {
    let ex: Executor
    let c: BoundComparison

    init(_ ex: Executor, _ c: BoundComparison) {
        self.ex = ex
        self.c = c
    }

    override var cost: Int { 200 }

    func values(_ o: BoundOperand, _ key: ObjectKey) throws -> [Value] {
        switch o {
        case .constant(let vs, _, _): return vs
        case .path(let p):
            var out: [Value] = []
            try ex.gather(p, key, into: &out)
            return out
        case .arithmetic(let op, let l, let r, _):
            // Each side is one value (the binder refuses lists); a path through a null link gives null.
            let a = try values(l, key), b = try values(r, key)
            guard a.count == 1, b.count == 1 else { return [.null] }
            return [Arithmetic.apply(op, a[0], b[0])]
        case .subqueryCount:
            preconditionFailure("the binder refuses SUBQUERY inside arithmetic")
        }
    }

    override func matches(_ key: ObjectKey) throws -> Bool {
        let left = try values(c.lhs, key)
        let right = try values(c.rhs, key)
        var rhsIsList = false
        if case .constant(_, let isList, _) = c.rhs { rhsIsList = isList }
        let op = c.op, options = c.options
        switch c.quantifier {
        case .any: return left.contains { matchValue($0, op, options, right, rhsIsList: rhsIsList) }
        case .all: return left.allSatisfy { matchValue($0, op, options, right, rhsIsList: rhsIsList) }
        case .none: return !left.contains { matchValue($0, op, options, right, rhsIsList: rhsIsList) }
        }
    }
}

/// `+ - * /` on stored values, as the query language computes them.
///
/// Two ints give an int (wrapping on overflow; `/` is integer division, rounding toward zero); a decimal with
/// an int, double or float gives a decimal (decimal128 arithmetic: exact when the result has at most 34
/// digits, else rounded half-to-even to 34; the other converted as `Semantics.decimal` converts it);
/// otherwise a double. Null, a value that is not a number (in a mixed property) and division by zero give
/// null, which no ordering comparison matches.
enum Arithmetic {
    static func apply(_ op: ArithmeticOperator, _ a: Value, _ b: Value) -> Value {
        switch (a, b) {
        case (.int(let x), .int(let y)):
            switch op {
            case .add: return .int(x &+ y)
            case .subtract: return .int(x &- y)
            case .multiply: return .int(x &* y)
            case .divide:
                if y == 0 { return .null }
                return .int(x.dividedReportingOverflow(by: y).partialValue)
            }
        case (.decimal128, _), (_, .decimal128):
            guard let x = decimal(a), let y = decimal(b) else { return .null }
            switch op {
            case .add: return .decimal128(x + y)
            case .subtract: return .decimal128(x - y)
            case .multiply: return .decimal128(x * y)
            case .divide: return y.isZero ? .null : .decimal128(x / y)
            }
        default:
            guard let x = double(a), let y = double(b) else { return .null }
            switch op {
            case .add: return .double(x + y)
            case .subtract: return .double(x - y)
            case .multiply: return .double(x * y)
            case .divide: return y == 0 ? .null : .double(x / y)
            }
        }
    }

    static func decimal(_ v: Value) -> Decimal128? {
        if case .decimal128(let d) = v { return d }
        return Semantics.decimal(v)
    }

    static func double(_ v: Value) -> Double? {
        switch v {
        case .int(let i): return Double(i)
        case .float(let f): return Double(f)
        case .double(let d): return d
        default: return nil
        }
    }
}
