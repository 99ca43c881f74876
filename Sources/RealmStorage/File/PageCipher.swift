import Crypto
import Foundation

/// Page encryption: AES-256-GCM per 4 KiB page, a fresh nonce per write (random per open, counted per page), the logical page number as
/// associated data (a page moved elsewhere fails), and a 16-byte tag checked on every decryption. The key is
/// derived per file (HKDF-SHA256 over the user's 64-byte key and the file's random salt); a separate derived
/// value lets `open` tell a wrong key from damage. See docs/FILE_FORMAT.md, "Encrypted files", and
/// DECISIONS 34.
final class PageCipher: @unchecked Sendable {
    // Safe: immutable after init except the nonce counter, which `nonceLock` guards; swift-crypto's AES-GCM
    // is stateless per call.
    private let key: SymmetricKey
    /// Nonces: a random 64-bit prefix for this open file and a 32-bit counter (the deterministic
    /// construction of NIST SP 800-38D 8.2.1, with a random field instead of a device name): unique as long
    /// as no two opens draw the same prefix (about k²/2^65 for k opens of a file), without asking the
    /// kernel for randomness for every page (`perf`: a `getrandom` per page was a fifth of encrypting one).
    private let nonceLock = PthreadMutex()
    private var noncePrefix = UInt64.random(in: 0...UInt64.max)
    private var nonceCounter: UInt32 = 0
    let salt: [UInt8]
    let keyCheck: [UInt8]

    static let keyLength = 64
    static let saltLength = 32

    init(userKey: [UInt8], salt: [UInt8]) {
        precondition(userKey.count == PageCipher.keyLength && salt.count == PageCipher.saltLength)
        let ikm = SymmetricKey(data: userKey)
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("realm-browser page key v1".utf8), outputByteCount: 32)
        let checkKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("realm-browser key check v1".utf8),
                                              outputByteCount: 32)
        keyCheck = Array(HMAC<SHA256>.authenticationCode(for: Array("realm-browser key check".utf8), using: checkKey))
        self.salt = salt
    }

    static func randomSalt() -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        return (0..<saltLength).map { _ in UInt8.random(in: 0...255, using: &g) }
    }

    /// Encrypts one page: ciphertext (same length), nonce (12 bytes), tag (16 bytes).
    func seal(_ page: UnsafeRawBufferPointer, logicalPage: UInt64) throws -> (ciphertext: [UInt8], nonce: [UInt8], tag: [UInt8]) {
        var aad = logicalPage.littleEndian
        let nonce = try AES.GCM.Nonce(data: nextNonce())
        let box = try withUnsafeBytes(of: &aad) { a in
            try AES.GCM.seal(page, using: key, nonce: nonce, authenticating: a)
        }
        return (Array(box.ciphertext), Array(box.nonce), Array(box.tag))
    }

    /// The next nonce: prefix then counter; a new random prefix when the counter would wrap.
    private func nextNonce() -> [UInt8] {
        nonceLock.withLock {
            if nonceCounter == .max {
                noncePrefix = UInt64.random(in: 0...UInt64.max)
                nonceCounter = 0
            }
            nonceCounter += 1
            var n = [UInt8](repeating: 0, count: 12)
            withUnsafeBytes(of: noncePrefix.littleEndian) { n.replaceSubrange(0..<8, with: $0) }
            withUnsafeBytes(of: nonceCounter.littleEndian) { n.replaceSubrange(8..<12, with: $0) }
            return n
        }
    }

    /// Decrypts one page into `out` (pageSize bytes); false when the tag does not match (wrong key, damage,
    /// a torn write, or a page that was never written).
    func open(_ ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
              logicalPage: UInt64, into out: UnsafeMutableRawBufferPointer) -> Bool {
        // False is "fails authentication": every caller reports the page as corrupt (never as empty).
        guard let n = try? AES.GCM.Nonce(data: nonce),  // see above
              let box = try? AES.GCM.SealedBox(nonce: n, ciphertext: ciphertext, tag: tag) else { return false }  // see above
        var aad = logicalPage.littleEndian
        guard let plain = try? withUnsafeBytes(of: &aad, { a in try AES.GCM.open(box, using: key, authenticating: a) }),  // see above
              plain.count == out.count else { return false }
        plain.withUnsafeBytes { out.copyMemory(from: $0) }
        return true
    }
}

/// Where the pages of an encrypted file are: physical page 0 is the encryption header; then groups of one
/// metadata page (127 entries of nonce + tag) followed by the 127 pages it describes.
enum EncryptedLayout {
    static let group: UInt64 = 127
    static let entrySize = 32

    static func physical(_ logical: UInt64) -> UInt64 { 1 + (logical / group) * (group + 1) + 1 + logical % group }
    static func metadataPage(_ logical: UInt64) -> UInt64 { 1 + (logical / group) * (group + 1) }
    static func entryOffset(_ logical: UInt64) -> Int { Int(logical % group) * entrySize }

    /// Logical pages a file of `bytes` physical bytes holds (whole pages only).
    static func logicalPages(physicalBytes bytes: Int) -> UInt64 {
        let pages = UInt64(bytes / pageSize)
        guard pages > 2 else { return 0 }
        let afterHeader = pages - 1
        let groups = afterHeader / (group + 1), rest = afterHeader % (group + 1)
        return groups * group + (rest > 0 ? rest - 1 : 0)
    }

    /// Physical pages needed for `logical` logical pages.
    static func physicalPages(logical: UInt64) -> UInt64 { logical == 0 ? 1 : physical(logical - 1) + 1 }
}

/// Physical page 0 of an encrypted file: magic, format, page size, salt, key check, checksum.
struct EncryptionHeader {
    static let magic: [UInt8] = [0x52, 0x42, 0x44, 0x42, 0x43, 0x52, 0x59, 0x50]  // "RBDBCRYP"
    static let formatVersion: UInt32 = 1

    var salt: [UInt8]
    var keyCheck: [UInt8]

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: pageSize)
        w.raw(EncryptionHeader.magic)
        w.u32(EncryptionHeader.formatVersion)
        w.u32(UInt32(pageSize))
        w.raw(salt)
        w.raw(keyCheck)
        w.zeros(120 - w.count)
        w.u64(hash64(w.bytes))
        w.zeros(pageSize - w.count)
        return w.bytes
    }

    enum Decoded {
        case valid(EncryptionHeader)
        case notEncrypted
        case newer(UInt32)
        case damaged
    }

    static func decode(_ page: UnsafeRawBufferPointer) -> Decoded {
        guard page.count >= 128, zip(page[0..<8], magic).allSatisfy({ $0 == $1 }) else { return .notEncrypted }
        let format = page.u32(at: 8)
        if format > formatVersion { return .newer(format) }
        guard format == formatVersion, page.u32(at: 12) == UInt32(pageSize),
              hash64(UnsafeRawBufferPointer(rebasing: page[0..<120])) == page.u64(at: 120) else { return .damaged }
        return .valid(EncryptionHeader(salt: Array(page[16..<48]), keyCheck: Array(page[48..<80])))
    }

    static func isEncrypted(_ firstBytes: UnsafeRawBufferPointer) -> Bool {
        firstBytes.count >= 8 && zip(firstBytes[0..<8], magic).allSatisfy { $0 == $1 }
    }
}
