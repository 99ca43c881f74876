import Foundation
import RealmStorage

/// Stops the delivery of notifications when invalidated or released.
public final class NotificationToken {
    weak var set: NotifierSet?
    let id: Int
    /// An observation on another queue (`observe(on:)`), ended through this token.
    private var queueObservation: QueueObservation?

    init(set: NotifierSet, id: Int) {
        self.set = set
        self.id = id
    }

    init(ending observation: QueueObservation) {
        id = NotifierSet.noID
        queueObservation = observation
    }

    /// Stops delivery; safe to call more than once.
    public func invalidate() {
        set?.remove(id)
        set = nil
        queueObservation?.end()
        queueObservation = nil
    }

    deinit { invalidate() }
}

extension Realm {
    /// What happened to a Realm.
    public enum Notification: String, Sendable {
        /// The Realm advanced to a newer version (a commit here, or a refresh that saw others' commits).
        case didChange = "RLMRealmDidChangeNotification"
        /// A newer version exists and autorefresh is off.
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }

    /// Throws when notification blocks may not be added now: inside a write transaction, as in realm-swift.
    func checkCanObserve() throws {
        verifyThread("Realm")
        if isFrozen { throw RealmError.frozen(operation: "add a notification block") }
        if isInWriteTransaction { throw RealmError.observeInWriteTransaction }
    }

    /// Adding a notification block inside a write transaction is a programmer error.
    func verifyCanObserve() {
        do { try checkCanObserve() } catch { preconditionFailure("\(error)") }
    }

    /// Calls `block` after every change this Realm sees. Keep the token; releasing it stops delivery.
    public func observe(_ block: @escaping (Notification, Realm) -> Void) -> NotificationToken {
        verifyCanObserve()
        rlm.watchIfNeeded()
        return rlm.notifiers.add(RealmNotifier(block: block))
    }
}

/// The changes of a collection since the previous notification.
public enum RealmCollectionChange<Collection> {
    /// The collection as it was when observation began.
    case initial(Collection)
    /// What changed: `deletions` are indices in the previous version, `insertions` in the new one,
    /// `modifications` in the previous one (as table views expect for batch updates).
    case update(Collection, deletions: [Int], insertions: [Int], modifications: [Int])
    case error(Error)
}

/// One property that changed on an observed object.
public struct PropertyChange {
    public let name: String
    public let oldValue: Any?
    public let newValue: Any?
}

/// What happened to an observed object.
public enum ObjectChange<T: Object> {
    case change(T, [PropertyChange])
    case deleted
    case error(Error)
}

extension Results {
    /// Delivers `.initial` at once, then `.update` with exact indices after every change that touches the
    /// results (objects entering, leaving or changing, including objects they link to, up to four links away).
    /// With `keyPaths`, an object counts as modified only when one of those properties changed (or, for a path
    /// through links such as `"owner.name"`, the linked object's property); entering and leaving always count.
    /// With `queue`, the block runs on that serial queue with results of a Realm confined to it, from the next
    /// turn of the queue on. The results are re-evaluated only when their class, or a class reachable from it
    /// through links or linking objects, changed: a `filter` closure that reads anything else is not re-run
    /// for it. When the results or their changes cannot be read (a damaged file), the block receives `.error`
    /// once and is not called again.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        let realm = rlmRealm
        if let queue {
            let reference = ThreadSafeReference(to: self)
            let deliver = SameQueue(value: block)
            let name = className
            return QueueObservation.start(realm.configuration, on: queue, begin: { realm in
                guard let results = realm.resolve(reference) else {
                    deliver.value(.error(RealmError.noSuchClass(name)))
                    return NotificationToken(set: realm.rlm.notifiers, id: NotifierSet.noID)
                }
                return results.observe(keyPaths: keyPaths, deliver.value)
            }, failed: { deliver.value(.error($0)) })
        }
        realm.verifyCanObserve()
        realm.rlm.watchIfNeeded()
        let paths = ObservedKeyPaths(keyPaths)
        if !holdsValues { paths?.verify(className, realm.reader) }
        let notifier: Notifier
        do {
            if holdsValues {
                notifier = ValueResultsNotifier(results: self, values: try evaluatedValues(), block: block)
            } else {
                notifier = ResultsNotifier(results: self, keys: try evaluatedKeys(), keyPaths: paths, block: block)
            }
        } catch {
            // The results cannot be read: the block is told once and hears nothing more.
            block(.error(RealmError.wrapping(error)))
            return NotificationToken(set: realm.rlm.notifiers, id: NotifierSet.noID)
        }
        let token = realm.rlm.notifiers.add(notifier)
        block(.initial(self))
        return token
    }
}

/// Observing a collection property (`List`, `LinkingObjects`, `MutableSet`, `Map`) on another queue: the owner
/// and property are found again in a Realm confined to the queue, and the collection there observed.
enum CollectionOnQueue {
    static func observe<C>(owner: ObjectRef, propertyIndex: Int, on queue: DispatchQueue,
                           make: @escaping (ObjectRef, Int) -> C, observe: @escaping (C) -> NotificationToken,
                           failed: @escaping (Error) -> Void) -> NotificationToken {
        let className = owner.info.name, key = owner.key, property = owner.info.properties[propertyIndex].name
        let version = owner.realm.reader.version
        let steps = SameQueue(value: (make, observe, failed))
        return QueueObservation.start(owner.realm.configuration, on: queue, begin: { realm in
            let (make, observe, failed) = steps.value
            if !realm.isInWriteTransaction && realm.reader.version < version { realm.refresh() }
            guard let (ref, index) = realm.collectionOwner(className, key, property) else {
                failed(RealmError.invalidatedObject(className: className))
                return NotificationToken(set: realm.rlm.notifiers, id: NotifierSet.noID)
            }
            return observe(make(ref, index))
        }, failed: steps.value.2)
    }
}

extension Realm {
    /// Object `key` of `className` and the index of its property `property` (0 when nil), found in this Realm's
    /// version; nil when the class, the object or the property is not there.
    func collectionOwner(_ className: String, _ key: ObjectKey, _ property: String?) -> (ObjectRef, Int)? {
        do {
            let typed = rlm.typedInfos.values.first(where: { $0.name == className })
            guard let info = try typed ?? rlm.dynamicInfoIfPresent(className) else { return nil }
            let i = property.map { info.index(of: $0) } ?? 0
            guard let i, try reader.exists(info.table, key) else { return nil }
            return (ObjectRef(realm: self, key: key, info: info), i)
        } catch {
            rlm.readFailed(error, "find an object of \(className)")
        }
    }
}

extension List {
    /// Changes by index, as `Results.observe` (with its `keyPaths` and `queue`); for a list of values a
    /// replaced value is a deletion and an insertion.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<List<Element>>) -> Void) -> NotificationToken {
        if let queue {
            guard let owner else { preconditionFailure("only managed lists can be observed") }
            return CollectionOnQueue.observe(owner: owner, propertyIndex: propertyIndex, on: queue,
                                             make: { List<Element>(owner: $0, index: $1) },
                                             observe: { $0.observe(keyPaths: keyPaths, block) },
                                             failed: { block(.error($0)) })
        }
        let list = self
        return results.observe(keyPaths: keyPaths) { change in
            switch change {
            case .initial: block(.initial(list))
            case .update(_, let d, let i, let m): block(.update(list, deletions: d, insertions: i, modifications: m))
            case .error(let e): block(.error(e))
            }
        }
    }
}

extension LinkingObjects {
    /// Changes by index, as `Results.observe` (with its `keyPaths` and `queue`).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        guard let r = results, let owner else { preconditionFailure("unmanaged LinkingObjects cannot be observed") }
        if let queue {
            let name = propertyName
            return CollectionOnQueue.observe(owner: owner, propertyIndex: propertyIndex, on: queue,
                                             make: { LinkingObjects<Element>(propertyName: name, owner: $0, index: $1) },
                                             observe: { $0.observe(keyPaths: keyPaths, block) },
                                             failed: { block(.error($0)) })
        }
        let lo = self
        return r.observe(keyPaths: keyPaths) { change in
            switch change {
            case .initial: block(.initial(lo))
            case .update(_, let d, let i, let m): block(.update(lo, deletions: d, insertions: i, modifications: m))
            case .error(let e): block(.error(e))
            }
        }
    }
}

extension Object {
    /// Calls `block` with the properties that changed after every change to this object, and `.deleted` once
    /// when it is deleted. When its changes cannot be read (a damaged file), the block receives `.error` once
    /// and is not called again.
    ///
    /// With `keyPaths`, only those properties count (a path through links, such as `"owner.name"`, reports its
    /// first property when the linked object's property changed). With `queue`, the block runs on that serial
    /// queue with the object as a Realm confined to it reads it.
    public func observe<T: Object>(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                                   _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        guard let realm = _realm, let obj = self as? T else { preconditionFailure("only managed objects can be observed") }
        if let queue {
            let reference = ThreadSafeReference(to: obj)
            let deliver = SameQueue(value: block)
            return QueueObservation.start(realm.configuration, on: queue, begin: { realm in
                guard let o = realm.resolve(reference) else {
                    deliver.value(.deleted)
                    return NotificationToken(set: realm.rlm.notifiers, id: NotifierSet.noID)
                }
                return o.observe(keyPaths: keyPaths, deliver.value)
            }, failed: { deliver.value(.error($0)) })
        }
        realm.verifyCanObserve()
        realm.rlm.watchIfNeeded()
        let paths = ObservedKeyPaths(keyPaths)
        paths?.verify(obj._info!.name, realm.reader)
        return realm.rlm.notifiers.add(ObjectNotifier(object: obj, keyPaths: paths, block: block))
    }
}
