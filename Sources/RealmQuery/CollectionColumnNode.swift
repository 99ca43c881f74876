#if canImport(Glibc)
import Glibc
#endif
import RealmStorage

/// A set, list or dictionary property of the queried object compared with constants, scanned one leaf at a
/// time with the serialized collection read where it lies (`ColumnCursor.firstStringElement`,
/// `ColumnCursor.dictionaryValue`): `ANY tags == 'x'` (and ALL, NONE, the other string operators) over a
/// collection of strings, and `dict['key'] > 5` (any operator, any value type) over a dictionary. Nothing is
/// decoded but the element compared; the answers are `GenericNode`'s, which tests single objects (`matches`)
/// and every row inside a write transaction, whose changed collections are not in the leaves until commit.
final class CollectionColumnNode: Node {
    enum Kind {
        /// Each string element tested against `needle` (bytewise, as `ColumnNode` compares strings).
        case strings(op: Comparison.Operator, needle: [UInt8], nullMatches: Bool)
        /// The value of one key (null when absent) compared with the constants.
        case dictionaryKey(key: [UInt8], op: Comparison.Operator, options: Comparison.Options, constants: [Value], isList: Bool)
    }

    let ex: Executor
    let handle: PropertyHandle
    let quantifier: Comparison.Quantifier
    let kind: Kind
    let generic: GenericNode

    /// The node for comparison `c` on class `cls`, or nil when it is not one this node scans.
    static func make(_ ex: Executor, _ c: BoundComparison, on cls: String) throws -> CollectionColumnNode? {
        guard case .path(let path) = c.lhs, path.variable == nil, !path.typeOf, path.steps.count == 1,
              case .constant(let values, let isList, _) = c.rhs else { return nil }
        let generic = GenericNode(ex, c, lhsSubquery: nil, rhsSubquery: nil)
        switch path.steps[0] {
        case .primitiveList(let owner, let prop, nil) where owner == cls:
            let h = try ex.handle(cls, prop)
            guard h.type == .string, c.options.isEmpty, !isList, values.count == 1, case .string(let s) = values[0] else { return nil }
            switch c.op {
            case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .beginsWith, .endsWith, .contains, .like: break
            case .in, .between: return nil
            }
            let nullMatches = matchValue(.null, c.op, c.options, values, rhsIsList: false)
            return CollectionColumnNode(ex, h, c.quantifier, .strings(op: c.op, needle: Array(s.utf8), nullMatches: nullMatches), generic)
        case .dictionary(let owner, let prop, .key(let k), nil) where owner == cls:
            let h = try ex.handle(cls, prop)
            return CollectionColumnNode(ex, h, c.quantifier,
                                        .dictionaryKey(key: Array(k.utf8), op: c.op, options: c.options, constants: values, isList: isList), generic)
        default:
            return nil
        }
    }

    private init(_ ex: Executor, _ handle: PropertyHandle, _ quantifier: Comparison.Quantifier, _ kind: Kind, _ generic: GenericNode) {
        self.ex = ex
        self.handle = handle
        self.quantifier = quantifier
        self.kind = kind
        self.generic = generic
    }

    override var cost: Int { 30 }

    override func matches(_ key: ObjectKey) throws -> Bool { try generic.matches(key) }

    override func filter(_ leaf: LeafCursor, _ rows: inout [Int32]) throws {
        // A write transaction's changed collections are not in its leaves yet (nor are collections in another kind of file's).
        if !ex.snapshot.scansCollectionsInLeaves { return try super.filter(leaf, &rows) }
        let col = try leaf.column(handle)
        var out = 0
        switch kind {
        case .strings(let op, let needle, let nullMatches):
            try needle.withUnsafeBytes { n in
                for r in rows {
                    let hit: Bool
                    switch quantifier {
                    case .any: hit = try col.firstStringElement(Int(r)) { e in e.map { Self.test(op, $0, n) } ?? nullMatches }
                    case .all: hit = try !col.firstStringElement(Int(r)) { e in !(e.map { Self.test(op, $0, n) } ?? nullMatches) }
                    case .none: hit = try !col.firstStringElement(Int(r)) { e in e.map { Self.test(op, $0, n) } ?? nullMatches }
                    }
                    if hit { rows[out] = r; out += 1 }
                }
            }
        case .dictionaryKey(let key, let op, let options, let constants, let isList):
            try key.withUnsafeBytes { k in
                for r in rows {
                    let v = try col.dictionaryValue(Int(r), forKey: k) ?? .null
                    let m = matchValue(v, op, options, constants, rhsIsList: isList)
                    if quantifier == .none ? !m : m { rows[out] = r; out += 1 }
                }
            }
        }
        rows.removeLast(rows.count - out)
    }

    @inline(__always) private static func test(_ op: Comparison.Operator, _ h: UnsafeRawBufferPointer, _ n: UnsafeRawBufferPointer) -> Bool {
        switch op {
        case .equal: return h.count == n.count && (n.count == 0 || memcmp(h.baseAddress!, n.baseAddress!, n.count) == 0)
        case .notEqual: return !(h.count == n.count && (n.count == 0 || memcmp(h.baseAddress!, n.baseAddress!, n.count) == 0))
        case .less: return Semantics.rawOrder(h, n) < 0
        case .lessOrEqual: return Semantics.rawOrder(h, n) <= 0
        case .greater: return Semantics.rawOrder(h, n) > 0
        case .greaterOrEqual: return Semantics.rawOrder(h, n) >= 0
        default: return Semantics.stringOp(op, h, n)
        }
    }
}
