import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// Shared fixtures of the bad-input, limits and maintenance tests (FileErrorTests, SchemaErrorTests,
/// OpeningTests, MaintenanceTests). Kept in one namespace so other test files can define their own helpers.
enum ErrorTestKit {
    /// personDogSchema plus a class with a property of every type, lists, links, indexes and an objectId key.
    static let schema: [ClassSchema] = personDogSchema + [
        ClassSchema(name: "Thing", properties: [
            PropertySchema(name: "oid", type: .objectId, isPrimaryKey: true),
            PropertySchema(name: "flag", type: .bool, isIndexed: true),
            PropertySchema(name: "n", type: .int, isIndexed: true),
            PropertySchema(name: "maybeN", type: .int, isOptional: true),
            PropertySchema(name: "f", type: .float),
            PropertySchema(name: "d", type: .double, isOptional: true),
            PropertySchema(name: "s", type: .string, isOptional: true, isIndexed: true),
            PropertySchema(name: "bytes", type: .data),
            PropertySchema(name: "when", type: .date, isIndexed: true),
            PropertySchema(name: "u", type: .uuid, isOptional: true, isIndexed: true),
            PropertySchema(name: "dec", type: .decimal128),
            PropertySchema(name: "any", type: .mixed),
            PropertySchema(name: "ints", type: .int, isList: true),
            PropertySchema(name: "names", type: .string, isOptional: true, isList: true),
            .link("person", to: "Person"),
            .list("dogs", of: "Dog"),
        ]),
    ]

    static func uuid(_ rng: inout SplitMix64) -> UUID {
        let a = rng.next(), b = rng.next()
        return withUnsafeBytes(of: (a, b)) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    static func text(_ rng: inout SplitMix64, length: Int) -> String {
        let pieces = ["a", "Z", "東", "京", "🐶", "é", "e\u{301}", "ß", " ", "\u{0}", "ж", "👩‍👩‍👧"]
        return String((0..<length).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined().prefix(length))
    }

    /// Fills an empty database with `ErrorTestKit.schema` and `people` people (plus dogs and things), over
    /// several commits, with some long (out-of-line) strings and data.
    static func populate(_ db: Database, people: Int = 200, seed: UInt64 = 1) throws {
        var rng = SplitMix64(seed: seed)
        try db.write { tx in try tx.createClasses(schema) }
        try db.write { tx in
            let persons = try tx.table("Person"), dogsT = try tx.table("Dog"), things = try tx.table("Thing")
            let dogsP = try tx.property(persons, "dogs")
            var dogKeys: [ObjectKey] = []
            for i in 0..<people {
                let long = i % 17 == 0
                let p = try tx.createObject(persons, ["id": .int(Int64(i)), "name": .string("person \(i % 50)"),
                                                      "age": .int(Int64(i % 90)),
                                                      "nickname": i % 3 == 0 ? .null : .string(text(&rng, length: long ? 700 : 8))],
                                            lists: ["tags": (0..<(i % 4)).map { .string("tag\($0)") }])
                if i % 2 == 0 {
                    let d = try tx.createObject(dogsT, ["name": .string("dog \(i)"), "weight": .double(Double(i) / 4),
                                                        "owner": .link(p)])
                    try tx.listAppend(p, dogsP, .link(d))
                    dogKeys.append(d)
                }
            }
            for i in 0..<people / 2 {
                var oid = [UInt8](repeating: 0, count: 12)
                for j in 0..<12 { oid[j] = UInt8(truncatingIfNeeded: rng.next()) }
                let bytes = (0..<(i % 9 == 0 ? 1500 : i % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                try tx.createObject(things, [
                    "oid": .objectId(ObjectId(byteArray: oid)),
                    "flag": .bool(i % 2 == 0), "n": .int(Int64(i) * 1_000_003 - 7), "maybeN": i % 5 == 0 ? .null : .int(Int64(i)),
                    "f": .float(Float(i) / 3), "d": i % 4 == 0 ? .null : .double(Double(i) * 1.5),
                    "s": i % 6 == 0 ? .null : .string(text(&rng, length: i % 11 == 0 ? 400 : 12)),
                    "bytes": .data(bytes), "when": .date(Timestamp(seconds: Int64(i) * 86_400 - 1_000_000, nanoseconds: Int32(i))),
                    "u": i % 7 == 0 ? .null : .uuid(uuid(&rng)), "dec": .decimal128(Decimal128(Int64(i) * 3)),
                    "any": [Value.int(Int64(i)), .string("mixed \(i)"), .null, .double(0.5), .data([1, 2, 3]), .bool(true)][i % 6],
                    "person": .link(try #require(try tx.object(persons, primaryKey: .int(Int64(i))))),
                ], lists: ["ints": (0..<(i % 5)).map { .int(Int64($0 * i)) },
                           "names": [.string("n\(i)"), .null, .string(text(&rng, length: 5))],
                           "dogs": dogKeys.isEmpty ? [] : [.link(dogKeys[i % dogKeys.count]), .link(dogKeys[(i * 7) % dogKeys.count])]])
            }
        }
    }

    /// Everything a database holds, in a comparable form: schema, schema version, every object's key and
    /// values (lists and linkingObjects included) and every object's backlinks.
    struct Contents: Equatable, CustomStringConvertible {
        var schemaVersion: UInt64 = 0
        var schema: [ClassSchema] = []
        var objects: [String: [UInt64: [String: [Value]]]] = [:]
        var backlinks: [String: [UInt64: [String]]] = [:]

        var description: String {
            "schema v\(schemaVersion), classes \(schema.map(\.name)), objects " + objects.map { "\($0.key): \($0.value.count)" }.sorted().joined(separator: ", ")
        }
    }

    static func contents(_ s: Snapshot) throws -> Contents {
        var out = Contents()
        out.schemaVersion = s.schemaVersion
        out.schema = s.schema.sorted { $0.name < $1.name }
        for c in out.schema {
            let t = try s.table(c.name)
            var rows: [UInt64: [String: [Value]]] = [:]
            var links: [UInt64: [String]] = [:]
            for k in try s.keys(t) {
                var row: [String: [Value]] = [:]
                for p in c.properties {
                    let h = try s.property(t, p.name)
                    row[p.name] = p.isList ? try s.list(k, h) : [try s.value(k, h)]
                }
                rows[k.rawValue] = row
                links[k.rawValue] = try s.allBacklinks(k, in: t).map { "\($0.className).\($0.property): \($0.keys.map(\.rawValue))" }.sorted()
            }
            out.objects[c.name] = rows
            out.backlinks[c.name] = links
        }
        return out
    }

    static func contents(_ db: Database) throws -> Contents { try db.read { try contents($0) } }

    /// Looks every stored value of every indexed property up through its index; returns the mismatches.
    static func indexMismatches(_ db: Database) throws -> [String] {
        try db.read { s in
            var bad: [String] = []
            for c in s.schema {
                let t = try s.table(c.name)
                for p in c.properties where p.isIndexed || p.isPrimaryKey {
                    let h = try s.property(t, p.name)
                    for k in try s.keys(t) {
                        let v = try s.value(k, h)
                        if !(try s.find(h, equalTo: v)).contains(k) { bad.append("\(c.name).\(p.name) #\(k.rawValue)") }
                        if p.isPrimaryKey, try s.object(t, primaryKey: v) != k { bad.append("pk \(c.name).\(p.name) #\(k.rawValue)") }
                    }
                }
            }
            return bad
        }
    }

    /// A value guarded by a lock, for collecting results from several threads.
    final class Locked<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
            lock.lock()
            defer { lock.unlock() }
            return try body(&value)
        }
    }

    static func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : -1
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func bytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

    static func write(_ bytes: [UInt8], to path: String) {
        let ok = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        precondition(ok, "cannot write \(path)")
    }

    /// Runs `body` and returns the `StorageError` it threw; records an issue when it throws something else
    /// or nothing.
    static func storageError(_ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation,
                             _ body: () throws -> Void) -> StorageError? {
        do {
            try body()
            Issue.record("expected a StorageError \(comment)", sourceLocation: sourceLocation)
        } catch let e as StorageError {
            return e
        } catch {
            Issue.record("expected a StorageError \(comment), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }
}
