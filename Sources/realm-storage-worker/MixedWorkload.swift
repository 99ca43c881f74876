#if canImport(Glibc)
import Glibc
#endif
import RealmStorage

/// The deterministic workload of `mixed`: one file taken through every kind of write the engine does, one step
/// at a time, for the tests that crash it or fail its I/O at every file system call (`CrashPointTests`).
///
/// Every step that commits creates a `Marker` whose `step` is the step's number (and the classes `Marker`,
/// `Item`, `Address` and `Geo` first, if step 0 did not land); no step deletes a marker. Every item carries the
/// newer structures, their contents a pure function of its id and step (`Mixed.Contents`): a set of strings, a
/// dictionary of ints, a set of links to its step's marker, an embedded `Address` owning an embedded `Geo`, a
/// mixed value holding a typed link or nested list or dictionary, and a dictionary of mixed values; a small step
/// also changes the item of the small step before it (set insert and remove, dictionary set and remove, a new
/// embedded address in place of the old, the mixed values replaced).
/// What a file must hold is therefore a pure function of the set of steps whose commits landed
/// (`Mixed.model(applied:)`), and the markers in the file name that set.
///
/// Output, one line per event, written straight to file descriptor 1 (so a SIGKILL loses none):
///
///     start                      the database is open
///     committed N                step N's commit returned
///     checkpointed N | compacted N | copied N    a maintenance step returned
///     failed N ERROR             step N threw; then, read back through the same handle:
///     after-failure N absent | visible | error ERROR
///     open-failed ERROR          opening failed (retried once, then exit status 3)
///     reopen N                   step N was refused because an earlier failure stopped writes through the
///                                handle (`StorageError.writesStopped`): the file is opened again, step N rerun
///     done                       every step ran
///
/// A step that throws is not retried: the next step runs, on the same handle.
enum Mixed {
    enum Step: Equatable {
        /// Creates the classes `Marker` and `Item`.
        case schema
        /// One small `Item` (a logged commit).
        case small
        /// `count` items of `bytes` bytes of data each (over 1 MiB: a direct commit).
        case large(count: Int, bytes: Int)
        /// Deletes the items of the given small steps, and of the given large step every `every`-th item.
        case delete(small: [Int], large: Int, every: Int)
        /// Adds the optional property `Item.tag` and the class `Extra`.
        case changeSchema
        /// `Database.checkpoint()`.
        case checkpoint
        /// `Database.compact()`.
        case compact
        /// `Database.writeCopy(to: PATH.copy)`.
        case writeCopy

        var commits: Bool {
            switch self {
            case .checkpoint, .compact, .writeCopy: false
            default: true
            }
        }
    }

    /// The schedule: 20 small commits, then a large one (defect: a crash in it lost the small ones), deletes,
    /// an explicit checkpoint, a schema change, a compaction, a copy, another large commit, and small commits
    /// between all of them.
    static let steps: [Step] = {
        var s: [Step] = [.schema]                                       // 0
        s += Array(repeating: .small, count: 20)                        // 1...20
        s.append(.large(count: 300, bytes: 4096))                       // 21
        s += [.small, .small, .small]                                   // 22...24
        s.append(.delete(small: [2, 4, 6, 8, 10], large: 21, every: 3)) // 25
        s += [.small, .small, .small]                                   // 26...28
        s.append(.checkpoint)                                           // 29
        s.append(.small)                                                // 30
        s.append(.changeSchema)                                         // 31
        s += [.small, .small, .small]                                   // 32...34
        s.append(.compact)                                              // 35
        s += [.small, .small]                                           // 36...37
        s.append(.writeCopy)                                            // 38
        s.append(.large(count: 300, bytes: 4096))                       // 39
        s += [.small, .small]                                           // 40...41
        s.append(.delete(small: [22, 36], large: 39, every: 1))         // 42
        s.append(.small)                                                // 43
        return s
    }()

    static let markerSchema = ClassSchema(name: "Marker", properties: [
        PropertySchema(name: "step", type: .int, isPrimaryKey: true),
    ])
    static let itemSchema = ClassSchema(name: "Item", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "name", type: .string),
        PropertySchema(name: "data", type: .data),
        PropertySchema(name: "tags", type: .string, isSet: true),
        PropertySchema(name: "scores", type: .int, isDictionary: true),
        .set("marks", of: "Marker"),
        .link("address", to: "Address"),
        PropertySchema(name: "anyValue", type: .mixed, isOptional: true),
        PropertySchema(name: "attrs", type: .mixed, isOptional: true, isDictionary: true),
    ])
    static let addressSchema = ClassSchema(name: "Address", properties: [
        PropertySchema(name: "street", type: .string),
        PropertySchema(name: "number", type: .int),
        .link("geo", to: "Geo"),
    ], isEmbedded: true)
    static let geoSchema = ClassSchema(name: "Geo", properties: [PropertySchema(name: "lat", type: .double)], isEmbedded: true)
    static var schemas: [ClassSchema] { [markerSchema, itemSchema, addressSchema, geoSchema] }
    static let tagProperty = PropertySchema(name: "tag", type: .string, isOptional: true)
    static let extraSchema = ClassSchema(name: "Extra", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "note", type: .string),
    ])

    // MARK: Values (pure functions of the step, the item and the namespace)

    /// Marker numbers and item ids of a run in namespace `ns` (a second database at the same path uses another,
    /// so nothing of the first can pass for the second's).
    static func markerNumber(_ step: Int, ns: Int) -> Int64 { Int64(ns * 1_000 + step) }
    static func itemID(_ step: Int, _ j: Int, ns: Int) -> Int64 { Int64(ns * 1_000_000 + step * 1_000 + j) }

    static func name(_ step: Int, _ j: Int) -> String { "s\(step)-\(j)" }

    static func data(_ id: Int64, count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var x = UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15 | 1
        for j in 0..<count {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            out[j] = UInt8(truncatingIfNeeded: x)
        }
        return out
    }

    static let smallDataBytes = 40

    /// An item's sets, dictionaries, embedded address and mixed values. A typed link to a marker is written in
    /// `mixed` as `.string("link:Marker:N")` (N the marker's number), the form `Mixed.canonical` reads one back
    /// as; dictionaries (nested ones too) are in key order.
    struct Contents: Equatable {
        var tags: Set<String>
        var scores: [String: Int64]
        var marks: Set<Int64>
        var address: Address?
        var mixed: Value
        var attrs: [String: Value]

        struct Address: Equatable {
            var street: String
            var number: Int64
            var lat: Double?
        }
    }

    static func markerLink(_ marker: Int64) -> Value { .string("link:Marker:\(marker)") }

    /// `entries` as a dictionary value in key order.
    static func dictionary(_ entries: [(String, Value)]) -> Value {
        .dictionary(ValueDictionary(entries.sorted { $0.0 < $1.0 }))
    }

    /// What item `id`, created in step `step`, holds when created; `link` stands for the typed link to the step's
    /// marker.
    static func created(_ id: Int64, step: Int, ns: Int) -> Contents {
        let marker = markerNumber(step, ns: ns)
        let link = markerLink(marker)
        let mixed: Value = switch id % 3 {
        case 0: link
        case 1: .list([.int(id), .string("x\(id)"), dictionary([("n", .int(id)), ("m", link)])])
        default: dictionary([("id", .int(id)), ("m", link), ("l", .list([.bool(id % 2 == 0), .double(Double(id) / 4), .null]))])
        }
        var tags: Set<String> = ["t\(id % 7)", "u\(id % 11)", "v\(id)"]
        if id % 2 == 0 { tags.insert("even") }
        return Contents(
            tags: tags,
            scores: ["a": id, "b": id % 1_000, "k\(id % 5)": -id],
            marks: [marker],
            address: Contents.Address(street: "street \(id)", number: id % 100, lat: id % 4 == 0 ? nil : Double(id) / 8),
            mixed: mixed,
            attrs: ["n": .int(id), "s": .string("s\(id)"), "ref": link, "nested": .list([.int(id), .null, dictionary([("d", .double(0.5))])])]
        )
    }

    /// Step `i` (a small step) changes the contents of the item of the small step before it this way.
    static func changed(_ c: Contents, id: Int64, by i: Int) -> Contents {
        var c = c
        c.tags.insert("m\(i)")
        c.tags.remove("v\(id)")
        c.scores["m"] = Int64(i)
        c.scores["a"] = nil
        c.address = movedAddress(i)
        c.mixed = movedMixed(i)
        c.attrs["ref"] = .null
        c.attrs["moved"] = .int(Int64(i))
        return c
    }

    static func movedAddress(_ i: Int) -> Contents.Address {
        Contents.Address(street: "moved \(i)", number: Int64(i), lat: Double(i) + 0.5)
    }

    static func movedMixed(_ i: Int) -> Value { dictionary([("moved", .int(Int64(i))), ("l", .list([.string("by \(i)")]))]) }

    /// The small step before small step `i`, whose item step `i` changes; nil for the first.
    static func previousSmall(_ i: Int) -> Int? {
        (0..<i).last { steps[$0] == .small }
    }

    /// What the file holds: items (id → name, data, tag), extras (id → note), the markers, and whether the
    /// schema change landed.
    struct Model: Equatable {
        var items: [Int64: Item] = [:]
        var extras: [Int64: String] = [:]
        var markers: Set<Int64> = []
        var hasSchema = false
        var schemaChanged = false

        struct Item: Equatable {
            var name: String
            var data: [UInt8]
            var tag: String?
            var contents: Contents
        }
    }

    /// The state after the commits of exactly the steps in `applied` (in schedule order), in namespace `ns`.
    static func model(applied: Set<Int>, ns: Int = 0) -> Model {
        var m = Model()
        for (i, step) in steps.enumerated() where applied.contains(i) && step.commits {
            m.hasSchema = true
            switch step {
            case .schema:
                break
            case .small:
                let id = itemID(i, 0, ns: ns)
                if let j = previousSmall(i), let old = m.items[itemID(j, 0, ns: ns)] {
                    m.items[itemID(j, 0, ns: ns)]?.contents = changed(old.contents, id: itemID(j, 0, ns: ns), by: i)
                }
                m.items[id] = Model.Item(name: name(i, 0), data: data(id, count: smallDataBytes),
                                         tag: m.schemaChanged ? "t\(i)" : nil, contents: created(id, step: i, ns: ns))
                if m.schemaChanged { m.extras[Int64(ns * 1_000 + i)] = "extra \(i)" }
            case .large(let count, let bytes):
                for j in 0..<count {
                    let id = itemID(i, j, ns: ns)
                    m.items[id] = Model.Item(name: name(i, j), data: data(id, count: bytes), tag: nil,
                                             contents: created(id, step: i, ns: ns))
                }
            case .delete:
                for id in deletions(i, ns: ns) { m.items[id] = nil }
            case .changeSchema:
                m.schemaChanged = true
            case .checkpoint, .compact, .writeCopy:
                break
            }
            m.markers.insert(markerNumber(i, ns: ns))
        }
        return m
    }

    /// The item ids a delete step removes (those that exist).
    static func deletions(_ i: Int, ns: Int) -> [Int64] {
        guard case .delete(let smalls, let large, let every) = steps[i],
              case .large(let count, _) = steps[large] else { return [] }
        return smalls.map { itemID($0, 0, ns: ns) } + stride(from: 0, to: count, by: every).map { itemID(large, $0, ns: ns) }
    }

    // MARK: Running

    /// Applies commit step `i` in `tx` (the same effects `model` computes).
    static func apply(_ i: Int, ns: Int, _ tx: WriteTransaction) throws {
        if tx.classSchema("Marker") == nil { try tx.createClasses(schemas) }
        let schemaChanged = tx.classSchema("Extra") != nil
        // The marker first: the step's items link to it.
        let marker = try tx.createObject("Marker", ["step": .int(markerNumber(i, ns: ns))])
        guard let markerClass = tx.classID(named: "Marker") else { throw WorkerError("no class Marker") }
        // The contents' stand-in for a typed link to the marker, made real.
        func real(_ v: Value) -> Value {
            switch v {
            case .string(let s) where s.hasPrefix("link:Marker:"): .typedLink(classID: markerClass, key: marker)
            case .list(let l): .list(l.map(real))
            case .dictionary(let d): .dictionary(ValueDictionary(d.map { ($0.key, real($0.value)) }))
            default: v
            }
        }
        switch steps[i] {
        case .schema:
            break
        case .small:
            let id = itemID(i, 0, ns: ns)
            var values: [String: Value] = ["id": .int(id), "name": .string(name(i, 0)), "data": .data(data(id, count: smallDataBytes))]
            if schemaChanged {
                values["tag"] = .string("t\(i)")
                try tx.createObject("Extra", ["id": .int(Int64(ns * 1_000 + i)), "note": .string("extra \(i)")])
            }
            let items = try tx.table("Item")
            if let j = previousSmall(i), let old = try tx.object(items, primaryKey: .int(itemID(j, 0, ns: ns))) {
                try change(old, id: itemID(j, 0, ns: ns), by: i, tx, real)
            }
            try createItem(values, created(id, step: i, ns: ns), marker: marker, tx, real)
        case .large(let count, let bytes):
            for j in 0..<count {
                let id = itemID(i, j, ns: ns)
                try createItem(["id": .int(id), "name": .string(name(i, j)), "data": .data(data(id, count: bytes))],
                               created(id, step: i, ns: ns), marker: marker, tx, real)
            }
        case .delete:
            let items = try tx.table("Item")
            for id in deletions(i, ns: ns) {
                if let key = try tx.object(items, primaryKey: .int(id)) { try tx.delete(items, key) }
            }
        case .changeSchema:
            try tx.addProperty("Item", tagProperty)
            try tx.createClass(extraSchema)
        case .checkpoint, .compact, .writeCopy:
            preconditionFailure("step \(i) does not commit")
        }
    }

    /// Creates an item with `values` and `c`'s collections, embedded address and mixed values.
    static func createItem(_ values: [String: Value], _ c: Contents, marker: ObjectKey, _ tx: WriteTransaction,
                           _ real: (Value) -> Value) throws {
        let items = try tx.table("Item")
        var values = values
        values["anyValue"] = real(c.mixed)
        let key = try tx.createObject(items, values, lists: ["tags": c.tags.sorted().map { .string($0) }, "marks": [.link(marker)]],
                                      dictionaries: ["scores": ValueDictionary(c.scores.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) }),
                                                     "attrs": ValueDictionary(c.attrs.sorted { $0.key < $1.key }.map { ($0.key, real($0.value)) })])
        if let a = c.address { try createAddress(a, in: key, tx) }
    }

    /// A new embedded address (and its geo) for item `key`, in place of the one it had.
    static func createAddress(_ a: Contents.Address, in key: ObjectKey, _ tx: WriteTransaction) throws {
        let items = try tx.table("Item")
        let address = try tx.createEmbeddedObject(in: key, tx.property(items, "address"),
                                                  ["street": .string(a.street), "number": .int(a.number)])
        if let lat = a.lat { try tx.createEmbeddedObject(in: address, tx.property(tx.table("Address"), "geo"), ["lat": .double(lat)]) }
    }

    /// Applies `changed(_:id:by:)` to item `key` in place, one call per change.
    static func change(_ key: ObjectKey, id: Int64, by i: Int, _ tx: WriteTransaction, _ real: (Value) -> Value) throws {
        let items = try tx.table("Item")
        let tags = try tx.property(items, "tags"), scores = try tx.property(items, "scores")
        let attrs = try tx.property(items, "attrs")
        try tx.setInsert(key, tags, .string("m\(i)"))
        try tx.setRemove(key, tags, .string("v\(id)"))
        try tx.dictionarySet(key, scores, key: "m", .int(Int64(i)))
        try tx.dictionaryRemove(key, scores, key: "a")
        try createAddress(movedAddress(i), in: key, tx)
        try tx.set(key, tx.property(items, "anyValue"), real(movedMixed(i)))
        try tx.dictionarySet(key, attrs, key: "ref", .null)
        try tx.dictionarySet(key, attrs, key: "moved", .int(Int64(i)))
    }

    /// `v` as `Contents` writes it: a typed link to a marker as `.string("link:Marker:N")` (any other typed link
    /// as `.string("link:CLASS:?")`), dictionaries in key order, through nested lists and dictionaries.
    static func canonical(_ v: Value, _ s: Snapshot) throws -> Value {
        switch v {
        case .typedLink(let c, let k):
            let name = s.className(classID: c) ?? "?"
            if name == "Marker", case .int(let n) = try s.value(k, s.property(s.table("Marker"), "step")) { return markerLink(n) }
            return .string("link:\(name):?")
        case .list(let l): return .list(try l.map { try canonical($0, s) })
        case .dictionary(let d): return dictionary(try d.map { ($0.key, try canonical($0.value, s)) })
        default: return v
        }
    }

    /// `mixed PATH [--limit N] [--namespace NS] [--exit-without-closing]`: runs steps 0..<N (every step by default);
    /// without closing, the process ends with the commit log as the last commit left it.
    static func run(path: String, limit: Int, ns: Int, closes: Bool) throws {
        // Implicitly unwrapped so that it can let go of its handle before opening the file again (opening a path
        // this process has open returns the open database).
        var db: Database! = try open(path)
        emit("start")
        var i = 0
        var reopened = false
        while i < min(limit, steps.count) {
            do {
                switch steps[i] {
                case .checkpoint:
                    try db.checkpoint()
                    emit("checkpointed \(i)")
                case .compact:
                    try db.compact()
                    emit("compacted \(i)")
                case .writeCopy:
                    let copy = path + ".copy"
                    unlink(copy)
                    unlink(copy + ".lock")
                    try db.writeCopy(to: copy)
                    emit("copied \(i)")
                default:
                    try db.write { tx in try apply(i, ns: ns, tx) }
                    emit("committed \(i)")
                }
            } catch where !reopened && stopsWrites(error) {
                // An earlier failure stopped writes through this handle: let go of it, open the file again (as the
                // error asks) and run the step again.
                emit("reopen \(i)")
                db = nil
                db = try open(path)
                reopened = true
                continue
            } catch {
                emit("failed \(i) \(oneLine(error))")
                if steps[i].commits {
                    // What the same handle now shows: a commit that threw must have left nothing visible.
                    do {
                        let visible = try db.read { s -> Bool in
                            guard s.classSchema("Marker") != nil else { return false }
                            return try s.object(s.table("Marker"), primaryKey: .int(markerNumber(i, ns: ns))) != nil
                        }
                        emit("after-failure \(i) \(visible ? "visible" : "absent")")
                    } catch {
                        emit("after-failure \(i) error \(oneLine(error))")
                    }
                }
            }
            i += 1
            reopened = false
        }
        emit("done")
        if !closes { exit(0) }
        withExtendedLifetime(db) {}
    }

    /// Whether `error` refuses a write because an earlier failure stopped writes through the handle (a failed
    /// sync leaves the page cache unreliable; the engine asks for the file to be opened again).
    static func stopsWrites(_ error: any Error) -> Bool {
        if case .writesStopped? = error as? StorageError { return true }
        return false
    }

    /// Opens the database; a failure is printed and tried once more, then ends the process (status 3).
    static func open(_ path: String) throws -> Database {
        for attempt in 0..<2 {
            do {
                return try Database.open(path: path, options: workerOptions)
            } catch {
                emit("open-failed \(oneLine(error))")
                if attempt == 1 { exit(3) }
            }
        }
        exit(3)
    }

    static func oneLine(_ error: any Error) -> String {
        String("\(error)".map { $0 == "\n" ? " " : $0 })
    }
}
