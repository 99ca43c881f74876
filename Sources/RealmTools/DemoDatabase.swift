import Foundation
import RealmStorage

/// The demo database: the seeds' models (people, dogs, companies, venues with contacts and locations) with
/// names in English, Japanese, Chinese and Korean, and `AllTypes`, every property type filled with extremes.
/// Deterministic for a seed; objects are written in batches, so ten million need little memory.
public struct DemoDatabase {
    public var objects: Int
    public var seed: UInt64
    public var progress: ((Int, Int) -> Void)?

    public init(objects: Int = 10_000, seed: UInt64 = 1, progress: ((Int, Int) -> Void)? = nil) {
        self.objects = objects
        self.seed = seed
        self.progress = progress
    }

    public static let schema: [ClassSchema] = [
        ClassSchema(name: "Company", properties: [
            PropertySchema(name: "id", type: .objectId, isPrimaryKey: true),
            PropertySchema(name: "name", type: .string, isIndexed: true),
            PropertySchema(name: "founded", type: .date),
            PropertySchema(name: "revenue", type: .decimal128, isOptional: true),
            .linkingObjects("employees", from: "Person", property: "company"),
        ]),
        ClassSchema(name: "Contact", properties: [
            PropertySchema(name: "phone", type: .string, isPrimaryKey: true),
            PropertySchema(name: "twitter", type: .string, isOptional: true),
            .linkingObjects("venues", from: "Venue", property: "contact"),
        ]),
        ClassSchema(name: "Location", properties: [
            PropertySchema(name: "lat", type: .double),
            PropertySchema(name: "lng", type: .double),
            PropertySchema(name: "postalCode", type: .string),
            PropertySchema(name: "cc", type: .string),
            PropertySchema(name: "state", type: .string),
            PropertySchema(name: "country", type: .string),
        ]),
        ClassSchema(name: "Venue", properties: [
            PropertySchema(name: "id", type: .string, isPrimaryKey: true),
            PropertySchema(name: "name", type: .string, isIndexed: true),
            .link("contact", to: "Contact"),
            .link("location", to: "Location"),
            PropertySchema(name: "tags", type: .string, isList: true),
            .linkingObjects("regulars", from: "Person", property: "favoriteVenue"),
        ]),
        ClassSchema(name: "Person", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "name", type: .string, isIndexed: true),
            PropertySchema(name: "age", type: .int, isOptional: true),
            PropertySchema(name: "email", type: .string, isOptional: true),
            PropertySchema(name: "birthday", type: .date),
            PropertySchema(name: "languages", type: .string, isList: true),
            .list("dogs", of: "Dog"),
            .link("company", to: "Company"),
            .link("favoriteVenue", to: "Venue"),
            .linkingObjects("ownedDogs", from: "Dog", property: "owner"),
        ]),
        ClassSchema(name: "Dog", properties: [
            PropertySchema(name: "name", type: .string, isIndexed: true),
            PropertySchema(name: "breed", type: .string, isOptional: true),
            PropertySchema(name: "age", type: .int),
            PropertySchema(name: "weight", type: .double),
            PropertySchema(name: "vaccinated", type: .bool),
            .link("owner", to: "Person"),
            .linkingObjects("owners", from: "Person", property: "dogs"),
        ]),
        ClassSchema(name: "AllTypes", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "bool", type: .bool),
            PropertySchema(name: "int", type: .int, isIndexed: true),
            PropertySchema(name: "float", type: .float),
            PropertySchema(name: "double", type: .double),
            PropertySchema(name: "string", type: .string),
            PropertySchema(name: "data", type: .data),
            PropertySchema(name: "date", type: .date),
            PropertySchema(name: "objectId", type: .objectId),
            PropertySchema(name: "uuid", type: .uuid),
            PropertySchema(name: "decimal", type: .decimal128),
            PropertySchema(name: "mixed", type: .mixed, isOptional: true),
            PropertySchema(name: "optBool", type: .bool, isOptional: true),
            PropertySchema(name: "optInt", type: .int, isOptional: true),
            PropertySchema(name: "optFloat", type: .float, isOptional: true),
            PropertySchema(name: "optDouble", type: .double, isOptional: true),
            PropertySchema(name: "optString", type: .string, isOptional: true),
            PropertySchema(name: "optData", type: .data, isOptional: true),
            PropertySchema(name: "optDate", type: .date, isOptional: true),
            PropertySchema(name: "optObjectId", type: .objectId, isOptional: true),
            PropertySchema(name: "optUUID", type: .uuid, isOptional: true),
            PropertySchema(name: "optDecimal", type: .decimal128, isOptional: true),
            PropertySchema(name: "ints", type: .int, isList: true),
            PropertySchema(name: "strings", type: .string, isList: true),
            PropertySchema(name: "optDoubles", type: .double, isOptional: true, isList: true),
            .link("person", to: "Person"),
            PropertySchema(name: "intSet", type: .int, isSet: true),
            PropertySchema(name: "stringSet", type: .string, isSet: true),
            .set("dogSet", of: "Dog"),
            PropertySchema(name: "scores", type: .int, isOptional: true, isDictionary: true),
            PropertySchema(name: "anyMap", type: .mixed, isOptional: true, isDictionary: true),
            .link("address", to: "Address"),
        ]),
        ClassSchema(name: "Address", properties: [
            PropertySchema(name: "street", type: .string),
            PropertySchema(name: "city", type: .string, isIndexed: false),
            PropertySchema(name: "postalCode", type: .string, isOptional: true),
        ], isEmbedded: true),
    ]

    /// How many objects of each class: every class scales with `objects`.
    public var counts: [String: Int] {
        let n = max(objects, 7)
        func share(_ f: Double) -> Int { max(1, Int(Double(n) * f)) }
        var c = ["Company": share(0.02), "Contact": share(0.06), "Location": share(0.08), "Venue": share(0.08),
                 "Person": share(0.30), "Dog": share(0.40)]
        c["AllTypes"] = max(1, n - c.values.reduce(0, +))
        c["Address"] = 0  // embedded: made with their AllTypes owners
        return c
    }

    /// Writes the demo into an empty (or new) database.
    public func generate(into db: Database) throws {
        let counts = self.counts
        let total = counts.values.reduce(0, +) + counts["Person"]!  // people get their dogs in a second pass
        var done = 0
        var rng = SplitMix64(seed: seed)
        let batch = 50_000
        try ToolError.wrap {
            try db.write { tx in
                if !tx.schema.isEmpty { throw ToolError.invalidArgument("\(db.path) already holds classes; the demo needs an empty database (use --force to replace the file)") }
                try tx.createClasses(DemoDatabase.schema)
            }
        }
        func tick(_ n: Int = 1) {
            done += n
            if done % 4096 == 0 || done == total { progress?(done, total) }
        }
        // Writes `count` objects of a class in transactions of `batch`, collecting their keys.
        func fill(_ className: String, _ count: Int, _ make: (Int, inout SplitMix64) throws -> [String: Value],
                  lists: ((Int, inout SplitMix64) -> [String: [Value]])? = nil) throws -> [ObjectKey] {
            var keys: [ObjectKey] = []
            keys.reserveCapacity(count)
            var i = 0
            while i < count {
                let end = min(i + batch, count)
                try ToolError.wrap {
                    try db.write { tx in
                        let t = try tx.table(className)
                        for n in i..<end {
                            let values = try make(n, &rng)
                            keys.append(try tx.createObject(t, values, lists: lists?(n, &rng) ?? [:]))
                            tick()
                        }
                    }
                }
                i = end
            }
            return keys
        }

        let companies = try fill("Company", counts["Company"]!) { n, r in
            [
                "id": .objectId(DemoDatabase.objectId(n, &r)),
                "name": .string(DemoText.company(n, &r)),
                "founded": .date(Timestamp(seconds: Int64(r.below(4_000_000_000)) - 1_500_000_000)),
                "revenue": n % 5 == 0 ? .null : .decimal128(Decimal128(string: "\(r.below(10_000_000)).\(r.below(100))") ?? .zero),
            ]
        }
        let contacts = try fill("Contact", counts["Contact"]!) { n, r in
            ["phone": .string(String(format: "+1-415-%03d-%04d", (n / 10000) % 1000, n % 10000)),
             "twitter": r.below(3) == 0 ? .null : .string("@" + DemoText.handle(n, &r))]
        }
        let locations = try fill("Location", counts["Location"]!) { n, r in
            let place = DemoText.places[r.below(DemoText.places.count)]
            return ["lat": .double(place.lat + Double(r.below(2000)) / 10000 - 0.1),
                    "lng": .double(place.lng + Double(r.below(2000)) / 10000 - 0.1),
                    "postalCode": .string(String(format: "%05d", r.below(100_000))),
                    "cc": .string(place.cc), "state": .string(place.state), "country": .string(place.country)]
        }
        let venues = try fill("Venue", counts["Venue"]!, { n, r in
            [
                "id": .string(String(format: "%024x", n &* 2_654_435_761 &+ 0x4c82f252)),
                "name": .string(DemoText.venue(n, &r)),
                "contact": .link(contacts[r.below(contacts.count)]),
                "location": .link(locations[n % locations.count]),
            ]
        }, lists: { _, r in ["tags": (0..<r.below(4)).map { _ in .string(DemoText.tags[r.below(DemoText.tags.count)]) }] })
        let personCount = counts["Person"]!
        let people = try fill("Person", personCount, { n, r in
            [
                "id": .int(Int64(n)),
                "name": .string(DemoText.person(n, &r)),
                "age": n % 11 == 0 ? .null : .int(Int64(r.below(95) + 1)),
                "email": n % 4 == 0 ? .null : .string("user\(n)@example.com"),
                "birthday": .date(Timestamp(seconds: Int64(r.below(3_000_000_000)) - 2_000_000_000, nanoseconds: Int32(r.below(1_000_000_000)))),
                "company": r.below(5) == 0 ? .null : .link(companies[r.below(companies.count)]),
                "favoriteVenue": r.below(3) == 0 ? .null : .link(venues[r.below(venues.count)]),
            ]
        }, lists: { _, r in ["languages": DemoText.languages(&r).map { .string($0) }] })
        let dogCount = counts["Dog"]!
        // Dog n belongs to person n * people / dogs, so each person's dogs are a run of consecutive dogs.
        let dogs = try fill("Dog", dogCount) { n, r in
            [
                "name": .string(DemoText.dog(n, &r)),
                "breed": n % 6 == 0 ? .null : .string(DemoText.breeds[r.below(DemoText.breeds.count)]),
                "age": .int(Int64(r.below(18))),
                "weight": .double(Double(r.below(800)) / 10 + 1),
                "vaccinated": .bool(r.below(4) != 0),
                "owner": n % 9 == 8 ? .null : .link(people[n * personCount / dogCount]),
            ]
        }
        // People's dog lists: the dogs they own (skipping the strays), in transactions of `batch`.
        var p = 0
        var d = 0
        while p < personCount {
            let end = min(p + batch, personCount)
            try ToolError.wrap {
                try db.write { tx in
                    let t = try tx.table("Person")
                    let h = try tx.property(t, "dogs")
                    for q in p..<end {
                        var mine: [Value] = []
                        while d < dogCount && d * personCount / dogCount == q {
                            if d % 9 != 8 { mine.append(.link(dogs[d])) }
                            d += 1
                        }
                        if !mine.isEmpty { try tx.setList(people[q], h, mine) }
                        tick()
                    }
                }
            }
            p = end
        }
        let all = try fill("AllTypes", counts["AllTypes"]!) { n, r in try DemoDatabase.allTypes(n, &r, people) }
        try collections(db, all, dogs, &rng)
        progress?(total, total)
    }

    /// Sets, dictionaries, an embedded address and mixed values holding links and nested collections for the
    /// `AllTypes` objects (Realm's whole data model in the demo).
    func collections(_ db: Database, _ all: [ObjectKey], _ dogs: [ObjectKey], _ r: inout SplitMix64) throws {
        let subjects = ["math", "art", "日本語", "한국어", "中文", "music 🎵"]
        let cities = ["Tokyo", "東京", "서울", "北京", "Zürich", "San Francisco"]
        var i = 0
        while i < all.count {
            let end = min(i + 50_000, all.count)
            try ToolError.wrap {
                try db.write { tx in
                    let t = try tx.table("AllTypes")
                    let h = { (name: String) in try tx.property(t, name) }
                    let (intSet, stringSet, dogSet, scores, anyMap, address, mixed) =
                        (try h("intSet"), try h("stringSet"), try h("dogSet"), try h("scores"), try h("anyMap"), try h("address"), try h("mixed"))
                    let dogID = tx.classID(named: "Dog")!
                    for n in i..<end {
                        let k = all[n]
                        try tx.setAssign(k, intSet, (0..<r.below(6)).map { _ in .int(Int64(r.below(20)) - 5) })
                        try tx.setAssign(k, stringSet, (0..<r.below(4)).map { _ in .string(DemoText.tags[r.below(DemoText.tags.count)]) })
                        if !dogs.isEmpty { try tx.setAssign(k, dogSet, (0..<r.below(3)).map { _ in .link(dogs[r.below(dogs.count)]) }) }
                        var d = ValueDictionary()
                        for _ in 0..<r.below(4) { d[subjects[r.below(subjects.count)]] = r.below(5) == 0 ? .null : .int(Int64(r.below(101))) }
                        try tx.setDictionary(k, scores, d)
                        var m = ValueDictionary()
                        if n % 3 == 0 {
                            m["count"] = .int(Int64(n))
                            m["label"] = .string(DemoText.dog(n, &r))
                            m["nested"] = .list([.bool(n % 2 == 0), .double(Double(n) / 7), .dictionary(ValueDictionary([("depth", .int(2))]))])
                            if !dogs.isEmpty { m["dog"] = .typedLink(classID: dogID, key: dogs[n % dogs.count]) }
                        }
                        try tx.setDictionary(k, anyMap, m)
                        if n % 3 != 2 {
                            try tx.createEmbeddedObject(in: k, address, ["street": .string("\(1 + r.below(99))-\(1 + r.below(30)) Main St"),
                                                                          "city": .string(cities[r.below(cities.count)]),
                                                                          "postalCode": n % 4 == 0 ? .null : .string(String(format: "%05d", r.below(100_000)))])
                        }
                        // Some mixed values hold a link or a collection instead of a scalar.
                        switch n % 10 {
                        case 7 where !dogs.isEmpty: try tx.set(k, mixed, .typedLink(classID: dogID, key: dogs[(n * 7) % dogs.count]))
                        case 8: try tx.set(k, mixed, .list([.int(Int64(n)), .string("二"), .list([.null, .bool(true)])]))
                        case 9: try tx.set(k, mixed, .dictionary(ValueDictionary([("n", .int(Int64(n))), ("tags", .list([.string("a"), .string("b")]))])))
                        default: break
                        }
                    }
                }
            }
            i = end
        }
    }

    static func objectId(_ n: Int, _ r: inout SplitMix64) -> ObjectId {
        var bytes = [UInt8](repeating: 0, count: 12)
        let t = UInt32(1_400_000_000 + n)
        bytes[0] = UInt8(t >> 24); bytes[1] = UInt8((t >> 16) & 0xFF); bytes[2] = UInt8((t >> 8) & 0xFF); bytes[3] = UInt8(t & 0xFF)
        for i in 4..<12 { bytes[i] = UInt8(truncatingIfNeeded: r.next()) }
        return ObjectId(byteArray: bytes)
    }

    /// One `AllTypes` object: the first ones hold the extremes, the rest vary.
    static func allTypes(_ n: Int, _ r: inout SplitMix64, _ people: [ObjectKey]) throws -> [String: Value] {
        let ints: [Int64] = [.min, .max, 0, -1, 1, Int64(Int32.min), Int64(Int32.max)]
        let doubles: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -1.5]
        let floats: [Float] = [.nan, .infinity, -.infinity, 0, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 3.25]
        let strings = ["", String(repeating: "長い文字列🐶", count: 1429) + "end", DemoText.rightToLeft, "tab\tnew\nline \"quoted\" \\",
                       "e\u{301}", "👩‍👩‍👧‍👦🏳️‍🌈", "한국어 텍스트", "中文文本", "日本語のテキスト"]
        let dates = [Timestamp(seconds: -2_208_988_800, nanoseconds: 0), Timestamp(seconds: -1, nanoseconds: -1),
                     Timestamp(seconds: 0), Timestamp(seconds: 2_147_483_648, nanoseconds: 123_456_789),
                     Timestamp(seconds: 32_503_680_000, nanoseconds: 999_999_999), Timestamp(seconds: -62_135_596_800)]
        let blobSizes = [0, 1, 16, 4096, 65_536, 1 << 20]
        var blob = [UInt8](repeating: 0, count: n < blobSizes.count ? blobSizes[n] : r.below(64))
        for i in blob.indices { blob[i] = UInt8(truncatingIfNeeded: r.next()) }
        let mixed: [Value] = [.null, .int(42), .string("mixed ✓"), .double(2.5), .bool(true),
                              .date(Timestamp(seconds: 1_700_000_000)), .objectId(.zero), .data([1, 2, 3])]
        func pick<T>(_ a: [T]) -> T { n < a.count ? a[n] : a[r.below(a.count)] }
        let nullable = n % 2 == 1
        return [
            "id": .int(Int64(n)),
            "bool": .bool(n % 2 == 0),
            "int": .int(n < ints.count ? ints[n] : Int64(bitPattern: r.next()) >> Int64(r.below(60))),
            "float": .float(pick(floats)),
            "double": .double(pick(doubles)),
            "string": .string(n < strings.count ? strings[n] : DemoText.person(n, &r)),
            "data": .data(blob),
            "date": .date(pick(dates)),
            "objectId": .objectId(objectId(n, &r)),
            "uuid": .uuid(UUID(uuid: (UInt8(n & 0xFF), UInt8((n >> 8) & 0xFF), 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: r.next())))),
            "decimal": .decimal128(Decimal128(string: pick(["0", "-1.5", "123456789012345678901234567890123", "1E-6143", "9.999999999999999999999999999999999E+6144", "NaN"])) ?? .zero),
            "mixed": pick(mixed),
            "optBool": nullable ? .null : .bool(true),
            "optInt": nullable ? .null : .int(pick(ints)),
            "optFloat": nullable ? .null : .float(pick(floats)),
            "optDouble": nullable ? .null : .double(pick(doubles)),
            "optString": nullable ? .null : .string(n < strings.count ? strings[strings.count - 1 - n] : DemoText.dog(n, &r)),
            "optData": nullable ? .null : .data([]),
            "optDate": nullable ? .null : .date(pick(dates)),
            "optObjectId": nullable ? .null : .objectId(.zero),
            "optUUID": nullable ? .null : .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
            "optDecimal": nullable ? .null : .decimal128(.zero),
            "person": people.isEmpty || n % 3 == 0 ? .null : .link(people[r.below(people.count)]),
        ]
    }
}

/// Names and words for the demo, in the seeds' languages.
enum DemoText {
    static let givenEn = ["Ann", "Bob", "Chloé", "David", "Émile", "Fatima", "George", "Hannah", "Igor", "Jules", "Zoë", "Lars", "Mei", "Noor", "Oskar", "Priya"]
    static let familyEn = ["Smith", "García", "Müller", "O'Brien", "Nguyen", "Kowalski", "Johansson", "Rossi", "Dubois", "Ivanov"]
    static let ja = ["佐藤 花子", "鈴木 一郎", "高橋 美咲", "田中 太郎", "渡辺 直美", "伊藤 健", "山本 さくら", "中村 翔"]
    static let zh = ["王芳", "李娜", "张伟", "刘洋", "陈静", "杨磊", "赵敏", "黄晓明"]
    static let ko = ["김민준", "이서연", "박지훈", "최수아", "정우진", "강하은", "조예준", "윤지우"]
    static let dogNames = ["Rex", "Fido", "Bella", "Max", "ポチ", "ハチ", "旺财", "小白", "바둑이", "초코", "Luna 🐶", "Biscuit"]
    static let breeds = ["Shiba Inu", "柴犬", "Golden Retriever", "Jindo (진돗개)", "Pekingese 京巴", "Beagle", "Dachshund", "Mixed"]
    static let tags = ["park", "café", "公園", "カフェ", "博物馆", "맛집", "view 🌉", "dog-friendly 🐕"]
    static let rightToLeft = "مرحبا بالعالم — שלום עולם"
    static let places: [(lat: Double, lng: Double, cc: String, state: String, country: String)] = [
        (37.7738, -122.4196, "US", "California", "United States"), (35.6762, 139.6503, "JP", "東京都", "日本"),
        (39.9042, 116.4074, "CN", "北京市", "中国"), (37.5665, 126.9780, "KR", "서울특별시", "대한민국"),
        (48.8566, 2.3522, "FR", "Île-de-France", "France"),
    ]

    static func person(_ n: Int, _ r: inout SplitMix64) -> String {
        switch n % 5 {
        case 0, 1: return "\(givenEn[r.below(givenEn.count)]) \(familyEn[r.below(familyEn.count)])"
        case 2: return ja[r.below(ja.count)]
        case 3: return zh[r.below(zh.count)]
        default: return ko[r.below(ko.count)]
        }
    }

    static func dog(_ n: Int, _ r: inout SplitMix64) -> String { dogNames[r.below(dogNames.count)] }

    static func company(_ n: Int, _ r: inout SplitMix64) -> String {
        let names = ["Acme", "Globex", "株式会社さくら", "华为科技", "삼성전자", "Initech", "Umbrella", "Stark Industries", "任天堂", "Hooli"]
        return "\(names[n % names.count]) \(n / names.count + 1)"
    }

    static func venue(_ n: Int, _ r: inout SplitMix64) -> String {
        let names = ["Golden Gate Park", "Ferry Building", "上野動物園", "天安门广场", "경복궁", "Café de Flore", "Blue Bottle", "Shibuya Crossing 🚦"]
        return n < names.count ? names[n] : "\(names[n % names.count]) #\(n / names.count)"
    }

    static func handle(_ n: Int, _ r: inout SplitMix64) -> String { "venue\(n)_\(r.below(1000))" }

    static func languages(_ r: inout SplitMix64) -> [String] {
        let all = ["en", "ja", "zh", "ko", "fr", "es"]
        return (0..<r.below(3)).map { _ in all[r.below(all.count)] }
    }
}

/// A small deterministic PRNG (SplitMix64), for demo data and seeded tests.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in 0..<n (0 when n ≤ 0).
    public mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
}
