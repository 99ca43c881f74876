import Foundation
import Synchronization
import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// A Realm: a database file (or in-memory database) seen through the model classes, confined to one thread.
///
/// `Realm(configuration:)` on the same thread and configuration returns the same Realm while it is in use.
/// Reads see one consistent version; it advances at `refresh()`, when a write begins, and after a commit.
public struct Realm {
    let rlm: RealmCore

    /// The Realm of `Configuration.defaultConfiguration`.
    public init() throws { try self.init(configuration: .defaultConfiguration) }

    public init(fileURL: URL) throws {
        var c = Configuration.defaultConfiguration
        c.fileURL = fileURL
        try self.init(configuration: c)
    }

    /// The Realm of `configuration` for the calling thread, or, with `queue`, a Realm confined to that serial
    /// dispatch queue instead of a thread: usable from any block running on `queue`, and its observers are
    /// called on `queue` after every commit by another thread or process, with no `refresh()` needed (call it
    /// on `queue`). On the same thread (or queue) and configuration it returns the same Realm while that is in
    /// use.
    public init(configuration: Configuration, queue: DispatchQueue? = nil) throws {
        guard let queue else {
            let cacheKey = "io.realm-browser.realm:" + configuration.cacheKey
            let dict = Thread.current.threadDictionary
            if let box = dict[cacheKey] as? WeakRealmCore, let core = box.core, !core.isClosed {
                rlm = core
                return
            }
            rlm = try RealmCore(configuration: configuration)
            dict[cacheKey] = WeakRealmCore(rlm)
            return
        }
        dispatchPrecondition(condition: .onQueue(queue))
        let identity = QueueIdentity.of(queue)
        if let core = identity.realms[configuration.cacheKey]?.core, !core.isClosed {
            rlm = core
            return
        }
        rlm = try RealmCore(configuration: configuration, queue: queue, identity: identity)
        identity.realms[configuration.cacheKey] = WeakRealmCore(rlm)
    }

    /// The Realm of `Configuration.defaultConfiguration`, for the calling thread or confined to `queue`.
    public init(queue: DispatchQueue?) throws { try self.init(configuration: .defaultConfiguration, queue: queue) }

    init(core: RealmCore) { rlm = core }

    public var configuration: Configuration { rlm.configuration }

    /// The schema of the file as this Realm sees it.
    public var schema: Schema {
        verifyThread("Realm")
        return Schema(objectSchema: reader.schema.map(ObjectSchema.init))
    }

    /// Whether the Realm holds no objects at all.
    public var isEmpty: Bool {
        verifyThread("Realm")
        let reader = reader
        return reader.schema.allSatisfy { c in
            // Counts come from the version's commit root, and every class of its schema has one.
            do { return try reader.count(c.name) == 0 } catch { rlm.readFailed(error, "count the objects of \(c.name)") }
        }
    }

    public var isInWriteTransaction: Bool { rlm.transaction != nil }

    /// Whether the Realm advances to the newest version on its own. A Realm bound to a queue
    /// (`init(configuration:queue:)`) or opened on the main thread does so, once it has an observer, soon after
    /// any thread or process commits (a refresh scheduled on its queue, or the main queue, which must be
    /// running); with autorefresh off its Realm observers get `.refreshRequired` instead. A Realm of any other
    /// thread has no queue to run that on: it advances only at `refresh()`, `beginWrite()` and its own commits,
    /// and delivers notifications then.
    public var autorefresh: Bool {
        get { rlm.autorefresh }
        nonmutating set { rlm.autorefresh = newValue }
    }

    /// Advances to the newest committed version, delivering notifications; true if the version changed. A
    /// newest version that cannot be opened stops the process with the error.
    @discardableResult
    public func refresh() -> Bool {
        verifyThread("Realm")
        return rlm.refresh()
    }

    /// Releases the version this Realm reads; objects read from it become invalid until the next read.
    public func invalidate() {
        verifyThread("Realm")
        // A frozen Realm keeps its version for as long as it lives.
        if isFrozen { return }
        if rlm.transaction != nil { cancelWrite() }
        rlm.snapshot?.close()
        rlm.snapshot = nil
        rlm.changed()
    }

    /// The current reader: the write transaction while one is open, else the snapshot.
    var reader: Snapshot { rlm.reader }

    func verifyThread(_ what: String) { rlm.verifyThread(what) }
}

extension Realm: Equatable {
    public static func == (a: Realm, b: Realm) -> Bool { a.rlm === b.rlm }
}

/// The snapshots a frozen Realm reads through: the one it was made with, for the thread that froze it, and a
/// sibling of the same version for each other thread that reads it (a snapshot belongs to one thread at a
/// time). All are closed when the frozen Realm goes.
final class FrozenReaders: @unchecked Sendable {
    // Safe: `byThread` is read and written under `lock`; each snapshot is used by its own thread only.
    private let lock = NSLock()
    private let anchor: Snapshot
    private let anchorThread = pthread_self()
    private var byThread: [UInt: Snapshot] = [:]

    init(anchor: Snapshot) { self.anchor = anchor }

    func reader(_ failed: (Error, String) -> Never) -> Snapshot {
        let me = pthread_self()
        if pthread_equal(me, anchorThread) != 0 { return anchor }
        let id = UInt(me)
        return lock.withLock {
            if let s = byThread[id] { return s }
            do {
                let s = try anchor.sibling()
                byThread[id] = s
                return s
            } catch {
                failed(error, "read the frozen version \(anchor.version)")
            }
        }
    }

    func closeAll() {
        lock.withLock {
            for s in byThread.values { s.close() }
            byThread = [:]
        }
        anchor.close()
    }
}

final class WeakRealmCore: NSObject {
    weak var core: RealmCore?
    init(_ core: RealmCore) { self.core = core }
}

/// Identifies a dispatch queue that Realms are bound to, stored on the queue with `setSpecific`: code runs
/// on the queue exactly when `DispatchQueue.getSpecific(key:)` returns this object.
final class QueueIdentity: @unchecked Sendable {
    // Safe: `realms` is only touched by code running on the queue it identifies (a serial queue).
    static let key = DispatchSpecificKey<QueueIdentity>()
    var realms: [String: WeakRealmCore] = [:]

    /// The identity of `queue`, created on first use. Called on `queue`, so no two callers race.
    static func of(_ queue: DispatchQueue) -> QueueIdentity {
        if let id = queue.getSpecific(key: key) { return id }
        let id = QueueIdentity()
        queue.setSpecific(key: key, value: id)
        return id
    }

    /// Whether the calling code runs on the identified queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: QueueIdentity.key) === self }
}

/// The state of one Realm instance.
final class RealmCore {
    let configuration: Realm.Configuration
    let database: Database
    var snapshot: Snapshot?
    var transaction: WriteTransaction?
    var autorefresh = true
    var isClosed = false
    private let thread: pthread_t
    /// The serial queue this Realm is confined to instead of a thread (`Realm(configuration:queue:)`).
    let queue: DispatchQueue?
    private let queueIdentity: QueueIdentity?
    /// Opened on the main thread without a queue: the watcher delivers on the main queue.
    let isMainThreadRealm: Bool
    /// Registered with the change watcher.
    var isWatched = false
    /// Bumped whenever what this Realm reads may have changed: results re-evaluate when it moves.
    private(set) var changeCount: UInt64 = 0
    var typedInfos: [ObjectIdentifier: ClassInfo] = [:]
    var dynamicInfos: [String: ClassInfo] = [:]
    /// The model classes of this Realm by class name: the configuration's (or those in use at open) and any
    /// used since. Nested values given by name (`create` with dictionaries) are created as these.
    var models: [String: ModelMapping] = [:]
    /// During a migration: the classes as they were (`oldObject`), whose links lead to old objects too.
    var migrationOldInfos: [String: ClassInfo] = [:]
    /// Set during `add(_:update:)` so that linked objects are added with the same policy.
    var activeUpdatePolicy: Realm.UpdatePolicy = .error
    let notifiers = NotifierSet()
    /// Set for a frozen Realm (`freeze()`): the version it reads on every thread.
    let frozen: FrozenReaders?
    /// The frozen Realms made from this one, by version, while they are in use (`freeze()` reuses them).
    var frozenRealms: [UInt64: WeakRealmCore] = [:]
    /// Set for a Realm isolated to an actor (`Realm(configuration:actor:)`): it is used by code isolated to that
    /// actor, on whatever thread the actor runs, instead of by one thread or queue.
    var isolation: WeakActor?
    /// The thread that began the open write transaction.
    var writeThread: pthread_t?
    /// Asynchronous writes queued and not yet begun (`beginAsyncWrite`), by id.
    var queuedAsyncWrites: Set<UInt> = []
    var nextAsyncWriteID: UInt = 1

    init(configuration: Realm.Configuration, queue: DispatchQueue? = nil, identity: QueueIdentity? = nil) throws {
        self.configuration = configuration
        thread = pthread_self()
        self.queue = queue
        queueIdentity = identity
        isMainThreadRealm = queue == nil && Thread.isMainThread
        frozen = nil
        if let key = configuration.encryptionKey {
            guard key.count == 64 else {
                throw RealmError.invalidConfiguration("an encryption key must be 64 bytes, got \(key.count)")
            }
        }
        if configuration.deleteRealmIfMigrationNeeded && configuration.migrationBlock != nil {
            throw RealmError.invalidConfiguration("a migrationBlock cannot be used with deleteRealmIfMigrationNeeded (the file is deleted instead of migrated)")
        }
        if configuration.fileURL != nil && configuration.inMemoryIdentifier != nil {
            throw RealmError.invalidConfiguration("both fileURL and inMemoryIdentifier are set")
        }
        database = try RealmCore.openDatabase(configuration)
        snapshot = try RealmError.wrap { try database.snapshot() }
        try RealmCore.register(self)
        try SchemaSync(core: self).run()
    }

    /// Schema versions of the Realms open in this process, by file (or in-memory identifier): one file is
    /// never open with two schema versions at once, since a migration would change it under the other.
    private static let openVersions = Mutex<[String: [ObjectIdentifier: UInt64]]>([:])

    private var fileKey: String {
        configuration.inMemoryIdentifier.map { "mem:" + $0 } ?? "file:" + (configuration.resolvedPath ?? "")
    }

    /// Whether a Realm of the file at `path` is open in this process.
    static func isOpen(path: String) -> Bool {
        openVersions.withLock { $0["file:" + path]?.isEmpty == false }
    }

    private static func register(_ core: RealmCore) throws {
        let key = core.fileKey, id = ObjectIdentifier(core), version = core.configuration.schemaVersion
        let other = openVersions.withLock { open -> UInt64? in
            if let v = open[key]?.values.first(where: { $0 != version }) { return v }
            open[key, default: [:]][id] = version
            return nil
        }
        if let other {
            throw RealmError.invalidConfiguration("\(core.configuration.displayPath) is already open in this process with schemaVersion \(other); "
                + "close every Realm of it (on every thread) before opening it with schemaVersion \(version)")
        }
    }

    /// A frozen Realm of the version `source` reads: usable on any thread, never advancing, never written. Its
    /// class infos are made now, so that no thread changes them later.
    init(frozenFrom source: RealmCore, snapshot anchor: Snapshot) throws {
        configuration = source.configuration
        database = source.database
        thread = pthread_self()
        queue = nil
        queueIdentity = nil
        isMainThreadRealm = false
        autorefresh = false
        frozen = FrozenReaders(anchor: anchor)
        snapshot = anchor
        models = source.models
        for (_, m) in models { _ = try info(for: m.type) }
        for c in anchor.schema { _ = try dynamicInfo(c.name) }
        try RealmCore.register(self)
    }

    static func openDatabase(_ c: Realm.Configuration) throws -> Database {
        try RealmError.wrap {
            if let id = c.inMemoryIdentifier { return try Database.inMemory(identifier: id) }
            let compact = c.shouldCompactOnLaunch.map(CompactCallback.init)
            let options = DatabaseOptions(readOnly: c.readOnly, encryptionKey: c.encryptionKey.map { [UInt8]($0) },
                                          shouldCompactOnLaunch: compact.map { box in { @Sendable total, used in box.f(total, used) } })
            return try Database.open(path: c.resolvedPath!, options: options)
        }
    }

    deinit {
        transaction?.rollback()
        snapshot?.close()
        frozen?.closeAll()
        let key = fileKey, id = ObjectIdentifier(self)
        RealmCore.openVersions.withLock { open in
            open[key]?[id] = nil
            if open[key]?.isEmpty == true { open[key] = nil }
        }
    }

    var reader: Snapshot {
        if let frozen { return frozen.reader(readFailed) }
        if let t = transaction { return t }
        if let s = snapshot { return s }
        do {
            let s = try database.snapshot()
            snapshot = s
            return s
        } catch {
            fatalError("cannot read \(configuration.displayPath): \(error)")
        }
    }

    /// A storage read failed under a call that has no error channel (`isInvalidated`, `object(ofType:forPrimaryKey:)`,
    /// `Results`, `refresh()`, ...): the process stops with the engine's error, which names the page and class,
    /// as Realm Core's exceptions end a realm-swift process. Such a read never answers nil, empty, false or
    /// "deleted" (DECISIONS 70).
    func readFailed(_ error: Error, _ operation: String) -> Never {
        let text = "\(error)"
        let path = configuration.displayPath
        fatalError("cannot \(operation)" + (text.contains(path) ? "" : " in \(path)") + ": \(text)")
    }

    func verifyThread(_ what: String) {
        if let isolation {
            // An actor has no thread: the runtime knows whether the calling code is isolated to it.
            guard let actor = isolation.actor else {
                fatalError("\(what) of an actor-isolated Realm used after its actor was released")
            }
            actor.preconditionIsolated("\(what) of an actor-isolated Realm used outside its actor")
            return
        }
        if !isOnOwnThread {
            fatalError(RealmError.wrongThread(what: what).description)
        }
    }

    /// Whether this Realm is used on the thread (or queue) it belongs to; a frozen Realm belongs to every thread.
    /// Not for actor-isolated Realms (`verifyThread` asks the runtime for them).
    var isOnOwnThread: Bool {
        if frozen != nil { return true }
        if let queueIdentity { return queueIdentity.isCurrent }
        return pthread_equal(thread, pthread_self()) != 0
    }

    func changed() { changeCount &+= 1 }

    /// Advances to the newest version and delivers notifications.
    func refresh() -> Bool {
        guard transaction == nil, frozen == nil else { return false }
        let old = snapshot
        do {
            let s = try database.snapshot()
            if let old, old.version == s.version {
                s.close()
                return false
            }
            snapshot = s
        } catch {
            readFailed(error, "read the newest version")
        }
        changed()
        if let old {
            notifiers.deliver(realm: Realm(core: self), from: old, to: snapshot!)
            old.close()
        }
        return true
    }

    // MARK: Class infos

    /// The class info of a model class, creating its table if missing and a write transaction is open.
    /// Nil when the class has no table yet and none can be created now.
    func info(for type: Object.Type) throws -> ClassInfo? {
        if let i = typedInfos[ObjectIdentifier(type)] { return i }
        let mapping = try ModelMapping.mapping(for: type)
        if models[mapping.className] == nil {
            for m in try ModelMapping.closure(of: [type]) where models[m.className] == nil { models[m.className] = m }
        }
        if reader.classSchema(mapping.className) == nil {
            guard let tx = transaction else { return nil }
            let missing = try ModelMapping.closure(of: [type]).filter { tx.classSchema($0.className) == nil }
            try RealmError.wrap { try tx.createClasses(missing.map(\.schema)) }
            changed()
        }
        guard let fileSchema = reader.classSchema(mapping.className) else { return nil }
        let differences = SchemaSync.differences(model: mapping.schema, file: fileSchema)
        if !differences.filter(\.needsMigration).isEmpty {
            throw RealmError.schemaMismatch(path: configuration.displayPath, differences: differences.map(\.description))
        }
        let info = try RealmError.wrap { try ClassInfo(reader: reader, schema: mapping.schema, model: mapping) }
        typedInfos[ObjectIdentifier(type)] = info
        return info
    }

    func requireInfo(for type: Object.Type, _ operation: String) throws -> ClassInfo {
        if let i = try info(for: type) { return i }
        throw RealmError.notInWriteTransaction(operation: operation)
    }

    /// The class info of a class by name, from the file's schema.
    func dynamicInfo(_ name: String) throws -> ClassInfo {
        if let i = dynamicInfos[name] { return i }
        guard let s = reader.classSchema(name) else { throw RealmError.noSuchClass(name) }
        let info = try RealmError.wrap { try ClassInfo(reader: reader, schema: s, model: nil) }
        dynamicInfos[name] = info
        return info
    }

    /// The class info of a class by name, or nil when the version read has no class of that name (the one case
    /// that means "not there"; any other error is thrown).
    func dynamicInfoIfPresent(_ name: String) throws -> ClassInfo? {
        guard reader.classSchema(name) != nil else { return nil }
        return try dynamicInfo(name)
    }

    /// The class info of the target of a link read from an object of class `from`: the old class during a
    /// migration when `from` is an old class, else the file's.
    func linkTargetInfo(from: ClassInfo, _ target: String) throws -> ClassInfo {
        if let old = migrationOldInfos[from.name], old === from, let t = migrationOldInfos[target] { return t }
        return try dynamicInfo(target)
    }

    /// Forgets resolved classes after the schema changed.
    func schemaChanged() {
        typedInfos = [:]
        dynamicInfos = [:]
        changed()
    }
}

/// The user's compaction callback, called only during the open on the opening thread.
private struct CompactCallback: @unchecked Sendable {
    let f: (Int, Int) -> Bool
}
