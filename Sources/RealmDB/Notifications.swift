import Foundation
import RealmStorage

/// Stops the delivery of notifications when invalidated or released.
public final class NotificationToken {
    weak var set: NotifierSet?
    let id: Int

    init(set: NotifierSet, id: Int) {
        self.set = set
        self.id = id
    }

    /// Stops delivery; safe to call more than once.
    public func invalidate() {
        set?.remove(id)
        set = nil
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
    /// The results are re-evaluated only when their class, or a class reachable from it through links or
    /// linking objects, changed: a `filter` closure that reads anything else is not re-run for it. When the
    /// results or their changes cannot be read (a damaged file), the block receives `.error` once and is not
    /// called again.
    public func observe(_ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        let realm = rlmRealm
        realm.verifyCanObserve()
        realm.rlm.watchIfNeeded()
        let notifier: Notifier
        do {
            if holdsValues {
                notifier = ValueResultsNotifier(results: self, values: try evaluatedValues(), block: block)
            } else {
                notifier = ResultsNotifier(results: self, keys: try evaluatedKeys(), block: block)
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

extension List {
    /// Changes by index, as `Results.observe`; for a list of values a replaced value is a deletion and an
    /// insertion.
    public func observe(_ block: @escaping (RealmCollectionChange<List<Element>>) -> Void) -> NotificationToken {
        let list = self
        return results.observe { change in
            switch change {
            case .initial: block(.initial(list))
            case .update(_, let d, let i, let m): block(.update(list, deletions: d, insertions: i, modifications: m))
            case .error(let e): block(.error(e))
            }
        }
    }
}

extension LinkingObjects {
    public func observe(_ block: @escaping (RealmCollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        let lo = self
        guard let r = results else { preconditionFailure("unmanaged LinkingObjects cannot be observed") }
        return r.observe { change in
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
    public func observe<T: Object>(_ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        guard let realm = _realm, let obj = self as? T else { preconditionFailure("only managed objects can be observed") }
        realm.verifyCanObserve()
        realm.rlm.watchIfNeeded()
        return realm.rlm.notifiers.add(ObjectNotifier(object: obj, block: block))
    }
}
