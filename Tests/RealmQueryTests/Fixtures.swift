import Foundation
import RealmStorage
@testable import RealmQuery
import TestSupport

/// The plain Swift model the corpus is checked against, and the same data written to a database.
struct PersonModel {
    var id: Int64
    var name: String
    var nickname: String?
    var age: Int64
    var ageOpt: Int64?
    var big: Int64
    var height: Double
    var weight: Float?
    var active: Bool
    var born: Timestamp
    var bornOpt: Timestamp?
    var oid: ObjectId?
    var uid: UUID?
    var blob: [UInt8]?
    var buddy: Int?
    var dogs: [Int]
    var scores: [Int64]
    var tags: [String]
    /// A decimal128 (its text; nil for null) and a list of decimals.
    var balance: String?
    var amounts: [String]
    /// A mixed value (scalars of every type, numbers of every kind) and a list of mixed values.
    var mixed: Value
    var mixes: [Value]
}

struct DogModel {
    var name: String
    var age: Int64
    var weight: Double?
    var owner: Int?
}

let fixtureSchema: [ClassSchema] = [
    ClassSchema(name: "Person", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "name", type: .string, isIndexed: true),
        PropertySchema(name: "nickname", type: .string, isOptional: true),
        PropertySchema(name: "age", type: .int, isIndexed: true),
        PropertySchema(name: "ageOpt", type: .int, isOptional: true),
        PropertySchema(name: "big", type: .int),
        PropertySchema(name: "height", type: .double),
        PropertySchema(name: "weight", type: .float, isOptional: true),
        PropertySchema(name: "active", type: .bool),
        PropertySchema(name: "born", type: .date),
        PropertySchema(name: "bornOpt", type: .date, isOptional: true),
        PropertySchema(name: "oid", type: .objectId, isOptional: true),
        PropertySchema(name: "uid", type: .uuid, isOptional: true),
        PropertySchema(name: "blob", type: .data, isOptional: true),
        .link("buddy", to: "Person"),
        .list("dogs", of: "Dog"),
        PropertySchema(name: "scores", type: .int, isList: true),
        PropertySchema(name: "tags", type: .string, isList: true),
        PropertySchema(name: "balance", type: .decimal128, isOptional: true),
        PropertySchema(name: "amounts", type: .decimal128, isList: true),
        PropertySchema(name: "mixed", type: .mixed, isOptional: true),
        PropertySchema(name: "mixes", type: .mixed, isOptional: true, isList: true),
    ]),
    ClassSchema(name: "Dog", properties: [
        PropertySchema(name: "name", type: .string),
        PropertySchema(name: "age", type: .int),
        PropertySchema(name: "weight", type: .double, isOptional: true),
        .link("owner", to: "Person"),
        .linkingObjects("owners", from: "Person", property: "dogs"),
    ]),
]

let fixtureNames = ["Ann", "ann", "Bob", "Émile", "émile", "Zoë", "José", "Jose", "李小龙", "東京タワー", "🦄 unicorn", "unicorn🦄",
                    "Ångström", "ÅNGSTRÖM", "", "O'Brien", "Ñandú", "straße", "Joe", "JOE", "Joey", "Chloé", "chloe", "😀😃",
                    "a*b?c", "Müller", "MÜLLER", "Œuvre", "zed", "Ürsula"]
let fixtureDates: [Timestamp] = [
    Timestamp(seconds: -2_208_988_800), Timestamp(seconds: -1, nanoseconds: -500), Timestamp(seconds: -1), Timestamp(seconds: 0),
    Timestamp(seconds: 0, nanoseconds: 1), Timestamp(seconds: 1_000_000_000), Timestamp(seconds: 2_147_483_647),
    Timestamp(seconds: 2_147_483_648), Timestamp(seconds: 4_102_444_800, nanoseconds: 999_999_999), Timestamp(seconds: -62_135_596_800),
]
let fixtureBigs: [Int64] = [.min, .max, 0, -1, 1, Int64(Int32.max), Int64(Int32.min), 9_007_199_254_740_993, -9_007_199_254_740_993, 42]
let fixtureHeights: [Double] = [0, -0.0, 1.5, -1.5, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
                                .infinity, -.infinity, 2.25, 1e-300, 180.5]
let fixtureWeights: [Float?] = [nil, 0, 2.2, -2.2, .greatestFiniteMagnitude, .infinity, 70.5, nil, 1e-40]
/// Decimals that a double cannot tell apart, cohort members (1.1, 1.10), both zeros, 34 digits, NaN.
let fixtureBalances: [String?] = [
    "12345678901234567890.10", "12345678901234567890.15", "12345678901234567890.2", "-12345678901234567890.10", nil,
    "1.1", "1.10", "0.3", "0", "-0", "1E20", "100000000000000000001", "9999999999999999999999999999999999",
    "-9999999999999999999999999999999999", "1.000000000000000000000000000000001", "1.000000000000000000000000000000002",
    "9223372036854775807.5", "NaN", "0.30000000000000004", "45",
]
/// Lists whose sums and means a double would round (each sum fits in 34 digits, so it is exact).
let fixtureAmountLists: [[String]] = [
    [], ["0.1", "0.2"], ["1E20", "1", "-1E20"], ["12345678901234567890.10"], ["12345678901234567890.10", "12345678901234567890.15"],
    ["0.05", "0.25"], ["-0.1", "-0.2", "0.3"], ["12345678901234567890.1", "-12345678901234567890.10", "0.3"], ["1", "2", "3"],
    ["1E20", "0.0000000000001"], ["NaN", "2"],
]
/// Mixed values: the same number as int, double, float and decimal, strings that look like numbers, every
/// other scalar type, null and NaN.
let fixtureMixed: [Value] = [
    .int(3), .double(3.0), .decimal128(Decimal128(string: "3")!), .string("3"), .null, .bool(true), .string("東京"),
    .double(2.5), .int(-7), .date(Timestamp(seconds: 0)), .float(3), .data([1, 2]),
    .objectId(ObjectId(hexString: "000000000000000000000007")!), .uuid(UUID(uuidString: "00000000-0000-4000-8000-000000000001")!),
    .decimal128(Decimal128(string: "2.50")!), .string("café"), .int(.max), .double(.nan), .bool(false), .string(""),
]
let fixtureTags = ["x", "東京", "🐶", "café", "CAFE", "milk", "", "tag"]
let dogNames = ["Rex", "rex", "Fido", "Ace", "Bo", "Łajka", "犬", "🐕 dog", "Fífí", "Max"]

struct Fixture {
    var people: [PersonModel] = []
    var dogs: [DogModel] = []
    var personKeys: [ObjectKey] = []
    var dogKeys: [ObjectKey] = []
    let dir = TempDir("queryfixture")
    var db: Database!

    init(people count: Int = 48, seed: UInt64 = 7) throws {
        var rng = SplitMix64(seed: seed)
        for i in 0..<36 {
            dogs.append(DogModel(name: dogNames[i % dogNames.count], age: Int64(rng.below(15)),
                                 weight: i % 5 == 0 ? nil : Double(rng.below(400)) / 10, owner: nil))
        }
        for i in 0..<count {
            let p = PersonModel(
                id: Int64(i * 3 - 20), name: fixtureNames[i % fixtureNames.count],
                nickname: i % 3 == 0 ? nil : fixtureNames[(i * 7) % fixtureNames.count],
                age: Int64(rng.below(90)), ageOpt: i % 4 == 0 ? nil : Int64(rng.below(10)) - 5,
                big: fixtureBigs[i % fixtureBigs.count], height: fixtureHeights[i % fixtureHeights.count],
                weight: fixtureWeights[i % fixtureWeights.count], active: rng.below(2) == 0,
                born: fixtureDates[i % fixtureDates.count], bornOpt: i % 2 == 0 ? nil : fixtureDates[(i * 3) % fixtureDates.count],
                oid: i % 5 == 0 ? nil : ObjectId(hexString: String(format: "%024x", i * 977))!,
                uid: i % 6 == 0 ? nil : UUID(uuidString: String(format: "%08X-0000-4000-8000-%012X", i * 31, i))!,
                blob: i % 4 == 1 ? nil : Array(fixtureNames[i % fixtureNames.count].utf8.prefix(3)),
                buddy: i % 3 == 2 ? nil : (i * 5 + 1) % count,
                dogs: (0..<(i % 4 == 0 ? 0 : rng.below(4))).map { _ in rng.below(36) },
                scores: (0..<(i % 5 == 0 ? 0 : rng.below(5))).map { _ in Int64(rng.below(100)) },
                tags: (0..<rng.below(3)).map { _ in fixtureTags[rng.below(fixtureTags.count)] },
                balance: fixtureBalances[i % fixtureBalances.count],
                amounts: fixtureAmountLists[i % fixtureAmountLists.count],
                mixed: fixtureMixed[i % fixtureMixed.count],
                mixes: (0..<(i % 4)).map { fixtureMixed[(i * 3 + $0 * 7) % fixtureMixed.count] })
            people.append(p)
        }
        for i in 0..<dogs.count where i % 4 != 3 { dogs[i].owner = (i * 7) % count }
        db = try Database.open(path: dir.file("f.realm"))
        let (pk, dk) = try db.write { tx -> ([ObjectKey], [ObjectKey]) in
            try tx.createClasses(fixtureSchema)
            var dk: [ObjectKey] = []
            for d in dogs {
                dk.append(try tx.createObject("Dog", ["name": .string(d.name), "age": .int(d.age), "weight": d.weight.map(Value.double) ?? .null]))
            }
            var pk: [ObjectKey] = []
            for p in people {
                var v: [String: Value] = [
                    "id": .int(p.id), "name": .string(p.name), "nickname": p.nickname.map(Value.string) ?? .null,
                    "age": .int(p.age), "ageOpt": p.ageOpt.map(Value.int) ?? .null, "big": .int(p.big),
                    "height": .double(p.height), "weight": p.weight.map(Value.float) ?? .null, "active": .bool(p.active),
                    "born": .date(p.born), "bornOpt": p.bornOpt.map(Value.date) ?? .null,
                    "oid": p.oid.map(Value.objectId) ?? .null, "uid": p.uid.map(Value.uuid) ?? .null,
                    "blob": p.blob.map(Value.data) ?? .null,
                    "balance": p.balance.map { .decimal128(Decimal128(string: $0)!) } ?? .null,
                    "mixed": p.mixed,
                ]
                v["dogs"] = nil
                pk.append(try tx.createObject("Person", v, lists: [
                    "dogs": p.dogs.map { .link(dk[$0]) }, "scores": p.scores.map(Value.int), "tags": p.tags.map(Value.string),
                    "amounts": p.amounts.map { .decimal128(Decimal128(string: $0)!) }, "mixes": p.mixes,
                ]))
            }
            for (i, p) in people.enumerated() where p.buddy != nil {
                try tx.set(pk[i], "Person", "buddy", .link(pk[p.buddy!]))
            }
            for (i, d) in dogs.enumerated() where d.owner != nil {
                try tx.set(dk[i], "Dog", "owner", .link(pk[d.owner!]))
            }
            return (pk, dk)
        }
        personKeys = pk
        dogKeys = dk
    }

    /// The keys of the people the reference filter accepts, in key order.
    func expectedPeople(_ filter: (PersonModel) -> Bool) -> [ObjectKey] {
        people.indices.filter { filter(people[$0]) }.map { personKeys[$0] }.sorted()
    }

    func expectedDogs(_ filter: (Int, DogModel) -> Bool) -> [ObjectKey] {
        dogs.indices.filter { filter($0, dogs[$0]) }.map { dogKeys[$0] }.sorted()
    }

    func run(_ text: String, on cls: String = "Person", _ args: [QueryArgument] = []) throws -> [ObjectKey] {
        let s = try db.snapshot()
        defer { s.close() }
        return try Query.evaluate(text, on: cls, in: s, arguments: args)
    }
}
