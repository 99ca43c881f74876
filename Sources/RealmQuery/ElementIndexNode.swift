import RealmStorage

/// `ANY tags == x` and `ANY tags IN {…}` over a set with an element index (an indexed set,
/// `Snapshot.objects(_:withElement:)`): the index gives the objects holding each constant, as a column's index
/// gives `==` on it. Scans and single objects go to the node it wraps (the one the comparison has without the
/// index), so the answers are that node's.
final class ElementIndexNode: Node {
    let ex: Executor
    let handle: PropertyHandle
    let elementType: PropertyType
    let isOptional: Bool
    let constants: [Value]
    let scan: Node

    /// `scan` wrapped when comparison `c` is one the element index answers, else `scan` itself.
    static func wrap(_ scan: Node, _ ex: Executor, _ c: BoundComparison, on cls: String) throws -> Node {
        guard c.quantifier == .any, c.options.isEmpty, case .path(let path) = c.lhs, path.variable == nil, !path.typeOf,
              path.steps.count == 1, case .primitiveList(let owner, let prop, nil) = path.steps[0], owner == cls,
              case .constant(let values, let isList, _) = c.rhs, !values.isEmpty, values.count <= 1000,
              let s = ex.schema(cls, prop), s.isSet, s.isIndexed else { return scan }
        switch c.op {
        case .equal where !isList && values.count == 1: break
        case .in: break
        default: return scan
        }
        return ElementIndexNode(ex, try ex.handle(cls, prop), s.type, s.isOptional, values, scan)
    }

    private init(_ ex: Executor, _ handle: PropertyHandle, _ elementType: PropertyType, _ isOptional: Bool,
                 _ constants: [Value], _ scan: Node) {
        self.ex = ex
        self.handle = handle
        self.elementType = elementType
        self.isOptional = isOptional
        self.constants = constants
        self.scan = scan
    }

    override var cost: Int { scan.cost }
    override func matches(_ key: ObjectKey) throws -> Bool { try scan.matches(key) }
    override func filter(_ leaf: LeafCursor, _ rows: inout [Int32]) throws { try scan.filter(leaf, &rows) }

    override func indexed() throws -> [ObjectKey]? {
        var keys: [ObjectKey] = []
        for c in constants {
            let element: Value
            if c.isNull {
                guard isOptional else { continue }  // a set of required values holds no null
                element = .null
            } else {
                guard let v = ColumnNode.converted(c, to: elementType) else { continue }  // equals no element
                element = v
            }
            guard let found = try ex.snapshot.objects(handle, withElement: element) else { return nil }
            keys.append(contentsOf: found)
        }
        if constants.count > 1 { keys = Array(Set(keys)).sorted() }
        return keys
    }
}
