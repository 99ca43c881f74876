import RealmStorage

/// A compiled condition. `filter` narrows the selected rows of one leaf (a column scan); `matches` tests one
/// object (for index candidates, lists and subqueries); `indexed` answers from an index when it can.
class Node {
    /// Relative cost per object, for ordering conjuncts (cheapest first).
    var cost: Int { 100 }

    func matches(_ key: ObjectKey) throws -> Bool { fatalError("abstract") }

    func filter(_ leaf: LeafCursor, _ rows: inout [Int32]) throws {
        var out = 0
        for r in rows where try matches(leaf.key(Int(r))) {
            rows[out] = r
            out += 1
        }
        rows.removeLast(rows.count - out)
    }

    /// The exact, sorted set of matching keys from indexes, or nil when no index applies.
    func indexed() throws -> [ObjectKey]? { nil }
}

final class ConstantNode: Node {
    let value: Bool
    init(_ value: Bool) { self.value = value }
    override var cost: Int { 0 }
    override func matches(_ key: ObjectKey) throws -> Bool { value }
    override func filter(_ leaf: LeafCursor, _ rows: inout [Int32]) throws { if !value { rows.removeAll(keepingCapacity: true) } }
    /// `FALSEPREDICATE` (alone, or in an `AND`) matches nothing without a leaf read; `TRUEPREDICATE` scans.
    override func indexed() throws -> [ObjectKey]? { value ? nil : [] }
}

final class AndNode: Node {
    let children: [Node]
    init(_ children: [Node]) {
        // Cheapest first: a column comparison before a key path through links, before a subquery.
        self.children = children.enumerated().sorted { ($0.element.cost, $0.offset) < ($1.element.cost, $1.offset) }.map(\.element)
    }
    override var cost: Int { children.reduce(0) { $0 + $1.cost } }
    override func matches(_ key: ObjectKey) throws -> Bool {
        for c in children where !(try c.matches(key)) { return false }
        return true
    }
    override func filter(_ leaf: LeafCursor, _ rows: inout [Int32]) throws {
        for c in children {
            if rows.isEmpty { return }
            try c.filter(leaf, &rows)
        }
    }
    override func indexed() throws -> [ObjectKey]? {
        // The first conjunct an index answers gives the candidates; the others test each candidate.
        for (i, c) in children.enumerated() {
            guard let candidates = try c.indexed() else { continue }
            let rest = children.enumerated().filter { $0.offset != i }.map(\.element)
            var out: [ObjectKey] = []
            for k in candidates where try rest.allSatisfy({ try $0.matches(k) }) { out.append(k) }
            return out
        }
        return nil
    }
}

final class OrNode: Node {
    let children: [Node]
    private var mask: [Bool] = []
    init(_ children: [Node]) { self.children = children }
    override var cost: Int { children.reduce(0) { $0 + $1.cost } }
    override func matches(_ key: ObjectKey) throws -> Bool {
        for c in children where try c.matches(key) { return true }
        return false
    }
    override func filter(_ leaf: LeafCursor, _ rows: inout [Int32]) throws {
        if mask.count < leaf.count { mask = [Bool](repeating: false, count: leaf.count) }
        var remaining = rows
        var sel: [Int32] = []
        sel.reserveCapacity(rows.count)
        for c in children {
            if remaining.isEmpty { break }
            sel.removeAll(keepingCapacity: true)
            sel.append(contentsOf: remaining)
            try c.filter(leaf, &sel)
            for r in sel { mask[Int(r)] = true }
            remaining.removeAll { mask[Int($0)] }
        }
        var out = 0
        for r in rows where mask[Int(r)] {
            mask[Int(r)] = false
            rows[out] = r
            out += 1
        }
        rows.removeLast(rows.count - out)
    }
    override func indexed() throws -> [ObjectKey]? {
        var all: [ObjectKey] = []
        for c in children {
            guard let keys = try c.indexed() else { return nil }
            all.append(contentsOf: keys)
        }
        return Array(Set(all)).sorted()
    }
}

final class NotNode: Node {
    let child: Node
    private var mask: [Bool] = []
    init(_ child: Node) { self.child = child }
    override var cost: Int { child.cost }
    override func matches(_ key: ObjectKey) throws -> Bool { !(try child.matches(key)) }
    override func filter(_ leaf: LeafCursor, _ rows: inout [Int32]) throws {
        if mask.count < leaf.count { mask = [Bool](repeating: false, count: leaf.count) }
        var sel = rows
        try child.filter(leaf, &sel)
        for r in sel { mask[Int(r)] = true }
        var out = 0
        for r in rows {
            if mask[Int(r)] { mask[Int(r)] = false; continue }
            rows[out] = r
            out += 1
        }
        rows.removeLast(rows.count - out)
    }
}

/// Any comparison: key paths through links and lists, aggregates, subqueries, two key paths. Gathers the values
/// of each side for one object and compares them with the quantifier.
final class GenericNode: Node {
    let ex: Executor
    let c: BoundComparison
    let subquery: (collection: BoundPath, node: Node)?
    let rhsSubquery: (collection: BoundPath, node: Node)?
    private var left: [Value] = []
    private var right: [Value] = []

    init(_ ex: Executor, _ c: BoundComparison, lhsSubquery: (BoundPath, Node)?, rhsSubquery: (BoundPath, Node)?) {
        self.ex = ex
        self.c = c
        self.subquery = lhsSubquery
        self.rhsSubquery = rhsSubquery
    }

    override var cost: Int {
        func cost(_ o: BoundOperand) -> Int {
            switch o {
            case .constant: return 0
            case .path(let p):
                return p.steps.reduce(0) { acc, s in
                    switch s {
                    case .value, .length, .selfKey: return acc + 10
                    case .toOne: return acc + 20
                    case .primitiveList, .listElement, .dictionary, .mixedPath: return acc + 40
                    case .many, .allLinksCount: return acc + 80
                    }
                }
            case .subqueryCount, .arithmetic: return 1000
            }
        }
        return cost(c.lhs) + cost(c.rhs)
    }

    private func values(_ o: BoundOperand, _ sub: (collection: BoundPath, node: Node)?, _ key: ObjectKey, _ out: inout [Value]) throws {
        out.removeAll(keepingCapacity: true)
        switch o {
        case .constant(let vs, _, _): out.append(contentsOf: vs)
        case .path(let p): try ex.gather(p, key, into: &out)
        case .arithmetic:
            preconditionFailure("a comparison with arithmetic compiles to an ArithmeticNode")
        case .subqueryCount:
            var elements: [Value] = []
            try ex.gather(sub!.collection, key, into: &elements)
            var n: Int64 = 0
            for case .link(let k) in elements where try sub!.node.matches(k) { n += 1 }
            out.append(.int(n))
        }
    }

    override func indexed() throws -> [ObjectKey]? { try backwards() }

    override func matches(_ key: ObjectKey) throws -> Bool {
        try values(c.lhs, subquery, key, &left)
        try values(c.rhs, rhsSubquery, key, &right)
        let rhsIsList: Bool
        switch c.rhs {
        case .constant(_, let isList, _): rhsIsList = isList
        case .path(let p): rhsIsList = p.kind.isMulti
        case .subqueryCount, .arithmetic: rhsIsList = false
        }
        let op = c.op
        let options = c.options
        let rhs = right
        switch c.quantifier {
        case .any: return left.contains { matchValue($0, op, options, rhs, rhsIsList: rhsIsList) }
        case .all: return left.allSatisfy { matchValue($0, op, options, rhs, rhsIsList: rhsIsList) }
        case .none: return !left.contains { matchValue($0, op, options, rhs, rhsIsList: rhsIsList) }
        }
    }
}
