import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// `decodeUTF8` makes strings of up to 15 bytes from their bits (`SmallStringBits`, DECISIONS 117): each is the
/// standard library's own string for those bytes, bit for bit and in everything it does, invalid bytes are
/// refused as before, and no byte outside the string is read.
@Suite struct SmallStringBitsTests {
    /// Pieces of UTF-8 (one to four bytes, and bytes that are never valid or only valid inside a sequence).
    static let pieces: [[UInt8]] = [
        [0x41], [0x7A], [0x20], [0x00], [0x7F], Array("é".utf8), Array("ß".utf8), Array("東".utf8), Array("語".utf8),
        Array("🐕".utf8), Array("\u{301}".utf8), Array("\u{10FFFF}".utf8), Array("\u{FFFD}".utf8),
        [0x80], [0xBF], [0xC0], [0xC2], [0xE0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90], [0xF5], [0xFF],
    ]

    /// Random byte strings of `length` bytes or a little more, mostly valid.
    static func sample(_ rng: inout SplitMix64, length: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        let valid = rng.below(4) != 0
        while bytes.count < length {
            let p = pieces[rng.below(valid ? 13 : pieces.count)]
            bytes += p
        }
        return bytes
    }

    /// The standard library's string for valid bytes, nil for invalid ones.
    static func expected(_ bytes: [UInt8]) -> String? { String(validating: bytes, as: UTF8.self) }

    /// `decodeUTF8` of `bytes` lying at `offset` of a buffer of junk (bytes with the high bit set, which a load
    /// past either end would mix into the string).
    static func decode(_ bytes: [UInt8], offset: Int) -> String? {
        var buffer = [UInt8](repeating: 0xFF, count: bytes.count + 32)
        buffer.replaceSubrange(offset..<offset + bytes.count, with: bytes)
        return buffer.withUnsafeBytes { decodeUTF8(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + bytes.count])) }
    }

    @Test func theLayoutCheckPassesOnThisPlatform() {
        #expect(SmallStringBits.isUsable)
    }

    /// Every length up to 40 (short strings made from bits, longer ones by the standard library), valid and
    /// not: nil exactly where the standard library refuses the bytes, else the same bytes and, up to 15
    /// bytes, the same two words as `String(decoding:as:)` (so the same form: ASCII or not, small).
    @Test func madeStringsAreTheStandardLibrarysStrings() throws {
        var rng = SplitMix64(seed: 120)
        var made = 0, refused = 0
        for round in 0..<30_000 {
            let bytes = Self.sample(&rng, length: round % 41)
            let decoded = Self.decode(bytes, offset: rng.below(16))
            guard let e = Self.expected(bytes) else {
                #expect(decoded == nil, "\(bytes)")
                refused += 1
                continue
            }
            let s = try #require(decoded, "\(bytes)")
            made += 1
            #expect(Array(s.utf8) == bytes)
            if bytes.count <= SmallStringBits.capacity {
                #expect(SmallStringBits.bits(s) == SmallStringBits.bits(String(decoding: bytes, as: UTF8.self)), "\(bytes)")
            }
        }
        #expect(made > 10_000 && refused > 1_000)
    }

    /// What the strings do (compare, hash, count characters, change case, index, join) is what the standard
    /// library's strings for the same bytes do.
    @Test func madeStringsBehaveAsTheStandardLibrarys() throws {
        var rng = SplitMix64(seed: 121)
        var previous: (made: String, expected: String) = ("", "")
        for round in 0..<5_000 {
            var bytes: [UInt8]
            repeat { bytes = Self.sample(&rng, length: round % 16) } while Self.expected(bytes) == nil || bytes.count > 15
            let s = try #require(Self.decode(bytes, offset: 3))
            let e = String(decoding: bytes, as: UTF8.self)
            #expect(s == e)
            #expect(s.hashValue == e.hashValue)
            #expect(s.count == e.count && s.unicodeScalars.count == e.unicodeScalars.count && s.utf16.count == e.utf16.count)
            #expect(Array(s) == Array(e))
            #expect(s.lowercased() == e.lowercased() && s.uppercased() == e.uppercased())
            #expect((s < previous.expected) == (e < previous.expected) && (previous.made < s) == (previous.expected < e))
            #expect(s + previous.made == e + previous.expected)
            let head = String(e.prefix(2)), tail = String(e.suffix(1))
            #expect(s.hasPrefix(head) == e.hasPrefix(head) && s.contains(tail) == e.contains(tail) && s.hasSuffix(tail))
            var copy = s
            copy.append("!")
            #expect(Array(copy.utf8) == bytes + [0x21])
            #expect(Array(s.utf8) == bytes)   // the copy changed alone
            previous = (s, e)
        }
        // Canonically equal, different bytes: equal as Strings, apart as bytes.
        let pre = try #require(Self.decode(Array("\u{e9}".utf8), offset: 0))
        let de = try #require(Self.decode(Array("e\u{301}".utf8), offset: 0))
        #expect(pre == de && Array(pre.utf8) != Array(de.utf8))
    }

    /// A string that ends where readable memory ends, or starts where it starts, is read without touching the
    /// page beyond (a read past either end would crash the test).
    @Test func readsNoByteOutsideTheString() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let raw = try #require(mmap(nil, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(raw != MAP_FAILED)
        defer { munmap(raw, 3 * page) }
        #expect(mprotect(raw, page, PROT_NONE) == 0)
        #expect(mprotect(raw + 2 * page, page, PROT_NONE) == 0)
        let readable = raw + page
        var rng = SplitMix64(seed: 122)
        for n in 1...SmallStringBits.capacity {
            for _ in 0..<20 {
                var bytes: [UInt8]
                repeat { bytes = Self.sample(&rng, length: n) } while bytes.count != n
                for start in [readable, readable + page - n] {
                    bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: n) }
                    let s = decodeUTF8(UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: n))
                    #expect(s.map { Array($0.utf8) } == Self.expected(bytes).map { _ in bytes }, "\(bytes)")
                }
            }
        }
    }
}
