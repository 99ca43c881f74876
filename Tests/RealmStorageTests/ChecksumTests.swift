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
