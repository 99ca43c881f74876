import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// The sample values the fixtures' README (§3) lists for formats 10–24, and empty files.
@Suite struct ModernValueTests {
    // MARK: formats 10–24

    static let ids: [CoreValue] = [0, 2, 3, 15, 42, 100, 7000].map { .int($0) }

    @Test(arguments: ["core/test_upgrade_database_1000_10_to_11.realm", "core/test_upgrade_database_4_10_to_11.realm"])
    func format10LinksAndBacklinks(_ name: String) throws {
        let f = try Fixtures.open(name)
        let table = try #require(f.class(named: "table"))
        #expect(table.primaryKey == "id")
        #expect(try f.column("table", "id") == Self.ids)
        let links = try f.column("origin", "link")
        for (i, link) in links.enumerated() {
            guard case let .link(l) = link else { Issue.record("origin \(i): \(link)"); continue }
            #expect(try f.position(of: table, key: l.key) == i)
            #expect(try f.backlinks(of: table, at: i).map(\.keys.count) == [1])
        }
    }

    @Test func format11StringPrimaryKeysWithHashedKeys() throws {
        let f = try Fixtures.open("core/test_upgrade_database_11.realm")
        #expect(try f.column("foo", "id") == Self.ids)
        let bar = try #require(f.class(named: "bar"))
        let names = ["adam", "bart", "carlo", "david", "eric", "frank", "gary"]
        #expect(Set(try f.column("bar", "name")) == Set(names.map { .string($0) }))
        let origin = try f.column("origin", "link2")
        for (i, expected) in names.enumerated() {
            guard case let .link(l) = origin[7 + i], let p = try f.position(of: bar, key: l.key) else {
                Issue.record("origin \(7 + i): \(origin[7 + i])")
                continue
            }
            #expect(try f.value(of: bar, at: p, property: bar.properties[0]) == .string(expected))
        }
        let foo = try #require(f.class(named: "foo"))
        for p in 0..<7 { #expect(try f.backlinks(of: foo, at: p).map(\.keys.count) == [1]) }
    }

    @Test func format20UnresolvedLinksReadAsNull() throws {
        let f = try Fixtures.open("core/test_upgrade_database_20.realm")
        #expect(f.class(named: "foo")?.objectCount == 6)
        #expect(f.class(named: "bar")?.objectCount == 6)
        #expect(try !f.column("foo", "id").contains(.int(42)))
        #expect(try !f.column("bar", "name").contains(.string("eric")))
        let link1 = try f.column("origin", "link1")
        #expect(link1[4] == .null)
        #expect(link1.filter { $0 != .null }.count == 6)
        // Object keys of foo are its primary keys in format 20.
        let foo = try #require(f.class(named: "foo"))
        for p in 0..<6 {
            let o = try f.object(of: foo, at: p)
            #expect(o.values == [.int(o.key)])
        }
    }

    @Test func format20CommittedStringPrimaryKey() throws {
        let f = try Fixtures.open("core/test_backup-olden-and-golden.realm")
        let t = try #require(f.class(named: "table"))
        #expect(t.primaryKey == "name")
        #expect(try f.column("table", "name") == [.string("object")])
    }

    @Test(arguments: ["core/test_upgrade_database_1000_22.realm", "core/test_upgrade_database_4_22.realm"])
    func format22DictionaryAndSetOfMixed(_ name: String) throws {
        let f = try Fixtures.open(name)
        let target = try #require(f.class(named: "target"))
        #expect(try f.column("target", "id") == [.int(47)])
        let link = CoreValue.link(CoreLink(className: "target", key: try f.object(of: target, at: 0).key))
        guard case let .dictionary(entries) = try f.column("table", "dict")[0] else { Issue.record("no dictionary"); return }
        let dict = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
        #expect(dict == ["one": .int(1), "two": .double(2.0), "three": .string("John"), "four": .string("Paul"), "five": .string("George"),
                         "six": .string("Ringo"), "seven": .string("Morgan"), "eight": .timestamp(seconds: 4, nanoseconds: 5), "nine": link])
        let set = try #require(try f.column("table", "set")[0].list)
        #expect(Set(set) == [.int(1), .double(2.0), .string("John"), .string("Ringo"), .binary(Array("Paul\0".utf8)),
                             .binary(Array("George\0".utf8)), .string("Beatles"), link])
        #expect(f.class(named: "table")?.property(named: "dict")?.collection == .dictionary)
        #expect(f.class(named: "table")?.property(named: "set")?.collection == .set)
        #expect(try f.backlinks(of: target, at: 0).map(\.keys.count) == [1, 1])
    }

    @Test(arguments: [("core/test_upgrade_database_1000_23.realm", 10000), ("core/test_upgrade_database_4_23.realm", 40)])
    func format23LinksSetsAndMixed(_ name: String, _ n: Int) throws {
        let f = try Fixtures.open(name)
        let table = try #require(f.class(named: "table"))
        #expect(table.objectCount == n)
        let target = try #require(f.class(named: "target"))
        let targetKey = try f.object(of: target, at: 0).key
        #expect(try f.value(of: target, at: 0, property: target.properties[0]) == .int(1))
        for p in [0, 1, n / 2, n - 1] {
            let o = try f.object(of: table, at: p)
            #expect(o.values == [.int(Int64(p)), .link(CoreLink(className: "target", key: targetKey))])
        }
        #expect(try f.backlinks(of: target, at: 0).first?.keys.count == n)
        let mixed = try #require(f.class(named: "table_for_mixed"))
        let row = try f.object(of: mixed, at: 0).values
        #expect(row[1].list?.count == 32)
        #expect(row[2].list?.count == 20)
        #expect(row[3].list?.count == 8)
        let ids = try f.column("table2", "id"), values = try f.column("table2", "mixed")
        #expect(ids.count == 20)
        #expect(ids == values)
    }

    @Test(arguments: [("core/test_upgrade_database_1000_24.realm", 10000, 1_723_464_299), ("core/test_upgrade_database_4_24.realm", 40, 1_723_464_440)])
    func format24EveryScalarTypeAndNestedCollections(_ name: String, _ n: Int, _ t: Int64) throws {
        let f = try Fixtures.open(name)
        let table = try #require(f.class(named: "table"))
        #expect(table.objectCount == n + 1)
        #expect(table.primaryKey == "_id")
        #expect(table.properties.map(\.type) == [.objectId, .int, .int, .bool, .string, .binary, .mixed, .timestamp, .float, .double,
                                                 .decimal128, .uuid, .link])
        let colors = ["white", "yellow", "red", "orange", "green", "blue", "grey", "violet", "purple", "black"]
        let target = try #require(f.class(named: "target"))
        let targetLink = CoreValue.link(CoreLink(className: "target", key: try f.object(of: target, at: 0).key))
        for i in [0, 1, 9, n / 2, n - 1] {
            let o = try f.object(of: table, at: i)
            #expect(o.key == Int64(i))
            guard case let .objectId(id) = o.values[0] else { Issue.record("\(o.values[0])"); continue }
            #expect(Array(id.prefix(4)) == withUnsafeBytes(of: UInt32(t).bigEndian) { Array($0) })
            #expect(Array(o.values[1...12]) == [.int(65535 + Int64(i)), .int(65535 + Int64(i % 10)), .bool(false), .string(colors[i % 10]),
                                                .binary([]), .null, .timestamp(seconds: t + Int64(i), nanoseconds: 0), .float(0), .double(0),
                                                .decimal128(.zero), .uuid([UInt8](repeating: 0, count: 16)), targetLink])
        }
        let last = try f.object(of: table, at: n).values
        guard case let .string(poem) = last[4] else { Issue.record("\(last[4])"); return }
        #expect(poem.count == 473)  // characters (492 bytes of UTF-8)
        #expect(poem.utf8.count == 492)
        #expect(poem.hasPrefix("1. Jeg ved en lærkerede,"))
        #expect(last[2] == .null)
        #expect(last[12] == .null)
        guard case let .dictionary(any) = last[6] else { Issue.record("\(last[6])"); return }
        let dict = Dictionary(uniqueKeysWithValues: any.map { ($0.key, $0.value) })
        #expect(dict["Seven"] == .int(7))
        #expect(dict["Six"] == .int(6))
        #expect(dict["Points"] == .list([.double(1.25), .double(4.5), .double(6.75)]))
        #expect(dict["Attributes"] == .dictionary([CoreDictionaryEntry(key: "Height", value: .int(202)), CoreDictionaryEntry(key: "Weight", value: .int(92))]))
        #expect(try f.backlinks(of: target, at: 0).first?.keys.count == n)
    }

    @Test func format22AsymmetricAndStringPrimaryKeys() throws {
        let f = try Fixtures.open("core/downgrade_asymmetric.realm")
        #expect(f.class(named: "ephemeral")?.isAsymmetric == true)
        #expect(f.class(named: "ephemeral")?.primaryKey == "_id")  // column key 0, stored tagged
        #expect(f.class(named: "persistent")?.primaryKey == "_id")
        #expect(try f.column("ephemeral", "_id") == [.int(1), .int(2), .int(3)])
        #expect(try f.column("persistent", "_id") == [.string("uno"), .string("dos"), .string("tres")])
    }

    @Test func format22FlexibleSyncSubscriptions() throws {
        let f = try Fixtures.open("core/test_flx_metadata_tables_v1.realm")
        #expect(f.classes.map(\.name) == ["TopLevel"])
        #expect(f.class(named: "TopLevel")?.primaryKey == "_id")
        let subs = try #require(f.class(named: "flx_subscriptions"))
        #expect(subs.isEmbedded)
        let sub = try f.object(of: subs, at: 0)
        func v(_ p: String) -> CoreValue { sub.values[subs.properties.firstIndex { $0.name == p }!] }
        #expect(v("id") == .objectId([0x62, 0x74, 0x2a, 0xb9, 0x59, 0xd7, 0xf2, 0xe4, 0x8f, 0x59, 0xf7, 0x5d]))
        #expect(v("object_class") == .string("TopLevel"))
        #expect(v("query") == .string("TRUEPREDICATE"))
        #expect(try f.column("flx_subscription_sets", "state") == [.int(3)])
        #expect(try f.column("flx_subscription_sets", "version") == [.int(1)])
        #expect(try f.column("flx_metadata", "schema_version") == [.int(2)])
    }

    @Test func format22ObjectStoreFile() throws {
        let f = try Fixtures.open("core/foo.realm")
        #expect(try f.column("Object", "value") == [.int(42)])
        #expect(f.schemaVersion == 0)
    }

    @Test func format23SyncMetadataUsers() throws {
        let f = try Fixtures.open("core/sync-metadata-v6.realm")
        #expect(f.class(named: "UserMetadata")?.objectCount == 13)
        #expect(f.schemaVersion == 6)
        #expect(try f.readEverything() > 0)
    }

    // MARK: empty files

    @Test func formatZeroIsAnEmptyRealm() throws {
        let f = try Fixtures.open("core/vacuum_no_history_type.realm")
        #expect(f.format == 0)
        #expect(f.classes.isEmpty && f.systemTables.isEmpty)
    }

    @Test func anEmptyFileIsZeroClasses() throws {
        let dir = TempDir()
        let path = dir.file("empty.realm")
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        let f = try RealmCoreFile(path: path)
        #expect(f.classes.isEmpty)
        #expect(f.format == 0)
    }

    @Test func format6TableWithoutColumns() throws {
        let f = try Fixtures.open("core/test_upgrade_database_6.realm")
        #expect(f.format == 6)
        #expect(f.class(named: "table")?.properties.isEmpty == true)
    }
}
