/// One consistent, read-only version of a database's objects, as the query engine, the browser and the tools
/// read it. A `Snapshot` (or a write transaction) of our own files is one; a reader of a Realm Core file
/// (`RealmTools.CoreFileReader`) is another, so both kinds of file are queried, browsed and exported by the same
/// code (DECISIONS 98).
///
/// Keys, handles and values mean what they mean on a `Snapshot`: `table`/`property` resolve names once, links
/// come back as `.link(key)`, `scan` visits the objects leaf by leaf in key order. An index a reader does not
/// have is answered without it: `indexCandidates`, `objects(_:withElement:)` and `keysInIndexOrder` may give
/// nil (scan instead), and `find` may scan.
public protocol ObjectReader: AnyObject {
    /// The committed version read (a reader of a file that has no versions gives a constant).
    var version: UInt64 { get }
    var schemaVersion: UInt64 { get }
    /// Identifies the database read: two readers with the same identity and version see the same objects, and
    /// handles made by one are valid in the other.
    var databaseIdentity: ObjectIdentifier { get }
    /// Every class, in the reader's order.
    var schema: [ClassSchema] { get }
    func classSchema(_ name: String) -> ClassSchema?
    /// The ID typed links (`Value.typedLink`) name a class by.
    func classID(named name: String) -> UInt32?
    func className(classID id: UInt32) -> String?

    func table(_ name: String) throws -> TableHandle
    func property(_ table: TableHandle, _ name: String) throws -> PropertyHandle

    func count(_ table: TableHandle) throws -> Int
    func exists(_ table: TableHandle, _ key: ObjectKey) throws -> Bool
    /// The key of the object at `position` in key order.
    func key(at position: Int, in table: TableHandle) throws -> ObjectKey?
    func keys(_ table: TableHandle) throws -> [ObjectKey]
    /// Every key in key order; `body` returns false to stop.
    func forEachKey(_ table: TableHandle, _ body: (ObjectKey) throws -> Bool) throws
    /// Visits the table leaf by leaf, in key order; `body` returns false to stop.
    func scan(_ table: TableHandle, _ body: (LeafCursor) throws -> Bool) throws
    /// `scan` split across the processors (DECISIONS 104): the table in `runs` runs of whole leaves that tile it
    /// in key order (nil: as many as its size and `ParallelReads` give), each read on a thread of its own by a
    /// reader of this version. `body(run, reader, scan)` is called once per run, concurrently, and must read
    /// through `reader` only; `scan` visits the run's leaves in key order. The results come back in key order;
    /// the first failure is thrown, after every run has stopped. A reader that cannot split reads one run, on
    /// the calling thread.
    func scanRuns<R>(_ table: TableHandle, runs: Int?,
                     _ body: @escaping (Int, any ObjectReader, ((LeafCursor) throws -> Bool) throws -> Void) throws -> R) throws -> [R]

    func value(_ key: ObjectKey, _ p: PropertyHandle) throws -> Value
    /// The elements of a list or set property.
    func list(_ key: ObjectKey, _ p: PropertyHandle) throws -> [Value]
    func dictionary(_ key: ObjectKey, _ p: PropertyHandle) throws -> ValueDictionary
    /// The objects of `originClass` whose `originProperty` links to `key`.
    func backlinks(_ key: ObjectKey, in table: TableHandle, from originClass: String, property originProperty: String) throws -> [ObjectKey]
    /// The union of `backlinks` over `keys`, each origin once.
    func backlinks(of keys: [ObjectKey], in table: TableHandle, from originClass: String, property originProperty: String) throws -> [ObjectKey]
    /// Every object linking to `key`, grouped by origin class and property.
    func allBacklinks(_ key: ObjectKey, in table: TableHandle) throws -> [(className: String, property: String, keys: [ObjectKey])]
    /// The owner of an embedded object: its class, key and the property holding it.
    func owner(of key: ObjectKey, in table: TableHandle) throws -> (className: String, key: ObjectKey, property: String)?

    /// The objects whose property `p` equals `value`, in key order.
    func find(_ p: PropertyHandle, equalTo value: Value) throws -> [ObjectKey]
    /// The object whose primary key is `value`, or nil.
    func object(_ table: TableHandle, primaryKey value: Value) throws -> ObjectKey?
    /// A superset of the objects whose mixed property `p` may equal `value`, from its index; nil without one.
    func indexCandidates(_ p: PropertyHandle, mayEqual value: Value) throws -> [ObjectKey]?
    /// The objects whose indexed set `p` holds `value`; nil when `p` is not an indexed set.
    func objects(_ p: PropertyHandle, withElement value: Value) throws -> [ObjectKey]?
    /// Every key in the order of `p`'s index, with where each run of equal values starts; nil without an index.
    func keysInIndexOrder(_ p: PropertyHandle) throws -> (keys: [ObjectKey], runStarts: [Int])?

    /// Whether the column cursors of `scan` hold each row's list, set or dictionary serialized, for
    /// `ColumnCursor.firstStringElement` and `dictionaryValue`; when not, those are read with `list` and
    /// `dictionary`.
    var scansCollectionsInLeaves: Bool { get }
    /// Gives back memory a long read may hold beyond its budget (decrypted pages); nothing when there is none.
    func releaseDecryptedPagesIfOverBudget()
    /// Another reader of the same version, for another thread.
    func openSibling() throws -> any ObjectReader
    /// Ends the read; further use is a programmer error.
    func close()
}

extension Snapshot: ObjectReader {
    public var databaseIdentity: ObjectIdentifier { ObjectIdentifier(database) }
    public func openSibling() throws -> any ObjectReader { try sibling() }
    /// A write transaction keeps its changed collections apart from its leaves until commit.
    public var scansCollectionsInLeaves: Bool { !(self is WriteTransaction) }
}

extension ObjectReader {
    /// One run, on this thread: a reader whose tables cannot be split.
    public func scanRuns<R>(_ table: TableHandle, runs: Int?,
                            _ body: @escaping (Int, any ObjectReader, ((LeafCursor) throws -> Bool) throws -> Void) throws -> R) throws -> [R] {
        [try body(0, self) { visit in try scan(table, visit) }]
    }

    public func forEachKey(_ table: TableHandle, _ body: (ObjectKey) throws -> Bool) throws {
        try scan(table) { leaf in
            for i in 0..<leaf.count where !(try body(leaf.key(i))) { return false }
            return true
        }
    }

    public func count(_ className: String) throws -> Int { try count(table(className)) }

    public func value(_ key: ObjectKey, _ className: String, _ propertyName: String) throws -> Value {
        try value(key, property(table(className), propertyName))
    }
}

// MARK: Readers of other files

/// One leaf of a table of another kind of file, for `LeafCursor`: its objects' keys, and a column cursor per
/// property.
public protocol ForeignLeaf {
    /// The number of objects in the leaf (read once, when the cursor is made).
    var count: Int { get }
    /// The key of the leaf's object `row` (below `count`).
    func key(_ row: Int) -> ObjectKey
    /// Appends the keys of `rows` to `keys`, in order: a scan reads the keys of the rows it keeps only.
    func appendKeys(of rows: [Int32], to keys: inout [ObjectKey])
    func column(_ p: PropertyHandle) throws -> ColumnCursor
}

/// One column of a `ForeignLeaf` read in place. The typed reads do not throw: the leaf is checked when the
/// column is made, so that every row below the leaf's count can be read.
public protocol ForeignColumn: AnyObject {
    func value(_ row: Int) throws -> Value
    func isNull(_ row: Int) -> Bool
    /// The integer at `row` (0 for null).
    func int(_ row: Int) -> Int64
    /// The double at `row`, floats widened (0 for null).
    func double(_ row: Int) -> Double
    func bool(_ row: Int) -> Bool
    func link(_ row: Int) -> ObjectKey?
    /// Calls `body` with the UTF-8 bytes of the string at `row`; false (without calling it) for null.
    func withUTF8(_ row: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool

    // Leaf-at-a-time filters (`ColumnCursor.keepInts`, `keepStrings`), for the layouts a column reads where they
    // lie: each keeps the rows that match and returns true, or returns false, `rows` unchanged, and the cursor
    // filters row by row through the reads above. The defaults return false.

    /// Keeps in `rows` those whose int lies in `lo...hi` (outside it when `negate`); nulls kept when `nullMatches`.
    func keepInts(_ rows: inout [Int32], in lo: Int64, _ hi: Int64, negate: Bool, nullMatches: Bool) -> Bool
    /// Keeps in `rows` those whose string is `needle` bytewise (is not, when `negate`); nulls kept when `nullMatches`.
    func keepStrings(_ rows: inout [Int32], equalTo needle: UnsafeRawBufferPointer, negate: Bool, nullMatches: Bool) throws -> Bool
    /// Keeps in `rows` those whose string's UTF-8 bytes pass `test`; nulls kept when `nullMatches`.
    func keepStrings(_ rows: inout [Int32], nullMatches: Bool, where test: (UnsafeRawBufferPointer) throws -> Bool) throws -> Bool
}

extension ForeignColumn {
    public func keepInts(_ rows: inout [Int32], in lo: Int64, _ hi: Int64, negate: Bool, nullMatches: Bool) -> Bool { false }
    public func keepStrings(_ rows: inout [Int32], equalTo needle: UnsafeRawBufferPointer, negate: Bool, nullMatches: Bool) throws -> Bool {
        false
    }
    public func keepStrings(_ rows: inout [Int32], nullMatches: Bool, where test: (UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        false
    }
}

extension TableHandle {
    /// A handle for a reader of another kind of file: `classID` is that reader's ID of the class.
    package init(foreignName name: String, classID: UInt32) {
        self.init(name: name, classID: classID)
    }

    package var foreignClassID: UInt32 { classID }
}

extension PropertyHandle {
    /// A handle for a reader of another kind of file. `column` is that reader's index of the property;
    /// `targetClassID`, the link target's class ID.
    package init(foreignName name: String, type: PropertyType, isOptional: Bool, isList: Bool = false, isSet: Bool = false,
                 isDictionary: Bool = false, isIndexed: Bool = false, isPrimaryKey: Bool = false,
                 classID: UInt32, column: UInt32, targetClassID: UInt32 = 0) {
        var flags: PropertyInfo.Flags = []
        if isOptional { flags.insert(.optional) }
        if isList { flags.insert(.list) }
        if isSet { flags.insert(.set) }
        if isDictionary { flags.insert(.dictionary) }
        if isIndexed { flags.insert(.indexed) }
        if isPrimaryKey { flags.insert(.primaryKey) }
        let info = PropertyInfo(columnID: column, name: name, type: type, flags: flags, targetClassID: targetClassID,
                                originColumnID: 0, indexRoot: 0)
        self.init(name: name, type: type, isList: isList, isOptional: isOptional, info: info, classID: classID)
    }

    package var foreignClassID: UInt32 { classID }
    package var foreignColumn: UInt32 { info.columnID }
}

extension LeafCursor {
    package init(foreign: any ForeignLeaf) {
        self.init(storage: .foreign(foreign, foreign.count))
    }
}

extension ColumnCursor {
    /// A column read in place through `foreign`.
    package init(foreign: any ForeignColumn, property p: PropertyHandle) {
        self.init(reader: nil, values: nil, foreign: foreign, info: p.info, source: nil)
    }

    /// A column whose values are decoded for the leaf (the rarer types of another kind of file).
    package init(values: [Value], property p: PropertyHandle) {
        self.init(reader: nil, values: values, foreign: nil, info: p.info, source: nil)
    }
}
