import RealmQuery
import RealmStorage

/// Every error the object API reports. Each case says what failed and where; none carries user values.
public enum RealmError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The storage engine failed (file, corruption, constraint); the underlying error says what and where.
    case storage(StorageError)
    /// A model class cannot be stored: unsupported type, bad primary key, missing link target, ...
    case invalidModel(className: String, reason: String)
    /// The file's schema differs from the models and the schema version was not raised.
    case schemaMismatch(path: String, differences: [String])
    /// A migration could not be completed (the engine refused a change, the block left duplicate primary
    /// keys, ...); the file is unchanged, still at `fromVersion`.
    indirect case migrationFailed(path: String, fromVersion: UInt64, toVersion: UInt64, underlying: RealmError)
    /// The configured schema version is lower than the file's.
    case schemaVersionDecreased(path: String, fileVersion: UInt64, configured: UInt64)
    /// A write was attempted outside a write transaction.
    case notInWriteTransaction(operation: String)
    /// `beginWrite` was called while this Realm already has a write transaction open.
    case alreadyInWriteTransaction
    /// A Realm or an object was used from a thread other than the one it belongs to.
    case wrongThread(what: String)
    /// The object was deleted, or its Realm was invalidated.
    case invalidatedObject(className: String)
    /// A value given for a property does not fit it.
    case invalidValue(className: String, property: String, reason: String)
    /// An object's class has no such property.
    case noSuchProperty(className: String, property: String)
    /// No class of that name in the Realm's schema.
    case noSuchClass(String)
    /// An object already belongs to another Realm; copy it with `create(_:value:)` instead.
    case objectInOtherRealm(className: String)
    /// The class has no primary key, but the operation needs one.
    case noPrimaryKey(className: String, operation: String)
    /// The configuration is inconsistent (for example both a file URL and an in-memory identifier).
    case invalidConfiguration(String)
    /// An operation is not allowed on a read-only Realm.
    case readOnly(path: String)
    /// A frozen Realm (or an object or collection of one) cannot be written or observed.
    case frozen(operation: String)
    /// A notification block was added inside a write transaction (add it before `beginWrite`).
    case observeInWriteTransaction
    /// A query does not parse or does not fit the class; the error has the message, column and caret line.
    case query(QueryError)

    public var description: String {
        switch self {
        case .storage(let e): return e.description
        case .invalidModel(let c, let r): return "invalid model class '\(c)': \(r)"
        case .schemaMismatch(let p, let d):
            return "\(p): the schema of the file differs from the model classes and schemaVersion was not raised:\n"
                + d.map { "- \($0)" }.joined(separator: "\n")
        case .migrationFailed(let p, let f, let t, let u):
            return "\(p): the migration from schema version \(f) to \(t) failed and the file was left unchanged: \(u)"
        case .schemaVersionDecreased(let p, let f, let c):
            return "\(p): the file's schema version is \(f), higher than the configured schemaVersion \(c)"
        case .notInWriteTransaction(let op):
            return "cannot \(op) outside a write transaction: call it inside realm.write { } or after beginWrite()"
        case .alreadyInWriteTransaction: return "this Realm is already in a write transaction"
        case .wrongThread(let w): return "\(w) accessed from a thread other than the one it was created on"
        case .invalidatedObject(let c): return "object of class '\(c)' has been deleted or invalidated"
        case .invalidValue(let c, let p, let r): return "invalid value for '\(c).\(p)': \(r)"
        case .noSuchProperty(let c, let p): return "class '\(c)' has no property named '\(p)'"
        case .noSuchClass(let c): return "no class named '\(c)' in the Realm's schema"
        case .objectInOtherRealm(let c):
            return "object of class '\(c)' is already managed by another Realm; use create(_:value:) to copy it"
        case .noPrimaryKey(let c, let op): return "class '\(c)' has no primary key, so \(op) is not possible"
        case .invalidConfiguration(let r): return "invalid configuration: \(r)"
        case .readOnly(let p): return "\(p): the Realm is read-only"
        case .frozen(let op): return "cannot \(op): the Realm is frozen (thaw() gives a live one)"
        case .observeInWriteTransaction:
            return "cannot add a notification block inside a write transaction; add it before beginWrite()"
        case .query(let e): return e.description
        }
    }
}

extension RealmError {
    /// `error` as this module reports it: a storage error wrapped in `.storage`.
    static func wrapping(_ error: Error) -> Error {
        if let e = error as? StorageError { return RealmError.storage(e) }
        return error
    }

    /// Runs `body`; an error stops the program with a message naming the operation and the error, as Realm's
    /// exceptions do for misuse of `add`, `create`, `delete` and `beginWrite` (whose `try…` forms report it).
    static func stopOnError<T>(_ operation: String, _ body: () throws -> T) -> T {
        do {
            return try body()
        } catch {
            fatalError("RealmDB: cannot \(operation): \(error)")
        }
    }

    /// Runs `body`, wrapping storage errors.
    static func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as RealmError {
            throw e
        } catch let e as StorageError {
            throw RealmError.storage(e)
        } catch {
            throw error
        }
    }
}
