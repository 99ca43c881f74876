#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import RealmStorage

// Seeded random operation sequences checked against a plain in-memory model of the database.
//
// The model holds, per class, every object's property values and lists (sets as lists in set order;
// dictionaries as `.dictionary` values); backlinks are derived from the model's links. After every commit (and now and then inside a transaction) the whole database is compared
// with the model and `verify()` must find nothing. `REALM_SOAK=1` runs many more seeds and operations.

private let soak = ProcessInfo.processInfo.environment["REALM_SOAK"] == "1"
/// `REALM_SEEDS=N` / `REALM_OPS=N` override the number of seeds per test and operations per seed;
/// `REALM_SEED_BASE=N` moves every test's seeds by N (a soak with seeds no earlier run tried).
private let seedCount = ProcessInfo.processInfo.environment["REALM_SEEDS"].flatMap { UInt64($0) }
private let operationCount = ProcessInfo.processInfo.environment["REALM_OPS"].flatMap { Int($0) }
private let seedBase = ProcessInfo.processInfo.environment["REALM_SEED_BASE"].flatMap { UInt64($0) } ?? 0

private enum Settings {
    static func seeds(_ base: UInt64, _ normal: UInt64, _ soaking: UInt64) -> [UInt64] {
        let first = base + seedBase
        return Array(first..<first + (seedCount ?? (soak ? soaking : normal)))
    }
    static let fileSeeds = seeds(1, 4, 40)
    static let memorySeeds = seeds(1001, 1, 20)
    static let schemaSeeds = seeds(2001, 1, 20)
    static let operations = operationCount ?? (soak ? 12_000 : 1_500)
}

// MARK: - The model

private struct ModelObject {
    var values: [String: Value] = [:]
    var lists: [String: [Value]] = [:]
}

private struct Model {
    var classes: [ClassSchema] = []
    var objects: [String: [UInt64: ModelObject]] = [:]

    func schema(_ name: String) -> ClassSchema { classes.first { $0.name == name }! }
    func keys(_ c: String) -> [UInt64] { objects[c]!.keys.sorted() }

    static func defaultValue(_ p: PropertySchema) -> Value {
        if p.isDictionary { return .dictionary(ValueDictionary()) }
        if p.type == .link || p.type == .mixed || p.isOptional { return .null }
        return p.type.defaultValue
    }

    mutating func createClasses(_ schemas: [ClassSchema]) {
        for s in schemas {
            classes.append(s)
            objects[s.name] = [:]
        }
    }

    mutating func create(_ c: String, key: UInt64, values: [String: Value], lists: [String: [Value]]) {
        var o = ModelObject()
        for p in schema(c).properties where p.type != .linkingObjects {
            if p.isList || p.isSet {
                o.lists[p.name] = lists[p.name].map { p.isSet ? SetElements.normalized($0) : $0 } ?? []
            } else {
                o.values[p.name] = values[p.name] ?? Model.defaultValue(p)
            }
        }
        objects[c]![key] = o
    }

    /// Every link property (to-one or list) of any class that targets `c`.
    func incoming(to c: String) -> [(origin: String, property: PropertySchema)] {
        classes.flatMap { oc in
            oc.properties.filter { $0.type == .link && $0.objectClassName == c }.map { (oc.name, $0) }
        }
    }

    /// Deleting an object nulls every to-one link to it and every dictionary value linking to it, and removes
    /// it from every list and set.
    mutating func delete(_ c: String, _ key: UInt64) {
        let target = Value.link(ObjectKey(key))
        for (origin, p) in incoming(to: c) {
            for ok in Array(objects[origin]!.keys) {
                if p.isList || p.isSet {
                    objects[origin]![ok]!.lists[p.name]!.removeAll { $0 == target }
                } else if p.isDictionary {
                    guard case .dictionary(var d) = objects[origin]![ok]!.values[p.name]! else { continue }
                    for (k, v) in d where v == target { d[k] = .null }
                    objects[origin]![ok]!.values[p.name] = .dictionary(d)
                } else if objects[origin]![ok]!.values[p.name] == target {
                    objects[origin]![ok]!.values[p.name] = .null
                }
            }
        }
        objects[c]![key] = nil
    }

    /// target class → target key → "Origin.property" → origin keys (one per link, sorted).
    func backlinkMap() -> [String: [UInt64: [String: [UInt64]]]] {
        var map: [String: [UInt64: [String: [UInt64]]]] = [:]
        for oc in classes {
            for p in oc.properties where p.type == .link {
                let label = "\(oc.name).\(p.name)"
                for (ok, o) in objects[oc.name]! {
                    let targets: [Value]
                    if p.isList || p.isSet {
                        targets = o.lists[p.name]!
                    } else if case .dictionary(let d) = o.values[p.name]! {
                        targets = d.values
                    } else {
                        targets = [o.values[p.name]!]
                    }
                    for case .link(let t) in targets {
                        map[p.objectClassName!, default: [:]][t.rawValue, default: [:]][label, default: []].append(ok)
                    }
                }
            }
        }
        for (c, byKey) in map {
            for (k, byLabel) in byKey {
                for (l, keys) in byLabel { map[c]![k]![l] = keys.sorted() }
            }
        }
        return map
    }

    mutating func addProperty(_ c: String, _ p: PropertySchema) {
        let i = classes.firstIndex { $0.name == c }!
        classes[i].properties.append(p)
        guard p.type != .linkingObjects else { return }
        for k in Array(objects[c]!.keys) {
            if p.isList || p.isSet { objects[c]![k]!.lists[p.name] = [] } else { objects[c]![k]!.values[p.name] = Model.defaultValue(p) }
        }
    }

    mutating func setIndexed(_ c: String, _ name: String, _ indexed: Bool) {
        let i = classes.firstIndex { $0.name == c }!
        let j = classes[i].properties.firstIndex { $0.name == name }!
        classes[i].properties[j].isIndexed = indexed
    }

    mutating func removeProperty(_ c: String, _ name: String) {
        let i = classes.firstIndex { $0.name == c }!
        classes[i].properties.removeAll { $0.name == name }
        for k in Array(objects[c]!.keys) {
            objects[c]![k]!.values[name] = nil
            objects[c]![k]!.lists[name] = nil
        }
    }

    /// Why the engine must refuse to remove the property, if it must.
    func removePropertyRefused(_ c: String, _ name: String) -> Bool {
        classes.contains { oc in
            oc.properties.contains { $0.type == .linkingObjects && $0.objectClassName == c && $0.originProperty == name }
        }
    }

    func removeClassRefused(_ c: String) -> Bool {
        classes.contains { oc in
            oc.name != c && oc.properties.contains { ($0.type == .link || $0.type == .linkingObjects) && $0.objectClassName == c }
        }
    }

    mutating func removeClass(_ c: String) {
        classes.removeAll { $0.name == c }
        objects[c] = nil
    }
}

/// Equality that also holds for NaN and is exact about bits (floats, doubles, decimals) and UTF-8 bytes.
private func same(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.string(var x), .string(var y)):
        return x.withUTF8 { a in y.withUTF8 { b in a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) } }
    case (.decimal128(let x), .decimal128(let y)): return x.low == y.low && x.high == y.high
    case (.dictionary(let x), .dictionary(let y)): return same(x, y)
    default: return a == b
    }
}

private func same(_ a: ValueDictionary, _ b: ValueDictionary) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { same(.string($0.key), .string($1.key)) && same($0.value, $1.value) }
}

private func same(_ a: [Value], _ b: [Value]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
}

private func short(_ v: Value) -> String {
    switch v {
    case .string(let s) where s.utf8.count > 40: return "\"\(s.prefix(12))…\" (\(s.utf8.count) bytes)"
    case .data(let d): return "<\(d.count) bytes \(d.prefix(4).map(String.init).joined(separator: ","))…>"
    case .float(let f): return "float(\(f), bits \(f.bitPattern))"
    case .double(let d): return "double(\(d), bits \(d.bitPattern))"
    default: return v.description
    }
}

private func short(_ vs: [Value]) -> String { "[" + vs.map(short).joined(separator: ", ") + "]" }

// MARK: - The starting schema

private let baseSchema: [ClassSchema] = [
    ClassSchema(name: "Owner", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "name", type: .string, isIndexed: true),
        PropertySchema(name: "nick", type: .string, isOptional: true, isIndexed: true),
        PropertySchema(name: "flag", type: .bool),
        PropertySchema(name: "flagO", type: .bool, isOptional: true, isIndexed: true),
        PropertySchema(name: "n", type: .int),
        PropertySchema(name: "nO", type: .int, isOptional: true, isIndexed: true),
        PropertySchema(name: "f", type: .float),
        PropertySchema(name: "fO", type: .float, isOptional: true),
        PropertySchema(name: "d", type: .double),
        PropertySchema(name: "dO", type: .double, isOptional: true),
        PropertySchema(name: "s", type: .string),
        PropertySchema(name: "sO", type: .string, isOptional: true),
        PropertySchema(name: "blob", type: .data),
        PropertySchema(name: "blobO", type: .data, isOptional: true),
        PropertySchema(name: "when", type: .date, isIndexed: true),
        PropertySchema(name: "whenO", type: .date, isOptional: true),
        PropertySchema(name: "oid", type: .objectId, isIndexed: true),
        PropertySchema(name: "oidO", type: .objectId, isOptional: true),
        PropertySchema(name: "uid", type: .uuid),
        PropertySchema(name: "uidO", type: .uuid, isOptional: true, isIndexed: true),
        PropertySchema(name: "dec", type: .decimal128),
        PropertySchema(name: "decO", type: .decimal128, isOptional: true),
        PropertySchema(name: "any", type: .mixed),
        PropertySchema(name: "anyIx", type: .mixed, isIndexed: true),
        .link("best", to: "Pet"),
        .list("pets", of: "Pet"),
        .link("partner", to: "Owner"),
        .list("friends", of: "Owner"),
        PropertySchema(name: "ints", type: .int, isList: true),
        PropertySchema(name: "strs", type: .string, isOptional: true, isList: true),
        PropertySchema(name: "dbls", type: .double, isList: true),
        PropertySchema(name: "blobs", type: .data, isList: true),
        PropertySchema(name: "dates", type: .date, isList: true),
        PropertySchema(name: "anys", type: .mixed, isOptional: true, isList: true),
        PropertySchema(name: "bools", type: .bool, isOptional: true, isList: true),
        PropertySchema(name: "oids", type: .objectId, isList: true),
        PropertySchema(name: "intSet", type: .int, isSet: true),
        PropertySchema(name: "strSet", type: .string, isOptional: true, isIndexed: true, isSet: true),
        PropertySchema(name: "anySet", type: .mixed, isOptional: true, isSet: true),
        .set("petSet", of: "Pet"),
        .set("friendSet", of: "Owner"),
        PropertySchema(name: "strMap", type: .string, isOptional: true, isDictionary: true),
        PropertySchema(name: "anyMap", type: .mixed, isOptional: true, isDictionary: true),
        .dictionary("petMap", of: "Pet"),
        .linkingObjects("fans", from: "Owner", property: "friends"),
    ]),
    ClassSchema(name: "Pet", properties: [
        PropertySchema(name: "name", type: .string),
        PropertySchema(name: "age", type: .int, isIndexed: true),
        PropertySchema(name: "weight", type: .double),
        .link("owner", to: "Owner"),
        .list("toys", of: "Toy"),
        PropertySchema(name: "tags", type: .string, isList: true),
        .dictionary("toyMap", of: "Toy"),
        .linkingObjects("owners", from: "Owner", property: "pets"),
        .linkingObjects("bestOf", from: "Owner", property: "best"),
    ]),
    ClassSchema(name: "Toy", properties: [
        PropertySchema(name: "code", type: .string, isPrimaryKey: true),
        PropertySchema(name: "price", type: .double),
        PropertySchema(name: "maker", type: .uuid, isOptional: true),
        .link("holder", to: "Pet"),
    ]),
    // No links, lists or backlinks: `deleteAll` drops its tree and indexes at once.
    ClassSchema(name: "Plain", properties: [
        PropertySchema(name: "uid", type: .uuid, isPrimaryKey: true),
        PropertySchema(name: "code", type: .int, isIndexed: true),
        PropertySchema(name: "text", type: .string, isOptional: true),
        PropertySchema(name: "bytes", type: .data),
        PropertySchema(name: "at", type: .date, isOptional: true, isIndexed: true),
    ]),
]

// MARK: - Random values

private struct Gen {
    var rng: SplitMix64

    mutating func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func chance(_ p: Double) -> Bool { Double(rng.next() >> 11) / Double(1 << 53) < p }
    mutating func pick<T>(_ a: [T]) -> T { a[below(a.count)] }
    mutating func int64() -> Int64 { Int64(bitPattern: rng.next()) }

    static let pieces = ["a", "b", "Z", "q", "東", "京", "日本", "語", "🐶", "🐱", "😀", "é", "ß", "\u{0}", "ан", "Ω", " ", "-"]
    static let longPrefixes = ["", String(repeating: "長い", count: 130), String(repeating: "x", count: 300)]

    mutating func string() -> String {
        switch below(40) {
        case 0:
            // Out of line (more than 1,024 bytes): 2,000 to 20,000 characters, often sharing a long prefix
            // with other such strings so index entries (cut at 240 bytes) collide.
            let length = 2_000 + below(18_001)
            let unit = pick(["ab", "日本", "🐶", "x"])
            let body = String(repeating: unit, count: length / unit.count)
            return pick(Gen.longPrefixes) + body + "#\(below(1000))"
        case 1, 2:
            // Inline but longer than the index keeps.
            return pick(Gen.longPrefixes.dropFirst().map { $0 }) + "#\(below(50))"
        case 3...14:
            return pick(["", "a", "b", "Ann", "東京", "🐶", "a\u{0}b", "Ωμέγα", "مرحبا"])
        default:
            var s = ""
            for _ in 0..<below(9) { s += pick(Gen.pieces) }
            return s
        }
    }

    mutating func bytes() -> [UInt8] {
        let n = below(30) == 0 ? 1_500 + below(18_500) : below(40)
        var out = [UInt8](repeating: 0, count: n)
        var i = 0
        while i < n {
            var w = rng.next()
            for _ in 0..<8 where i < n {
                out[i] = UInt8(truncatingIfNeeded: w)
                w >>= 8
                i += 1
            }
        }
        return out
    }

    mutating func int() -> Int64 {
        switch below(12) {
        case 0: return .min
        case 1: return .max
        case 2: return int64()
        case 3: return Int64(below(1_000_000)) - 500_000
        default: return Int64(below(9)) - 4
        }
    }

    mutating func float() -> Float {
        pick([0, -0.0, 1.5, -2.25, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
              Float(below(100)), Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))])
    }

    mutating func double() -> Double {
        pick([0, -0.0, 0.1, -7.5, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
              Double(below(1000)) / 8, Double(bitPattern: rng.next())])
    }

    mutating func date() -> Timestamp {
        switch below(7) {
        case 0: return Timestamp(seconds: 0)
        case 1: return Timestamp(seconds: -Int64(below(4_000_000_000)) - 1, nanoseconds: -Int32(below(1_000_000_000)))
        case 2: return Timestamp(seconds: 2_147_483_648 + Int64(below(100_000_000_000)), nanoseconds: Int32(below(1_000_000_000)))
        case 3: return Timestamp(seconds: Int64(below(3)), nanoseconds: Int32(below(1_000_000_000)))
        case 4: return pick([Timestamp(seconds: .max, nanoseconds: 999_999_999), Timestamp(seconds: .min, nanoseconds: -999_999_999)])
        case 5: return Timestamp(seconds: 0, nanoseconds: -Int32(below(1000)))
        default: return Timestamp(seconds: 1_700_000_000 + Int64(below(10)), nanoseconds: Int32(below(3)) * 1000)
        }
    }

    mutating func objectId() -> ObjectId {
        if chance(0.5) { return ObjectId(byteArray: [UInt8](repeating: UInt8(below(4)), count: 12)) }
        return ObjectId(byteArray: (0..<12).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
    }

    mutating func uuid() -> UUID {
        if chance(0.5) {
            let b = UInt8(below(4))
            return UUID(uuid: (b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b))
        }
        var u = UUID().uuid
        withUnsafeMutableBytes(of: &u) { buf in for i in 0..<16 { buf[i] = UInt8(truncatingIfNeeded: rng.next()) } }
        return UUID(uuid: u)
    }

    mutating func decimal() -> Decimal128 {
        switch below(6) {
        case 0: return pick([Decimal128.nan, .infinity, .negativeInfinity, .zero])
        case 1: return Decimal128(double())
        case 2: return Decimal128(low: rng.next(), high: 0x3040_0000_0000_0000 | (rng.next() & 0xFFFF))
        default: return Decimal128(int())
        }
    }

    /// A non-null value of a non-link type.
    mutating func value(_ t: PropertyType) -> Value {
        switch t {
        case .bool: return .bool(chance(0.5))
        case .int: return .int(int())
        case .float: return .float(float())
        case .double: return .double(double())
        case .string: return .string(string())
        case .data: return .data(bytes())
        case .date: return .date(date())
        case .objectId: return .objectId(objectId())
        case .uuid: return .uuid(uuid())
        case .decimal128: return .decimal128(decimal())
        case .mixed:
            return value(pick([.bool, .int, .float, .double, .string, .data, .date, .objectId, .uuid, .decimal128]))
        case .link, .linkingObjects, .backlink: preconditionFailure("no plain value of type \(t)")
        }
    }
}

// MARK: - One run

private struct RunFailure: Error, CustomStringConvertible {
    var description: String
}

private enum Kind: String, CaseIterable {
    case create, bulkCreate, set, link, delete, bulkDelete, deleteAll, list, collection, duplicateKey, invalid, updateAll
    case schema, commit, rollback, reopen, checkInTransaction
}

private final class RandomRun {
    var gen: Gen
    let seed: UInt64
    let path: String?
    let memoryID: String?
    let schemaChanges: Bool
    var db: Database!
    var tx: WriteTransaction?
    var model = Model()
    var committed = Model()
    /// Snapshots taken before a commit: each must keep seeing its model until it is closed.
    var held: [(snapshot: Snapshot, model: Model, commitsLeft: Int)] = []
    var log: [String] = []
    var op = 0
    var counter = 0
    var counts: [Kind: Int] = [:]
    var commits = 0
    var verifies = 0
    var maxObjects = 0
    var deepestTree = 0
    var compareTime = Duration.zero
    var verifyTime = Duration.zero

    /// Odd seeds send every index entry through a transaction's pending buffer (DECISIONS 52), even seeds
    /// put the first 64 of each transaction into the tree at once, as normal, and checkpoint the commit log
    /// every 32 KiB of records instead of 4 MiB (DECISIONS 53).
    var options: DatabaseOptions {
        var o = DatabaseOptions()
        if seed % 2 == 1 { o.directIndexEntries = 0 } else { o.checkpointBytes = 32 << 10 }
        return o
    }

    init(seed: UInt64, path: String?, memoryID: String?, schemaChanges: Bool) throws {
        self.seed = seed
        self.path = path
        self.memoryID = memoryID
        self.schemaChanges = schemaChanges
        gen = Gen(rng: SplitMix64(seed: seed))
        db = try path.map { try Database.open(path: $0, options: options) } ?? Database.inMemory(identifier: memoryID!)
        let t = try db.beginWrite()
        try t.createClasses(baseSchema)
        try t.commit()
        model.createClasses(baseSchema)
        committed = model
    }

    // MARK: Reporting

    func note(_ s: String) {
        log.append("#\(op) \(s)")
        if log.count > 40 { log.removeFirst(log.count - 40) }
    }

    func fail(_ message: String) -> RunFailure {
        let text = "seed \(seed), op \(op): \(message)\nlast operations:\n" + log.joined(separator: "\n")
        Issue.record(Comment(rawValue: text))
        return RunFailure(description: text)
    }

    func expectThrow(_ what: String, _ matches: (StorageError) -> Bool, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let e as StorageError {
            if matches(e) { return }
            throw fail("\(what): unexpected error \(e)")
        }
        throw fail("\(what): expected an error, nothing was thrown")
    }

    // MARK: Driving

    func run(operations: Int) throws {
        while op < operations {
            op += 1
            if tx == nil { try begin() }
            try step()
        }
        if tx != nil { try commit() }
        for h in held { try compare(h.snapshot, h.model, "snapshot held to the end"); h.snapshot.close() }
        held = []
        try checkDatabase("at the end", full: true)
        let total = model.objects.values.reduce(0) { $0 + $1.count }
        print("random model seed \(seed)\(path == nil ? " (in memory)" : "")\(schemaChanges ? " (schema changes)" : ""): "
              + "\(operations) ops, \(commits) commits, \(verifies) verifies (\(verifyTime)), compare \(compareTime), \(total) objects at the end, at most \(maxObjects) in one class, \(deepestTree) inner levels; "
              + Kind.allCases.compactMap { k in counts[k].map { "\(k.rawValue) \($0)" } }.joined(separator: ", "))
    }

    func begin() throws {
        tx = try db.beginWrite()
        if held.count < 2 && gen.chance(0.15) {
            held.append((try db.snapshot(), committed, 1 + gen.below(4)))
            note("snapshot held at version \(held.last!.snapshot.version)")
        }
    }

    func step() throws {
        var weights: [(Kind, Int)] = [
            (.create, 180), (.bulkCreate, 2), (.set, 200), (.link, 60), (.delete, 60), (.bulkDelete, 3), (.deleteAll, 1),
            (.list, 230), (.collection, 120), (.duplicateKey, 12), (.invalid, 12), (.updateAll, 5), (.commit, 40), (.rollback, 8),
            (.checkInTransaction, 6),
        ]
        if path != nil { weights.append((.reopen, 4)) }
        if schemaChanges { weights.append((.schema, 25)) }
        var r = gen.below(weights.reduce(0) { $0 + $1.1 })
        var kind = Kind.commit
        for (k, w) in weights {
            if r < w { kind = k; break }
            r -= w
        }
        counts[kind, default: 0] += 1
        switch kind {
        case .create: try create()
        case .bulkCreate: try bulkCreate()
        case .set: try set(linksOnly: false)
        case .link: try set(linksOnly: true)
        case .delete: try delete()
        case .bulkDelete: try bulkDelete()
        case .deleteAll: try deleteAll()
        case .list: try listOperation()
        case .collection: try collectionOperation()
        case .duplicateKey: try duplicateKey()
        case .invalid: try invalid()
        case .updateAll: try updateAll()
        case .schema: try schemaChange()
        case .commit: try commit()
        case .rollback: try rollback()
        case .reopen: try reopen()
        case .checkInTransaction:
            note("check inside the transaction")
            try compare(tx!, model, "inside the write transaction")
        }
        maxObjects = max(maxObjects, model.objects.values.map(\.count).max() ?? 0)
    }

    // MARK: Picking

    func pickObject(_ c: String) -> UInt64? {
        let keys = model.keys(c)
        return keys.isEmpty ? nil : keys[gen.below(keys.count)]
    }

    func classesWithObjects() -> [ClassSchema] { model.classes.filter { !model.objects[$0.name]!.isEmpty } }

    /// A link to a live object of the target class, or null.
    func randomLink(_ target: String) -> Value {
        if gen.chance(0.15) { return .null }
        return pickObject(target).map { .link(ObjectKey($0)) } ?? .null
    }

    func randomValue(_ p: PropertySchema) -> Value {
        if p.type == .link { return randomLink(p.objectClassName!) }
        if p.type == .mixed && p.isIndexed { return randomIndexedMixed() }
        if (p.isOptional || p.type == .mixed) && gen.chance(0.2) { return .null }
        return gen.value(p.type)
    }

    /// A value for an indexed mixed property: small numbers of every numeric type (so that equal numbers of
    /// different types meet), NaNs and zeros of both signs, strings and data of the same bytes, long strings
    /// that share their first 240 bytes, nested collections, any plain value.
    func randomIndexedMixed() -> Value {
        switch gen.below(10) {
        case 0: return .null
        case 1, 2, 3:
            let n = Int64(gen.below(7)) - 3
            let half = Double(n) / 2
            return gen.pick([.int(n), .double(Double(n)), .float(Float(n)), .decimal128(Decimal128(n)),
                             .double(half), .float(Float(half)), .decimal128(Decimal128(half, significantDigits: 15))])
        case 4:
            return gen.pick([.double(.nan), .float(.nan), .double(-0.0), .float(-0.0), .decimal128(Decimal128(Int64(0))),
                             .double(0.1), .float(0.1), .double(Double(Float(0.1))), .double(.infinity), .float(-.infinity),
                             .int(.max), .double(9_223_372_036_854_775_807.0), .int(1 << 53 + 1), .double(Double(1 << 53))])
        case 5:
            let w = gen.pick(["a", "b", "東京", ""])
            let long = String(repeating: "x", count: 240)
            return gen.pick([.string(w), .data(Array(w.utf8)), .string(long + w), .data(Array((long + w).utf8)), .string("a\0b")])
        case 6:
            return gen.chance(0.5) ? .list([.int(1), .string("a")]) : .dictionary(ValueDictionary([("k", .int(Int64(gen.below(3))))]))
        default:
            return gen.value(.mixed)
        }
    }

    func randomElement(_ p: PropertySchema) -> Value? {
        if p.type == .link { return pickObject(p.objectClassName!).map { .link(ObjectKey($0)) } }
        if p.isOptional && gen.chance(0.2) { return .null }
        return gen.value(p.type)
    }

    func randomList(_ p: PropertySchema) -> [Value] {
        (0..<gen.below(6)).compactMap { _ in randomElement(p) }
    }

    /// A primary key value no live object has.
    func freshPrimaryKey(_ c: String, _ p: PropertySchema) -> Value {
        let used = Set(model.objects[c]!.values.map { $0.values[p.name]! })
        while true {
            let v: Value
            switch p.type {
            case .int: v = .int(gen.chance(0.5) ? Int64(gen.below(100_000)) : gen.int())
            case .string: v = .string(gen.chance(0.7) ? "toy-\(gen.below(1_000_000))" : gen.string())
            case .uuid: v = .uuid(gen.uuid())
            default: preconditionFailure("primary key of type \(p.type)")
            }
            if !used.contains(v) { return v }
        }
    }

    func scalarProperties(_ c: ClassSchema) -> [PropertySchema] {
        c.properties.filter { !$0.isCollection && $0.type != .linkingObjects }
    }

    func setOrDictionaryProperties(_ c: ClassSchema) -> [PropertySchema] {
        c.properties.filter { $0.isSet || $0.isDictionary }
    }

    static let dictionaryKeys = ["a", "b", "Z", "é", "🐶", "k1", "k2", "東京", "a$"]

    func randomDictionary(_ p: PropertySchema) -> ValueDictionary {
        var d = ValueDictionary()
        for _ in 0..<gen.below(5) {
            let k = gen.pick(Self.dictionaryKeys)
            if let v = randomDictionaryValue(p) { d[k] = v }
        }
        return d
    }

    func randomDictionaryValue(_ p: PropertySchema) -> Value? {
        if p.type == .link { return gen.chance(0.2) ? .null : pickObject(p.objectClassName!).map { .link(ObjectKey($0)) } }
        if (p.isOptional || p.type == .mixed) && gen.chance(0.2) { return .null }
        return gen.value(p.type)
    }

    func randomSetElement(_ p: PropertySchema) -> Value? {
        if p.type == .mixed && gen.chance(0.2) { return .null }
        if p.type == .int || (p.type == .mixed && gen.chance(0.5)) {
            // Small numbers of every numeric type, so equal elements of different types meet.
            let n = Int64(gen.below(7)) - 3
            return gen.pick(p.type == .int ? [.int(n)] : [.int(n), .double(Double(n)), .float(Float(n)), .decimal128(Decimal128(n))])
        }
        return randomElement(p)
    }

    func listProperties(_ c: ClassSchema) -> [PropertySchema] {
        c.properties.filter { $0.isList && $0.type != .linkingObjects }
    }

    // MARK: Operations

    func randomObjectValues(_ c: ClassSchema, fill: Double) -> ([String: Value], [String: [Value]]) {
        var values: [String: Value] = [:]
        var lists: [String: [Value]] = [:]
        for p in c.properties where p.type != .linkingObjects {
            if p.isPrimaryKey {
                values[p.name] = freshPrimaryKey(c.name, p)
            } else if p.isList {
                if gen.chance(fill / 2) { lists[p.name] = randomList(p) }
            } else if p.isSet {
                if gen.chance(fill / 2) { lists[p.name] = (0..<gen.below(6)).compactMap { _ in randomSetElement(p) } }
            } else if p.isDictionary {
                if gen.chance(fill / 2) { values[p.name] = .dictionary(randomDictionary(p)) }
            } else if gen.chance(fill) {
                values[p.name] = randomValue(p)
            }
        }
        return (values, lists)
    }

    /// The dictionary properties' values (for `createObject(dictionaries:)`) apart from the others.
    func splitDictionaries(_ values: [String: Value], of c: ClassSchema) -> ([String: Value], [String: ValueDictionary]) {
        var plain: [String: Value] = [:], dictionaries: [String: ValueDictionary] = [:]
        for (name, v) in values {
            // A mixed value may be a nested dictionary: it goes with the plain values.
            if case .dictionary(let d) = v, c.properties.first(where: { $0.name == name })?.isDictionary == true {
                dictionaries[name] = d
            } else {
                plain[name] = v
            }
        }
        return (plain, dictionaries)
    }

    func create() throws {
        let tx = self.tx!
        let c = gen.pick(model.classes)
        let t = try tx.table(c.name)
        let (values, lists) = randomObjectValues(c, fill: 0.7)
        let (plain, dictionaries) = splitDictionaries(values, of: c)
        let key: ObjectKey
        if lists.isEmpty && dictionaries.isEmpty && gen.chance(0.3) {
            note("create \(c.name) by columns \(values.keys.sorted())")
            let names = values.keys.sorted()
            key = try tx.createObject(t, columns: names.map { try tx.property(t, $0) }, values: names.map { values[$0]! })
        } else {
            note("create \(c.name) \(values.keys.sorted()) lists \(lists.keys.sorted())")
            key = try tx.createObject(t, plain, lists: lists, dictionaries: dictionaries)
        }
        if model.objects[c.name]![key.rawValue] != nil { throw fail("create returned the key \(key) of a live object") }
        model.create(c.name, key: key.rawValue, values: values, lists: lists)
        note("  -> \(c.name) \(key)")
    }

    func bulkCreate() throws {
        let c = gen.pick(model.classes)
        let t = try tx!.table(c.name)
        // Now and then enough objects for several clusters and an inner node, or objects whose strings are
        // just short enough to stay inline, so clusters pass 64 KiB and split by size.
        let big = gen.chance(0.3)
        let fat = !big && gen.chance(0.3)
        let n = big ? 300 + gen.below(300) : 30 + gen.below(200)
        note("bulk create \(n) \(c.name)\(fat ? " with long inline strings" : "")")
        for _ in 0..<n {
            var (values, lists) = randomObjectValues(c, fill: big ? 0.05 : 0.25)
            for p in c.properties where fat && p.type == .string && !p.isCollection && !p.isPrimaryKey {
                values[p.name] = .string(String(repeating: gen.pick(["s", "日", "🐶"]), count: 250) + "\(gen.below(100))")
            }
            let (plain, dictionaries) = splitDictionaries(values, of: c)
            let key = try tx!.createObject(t, plain, lists: lists, dictionaries: dictionaries)
            model.create(c.name, key: key.rawValue, values: values, lists: lists)
        }
    }

    func set(linksOnly: Bool) throws {
        let candidates = classesWithObjects().filter { c in scalarProperties(c).contains { !linksOnly || $0.type == .link } }
        guard !candidates.isEmpty else { return }
        let c = gen.pick(candidates)
        let k = pickObject(c.name)!
        let p = gen.pick(scalarProperties(c).filter { !linksOnly || $0.type == .link })
        let v = p.isPrimaryKey ? freshPrimaryKey(c.name, p) : randomValue(p)
        note("set \(c.name) #\(k).\(p.name) = \(short(v))")
        let t = try tx!.table(c.name)
        if keyIsValue(c.name, p.name) {
            // A required int primary key is the object key: it cannot change (DECISIONS 13).
            try expectThrow("changing a key-valued primary key", { $0 == .primaryKeyChange(className: c.name, property: p.name) }) {
                try tx!.set(ObjectKey(k), tx!.property(t, p.name), v)
            }
            return
        }
        try tx!.set(ObjectKey(k), tx!.property(t, p.name), v)
        model.objects[c.name]![k]!.values[p.name] = v
    }

    func delete() throws {
        let c = gen.pick(model.classes)
        guard let k = pickObject(c.name) else { return }
        let t = try tx!.table(c.name)
        note("delete \(c.name) #\(k)")
        try tx!.delete(t, ObjectKey(k))
        model.delete(c.name, k)
    }

    func bulkDelete() throws {
        let candidates = classesWithObjects()
        guard !candidates.isEmpty else { return }
        let c = gen.pick(candidates)
        let keys = model.keys(c.name)
        let start = gen.below(keys.count)
        let end = min(keys.count, start + 1 + gen.below(keys.count))
        let keep = gen.chance(0.5) ? 1 : 5  // delete all of the range, or four in five
        note("bulk delete \(c.name) keys \(keys[start])...\(keys[end - 1])")
        let t = try tx!.table(c.name)
        for (i, k) in keys[start..<end].enumerated() where keep == 1 || i % keep != 0 {
            try tx!.delete(t, ObjectKey(k))
            model.delete(c.name, k)
        }
    }

    func deleteAll() throws {
        let c = gen.pick(model.classes)
        note("delete all \(c.name)")
        try tx!.deleteAll(tx!.table(c.name))
        for k in model.keys(c.name) { model.delete(c.name, k) }
    }

    func listOperation() throws {
        let candidates = classesWithObjects().filter { !listProperties($0).isEmpty }
        guard !candidates.isEmpty else { return }
        let c = gen.pick(candidates)
        let k = pickObject(c.name)!
        let p = gen.pick(listProperties(c))
        let tx = self.tx!
        let h = try tx.property(tx.table(c.name), p.name)
        let key = ObjectKey(k)
        var list = model.objects[c.name]![k]!.lists[p.name]!
        let what = "\(c.name) #\(k).\(p.name) (\(list.count))"
        switch gen.below(12) {
        case 0, 1, 2:
            guard let v = randomElement(p) else { return }
            note("list append \(what) \(short(v))")
            try tx.listAppend(key, h, v)
            list.append(v)
        case 3, 4:
            guard let v = randomElement(p) else { return }
            let i = gen.below(list.count + 1)
            note("list insert \(what) at \(i) \(short(v))")
            try tx.listInsert(key, h, v, at: i)
            list.insert(v, at: i)
        case 5, 6:
            guard !list.isEmpty else { return }
            let i = gen.below(list.count)
            note("list remove \(what) at \(i)")
            try tx.listRemove(key, h, at: i)
            list.remove(at: i)
        case 7:
            guard !list.isEmpty else { return }
            let from = gen.below(list.count), to = gen.below(list.count)
            note("list move \(what) \(from) -> \(to)")
            try tx.listMove(key, h, from: from, to: to)
            list.insert(list.remove(at: from), at: to)
        case 8:
            guard !list.isEmpty, let v = randomElement(p) else { return }
            let i = gen.below(list.count)
            note("list set \(what) at \(i) \(short(v))")
            try tx.listSet(key, h, v, at: i)
            list[i] = v
        case 9:
            note("list remove all \(what)")
            try tx.listRemoveAll(key, h)
            list = []
        case 10:
            let new = randomList(p)
            note("list replace \(what) with \(new.count)")
            try tx.setList(key, h, new)
            list = new
        default:
            let i = list.count + 1 + gen.below(3)
            guard let v = randomElement(p) else { return }
            note("list out of range \(what) at \(i)")
            try expectThrow("listInsert past the end", { if case .indexOutOfRange = $0 { true } else { false } }) {
                try tx.listInsert(key, h, v, at: i)
            }
            try expectThrow("listRemove past the end", { if case .indexOutOfRange = $0 { true } else { false } }) {
                try tx.listRemove(key, h, at: list.count)
            }
        }
        model.objects[c.name]![k]!.lists[p.name] = list
    }

    func collectionOperation() throws {
        let candidates = classesWithObjects().filter { !setOrDictionaryProperties($0).isEmpty }
        guard !candidates.isEmpty else { return }
        let c = gen.pick(candidates)
        let k = pickObject(c.name)!
        let p = gen.pick(setOrDictionaryProperties(c))
        let tx = self.tx!
        let h = try tx.property(tx.table(c.name), p.name)
        let key = ObjectKey(k)
        let what = "\(c.name) #\(k).\(p.name)"
        if p.isSet {
            var set = model.objects[c.name]![k]!.lists[p.name]!
            switch gen.below(8) {
            case 0, 1, 2:
                guard let v = randomSetElement(p) else { return }
                note("set insert \(what) \(short(v))")
                let at = SetElements.search(set, v)
                let inserted = try tx.setInsert(key, h, v)
                if inserted == at.found { throw fail("setInsert \(what) \(short(v)) returned \(inserted), model holds it: \(at.found)") }
                if !at.found { set.insert(v, at: at.index) }
            case 3, 4:
                let v = !set.isEmpty && gen.chance(0.7) ? gen.pick(set) : randomSetElement(p)
                guard let v else { return }
                note("set remove \(what) \(short(v))")
                let at = SetElements.search(set, v)
                let removed = try tx.setRemove(key, h, v)
                if removed != at.found { throw fail("setRemove \(what) \(short(v)) returned \(removed), model holds it: \(at.found)") }
                if at.found { set.remove(at: at.index) }
            case 5:
                let v = set.isEmpty ? randomSetElement(p) : gen.pick(set)
                guard let v else { return }
                if try tx.setContains(key, h, v) != SetElements.search(set, v).found { throw fail("setContains \(what) \(short(v))") }
            case 6:
                let new = (0..<gen.below(8)).compactMap { _ in randomSetElement(p) }
                note("set assign \(what) \(short(new))")
                try tx.setAssign(key, h, new)
                set = SetElements.normalized(new)
            default:
                note("set remove all \(what)")
                try tx.setRemoveAll(key, h)
                set = []
            }
            model.objects[c.name]![k]!.lists[p.name] = set
        } else {
            guard case .dictionary(var d) = model.objects[c.name]![k]!.values[p.name]! else { throw fail("\(what) is no dictionary in the model") }
            switch gen.below(8) {
            case 0, 1, 2:
                guard let v = randomDictionaryValue(p) else { return }
                let dk = gen.pick(Self.dictionaryKeys)
                note("dictionary set \(what)[\(dk)] = \(short(v))")
                try tx.dictionarySet(key, h, key: dk, v)
                d[dk] = v
            case 3, 4:
                let dk = !d.isEmpty && gen.chance(0.7) ? gen.pick(d.keys) : gen.pick(Self.dictionaryKeys)
                note("dictionary remove \(what)[\(dk)]")
                let removed = try tx.dictionaryRemove(key, h, key: dk)
                if removed != (d[dk] != nil) { throw fail("dictionaryRemove \(what)[\(dk)] returned \(removed)") }
                d[dk] = nil
            case 5:
                let dk = gen.pick(["", "$x", "a.b"])
                guard let v = randomDictionaryValue(p) else { return }
                try expectThrow("dictionary key \(dk.debugDescription)", { if case .invalidDictionaryKey = $0 { true } else { false } }) {
                    try tx.dictionarySet(key, h, key: dk, v)
                }
            case 6:
                let new = randomDictionary(p)
                note("dictionary replace \(what) with \(new.count)")
                try tx.setDictionary(key, h, new)
                d = new
            default:
                note("dictionary remove all \(what)")
                try tx.dictionaryRemoveAll(key, h)
                d = ValueDictionary()
            }
            model.objects[c.name]![k]!.values[p.name] = .dictionary(d)
        }
    }

    /// Whether the engine made this primary key the object key (a required int key of a class created with it).
    func keyIsValue(_ className: String, _ property: String) -> Bool {
        tx?.catalogue.classInfo(named: className)?.property(named: property)?.keyIsValue ?? false
    }

    func duplicateKey() throws {
        let candidates = classesWithObjects().filter { $0.primaryKey != nil }
        guard !candidates.isEmpty else { return }
        let c = gen.pick(candidates)
        let pk = c.primaryKey!
        let k = pickObject(c.name)!
        let existing = model.objects[c.name]![k]!.values[pk]!
        let t = try tx!.table(c.name)
        let isDuplicate: (StorageError) -> Bool = { $0 == .duplicatePrimaryKey(className: c.name, property: pk) }
        if gen.chance(0.5) || model.objects[c.name]!.count < 2 {
            var (values, lists) = randomObjectValues(c, fill: 0.7)
            values[pk] = existing
            note("create \(c.name) with the primary key of #\(k): \(short(existing))")
            try expectThrow("duplicate primary key on create", isDuplicate) {
                let (plain, dictionaries) = splitDictionaries(values, of: c)
                try tx!.createObject(t, plain, lists: lists, dictionaries: dictionaries)
            }
        } else {
            let other = model.keys(c.name).first { $0 != k }!
            note("set \(c.name) #\(other).\(pk) to the primary key of #\(k): \(short(existing))")
            let refused: (StorageError) -> Bool = keyIsValue(c.name, pk)
                ? { $0 == .primaryKeyChange(className: c.name, property: pk) } : isDuplicate
            try expectThrow("duplicate primary key on set", refused) {
                try tx!.set(ObjectKey(other), tx!.property(t, pk), existing)
            }
        }
    }

    /// Operations that must throw and change nothing.
    func invalid() throws {
        let tx = self.tx!
        let candidates = classesWithObjects()
        guard !candidates.isEmpty else { return }
        let c = gen.pick(candidates)
        let k = ObjectKey(pickObject(c.name)!)
        let t = try tx.table(c.name)
        let isMismatch: (StorageError) -> Bool = { if case .typeMismatch = $0 { true } else { false } }
        let isMissing: (StorageError) -> Bool = { if case .noSuchObject = $0 { true } else { false } }
        switch gen.below(5) {
        case 0:
            guard let p = scalarProperties(c).filter({ !$0.isOptional && $0.type != .link && $0.type != .mixed }).first else { return }
            note("set \(c.name) \(k).\(p.name) = null (not optional)")
            try expectThrow("null into a required property", isMismatch) { try tx.set(k, tx.property(t, p.name), .null) }
        case 1:
            guard let p = scalarProperties(c).filter({ $0.type != .string && $0.type != .mixed }).first else { return }
            note("set \(c.name) \(k).\(p.name) = a string")
            try expectThrow("a string into \(p.type)", isMismatch) { try tx.set(k, tx.property(t, p.name), .string("nope")) }
        case 2:
            guard let p = c.properties.first(where: { $0.type == .link && !$0.isCollection }) else { return }
            note("set \(c.name) \(k).\(p.name) = link to a missing object")
            try expectThrow("a link to a missing object", isMissing) {
                try tx.set(k, tx.property(t, p.name), .link(ObjectKey(1 << 40)))
            }
        case 3:
            note("delete missing \(c.name) #\(1 << 40)")
            try expectThrow("delete of a missing object", isMissing) { try tx.delete(t, ObjectKey(1 << 40)) }
        default:
            guard let p = listProperties(c).first(where: { !$0.isOptional }) else { return }
            note("append null to \(c.name) \(k).\(p.name)")
            try expectThrow("null into a list of required values", isMismatch) { try tx.listAppend(k, tx.property(t, p.name), .null) }
        }
    }

    func updateAll() throws {
        let candidates = classesWithObjects().filter { c in scalarProperties(c).contains { !$0.isPrimaryKey } }
        guard !candidates.isEmpty else { return }
        let c = gen.pick(candidates)
        let p = gen.pick(scalarProperties(c).filter { !$0.isPrimaryKey })
        let v = randomValue(p)
        note("update all \(c.name).\(p.name) = \(short(v))")
        let t = try tx!.table(c.name)
        let n = try tx!.updateAll(t, tx!.property(t, p.name)) { _ in v }
        if n != model.objects[c.name]!.count { throw fail("updateAll visited \(n) objects, model has \(model.objects[c.name]!.count)") }
        for k in model.keys(c.name) { model.objects[c.name]![k]!.values[p.name] = v }
    }

    // MARK: Schema changes

    func schemaChange() throws {
        let tx = self.tx!
        counter += 1
        switch gen.below(8) {
        case 0, 1, 2:
            let c = gen.pick(model.classes)
            let name = "x\(counter)"
            let plain: [PropertyType] = [.bool, .int, .float, .double, .string, .data, .date, .objectId, .uuid, .decimal128, .mixed]
            let p: PropertySchema
            switch gen.below(5) {
            case 0: p = PropertySchema(name: name, type: gen.pick(plain), isOptional: gen.chance(0.5))
            case 1: p = PropertySchema(name: name, type: gen.pick([.bool, .int, .string, .date, .objectId, .uuid, .mixed]),
                                       isOptional: gen.chance(0.5), isIndexed: true)
            case 2: p = .link(name, to: gen.pick(model.classes).name)
            case 3: p = .list(name, of: gen.pick(model.classes).name)
            default: p = PropertySchema(name: name, type: gen.pick(plain.filter { $0 != .mixed }), isOptional: gen.chance(0.3), isList: true)
            }
            note("add property \(c.name).\(name): \(p.type)\(p.isList ? " list" : "")\(p.isIndexed ? " indexed" : "")\(p.isOptional ? " optional" : "") \(p.objectClassName ?? "")")
            try tx.addProperty(c.name, p)
            model.addProperty(c.name, p)
        case 3:
            // linkingObjects over some link property.
            let links = model.classes.flatMap { oc in oc.properties.filter { $0.type == .link }.map { (oc.name, $0) } }
            guard let (origin, lp) = links.isEmpty ? nil : gen.pick(links) else { return }
            let target = lp.objectClassName!
            let p = PropertySchema.linkingObjects("x\(counter)", from: origin, property: lp.name)
            note("add linkingObjects \(target).\(p.name) from \(origin).\(lp.name)")
            try tx.addProperty(target, p)
            model.addProperty(target, p)
        case 4 where gen.chance(0.5):
            // An index added to or removed from a property that has values.
            let scalars = model.classes.flatMap { c in
                c.properties.filter {
                    $0.name.hasPrefix("x") && $0.type.isIndexable && !$0.isPrimaryKey
                        && (!$0.isCollection || ($0.isSet && $0.type != .mixed))
                }.map { (c.name, $0) }
            }
            guard let (c, p) = scalars.isEmpty ? nil : gen.pick(scalars) else { return }
            note("\(p.isIndexed ? "remove the index of" : "index") \(c).\(p.name) (\(p.type))")
            try tx.setIndexed(c, p.name, !p.isIndexed)
            model.setIndexed(c, p.name, !p.isIndexed)
        case 4, 5:
            let dynamic = model.classes.flatMap { c in c.properties.filter { $0.name.hasPrefix("x") }.map { (c.name, $0.name) } }
            guard let (c, name) = dynamic.isEmpty ? nil : gen.pick(dynamic) else { return }
            if model.removePropertyRefused(c, name) {
                note("remove property \(c).\(name) (refused: a linkingObjects lists it)")
                try expectThrow("removing a link that linkingObjects uses", { if case .invalidSchema = $0 { true } else { false } }) {
                    try tx.removeProperty(c, name)
                }
            } else {
                note("remove property \(c).\(name)")
                try tx.removeProperty(c, name)
                model.removeProperty(c, name)
            }
        default:
            let temporary = model.classes.filter { $0.name.hasPrefix("Tmp") }
            if let c = temporary.first, gen.chance(0.6) {
                if model.removeClassRefused(c.name) {
                    note("remove class \(c.name) (refused: linked)")
                    try expectThrow("removing a linked class", { if case .invalidSchema = $0 { true } else { false } }) {
                        try tx.removeClass(c.name)
                    }
                } else {
                    note("remove class \(c.name) with \(model.objects[c.name]!.count) objects")
                    try tx.removeClass(c.name)
                    model.removeClass(c.name)
                }
            } else {
                let name = "Tmp\(counter)"
                let s = ClassSchema(name: name, properties: [
                    PropertySchema(name: "num", type: .int, isIndexed: true),
                    PropertySchema(name: "label", type: .string, isOptional: true),
                    .link("owner", to: "Owner"),
                    .list("pets", of: "Pet"),
                    .link("me", to: name),
                    PropertySchema(name: "nums", type: .int, isList: true),
                    PropertySchema(name: "texts", type: .string, isList: true),
                ])
                note("create class \(name)")
                try tx.createClass(s)
                model.createClasses([s])
            }
        }
    }

    // MARK: Transactions

    func commit() throws {
        note("commit")
        try tx!.commit()
        tx = nil
        committed = model
        commits += 1
        try checkDatabase("after commit", full: commits % 6 == 0)
        for i in held.indices.reversed() {
            held[i].commitsLeft -= 1
            if held[i].commitsLeft <= 0 {
                let h = held.remove(at: i)
                try compare(h.snapshot, h.model, "snapshot of version \(h.snapshot.version) taken before later commits")
                h.snapshot.close()
            }
        }
    }

    func rollback() throws {
        note("rollback")
        tx!.rollback()
        tx = nil
        model = committed
        if gen.chance(0.3) { try checkDatabase("after rollback") }
    }

    func reopen() throws {
        if tx != nil {
            if gen.chance(0.5) { try commit() } else { try rollback() }
        }
        for h in held {
            try compare(h.snapshot, h.model, "snapshot held until reopen")
            h.snapshot.close()
        }
        held = []
        note("reopen")
        weak let old = db
        db = nil
        if old != nil { throw fail("the database is still alive after every reference was dropped") }
        db = try Database.open(path: path!, options: options)
        if gen.chance(0.25) {
            note("compact")
            try db.compact()
        }
        if gen.chance(0.2) {
            counter += 1
            let copyPath = path! + ".copy\(counter)"
            note("write a compacted copy")
            try db.writeCopy(to: copyPath)
            let copy = try Database.open(path: copyPath)
            let s = try copy.snapshot()
            try compare(s, model, "the compacted copy", full: true)
            s.close()
            let report = try copy.verify()
            if !report.isOK { throw fail("verify of the compacted copy:\n\(report)") }
            unlink(copyPath)
            unlink(copyPath + ".lock")
        }
        try checkDatabase("after reopen", full: true)
    }

    func checkDatabase(_ context: String, full: Bool = false) throws {
        let s = try db.snapshot()
        defer { s.close() }
        try compare(s, model, context, full: full)
        if soak || full || gen.chance(0.15) {
            verifies += 1
            let t0 = ContinuousClock.now
            let report = try db.verify()
            verifyTime += ContinuousClock.now - t0
            if !report.isOK { throw fail("verify \(context):\n\(report)") }
        }
    }

    // MARK: Comparing

    /// `v` as the other numeric types, where it converts exactly.
    static func sameNumber(_ v: Value) -> [Value] {
        switch v {
        case .int(let i): return [.double(Double(i)), .decimal128(Decimal128(i))]
        case .float(let f): return [.double(Double(f))]
        case .double(let d): return d == d.rounded() && abs(d) < 1e15 ? [.int(Int64(d)), .float(Float(d))] : [.float(Float(d))]
        case .decimal128(let d): return d.exactInt64.map { [.int($0)] } ?? [.double(d.doubleValue)]
        default: return []
        }
    }

    func compare(_ s: Snapshot, _ m: Model, _ context: String, full: Bool = false) throws {
        let t0 = ContinuousClock.now
        defer { compareTime += ContinuousClock.now - t0 }
        var problems: [String] = []
        func bad(_ p: String) { if problems.count < 25 { problems.append(p) } }

        let names = Set(s.schema.map(\.name))
        if names != Set(m.classes.map(\.name)) { bad("classes \(names.sorted()), model \(m.classes.map(\.name).sorted())") }
        let backlinks = m.backlinkMap()

        for c in m.classes {
            guard let sc = s.classSchema(c.name) else { continue }
            let stored = Dictionary(uniqueKeysWithValues: sc.properties.map { ($0.name, $0) })
            let expected = Dictionary(uniqueKeysWithValues: c.properties.map { ($0.name, $0) })
            if stored != expected { bad("\(c.name): schema \(sc.properties), model \(c.properties)") ; continue }
            let t = try s.table(c.name)
            if let root = s.catalogue.classInfo(named: c.name)?.tableRoot, root != 0 {
                let node = try s.node(root, expected: nil)
                if node[0] == NodeType.tableInner.rawValue { deepestTree = max(deepestTree, Int(node.u32(at: 20))) }
            }
            let objects = m.objects[c.name]!
            let keys = objects.keys.sorted()
            if try s.count(t) != keys.count { bad("\(c.name): count \(try s.count(t)), model \(keys.count)") }
            let storedKeys = try s.keys(t).map(\.rawValue)
            if storedKeys != keys { bad("\(c.name): keys \(storedKeys.prefix(20))…, model \(keys.prefix(20))…"); continue }
            for _ in 0..<3 where !keys.isEmpty {
                let i = gen.below(keys.count)
                if try s.key(at: i, in: t)?.rawValue != keys[i] { bad("\(c.name): key(at: \(i)) is not \(keys[i])") }
            }
            if try s.key(at: keys.count, in: t) != nil { bad("\(c.name): key(at: count) is not nil") }

            let handles = try c.properties.map { try s.property(t, $0.name) }
            let incoming = m.incoming(to: c.name)
            // Every scalar value through the scan API (cheap), ...
            let scalars = zip(c.properties, handles).filter { !$0.0.isCollection && $0.0.type != .linkingObjects }
            var scanned: [UInt64] = []
            try s.scan(t) { leaf in
                for row in 0..<leaf.count { scanned.append(leaf.key(row).rawValue) }
                for (p, h) in scalars {
                    let col = try leaf.column(h)
                    for row in 0..<leaf.count {
                        let k = leaf.key(row).rawValue
                        let v = try col.value(row)
                        if let o = objects[k], !same(v, o.values[p.name]!) { bad("\(c.name) #\(k).\(p.name) by scan: \(short(v)), model \(short(o.values[p.name]!))") }
                        if v.isNull != col.isNull(row) { bad("\(c.name) #\(k).\(p.name) by scan: isNull \(col.isNull(row)) for \(short(v))") }
                        if p.type == .int, case .int(let x) = v, col.int(row) != x { bad("\(c.name) #\(k).\(p.name) by scan: int(row) \(col.int(row)) for \(x)") }
                    }
                }
                return true
            }
            if scanned != keys { bad("\(c.name): scan visits \(scanned.count) keys, model \(keys.count)") }
            // ... and every value, list and backlink through the object API: for a sample of objects, and in
            // a full comparison every list and backlink of every object (scalars were all scanned above).
            var sample = keys
            if keys.count > 12 { sample = (0..<12).map { _ in keys[gen.below(keys.count)] } }
            let sampled = Set(sample)
            for k in full ? keys : sample {
                let o = objects[k]!
                let key = ObjectKey(k)
                for (p, h) in zip(c.properties, handles) where sampled.contains(k) || p.isCollection {
                    if p.type == .linkingObjects {
                        let want = backlinks[c.name]?[k]?["\(p.objectClassName!).\(p.originProperty!)"] ?? []
                        let got = try s.list(key, h)
                        if got != want.map({ .link(ObjectKey($0)) }) { bad("\(c.name) #\(k).\(p.name): \(short(got)), model \(want)") }
                    } else if p.isList || p.isSet {
                        let got = try s.list(key, h)
                        if !same(got, o.lists[p.name]!) { bad("\(c.name) #\(k).\(p.name): \(short(got)), model \(short(o.lists[p.name]!))") }
                    } else if p.isDictionary {
                        let got = Value.dictionary(try s.dictionary(key, h))
                        if !same(got, o.values[p.name]!) { bad("\(c.name) #\(k).\(p.name): \(got), model \(o.values[p.name]!)") }
                    } else {
                        let got = try s.value(key, h)
                        if !same(got, o.values[p.name]!) { bad("\(c.name) #\(k).\(p.name): \(short(got)), model \(short(o.values[p.name]!))") }
                    }
                }
            var groups: [String: [UInt64]] = [:]
                for (origin, lp) in incoming {
                    let label = "\(origin).\(lp.name)"
                    let want = backlinks[c.name]?[k]?[label] ?? []
                    let got = try s.backlinks(key, in: t, from: origin, property: lp.name).map(\.rawValue)
                    if got != want { bad("\(c.name) #\(k): backlinks from \(label) \(got), model \(want)") }
                    if !want.isEmpty { groups[label] = want }
                }
                var all: [String: [UInt64]] = [:]
                for g in try s.allBacklinks(key, in: t) { all["\(g.className).\(g.property)"] = g.keys.map(\.rawValue) }
                if all != groups { bad("\(c.name) #\(k): allBacklinks \(all), model \(groups)") }
            }

            // Element indexes of sets: the objects holding an element.
            for (p, h) in zip(c.properties, handles) where p.isSet && p.isIndexed {
                var probes: [Value] = [gen.value(p.type)]
                for _ in 0..<3 where !keys.isEmpty {
                    if let e = objects[keys[gen.below(keys.count)]]!.lists[p.name]?.first { probes.append(e) }
                }
                if p.isOptional { probes.append(.null) }
                for v in probes {
                    let want = keys.filter { k in objects[k]!.lists[p.name]!.contains { SetOrder.compare($0, v) == 0 } }
                    let got = try s.objects(h, withElement: v)?.map(\.rawValue)
                    if got != want { bad("\(c.name).\(p.name) (indexed set): objects(withElement: \(short(v))) \(String(describing: got?.prefix(10))), model \(want.prefix(10))") }
                }
            }

            // Index lookups, primary keys, scans and aggregates.
            for (p, h) in zip(c.properties, handles) where !p.isCollection && p.type != .linkingObjects {
                let indexed = p.isIndexed || p.isPrimaryKey
                if !indexed && !gen.chance(0.15) { continue }
                if p.type == .link { continue }
                var probes: [Value] = []
                for _ in 0..<(indexed ? 3 : 2) where !keys.isEmpty { probes.append(objects[keys[gen.below(keys.count)]]!.values[p.name]!) }
                if p.type != .mixed { probes.append(gen.value(p.type)) }
                if p.isOptional { probes.append(.null) }
                if p.type == .mixed {
                    // The same numbers as other types, and values of every kind.
                    for v in probes { probes += Self.sameNumber(v) }
                    probes += [randomIndexedMixed(), gen.value(.mixed), .null]
                }
                for v in probes {
                    let want = keys.filter { p.type == .mixed ? objects[$0]!.values[p.name]!.equalsMixed(v) : objects[$0]!.values[p.name]! == v }
                    let got = try s.find(h, equalTo: v).map(\.rawValue).sorted()
                    if got != want { bad("\(c.name).\(p.name)\(indexed ? " (indexed)" : ""): find(\(short(v))) \(got.prefix(10)), model \(want.prefix(10))") }
                    if p.isPrimaryKey {
                        let k = try s.object(t, primaryKey: v)?.rawValue
                        if k != want.first { bad("\(c.name): object(primaryKey: \(short(v))) \(String(describing: k)), model \(want)") }
                    }
                    if p.type == .string, case .string(let str) = v {
                        let n = try s.count(h, equalTo: str)
                        if n != want.count { bad("\(c.name).\(p.name): count(equalTo: \(short(v))) \(n), model \(want.count)") }
                    }
                }
                if p.type == .int {
                    var sum: Int64 = 0, n = 0, inRange = 0
                    for k in keys {
                        if case .int(let x) = objects[k]!.values[p.name]! {
                            sum &+= x
                            n += 1
                            if (-3...3).contains(x) { inRange += 1 }
                        }
                    }
                    let got = try s.sum(h)
                    if got.sum != sum || got.count != n { bad("\(c.name).\(p.name): sum \(got), model \((sum, n))") }
                    if try s.count(h, in: -3...3) != inRange { bad("\(c.name).\(p.name): count in -3...3 \(try s.count(h, in: -3...3)), model \(inRange)") }
                }
            }
            if let pk = c.properties.first(where: \.isPrimaryKey) {
                for k in keys where gen.chance(0.2) {
                    let got = try s.object(t, primaryKey: objects[k]!.values[pk.name]!)?.rawValue
                    if got != k { bad("\(c.name): object(primaryKey:) of #\(k) gives \(String(describing: got))") }
                }
            }
        }
        if !problems.isEmpty {
            throw fail("\(context) (version \(s.version)): \(problems.count) mismatch(es):\n  " + problems.joined(separator: "\n  "))
        }
    }
}

// MARK: - Tests

@Suite struct RandomModelTests {
    @Test(arguments: Settings.fileSeeds)
    func randomOperationsMatchModel(seed: UInt64) throws {
        let dir = TempDir("random\(seed)")
        let run = try RandomRun(seed: seed, path: dir.file("model.realm"), memoryID: nil, schemaChanges: false)
        try run.run(operations: Settings.operations)
    }

    @Test(arguments: Settings.memorySeeds)
    func randomOperationsInMemory(seed: UInt64) throws {
        let run = try RandomRun(seed: seed, path: nil, memoryID: "random-model-\(seed)-\(UUID().uuidString)", schemaChanges: true)
        try run.run(operations: Settings.operations)
    }

    @Test(arguments: Settings.schemaSeeds)
    func randomOperationsWithSchemaChanges(seed: UInt64) throws {
        let dir = TempDir("schema\(seed)")
        let run = try RandomRun(seed: seed, path: dir.file("schema.realm"), memoryID: nil, schemaChanges: true)
        try run.run(operations: Settings.operations)
    }

    /// Rewriting every object a thousand times must reuse freed pages instead of growing the file.
    @Test func fileGrowthStaysBounded() throws {
        let dir = TempDir()
        let path = dir.file("growth.realm")
        let db = try Database.open(path: path)
        func fileSize() -> Int {
            var st = stat()
            return stat(path, &st) == 0 ? Int(st.st_size) : -1
        }
        // Under REALM_SOAK a quarter of the objects also carry an out-of-line note (a blob node each), which
        // every rewrite of their cluster copies: ten times slower in a debug build.
        let longNote = soak ? String(repeating: "n", count: 1_500) : nil
        let objects = 1_000
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Item", properties: [
                PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                PropertySchema(name: "n", type: .int),
                PropertySchema(name: "score", type: .double),
                PropertySchema(name: "label", type: .string, isIndexed: true),
                PropertySchema(name: "note", type: .string),
            ]))
            for i in 0..<objects {
                let note = i % 4 == 0 ? longNote ?? "note \(i)" : "note \(i)"
                try tx.createObject("Item", ["id": .int(Int64(i)), "n": .int(0), "score": .double(0),
                                             "label": .string("label \(i % 37)"), "note": .string(note)])
            }
        }
        let afterFirst = fileSize()
        let start = ContinuousClock.now
        let rounds = 1_000
        var largest = afterFirst
        for r in 0..<rounds {
            try db.write { tx in
                let t = try tx.table("Item")
                try tx.updateAll(t, tx.property(t, "n")) { if case .int(let x) = $0 { .int(x + 1) } else { $0 } }
                try tx.updateAll(t, tx.property(t, "score")) { _ in .double(Double(r) / 3) }
                // Now and then every object's indexed label moves too (index entries removed and inserted).
                if r % 50 == 0 { try tx.updateAll(t, tx.property(t, "label")) { _ in .string("label \(r)") } }
            }
            largest = max(largest, fileSize())
        }
        let afterAll = fileSize()
        let elapsed = ContinuousClock.now - start
        let report = try db.verify()
        print("file growth: \(afterFirst) bytes after the first commit, \(afterAll) bytes (largest \(largest)) after \(rounds) "
              + "transactions updating all \(objects) objects: \(String(format: "%.2f", Double(afterAll) / Double(afterFirst)))× "
              + "in \(elapsed); \(report.usedPages) pages used, \(report.freePages) free")
        #expect(report.isOK, "\(report)")
        #expect(afterAll <= 4 * afterFirst, "the file grew from \(afterFirst) to \(afterAll) bytes")
        try db.read { s in
            let t = try s.table("Item")
            #expect(try s.sum(s.property(t, "n")).sum == Int64(objects * rounds))
            #expect(try s.find(s.property(t, "label"), equalTo: .string("label 950")).count == objects)
        }
    }
}

// MARK: - Minimal reproductions of bugs the random test found

@Suite struct ModelRegressionTests {
    /// A backlink column holds `key << 1 | 1` for one origin or the ref of a list node for several, told
    /// apart by the low bit; a list node written at an odd page was read back as one (wrong) origin.
    @Test func backlinkListsSurviveAnyPage() throws {
        let dir = TempDir()
        let db = try personDogDatabase(in: dir, "bl.realm")
        var dogs: [ObjectKey] = []
        let owner = try db.write { tx in try tx.createObject("Person", ["id": .int(0)]) }
        // Each commit rewrites the owner's backlink list at a new page, so both parities occur.
        for i in 0..<6 {
            try db.write { tx in
                dogs.append(try tx.createObject("Dog", ["name": .string("d\(i)"), "owner": .link(owner)]))
            }
            try db.read { s in
                let people = try s.table("Person")
                #expect(try s.backlinks(owner, in: people, from: "Dog", property: "owner") == dogs, "after \(i + 1) dogs")
            }
            let report = try db.verify()
            #expect(report.isOK, "\(report)")
        }
    }
    /// `set` skipped values that compare equal with `==` to the stored one, so -0.0 over 0.0 and a
    /// string over a canonically equivalent one with different bytes were silently not stored.
    @Test func setStoresValuesThatOnlyCompareEqual() throws {
        let db = try Database.inMemory(identifier: "set-equal-\(UUID().uuidString)")
        let key = try db.write { tx in
            try tx.createClass(ClassSchema(name: "A", properties: [
                PropertySchema(name: "d", type: .double),
                PropertySchema(name: "s", type: .string, isIndexed: true),
            ]))
            return try tx.createObject("A", ["d": .double(0), "s": .string("caf\u{E9}")])
        }
        try db.write { tx in
            let t = try tx.table("A")
            try tx.set(key, tx.property(t, "d"), .double(-0.0))
            try tx.set(key, tx.property(t, "s"), .string("cafe\u{301}"))
        }
        try db.read { s in
            let t = try s.table("A")
            guard case .double(let d) = try s.value(key, s.property(t, "d")),
                  case .string(let str) = try s.value(key, s.property(t, "s")) else { Issue.record("wrong types"); return }
            #expect(d.sign == .minus)
            #expect(Array(str.utf8) == Array("cafe\u{301}".utf8))
            #expect(try s.find(s.property(t, "s"), equalTo: .string("cafe\u{301}")) == [key])
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }

    /// Without an index `find` compared strings with Swift's `==` (Unicode canonical equivalence), with an
    /// index (and in `count(_:equalTo:)`) by UTF-8 bytes: the same query gave different answers.
    @Test func findComparesStringsByBytesWithOrWithoutIndex() throws {
        let db = try Database.inMemory(identifier: "find-bytes-\(UUID().uuidString)")
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "A", properties: [
                PropertySchema(name: "plain", type: .string),
                PropertySchema(name: "indexed", type: .string, isIndexed: true),
            ]))
            for s in ["\u{E9}", "e\u{301}"] { try tx.createObject("A", ["plain": .string(s), "indexed": .string(s)]) }
        }
        try db.read { s in
            let t = try s.table("A")
            let plain = try s.find(s.property(t, "plain"), equalTo: .string("\u{E9}"))
            let indexed = try s.find(s.property(t, "indexed"), equalTo: .string("\u{E9}"))
            #expect(plain == indexed)
            #expect(plain.count == 1)
            #expect(try s.count(s.property(t, "plain"), equalTo: "\u{E9}") == plain.count)
        }
    }
}
