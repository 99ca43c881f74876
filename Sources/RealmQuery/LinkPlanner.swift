import RealmStorage

extension GenericNode {
    /// A comparison through links (`owner.name == 'x'`, `dogs.age > 3`, `owners.name BEGINSWITH 'A'`) answered
    /// backwards: the matching objects at the end of the path first (by index or column scan), then the
    /// stored backlinks (or, for linking objects, the forward links) lead back to the queried objects.
    /// Applies when null never matches (a null link would otherwise match) and the quantifier is ANY; gives
    /// up (nil, a scan) when the matching targets are many, where following each backwards costs more.
    func backwards() throws -> [ObjectKey]? {
        guard c.quantifier == .any, case .path(let path) = c.lhs, path.variable == nil, !path.typeOf, path.steps.count >= 2,
              case .constant(let values, let isList, _) = c.rhs,
              !matchValue(.null, c.op, c.options, values, rhsIsList: isList),
              case .value(let lastClass, let lastProp) = path.steps.last! else { return nil }
        let hops = path.steps.dropLast()
        for h in hops {
            switch h {
            case .toOne, .many(_, nil, _): continue
            default: return nil
            }
        }
        let last = try ColumnNode(ex, cls: lastClass, prop: lastProp, op: c.op, options: c.options, constants: values, isList: isList)
        var targets: [ObjectKey]
        if let k = try last.indexed() {
            targets = k
        } else {
            targets = []
            var rows: [Int32] = []
            try ex.snapshot.scan(ex.table(lastClass)) { leaf in
                rows.removeAll(keepingCapacity: true)
                for i in 0..<leaf.count { rows.append(Int32(i)) }
                try last.filter(leaf, &rows)
                for r in rows { targets.append(leaf.key(Int(r))) }
                return true
            }
        }
        for hop in hops.reversed() {
            let originClass: String
            switch hop {
            case .toOne(let cls, _, _): originClass = cls
            case .many(let source, _, _):
                switch source {
                case .list(let cls, _, _), .linkingObjects(let cls, _, _), .links(let cls, _, _): originClass = cls
                case .dictionary, .listElement: return nil
                }
            default: return nil
            }
            if targets.count * 8 > max(64, try ex.snapshot.count(ex.table(originClass))) { return nil }
            var origins: [ObjectKey] = []
            switch hop {
            case .toOne(let cls, let prop, let target), .many(.list(let cls, let prop, let target), _, _):
                // Every target's backlinks in one walk of the tree.
                targets = try ex.snapshot.backlinks(of: targets, in: ex.table(target), from: cls, property: prop).sortedUnique()
                continue
            default: break
            }
            for t in targets {
                switch hop {
                case .toOne, .many(.list, _, _):
                    return nil  // handled above
                case .many(.linkingObjects(let cls, let prop, let origin), _, _):
                    // `t` is an origin object; its link property points at objects of `cls`.
                    guard let op = ex.snapshot.classSchema(cls)?.property(named: prop)?.originProperty,
                          let p = ex.schema(origin, op) else { return nil }
                    let h = try ex.handle(origin, op)
                    if p.isDictionary {
                        for case .link(let k) in try ex.snapshot.dictionary(t, h).values { origins.append(k) }
                    } else if p.isList || p.isSet {
                        for case .link(let k) in try ex.snapshot.list(t, h) { origins.append(k) }
                    } else if case .link(let k) = try ex.snapshot.value(t, h) {
                        origins.append(k)
                    }
                case .many(.links(_, let origin, let originProperty), _, _):
                    guard let p = ex.schema(origin, originProperty) else { return nil }
                    let h = try ex.handle(origin, originProperty)
                    if p.isDictionary {
                        for case .link(let k) in try ex.snapshot.dictionary(t, h).values { origins.append(k) }
                    } else if p.isList || p.isSet {
                        for case .link(let k) in try ex.snapshot.list(t, h) { origins.append(k) }
                    } else if case .link(let k) = try ex.snapshot.value(t, h) {
                        origins.append(k)
                    }
                default: return nil
                }
            }
            targets = Array(Set(origins)).sorted()
        }
        return targets
    }
}
