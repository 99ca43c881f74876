/// Makes a `String` from bytes that must be valid UTF-8, or nil when they are not.
///
/// `String(validating:as:)` is generic and, called per value, spent most of a full-table scan looking up
/// generic metadata (perf, realm-bench `iterate-all`). This checks ASCII a word at a time, validates the rest
/// with the standard byte-range rules (no overlongs, no surrogates, nothing above U+10FFFF), then copies.
///
/// The `String` is made by `String(decoding:as:)`, which for bytes already known to be valid changes nothing
/// and makes a string of up to 15 bytes in place (`String(unsafeUninitializedCapacity:)` wrote them to a
/// buffer, validated them again and copied them: most of the cost of reading a short string, `perf`,
/// realm-bench `iterate-all`).
func decodeUTF8(_ b: UnsafeRawBufferPointer) -> String? {
    let n = b.count
    if n == 0 { return "" }
    guard isValidUTF8(b) else { return nil }
    return String(decoding: UnsafeBufferPointer(start: b.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n), as: UTF8.self)
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
