/// The 24-byte header (two top refs, two format bytes, flags with the live-slot bit) and, for files in
/// streaming form, the 16-byte footer holding the top ref.
struct CoreFileHeader {
    var topRef: Int
    var format: Int
    var isStreaming: Bool

    static let footerMagic: UInt64 = 0x3034_1252_37E5_26C8

    init(memory: CoreMemory, path: String) throws {
        let size = memory.size
        if size == 0 {
            // An empty file is an empty Realm (Realm Core initialises such a file on first open).
            topRef = 0
            format = 0
            isStreaming = false
            return
        }
        guard size >= 24 else {
            throw RealmCoreFileError.notARealmCoreFile(path: path, reason: "\(size) bytes, shorter than the 24-byte header")
        }
        try memory.ensure(offset: 0, count: 24)
        let h = memory.base
        guard h.loadUnaligned(fromByteOffset: 16, as: UInt32.self) == 0x4244_2D54 else {
            // A page that authenticates but decrypts to no header: the HMAC half of the key is right, the AES
            // half is not.
            if memory.isEncrypted { throw RealmCoreFileError.wrongKey(path: path) }
            throw RealmCoreFileError.notARealmCoreFile(path: path, reason: "no T-DB mnemonic at byte 16")
        }
        let slot = Int(h.load(fromByteOffset: 23, as: UInt8.self) & 1)
        let top0 = UInt64(littleEndian: h.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let top1 = UInt64(littleEndian: h.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        format = Int(h.load(fromByteOffset: 20 + slot, as: UInt8.self))
        isStreaming = slot == 0 && top0 == UInt64.max
        var top: UInt64
        if isStreaming {
            // The footer is the last 16 bytes; an encrypted file's data ends on a page boundary, so its footer may
            // sit before zero padding.
            var end = size
            var found: UInt64?
            while end >= 40 && end > size - 4096 {
                try memory.ensure(offset: end - 16, count: 16)
                let magic = UInt64(littleEndian: h.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self))
                if magic == Self.footerMagic {
                    found = UInt64(littleEndian: h.loadUnaligned(fromByteOffset: end - 16, as: UInt64.self))
                    break
                }
                guard memory.isEncrypted, magic == 0 else { break }
                end -= 8
            }
            guard let found else {
                throw RealmCoreFileError.notARealmCoreFile(path: path, reason: "its header says streaming form but the footer at its end is missing: truncated or damaged")
            }
            top = found
        } else {
            top = slot == 0 ? top0 : top1
        }
        guard top & 7 == 0, top < UInt64(size) else {
            throw RealmCoreFileError.corrupt(what: "top ref \(top) outside the file of \(size) bytes or misaligned", offset: isStreaming ? size - 16 : slot * 8,
                                             context: "file header")
        }
        topRef = Int(top)
    }

    static func checkSupported(format: Int) throws {
        switch format {
        case 2...11, 20...24: return
        case 0: throw RealmCoreFileError.unsupportedFormat(0, reason: "format 0 means \"not yet decided\", yet the file has a top array")
        case 1: throw RealmCoreFileError.unsupportedFormat(1, reason: "files older than format 2 (Realm Core before 0.89) are not read")
        case 12...19: throw RealmCoreFileError.unsupportedFormat(format, reason: "Realm Core never wrote formats 12-19")
        default: throw RealmCoreFileError.unsupportedFormat(format, reason: "newer than format 24, the last this reader knows")
        }
    }

    static func coreReleases(format: Int) -> String {
        switch format {
        case 0: return "any (an empty file, format not yet decided)"
        case 2: return "core 0.89 and earlier (2014-2015)"
        case 3: return "core 0.90-0.96"
        case 4: return "core 0.97"
        case 5: return "core 0.100-1.x"
        case 6: return "core 2.0-2.4"
        case 7: return "core 2.5-2.x"
        case 8: return "core 3.x"
        case 9: return "core 4.0-5.23"
        case 10: return "core 6.0"
        case 11: return "core 6.0.24-6.x"
        case 20: return "core 10.0"
        case 21: return "core 11.0 betas"
        case 22: return "core 11.0-12.x"
        case 23: return "core 13.0-13.27"
        case 24: return "core 14.0-14.14 and 20.x"
        default: return "unknown"
        }
    }

    static func sdkReleases(format: Int) -> String {
        switch format {
        case 2, 3: return "Realm Cocoa 0.9x"
        case 9: return "Realm Cocoa 4.x"
        case 10: return "Realm Cocoa 5.0-5.3"
        case 11: return "Realm Cocoa 5.4 and later 5.x"
        case 20: return "Realm Swift 10.0-10.7"
        case 21: return "Realm Swift 10.8 betas"
        case 22: return "Realm Swift 10.8-10.34"
        case 23: return "Realm Swift 10.35-10.48"
        case 24: return "Realm Swift 10.49 and later"
        default: return "none known"
        }
    }
}
