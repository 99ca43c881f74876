// Read-only typed accessors for the query evaluator's column scans: values without building `Value`s.

extension ColumnCursor {
    /// The double at `row` of a double column (0 for null); check `isNull` where it matters.
    @inline(__always) public func double(_ row: Int) -> Double {
        if box.reader != nil { return box.reader.unsafelyUnwrapped.double(at: row) }
        if let f = box.foreign { return f.double(row) }
        return Self.number(box.values?[row] ?? box.info.defaultValue)
    }

    /// The float at `row` of a float column, widened (0 for null).
    @inline(__always) public func float(_ row: Int) -> Double {
        if box.reader != nil { return Double(box.reader.unsafelyUnwrapped.float(at: row)) }
        if let f = box.foreign { return f.double(row) }
        return Self.number(box.values?[row] ?? box.info.defaultValue)
    }

    /// The bool at `row` of a bool column (false for null).
    @inline(__always) public func bool(_ row: Int) -> Bool {
        if box.reader != nil { return box.reader.unsafelyUnwrapped.bool(at: row) }
        if let f = box.foreign { return f.bool(row) }
        if case .bool(let b) = box.values?[row] ?? box.info.defaultValue { return b }
        return false
    }

    /// The target key of a to-one link column at `row`, nil when null.
    @inline(__always) public func link(_ row: Int) -> ObjectKey? {
        if box.reader != nil { return box.reader.unsafelyUnwrapped.linkKey(at: row) }
        if let f = box.foreign { return f.link(row) }
        if case .link(let k) = box.values?[row] ?? box.info.defaultValue { return k }
        return nil
    }

    private static func number(_ v: Value) -> Double {
        switch v {
        case .double(let d): return d
        case .float(let f): return Double(f)
        default: return 0
        }
    }
}
