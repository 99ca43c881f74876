/// Why a Realm Core file could not be opened or read. Every case names what failed and where (a byte offset in
/// the decrypted file, a table, a column); values and keys stay out of the messages.
public enum RealmCoreFileError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The file could not be opened, sized or mapped (`errno`).
    case io(path: String, operation: String, errno: Int32)
    /// The bytes are not a Realm Core file (no `T-DB` mnemonic, impossible header, too small).
    case notARealmCoreFile(path: String, reason: String)
    /// The file looks encrypted (no mnemonic, page-sized) and no key was given.
    case keyRequired(path: String)
    /// A key was given but the first page's HMAC matches neither stored HMAC: the key is not this file's.
    case wrongKey(path: String)
    /// The key is not 64 bytes.
    case badKeyLength(Int)
    /// A later page of an encrypted file failed its HMAC check (the key opened page 0, so the page is damaged).
    case decryptionFailed(page: Int, offset: Int)
    /// The file's format version is one this reader does not read.
    case unsupportedFormat(Int, reason: String)
    /// The file was left half-way through an upgrade from one format to the next.
    case interruptedUpgrade(format: Int, table: String, detail: String)
    /// A structure is damaged: `what` failed at byte `offset`, in `context` (table, column, object).
    case corrupt(what: String, offset: Int, context: String)
    /// A value kind that the reader does not decode (e.g. the old `Mixed` column type of formats ≤ 9).
    case unsupportedValue(what: String, context: String)
    /// A position or key outside the class.
    case noSuchObject(className: String, detail: String)

    public var description: String {
        switch self {
        case let .io(path, operation, errno):
            return "\(path): \(operation) failed (errno \(errno))"
        case let .notARealmCoreFile(path, reason):
            return "\(path): not a Realm Core file (\(reason))"
        case let .keyRequired(path):
            return "\(path): the file has no Realm Core header; it is encrypted or not a Realm file (a 64-byte key is needed to open an encrypted one)"
        case let .wrongKey(path):
            return "\(path): wrong key (the first page does not authenticate with it)"
        case let .badKeyLength(n):
            return "an encryption key must be 64 bytes, not \(n)"
        case let .decryptionFailed(page, offset):
            return "encrypted page \(page) (data offset \(offset)) fails authentication: the file is damaged"
        case let .unsupportedFormat(format, reason):
            return "unsupported Realm Core file format \(format): \(reason)"
        case let .interruptedUpgrade(format, table, detail):
            return "the file was left half-way through an upgrade from format \(format) (table '\(table)': \(detail)); open it once with the app that was upgrading it"
        case let .corrupt(what, offset, context):
            return "corrupt Realm Core file: \(what) at offset \(offset)\(context.isEmpty ? "" : " (\(context))")"
        case let .unsupportedValue(what, context):
            return "\(what) is not supported by this reader\(context.isEmpty ? "" : " (\(context))")"
        case let .noSuchObject(className, detail):
            return "\(className): \(detail)"
        }
    }
}
