import RealmStorage

/// A collection property of an object (`List`, `MutableSet`, `Map`): unmanaged it holds its elements itself;
/// managed it reads and writes through its owning object's property. The reading and writing every such
/// collection does, in one place.
protocol CollectionProperty: AnyObject {
    /// The owning object when managed.
    var owner: ObjectRef? { get }
    /// The property's index in the owner's class info.
    var propertyIndex: Int { get }
    /// The type's name for thread checks and messages ("List", "MutableSet", "Map").
    static var typeName: String { get }
}

extension CollectionProperty {
    /// The owner's Realm, the owner and the property, checked for the calling thread; nil when unmanaged.
    var managedContext: (Realm, ObjectRef, ClassInfo.Property)? {
        guard let owner else { return nil }
        owner.realm.verifyThread(Self.typeName)
        return (owner.realm, owner, owner.info.properties[propertyIndex])
    }

    /// Reads the managed collection: a deleted owner stops the program (as realm-swift's invalidated
    /// collections do), and any other read error stops it naming the file, page and class (DECISIONS 70).
    func readStored<T>(_ realm: Realm, _ owner: ObjectRef, _ p: ClassInfo.Property,
                       _ body: (Snapshot, ObjectKey, PropertyHandle) throws -> T) -> T {
        do {
            return try body(realm.reader, owner.key, p.handle)
        } catch StorageError.noSuchObject {
            fatalError(RealmError.invalidatedObject(className: owner.info.name).description)
        } catch {
            realm.rlm.readFailed(error, "read the \(Self.typeName) \(owner.info.name).\(p.name)")
        }
    }

    /// The managed collection as lazy, auto-updating results of `E`: its objects (a list or set of links), or
    /// its values (`kind`). Queries on an unmanaged collection are a programmer error.
    func collectionResults<E: RealmCollectionValue>(_ kind: ValueCollection.Kind, _ model: E.Type) -> Results<E> {
        guard let owner else {
            preconditionFailure("queries on an unmanaged \(Self.typeName) are not supported; use Swift's filter and sorted")
        }
        if E.self is Object.Type && kind == .list {
            return Results(realm: owner.realm, source: .list(owner, propertyIndex), model: E.self)
        }
        return Results(realm: owner.realm, source: .values(ValueCollection(kind: kind, owner: owner, index: propertyIndex)), model: E.self)
    }

    /// Registers `notifier` with the owner's Realm, then calls `initial` (the `.initial` delivery) at once.
    func observe(with notifier: some Notifier, initial: () -> Void) -> NotificationToken {
        guard let owner else { preconditionFailure("only managed collections can be observed") }
        owner.realm.verifyCanObserve()
        owner.realm.rlm.watchIfNeeded()
        let token = owner.realm.rlm.notifiers.add(notifier)
        initial()
        return token
    }

    /// Changes the managed collection inside the Realm's write transaction; outside one, or when the write is
    /// refused, a fatal error naming the operation and the property, as realm-swift raises.
    func modify(_ operation: String, _ body: (WriteTransaction, ObjectKey, PropertyHandle, Realm) throws -> Void) {
        guard let (realm, owner, p) = managedContext else { return }
        do {
            let tx = try realm.requireWrite(operation)
            try RealmError.wrap { try body(tx, owner.key, p.handle, realm) }
            realm.rlm.changed()
        } catch {
            fatalError("cannot \(operation) '\(owner.info.name).\(p.name)': \(error)")
        }
    }
}

/// What a set's or a map's notifier shares: its owner and property, reading the collection in a version (empty
/// once the owner or its class is gone), whether a change touched it, and ending delivery on an error.
class CollectionPropertyNotifier<Changes> {
    let owner: ObjectRef
    let propertyIndex: Int
    let changed: (Changes) -> Void
    let failed: (Error) -> Void
    var done = false

    init(owner: ObjectRef, propertyIndex: Int, changed: @escaping (Changes) -> Void, failed: @escaping (Error) -> Void) {
        self.owner = owner
        self.propertyIndex = propertyIndex
        self.changed = changed
        self.failed = failed
    }

    var property: ClassInfo.Property { owner.info.properties[propertyIndex] }

    /// The collection in snapshot `s`, or `empty` when the owner, its class or the property is not there.
    func read<T>(_ s: Snapshot, empty: T, _ body: (Snapshot, PropertyHandle) throws -> T) throws -> T {
        let info = owner.info
        guard s.classSchema(info.name)?.property(named: property.name) != nil else { return empty }
        let t = try s.table(info.name)
        guard try s.exists(t, owner.key) else { return empty }
        return try body(s, try s.property(t, property.name))
    }

    /// Whether the owner is gone in `changes.new` (delivery then ends after this one), and whether the change
    /// modified the property.
    func state(_ changes: ChangeCache) throws -> (gone: Bool, ownChange: Bool) {
        let info = owner.info
        let new = changes.new
        let gone = try new.classSchema(info.name) == nil || !(try new.exists(try new.table(info.name), owner.key))
        if gone { done = true }
        let own = try changes.changes(info.name).modified[owner.key]?.contains(property.name) ?? false
        return (gone, own)
    }

    func fail(_ error: Error) {
        guard !done else { return }
        done = true
        failed(error)
    }
}
