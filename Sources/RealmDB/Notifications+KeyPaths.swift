import Foundation
import RealmStorage

/// The key paths an observer limits its notifications to (`observe(keyPaths:)`): each a property of the
/// observed class, or a path through links to a property of a linked class (`"owner.name"`, `"dogs.age"`).
struct ObservedKeyPaths {
    let paths: [[String]]

    /// Nil for no key paths (every change counts); an empty string or an empty component is a programmer error.
    init?(_ keyPaths: [String]?) {
        guard let keyPaths else { return nil }
        paths = keyPaths.map { k in
            let parts = k.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            precondition(!parts.contains(""), "observe(keyPaths:): '\(k)' is not a key path")
            return parts
        }
    }

    /// The properties of `className`'s object `key` that changed along one of the paths: a first component
    /// that changed itself, or through which a linked object changed along the rest of its path.
    func changedProperties(_ changes: ChangeCache, _ className: String, _ key: ObjectKey) throws -> [String] {
        var out: [String] = []
        for path in paths where !out.contains(path[0]) {
            if try changes.changed(className, key, along: path[...]) { out.append(path[0]) }
        }
        return out
    }

    /// Whether object `key` of `className` changed along any of the paths.
    func matches(_ changes: ChangeCache, _ className: String, _ key: ObjectKey) throws -> Bool {
        for path in paths where try changes.changed(className, key, along: path[...]) { return true }
        return false
    }

    /// Checks that each path's first component is a property of `className` (in `reader`), as realm-swift
    /// refuses a key path that names nothing.
    func verify(_ className: String, _ reader: Snapshot) {
        guard let cs = reader.classSchema(className) else { return }
        for p in paths where cs.property(named: p[0]) == nil {
            preconditionFailure("observe(keyPaths:): class '\(className)' has no property '\(p[0])'")
        }
    }
}

extension ChangeCache {
    /// Whether object `key` of `className` changed along `path`: its property `path.first` changed, or the
    /// objects that property links to (a link, a list, a set or a dictionary of links) changed along the rest.
    func changed(_ className: String, _ key: ObjectKey, along path: ArraySlice<String>, depth: Int = 0) throws -> Bool {
        guard let first = path.first else { return false }
        if try changes(className).modified[key]?.contains(first) == true { return true }
        guard path.count > 1, depth < ChangeCache.maxLinkDepth,
              let p = new.classSchema(className)?.property(named: first), p.type == .link,
              let target = p.objectClassName, new.classSchema(target) != nil else { return false }
        let table = try new.table(className)
        guard try new.exists(table, key) else { return false }
        let h = try new.property(table, first)
        var targets: [ObjectKey] = []
        if h.isDictionary {
            for (_, v) in try new.dictionary(key, h) { if case .link(let k) = v { targets.append(k) } }
        } else if h.isList || h.isSet {
            for v in try new.list(key, h) { if case .link(let k) = v { targets.append(k) } }
        } else if case .link(let k) = try new.value(key, h) {
            targets.append(k)
        }
        for k in targets where try changed(target, k, along: path.dropFirst(), depth: depth + 1) { return true }
        return false
    }
}

/// An observation made on another queue (`observe(on:)`): the observed object or collection is found again in
/// a Realm confined to `queue` and observed there, so the block runs on `queue` with values of that Realm.
/// Invalidating the token from any thread ends it.
final class QueueObservation: @unchecked Sendable {
    // Safe: `inner` and `ended` are read and written under `lock`; the inner token is only used through
    // `scheduler` (on the queue or actor it was made on).
    private let lock = NSLock()
    private var inner: NotificationToken?
    private var ended = false
    let scheduler: RealmScheduler

    init(scheduler: RealmScheduler) { self.scheduler = scheduler }

    /// Opens the Realm of `configuration` on `queue` and calls `begin` there with it; the token it returns is
    /// kept until the returned token is invalidated. `failed` is called on `queue` when the Realm cannot open.
    static func start(_ configuration: Realm.Configuration, on queue: DispatchQueue,
                      begin: @escaping (Realm) -> NotificationToken, failed: @escaping (Error) -> Void) -> NotificationToken {
        let observation = QueueObservation(scheduler: .queue(queue))
        let work = SameQueue(value: (begin, failed))
        queue.async {
            guard !observation.isEnded else { return }
            let realm: Realm
            do {
                realm = try Realm(configuration: configuration, queue: queue)
            } catch {
                return work.value.1(error)
            }
            observation.keep(work.value.0(realm))
        }
        return NotificationToken(ending: observation)
    }

    /// Keeps the inner token (called where it was made), or invalidates it when the observation already ended.
    func keep(_ token: NotificationToken) {
        let keep = lock.withLock {
            if !ended { inner = token }
            return !ended
        }
        if !keep { token.invalidate() }
    }

    var isEnded: Bool { lock.withLock { ended } }

    /// Ends the observation: the inner token is invalidated on its queue.
    func end() {
        let token: NotificationToken? = lock.withLock {
            ended = true
            defer { inner = nil }
            return inner
        }
        guard let token else { return }
        let box = SameQueue(value: token)
        scheduler.run { box.value.invalidate() }
    }
}
