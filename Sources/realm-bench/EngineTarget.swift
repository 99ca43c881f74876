// The engine side of the comparison, through RealmStorage's own API: snapshots for reads, one write
// transaction per write workload, durable commits (one fdatasync each).

#if canImport(Glibc)
import Glibc
#endif
import RealmQuery
import RealmStorage
import RealmTools

final class EngineTarget: BenchTarget {
    let name: String
    private var db: Database?
    private var path = ""
    /// With a key the same workloads run on an encrypted file (`--encryption`).
    private let key: [UInt8]?

    init(encryptionKey: [UInt8]? = nil, name: String? = nil) {
        key = encryptionKey
        self.name = name ?? (encryptionKey == nil ? "engine" : "encrypted")
    }

    func setUp(directory: String) throws {
        path = directory + "/bench.realm"
        db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: key))
    }

    private var database: Database { db! }

    func settingsDescription() -> String? {
        "\(name): copy-on-write B+tree, columnar clusters, one fdatasync per commit"
            + (key == nil ? "" : ", AES-256-GCM pages")
    }

    func insertAll(_ people: [Person]) throws -> Int {
        try database.write { tx in
            try tx.createClass(ClassSchema(name: "Person", properties: [
                PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                PropertySchema(name: "name", type: .string, isIndexed: true),
                PropertySchema(name: "city", type: .string),
                PropertySchema(name: "age", type: .int),
                PropertySchema(name: "score", type: .double),
                PropertySchema(name: "active", type: .bool),
            ]))
            try insert(people, tx)
        }
        return people.count
    }

    private func personColumns(_ s: Snapshot) throws -> (TableHandle, [PropertyHandle]) {
        let t = try s.table("Person")
        return (t, try ["id", "name", "city", "age", "score", "active"].map { try s.property(t, $0) })
    }

    private func insert(_ people: [Person], _ tx: WriteTransaction, handles: (TableHandle, [PropertyHandle])? = nil) throws {
        let (t, columns) = try handles ?? personColumns(tx)
        for p in people {
            try tx.createObject(t, columns: columns, values: [
                .int(Int64(p.id)), .string(p.name), .string(p.city), .int(Int64(p.age)), .double(p.score), .bool(p.active),
            ])
        }
    }

    func insertOneByOne(_ people: [Person]) throws -> Int {
        // Handles resolved once, as SQLite prepares its INSERT once: they name columns by ID, which stay
        // valid across transactions (each use is checked against the transaction's schema).
        let handles = try database.read { try personColumns($0) }
        for p in people { try database.write { try insert([p], $0, handles: handles) } }
        return people.count
    }

    func countAge(in range: ClosedRange<Int>) throws -> Int {
        try database.read { s in
            let t = try s.table("Person")
            return try s.count(s.property(t, "age"), in: Int64(range.lowerBound)...Int64(range.upperBound))
        }
    }

    func sumAge(in range: ClosedRange<Int>) throws -> Int {
        try database.read { s in
            let t = try s.table("Person")
            return Int(try s.sum(s.property(t, "age"), in: Int64(range.lowerBound)...Int64(range.upperBound)).sum)
        }
    }

    func lookupNames(_ names: [String]) throws -> Int {
        try database.read { s in
            let t = try s.table("Person")
            let name = try s.property(t, "name")
            let id = try s.property(t, "id")
            var total = 0
            for n in names {
                // `SELECT id FROM Person WHERE name = ?`: the matching ids, read through the index.
                var ids: [Int] = []
                for v in try s.values(id, where: name, equalTo: .string(n)) {
                    if case .int(let i) = v { ids.append(Int(i)) }
                }
                total += ids.count
            }
            return total
        }
    }

    func countCity(_ city: String) throws -> Int {
        try database.read { s in
            let t = try s.table("Person")
            return try s.count(s.property(t, "city"), equalTo: city)
        }
    }

    func lookupAges(ids: [Int]) throws -> Int {
        try database.read { s in
            let t = try s.table("Person")
            let age = try s.property(t, "age")
            var sum = 0
            for id in ids {
                if let k = try s.object(t, primaryKey: .int(Int64(id))), case .int(let a) = try s.value(k, age) { sum += Int(a) }
            }
            return sum
        }
    }

    func iterateAll() throws -> Int {
        try database.read { s in
            let t = try s.table("Person")
            let props = try ["id", "name", "city", "age", "score", "active"].map { try s.property(t, $0) }
            var checksum = PersonChecksum()
            try s.scan(t) { leaf in
                let id = try leaf.column(props[0]), name = try leaf.column(props[1]), city = try leaf.column(props[2])
                let age = try leaf.column(props[3]), score = try leaf.column(props[4]), active = try leaf.column(props[5])
                // The typed reads, as SQLite's `sqlite3_column_*`: every property is required, so none is null.
                for row in 0..<leaf.count {
                    guard let n = try name.string(row), let c = try city.string(row) else { continue }
                    checksum.add(id: Int(id.int(row)), name: n, city: c, age: Int(age.int(row)), score: score.double(row),
                                 active: active.bool(row))
                }
                return true
            }
            return checksum.value
        }
    }

    func incrementAllAges() throws -> Int {
        try database.write { tx in
            let t = try tx.table("Person")
            let age = try tx.property(t, "age")
            return try tx.updateAll(t, age) { v in
                if case .int(let a) = v { return .int(a + 1) }
                return v
            }
        }
    }

    func deleteAll() throws -> Int {
        try database.write { tx in
            let t = try tx.table("Person")
            let n = try tx.count(t)
            try tx.deleteAll(t)
            return n
        }
    }

    func fileSize() throws -> Int {
        var st = stat()
        guard stat(path, &st) == 0 else { return 0 }
        return Int(st.st_size)
    }

    func spaceReport() throws -> String? { try SpaceReport(database: database).text }

    func tearDown() { db = nil }

    // MARK: Queries (RealmQuery)

    func insertDogs(owners: [Int]) throws -> Int {
        try database.write { tx in
            try tx.createClass(ClassSchema(name: "Dog", properties: [
                PropertySchema(name: "name", type: .string), .link("owner", to: "Person"),
            ]))
            let people = try tx.table("Person")
            let t = try tx.table("Dog")
            let columns = try ["name", "owner"].map { try tx.property(t, $0) }
            for (i, o) in owners.enumerated() {
                guard let owner = try tx.object(people, primaryKey: .int(Int64(o))) else { continue }
                try tx.createObject(t, columns: columns, values: [.string("dog-\(i)"), .link(owner)])
            }
        }
        return owners.count
    }

    private func run(_ text: String, on cls: String, _ args: [QueryArgument] = []) throws -> [ObjectKey] {
        try database.read { s in try Query.evaluate(text, on: cls, in: s, arguments: args) }
    }

    func queryAgeRange(_ range: ClosedRange<Int>) throws -> Int {
        try run("age BETWEEN {$0, $1}", on: "Person", [.value(.int(Int64(range.lowerBound))), .value(.int(Int64(range.upperBound)))]).count
    }

    func queryCityContains(_ needle: String) throws -> Int {
        try run("city CONTAINS[c] $0", on: "Person", [.value(.string(needle))]).count
    }

    func queryNames(_ names: [String]) throws -> Int {
        // Prepared once, as SQLite's statement is.
        let q = try PreparedQuery("name == $0", on: "Person")
        return try database.read { s in
            var total = 0
            for n in names { total += try q.evaluate(in: s, arguments: [.value(.string(n))]).count }
            return total
        }
    }

    func queryDogsByOwnerName(_ names: [String]) throws -> Int {
        let q = try PreparedQuery("owner.name == $0", on: "Dog")
        return try database.read { s in
            var total = 0
            for n in names { total += try q.evaluate(in: s, arguments: [.value(.string(n))]).count }
            return total
        }
    }

    func querySortByName() throws -> Int {
        var h: UInt64 = 0
        // A required int primary key is the object key: id + 2^62 (DECISIONS 13).
        for k in try run("TRUEPREDICATE SORT(name ASC)", on: "Person") { h = h &* 31 &+ (k.rawValue &- (1 << 62)) }
        return Int(bitPattern: UInt(h))
    }

    // MARK: Sets, dictionaries and embedded objects

    func insertItems(_ items: [Item]) throws -> Int {
        try database.write { tx in
            try tx.createClasses([
                ClassSchema(name: "Address", properties: [
                    PropertySchema(name: "street", type: .string), PropertySchema(name: "city", type: .string),
                ], isEmbedded: true),
                ClassSchema(name: "Item", properties: [
                    PropertySchema(name: "id", type: .int, isPrimaryKey: true),
                    PropertySchema(name: "tags", type: .string, isIndexed: true, isSet: true),  // as SQLite indexes item_tags.tag
                    PropertySchema(name: "scores", type: .int, isDictionary: true),
                    .link("address", to: "Address"),
                ]),
            ])
            let t = try tx.table("Item")
            let address = try tx.property(t, "address")
            for item in items {
                let k = try tx.createObject(t, ["id": .int(Int64(item.id))], lists: ["tags": item.tags.map { .string($0) }],
                                            dictionaries: ["scores": ValueDictionary(item.scores.map { ($0.key, .int(Int64($0.value))) })])
                try tx.createEmbeddedObject(in: k, address, ["street": .string(item.street), "city": .string(item.city)])
            }
        }
        return items.count
    }

    func queryAnyTag(_ tags: [String]) throws -> Int {
        let q = try PreparedQuery("ANY tags == $0", on: "Item")
        return try database.read { s in
            var total = 0
            for tag in tags { total += try q.evaluate(in: s, arguments: [.value(.string(tag))]).count }
            return total
        }
    }

    func queryScores(key: String, above thresholds: [Int]) throws -> Int {
        let q = try PreparedQuery("scores['\(key)'] > $0", on: "Item")
        return try database.read { s in
            var total = 0
            for v in thresholds { total += try q.evaluate(in: s, arguments: [.value(.int(Int64(v)))]).count }
            return total
        }
    }

    func itemChecksum() throws -> Int {
        try database.read { s in
            guard s.classSchema("Item") != nil else { return 0 }
            var checksum = ItemChecksum()
            let t = try s.table("Item")
            let id = try s.property(t, "id"), tags = try s.property(t, "tags"), scores = try s.property(t, "scores")
            for k in try s.keys(t) {
                guard case .int(let i64) = try s.value(k, id) else { continue }
                let i = Int(i64)
                checksum.addItem(id: i)
                for case .string(let tag) in try s.list(k, tags) { checksum.addTag(id: i, tag) }
                for (key, v) in try s.dictionary(k, scores) { if case .int(let n) = v { checksum.addScore(id: i, key, Int(n)) } }
            }
            // Every address there is, owned or not (none may outlive its item).
            let a = try s.table("Address")
            let street = try s.property(a, "street"), city = try s.property(a, "city")
            for k in try s.keys(a) {
                if case .string(let st) = try s.value(k, street), case .string(let c) = try s.value(k, city) {
                    checksum.addAddress(street: st, city: c)
                }
            }
            return checksum.value
        }
    }

    func deleteItems() throws -> Int {
        try database.write { tx in
            let t = try tx.table("Item")
            let n = try tx.count(t)
            try tx.deleteAll(t)
            return n
        }
    }
}
