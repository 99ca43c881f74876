import Foundation

/// A temporary directory removed when the value is deinitialised.
public final class TempDir {
    public let path: String

    public init(_ name: String = #function) {
        let base = FileManager.default.temporaryDirectory.path
        let clean = name.filter { $0.isLetter || $0.isNumber }
        path = "\(base)/rbtest-\(clean)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A small deterministic PRNG (SplitMix64) for seeded random tests.
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
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

