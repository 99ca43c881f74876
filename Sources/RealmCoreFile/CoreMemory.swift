internal import COpenSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The bytes of a Realm Core file as the reader sees them: the file itself, mapped read-only, or for an encrypted
/// file its decrypted data, decrypted page by page into an anonymous mapping the first time a page is read.
/// Only touched pages take memory either way.
///
/// `@unchecked Sendable`: the mappings never change after `init`; the set of decrypted pages is guarded by `lock`
/// and a page is written once, before its bit is set, and only read after.
final class CoreMemory: @unchecked Sendable {
    /// The first byte of the (decrypted) data.
    let base: UnsafeRawPointer
    /// Bytes of (decrypted) data.
    let size: Int
    /// The size of the file on disk.
    let fileSize: Int
    let isEncrypted: Bool

    private let mapping: UnsafeMutableRawPointer?
    private let mappingLength: Int
    private let decrypted: UnsafeMutableRawPointer?
    private let cipher: PageCipher?
    private var ready: [UInt64]
    private let lock = NSLock()

    /// Maps `path` read-only (O_RDONLY; no lock or companion file is created or needed).
    init(path: String, key: [UInt8]?) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RealmCoreFileError.io(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw RealmCoreFileError.io(path: path, operation: "stat", errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw RealmCoreFileError.notARealmCoreFile(path: path, reason: "not a regular file")
        }
        fileSize = Int(st.st_size)
        if fileSize == 0 {
            mapping = nil
            mappingLength = 0
            base = UnsafeRawPointer(bitPattern: 8)!  // never read: size is 0
            size = 0
            isEncrypted = false
            decrypted = nil
            cipher = nil
            ready = []
            return
        }
        guard let m = mmap(nil, fileSize, PROT_READ, MAP_PRIVATE, fd, 0), m != MAP_FAILED else {
            throw RealmCoreFileError.io(path: path, operation: "mmap", errno: errno)
        }
        mapping = m
        mappingLength = fileSize
        let plainHeader = fileSize >= 24 && m.load(fromByteOffset: 16, as: UInt32.self) == 0x4244_2D54  // "T-DB"
        if plainHeader || key == nil {
            if !plainHeader && fileSize >= 8192 && fileSize % 4096 == 0 {
                munmap(m, fileSize)
                throw RealmCoreFileError.keyRequired(path: path)
            }
            base = UnsafeRawPointer(m)
            size = fileSize
            isEncrypted = false
            decrypted = nil
            cipher = nil
            ready = []
            return
        }
        guard let key, key.count == 64 else {
            munmap(m, fileSize)
            throw RealmCoreFileError.badKeyLength(key?.count ?? 0)
        }
        guard fileSize >= 8192, fileSize % 4096 == 0 else {
            munmap(m, fileSize)
            throw RealmCoreFileError.notARealmCoreFile(
                path: path, reason: "an encrypted Realm file is a whole number of 4 KiB pages, at least 8 KiB; this one has \(fileSize) bytes")
        }
        let pageCount = PageCipher.dataPageCount(fileSize: fileSize)
        let dataSize = pageCount * 4096
        guard let d = mmap(nil, dataSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), d != MAP_FAILED else {
            munmap(m, fileSize)
            throw RealmCoreFileError.io(path: path, operation: "mmap (decryption buffer)", errno: errno)
        }
        decrypted = d
        base = UnsafeRawPointer(d)
        size = dataSize
        isEncrypted = true
        cipher = PageCipher(key: key, file: UnsafeRawPointer(m), fileSize: fileSize)
        ready = [UInt64](repeating: 0, count: (pageCount + 63) / 64)
        // Page 0 decides between "wrong key" and "this key": it holds the header.
        do {
            try ensure(offset: 0, count: min(24, dataSize))
        } catch RealmCoreFileError.decryptionFailed(page: 0, _) {
            throw RealmCoreFileError.wrongKey(path: path)
        }
    }

    deinit {
        if let mapping { munmap(mapping, mappingLength) }
        if let decrypted { munmap(decrypted, size) }
    }

    /// Makes `count` bytes at `offset` readable (decrypts the pages they span the first time). The caller has
    /// checked that the range lies within `size`.
    @inline(__always)
    func ensure(offset: Int, count: Int) throws {
        guard let cipher, count > 0 else { return }
        let first = offset / 4096, last = (offset + count - 1) / 4096
        lock.lock()
        defer { lock.unlock() }
        for page in first...last where ready[page / 64] & (1 << UInt64(page % 64)) == 0 {
            try cipher.decrypt(page: page, into: decrypted! + page * 4096)
            ready[page / 64] |= 1 << UInt64(page % 64)
        }
    }
}

/// Realm Core's page encryption: blocks of one IV/HMAC table page followed by up to 64 data pages of 4096 bytes;
/// each data page AES-256-CBC encrypted (IV = iv ‖ data offset ‖ 0) and authenticated with HMAC-SHA224 of its
/// ciphertext. The two primitives come from the system's OpenSSL (swift-crypto has no SHA-224; DECISIONS).
struct PageCipher {
    let aesKey: [UInt8]
    let hmacKey: [UInt8]
    let file: UnsafeRawPointer
    let fileSize: Int

    init(key: [UInt8], file: UnsafeRawPointer, fileSize: Int) {
        aesKey = Array(key[0..<32])
        hmacKey = Array(key[32..<64])
        self.file = file
        self.fileSize = fileSize
    }

    /// Data pages a file of `fileSize` bytes holds: every 4096-byte page that is not an IV-table page.
    static func dataPageCount(fileSize: Int) -> Int {
        let pages = fileSize / 4096
        let blocks = (pages + 64) / 65
        return max(0, pages - blocks)
    }

    /// Decrypts data page `page` into `out` (4096 bytes). A page whose IV entry is 0 was never written: zeros.
    func decrypt(page: Int, into out: UnsafeMutableRawPointer) throws {
        let block = page / 64
        let ivOffset = block * 65 * 4096 + (page % 64) * 64
        let dataOffset = page * 4096 + (block + 1) * 4096
        guard ivOffset + 64 <= fileSize, dataOffset + 4096 <= fileSize else {
            throw RealmCoreFileError.decryptionFailed(page: page, offset: page * 4096)
        }
        let entry = file + ivOffset
        let iv1 = entry.loadUnaligned(as: UInt32.self)
        let iv2 = entry.loadUnaligned(fromByteOffset: 32, as: UInt32.self)
        if iv1 == 0 {
            memset(out, 0, 4096)
            return
        }
        var mac = [UInt8](repeating: 0, count: 28)
        let cipherText = (file + dataOffset).assumingMemoryBound(to: UInt8.self)
        let ok = hmacKey.withUnsafeBufferPointer { k in
            mac.withUnsafeMutableBufferPointer { rb_hmac_sha224(k.baseAddress, cipherText, 4096, $0.baseAddress) }
        }
        guard ok == 1 else { throw RealmCoreFileError.decryptionFailed(page: page, offset: page * 4096) }
        let iv: UInt32
        if memcmp(mac, entry + 4, 28) == 0 {
            iv = iv1
        } else if iv2 != 0 && memcmp(mac, entry + 36, 28) == 0 {
            iv = iv2
        } else {
            throw RealmCoreFileError.decryptionFailed(page: page, offset: page * 4096)
        }
        var ivBytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: iv.littleEndian) { for i in 0..<4 { ivBytes[i] = $0[i] } }
        withUnsafeBytes(of: Int64(page * 4096).littleEndian) { for i in 0..<8 { ivBytes[4 + i] = $0[i] } }
        let done = aesKey.withUnsafeBufferPointer { k in
            ivBytes.withUnsafeBufferPointer { v in
                rb_aes256cbc_decrypt(k.baseAddress, v.baseAddress, cipherText,
                                     out.assumingMemoryBound(to: UInt8.self), 4096)
            }
        }
        guard done == 1 else { throw RealmCoreFileError.decryptionFailed(page: page, offset: page * 4096) }
    }
}
