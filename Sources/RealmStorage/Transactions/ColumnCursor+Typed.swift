// Read-only typed accessors for the query evaluator's column scans: values without building `Value`s.

extension ColumnCursor {
    /// The double at `row` of a double column (0 for null); check `isNull` where it matters.
    @inline(__always) public func double(_ row: Int) -> Double {
        if box.hasReader { return box.reader.unsafelyUnwrapped.double(at: row) }
        return unreadNumber(row)
    }

    /// The float at `row` of a float column, widened (0 for null).
    @inline(__always) public func float(_ row: Int) -> Double {
        if box.hasReader { return Double(box.reader.unsafelyUnwrapped.float(at: row)) }
        return unreadNumber(row)
    }

    @inline(never) func unreadNumber(_ row: Int) -> Double {
        if let f = box.foreign { return f.double(row) }
        return Self.number(box.values?[row] ?? box.info.defaultValue)
    }

    /// The bool at `row` of a bool column (false for null).
    @inline(__always) public func bool(_ row: Int) -> Bool {
        if box.hasReader { return box.reader.unsafelyUnwrapped.bool(at: row) }
        return unreadBool(row)
    }

    @inline(never) func unreadBool(_ row: Int) -> Bool {
        if let f = box.foreign { return f.bool(row) }
        if case .bool(let b) = box.values?[row] ?? box.info.defaultValue { return b }
        return false
    }

    /// The target key of a to-one link column at `row`, nil when null.
    @inline(__always) public func link(_ row: Int) -> ObjectKey? {
        if box.hasReader { return box.reader.unsafelyUnwrapped.linkKey(at: row) }
        return unreadLink(row)
    }

    @inline(never) func unreadLink(_ row: Int) -> ObjectKey? {
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
/// was copied whole on every row), the form of the column worked out once for the leaf, and in dictionary form
/// the distinct values decoded so far.
final class StringReads {
    let reader: ColumnReader
    let info: PropertyInfo
    let source: NodeSource
    /// Whether each distinct value decoded is kept: the dictionary form, its codes all checked against its
    /// values when the reader was made (DECISIONS 105).
    let keepsEntries: Bool
    /// Plain form, every end offset checked when the reader was made, no row out of line: a row's bytes are
    /// its own entry's, inside the block, with nothing more to test.
    let plainInline: Bool
    /// `SmallStringBits.isUsable`, read once for the leaf.
    let smallBits: Bool
    /// Dictionary form (`keepsEntries` and `smallBits`): the distinct values of up to 15 bytes decoded so far,
    /// as the two words of their `String`; (0, 0), which no string has, while not decoded. Nil until a row is
    /// read. A plain buffer of words: nothing to retain or release per row, nothing to destroy per leaf.
    private var smallEntries: UnsafeMutablePointer<(UInt64, UInt64)>?
    /// The distinct values decoded so far that `smallEntries` does not hold (longer ones, or all of them when
    /// `smallBits` is false), by entry; made when a row first names one, so a leaf decodes each of its
    /// distinct strings once.
    var entryStrings: [String?] = []

    init(_ reader: ColumnReader, info: PropertyInfo, source: NodeSource) {
        self.reader = reader
        self.info = info
        self.source = source
        keepsEntries = reader.codes != nil && reader.offsetsChecked
        plainInline = reader.codes == nil && reader.offsetsChecked && !reader.anyOutOfLine
        smallBits = SmallStringBits.isUsable
    }

    deinit { smallEntries?.deallocate() }

    /// The two common cases inline (a plain row; a dictionary row whose short value is kept), the others in
    /// `otherString`: with them inline, every call set up their frame.
    @inline(__always) func string(_ row: Int) throws -> String? {
        if plainInline {
            if reader.isNull(row) { return nil }
            // `isNull` checked `row` against the rows, and the reader every row's bounds.
            if let s = decodeUTF8(reader.entryBytes(row), smallBits: smallBits) { return s }
            return try slowString(row)
        }
        if let table = smallEntries {
            if reader.isNull(row) { return nil }
            let w = table[reader.entry(row)]
            if w.1 != 0 { return SmallStringBits.string(w) }
        }
        return try otherString(row)
    }

    @inline(never) func otherString(_ row: Int) throws -> String? {
        if reader.isNull(row) { return nil }
        if keepsEntries {
            let e = reader.entry(row)
            if let table = smallEntries {
                let w = table[e]
                if w.1 != 0 { return SmallStringBits.string(w) }
            }
            if e < entryStrings.count, let s = entryStrings[e] { return s }
            return try decodeEntry(e, row)
        }
        // Inline and in bounds (nil: out of line, or bounds not checked up front and wrong): decoded in place.
        if let decoded = reader.withBytes(at: row, { decodeUTF8($0, smallBits: smallBits) }), let s = decoded { return s }
        return try slowString(row)
    }

    /// Decodes entry `e` (named by `row`) of a dictionary-form column and keeps it.
    @inline(never) func decodeEntry(_ e: Int, _ row: Int) throws -> String? {
        let bytes = reader.entryBytes(e)
        guard let s = decodeUTF8(bytes, smallBits: smallBits) else { return try slowString(row) }
        if smallBits && bytes.count <= SmallStringBits.capacity {
            let table = smallEntries ?? {
                let t = UnsafeMutablePointer<(UInt64, UInt64)>.allocate(capacity: reader.entryCount)
                t.initialize(repeating: (0, 0), count: reader.entryCount)
                smallEntries = t
                return t
            }()
            table[e] = SmallStringBits.bits(s)
        } else {
            if entryStrings.isEmpty { entryStrings = [String?](repeating: nil, count: reader.entryCount) }
            entryStrings[e] = s
        }
        return s
    }

    /// The general read: out-of-line strings, and the error for a row that does not decode.
    @inline(never) func slowString(_ row: Int) throws -> String? {
        guard case .string(let s) = try reader.value(at: row, source: source, location: "row \(row) of \(info.name)") else { return nil }
        return s
    }
}
