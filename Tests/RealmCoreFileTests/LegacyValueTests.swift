import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// The sample values the fixtures' README (§3) lists for formats 2–9 and Realm Cocoa's files.
@Suite struct LegacyValueTests {
    // MARK: formats 2–9

    @Test(arguments: ["core/test_upgrade_database_1000_1.realm", "core/test_upgrade_database_4_1.realm"])
    func format2IndexedStringsAndIntegers(_ name: String) throws {
        let f = try Fixtures.open(name)
        #expect(f.format == 2)
        #expect(try f.column("table", "string") == (0..<1000).map { .string(String($0)) })
        #expect(try f.column("table", "integer") == (0..<1000).map { .int(Int64($0)) })
        let table = try #require(f.class(named: "table"))
        #expect(table.properties.map(\.isIndexed) == [true, true])
    }

    @Test(arguments: ["core/test_upgrade_database_1000_2.realm", "core/test_upgrade_database_4_2.realm"])
    func format2ShortMediumAndLongStrings(_ name: String) throws {
        let f = try Fixtures.open(name)
        for table in ["table", "table_indexed"] {
            let rows = 0..<9
            func letters(_ n: Int) -> [CoreValue] { rows.map { .string(String(repeating: Character(Unicode.Scalar(UInt8(97 + $0))), count: n)) } }
            #expect(try f.column(table, "empty") == rows.map { _ in .string("") })
            #expect(try f.column(table, "short") == letters(5))
            #expect(try f.column(table, "medium") == letters(40))
            #expect(try f.column(table, "long") == letters(200))
            for column in ["short_empty_string", "medium_empty_string", "long_empty_string"] {
                #expect(try f.column(table, column) == rows.map { _ in .string("") })
            }
        }
    }

    @Test(arguments: ["core/test_upgrade_database_1000_3.realm", "core/test_upgrade_database_4_3.realm"])
    func format2Binaries(_ name: String) throws {
        let f = try Fixtures.open(name)
        #expect(try f.column("short", "bin") == [.binary([]), .binary(Array("foo\0".utf8))])
        #expect(try f.column("long", "bin") == [.binary([]), .binary(Array((String(repeating: "1234567890", count: 7) + "\0").utf8))])
    }

    @Test(arguments: ["core/test_upgrade_database_1000_4.realm", "core/test_upgrade_database_4_4.realm"])
    func format2StringsWithNULs(_ name: String) throws {
        let f = try Fixtures.open(name)
        #expect(try f.column("table", "strings_with_nul_bytes") == (0..<5).map { .string(String(repeating: "\0", count: $0)) })
    }

    @Test(arguments: ["core/test_upgrade_database_1000_4_to_5_datetime1.realm", "core/test_upgrade_database_4_4_to_5_datetime1.realm"])
    func format3OldDateTimes(_ name: String) throws {
        let f = try Fixtures.open(name)
        func t(_ s: Int64) -> CoreValue { .timestamp(seconds: s, nanoseconds: 0) }
        #expect(try f.column("table", "dt1") == [t(1234), t(0), .null])
        #expect(try f.column("table", "dt2") == [t(1234), t(0), t(0)])
        #expect(try f.column("table", "dt3") == [t(1234), t(0), .null])
        #expect(try f.column("table", "dt4") == [t(1234), t(0), t(0)])
        let table = try #require(f.class(named: "table"))
        #expect(table.properties.map(\.type) == [.oldDateTime, .oldDateTime, .oldDateTime, .oldDateTime])
        #expect(table.properties.map(\.isNullable) == [true, false, true, false])
    }

    @Test(arguments: ["core/test_upgrade_database_1000_5_to_6_stringindex.realm", "core/test_upgrade_database_4_5_to_6_stringindex.realm"])
    func format5StringIndexTable(_ name: String) throws {
        let f = try Fixtures.open(name)
        let a500 = String(repeating: "a", count: 500)
        let expected: [CoreValue] = [.string(a500 + "b"), .string(a500 + "c"), .string("aaaaaaaaaa"), .string("aaaaaaaaaa"), .string(a500), .string(a500)]
        #expect(try f.column("t1", "string") == expected)
        #expect(try f.column("t1", "nullable string") == expected)
        let t1 = try #require(f.class(named: "t1"))
        // The 1000-node file has 13 columns; the 4-node one also the generator's `table` and old `mixed` columns.
        #expect(t1.properties.count == (name.contains("_4_") ? 15 : 13))
        if name.contains("_4_") {
            #expect(try f.column("t1", "mixed") == Array(repeating: .int(0), count: 6))
            #expect(t1.property(named: "table")?.type == .subTable)
        }
        #expect(t1.property(named: "link")?.targetClass == "t2")
        #expect(t1.property(named: "linklist")?.collection == .list)
        #expect(t1.property(named: "timestamp")?.type == .timestamp)
        #expect(f.class(named: "t2")?.linkingObjects.count == 2)
    }

    @Test(arguments: ["core/test_upgrade_database_1000_6_to_7.realm", "core/test_upgrade_database_4_6_to_7.realm",
                      "core/test_upgrade_database_1000_7_to_8.realm", "core/test_upgrade_database_4_7_to_8.realm",
                      "core/test_upgrade_database_1000_8_to_9.realm", "core/test_upgrade_database_4_8_to_9.realm"])
    func formats6To8OneValue(_ name: String) throws {
        let f = try Fixtures.open(name)
        #expect(try f.column("table", "value") == [.int(123)])
        if name.contains("8_to_9") {
            #expect(try f.column("table", "str_col") == [.string("test string")])
            #expect(f.class(named: "table")?.property(named: "str_col")?.isIndexed == true)
        }
    }

    @Test(arguments: ["core/test_upgrade_database_1000_9_to_10.realm", "core/test_upgrade_database_4_9_to_10.realm"])
    func format9AllColumnKinds(_ name: String) throws {
        let f = try Fixtures.open(name)
        let table = try #require(f.class(named: "table"))
        #expect(table.properties.map(\.name) == ["int", "int", "", "bool_null", "float", "double", "string", "string_i", "binary",
                                                 "date", "link", "linklist", "integers", "intnulls"])
        let row17 = try f.object(of: table, at: 17).values
        #expect(row17[0] == .int(17))
        #expect(row17[4] == .float(25.5))
        #expect(row17[5] == .double(42.5))
        #expect(row17[6] == .string("This is a medium long string"))
        #expect(row17[7] == .string("This is a somewhat longer string17"))
        #expect(row17[8] == .binary([UInt8](repeating: UInt8(ascii: "x"), count: 1000)))
        #expect(row17[9] == .timestamp(seconds: 1700, nanoseconds: 17))
        #expect(row17[10] == .link(CoreLink(className: "table", key: 27)))
        let row18 = try f.object(of: table, at: 18).values
        #expect(row18[6] == .string(""))
        #expect(row18[7] == .null)
        let row23 = try f.object(of: table, at: 23).values
        #expect(row23[12] == .list((24...41).map { .int(Int64($0)) }))
        #expect(row23[13] == .list([0, 5, 10, 15, 20].map { .int($0) } + [.null] + [30, 35, 40, 45].map { .int($0) }))
        let row27 = try f.object(of: table, at: 27).values
        #expect(row27[2] == .bool(true))
        let alphabet = Array(String(repeating: "abcdefghijklmnopqrstuvwxyz", count: 3).utf8)
        #expect(row27[8] == .binary(Array(alphabet.prefix(76))))
        #expect(row27[11] == .list((12...18).map { .link(CoreLink(className: "other", key: $0)) }))
        #expect(try f.backlinks(of: table, at: 27) == [CoreBacklinks(originClass: "table", originProperty: "link", keys: [17])])
        let long = try f.object(of: table, at: name.contains("1000") ? 177 : 40).values[7]
        #expect(long == .string("This is a rather long string, that should not be very much shorter"))
        #expect(try f.column("other", "strings")[14] == .list([.string("Medium_Sized_String_0"), .string("Medium_Sized_String_1"), .null]))
    }

    /// Every value of the 501 + 25 rows against core's own `to_json` of the file after its upgrade.
    @Test func format9AgainstCoresJSON() throws {
        let f = try Fixtures.open("core/test_upgrade_database_1000_9_to_10.realm")
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("core/expect_test_upgrade_database_9_to_10.json")))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [[String: Any]]])
        for className in ["table", "other"] {
            let cls = try #require(f.class(named: className))
            let rows = try #require(json[className])
            #expect(rows.count == cls.objectCount)
            let columnNames = className == "table"
                ? ["int", "int_1", "col_2", "bool_null", "float", "double", "string", "string_i", "binary", "date", "link", "linklist", "integers", "intnulls"]
                : ["val", "strings"]
            for (position, row) in rows.enumerated() {
                let object = try f.object(of: cls, at: position)
                #expect(object.key == row["_key"] as? Int64)
                for (i, column) in columnNames.enumerated() {
                    let expected = Self.fromJSON(row[column] as Any, property: cls.properties[i])
                    #expect(object.values[i] == expected, "\(className)[\(position)].\(column)")
                }
            }
        }
    }

    static func fromJSON(_ v: Any, property: CoreProperty) -> CoreValue {
        if v is NSNull { return .null }
        if let list = v as? [Any] { return .list(list.map { fromJSON($0, property: property) }) }
        if let link = v as? [String: Any], let key = link["key"] as? Int64, let table = link["table"] as? String {
            return .link(CoreLink(className: table, key: key))
        }
        if let links = v as? [String: Any], let keys = links["keys"] as? [Int64], let table = links["table"] as? String {
            return .list(keys.map { .link(CoreLink(className: table, key: $0)) })
        }
        switch property.type {
        case .bool: return .bool((v as? Bool) ?? false)
        case .float: return .float(Float((v as? Double) ?? .nan))
        case .double: return .double((v as? Double) ?? .nan)
        case .int: return .int((v as? Int64) ?? -1)
        case .link: return .link(CoreLink(className: property.targetClass ?? "", key: (v as? Int64) ?? -1))
        case .binary: return .binary(Array(Data(base64Encoded: (v as? String) ?? "") ?? Data()))
        case .timestamp:
            // "1970-01-01 00:38:20.000000023"
            let text = (v as? String) ?? ""
            let parts = text.split(separator: " ")
            let time = parts[1].split(separator: ".")
            let hms = time[0].split(separator: ":").compactMap { Int64($0) }
            let day = Int64(parts[0].split(separator: "-")[2])! - 1
            let nanos = time.count > 1 ? Int32(time[1])! : 0
            return .timestamp(seconds: day * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2], nanoseconds: nanos)
        default: return .string((v as? String) ?? "")
        }
    }

    @Test func format9PrimaryKeyTableAndEnumeratedStrings() throws {
        let f = try Fixtures.open("core/test_upgrade_database_9_to_10_pk_table.realm")
        #expect(f.classes.map(\.name) == ["dog", "link origin", "object"])
        #expect(f.systemTables.map(\.name) == ["pk", "metadata"])
        #expect(f.schemaVersion == 0)
        #expect(f.class(named: "dog")?.primaryKey == "id")
        #expect(f.class(named: "link origin")?.primaryKey == "pk")
        #expect(f.class(named: "object")?.primaryKey == "pk")
        #expect(try f.column("object", "pk") == [.string("hello"), .string("world"), .string("goodbye")])
        #expect(try f.column("object", "value") == [.int(7), .int(35), .int(800)])
        #expect(try f.column("object", "enum") == [.string("red"), .string("blue"), .string("red")])
        #expect(try f.column("object", "list") == [.list([.string("")]), .list([]), .list([])])
        #expect(try f.column("object", "optional") == [.null, .null, .int(-87)])
        #expect(try f.column("link origin", "pk") == [.int(5), .int(6), .int(7)])
        #expect(try f.column("link origin", "object") == [.null, .link(CoreLink(className: "object", key: 0)), .null])
        #expect(try f.column("link origin", "array") == [.list([]), .list([]),
                                                         .list([.link(CoreLink(className: "object", key: 1)), .link(CoreLink(className: "object", key: 2))])])
    }

    @Test func format9EncryptedUpgradeFixture() throws {
        let f = try Fixtures.open("core/test_upgrade_database_9_to_10_encrypted.realm")
        #expect(f.isEncrypted)
        #expect(f.class(named: "dog") == nil)
        let object = try #require(f.class(named: "object"))
        let hello = try #require(try f.column("object", "pk").firstIndex(of: .string("hello")))
        #expect(try f.column("object", "value")[hello] == .int(7))
        let six = try #require(try f.column("link origin", "pk").firstIndex(of: .int(6)))
        #expect(try f.column("link origin", "object")[six] == .link(CoreLink(className: "object", key: Int64(hello))))
        #expect(object.primaryKey == "pk")
    }

    @Test func format9SyncedClassesKeepTheirObjectIds() throws {
        let f = try Fixtures.open("core/test_upgrade_database_9_to_10_oid.realm")
        let bar = try #require(f.class(named: "bar"))
        #expect(bar.properties.first?.isHidden == true)
        #expect(bar.visibleProperties.map(\.name) == ["ident", "value", "optional"])
        #expect(bar.primaryKey == "ident")
        let rows = try f.objects(of: bar, in: 0..<3).map { $0.values }
        #expect(Set(rows.map { [$0[1], $0[2], $0[3]] }) == [[.string("goodbye"), .int(800), .int(-87)], [.string("hello"), .int(7), .null],
                                                             [.string("world"), .int(35), .null]])
        #expect(Set(rows.map { $0[0] }) == [.int(717_911_018_529_132_092), .int(2_515_477_941_069_477_034), .int(6_444_968_757_765_087_612)])
        #expect(try f.column("foo", "name") == [.string("Tom"), .string("Pluto"), .string("Jerry")])
        #expect(try f.column("foo", "!OID") == [.int(512), .int(513), .int(514)])
        let array = try f.column("origin", "array")[2]
        #expect(array == .list([.link(CoreLink(className: "foo", key: 0)), .link(CoreLink(className: "foo", key: 2))]))
    }

    @Test(arguments: [("core/test_shared_decrypt_4k_page.realm", 6144), ("core/test_shared_decrypt_64k_page.realm", 98304)])
    func format9EncryptedBigStrings(_ name: String, _ length: Int) throws {
        let f = try Fixtures.open(name)
        #expect(try f.column("table", "string") == [.string(String(repeating: "a", count: length))])
    }

    @Test func format9StringPrimaryKeyFromRealmJava() throws {
        let f = try Fixtures.open("java/core6_string_pk_indexed.realm")
        let cls = try #require(f.class(named: "MigrationCore6PKStringIndexedByDefault"))
        #expect(cls.primaryKey == "name")
        #expect(cls.property(named: "name")?.isIndexed == true)
        #expect(try f.column(cls.name, "name") == [.string("Foo")])
    }

    @Test func format9PrimaryKeysNamedWithTheirPrefix() throws {
        let f = try Fixtures.open("java/0841_pk_migration.realm")
        #expect(f.class(named: "Tags")?.primaryKey == "id")
        #expect(f.class(named: "PopularPost")?.primaryKey == "threadId")
        #expect(f.class(named: "Message")?.primaryKey == "uid")
        #expect(f.classes.count == 14)
    }

    @Test func format9HeaderSlotOneOverFormat2() throws {
        let f = try Fixtures.open("java/string-only-pre-null-0.82.2.realm")
        #expect(f.format == 9)
        #expect(try f.column("StringOnly", "chars") == [.string("String_set_with_0.82.2")])
    }

    // MARK: Realm Cocoa files, formats 2, 3, 10

    @Test(arguments: ["java/0.90.4-alltypes.realm", "java/0.98.0-alltypes.realm", "java/6.0.0-beta.2-alltypes.realm"])
    func cocoaAllTypes(_ name: String) throws {
        let f = try Fixtures.open(name)
        let all = try #require(f.class(named: "IOSAllTypes"))
        #expect(all.objectCount == 10)
        #expect(f.class(named: "IOSChild")?.objectCount == 110)
        #expect(all.primaryKey == (name.contains("0.90.4") ? nil : "id"))
        for i in 0..<10 {
            let o = try f.object(of: all, at: i)
            func v(_ p: String) -> CoreValue { o.values[all.properties.firstIndex { $0.name == p }!] }
            #expect(v("boolCol") == .bool(true))
            #expect(v("shortCol") == .int(Int64(1 + i)))
            #expect(v("intCol") == .int(Int64(10 + i)))
            #expect(v("longCol") == .int(Int64(100 + i)))
            #expect(v("floatCol") == .float(1.23 + Float(i)))
            #expect(v("doubleCol") == .double(1.234 + Double(i)))
            #expect(v("byteCol") == .binary([1, 2, 3]))
            #expect(v("stringCol") == .string("String \(i)"))
            #expect(v("dateCol") == .timestamp(seconds: 1000 + Int64(i), nanoseconds: 0))
            if !name.contains("0.90.4") {
                #expect(v("id") == .int(Int64(i + 1)))
                #expect(v("longLongCol") == .int(100_000_000 + Int64(i)))
            }
            guard case let .link(child) = v("child"), case let .list(children) = v("children") else {
                Issue.record("object \(i): child \(v("child")), children \(v("children"))")
                continue
            }
            let childClass = try #require(f.class(named: "IOSChild"))
            let childPosition = try #require(try f.position(of: childClass, key: child.key))
            #expect(try f.object(of: childClass, at: childPosition).values == [.string("Foo")])
            #expect(children.count == 10)
            for (j, c) in children.enumerated() {
                guard case let .link(link) = c, let p = try f.position(of: childClass, key: link.key) else {
                    Issue.record("child \(j) of \(i): \(c)")
                    continue
                }
                #expect(try f.object(of: childClass, at: p).values == [.string("Name: \(i)")])
            }
        }
    }

    @Test(arguments: ["java/0.98.0-alltypes-min.realm", "java/6.0.0-beta.2-alltypes-min.realm"])
    func cocoaMinima(_ name: String) throws {
        let f = try Fixtures.open(name)
        let all = try #require(f.class(named: "IOSAllTypes"))
        let o = try f.object(of: all, at: 0)
        func v(_ p: String) -> CoreValue { o.values[all.properties.firstIndex { $0.name == p }!] }
        let modern = name.hasPrefix("java/6")
        #expect(v("shortCol") == .int(-32768))
        #expect(v("intCol") == .int(-2_147_483_648))
        #expect(v("longCol") == .int(modern ? Int64.min : -2_147_483_648))
        #expect(v("longLongCol") == .int(Int64.min))
        #expect(v("floatCol") == .float(-.greatestFiniteMagnitude))
        #expect(v("doubleCol") == .double(-.greatestFiniteMagnitude))
        #expect(v("byteCol") == .binary([]))
        #expect(v("stringCol") == .string(""))
        #expect(v("dateCol") == .timestamp(seconds: Int64.min, nanoseconds: modern ? -999_999_999 : 0))
    }

    @Test(arguments: ["java/0.98.0-alltypes-null-value.realm", "java/6.0.0-beta.2-alltypes-null-value.realm"])
    func cocoaNulls(_ name: String) throws {
        let f = try Fixtures.open(name)
        let all = try #require(f.class(named: "IOSAllTypes"))
        let o = try f.object(of: all, at: 0)
        func v(_ p: String) -> CoreValue { o.values[all.properties.firstIndex { $0.name == p }!] }
        for p in ["byteCol", "stringCol", "dateCol", "child"] { #expect(v(p) == .null, "\(p)") }
        #expect(v("children") == .list([]))
    }

    @Test func javaIntegerPrimaryKeyProperty() throws {
        let f = try Fixtures.open("java/080_annotationtypes.realm")
        let cls = try #require(f.class(named: "AnnotationTypes"))
        #expect(cls.primaryKey == "id")
        #expect(try f.object(of: cls, at: 0).values == [.int(1), .string("IndexedString"), .string("NotIndexedString")])
        #expect(cls.property(named: "indexString")?.isIndexed == true)
        #expect(cls.property(named: "notIndexString")?.isIndexed == false)
    }
}
