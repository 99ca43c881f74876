import RealmStorage

/// `x.@type == 'string'`, bound as `x.@type IN {type names}` (`Binder.typeComparison`): whether the type of each
/// value the path yields (a property, a list's elements; any collection of values) is among the names, with
/// the quantifier over the values.
final class TypeNode: Node {
    let ex: Executor
    let path: BoundPath
    let quantifier: Comparison.Quantifier
    let names: Set<String>
    private var values: [Value] = []

    init(_ ex: Executor, _ path: BoundPath, _ quantifier: Comparison.Quantifier, names: [Value]) {
        self.ex = ex
        self.path = path
        self.quantifier = quantifier
        self.names = Set(names.compactMap { if case .string(let s) = $0 { return s } else { return nil } })
    }

    override var cost: Int { 10 + 40 * path.steps.count }

    override func matches(_ key: ObjectKey) throws -> Bool {
        values.removeAll(keepingCapacity: true)
        try ex.gather(path, key, into: &values)
        let names = self.names
        switch quantifier {
        case .any: return values.contains { names.contains(Semantics.typeName($0)) }
        case .all: return values.allSatisfy { names.contains(Semantics.typeName($0)) }
        case .none: return !values.contains { names.contains(Semantics.typeName($0)) }
        }
    }
}
