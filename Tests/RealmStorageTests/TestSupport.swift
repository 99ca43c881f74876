import Foundation
@testable import RealmStorage

/// A temporary directory removed when the value is deinitialised.
final class TempDir {
    let path: String

    init(_ name: String = #function) {
        let base = FileManager.default.temporaryDirectory.path
        let clean = name.filter { $0.isLetter || $0.isNumber }
        path = "\(base)/rbtest-\(clean)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A small deterministic PRNG (SplitMix64) for seeded random tests.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// The schema most engine tests use: people with dogs.
let personDogSchema: [ClassSchema] = [
    ClassSchema(name: "Person", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "name", type: .string, isIndexed: true),
        PropertySchema(name: "age", type: .int),
        PropertySchema(name: "nickname", type: .string, isOptional: true),
        .list("dogs", of: "Dog"),
        PropertySchema(name: "tags", type: .string, isList: true),
    ]),
    ClassSchema(name: "Dog", properties: [
        PropertySchema(name: "name", type: .string),
        PropertySchema(name: "weight", type: .double),
        .link("owner", to: "Person"),
        .linkingObjects("owners", from: "Person", property: "dogs"),
    ]),
]
