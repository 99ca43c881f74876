/// One column of one leaf, for scans: read in place from a committed cluster, or from a dirty leaf.
///
/// The reader lives in a class box so that per-row calls borrow it instead of copying a large struct.
public struct ColumnCursor {
    final class Box {
        let reader: ColumnReader?
        let values: [Value]?
        /// A column of another kind of file (`ForeignColumn`), when neither `reader` nor `values` is set: read in
        /// place, its filters (`keepInts`, `keepStrings`) a call per leaf.
        let foreign: (any ForeignColumn)?
        let info: PropertyInfo
        /// Where `reader` reads nodes from (nil for the other two forms).
        let source: NodeSource?
        let defaultInt: Int64
        let defaultIsNull: Bool
        /// What `string(_:)` reads a committed string column with (nil for other columns and forms), and the
        /// same unretained for the per-row call (`strings` keeps it alive as long as the box).
        let strings: StringReads?
        let unretainedStrings: Unmanaged<StringReads>?
        /// `reader != nil`, kept as a flag: testing the optional's tag was an outlined call on every row.
        let hasReader: Bool

        init(reader: ColumnReader?, values: [Value]?, foreign: (any ForeignColumn)?, info: PropertyInfo, source: NodeSource?) {
            self.reader = reader
            self.values = values
            self.foreign = foreign
            self.info = info
            self.source = source
            if case .int(let i) = info.defaultValue { defaultInt = i } else { defaultInt = 0 }
            defaultIsNull = info.defaultValue.isNull
            if let reader, reader.type == .string, reader.encoding == .bytes, let source {
                strings = StringReads(reader, info: info, source: source)
            } else {
                strings = nil
            }
            unretainedStrings = strings.map { .passUnretained($0) }
            hasReader = reader != nil
        }
    }

    let box: Box

    init(reader: ColumnReader?, values: [Value]?, foreign: (any ForeignColumn)? = nil, info: PropertyInfo, source: NodeSource?) {
        box = Box(reader: reader, values: values, foreign: foreign, info: info, source: source)
    }

    /// Where a committed column's reader reads (set whenever `box.reader` is).
    var nodeSource: NodeSource { box.source.unsafelyUnwrapped }

    /// The value at `row` (links as `.link(key)`).
    public func value(_ row: Int) throws -> Value {
        if box.hasReader {
            return try box.reader.unsafelyUnwrapped.value(at: row, source: nodeSource, location: "row \(row) of \(box.info.name)")
        }
        if let vs = box.values { return vs[row] }
        if let f = box.foreign { return try f.value(row) }
        return box.info.defaultValue
    }

    /// The integer at `row` of an int column (0 for null).
    ///
    /// The typed reads keep a committed column's read alone in the function and the other forms in a call of
    /// their own: with them inline, every call saved and restored the registers those forms use.
    @inline(__always) public func int(_ row: Int) -> Int64 {
        if box.hasReader { return box.reader.unsafelyUnwrapped.int(at: row) }
        return unreadInt(row)
    }

    @inline(never) func unreadInt(_ row: Int) -> Int64 {
        if let vs = box.values { if case .int(let i) = vs[row] { return i } else { return 0 } }
        if let f = box.foreign { return f.int(row) }
        return box.defaultInt
    }

    @inline(__always) public func isNull(_ row: Int) -> Bool {
        if box.hasReader { return box.reader.unsafelyUnwrapped.isNull(row) }
        return unreadIsNull(row)
    }

    @inline(never) func unreadIsNull(_ row: Int) -> Bool {
        if let vs = box.values { return vs[row].isNull }
        if let f = box.foreign { return f.isNull(row) }
        return box.defaultIsNull
    }

    /// Calls `body` with the UTF-8 bytes of the string at `row` without copying when it is stored inline.
    ///
    /// Exported specializations for what the query engine passes (a match, or nothing): called from another
    /// module, the generic entry instantiated `Optional<R>` metadata on every row (`perf`: a third of a
    /// `CONTAINS[c]` scan of 1,000,000 strings).
    @_specialize(exported: true, where R == Bool)
    @_specialize(exported: true, where R == Void)
    public func withUTF8<R>(_ row: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        if box.hasReader {
            if let inline = try box.reader.unsafelyUnwrapped.withBytes(at: row, body) { return inline }
            if box.reader.unsafelyUnwrapped.isNull(row) { return nil }
        } else if let f = box.foreign {
            var result: R?
            return try f.withUTF8(row, { result = try body($0) }) ? result : nil
        }
        guard case .string(let s) = try value(row) else { return nil }
        var copy = s
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

/// One leaf of a table during a scan.
public struct LeafCursor {
    enum Storage {
        case native(LeafAccess, NodeSource)
        /// A leaf of another kind of file (`ForeignLeaf`), with its count.
        case foreign(any ForeignLeaf, Int)
    }

    let storage: Storage

    init(storage: Storage) { self.storage = storage }

    init(leaf: LeafAccess, source: NodeSource) { storage = .native(leaf, source) }

    public var count: Int {
        switch storage {
        case .native(let leaf, _): return leaf.count
        case .foreign(_, let count): return count
        }
    }

    public func key(_ row: Int) -> ObjectKey {
        switch storage {
        case .native(let leaf, _): return ObjectKey(leaf.key(at: row))
        case .foreign(let f, _): return f.key(row)
        }
    }

    public func column(_ p: PropertyHandle) throws -> ColumnCursor {
        switch storage {
        case .native(.clean(let v), let source):
            return ColumnCursor(reader: try v.reader(for: p.info, source: source), values: nil, info: p.info, source: source)
        case .native(.dirty(let l), let source):
            if let r = l.lazyReader(p.info.columnID) { return ColumnCursor(reader: r, values: nil, info: p.info, source: source) }
            return ColumnCursor(reader: nil, values: try l.column(p.info.columnID), info: p.info, source: source)
        case .foreign(let f, _):
            return try f.column(p)
        }
    }
}

extension Snapshot {
    /// Visits the table leaf by leaf, in key order; `body` returns false to stop. The fast way to read many
    /// objects: a column of a committed leaf is read in place.
    public func scan(_ table: TableHandle, _ body: (LeafCursor) throws -> Bool) throws {
        _ = try classInfo(table)
        try walkLeaves(table.classID) { try body(LeafCursor(leaf: $0, source: self)) }
    }

    /// `TableTree.forEachLeaf` for long reads: on an encrypted file, past `Database.decryptedPageBudget` the
    /// decrypted pages are given back between leaves (keeping the path being walked), so one scan of a file
    /// larger than memory stays within the budget (DECISIONS 41). Only the outermost walk of a snapshot that
    /// is the only one open in the process does it.
    func walkLeaves(_ classID: UInt32, _ body: (LeafAccess) throws -> Bool) throws {
        _ = try naming(classID) {
            try longWalk { boundary in try TableTree.forEachLeaf(root(of: classID), source: self, boundary: boundary, body) }
        }
    }

    /// Runs a walk over many nodes, handing it the leaf-boundary callback that trims decrypted pages (nil
    /// when this walk must not: a plain file, a write transaction, a walk inside another).
    func longWalk<T>(_ walk: ((([UInt64]) throws -> Void)?) throws -> T) rethrows -> T {
        let trims = database.isEncrypted && !(self is WriteTransaction) && walkDepth == 0
        walkDepth += 1
        defer { walkDepth -= 1 }
        return try walk(trims ? { [unowned self] path in
            if database.store.mirroredBytes > database.decryptedPageBudget { _ = database.trimDecryptedPages(keeping: path, during: self) }
        } : nil)
    }

    /// Number of objects whose int property lies in `range` (nulls never match): one column read per leaf.
    public func count(_ p: PropertyHandle, in range: ClosedRange<Int64>) throws -> Int {
        try aggregate(p, in: range).count
    }

    /// Sum (wrapping) and count of the int property's values that lie in `range`.
    public func sum(_ p: PropertyHandle, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws -> (sum: Int64, count: Int) {
        try aggregate(p, in: range)
    }

    /// `runs`: see `leafRuns` (nil: by the table's size and the processors).
    func aggregate(_ p: PropertyHandle, in range: ClosedRange<Int64>, runs: Int? = nil) throws -> (sum: Int64, count: Int) {
        let (c, info) = try currentInfo(p)
        guard info.type == .int, !info.isCollection else {
            throw StorageError.typeMismatch(className: c.name, property: info.name, expected: "an int property", got: info.type.description)
        }
        let parts = try leafRuns(c.classID, runs: runs) { _, reader, walk -> (sum: Int64, count: Int) in
            var total: Int64 = 0
            var n = 0
            try walk { leaf in
                switch leaf {
                case .clean(let v):
                    if let r = try v.reader(for: info, source: reader) {
                        let (s, k) = r.packedInts!.sum(in: range, excluding: r.nullBitmap)
                        total &+= s
                        n += k
                    } else if case .int(let d) = info.defaultValue, range.contains(d) {
                        total &+= d &* Int64(v.count)
                        n += v.count
                    }
                case .dirty(let l):
                    for row in 0..<l.keys.count {
                        if case .int(let x) = try l.value(row: row, property: info), range.contains(x) {
                            total &+= x
                            n += 1
                        }
                    }
                }
                return true
            }
            return (total, n)
        }
        return parts.reduce((sum: 0, count: 0)) { ($0.sum &+ $1.sum, $0.count + $1.count) }
    }

    /// Number of objects whose string property equals `string` (bytewise), comparing in place.
    public func count(_ p: PropertyHandle, equalTo string: String) throws -> Int {
        try count(p, equalTo: string, runs: nil)
    }

    func count(_ p: PropertyHandle, equalTo string: String, runs: Int?) throws -> Int {
        let (c, info) = try currentInfo(p)
        guard info.type == .string, !info.isCollection else {
            throw StorageError.typeMismatch(className: c.name, property: info.name, expected: "a string property", got: info.type.description)
        }
        if info.isIndexed { return try indexLookup(c.classID, info, .string(string), limit: Int.max).count }
        var needle = string
        return try needle.withUTF8 { target in
            let t = UnsafeRawBufferPointer(target)
            return try scanRuns(TableHandle(name: c.name, classID: c.classID), runs: runs) { _, _, scan -> Int in
                var n = 0
                var rows: [Int32] = []
                try scan { leaf in
                    let column = try leaf.column(p)
                    if let k = column.countDictionaryStrings(equalTo: t) {
                        n += k
                    } else {
                        leaf.allRows(into: &rows)
                        try column.keepStrings(&rows, equalTo: t, negate: false, nullMatches: false)
                        n += rows.count
                    }
                    return true
                }
                return n
            }.reduce(0, +)
        }
    }
}

@inline(__always) func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    if a.count == 0 { return true }
    return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
}

#if canImport(Glibc)
import Glibc
#endif

// MARK: Leaf-at-a-time kernels for the query engine
//
// The query engine filters a leaf's rows with one call per leaf: a loop here reads the packed values in place
// (a call per row from another module cannot be inlined, and copied the column reader on each).

extension ColumnCursor {
    /// Keeps in `rows` those whose int lies in `lo...hi` (outside it when `negate`); null rows are kept when
    /// `nullMatches`.
    public func keepInts(_ rows: inout [Int32], in lo: Int64, _ hi: Int64, negate: Bool, nullMatches: Bool) {
        var out = 0
        if let reader = box.reader, let packed = reader.packedInts {
            let d = UInt64(bitPattern: packed.base &- lo), span = UInt64(bitPattern: hi &- lo)
            let checkNulls = reader.hasNulls || reader.type == .link
            // Every row of the leaf (the first condition of a scan; rows ascend, as every filter keeps them):
            // the matches are found 64 at a time (`lo > hi` is left to the loop below).
            if !negate, !checkNulls, lo <= hi, rows.count == packed.count, rows.first == 0,
               rows.last == Int32(truncatingIfNeeded: packed.count &- 1) {
                rows.removeAll(keepingCapacity: true)
                packed.appendIndices(in: lo...hi, to: &rows)
                return
            }
            rows.withUnsafeMutableBufferPointer { buf in
                for j in 0..<buf.count {
                    let r = Int(buf[j])
                    precondition(r < packed.count, "row index out of range")
                    let hit = checkNulls && reader.isNull(r) ? nullMatches : (((packed.field(r) &+ d) <= span) != negate)
                    if hit { buf[out] = buf[j]; out += 1 }
                }
            }
        } else if let f = box.foreign, f.keepInts(&rows, in: lo, hi, negate: negate, nullMatches: nullMatches) {
            return
        } else {
            for j in rows.indices {
                let r = Int(rows[j])
                let hit = isNull(r) ? nullMatches : ((int(r) >= lo && int(r) <= hi) != negate)
                if hit { rows[out] = rows[j]; out += 1 }
            }
        }
        rows.removeLast(rows.count - out)
    }
}

extension ColumnCursor {
    /// Keeps in `rows` those whose string's UTF-8 bytes pass `test`; null rows are kept when `nullMatches`.
    public func keepStrings(_ rows: inout [Int32], nullMatches: Bool, where test: (UnsafeRawBufferPointer) throws -> Bool) throws {
        if let f = box.foreign, try f.keepStrings(&rows, nullMatches: nullMatches, where: test) { return }
        var out = 0
        if let reader = box.reader, reader.encoding == .bytes, let codes = reader.codes, reader.offsetsChecked {
            // Dictionary form: each distinct value is tested once, when a row first names it (every code was
            // checked against the values when the reader was made).
            try withUnsafeTemporaryAllocation(of: Int8.self, capacity: reader.entryCount) { verdicts in
                verdicts.initialize(repeating: -1)
                for j in rows.indices {
                    let r = Int(rows[j])
                    let hit: Bool
                    if reader.isNull(r) {
                        hit = nullMatches
                    } else {
                        let e = Int(truncatingIfNeeded: codes[r])
                        if verdicts[e] < 0 { verdicts[e] = try test(reader.entryBytes(e)) ? 1 : 0 }
                        hit = verdicts[e] == 1
                    }
                    if hit { rows[out] = rows[j]; out += 1 }
                }
            }
        } else if let reader = box.reader, reader.encoding == .bytes {
            for j in rows.indices {
                let r = Int(rows[j])
                let hit: Bool
                if let h = try reader.withBytes(at: r, test) {
                    hit = h
                } else if reader.isNull(r) {
                    hit = nullMatches
                } else {
                    hit = try withUTF8(r, test) ?? nullMatches   // stored out of line
                }
                if hit { rows[out] = rows[j]; out += 1 }
            }
        } else {
            for j in rows.indices {
                let r = Int(rows[j])
                if try withUTF8(r, test) ?? nullMatches { rows[out] = rows[j]; out += 1 }
            }
        }
        rows.removeLast(rows.count - out)
    }

    /// The number of rows whose string is `needle`, bytewise; nil when the column is not in dictionary form (then
    /// `keepStrings` counts). In dictionary form the value's code is found once and the codes are counted packed.
    public func countDictionaryStrings(equalTo needle: UnsafeRawBufferPointer) -> Int? {
        guard let reader = box.reader, reader.encoding == .bytes, let codes = reader.codes, reader.offsetsChecked else { return nil }
        for e in 0..<reader.entryCount where bytesEqual(reader.entryBytes(e), needle) {
            return codes.count(in: Int64(e)...Int64(e), excluding: reader.nullBitmap)
        }
        return 0
    }

    /// Keeps in `rows` those whose string is `needle`, bytewise (is not, when `negate`); null rows are kept when
    /// `nullMatches`.
    public func keepStrings(_ rows: inout [Int32], equalTo needle: UnsafeRawBufferPointer, negate: Bool, nullMatches: Bool) throws {
        if let f = box.foreign, try f.keepStrings(&rows, equalTo: needle, negate: negate, nullMatches: nullMatches) { return }
        let n = needle.count
        try keepStrings(&rows, nullMatches: nullMatches) { h in
            (h.count == n && (n == 0 || memcmp(h.baseAddress!, needle.baseAddress!, n) == 0)) != negate
        }
    }
}

extension LeafCursor {
    /// Appends the keys of `rows` to `keys`.
    public func appendKeys(of rows: [Int32], to keys: inout [ObjectKey]) {
        switch storage {
        case .native(.clean(let v), _): for r in rows { keys.append(ObjectKey(v.key(at: Int(r)))) }
        case .foreign(let f, _): f.appendKeys(of: rows, to: &keys)
        default: for r in rows { keys.append(key(Int(r))) }
        }
    }

    /// Appends to `rows` the row of each key of `keys` (ascending) from `keys[next]` on that this leaf holds, in
    /// order, stopping at the first key past the leaf; `next` moves past the keys used. A key between two of the
    /// leaf's is skipped (no such object). One merge of the two ascending sequences, reading the leaf's keys
    /// where they lie.
    public func appendRows(ofSortedKeys keys: [ObjectKey], from next: inout Int, to rows: inout [Int32]) {
        func merge(_ key: (Int) -> UInt64) {
            let n = count
            var row = 0
            var i = next
            while i < keys.count && row < n {
                let want = keys[i].rawValue, have = key(row)
                if have < want {
                    row &+= 1
                } else {
                    if have == want {
                        rows.append(Int32(truncatingIfNeeded: row))
                        row &+= 1
                    }
                    i &+= 1
                }
            }
            // Keys left that lie below the leaf's last key are not in it either.
            if n > 0 { let last = key(n - 1); while i < keys.count && keys[i].rawValue <= last { i &+= 1 } }
            next = i
        }
        switch storage {
        case .native(.clean(let v), _): merge { v.key(at: $0) }
        case .native(.dirty(let l), _): l.keys.withUnsafeBufferPointer { k in merge { k[$0] } }
        case .foreign(let f, _): merge { f.key($0).rawValue }
        }
    }

    /// Sets `rows` to every row of the leaf, 0 ..< count.
    public func allRows(into rows: inout [Int32]) {
        let n = count
        rows.removeAll(keepingCapacity: true)
        rows.reserveCapacity(n)
        for i in 0..<n { rows.append(Int32(truncatingIfNeeded: i)) }
    }
}
