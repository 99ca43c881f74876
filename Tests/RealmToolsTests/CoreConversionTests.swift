import Foundation
import RealmCoreFile
import RealmStorage
@testable import RealmTools
import Testing
import TestSupport

/// Realm Core files converted into our format: every fixture that reads, compared value by value with what the
/// reader reads from the file itself.
@Suite struct CoreConversionTests {
    static let fixtures = CoreFileInfoTests.fixtures

    /// Every `.realm` fixture as `core/NAME.realm` / `java/NAME.realm`, and whether the reader refuses it (the
    /// README's `ERROR` lines: the interrupted upgrades).
    static let all: [String] = {
        var names: [String] = []
        for sub in ["core", "java"] {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: fixtures + "/" + sub)) ?? []  // (missing: the count test fails)
            names += files.filter { $0.hasSuffix(".realm") }.map { sub + "/" + $0 }
        }
        return names.sorted()
    }()

    static let refused: Set<String> = {
        let readme = (try? String(contentsOfFile: fixtures + "/README.md", encoding: .utf8)) ?? ""  // (missing: the count test fails)
        return Set(readme.split(separator: "\n").filter { $0.contains(" | ERROR") }.map { String($0.prefix { $0 != " " }) })
    }()

    static func key(_ name: String) -> [UInt8]? {
        if name.contains("test_shared_decrypt_") { return Array("1234567890123456789012345678901123456789012345678901234567890123".utf8) }
        if name.contains("9_to_10_encrypted") { return Array(String(repeating: "abcdefgh", count: 8).utf8) }
        if name.hasPrefix("java/") && name.contains("-encrypted") { return [UInt8](repeating: 1, count: 64) }
        return nil
    }

    /// Realm Core's own old test files have a second column of one name, and sub-tables of several columns:
    /// the column is renamed as Realm Core's upgrade renames it, the sub-table's rows are a mixed list of
    /// dictionaries.
    @Test func duplicateColumnNamesAreRenamedAndSubTablesKept() throws {
        let core = try RealmCoreFile(path: Self.fixtures + "/core/test_upgrade_database_4_9_to_10.realm")
        let report = try CoreConversion(file: core).run(into: try Database.inMemory(identifier: "dup-\(UUID().uuidString)"))
        #expect(!report.renamed.isEmpty)
        for r in report.renamed { #expect(r.to.hasPrefix(r.from.isEmpty ? "col_" : r.from + "_"), "\(r)") }
        let sub = try RealmCoreFile(path: Self.fixtures + "/core/test_upgrade_database_4_5_to_6_stringindex.realm")
        let db = try Database.inMemory(identifier: "sub-\(UUID().uuidString)")
        try CoreConversion(file: sub).run(into: db)
        let t1 = try #require(sub.class(named: "t1")), p = try #require(t1.property(named: "table"))
        #expect(p.type == .subTable)
        try db.read { s in
            #expect(s.classSchema("t1")?.property(named: "table")?.type == .mixed)
            #expect(s.classSchema("t1")?.property(named: "table")?.isList == true)
            let key = try #require(try s.key(at: 0, in: try s.table("t1")))
            // A list of rows, each a dictionary from the sub-table's column names to values.
            let rows = try s.list(key, try s.property(try s.table("t1"), "table"))
            let want = try sub.value(of: t1, at: 0, property: p)
            #expect(rows.count == (want.elements?.count ?? -1))
            #expect(rows.allSatisfy { if case .dictionary = $0 { true } else { false } }, "\(rows)")
        }
    }

    @Test func theFixturesAreThere() {
        #expect(Self.all.count == 89, "fixtures in \(Self.fixtures)")
        #expect(Self.refused.count == 8)
    }

    @Test(arguments: all)
    func fixtureConvertsWithEveryValue(_ name: String) throws {
        guard !Self.refused.contains(name) else { return }
        let core = try RealmCoreFile(path: Self.fixtures + "/" + name, key: Self.key(name))
        let db = try Database.inMemory(identifier: "conversion-\(name)-\(UUID().uuidString)")
        // Internal tables too: every value of the file goes through the conversion.
        let conversion = CoreConversion(file: core, includeInternalTables: true)
        let tables = conversion.tables
        #expect(tables.count == core.classes.count + core.systemTables.count)
        let report = try conversion.run(into: db)
        let verify = try db.verify()
        #expect(verify.isOK, "\(name): \(verify.problems.prefix(3))")
        try db.read { s in
            #expect(s.schema.map(\.name).sorted() == tables.map(\.name).sorted(), "\(name)")
            for c in tables {
                let schema = try #require(s.classSchema(c.name))
                #expect(schema.isEmbedded == c.isEmbedded, "\(name): \(c.name)")
                // The file's names, but for a second column of one name or one without a name (renamed).
                let names = CoreConversion.propertyNames(of: c)
                #expect(schema.properties.filter { $0.type != .linkingObjects }.map(\.name) == names, "\(name): \(c.name)")
                #expect(zip(c.properties, names).allSatisfy { p, n in p.name == n || report.renamed.contains { $0 == (c.name, p.name, n) } })
                #expect(schema.primaryKey == c.primaryKey, "\(name): \(c.name)")
                for (p, n) in zip(c.properties, names) {
                    let ours = try #require(schema.property(named: n))
                    #expect(Self.sameType(p, ours), "\(name): \(c.name).\(p.name) \(p.type) \(p.collection) → \(ours.type)")
                }
                #expect(try s.count(c.name) == c.objectCount, "\(name): \(c.name)")
            }
            // Every object of every top-level class, value by value (embedded ones through their owners).
            let checker = Checker(core: core, snapshot: s, keys: report.keys, fixture: name,
                                  names: Dictionary(uniqueKeysWithValues: tables.map { ($0.name, CoreConversion.propertyNames(of: $0)) }))
            for c in tables where !c.isEmbedded {
                let map = report.keys[c.name] ?? [:]
                #expect(map.count == c.objectCount)
                for position in 0..<c.objectCount {
                    let object = try core.object(of: c, at: position)
                    let key = try #require(map[object.key], "\(name): \(c.name)[\(position)] has no copy")
                    try checker.check(c, object, key, "\(c.name)[\(position)]")
                    // The engine's backlinks, made from the links, are as many as the file's.
                    let theirs = try core.backlinks(of: c, at: position).reduce(0) { $0 + $1.keys.count }
                    let ours = try s.allBacklinks(key, in: try s.table(c.name)).reduce(0) { $0 + $1.keys.count }
                    #expect(ours == theirs, "\(name): \(c.name)[\(position)] backlinks")
                }
            }
        }
    }

    static func sameType(_ p: CoreProperty, _ ours: PropertySchema) -> Bool {
        let type: PropertyType
        switch p.type {
        case .int: type = .int
        case .bool: type = .bool
        case .string: type = .string
        case .binary: type = .data
        case .timestamp, .oldDateTime: type = .date
        case .float: type = .float
        case .double: type = .double
        case .decimal128: type = .decimal128
        case .objectId: type = .objectId
        case .uuid: type = .uuid
        case .mixed, .typedLink, .subTable: type = .mixed
        case .link: type = .link
        }
        let kind = ours.isList ? CoreCollectionKind.list : ours.isSet ? .set : ours.isDictionary ? .dictionary : .none
        return type == ours.type && kind == p.collection && ours.objectClassName == (type == .link ? p.targetClass : nil)
            && (type == .link || type == .mixed || ours.isOptional == p.isNullable)
    }

    /// Compares a Realm Core object with its copy, following embedded objects into their copies.
    struct Checker {
        let core: RealmCoreFile
        let snapshot: Snapshot
        let keys: [String: [Int64: ObjectKey]]
        let fixture: String
        let names: [String: [String]]

        func check(_ c: CoreClass, _ object: CoreObject, _ key: ObjectKey, _ place: String) throws {
            let table = try snapshot.table(c.name)
            for (i, (p, v)) in zip(c.properties, object.values).enumerated() {
                let handle = try snapshot.property(table, names[c.name]![i])
                let at = "\(fixture): \(place).\(p.name)"
                if p.type == .link, let target = p.targetClass, let tc = core.class(named: target), tc.isEmbedded {
                    try checkEmbedded(p, v, tc, key, handle, at)
                    continue
                }
                switch p.collection {
                case .none:
                    let got = try snapshot.value(key, handle)
                    #expect(same(expected(v, p), got), "\(at): \(v) → \(got)")
                case .list:
                    let got = try snapshot.list(key, handle)
                    let want = (v.elements ?? []).map { expected($0, p) }
                    #expect(got.count == want.count && zip(want, got).allSatisfy { same($0, $1) }, "\(at): \(v) → \(got)")
                case .set:
                    let got = try snapshot.list(key, handle)
                    let want = (v.elements ?? []).map { expected($0, p) }
                    #expect(got.count == want.count && want.allSatisfy { w in got.contains { same(w, $0) } }, "\(at): \(v) → \(got)")
                case .dictionary:
                    let got = try snapshot.dictionary(key, handle)
                    guard case .dictionary(let entries) = v else { #expect(got.isEmpty, "\(at)"); continue }
                    #expect(got.count == entries.count, "\(at)")
                    for e in entries { #expect(got[e.key].map { same(expected(e.value, p), $0) } == true, "\(at)['\(e.key)']") }
                }
            }
        }

        func checkEmbedded(_ p: CoreProperty, _ v: CoreValue, _ target: CoreClass, _ key: ObjectKey, _ handle: PropertyHandle,
                           _ at: String) throws {
            func pair(_ link: CoreValue, _ got: Value) throws {
                guard case .link(let l) = link else { #expect(got.isNull, "\(at)"); return }
                guard case .link(let child) = got else { Issue.record("\(at): no embedded copy"); return }
                let position = try #require(try core.position(of: target, key: l.key))
                try check(target, try core.object(of: target, at: position), child, "\(at)→\(target.name)[\(position)]")
            }
            switch p.collection {
            case .none: try pair(v, try snapshot.value(key, handle))
            case .list, .set:
                let got = try snapshot.list(key, handle), want = v.elements ?? []
                #expect(got.count == want.count, "\(at)")
                for (w, g) in zip(want, got) { try pair(w, g) }
            case .dictionary:
                let got = try snapshot.dictionary(key, handle)
                guard case .dictionary(let entries) = v else { #expect(got.isEmpty, "\(at)"); return }
                #expect(got.count == entries.count, "\(at)")
                for e in entries { try pair(e.value, try #require(got[e.key], "\(at)['\(e.key)']")) }
            }
        }

        /// What the copy should hold for a Realm Core value of `p`.
        func expected(_ v: CoreValue, _ p: CoreProperty) -> Value {
            switch v {
            case .null: return .null
            case .int(let i): return p.type == .oldDateTime ? .date(Timestamp(seconds: i)) : .int(i)
            case .bool(let b): return .bool(b)
            case .float(let f): return .float(f)
            case .double(let d): return .double(d)
            case .string(let s): return .string(s)
            case .binary(let b): return .data(b)
            case .timestamp(let s, let n): return .date(Timestamp(seconds: s, nanoseconds: n))
            case .decimal128(let d): return .decimal128(Decimal128(low: d.low, high: d.high))
            case .objectId(let b): return .objectId(ObjectId(byteArray: b))
            case .uuid(let b): return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            case .link(let l):
                guard let k = keys[l.className]?[l.key] else { return .string("unmapped link \(l)") }
                if p.type == .link { return .link(k) }
                return .typedLink(classID: snapshot.classID(named: l.className) ?? .max, key: k)
            case .list(let items), .set(let items): return .list(items.map { expected($0, p) })
            case .dictionary(let entries): return .dictionary(ValueDictionary(entries.map { ($0.key, expected($0.value, p)) }))
            }
        }

        /// Equal, with floats, doubles and decimals compared by their bits (NaN is itself).
        func same(_ a: Value, _ b: Value) -> Bool {
            switch (a, b) {
            case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
            case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
            case (.decimal128(let x), .decimal128(let y)): return x.low == y.low && x.high == y.high || (x.isNaN && y.isNaN)
            case (.list(let x), .list(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
            case (.dictionary(let x), .dictionary(let y)):
                return x.count == y.count && x.allSatisfy { e in y[e.key].map { same(e.value, $0) } == true }
            default: return a == b
            }
        }
    }
}

extension CoreValue {
    var elements: [CoreValue]? {
        switch self {
        case .list(let v), .set(let v): return v
        default: return nil
        }
    }
}

extension CoreConversionTests {
    /// A database that has a class of the same name already: a conflict, and nothing written.
    @Test func aClassOfTheSameNameIsAConflict() throws {
        let core = try RealmCoreFile(path: Self.fixtures + "/java/0.98.0-alltypes.realm")
        let db = try Database.inMemory(identifier: "conflict-\(UUID().uuidString)")
        try db.write { tx in try tx.createClass(ClassSchema(name: "IOSChild", properties: [PropertySchema(name: "x", type: .int)])) }
        #expect {
            try CoreConversion(file: core).run(into: db)
        } throws: { error in
            "\(error)".contains("class 'IOSChild' exists already")
        }
        try db.read { s in #expect(s.schema.map(\.name) == ["IOSChild"]) }
    }
}
