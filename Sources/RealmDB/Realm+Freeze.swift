import Foundation
import RealmStorage

// Frozen Realms, objects and collections (DECISIONS 82): a frozen Realm reads one version for ever, may be
// used on any thread (each thread reads through its own snapshot of that version), and is never written or
// observed. `thaw()` finds the same object or collection in the calling thread's live Realm.

extension Realm {
    /// Whether this Realm is frozen: it reads one version on every thread and cannot change.
    public var isFrozen: Bool { rlm.frozen != nil }

    /// A frozen Realm of the version this Realm reads now, usable on any thread. Freezing the same version
    /// again gives the same frozen Realm while it is in use. Not inside a write transaction (its changes are
    /// not committed yet).
    public func freeze() -> Realm {
        verifyThread("Realm")
        if isFrozen { return self }
        precondition(!isInWriteTransaction, "cannot freeze a Realm inside a write transaction: commit it first")
        let snapshot = reader
        if let core = rlm.frozenRealms[snapshot.version]?.core { return Realm(core: core) }
        do {
            let core = try RealmCore(frozenFrom: rlm, snapshot: try RealmError.wrap { try snapshot.sibling() })
            rlm.frozenRealms = rlm.frozenRealms.filter { $0.value.core != nil }
            rlm.frozenRealms[snapshot.version] = WeakRealmCore(core)
            return Realm(core: core)
        } catch {
            rlm.readFailed(error, "freeze version \(snapshot.version)")
        }
    }

    /// The live Realm of this file for the calling thread (this Realm itself when it is not frozen).
    public func thaw() -> Realm {
        guard isFrozen else { return self }
        do {
            return try Realm(configuration: configuration)
        } catch {
            fatalError("cannot thaw \(configuration.displayPath): \(error)")
        }
    }

    /// `object.freeze()`.
    public func freeze<T: Object>(_ object: T) -> T { object.freeze() }
    /// `object.thaw()`.
    public func thaw<T: Object>(_ object: T) -> T? { object.thaw() }
    /// `collection.freeze()`.
    public func freeze<C: RealmCollection>(_ collection: C) -> C { collection.freeze() }
}

extension Object {
    /// Whether the object belongs to a frozen Realm.
    public var isFrozen: Bool { _realm?.isFrozen ?? false }

    /// The object as a frozen Realm of the version its Realm reads now sees it: readable on any thread, never
    /// changing. Unmanaged objects cannot be frozen.
    public func freeze() -> Self {
        guard let realm = _realm, let info = _info else { preconditionFailure("an unmanaged object cannot be frozen") }
        if realm.isFrozen { return self }
        let frozen = realm.freeze()
        guard let o = frozen.object(of: info.name, key: _key, preferring: type(of: self)) as? Self else {
            preconditionFailure("a frozen \(info.name) is not a \(Self.self)")
        }
        return o
    }

    /// The object in the calling thread's live Realm, or nil when it was deleted since.
    public func thaw() -> Self? {
        guard let realm = _realm, let info = _info else { preconditionFailure("an unmanaged object cannot be thawed") }
        guard realm.isFrozen else { return self }
        let live = realm.thaw()
        guard let (ref, _) = live.collectionOwner(info.name, _key, nil) else { return nil }
        return live.object(of: ref.info.name, key: ref.key, preferring: type(of: self)) as? Self
    }
}

extension Results {
    /// Whether the results belong to a frozen Realm.
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// The results as a frozen Realm of the version their Realm reads now sees them (evaluated now, so that
    /// any thread can read them).
    public func freeze() -> Results<Element> {
        let realm = rlmRealm
        if realm.isFrozen { return self }
        guard let frozen = _rlmResolved(in: realm.freeze()) as? Results<Element> else {
            preconditionFailure("results of \(className) cannot be frozen")
        }
        _ = frozen.elementCount
        return frozen
    }

    /// The results in the calling thread's live Realm; nil when what they come from (a class, an object whose
    /// list they are) is gone.
    public func thaw() -> Results<Element>? {
        let realm = rlmRealm
        guard realm.isFrozen else { return self }
        return _rlmResolved(in: realm.thaw()) as? Results<Element>
    }
}

extension CollectionProperty {
    /// The same property of the same object in `realm`, or nil when the object is gone there.
    func translated<C>(to realm: Realm, _ make: (ObjectRef, Int) -> C) -> C? {
        guard let owner else { preconditionFailure("an unmanaged \(Self.typeName) cannot be frozen or thawed") }
        let name = owner.info.properties[propertyIndex].name
        guard let (ref, i) = realm.collectionOwner(owner.info.name, owner.key, name) else { return nil }
        return make(ref, i)
    }

    func frozen<C>(_ make: (ObjectRef, Int) -> C) -> C? {
        guard let owner else { preconditionFailure("an unmanaged \(Self.typeName) cannot be frozen") }
        return translated(to: owner.realm.freeze(), make)
    }

    func thawed<C>(_ make: (ObjectRef, Int) -> C) -> C? {
        guard let owner else { preconditionFailure("an unmanaged \(Self.typeName) cannot be thawed") }
        return translated(to: owner.realm.thaw(), make)
    }
}

extension List {
    public var isFrozen: Bool { realm?.isFrozen ?? false }
    /// The list as a frozen Realm of the version its Realm reads now sees it.
    public func freeze() -> List<Element> {
        if isFrozen { return self }
        guard let l = frozen({ List<Element>(owner: $0, index: $1) }) else { preconditionFailure("the list's object is deleted") }
        return l
    }
    /// The list in the calling thread's live Realm, or nil when its object was deleted since.
    public func thaw() -> List<Element>? { isFrozen ? thawed { List<Element>(owner: $0, index: $1) } : self }
}

extension MutableSet {
    public var isFrozen: Bool { realm?.isFrozen ?? false }
    /// The set as a frozen Realm of the version its Realm reads now sees it.
    public func freeze() -> MutableSet<Element> {
        if isFrozen { return self }
        guard let s = frozen({ MutableSet<Element>(owner: $0, index: $1) }) else { preconditionFailure("the set's object is deleted") }
        return s
    }
    /// The set in the calling thread's live Realm, or nil when its object was deleted since.
    public func thaw() -> MutableSet<Element>? { isFrozen ? thawed { MutableSet<Element>(owner: $0, index: $1) } : self }
}

extension Map {
    public var isFrozen: Bool { realm?.isFrozen ?? false }
    /// The map as a frozen Realm of the version its Realm reads now sees it.
    public func freeze() -> Map<Key, Value> {
        if isFrozen { return self }
        guard let m = frozen({ Map<Key, Value>(owner: $0, index: $1) }) else { preconditionFailure("the map's object is deleted") }
        return m
    }
    /// The map in the calling thread's live Realm, or nil when its object was deleted since.
    public func thaw() -> Map<Key, Value>? { isFrozen ? thawed { Map<Key, Value>(owner: $0, index: $1) } : self }
}

extension LinkingObjects {
    public var isFrozen: Bool { realm?.isFrozen ?? false }
    /// The linking objects as a frozen Realm of the version their Realm reads now sees them.
    public func freeze() -> LinkingObjects<Element> {
        guard let owner else { preconditionFailure("unmanaged LinkingObjects cannot be frozen") }
        if isFrozen { return self }
        let name = propertyName
        guard let (ref, i) = owner.realm.freeze().collectionOwner(owner.info.name, owner.key, owner.info.properties[propertyIndex].name) else {
            preconditionFailure("the linking objects' object is deleted")
        }
        return LinkingObjects(propertyName: name, owner: ref, index: i)
    }
    /// The linking objects in the calling thread's live Realm, or nil when their object was deleted since.
    public func thaw() -> LinkingObjects<Element>? {
        guard let owner else { preconditionFailure("unmanaged LinkingObjects cannot be thawed") }
        guard isFrozen else { return self }
        let name = propertyName
        guard let (ref, i) = owner.realm.thaw().collectionOwner(owner.info.name, owner.key, owner.info.properties[propertyIndex].name) else {
            return nil
        }
        return LinkingObjects(propertyName: name, owner: ref, index: i)
    }
}
