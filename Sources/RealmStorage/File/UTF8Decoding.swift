/// Makes a `String` from bytes that must be valid UTF-8, or nil when they are not.
///
/// `String(validating:as:)` is generic and, called per value, spent most of a full-table scan looking up
/// generic metadata (perf, realm-bench `iterate-all`). This checks ASCII a word at a time, validates the rest
/// with the standard byte-range rules (no overlongs, no surrogates, nothing above U+10FFFF), then copies.
///
/// A string of up to 15 bytes is made from its bits (`SmallStringBits`): two word loads, one test for ASCII,
/// and the full validation only for a string that is not ASCII. Longer strings are made by
/// `String(decoding:as:)`, which for bytes already known to be valid changes nothing.
func decodeUTF8(_ b: UnsafeRawBufferPointer) -> String? {
    decodeUTF8(b, smallBits: SmallStringBits.isUsable)
}

/// `decodeUTF8(b)`, with `SmallStringBits.isUsable` read by the caller (once per leaf in a scan, rather than
/// a `swift_once` per string).
@inline(__always) func decodeUTF8(_ b: UnsafeRawBufferPointer, smallBits: Bool) -> String? {
    let n = b.count
    if n <= SmallStringBits.capacity && smallBits {
        if n == 0 { return "" }
        let (low, high) = SmallStringBits.words(b.baseAddress.unsafelyUnwrapped, count: n)
        let ascii = (low | high) & 0x8080_8080_8080_8080 == 0
        guard ascii || isValidUTF8(b) else { return nil }
        return SmallStringBits.string((low, high | SmallStringBits.form(count: n, isASCII: ascii)))
    }
    return decodeLongUTF8(b)
}

/// `decodeUTF8` of a string the small form does not take: validated here, made by `String(decoding:as:)`.
@inline(never) func decodeLongUTF8(_ b: UnsafeRawBufferPointer) -> String? {
    let n = b.count
    if n == 0 { return "" }
    guard isValidUTF8(b) else { return nil }
    return String(decoding: UnsafeBufferPointer(start: b.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n), as: UTF8.self)
}

/// Strings of up to 15 UTF-8 bytes made the way the standard library makes them, without its second pass.
///
/// On 64-bit platforms such a string lives in the two words of the `String` itself: the bytes in order from the
/// low byte of the first word, and in the top byte of the second a form (0xE0: small and ASCII, 0xA0: small)
/// with the count in its low four bits. `String(decoding:as:)` validated bytes the engine had validated,
/// scanned them for ASCII again and copied them in a byte loop: a quarter of reading every string of a table
/// (`perf`, realm-bench `iterate-all`). Here the bytes are read as two words and the form is set; nothing is
/// allocated, and the value is bit for bit the one the standard library makes.
///
/// That layout is the standard library's, not a documented promise, so it is checked once against strings the
/// standard library makes itself (`isUsable`, every length and both forms); where it differs, `decodeUTF8`
/// takes `String(decoding:as:)` for every string.
enum SmallStringBits {
    static let capacity = 15

    /// Whether strings made here are, bit for bit, those `String(decoding:as:)` makes for the same bytes.
    static let isUsable: Bool = {
        #if _endian(little) && _pointerBitWidth(_64)
        guard MemoryLayout<String>.size == 16 else { return false }
        for n in 0...capacity {
            for sample in [Array("abcdefghijklmnopq".utf8.prefix(n)), Array("éxyz東京🐕ab".utf8.prefix(n)), Array("xé東京é🐕".utf8.prefix(n))]
            where String(validating: sample, as: UTF8.self) != nil {
                let made = sample.withUnsafeBytes { b -> String in
                    let (low, high) = words(b.baseAddress ?? UnsafeRawPointer(bitPattern: 8)!, count: n)
                    return string((low, high | form(count: n, isASCII: sample.allSatisfy { $0 < 0x80 })))
                }
                let expected = String(decoding: sample, as: UTF8.self)
                guard bits(made) == bits(expected), Array(made.utf8) == sample else { return false }
            }
        }
        return true
        #else
        return false
        #endif
    }()

    /// The bytes `p ..< p + count` (1 ... 15) as two little-endian words, the rest zero. Reads nothing outside
    /// those bytes: overlapping loads from both ends.
    @inline(__always) static func words(_ p: UnsafeRawPointer, count n: Int) -> (UInt64, UInt64) {
        if n >= 8 {
            let low = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
            if n == 8 { return (low, 0) }
            let tail = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self))
            return (low, tail &>> UInt64(truncatingIfNeeded: (16 &- n) &<< 3))
        }
        if n >= 4 {
            let low = UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
            let high = UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)))
            return (low | high &<< UInt64(truncatingIfNeeded: (n &- 4) &<< 3), 0)
        }
        if n == 0 { return (0, 0) }
        let first = UInt64(p.load(as: UInt8.self))
        let middle = UInt64(p.load(fromByteOffset: n &>> 1, as: UInt8.self))
        let last = UInt64(p.load(fromByteOffset: n &- 1, as: UInt8.self))
        return (first | middle &<< UInt64(truncatingIfNeeded: (n &>> 1) &<< 3) | last &<< UInt64(truncatingIfNeeded: (n &- 1) &<< 3), 0)
    }

    /// The top byte of a small string's second word: its form (0xE0 when every byte is below 0x80, else 0xA0)
    /// and its count (0 ... 15).
    @inline(__always) static func form(count n: Int, isASCII: Bool) -> UInt64 {
        ((isASCII ? 0xE0 : 0xA0) | UInt64(truncatingIfNeeded: n)) &<< 56
    }

    /// The string whose two words are `bits`: its bytes as `words` gives them, valid UTF-8, the second word's
    /// top byte set by `form`, or the `bits` of a string made so. Only when `isUsable`.
    ///
    /// The words are moved out of memory as a `String` rather than cast: a cast gives a borrowed value that
    /// the compiler then retains (a runtime call, for a value that owns nothing).
    @inline(__always) static func string(_ bits: (UInt64, UInt64)) -> String {
        var bits = bits
        return withUnsafeMutablePointer(to: &bits) { $0.withMemoryRebound(to: String.self, capacity: 1) { $0.move() } }
    }

    /// The two words of a string, to compare with another's.
    static func bits(_ s: String) -> (UInt64, UInt64) { unsafeBitCast(s, to: (UInt64, UInt64).self) }
}

func isValidUTF8(_ b: UnsafeRawBufferPointer) -> Bool {
    let n = b.count
    guard n > 0 else { return true }
    let p = b.baseAddress!
    var i = 0
    while i < n {
        // ASCII runs, eight bytes at a time.
        while i + 8 <= n, p.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
        if i >= n { break }
        let c = p.load(fromByteOffset: i, as: UInt8.self)
        if c < 0x80 { i += 1; continue }
        @inline(__always) func cont(_ k: Int, _ lo: UInt8 = 0x80, _ hi: UInt8 = 0xBF) -> Bool {
            guard i + k < n else { return false }
            let x = p.load(fromByteOffset: i + k, as: UInt8.self)
            return x >= lo && x <= hi
        }
        switch c {
        case 0xC2...0xDF:
            guard cont(1) else { return false }
            i += 2
        case 0xE0:
            guard cont(1, 0xA0), cont(2) else { return false }
            i += 3
        case 0xE1...0xEC, 0xEE...0xEF:
            guard cont(1), cont(2) else { return false }
            i += 3
        case 0xED:
            guard cont(1, 0x80, 0x9F), cont(2) else { return false }
            i += 3
        case 0xF0:
            guard cont(1, 0x90), cont(2), cont(3) else { return false }
            i += 4
        case 0xF1...0xF3:
            guard cont(1), cont(2), cont(3) else { return false }
            i += 4
        case 0xF4:
            guard cont(1, 0x80, 0x8F), cont(2), cont(3) else { return false }
            i += 4
        default:
            return false
        }
    }
    return true
}
