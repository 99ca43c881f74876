// The contract between the benchmark harness and the two databases it compares,
// plus the deterministic data both are fed.
//
// Every workload method does exactly the work that is timed and nothing else:
// inputs (the rows to insert, the names and ids to look up) are built by the
// harness beforehand, and checks of the resulting state run afterwards, outside
// the clock. Each method returns a result that must be identical for both
// targets; the harness prints MISMATCH when they differ.

/// One database under test. The harness calls, in order:
/// `setUp`, `insertAll`, the workloads it was asked for, `tearDown`.
///
/// A target is used from one thread only. Write workloads are each one
/// durable transaction (fsync'ed before returning), except `insertOneByOne`,
/// which is one durable transaction per object.
protocol BenchTarget: AnyObject {
    /// Short name for progress lines and error messages, e.g. "sqlite".
    var name: String { get }

    /// Opens (creating) a database in `directory`, an empty directory that
    /// belongs to this target alone. Not timed. Nothing is created yet: the
    /// schema belongs to `insertAll` unless the engine can only declare it
    /// when opening.
    func setUp(directory: String) throws

    /// Query workloads (RealmQuery on the engine, the equivalent SQL on SQLite). `insertDogs` creates a
    /// `Dog` class (name, owner → Person; SQLite: an index on `owner`, as backlinks index it here) with dog
    /// `i` owned by person `owners[i]`.
    func insertDogs(owners: [Int]) throws -> Int
    /// The ids of people with age in the range, collected (`age BETWEEN {lo, hi}`): their number.
    func queryAgeRange(_ range: ClosedRange<Int>) throws -> Int
    /// `city CONTAINS[c] needle` (ASCII needle; SQLite `LIKE '%needle%'`): the number of ids.
    func queryCityContains(_ needle: String) throws -> Int
    /// `name == $0` for each name, the query prepared once: total ids.
    func queryNames(_ names: [String]) throws -> Int
    /// `owner.name == $0` on Dog for each name: total dogs.
    func queryDogsByOwnerName(_ names: [String]) throws -> Int
    /// Every person sorted by name (ties by id): a checksum of the ids in order.
    func querySortByName() throws -> Int

    /// Workloads over sets, dictionaries and embedded objects. `insertItems` creates the `Item` class (id
    /// primary key, `tags` a set of strings, `scores` a dictionary of ints, `address` an embedded `Address
    /// {street, city}`; SQLite: `item`, a join table `item_tags` indexed by tag, `item_scores`, and a child
    /// table `item_address`) and inserts `items` in ONE transaction. Returns the number of items.
    func insertItems(_ items: [Item]) throws -> Int
    /// `ANY tags == $0` for each tag, the query prepared once: the total number of ids collected.
    func queryAnyTag(_ tags: [String]) throws -> Int
    /// `scores['key'] > $0` for each threshold, the query prepared once: the total number of ids collected.
    func queryScores(key: String, above thresholds: [Int]) throws -> Int
    /// Untimed check of the items: an `ItemChecksum` over every item, set element, dictionary entry and
    /// address there is (0 when there are none).
    func itemChecksum() throws -> Int
    /// Workload `delete items`: one transaction deleting every item with its set, dictionary and embedded
    /// address. Returns the number of items deleted.
    func deleteItems() throws -> Int

    /// Workload `insert N`: creates the `Person` schema (id primary key, name
    /// indexed, city not indexed, age, score, active) and inserts `people` in
    /// ONE transaction, the index maintained while inserting.
    /// Returns the number of objects inserted.
    func insertAll(_ people: [Person]) throws -> Int

    /// Workload `10k single commits`: one transaction per element of `people`,
    /// each inserting that one object and committing durably.
    /// Returns the number of commits.
    func insertOneByOne(_ people: [Person]) throws -> Int

    /// Workloads `count range` and (untimed) state checks: the number of
    /// objects whose age lies in `range`.
    func countAge(in range: ClosedRange<Int>) throws -> Int

    /// Workload `sum range` and (untimed) state checks: the sum of `age` over
    /// the objects whose age lies in `range` (0 when there are none).
    func sumAge(in range: ClosedRange<Int>) throws -> Int

    /// Workload `indexed string eq`: for each element of `names`, a query
    /// `name == element` using the index, collecting the ids of the matching
    /// objects into an array. Returns the total number of ids collected.
    func lookupNames(_ names: [String]) throws -> Int

    /// Workload `non-indexed string eq`: the number of objects whose city is
    /// `city` (a full scan: city has no index).
    func countCity(_ city: String) throws -> Int

    /// Workload `primary key lookup`: for each id in `ids`, finds the object
    /// by primary key and reads its `age`. Returns the sum of the ages read
    /// (an id without an object contributes nothing).
    func lookupAges(ids: [Int]) throws -> Int

    /// Workload `iterate all`: reads every property of every object as the
    /// Swift values an application would use (Int, String, Double, Bool) and
    /// feeds each object to a `PersonChecksum`. Returns `checksum.value`.
    /// The checksum does not depend on the order of iteration.
    func iterateAll() throws -> Int

    /// Workload `update all`: one transaction setting `age = age + 1` on every
    /// object. Returns the number of objects updated.
    func incrementAllAges() throws -> Int

    /// Workload `delete all`: one transaction deleting every object.
    /// Returns the number of objects deleted.
    func deleteAll() throws -> Int

    /// Bytes the database occupies with all committed data in its main file.
    /// Called right after `insertAll`; not timed.
    func fileSize() throws -> Int

    /// Where the file's space goes (`SpaceReport`), for `--space`; nil when the target cannot tell.
    func spaceReport() throws -> String?

    /// Closes the database. The harness then deletes the directory.
    func tearDown()

    /// One line on the settings in force (durability, caches), printed in the
    /// report header after `setUp`. Defaults to nothing.
    func settingsDescription() -> String?
}

extension BenchTarget {
    func settingsDescription() -> String? { nil }
}

/// One row of the benchmark data set.
struct Person: Sendable, Equatable {
    var id: Int
    var name: String
    var city: String
    var age: Int
    var score: Double
    var active: Bool
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed 64-bit generator.
/// Written out here so every run and every target sees the same data.
struct SplitMix64: Sendable {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SplitMix64.mix(state)
    }

    /// A uniform-enough value in `0..<bound` (modulo bias is below 2^-40 for
    /// the bounds used here).
    mutating func next(below bound: Int) -> Int {
        Int(truncatingIfNeeded: next() % UInt64(bound))
    }

    /// The SplitMix64 finaliser on its own, also used to mix checksums.
    @inline(__always)
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The deterministic source of `Person` rows. Row `id` depends only on the
/// seed and `id` (it draws SplitMix64 outputs number 3*id ..< 3*id+3 of the
/// stream), so any range of ids can be generated on its own.
struct PeopleGenerator: Sendable {
    /// Distinct values of `name`: row `id` is named "name-\(id % nameCount)",
    /// so at 1,000,000 objects each name matches 20 objects.
    static let nameCount = 50_000

    let seed: UInt64

    init(seed: UInt64 = 0x5EED_0FBE_7C4A_1100) {
        precondition(Set(Cities.all).count == Cities.all.count, "duplicate city name")
        self.seed = seed
    }

    func person(id: Int) -> Person {
        var rng = SplitMix64(seed: seed &+ UInt64(truncatingIfNeeded: id) &* 3 &* 0x9E37_79B9_7F4A_7C15)
        let a = rng.next(), b = rng.next(), c = rng.next()
        return Person(
            id: id,
            name: "name-\(id % PeopleGenerator.nameCount)",
            city: Cities.all[Int(truncatingIfNeeded: b % UInt64(Cities.all.count))],
            age: Int(truncatingIfNeeded: a % 100),
            score: Double(c >> 11) * 0x1p-53 * 1000,  // [0, 1000), 53 random bits
            active: a >> 63 == 1
        )
    }

    /// The rows with the given ids, materialised so generation is not timed.
    func people(_ ids: Range<Int>) -> [Person] {
        var result: [Person] = []
        result.reserveCapacity(ids.count)
        for id in ids { result.append(person(id: id)) }
        return result
    }
}

/// The values of `city`: 100 names, some non-ASCII so string comparison is
/// exercised on multi-byte UTF-8 (all in NFC, written with escapes where the
/// precomposed form matters).
enum Cities {
    /// The city counted by `non-indexed string eq`.
    static let zurich = "Z\u{FC}rich"

    static let all: [String] = [
        "Amsterdam", "Athens", "Auckland", "Bangkok", "Barcelona",
        "Beijing", "Berlin", "Bogot\u{E1}", "Boston", "Brussels",
        "Budapest", "Buenos Aires", "Cairo", "Cape Town", "Chicago",
        "Copenhagen", "Dallas", "Delhi", "Denver", "Dubai",
        "Dublin", "D\u{FC}sseldorf", "Edinburgh", "Frankfurt", "Geneva",
        "Gothenburg", "Hamburg", "Hanoi", "Helsinki", "Hong Kong",
        "Houston", "Istanbul", "Jakarta", "Johannesburg", "Karachi",
        "Krak\u{F3}w", "Kyiv", "Lagos", "Lima", "Lisbon",
        "London", "Los Angeles", "Lyon", "Madrid", "Malm\u{F6}",
        "Manila", "Marseille", "Melbourne", "Mexico City", "Miami",
        "Milan", "Montr\u{E9}al", "Moscow", "Mumbai", "Munich",
        "Nairobi", "Naples", "New York", "Nice", "Oslo",
        "Paris", "Perth", "Philadelphia", "Porto", "Prague",
        "Reykjav\u{ED}k", "Riga", "Rio de Janeiro", "Rome", "Santiago",
        "S\u{E3}o Paulo", "Seattle", "Seoul", "Shanghai", "Singapore",
        "Stockholm", "Sydney", "Taipei", "Tallinn", "Tel Aviv",
        "Toronto", "Valencia", "Vancouver", "Vienna", "Vilnius",
        "Warsaw", "Washington", "Wellington", "Z\u{FC}rich", "\u{6771}\u{4EAC}",  // 東京
        "\u{5927}\u{962A}", "\u{4EAC}\u{90FD}", "\u{5317}\u{4EAC}", "\u{4E0A}\u{6D77}", "\u{C11C}\u{C6B8}",  // 大阪 京都 北京 上海 서울
        "\u{041C}\u{043E}\u{0441}\u{043A}\u{0432}\u{0430}", "\u{0130}zmir", "\u{00C5}rhus", "K\u{00F6}ln", "N\u{00FC}rnberg",  // Москва İzmir Århus Köln Nürnberg
    ]
}

/// Order-independent checksum of whole objects, shared by both targets so
/// `iterate all` results are comparable: each object hashes to a 64-bit value
/// and the values are added with wrap-around.
struct PersonChecksum {
    private(set) var sum: UInt64 = 0

    var value: Int { Int(bitPattern: UInt(sum)) }

    @inline(__always)
    mutating func add(id: Int, name: String, city: String, age: Int, score: Double, active: Bool) {
        var h = SplitMix64.mix(UInt64(bitPattern: Int64(id)))
        h = SplitMix64.mix(h ^ PersonChecksum.fnv1a(name))
        h = SplitMix64.mix(h ^ PersonChecksum.fnv1a(city))
        h = SplitMix64.mix(h ^ UInt64(bitPattern: Int64(age)))
        h = SplitMix64.mix(h ^ score.bitPattern)
        h = SplitMix64.mix(h ^ (active ? 1 : 2))
        sum &+= h
    }

    /// FNV-1a over the string's UTF-8 bytes, read where they lie (inside the `String` for a short one):
    /// iterating `s.utf8` asked the string for each byte in turn, about 45 ns a string, the same on both sides.
    @inline(__always)
    static func fnv1a(_ s: String) -> UInt64 {
        if let h = s.utf8.withContiguousStorageIfAvailable({ fnv1a(bytes: $0) }) { return h }
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in s.utf8 { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return h
    }

    @inline(__always)
    static func fnv1a(bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}

/// One row of the workloads over sets, dictionaries and embedded objects: five distinct tags, five distinct
/// dictionary keys with int values, and an address.
struct Item: Sendable, Equatable {
    var id: Int
    var tags: [String]
    var scores: [(key: String, value: Int)]
    var street: String
    var city: String

    static func == (a: Item, b: Item) -> Bool {
        a.id == b.id && a.tags == b.tags && a.street == b.street && a.city == b.city
            && a.scores.map(\.key) == b.scores.map(\.key) && a.scores.map(\.value) == b.scores.map(\.value)
    }
}

/// The deterministic source of `Item` rows; item `id` depends only on the seed and `id`.
struct ItemGenerator: Sendable {
    /// Distinct tags ("tag-0" ...): each item has 5, so each tag is on about 10 % of the items.
    static let tagCount = 50
    /// Distinct dictionary keys ("k0" ...): each item has 5, so each key is in about half of the dictionaries.
    static let keyCount = 10
    static let perItem = 5

    let seed: UInt64

    func item(id: Int) -> Item {
        var rng = SplitMix64(seed: seed &+ UInt64(truncatingIfNeeded: id) &* 0xA076_1D64_78BD_642F)
        var tags: [Int] = []
        while tags.count < Self.perItem {
            let t = rng.next(below: Self.tagCount)
            if !tags.contains(t) { tags.append(t) }
        }
        var keys: [Int] = []
        while keys.count < Self.perItem {
            let k = rng.next(below: Self.keyCount)
            if !keys.contains(k) { keys.append(k) }
        }
        return Item(id: id, tags: tags.map { "tag-\($0)" }, scores: keys.map { (key: "k\($0)", value: rng.next(below: 1_000)) },
                    street: "\(rng.next(below: 500)) street \(id)", city: Cities.all[rng.next(below: Cities.all.count)])
    }

    func items(_ ids: Range<Int>) -> [Item] { ids.map(item(id:)) }
}

/// Order-independent checksum of items and their collections, fed element by element in any order: both
/// targets add the same terms.
struct ItemChecksum {
    private(set) var sum: UInt64 = 0

    var value: Int { Int(bitPattern: UInt(sum)) }

    mutating func addItem(id: Int) { sum &+= SplitMix64.mix(UInt64(bitPattern: Int64(id)) ^ 0x1111) }

    mutating func addTag(id: Int, _ tag: String) {
        sum &+= SplitMix64.mix(SplitMix64.mix(UInt64(bitPattern: Int64(id)) ^ 0x2222) ^ PersonChecksum.fnv1a(tag))
    }

    mutating func addScore(id: Int, _ key: String, _ value: Int) {
        let h = SplitMix64.mix(SplitMix64.mix(UInt64(bitPattern: Int64(id)) ^ 0x3333) ^ PersonChecksum.fnv1a(key))
        sum &+= SplitMix64.mix(h ^ UInt64(bitPattern: Int64(value)))
    }

    mutating func addAddress(street: String, city: String) {
        sum &+= SplitMix64.mix(SplitMix64.mix(PersonChecksum.fnv1a(street) ^ 0x4444) ^ PersonChecksum.fnv1a(city))
    }
}

extension BenchTarget {
    func spaceReport() throws -> String? { nil }
}
