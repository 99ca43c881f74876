import Foundation
import RealmStorage

// Observing on an actor (`observe(on: actor)`): the observed object or collection is found again in a Realm
// isolated to the actor, observed there, and the block is called isolated to the actor with values of that
// Realm, after every change, with no `refresh()` needed. The call returns once the observation is registered,
// so a change committed after it is delivered. Invalidating the token from anywhere ends it.

extension QueueObservation {
    /// An observation whose inner token lives on `actor`.
    static func on(_ actor: some Actor) -> QueueObservation { QueueObservation(scheduler: .actor(WeakActor(actor))) }

    /// `block`, called only while this observation has not ended: once the token is invalidated (on any actor or
    /// thread) nothing more is delivered, even a change already on its way to the actor.
    func whileLive<A: Actor, C>(_ block: @escaping @Sendable (isolated A, C) -> Void)
        -> @Sendable (isolated A, C) -> Void {
        { actor, change in if !self.isEnded { block(actor, change) } }
    }

    /// Runs `begin` isolated to `actor` and keeps the token it returns until the returned token is invalidated.
    /// `begin` captures only Sendable values and the observed collection's element type (it is run once, on the
    /// actor), so it is carried there unchecked.
    static func start<A: Actor>(_ observation: QueueObservation, on actor: A,
                                isolation: isolated (any Actor)? = #isolation,
                                _ begin: @escaping (isolated A) -> NotificationToken?) async -> NotificationToken {
        let work = SameQueue(value: begin)
        await actor.realmRun { actor in
            if let token = work.value(actor) { observation.keep(token) }
        }
        return NotificationToken(ending: observation)
    }
}

/// Observing a collection property (`List`, `LinkingObjects`, `MutableSet`, `Map`) on an actor: the owner and
/// property are found again in a Realm isolated to the actor, and the collection there observed.
enum CollectionOnActor {
    static func observe<A: Actor, C>(_ observation: QueueObservation, owner: ObjectRef, propertyIndex: Int, on actor: A,
                                     make: @escaping (ObjectRef, Int) -> C,
                                     observe: @escaping (isolated A, C) -> NotificationToken,
                                     failed: @escaping (isolated A, Error) -> Void,
                                     isolation: isolated (any Actor)?) async -> NotificationToken {
        let realm = owner.realm
        realm.verifyCanObserve()
        let className = owner.info.name, key = owner.key, property = owner.info.properties[propertyIndex].name
        let version = realm.reader.version, configuration = realm.configuration
        // The closures capture only the collection's element type and Sendable values (the key paths and the
        // caller's @Sendable block): calling them on the actor is safe.
        let steps = SameQueue(value: (make, observe, failed))
        return await QueueObservation.start(observation, on: actor) { actor in
            let (make, observe, failed) = steps.value
            let realm: Realm
            do { realm = try Realm(configuration: configuration, isolatedTo: actor) } catch {
                failed(actor, error)
                return nil
            }
            if !realm.isInWriteTransaction && realm.reader.version < version { realm.refresh() }
            guard let (ref, index) = realm.collectionOwner(className, key, property) else {
                failed(actor, RealmError.invalidatedObject(className: className))
                return nil
            }
            return observe(actor, make(ref, index))
        }
    }
}

extension Results {
    /// `observe(keyPaths:_:)` with the block called isolated to `actor`, with results of a Realm isolated to it.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Results<Element>>) -> Void)
        async -> NotificationToken {
        let realm = rlmRealm
        realm.verifyCanObserve()
        let reference = ThreadSafeReference(to: self)
        let configuration = realm.configuration, name = className
        let observation = QueueObservation.on(actor), block = observation.whileLive(block)
        return await QueueObservation.start(observation, on: actor) { actor in
            let realm: Realm
            do { realm = try Realm(configuration: configuration, isolatedTo: actor) } catch {
                block(actor, .error(error))
                return nil
            }
            guard let results = realm.resolve(reference) else {
                block(actor, .error(RealmError.noSuchClass(name)))
                return nil
            }
            return results.observe(keyPaths: keyPaths) { change in block(actor, change) }
        }
    }
}

extension Object {
    /// `observe(keyPaths:_:)` with the block called isolated to `actor`, with the object as a Realm isolated to
    /// it reads it.
    public func observe<A: Actor, T: Object>(keyPaths: [String]? = nil, on actor: A,
                                             _isolation: isolated (any Actor)? = #isolation,
                                             _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void)
        async -> NotificationToken {
        guard let realm = _realm, let obj = self as? T else { preconditionFailure("only managed objects can be observed") }
        realm.verifyCanObserve()
        let reference = ThreadSafeReference(to: obj)
        let configuration = realm.configuration
        let observation = QueueObservation.on(actor), block = observation.whileLive(block)
        return await QueueObservation.start(observation, on: actor) { actor in
            let realm: Realm
            do { realm = try Realm(configuration: configuration, isolatedTo: actor) } catch {
                block(actor, .error(error))
                return nil
            }
            guard let o = realm.resolve(reference) else {
                block(actor, .deleted)
                return nil
            }
            return o.observe(keyPaths: keyPaths) { (change: ObjectChange<T>) in block(actor, change) }
        }
    }
}

extension List {
    /// `observe(keyPaths:_:)` with the block called isolated to `actor`, with the list as a Realm isolated to it
    /// reads it.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<List<Element>>) -> Void)
        async -> NotificationToken {
        guard let owner else { preconditionFailure("only managed lists can be observed") }
        let observation = QueueObservation.on(actor), block = observation.whileLive(block)
        return await CollectionOnActor.observe(
            observation, owner: owner, propertyIndex: propertyIndex, on: actor,
            make: { List<Element>(owner: $0, index: $1) },
            observe: { actor, list in list.observe(keyPaths: keyPaths) { c in block(actor, c) } },
            failed: { actor, error in block(actor, .error(error)) }, isolation: _isolation)
    }
}

extension LinkingObjects {
    /// `observe(keyPaths:_:)` with the block called isolated to `actor`.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<LinkingObjects<Element>>) -> Void)
        async -> NotificationToken {
        guard let owner else { preconditionFailure("unmanaged LinkingObjects cannot be observed") }
        let name = propertyName
        let observation = QueueObservation.on(actor), block = observation.whileLive(block)
        return await CollectionOnActor.observe(
            observation, owner: owner, propertyIndex: propertyIndex, on: actor,
            make: { LinkingObjects<Element>(propertyName: name, owner: $0, index: $1) },
            observe: { actor, lo in lo.observe(keyPaths: keyPaths) { c in block(actor, c) } },
            failed: { actor, error in block(actor, .error(error)) }, isolation: _isolation)
    }
}

extension MutableSet {
    /// `observe(keyPaths:_:)` with the block called isolated to `actor`.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<MutableSet<Element>>) -> Void)
        async -> NotificationToken {
        guard let owner else { preconditionFailure("only managed sets can be observed") }
        let observation = QueueObservation.on(actor), block = observation.whileLive(block)
        return await CollectionOnActor.observe(
            observation, owner: owner, propertyIndex: propertyIndex, on: actor,
            make: { MutableSet<Element>(owner: $0, index: $1) },
            observe: { actor, set in set.observe(keyPaths: keyPaths) { c in block(actor, c) } },
            failed: { actor, error in block(actor, .error(error)) }, isolation: _isolation)
    }
}

extension Map {
    /// `observe(keyPaths:_:)` with the block called isolated to `actor`, by key.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmMapChange<Map<Key, Value>>) -> Void)
        async -> NotificationToken {
        guard let owner else { preconditionFailure("only managed maps can be observed") }
        let observation = QueueObservation.on(actor), block = observation.whileLive(block)
        return await CollectionOnActor.observe(
            observation, owner: owner, propertyIndex: propertyIndex, on: actor,
            make: { Map<Key, Value>(owner: $0, index: $1) },
            observe: { actor, map in map.observe(keyPaths: keyPaths) { c in block(actor, c) } },
            failed: { actor, error in block(actor, .error(error)) }, isolation: _isolation)
    }
}
