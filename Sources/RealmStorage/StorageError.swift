/// Every error the storage engine reports. Each case says what failed and where; none carries user values but
/// `invalidDictionaryKey`, whose key is what the caller must change.
public enum StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not a database of this format (its first bytes are something else).
    case notADatabase(path: String)
    /// The file was written by a newer version of the format than this build reads.
    case newerFormat(path: String, fileVersion: UInt32, supported: UInt32)
    /// The file is of an older format that must be upgraded before this build reads it, and it was opened
    /// read-only (a writable open upgrades it).
    case olderFormat(path: String, fileVersion: UInt32, reason: String)
    /// The file is shorter than its header says it must be.
    case truncated(path: String, expectedBytes: UInt64, actualBytes: UInt64)
    /// A structure inside the file failed a check; `location` names the structure and page.
    case corrupt(path: String, location: String, reason: String)
    /// An operating-system call failed.
    case io(path: String, operation: String, errno: Int32)
    /// The database was opened read-only and a write was attempted.
    case readOnly(path: String)
    /// The file is in use by another process and the operation needs exclusive access.
    case inUseByAnotherProcess(path: String, operation: String)
    /// The operation needs the database to itself and this process still uses it (`reason` says how).
    case inUse(path: String, operation: String, reason: String)
    /// A schema change or object operation named a class that does not exist.
    case noSuchClass(String)
    /// A class with that name already exists.
    case classExists(String)
    /// A property name that does not exist on the class.
    case noSuchProperty(className: String, property: String)
    /// A property with that name already exists on the class.
    case propertyExists(className: String, property: String)
    /// A name is empty or too long (class names ≤ 57 bytes, property names ≤ 63 bytes).
    case invalidName(kind: String, name: String, reason: String)
    /// The schema definition is invalid (bad primary key type, unindexable type, missing link target, ...).
    case invalidSchema(String)
    /// A value does not fit the property (wrong type, null in a required property, too long).
    case typeMismatch(className: String, property: String, expected: String, got: String)
    /// A value exceeds a size limit (strings and data ≤ 16 MB).
    case valueTooLarge(className: String, property: String, bytes: Int, limit: Int)
    /// A value a property cannot hold for a reason other than its type: a mixed value nested too deep, a typed
    /// link to an embedded object, a dictionary key that is not allowed.
    case invalidValue(className: String, property: String, reason: String)
    /// A primary key value is already used by another object of the class. The value is not included.
    case duplicatePrimaryKey(className: String, property: String)
    /// A primary key that identifies its object cannot be changed once the object exists.
    case primaryKeyChange(className: String, property: String)
    /// The object does not exist (deleted, or never created) in this version.
    case noSuchObject(className: String, key: UInt64)
    /// A list index is outside the list.
    case indexOutOfRange(index: Int, count: Int)
    /// An object of an embedded class was to be created on its own: it is created through its parent's link or
    /// list (`createEmbeddedObject`, `listInsertEmbedded`, `listSetEmbedded`).
    case embeddedObjectCreation(className: String)
    /// A link or list element was to point at an object of an embedded class that already exists: each embedded
    /// object has exactly one owner, so a new one is created in place instead.
    case existingEmbeddedObject(className: String, property: String, embeddedClass: String)
    /// The transaction was already committed or rolled back.
    case transactionEnded
    /// This thread already has a write transaction open on the database.
    case writeInProgress(path: String)
    /// Two snapshots compared with each other belong to different databases.
    case differentDatabases(path: String, otherPath: String)
    /// The snapshot was closed; its version may no longer be read.
    case snapshotClosed(path: String, version: UInt64)
    /// The file is encrypted and was opened without a key.
    case encryptionKeyRequired(path: String)
    /// A key was given for a file that is not encrypted.
    case notEncrypted(path: String)
    /// The key does not open this encrypted file. The key itself is never part of the message.
    case invalidKey(path: String)
    /// An encryption key must be 64 bytes.
    case invalidKeyLength(Int)
    /// A sync of the file failed earlier in this process: what the page cache holds can no longer be trusted,
    /// so this handle writes no more; the file keeps what the disk has (reopen the database to go on).
    case writesStopped(path: String, cause: String)
    /// A dictionary key a writer may not store: empty, starting with `$`, or containing `.` or NUL (Realm Core
    /// refuses the last three; the empty key too, here). Keys already in a file are read whatever they are.
    case invalidDictionaryKey(className: String, property: String, key: String, reason: String)

    public var description: String {
        switch self {
        case .notADatabase(let p): return "\(p): not a database file (unknown header)"
        case .newerFormat(let p, let v, let s):
            return "\(p): written by a newer format version (\(v)); this build reads versions up to \(s)"
        case .olderFormat(let p, let v, let r):
            return "\(p): file format \(v) \(r); open it once without read-only to upgrade it to format \(Meta.formatVersion)"
        case .truncated(let p, let e, let a): return "\(p): file is truncated: expected at least \(e) bytes, found \(a)"
        case .corrupt(let p, let l, let r): return "\(p): corrupt \(l): \(r)"
        case .io(let p, let op, let e): return "\(p): \(op) failed: \(String(cString: strerror(e)))"
        case .readOnly(let p): return "\(p): opened read-only; writes are not allowed"
        case .inUseByAnotherProcess(let p, let op): return "\(p): cannot \(op): the file is open in another process"
        case .inUse(let p, let op, let r): return "\(p): cannot \(op): \(r)"
        case .noSuchClass(let c): return "no class named '\(c)'"
        case .classExists(let c): return "class '\(c)' already exists"
        case .noSuchProperty(let c, let p): return "class '\(c)' has no property '\(p)'"
        case .propertyExists(let c, let p): return "class '\(c)' already has a property '\(p)'"
        case .invalidName(let k, let n, let r): return "invalid \(k) name '\(n)': \(r)"
        case .invalidSchema(let m): return "invalid schema: \(m)"
        case .typeMismatch(let c, let p, let e, let g): return "\(c).\(p) expects \(e), got \(g)"
        case .valueTooLarge(let c, let p, let b, let l): return "\(c).\(p): value of \(b) bytes exceeds the limit of \(l) bytes"
        case .invalidValue(let c, let p, let r): return "\(c).\(p): \(r)"
        case .duplicatePrimaryKey(let c, let p): return "duplicate primary key for \(c).\(p)"
        case .primaryKeyChange(let c, let p): return "\(c).\(p) is the primary key; it cannot be changed once the object exists"
        case .noSuchObject(let c, let k): return "no object \(c) #\(k)"
        case .indexOutOfRange(let i, let n): return "index \(i) out of range for a list of \(n)"
        case .embeddedObjectCreation(let c):
            return "Explicit creation of embedded object not allowed in: \(c) (an embedded object is created through its parent's link or list)"
        case .existingEmbeddedObject(let c, let p, let e):
            return "\(c).\(p): Cannot set a link to an existing managed embedded object of '\(e)' (create a new one through the parent instead)"
        case .transactionEnded: return "the transaction has already ended"
        case .writeInProgress(let p): return "\(p): this thread already has a write transaction open"
        case .differentDatabases(let p, let o): return "\(p): cannot compare with a snapshot of another database (\(o))"
        case .snapshotClosed(let p, let v): return "\(p): the snapshot of version \(v) was closed"
        case .encryptionKeyRequired(let p): return "\(p): the file is encrypted: open it with its 64-byte key"
        case .notEncrypted(let p): return "\(p): a key was given but the file is not encrypted"
        case .invalidKey(let p): return "\(p): invalid key: this key does not open the file"
        case .invalidKeyLength(let n): return "an encryption key is 64 bytes, this one is \(n)"
        case .writesStopped(let p, let c):
            return "\(p): writes stopped after an earlier failure (\(c)); close and reopen the database to go on"
        case .invalidDictionaryKey(let c, let p, let k, let r): return "\(c).\(p): invalid dictionary key \(k.debugDescription): \(r)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
