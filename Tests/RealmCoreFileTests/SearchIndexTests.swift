import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// Equality lookups through Realm Core's search indexes (`objects(of:property:equalTo:)`), checked against a scan
/// of the column on every fixture with an index, and on `Fixtures/index/search-indexes.realm`, which Realm Core
/// v14.14.0 wrote with an index on a column of every indexable type (`Fixtures/index/index_fixture_writer.cpp`).
@Suite struct SearchIndexTests {
    static let indexFixture = "index/search-indexes.realm"

    /// The files of `Fixtures/written` (Realm Core v14.14.0: `Person.id` primary key, `Person.name` indexed;
    /// plain, encrypted, and both in streaming form).
    static let written = ["people-1k.realm", "people-1k-copy.realm", "people-1k-encrypted.realm", "people-1k-encrypted-copy.realm"]
        .map { "written/" + $0 }

    /// Every fixture that opens (README §4) and has a column with a search index, the written files and the
    /// index fixture.
    static let fixtures: [String] = Fixtures.all.filter { name in
        guard Fixtures.observed[name]?.tables != nil, let file = try? Fixtures.open(name) else { return false }  // (an expected error: ConformanceTests)
        return !indexedProperties(file).isEmpty
    } + written + [indexFixture]

    /// Opens a fixture, with the key of `Fixtures/written`'s encrypted files.
    static func open(_ name: String) throws -> RealmCoreFile {
        guard name.hasPrefix("written/"), name.contains("encrypted") else { return try Fixtures.open(name) }
        let hex = try String(contentsOfFile: Fixtures.path("written/people-1k-encrypted.key"), encoding: .utf8)
        let digits = Array(hex.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        let key = try stride(from: 0, to: digits.count, by: 2).map { i in
            try #require(UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16))
        }
        return try RealmCoreFile(path: Fixtures.path(name), key: key)
    }

    /// (class, property) pairs whose column has a search index.
    static func indexedProperties(_ file: RealmCoreFile) -> [(CoreClass, CoreProperty)] {
        guard let group = file.group else { return [] }
        return (file.classes + file.systemTables).flatMap { cls in
            cls.properties.filter { group.tables[cls.table].columns[$0.column].indexRoot != nil }.map { (cls, $0) }
        }
    }

    /// A value as a scan compares it: strings by their UTF-8 bytes, everything else as `CoreValue`.
    enum ScanKey: Hashable {
        case bytes([UInt8])
        case value(CoreValue)
        init(_ v: CoreValue) {
            if case let .string(s) = v { self = .bytes(Array(s.utf8)) } else { self = .value(v) }
        }
    }

    /// The keys of `cls`'s objects by the value of `property`, from `value(of:at:property:)` over every position.
    static func scan(_ file: RealmCoreFile, _ cls: CoreClass, _ property: CoreProperty) throws -> [ScanKey: [Int64]] {
        var result: [ScanKey: [Int64]] = [:]
        for position in 0..<cls.objectCount {
            let value = try file.value(of: cls, at: position, property: property)
            result[ScanKey(value), default: []].append(try file.key(of: cls, at: position))
        }
        return result.mapValues { $0.sorted() }
    }

    /// Whether the reader answers lookups on `property` from its index (else `nil` is the right answer).
    static func answers(_ file: RealmCoreFile, _ cls: CoreClass, _ property: CoreProperty) -> Bool {
        guard let column = file.group?.tables[cls.table].columns[property.column], file.format >= 6 else { return false }
        let types: [CorePropertyType] = file.format >= 10 ? [.int, .bool, .string, .timestamp, .objectId, .uuid] : [.int, .bool, .string, .timestamp]
        return property.collection == .none && !column.isFullTextIndexed && types.contains(property.type)
    }

    static func hasReplacementCharacter(_ v: CoreValue) -> Bool {
        if case let .string(s) = v { return s.unicodeScalars.contains("\u{FFFD}") }
        return false
    }

    @Test(arguments: fixtures)
    func everyObjectIsFoundByItsOwnValueAndOnlyObjectsOfThatValue(_ name: String) throws {
        let file = try Self.open(name)
        let indexed = Self.indexedProperties(file)
        #expect(!indexed.isEmpty)
        for (cls, property) in indexed {
            let byValue = try Self.scan(file, cls, property)
            for position in 0..<cls.objectCount {
                let value = try file.value(of: cls, at: position, property: property)
                let key = try file.key(of: cls, at: position)
                let found = try file.objects(of: cls, property: property, equalTo: value)
                guard Self.answers(file, cls, property), !Self.hasReplacementCharacter(value) else {
                    #expect(found == nil, "\(name) \(cls.name).\(property.name)")
                    continue
                }
                let keys = try #require(found, "\(name) \(cls.name).\(property.name) \(value)")
                #expect(keys.contains(key), "\(name) \(cls.name).\(property.name) \(value)")
                #expect(keys == byValue[ScanKey(value)], "\(name) \(cls.name).\(property.name) \(value)")
            }
        }
    }

    /// Values next to the stored ones (one more, one byte longer or shorter, null) give exactly what a scan gives,
    /// which is `[]` for every value the file does not hold.
    @Test(arguments: fixtures)
    func valuesNearStoredOnesGiveWhatAScanGives(_ name: String) throws {
        let file = try Self.open(name)
        var absent = 0, answered = 0
        for (cls, property) in Self.indexedProperties(file) where Self.answers(file, cls, property) {
            answered += 1
            let byValue = try Self.scan(file, cls, property)
            var probes: Set<CoreValue> = [.null]
            for key in byValue.keys.prefix(200) {
                switch key {
                case let .bytes(b):
                    let s = String(decoding: b, as: UTF8.self)
                    probes.formUnion([.string(s + "x"), .string(s + "X"), .string(String(s.dropLast())), .string("x" + s)])
                case let .value(.int(i)):
                    probes.formUnion([.int(i &+ 1), .int(i &- 1), .int(i ^ (1 << 32)), .int(i ^ (1 << 40))])
                case let .value(.timestamp(s, ns)):
                    probes.formUnion([.timestamp(seconds: s, nanoseconds: ns &+ 1), .timestamp(seconds: s &+ 1, nanoseconds: ns)])
                case let .value(.objectId(b)):
                    probes.insert(.objectId(Array(b.dropLast()) + [b[b.count - 1] &+ 1]))
                case let .value(.uuid(b)):
                    probes.insert(.uuid([b[0] &+ 1] + b.dropFirst()))
                default:
                    break
                }
            }
            if property.type == .bool { probes.formUnion([.bool(true), .bool(false)]) }
            for probe in probes where !Self.hasReplacementCharacter(probe) {
                let found = try #require(try file.objects(of: cls, property: property, equalTo: probe),
                                         "\(name) \(cls.name).\(property.name) \(probe)")
                let expected = byValue[ScanKey(probe)] ?? []
                #expect(found == expected, "\(name) \(cls.name).\(property.name) \(probe)")
                if expected.isEmpty { absent += 1 }
            }
        }
        #expect(absent > 0 || answered == 0)
    }

    /// The index fixture's shapes, one by one: what the file holds is known from the program that wrote it.
    @Test func theIndexFixtureAnswersEachShape() throws {
        let file = try Fixtures.open(Self.indexFixture)
        #expect(file.format == 24)
        let cls = try #require(file.class(named: "Indexed"))
        func lookup(_ property: String, _ value: CoreValue) throws -> [Int64]? {
            try file.objects(of: cls, property: try #require(cls.property(named: property)), equalTo: value)
        }
        func scanned(_ property: String, _ value: CoreValue) throws -> [Int64] {
            try Self.scan(file, cls, try #require(cls.property(named: property)))[ScanKey(value)] ?? []
        }
        // Null and 0 share their first chunks of index data; so do 7 and the ints whose low 4 bytes are 7.
        for value: CoreValue in [.null, .int(0), .int(7), .int(1 << 40), .int(Int64.min + 6)] {
            let keys = try #require(try lookup("int", value))
            let expected = try scanned("int", value)
            #expect(!keys.isEmpty && keys == expected, "\(value)")
        }
        // 1,300 objects hold 0 and 1,300 hold 1, less the deleted ones: lists longer than a B+tree leaf.
        #expect(try lookup("many", .int(0))?.count == (try scanned("many", .int(0))).count)
        #expect((try lookup("many", .int(1))?.count ?? 0) > 1000)
        // Strings: "" beside null, a prefix beside its extensions, "ab" beside "abX" (the index's end marker is
        // "X"), strings sharing 230 bytes (one list of different values), non-ASCII bytes.
        let long = String(repeating: "p", count: 230)
        for value: CoreValue in [.null, .string(""), .string("a"), .string("ab"), .string("abX"), .string("abcd"),
                                 .string("abcde"), .string(long + "3"), .string("Zürich"), .string("東京-4"), .string("changed")] {
            let keys = try #require(try lookup("string", value))
            let expected = try scanned("string", value)
            #expect(!keys.isEmpty && keys == expected, "\(value)")
        }
        #expect(try lookup("string", .string(long)) == [])
        #expect(try lookup("string", .string("abc")) == [])
        #expect(try lookup("plain", .string(""))?.isEmpty == false)
        #expect(try lookup("plain", .null) == [])  // not nullable: no object holds null
        #expect(try lookup("bool", .bool(true)) == (try scanned("bool", .bool(true))))
        #expect(try lookup("key", .string("k1")) == (try scanned("key", .string("k1"))))
        let k1 = try #require(try lookup("key", .string("k1"))?.first)
        #expect(try file.value(of: cls, key: k1, property: try #require(cls.property(named: "key"))) == .string("k1"))
        // What the reader does not answer from an index: the caller scans.
        #expect(try lookup("mixed", .int(1)) == nil)
        #expect(try lookup("text", .string("word1 other")) == nil)  // full-text index
        #expect(try lookup("tags", .string("t1")) == nil)  // index on a list
        #expect(try lookup("unindexed", .int(1)) == nil)
        #expect(try lookup("int", .string("7")) == nil)  // not the property's type
        #expect(try lookup("string", .string("\u{FFFD}\u{FFFD}1")) == nil)  // stands for bytes that are not UTF-8
    }

    /// Formats ≤ 9 keep the index after the column's ref and store row numbers; formats 6–9 are read (the
    /// fixtures have indexes in formats 8 and 9), formats ≤ 5 (an older index layout) give nil.
    @Test func formatsUpToNine() throws {
        var read: Set<Int> = [], unread = 0
        for name in Fixtures.all where Fixtures.observed[name]?.tables != nil {
            let file = try Fixtures.open(name)
            guard file.format <= 9 else { continue }
            for cls in file.classes + file.systemTables where cls.objectCount > 0 {
                for property in cls.properties where property.isIndexed && property.collection == .none {
                    let value = try file.value(of: cls, at: 0, property: property)
                    let found = try file.objects(of: cls, property: property, equalTo: value)
                    if file.format <= 5 {
                        #expect(found == nil, "\(name)")
                        unread += 1
                    } else if Self.answers(file, cls, property) && !Self.hasReplacementCharacter(value) {
                        #expect(found?.contains(0) == true, "\(name) \(cls.name).\(property.name)")
                        read.insert(file.format)
                    }
                }
            }
        }
        #expect(unread > 0 && read == [8, 9])
    }

    /// Damaged copies (MutationTests' damage) look values up to the end or throw a `RealmCoreFileError`; none traps
    /// or hangs.
    @Test(arguments: [indexFixture, "core/test_upgrade_database_1000_24.realm", "core/test_upgrade_database_4_23.realm",
                     "core/test_upgrade_database_1000_8_to_9.realm", "core/consistency_full_1.realm"])
    func damagedCopiesGiveErrorsNotCrashes(_ name: String) throws {
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name))))
        let intact = try Fixtures.open(name)
        var probes: [(String, String, CoreValue)] = []
        for (cls, property) in Self.indexedProperties(intact) where Self.answers(intact, cls, property) {
            for position in stride(from: 0, to: cls.objectCount, by: max(1, cls.objectCount / 8)) {
                probes.append((cls.name, property.name, try intact.value(of: cls, at: position, property: property)))
            }
        }
        #expect(!probes.isEmpty)
        let dir = TempDir()
        let path = dir.file("damaged.realm")
        var rng = SplitMix64(seed: name.utf8.reduce(1_469_598_103_934_665_603) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 })
        var outcomes: [String: Int] = [:]
        for round in 0..<MutationTests.perFixture {
            let mutation = MutationTests.Mutation.allCases[round % MutationTests.Mutation.allCases.count]
            _ = FileManager.default.createFile(atPath: path, contents: Data(MutationTests.mutate(original, mutation, encrypted: false, rng: &rng)))
            MutationTests.tally(&outcomes, "\(mutation) round \(round)") {
                let file = try RealmCoreFile(path: path)
                for (className, propertyName, value) in probes {
                    guard let cls = file.class(named: className), let property = cls.property(named: propertyName) else { continue }
                    _ = try file.objects(of: cls, property: property, equalTo: value)
                }
            }
        }
        #expect(outcomes.values.reduce(0, +) == MutationTests.perFixture)
    }

    /// Damage aimed at the index nodes themselves: loops back to the node or to its index's root, forged sizes,
    /// flipped context and inner flags, slots made tagged keys or stray refs. Each lookup gives keys or a
    /// `RealmCoreFileError`; the first 20 keys of an answer are checked to hold the value.
    @Test func damagedIndexNodesGiveErrorsNotCrashesOrWrongKeys() throws {
        let name = Self.indexFixture
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name))))
        let intact = try Fixtures.open(name)
        let cls = try #require(intact.class(named: "Indexed"))
        let group = try #require(intact.group)
        var roots: [Int] = []
        var probes: [(String, CoreValue)] = []
        for (_, property) in Self.indexedProperties(intact) where Self.answers(intact, cls, property) {
            roots.append(try #require(group.tables[cls.table].columns[property.column].indexRoot))
            var values: Set<CoreValue> = []
            for position in stride(from: 0, to: cls.objectCount, by: 97) {
                values.insert(try intact.value(of: cls, at: position, property: property))
            }
            probes += values.map { (property.name, $0) }
        }
        // Every node under the index roots: a walk of the even non-zero slots of has-refs nodes.
        func u64(_ at: Int, _ width: Int) -> Int { (0..<(width / 8)).reduce(0) { $0 | Int(original[at + $1]) << (8 * $1) } }
        var queue = roots, seen = Set<Int>(), nodes: [Int] = []
        while let n = queue.popLast() {
            guard n > 0, n % 8 == 0, n + 8 <= original.count, seen.insert(n).inserted else { continue }
            nodes.append(n)
            let flags = original[n + 4], width = (1 << Int(original[n + 4] & 7)) >> 1
            let count = Int(original[n + 5]) << 16 | Int(original[n + 6]) << 8 | Int(original[n + 7])
            guard flags & 0x40 != 0, width >= 8, flags & 0x18 == 0 else { continue }
            for i in 0..<count {
                let v = u64(n + 8 + i * width / 8, width)
                if v > 0 && v % 8 == 0 && v < original.count { queue.append(v) }
            }
        }
        #expect(nodes.count > 50)
        let dir = TempDir()
        let path = dir.file("damaged.realm")
        var rng = SplitMix64(seed: 0x1DE7_0F_1DE7)
        var errors = 0, answers = 0
        for round in 0..<MutationTests.perFixture * 2 {
            var bytes = original
            let n = nodes[Int(rng.next() % UInt64(nodes.count))]
            let width = (1 << Int(bytes[n + 4] & 7)) >> 1
            let count = Int(bytes[n + 5]) << 16 | Int(bytes[n + 6]) << 8 | Int(bytes[n + 7])
            func setSlot(_ value: UInt64) {
                guard width >= 8, count > 0 else { return }
                let at = n + 8 + Int(rng.next() % UInt64(count)) * width / 8
                for b in 0..<(width / 8) { bytes[at + b] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(b))) }
            }
            switch round % 6 {
            case 0: setSlot(UInt64(n))  // a loop to the node itself
            case 1: setSlot(UInt64(roots[Int(rng.next() % UInt64(roots.count))]))  // a loop to an index root
            case 2: setSlot(UInt64(nodes[Int(rng.next() % UInt64(nodes.count))]))  // another index node
            case 3: setSlot(rng.next() % 100_000 << 1 | 1)  // a tagged key
            case 4: bytes[n + 4] ^= [0x20, 0x80, 0x40, 0x07][Int(rng.next() % 4)]  // context, inner, has-refs, width
            default:
                let size = [0, 1, UInt32(rng.next() % 2000), 0xFF_FFFF][Int(rng.next() % 4)]
                (bytes[n + 5], bytes[n + 6], bytes[n + 7]) = (UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF))
            }
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            do {
                let file = try RealmCoreFile(path: path)
                let damagedClass = try #require(file.class(named: "Indexed"))
                for (propertyName, value) in probes {
                    let property = try #require(damagedClass.property(named: propertyName))
                    do {
                        guard let keys = try file.objects(of: damagedClass, property: property, equalTo: value) else { continue }
                        for key in keys.prefix(20) {
                            #expect(try file.value(of: damagedClass, key: key, property: property) == value, "round \(round)")
                        }
                        answers += 1
                    } catch is RealmCoreFileError {
                        errors += 1
                    }
                }
            } catch is RealmCoreFileError {
                errors += 1
            }
        }
        #expect(errors > 0 && answers > 0)
    }

    /// `REALM_CORE_LARGE_FILE=people-1m.realm` (written by Realm Core: Person with `id` as primary key and an
    /// indexed `name`): the lookups of the issue, checked against a scan.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REALM_CORE_LARGE_FILE"] != nil))
    func largeFileLookups() throws {
        let file = try RealmCoreFile(path: try #require(ProcessInfo.processInfo.environment["REALM_CORE_LARGE_FILE"]))
        let person = try #require(file.class(named: "Person"))
        for (property, value) in [("id", CoreValue.int(123_456)), ("name", .string("name-4242"))] {
            let prop = try #require(person.property(named: property))
            let found = try #require(try file.objects(of: person, property: prop, equalTo: value))
            var scanned: [Int64] = []
            try file.forEachLeaf(of: person) { leaf in
                let column = try leaf.column(prop)
                for i in 0..<leaf.count where try column.value(i) == value { scanned.append(leaf.key(i)) }
                return true
            }
            #expect(found == scanned.sorted() && !found.isEmpty, "\(property)")
        }
    }
}
