// Read-only typed accessors for the query evaluator's column scans: values without building `Value`s.

extension ColumnCursor {
    /// The double at `row` of a double column (0 for null); check `isNull` where it matters.
    @inline(__always) public func double(_ row: Int) -> Double {
        if box.hasReader { return box.reader.unsafelyUnwrapped.double(at: row) }
        if let f = box.foreign { return f.double(row) }
        return Self.number(box.values?[row] ?? box.info.defaultValue)
    }

    /// The float at `row` of a float column, widened (0 for null).
    @inline(__always) public func float(_ row: Int) -> Double {
        if box.hasReader { return Double(box.reader.unsafelyUnwrapped.float(at: row)) }
        if let f = box.foreign { return f.double(row) }
        return Self.number(box.values?[row] ?? box.info.defaultValue)
    }

    /// The bool at `row` of a bool column (false for null).
    @inline(__always) public func bool(_ row: Int) -> Bool {
        if box.hasReader { return box.reader.unsafelyUnwrapped.bool(at: row) }
        if let f = box.foreign { return f.bool(row) }
        if case .bool(let b) = box.values?[row] ?? box.info.defaultValue { return b }
        return false
    }

    /// The target key of a to-one link column at `row`, nil when null.
    @inline(__always) public func link(_ row: Int) -> ObjectKey? {
        if box.hasReader { return box.reader.unsafelyUnwrapped.linkKey(at: row) }
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

extension ColumnCursor {
    /// The string at `row` of a string column, nil for null: what `value(row)` gives as `.string`, without
    /// making a `Value`. In dictionary form each distinct value of the leaf is decoded once, when a row first
    /// names it, and shared by the rows that repeat it (a `String` is a value: nothing a caller does to its
    /// copy reaches the others). On a column of another type, the value when it is a string, else nil.
    /// Throws as `value(row)` does (a string that is not valid UTF-8 is `StorageError.corrupt`).
    public func string(_ row: Int) throws -> String? {
        if let strings = box.unretainedStrings { return try strings._withUnsafeGuaranteedRef { try $0.string(row) } }
        guard case .string(let s) = try value(row) else { return nil }
        return s
    }
}

/// `ColumnCursor.string` on a committed string column: the reader held directly (not as an optional, which
/// was copied whole on every row), and in dictionary form the distinct values decoded so far.
final class StringReads {
    let reader: ColumnReader
    let info: PropertyInfo
    let source: NodeSource
    /// Whether each distinct value decoded is kept: the dictionary form, its codes all checked against its
    /// values when the reader was made (DECISIONS 105).
    let keepsEntries: Bool
    /// The distinct values decoded so far, by entry (`keepsEntries`); made when a row first names one, so a
    /// leaf decodes each of its distinct strings once.
    var entryStrings: [String?] = []

    init(_ reader: ColumnReader, info: PropertyInfo, source: NodeSource) {
        self.reader = reader
        self.info = info
        self.source = source
        keepsEntries = reader.codes != nil && reader.offsetsChecked
    }

    @inline(__always) func string(_ row: Int) throws -> String? {
        if reader.isNull(row) { return nil }
        if keepsEntries {
            let e = reader.entry(row)
            if e < entryStrings.count, let s = entryStrings[e] { return s }
            return try decodeEntry(e, row)
        }
        // Inline and in bounds (nil: out of line, or bounds not checked up front and wrong): decoded in place.
        if let decoded = reader.withBytes(at: row, { decodeUTF8($0) }), let s = decoded { return s }
        return try slowString(row)
    }

    /// Decodes entry `e` (named by `row`) of a dictionary-form column and keeps it.
    @inline(never) func decodeEntry(_ e: Int, _ row: Int) throws -> String? {
        if entryStrings.isEmpty { entryStrings = [String?](repeating: nil, count: reader.entryCount) }
        guard let s = decodeUTF8(reader.entryBytes(e)) else { return try slowString(row) }
        entryStrings[e] = s
        return s
    }

    /// The general read: out-of-line strings, and the error for a row that does not decode.
    @inline(never) func slowString(_ row: Int) throws -> String? {
        guard case .string(let s) = try reader.value(at: row, source: source, location: "row \(row) of \(info.name)") else { return nil }
        return s
    }
}
