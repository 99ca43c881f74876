/// A fast non-cryptographic 64-bit hash used for node and meta checksums.
///
/// Four independent multiply-rotate lanes over 8-byte words (the structure of xxHash64),
/// written here; it detects torn and flipped bytes, not tampering (encryption adds an HMAC).
@inline(__always) private func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
    var a = acc &+ input &* 0xC2B2_AE3D_27D4_EB4F
    a = (a << 31) | (a >> 33)
    return a &* 0x9E37_79B1_85EB_CA87
}

@inline(__always) private func avalanche(_ h0: UInt64) -> UInt64 {
    var h = h0
    h ^= h >> 33
    h = h &* 0xC2B2_AE3D_27D4_EB4F
    h ^= h >> 29
    h = h &* 0x1656_67B1_9E37_79F9
    h ^= h >> 32
    return h
}

/// `avalanche` for other uses: a bijection of 64-bit values (each step is invertible) whose every output bit
/// depends on every input bit.
@inline(__always) func mix64(_ x: UInt64) -> UInt64 { avalanche(x) }

/// The four lanes folded into one value (inputs of 32 bytes or more).
@inline(__always) private func mergeLanes(_ v1: UInt64, _ v2: UInt64, _ v3: UInt64, _ v4: UInt64) -> UInt64 {
    var h = ((v1 << 1) | (v1 >> 63)) &+ ((v2 << 7) | (v2 >> 57)) &+ ((v3 << 12) | (v3 >> 52)) &+ ((v4 << 18) | (v4 >> 46))
    h = (h ^ round(0, v1)) &* 0x9E37_79B1_85EB_CA87 &+ 0x85EB_CA77_C2B2_AE63
    h = (h ^ round(0, v2)) &* 0x9E37_79B1_85EB_CA87 &+ 0x85EB_CA77_C2B2_AE63
    h = (h ^ round(0, v3)) &* 0x9E37_79B1_85EB_CA87 &+ 0x85EB_CA77_C2B2_AE63
    h = (h ^ round(0, v4)) &* 0x9E37_79B1_85EB_CA87 &+ 0x85EB_CA77_C2B2_AE63
    return h
}

/// The bytes after the last whole 32-byte stripe (`tail`, fewer than 32), folded into `h`, then the avalanche.
@inline(__always) private func finishTail(_ h0: UInt64, _ tail: UnsafeRawBufferPointer) -> UInt64 {
    var h = h0
    let n = tail.count
    var i = 0
    while i + 8 <= n {
        h ^= round(0, tail.u64(at: i))
        h = ((h << 27) | (h >> 37)) &* 0x9E37_79B1_85EB_CA87 &+ 0x85EB_CA77_C2B2_AE63
        i += 8
    }
    while i < n {
        h ^= UInt64(tail[i]) &* 0x27D4_EB2F_1656_67C5
        h = ((h << 11) | (h >> 53)) &* 0x9E37_79B1_85EB_CA87
        i += 1
    }
    return avalanche(h)
}

func hash64(_ buffer: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
    let n = buffer.count
    var i = 0
    var h: UInt64
    if n >= 32 {
        var v1 = seed &+ 0x9E37_79B1_85EB_CA87 &+ 0xC2B2_AE3D_27D4_EB4F
        var v2 = seed &+ 0xC2B2_AE3D_27D4_EB4F
        var v3 = seed
        var v4 = seed &- 0x9E37_79B1_85EB_CA87
        // Unchecked pointer loads: the checked offsets had cost a third of the loop's instructions.
        let base = buffer.baseAddress!
        let stripes = n &>> 5
        for s in 0..<stripes {
            let p = base + (s &<< 5)
            v1 = round(v1, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
            v2 = round(v2, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            v3 = round(v3, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
            v4 = round(v4, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
        }
        i = stripes &<< 5
        h = mergeLanes(v1, v2, v3, v4)
    } else {
        h = seed &+ 0x27D4_EB2F_1656_67C5
    }
    return finishTail(h &+ UInt64(n), UnsafeRawBufferPointer(rebasing: buffer[i...]))
}

/// `hash64` of exactly the 8 bytes of `word` (little-endian, as they lie in memory), without the general
/// path's loops: each node's checksum starts with the 8 bytes of its header before the checksum field.
@inline(__always) func hash64(word: UInt64, seed: UInt64) -> UInt64 {
    var h = seed &+ 0x27D4_EB2F_1656_67C5 &+ 8
    h ^= round(0, word)
    h = ((h << 27) | (h >> 37)) &* 0x9E37_79B1_85EB_CA87 &+ 0x85EB_CA77_C2B2_AE63
    return avalanche(h)
}

/// `hash64` of bytes given in pieces: the same value as `hash64` of their concatenation, without making it.
struct Hash64Stream {
    private var v1, v2, v3, v4: UInt64
    private let seed: UInt64
    private var total = 0
    /// Bytes of an incomplete 32-byte stripe.
    private var stripe: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var held = 0

    init(seed: UInt64 = 0) {
        self.seed = seed
        v1 = seed &+ 0x9E37_79B1_85EB_CA87 &+ 0xC2B2_AE3D_27D4_EB4F
        v2 = seed &+ 0xC2B2_AE3D_27D4_EB4F
        v3 = seed
        v4 = seed &- 0x9E37_79B1_85EB_CA87
    }

    @inline(__always) private mutating func consume(_ p: UnsafeRawPointer) {
        v1 = round(v1, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
        v2 = round(v2, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        v3 = round(v3, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
        v4 = round(v4, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        total += bytes.count
        var i = 0
        let n = bytes.count
        var part = stripe
        withUnsafeMutableBytes(of: &part) { buf in
            if held > 0 {
                let k = min(32 - held, n)
                (buf.baseAddress! + held).copyMemory(from: base, byteCount: k)
                held += k
                i = k
                if held < 32 { return }
                consume(UnsafeRawPointer(buf.baseAddress!))
                held = 0
            }
            while i + 32 <= n {
                consume(base + i)
                i += 32
            }
            if i < n {
                buf.baseAddress!.copyMemory(from: base + i, byteCount: n - i)
                held = n - i
            }
        }
        stripe = part
    }

    mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    func finish() -> UInt64 {
        let h = total >= 32 ? mergeLanes(v1, v2, v3, v4) : seed &+ 0x27D4_EB2F_1656_67C5
        var tail = stripe
        let n = held
        return withUnsafeBytes(of: &tail) { finishTail(h &+ UInt64(total), UnsafeRawBufferPointer(rebasing: $0[..<n])) }
    }
}

func hash64(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
    bytes.withUnsafeBytes { hash64($0, seed: seed) }
}
