import RealmStorage

extension BoundQuery {
    /// The keys of the matching objects of the class, in key order, then sorted, made distinct and limited by
    /// the query's ordering clauses in the order written. A class missing from the snapshot has no objects.
    /// With `progress`, the query reports how far it is and stops when it is cancelled (throwing a
    /// `QueryError` of kind `.cancelled`).
    public func evaluate(in snapshot: any ObjectReader, progress: QueryProgress? = nil) throws -> [ObjectKey] {
        try evaluate(in: snapshot, executor: Executor(snapshot), progress: progress)
    }

    /// `runs`: how many runs of leaves the scan is split into, each on a thread of its own (nil: by the table's
    /// size and the processors, DECISIONS 104).
    func evaluate(in snapshot: any ObjectReader, executor ex: Executor, progress: QueryProgress? = nil,
                  runs: Int? = nil) throws -> [ObjectKey] {
        guard snapshot.classSchema(className) != nil else { return [] }
        let predicate = try resolvedPredicate(ex)
        let root = try compile(predicate, on: className, ex)
        var keys: [ObjectKey]
        if let progress { try progress.begin(.scanning, total: try snapshot.count(ex.table(className))) }
        if let k = try root.indexed() {
            keys = k
        } else {
            let cls = className
            // Each run filters with nodes of its own, reading through its own reader (nodes keep per-read state).
            let parts = try snapshot.scanRuns(ex.table(className), runs: runs) { run, reader, scan -> [ObjectKey] in
                let node = run == 0 && reader === snapshot ? root : try compile(predicate, on: cls, Executor(reader))
                var keys: [ObjectKey] = []
                var rows: [Int32] = []
                try scan { leaf in
                    leaf.allRows(into: &rows)
                    try node.filter(leaf, &rows)
                    leaf.appendKeys(of: rows, to: &keys)
                    // Once per leaf: a flag and a counter, nothing per object.
                    try progress?.advance(by: leaf.count)
                    return true
                }
                return keys
            }
            keys = parts.count == 1 ? parts[0] : Array(parts.joined())
        }
        return try applyOrdering(keys, ex, keysAreSorted: true, progress: progress)
    }

    /// The objects among `keys` (a list's elements, in list order, duplicates kept) that match, then the
    /// ordering clauses.
    public func evaluate(in snapshot: any ObjectReader, keys: [ObjectKey], progress: QueryProgress? = nil) throws -> [ObjectKey] {
        guard snapshot.classSchema(className) != nil else { return [] }
        let ex = Executor(snapshot)
        let root = try compile(resolvedPredicate(ex), on: className, ex)
        var verdicts: [ObjectKey: Bool] = [:]
        var out: [ObjectKey] = []
        if let progress { try progress.begin(.scanning, total: keys.count) }
        for (n, k) in keys.enumerated() {
            if n & 255 == 255 { try progress?.advance(by: 256) }
            if let v = verdicts[k] {
                if v { out.append(k) }
                continue
            }
            let v = try root.matches(k)
            verdicts[k] = v
            if v { out.append(k) }
        }
        return try applyOrdering(out, ex, keysAreSorted: false, progress: progress)
    }

    /// Whether one object matches the predicate (the ordering clauses do not apply).
    public func matches(_ key: ObjectKey, in snapshot: any ObjectReader) throws -> Bool {
        let ex = Executor(snapshot)
        return try compile(resolvedPredicate(ex), on: className, ex).matches(key)
    }

    func applyOrdering(_ keys: [ObjectKey], _ ex: Executor, keysAreSorted: Bool, progress: QueryProgress? = nil) throws -> [ObjectKey] {
        var keys = keys
        var sorted = keysAreSorted
        for o in ordering {
            switch o {
            case .sort(let descriptors):
                if let progress, keys.count > 1 { try progress.begin(.sorting, total: QueryProgress.sortUnits(keys.count)) }
                keys = try Sorter(ex, className, progress: progress).sort(keys, descriptors, keysAreSorted: sorted)
                sorted = false
            case .distinct(let paths):
                keys = try Sorter(ex, className, progress: progress).distinct(keys, paths)
            case .limit(let n):
                if keys.count > n { keys.removeLast(keys.count - n) }
            }
        }
        return keys
    }
}

/// Builds the executable nodes of a bound predicate.
func compile(_ p: BoundPredicate, on cls: String, _ ex: Executor) throws -> Node {
    switch p {
    case .constant(let b): return ConstantNode(b)
    case .and(let ps): return AndNode(try ps.map { try compile($0, on: cls, ex) })
    case .or(let ps): return OrNode(try ps.map { try compile($0, on: cls, ex) })
    case .not(let x): return NotNode(try compile(x, on: cls, ex))
    case .comparison(let c):
        if c.lhs.hasArithmetic || c.rhs.hasArithmetic { return ArithmeticNode(ex, c) }
        if case .path(let path) = c.lhs, path.typeOf, case .constant(let names, _, _) = c.rhs {
            return TypeNode(ex, path, c.quantifier, names: names)
        }
        if case .path(let path) = c.lhs, let prop = path.directProperty, c.quantifier == .any,
           case .constant(let values, let isList, _) = c.rhs {
            return try ColumnNode(ex, cls: cls, prop: prop, op: c.op, options: c.options, constants: values, isList: isList)
        }
        func sub(_ o: BoundOperand) throws -> (BoundPath, Node)? {
            guard case .subqueryCount(let collection, let element, let predicate, _) = o else { return nil }
            return (collection, try compile(predicate, on: element, ex))
        }
        let scan = try CollectionColumnNode.make(ex, c, on: cls)
            ?? GenericNode(ex, c, lhsSubquery: try sub(c.lhs), rhsSubquery: try sub(c.rhs))
        return try ElementIndexNode.wrap(scan, ex, c, on: cls)
    }
}
