import RealmStorage

/// Something confined to the thread of its Realm: objects, results, lists.
public protocol ThreadConfined {
    var realm: Realm? { get }
    var isInvalidated: Bool { get }
}

extension Object: ThreadConfined {}

extension Results: ThreadConfined {
    public var isInvalidated: Bool { false }
}

/// A way to hand an object or results to another thread: create it on the source thread, send it, and
/// `resolve` it in a Realm of the same file on the destination thread. Resolve each reference once.
///
/// Sendable (`@unchecked`): it carries only the object's class, key and version, and for results their
/// operations, which the destination thread evaluates itself.
public final class ThreadSafeReference<Confined: ThreadConfined>: @unchecked Sendable {
    enum Payload {
        case object(Object.Type, className: String, key: ObjectKey)
        case results(resolve: (Realm) -> Confined?)
    }

    let payload: Payload
    let version: UInt64
    let databasePath: String
    private var resolved = false

    /// A reference to a managed object or results; unmanaged objects cannot be handed over (send the values).
    public init(to confined: Confined) {
        guard let realm = confined.realm else {
            preconditionFailure("a ThreadSafeReference needs a managed object: unmanaged ones can be sent as they are")
        }
        version = realm.reader.version
        databasePath = realm.rlm.database.path
        if let o = confined as? Object {
            payload = .object(type(of: o), className: o._info!.name, key: o._key)
        } else if let r = confined as? _ResultsReference {
            payload = .results(resolve: { realm in r._rlmResolved(in: realm) as? Confined })
        } else {
            preconditionFailure("ThreadSafeReference supports objects and results")
        }
    }

    func resolveOnce() -> Bool {
        defer { resolved = true }
        return !resolved
    }
}

protocol _ResultsReference {
    func _rlmResolved(in realm: Realm) -> Any?
}

extension Results: _ResultsReference {
    func _rlmResolved(in realm: Realm) -> Any? {
        func translate(_ owner: ObjectRef, _ i: Int) -> (ObjectRef, Int)? {
            let info: ClassInfo
            do {
                // Nil: this Realm's version has no class of that name.
                guard let found = try realm.rlm.dynamicInfoIfPresent(owner.info.name) else { return nil }
                info = found
            } catch {
                realm.rlm.readFailed(error, "read the class \(owner.info.name)")
            }
            guard let j = info.index(of: owner.info.properties[i].name) else { return nil }
            return (ObjectRef(realm: realm, key: owner.key, info: info), j)
        }
        let newSource: Source
        switch source {
        case .table(let name): newSource = .table(name)
        case .list(let o, let i):
            guard let (r, j) = translate(o, i) else { return nil }
            newSource = .list(r, j)
        case .linkingObjects(let o, let i):
            guard let (r, j) = translate(o, i) else { return nil }
            newSource = .linkingObjects(r, j)
        case .values(let c):
            guard let (r, j) = translate(c.owner, c.index) else { return nil }
            newSource = .values(c.translated(to: r, index: j))
        }
        return Results(realm: realm, source: newSource, model: model, operations: operations)
    }
}

extension Realm {
    /// The object or results a reference was made for, as seen by this Realm (advanced to at least the
    /// reference's version), or nil when it was deleted, belongs to another file or was already resolved.
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        verifyThread("Realm")
        guard reference.databasePath == rlm.database.path, reference.resolveOnce() else { return nil }
        if !isInWriteTransaction && reader.version < reference.version { refresh() }
        switch reference.payload {
        case .object(let type, let className, let key):
            do {
                // No info: this Realm's version has no class of that name (no table), so no such object either.
                let info = try type == DynamicObject.self ? rlm.dynamicInfoIfPresent(className) : rlm.info(for: type)
                guard let info, try RealmError.wrap({ try reader.exists(info.table, key) }) else { return nil }
                if type == DynamicObject.self { return dynamicObject(info, key) as? Confined }
                return makeObject(type, key: key, info: info) as? Confined
            } catch {
                rlm.readFailed(error, "resolve a reference to an object of \(className)")
            }
        case .results(let resolve):
            return resolve(self)
        }
    }
}
