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
            guard let info = try? realm.rlm.dynamicInfo(owner.info.name),
                  let j = info.index(of: owner.info.properties[i].name) else { return nil }
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
            if type == DynamicObject.self {
                guard let info = try? rlm.dynamicInfo(className), (try? reader.exists(info.table, key)) == true else { return nil }
                return dynamicObject(info, key) as? Confined
            }
            guard let info = try? rlm.info(for: type), (try? reader.exists(info.table, key)) == true else { return nil }
            return makeObject(type, key: key, info: info) as? Confined
        case .results(let resolve):
            return resolve(self)
        }
    }
}
