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
