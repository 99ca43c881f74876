import Testing
@testable import RealmStorage

@Suite struct ChecksumTests {
    @Test func flippingAnyBitChangesTheHash() {
        var bytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let original = hash64(bytes)
        for i in [0, 7, 31, 32, 63, 64, 99] {
            bytes[i] ^= 0x10
            #expect(hash64(bytes) != original, "flip at byte \(i)")
            bytes[i] ^= 0x10
        }
        #expect(hash64(bytes) == original)
    }

    /// The 8-byte form (a node header's first word) is `hash64` of those 8 bytes.
    @Test func theEightByteFormEqualsTheGeneralHash() {
        var rng = SplitMix64(seed: 12)
        for round in 0..<2_000 {
            let word = round < 2 ? UInt64(round) * .max : rng.next()
            let seed = round % 3 == 0 ? 0x5245_414C : rng.next()
            let bytes = withUnsafeBytes(of: word.littleEndian) { Array($0) }
            #expect(hash64(word: word, seed: seed) == hash64(bytes, seed: seed), "word \(word)")
        }
    }

    /// The streaming hash (commit log records are hashed where their pieces lie) equals `hash64` of the
    /// pieces joined, however the bytes are cut: empty pieces, pieces shorter than a 32-byte stripe, pieces
    /// that end inside one, lengths below 32 in all.
    @Test func streamingGivesTheSameHashAsOneBuffer() {
        var rng = SplitMix64(seed: 11)
        for round in 0..<3_000 {
            let n = round < 100 ? round : rng.below(20_000)
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.below(256)) }
            let seed = UInt64(rng.below(1 << 30))
            var stream = Hash64Stream(seed: seed)
            var at = 0
            while at < n {
                let k = min(n - at, rng.below(4) == 0 ? 0 : rng.below(rng.below(2) == 0 ? 40 : 5_000) + 1)
                stream.update(Array(bytes[at..<at + k]))
                at += k
            }
            #expect(stream.finish() == hash64(bytes, seed: seed), "\(n) bytes")
        }
    }
}

@Suite struct UTF8DecodingTests {
    @Test(arguments: ["", "ascii only", "Zürich", "東京", "🐶🐱", "mixed ascii 12345678 and 東京 and 🐶", String(repeating: "é", count: 100)])
    func validStringsDecode(_ s: String) {
        let bytes = Array(s.utf8)
        #expect(bytes.withUnsafeBytes { decodeUTF8($0) } == s)
    }

    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            let n = rng.below(12)
            let alphabet: [UInt8] = [0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xA0, 0xED, 0x9F, 0xA0, 0xEF, 0xF0, 0x90, 0xF4, 0x8F, 0xF5, 0xFF]
            let bytes = (0..<n).map { _ in alphabet[rng.below(alphabet.count)] }
            let expected = String(validating: bytes, as: UTF8.self)
            #expect(bytes.withUnsafeBytes { decodeUTF8($0) } == expected, "\(bytes)")
        }
    }
}
