import CStorageSupport
import Testing

/// The commit log's streaming copy (DECISIONS 54) writes exactly what `memcpy` and `memset` would, whatever
/// the alignment of the destination and the length, and nothing outside the range.
@Suite struct NontemporalCopyTests {
    @Test func copiesAndZeroesExactlyTheirRange() {
        var rng = SplitMix64(seed: 54)
        let source = (0..<9000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for _ in 0..<400 {
            let offset = Int(rng.next() % 97)
            let length = Int(rng.next() % 8200)
            var buffer = [UInt8](repeating: 0xA5, count: 8400)
            var expected = buffer
            expected.replaceSubrange(offset..<offset + length, with: source[..<length])
            buffer.withUnsafeMutableBytes { b in
                source.withUnsafeBytes { s in
                    // One piece: the copy on its own.
                    var from: UnsafeRawPointer? = s.baseAddress
                    var count = length
                    storage_gather_nontemporal(b.baseAddress! + offset, &from, &count, 1)
                }
            }
            #expect(firstDifference(buffer, expected) == nil, "copy of \(length) bytes at \(offset)")
            let zeroAt = Int(rng.next() % 61), zeroLength = Int(rng.next() % 5000)
            expected.replaceSubrange(zeroAt..<zeroAt + zeroLength, with: repeatElement(0, count: zeroLength))
            buffer.withUnsafeMutableBytes { storage_zero_nontemporal($0.baseAddress! + zeroAt, zeroLength) }
            #expect(firstDifference(buffer, expected) == nil, "zeroing \(zeroLength) bytes at \(zeroAt)")
        }
    }

    @Test func gathersPiecesOneAfterAnother() {
        var rng = SplitMix64(seed: 540)
        for _ in 0..<100 {
            expectGather(pieces: 1 + Int(rng.next() % 9), longest: 3000, &rng)
        }
    }

    /// Pieces shorter than a streaming store, many of which meet inside one 16 bytes of the destination: the
    /// gather assembles those bytes before storing them (DECISIONS 64).
    @Test func gathersSmallPiecesThatMeetInsideOneStore() {
        var rng = SplitMix64(seed: 640)
        for _ in 0..<300 {
            expectGather(pieces: 1 + Int(rng.next() % 40), longest: 40, &rng)
        }
    }

    /// Gathers `pieces` random pieces of up to `longest - 1` bytes at a random offset of a buffer and expects
    /// exactly their bytes there, one after another, and the buffer unchanged around them.
    private func expectGather(pieces count: Int, longest: UInt64, _ rng: inout SplitMix64) {
        let pieces = (0..<count).map { _ in
            (0..<Int(rng.next() % longest)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        }
        let offset = Int(rng.next() % 33)
        let total = pieces.reduce(0) { $0 + $1.count }
        var buffer = [UInt8](repeating: 0x5A, count: total + 100)
        var expected = buffer
        expected.replaceSubrange(offset..<offset + total, with: pieces.joined())
        let lengths = pieces.map(\.count)
        // Each piece's bytes stay where they are while `pieces` holds them.
        let sources: [UnsafeRawPointer?] = pieces.map { p in p.withUnsafeBytes { $0.baseAddress } }
        buffer.withUnsafeMutableBytes { b in
            sources.withUnsafeBufferPointer { s in
                lengths.withUnsafeBufferPointer { l in
                    storage_gather_nontemporal(b.baseAddress! + offset, s.baseAddress!, l.baseAddress!, s.count)
                }
            }
        }
        #expect(firstDifference(buffer, expected) == nil, "\(lengths) at \(offset)")
        withExtendedLifetime(pieces) {}
    }

    /// Where two buffers first differ (nil when equal): a failure names one byte, not 8 KB.
    private func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> Int? {
        a.count != b.count ? min(a.count, b.count) : a.indices.first { a[$0] != b[$0] }
    }
}
