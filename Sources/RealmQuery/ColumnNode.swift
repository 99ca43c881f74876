import RealmStorage

/// A property of the queried object compared with constants: scanned one column of one leaf at a time,
/// with kernels for int ranges and string operators that read values in place (nothing allocated per row).
final class ColumnNode: Node {
    enum Kernel {
        /// Matches when the int is in one of the ranges (xor `negate`).
        case intRanges([ClosedRange<Int64>], negate: Bool)
        /// A string operator on UTF-8 bytes, `[c]` folding into a scratch buffer.
        case string(Comparison.Operator, needle: [UInt8], foldCase: Bool)
        /// Any other type: the row's `Value` through `matchValue`.
        case generic
    }

    let ex: Executor
    let cls: String
    let prop: String
    let handle: PropertyHandle
    let op: Comparison.Operator
    let options: Comparison.Options
    let constants: [Value]
    let isList: Bool
    let kernel: Kernel
    let nullMatches: Bool
    private var scratch: [UInt8] = []

    init(_ ex: Executor, cls: String, prop: String, op: Comparison.Operator, options: Comparison.Options,
         constants: [Value], isList: Bool) throws {
        self.ex = ex
        self.cls = cls
        self.prop = prop
        self.handle = try ex.handle(cls, prop)
        self.op = op
        self.options = options
        // Against a decimal property, numbers are converted once here rather than for every row
        // (`Semantics.decimal`: the same comparison).
        self.constants = handle.type != .decimal128 ? constants : constants.map { c in
            switch c {
            case .int, .float, .double: return Semantics.decimal(c).map { .decimal128($0) } ?? c
            default: return c
            }
        }
        self.isList = isList
        nullMatches = matchValue(.null, op, options, self.constants, rhsIsList: isList)
        kernel = ColumnNode.kernel(handle.type, op, options, self.constants, isList)
    }

    override var cost: Int {
        switch kernel {
        case .intRanges: return 1
        case .string(let op, _, let fold): return op == .equal && !fold ? 3 : 6
        case .generic: return handle.type == .string || handle.type == .mixed ? 12 : 4
        }
    }

    static func kernel(_ type: PropertyType, _ op: Comparison.Operator, _ options: Comparison.Options,
                       _ constants: [Value], _ isList: Bool) -> Kernel {
        if type == .int, options.isEmpty, constants.allSatisfy({ if case .int = $0 { return true }; if case .double = $0 { return true }; if case .float = $0 { return true }; return false }) {
            func eq(_ c: Value) -> ClosedRange<Int64>? {
                guard let lo = lowerBound(c, strict: false), let hi = upperBound(c, strict: false), lo <= hi else { return nil }
                return lo...hi
            }
            switch op {
            case .equal, .in: return .intRanges(constants.compactMap(eq), negate: false)
            case .notEqual where constants.count == 1: return .intRanges(constants.compactMap(eq), negate: true)
            case .less where constants.count == 1, .lessOrEqual where constants.count == 1:
                guard let hi = upperBound(constants[0], strict: op == .less) else { return .intRanges([], negate: false) }
                return .intRanges([Int64.min...hi], negate: false)
            case .greater where constants.count == 1, .greaterOrEqual where constants.count == 1:
                guard let lo = lowerBound(constants[0], strict: op == .greater) else { return .intRanges([], negate: false) }
                return .intRanges([lo...Int64.max], negate: false)
            case .between where constants.count == 2:
                guard let lo = lowerBound(constants[0], strict: false), let hi = upperBound(constants[1], strict: false), lo <= hi else {
                    return .intRanges([], negate: false)
                }
                return .intRanges([lo...hi], negate: false)
            default: break
            }
        }
        if type == .string, !options.contains(.diacriticInsensitive), !isList, constants.count == 1, case .string(let s) = constants[0],
           op != .in, op != .between {
            var needle = Array(s.utf8)
            let fold = options.contains(.caseInsensitive)
            if fold { needle.withUnsafeMutableBytes { Semantics.foldCase($0) } }
            return .string(op, needle: needle, foldCase: fold)
        }
        return .generic
    }

    /// The smallest int greater than (or equal to) `c`; nil when there is none.
    static func lowerBound(_ c: Value, strict: Bool) -> Int64? {
        switch c {
        case .int(let i): return strict ? (i == .max ? nil : i + 1) : i
        case .double, .float:
            let d = c.doubleValue
            if d.isNaN { return nil }
            let r = strict ? d.rounded(.down) : d.rounded(.up)
            if r >= 9_223_372_036_854_775_808.0 { return nil }
            if r < -9_223_372_036_854_775_808.0 { return .min }
            let ri = Int64(r)
            if strict { return ri == .max ? nil : ri + 1 }
            return ri
        default: return nil
        }
    }

    /// The largest int less than (or equal to) `c`; nil when there is none.
    static func upperBound(_ c: Value, strict: Bool) -> Int64? {
        switch c {
        case .int(let i): return strict ? (i == .min ? nil : i - 1) : i
        case .double, .float:
            let d = c.doubleValue
            if d.isNaN { return nil }
            let r = strict ? d.rounded(.up) : d.rounded(.down)
            if r >= 9_223_372_036_854_775_808.0 { return .max }
            if r < -9_223_372_036_854_775_808.0 { return nil }
            let ri = Int64(r)
            if strict { return ri == .min ? nil : ri - 1 }
            return ri
        default: return nil
        }
    }

    func test(_ v: Value) -> Bool { matchValue(v, op, options, constants, rhsIsList: isList) }

    override func matches(_ key: ObjectKey) throws -> Bool { test(try ex.snapshot.value(key, handle)) }

    override func filter(_ leaf: LeafCursor, _ rows: inout [Int32]) throws {
        let col = try leaf.column(handle)
        var out = 0
        switch kernel {
        case .intRanges(let ranges, let negate):
            let nullMatches = self.nullMatches
            if ranges.count == 1 {
                col.keepInts(&rows, in: ranges[0].lowerBound, ranges[0].upperBound, negate: negate, nullMatches: nullMatches)
                return
            } else {
                for r in rows {
                    let row = Int(r)
                    let hit: Bool
                    if col.isNull(row) { hit = nullMatches } else {
                        let v = col.int(row)
                        hit = ranges.contains { $0.contains(v) } != negate
                    }
                    if hit { rows[out] = r; out += 1 }
                }
            }
        case .string(let op, let needle, let fold):
            if !fold && (op == .equal || op == .notEqual) {
                try needle.withUnsafeBytes { n in try col.keepStrings(&rows, equalTo: n, negate: op == .notEqual, nullMatches: nullMatches) }
                return
            }
            // Every other operator through the same test, so a column in dictionary form tests each distinct
            // value once (`keepStrings`), not each row.
            if fold && op == .contains {
                try needle.withUnsafeBytes { n in try col.keepStrings(&rows, nullMatches: nullMatches) { Semantics.containsFolded($0, n) } }
                return
            }
            var scratch: [UInt8] = []
            swap(&scratch, &self.scratch)
            defer { swap(&scratch, &self.scratch) }
            try needle.withUnsafeBytes { n in
                try col.keepStrings(&rows, nullMatches: nullMatches) { h -> Bool in
                    if !fold { return stringTest(op, h, n) }
                    if scratch.count < h.count { scratch = [UInt8](repeating: 0, count: max(h.count, 64)) }
                    return scratch.withUnsafeMutableBytes { buf in
                        let b = UnsafeMutableRawBufferPointer(rebasing: buf[0..<h.count])
                        if h.count > 0 { b.copyMemory(from: h) }
                        Semantics.foldCase(b)
                        return stringTest(op, UnsafeRawBufferPointer(b), n)
                    }
                }
            }
            return
        case .generic:
            for r in rows where test(try col.value(Int(r))) {
                rows[out] = r
                out += 1
            }
        }
        rows.removeLast(rows.count - out)
    }

    @inline(__always) private func stringTest(_ op: Comparison.Operator, _ h: UnsafeRawBufferPointer, _ n: UnsafeRawBufferPointer) -> Bool {
        switch op {
        case .equal: return Semantics.rawOrder(h, n) == 0
        case .notEqual: return Semantics.rawOrder(h, n) != 0
        case .less: return Semantics.rawOrder(h, n) < 0
        case .lessOrEqual: return Semantics.rawOrder(h, n) <= 0
        case .greater: return Semantics.rawOrder(h, n) > 0
        case .greaterOrEqual: return Semantics.rawOrder(h, n) >= 0
        default: return Semantics.stringOp(op, h, n)
        }
    }

    /// `==` and `IN` on an indexed property or the primary key: one index lookup per constant.
    override func indexed() throws -> [ObjectKey]? {
        guard op == .equal || op == .in, options.isEmpty, let s = ex.schema(cls, prop), s.isIndexed || s.isPrimaryKey,
              !constants.isEmpty, constants.count <= 1000 else { return nil }
        if s.type == .mixed { return try indexedMixed() }
        var keys: [ObjectKey] = []
        for c in constants {
            guard let v = ColumnNode.converted(c, to: s.type) else {
                if c.isNull { return nil }  // nulls are left to the scan
                continue  // cannot equal any stored value (2.5 for an int)
            }
            keys.append(contentsOf: try ex.snapshot.find(handle, equalTo: v))
        }
        if constants.count > 1 { keys = Array(Set(keys)) }
        return keys.sorted()
    }

    /// `==` and `IN` on an indexed mixed property: the index gives the objects whose value may equal a
    /// constant (numbers across types within a window), and each is confirmed by this node's own comparison,
    /// so the answer is the scan's. nil (scan) when a constant is a link or a nested collection.
    private func indexedMixed() throws -> [ObjectKey]? {
        var candidates: [ObjectKey] = []
        for c in constants {
            guard let k = try ex.snapshot.indexCandidates(handle, mayEqual: c) else { return nil }
            candidates.append(contentsOf: k)
        }
        if constants.count > 1 { candidates = Array(Set(candidates)) }
        var keys: [ObjectKey] = []
        for k in candidates where try matches(k) { keys.append(k) }
        return keys.sorted()
    }

    /// The constant as stored in a property of `type`, when it can equal a stored value exactly.
    static func converted(_ c: Value, to type: PropertyType) -> Value? {
        switch (c, type) {
        case (.int, .int), (.string, .string), (.bool, .bool), (.date, .date), (.objectId, .objectId), (.uuid, .uuid): return c
        case (.double(let d), .int):
            guard d == d.rounded(), abs(d) < 9.2e18 else { return nil }
            return .int(Int64(d))
        case (.float(let f), .int):
            return converted(.double(Double(f)), to: .int)
        case (.decimal128(let d), .int):
            // `45`, `45.00` and `4.5E+1` equal the int 45.
            return d.exactInt64.map { .int($0) }
        default: return nil
        }
    }
}

extension Value {
    var doubleValue: Double {
        switch self {
        case .double(let d): return d
        case .float(let f): return Double(f)
        case .int(let i): return Double(i)
        default: return .nan
        }
    }
}
