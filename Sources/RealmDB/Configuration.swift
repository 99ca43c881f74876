import Foundation
import Synchronization
import RealmStorage

extension Realm {
    /// Called when the configured schema version is higher than the file's: `oldSchemaVersion` is the file's.
    public typealias MigrationBlock = (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

    /// Where a Realm lives and how it is opened.
    ///
    /// Safe to send between threads (`@unchecked`): the closures it holds are called only by the thread that
    /// opens a Realm with it, as in realm-swift.
    public struct Configuration: @unchecked Sendable {
        /// The file; setting it clears `inMemoryIdentifier`. Default: `default.realm` in the working directory.
        public var fileURL: URL? {
            didSet { if fileURL != nil { inMemoryIdentifier = nil } }
        }
        /// An in-memory Realm shared by every Realm opened with the same identifier while one is open;
        /// setting it clears `fileURL`.
        public var inMemoryIdentifier: String? {
            didSet { if inMemoryIdentifier != nil { fileURL = nil } }
        }
        /// A 64-byte key; files are encrypted with it (see the encryption issue: until it lands, a key is refused).
        public var encryptionKey: Data?
        public var readOnly: Bool
        /// The version of the model classes; raise it when they change, and migrate in `migrationBlock`.
        public var schemaVersion: UInt64
        public var migrationBlock: MigrationBlock?
        /// When the models differ from the file so that a migration would be needed (with or without a higher
        /// schemaVersion), delete every object and class and start over instead; not with a migrationBlock.
        public var deleteRealmIfMigrationNeeded: Bool
        /// Called with the file size and the bytes in use when the file is first opened; true compacts it.
        public var shouldCompactOnLaunch: ((_ totalBytes: Int, _ usedBytes: Int) -> Bool)?
        /// The model classes of this Realm. When nil: every class used with a Realm so far in this process,
        /// plus classes found in the file, plus any model class on first use (see docs/DECISIONS.md).
        public var objectTypes: [Object.Type]?

        public init(fileURL: URL? = nil, inMemoryIdentifier: String? = nil, encryptionKey: Data? = nil,
                    readOnly: Bool = false, schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil,
                    deleteRealmIfMigrationNeeded: Bool = false,
                    shouldCompactOnLaunch: ((Int, Int) -> Bool)? = nil, objectTypes: [Object.Type]? = nil) {
            self.fileURL = fileURL
            self.inMemoryIdentifier = inMemoryIdentifier
            if inMemoryIdentifier != nil { self.fileURL = nil }
            self.encryptionKey = encryptionKey
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.objectTypes = objectTypes
        }

        /// The older spelling used in some examples.
        public init(fileUrl: URL?, readOnly: Bool = false) {
            self.init(fileURL: fileUrl, readOnly: readOnly)
        }

        private static let defaultStore = Mutex<Configuration>(Configuration())

        /// The configuration `Realm()` uses.
        public static var defaultConfiguration: Configuration {
            get { defaultStore.withLock { $0 } }
            set { defaultStore.withLock { $0 = newValue } }
        }

        /// The file path, or nil for an in-memory Realm.
        var resolvedPath: String? {
            if inMemoryIdentifier != nil { return nil }
            if let url = fileURL { return url.path }
            return FileManager.default.currentDirectoryPath + "/default.realm"
        }

        /// What identifies the Realm file (or in-memory Realm) for caching per thread.
        var cacheKey: String {
            if let id = inMemoryIdentifier { return "mem:\(id):\(schemaVersion):\(readOnly)" }
            return "file:\(resolvedPath ?? ""):\(schemaVersion):\(readOnly)"
        }

        var displayPath: String {
            if let id = inMemoryIdentifier { return "in-memory realm '\(id)'" }
            return resolvedPath ?? "?"
        }
    }
}
