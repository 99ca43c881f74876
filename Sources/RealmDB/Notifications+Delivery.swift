import Foundation
import RealmStorage

/// One registered observer: brought from one version to the next at every delivery.
protocol Notifier: AnyObject {
    /// Advances the notifier's state to `changes.new` and, when `notify` is true, calls its block if anything it
    /// observes changed. A notifier skipped with `commitWrite(withoutNotifying:)` still advances (`notify` false),
    /// so the skipped changes are never reported later. Throws what reading the changes met (a damaged node):
    /// the notifier cannot be advanced, and `fail` is called instead.
    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) throws

    /// Reports an error that ends delivery to this notifier (after it, the set no longer holds it).
    func fail(_ error: Error)
}

/// The notifiers of one Realm, called in registration order after each version change.
final class NotifierSet {
    private var notifiers: [(id: Int, notifier: Notifier)] = []
    private var nextID = 0
    /// The id of a token for an observer that was never added (`add` hands out 1, 2, ...).
    static let noID = 0

    var isEmpty: Bool { notifiers.isEmpty }

    func add(_ n: Notifier) -> NotificationToken {
        nextID += 1
        notifiers.append((nextID, n))
        return NotificationToken(set: self, id: nextID)
    }

    func remove(_ id: Int) { notifiers.removeAll { $0.id == id } }

    private func contains(_ id: Int) -> Bool { notifiers.contains { $0.id == id } }

    /// Tells Realm observers that a newer version exists (autorefresh is off).
    func notifyRefreshRequired(realm: Realm) {
        for (id, n) in notifiers where contains(id) {
            (n as? RealmNotifier)?.block(.refreshRequired, realm)
        }
    }

    /// Delivers the changes from `old` to `new`. An observer invalidated by an earlier observer's block during
    /// this delivery is not called; one added during it starts from `new` and is not called either.
    func deliver(realm: Realm, from old: Snapshot, to new: Snapshot, skipping tokens: [NotificationToken] = []) {
        guard !notifiers.isEmpty, old.version != new.version else { return }
        let skip = Set(tokens.filter { $0.set === self }.map(\.id))
        let changes = ChangeCache(old: old, new: new)
        for (id, n) in notifiers where contains(id) {
            do {
                try n.deliver(realm: realm, changes: changes, notify: !skip.contains(id))
            } catch {
                // What changed cannot be read: the observer is told once and hears nothing more (as realm-swift's
                // `.error`), rather than missing the change without a word.
                remove(id)
                n.fail(RealmError.wrapping(error))
            }
        }
    }
}

/// What changed between two versions, computed per class on first use and shared by all notifiers of a
/// delivery: `Snapshot.changes(in:since:)` walks only the parts of the two object trees that differ, so the
/// cost follows the size of the change, not of the class.
///
/// Every result is kept with the error that computing it met, if any: each notifier that needs it gets the error.
final class ChangeCache {
    let old: Snapshot
    let new: Snapshot
    private var tables: [String: Result<TableChanges, Error>] = [:]
    private var modified: [String: Result<Set<ObjectKey>, Error>] = [:]
    private var changed: Result<Set<String>, Error>?
    private var deepModified: Result<[String: Set<ObjectKey>], Error>?
    /// How many links deep a change still makes an object in a collection modified (as Realm Core).
    static let maxLinkDepth = 4

    init(old: Snapshot, new: Snapshot) {
        self.old = old
        self.new = new
    }

    /// Classes whose contents or schema may differ (read from the two catalogues only).
    func changedClasses() throws -> Set<String> {
        if let c = changed { return try c.get() }
        let c = Result { try new.changedClasses(since: old) }
        changed = c
        return try c.get()
    }

    /// The changes of one class; empty when it did not change.
    func changes(_ className: String) throws -> TableChanges {
        if let t = tables[className] { return try t.get() }
        let t = Result { try changedClasses().contains(className) ? new.changes(in: className, since: old) : TableChanges() }
        tables[className] = t
        return try t.get()
    }

    /// Keys of objects of `className` present in both versions whose stored values differ (backlinks excluded).
    func modifiedKeys(_ className: String) throws -> Set<ObjectKey> {
        if let m = modified[className] { return try m.get() }
        let m = Result { try ChangeCache.scanEveryObject ? scanModifiedKeys(className) : Set(changes(className).modified.keys) }
        modified[className] = m
        return try m.get()
    }

    /// Find modified objects by comparing every object's values (the first implementation), for the
    /// before/after measurement in docs/DECISIONS.md (`NotificationBenchTests`); never set otherwise.
    nonisolated(unsafe) static var scanEveryObject = false

    private func scanModifiedKeys(_ className: String) throws -> Set<ObjectKey> {
        var out = Set<ObjectKey>()
        // A class only one version has has no object in both.
        guard let o = old.classSchema(className), let n = new.classSchema(className) else { return out }
        let ot = try old.table(className), nt = try new.table(className)
        let names = o.properties.filter { $0.type != .linkingObjects && n.property(named: $0.name) != nil }.map(\.name)
        let pairs = try names.map { name in (try old.property(ot, name), try new.property(nt, name)) }
        for k in try new.keys(nt) {
            guard try old.exists(ot, k) else { continue }
            for (a, b) in pairs {
                let differ: Bool
                if a.isDictionary {
                    differ = try old.dictionary(k, a) != new.dictionary(k, b)
                } else if a.isList || a.isSet {
                    differ = try old.list(k, a) != new.list(k, b)
                } else {
                    differ = try old.value(k, a) != new.value(k, b)
                }
                if differ { out.insert(k); break }
            }
        }
        return out
    }

    /// Whether any of `classes` may have changed.
    func anyChanged(_ classes: Set<String>) throws -> Bool { try !changedClasses().isDisjoint(with: classes) }

    /// Objects of `className` in both versions that changed themselves or through the objects they link to
    /// (to-one and to-many links, up to `maxLinkDepth` links away; backlinks do not count).
    ///
    /// Found from the changed side: starting at every directly modified object, incoming links (the stored
    /// backlinks of the newer version) are followed back `maxLinkDepth` steps, so the cost follows the size of
    /// the change and its fan-in, not the size of the observed collection.
    func deepModifiedKeys(_ className: String) throws -> Set<ObjectKey> {
        if deepModified == nil { deepModified = Result { try findDeepModified() } }
        return try deepModified!.get()[className] ?? []
    }

    private func findDeepModified() throws -> [String: Set<ObjectKey>] {
        var result: [String: Set<ObjectKey>] = [:]
        var frontier: [(String, ObjectKey)] = []
        for c in try changedClasses() {
            let m = try modifiedKeys(c)
            guard !m.isEmpty else { continue }
            result[c] = m
            frontier += m.map { (c, $0) }
        }
        // Only classes that some link points at can pass a change on.
        let targets = Set(new.schema.flatMap { $0.properties.filter { $0.type == .link }.compactMap(\.objectClassName) })
        var depth = 0
        while !frontier.isEmpty && depth < ChangeCache.maxLinkDepth {
            depth += 1
            var next: [(String, ObjectKey)] = []
            // A class only the older version has passes nothing on in the newer one.
            for (c, k) in frontier where targets.contains(c) && new.classSchema(c) != nil {
                let incoming = try new.allBacklinks(k, in: try new.table(c))
                for (origin, _, keys) in incoming {
                    for o in keys where result[origin, default: []].insert(o).inserted { next.append((origin, o)) }
                }
            }
            frontier = next
        }
        // Objects that exist only in the newer version are insertions, not modifications.
        for (c, keys) in result {
            let inserted = try changes(c).inserted
            if !inserted.isEmpty { result[c] = keys.subtracting(inserted) }
        }
        return result
    }
}

/// The classes whose changes may change what a collection of `className` shows: the class, every class
/// reachable from it through links and linking objects (filters and sorts may read them), and `extra`.
func classesAffecting(_ className: String, in reader: Snapshot, extra: [String] = []) -> Set<String> {
    var seen: Set<String> = [className]
    var stack = [className]
    while let c = stack.popLast() {
        for p in reader.classSchema(c)?.properties ?? [] {
            if let t = p.objectClassName, seen.insert(t).inserted { stack.append(t) }
        }
    }
    return seen.union(extra)
}

final class RealmNotifier: Notifier {
    let block: (Realm.Notification, Realm) -> Void
    init(block: @escaping (Realm.Notification, Realm) -> Void) { self.block = block }

    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) {
        if notify { block(.didChange, realm) }
    }

    /// Never called: delivering `.didChange` reads nothing.
    func fail(_ error: Error) {}
}

final class ResultsNotifier<Element: RealmCollectionValue>: Notifier {
    let results: Results<Element>
    let block: (RealmCollectionChange<Results<Element>>) -> Void
    var oldKeys: [ObjectKey]
    /// When set, the only properties whose changes make an object modified.
    let keyPaths: ObservedKeyPaths?

    /// `keys`: the results as the block's `.initial` showed them.
    init(results: Results<Element>, keys: [ObjectKey], keyPaths: ObservedKeyPaths? = nil,
         block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) {
        self.results = results
        self.block = block
        self.keyPaths = keyPaths
        oldKeys = keys
    }

    /// The classes whose changes can change these results (computed at each delivery: the schema may change).
    private func affecting(_ reader: Snapshot) -> Set<String> {
        switch results.source {
        case .table(let name): return classesAffecting(name, in: reader)
        case .list(let o, _), .linkingObjects(let o, _): return classesAffecting(results.className, in: reader, extra: [o.info.name])
        case .values(let c): return [c.owner.info.name]
        }
    }

    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) throws {
        guard try changes.anyChanged(affecting(changes.new)) else { return }
        let newKeys = try results.evaluatedKeys()
        var modified = try changes.deepModifiedKeys(results.className)
        if let keyPaths {
            let className = results.className
            modified = try modified.filter { try keyPaths.matches(changes, className, $0) }
        }
        let sortedByKey: Bool
        if case .table = results.source, results.operations.allSatisfy({ if case .filter = $0 { return true } else { return false } }) {
            sortedByKey = true
        } else {
            sortedByKey = false
        }
        let d = sortedByKey ? CollectionDiff(sortedOld: oldKeys, sortedNew: newKeys, modified: modified)
                            : CollectionDiff(old: oldKeys, new: newKeys, modified: modified)
        oldKeys = newKeys
        guard notify, !d.isEmpty else { return }
        block(.update(results, deletions: d.deletions, insertions: d.insertions, modifications: d.modifications))
    }

    func fail(_ error: Error) { block(.error(error)) }
}

/// The notifier of results of values: values have no identity, so the changes are the difference of the two
/// sequences of values (a replaced value is a deletion and an insertion; nothing is "modified").
final class ValueResultsNotifier<Element: RealmCollectionValue>: Notifier {
    let results: Results<Element>
    let block: (RealmCollectionChange<Results<Element>>) -> Void
    var oldValues: [RealmStorage.Value]

    init(results: Results<Element>, values: [RealmStorage.Value], block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) {
        self.results = results
        self.block = block
        oldValues = values
    }

    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) throws {
        guard let c = results.valueCollection, try changes.anyChanged([c.owner.info.name]) else { return }
        let newValues = try results.evaluatedValues()
        guard newValues != oldValues else { return }
        // Each distinct value as a key, so that the key diff (a longest common subsequence) applies.
        var ids: [RealmStorage.Value: ObjectKey] = [:]
        func key(_ v: RealmStorage.Value) -> ObjectKey {
            let k = StoredOrder.distinctKey(v)
            if let id = ids[k] { return id }
            let id = ObjectKey(UInt64(ids.count))
            ids[k] = id
            return id
        }
        let d = CollectionDiff(old: oldValues.map(key), new: newValues.map(key), modified: [])
        oldValues = newValues
        guard notify, !d.isEmpty else { return }
        block(.update(results, deletions: d.deletions, insertions: d.insertions, modifications: d.modifications))
    }

    func fail(_ error: Error) { block(.error(error)) }
}

final class ObjectNotifier<T: Object>: Notifier {
    let object: T
    let block: (ObjectChange<T>) -> Void
    /// When set, the only properties reported (and whose changes call the block).
    let keyPaths: ObservedKeyPaths?
    var done = false

    init(object: T, keyPaths: ObservedKeyPaths? = nil, block: @escaping (ObjectChange<T>) -> Void) {
        self.object = object
        self.keyPaths = keyPaths
        self.block = block
    }

    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) throws {
        guard !done, let info = object._info else { return }
        let old = changes.old, new = changes.new
        // Gone with its class, or deleted.
        guard new.classSchema(info.name) != nil, try new.exists(try new.table(info.name), object._key) else {
            done = true
            if notify { block(.deleted) }
            return
        }
        guard notify, let oldSchema = old.classSchema(info.name) else { return }
        let names: [String]
        if let keyPaths {
            names = try keyPaths.changedProperties(changes, info.name, object._key)
        } else {
            names = try changes.changes(info.name).modified[object._key] ?? []
        }
        guard !names.isEmpty else { return }
        let ot = try old.table(info.name)
        var out: [PropertyChange] = []
        for name in names {
            // A property this Realm's class (or the older version) does not have has no change to show.
            guard let i = info.index(of: name), let oldProperty = oldSchema.property(named: name) else { continue }
            let p = info.properties[i]
            // Read through `new` first, so that a damaged node is this delivery's error, not a stop in an accessor.
            if p.schema.isDictionary {
                _ = try new.dictionary(object._key, p.handle)
            } else if p.schema.isList || p.schema.isSet {
                _ = try new.list(object._key, p.handle)
            } else {
                _ = try new.value(object._key, p.handle)
            }
            let newAny = flatten(try realm.anyValue(of: object, property: i))
            var oldAny: Any?
            if !p.schema.isList && !oldProperty.isList && !p.schema.isCollection && !oldProperty.isCollection {
                oldAny = try typed(try old.value(object._key, try old.property(ot, name)), property: i, info: info, realm: realm, new: new)
            }
            out.append(PropertyChange(name: name, oldValue: oldAny, newValue: newAny))
        }
        if !out.isEmpty { block(.change(object, out)) }
    }

    func fail(_ error: Error) {
        guard !done else { return }
        done = true
        block(.error(error))
    }

    /// An old stored value as the property's Swift value; a link to an object deleted since is nil.
    private func typed(_ v: RealmStorage.Value, property i: Int, info: ClassInfo, realm: Realm, new: Snapshot) throws -> Any? {
        if case .null = v { return nil }
        let s = info.properties[i].schema
        if case .link(let k) = v {
            // Its target deleted since (or its class gone since): nil.
            guard let target = s.objectClassName, new.classSchema(target) != nil, try new.exists(try new.table(target), k) else { return nil }
            return realm.object(of: target, key: k, preferring: nil)
        }
        if let model = info.model, let typed = flatten(model.fields[i].accessor.typedValue(v, realm)) { return typed }
        if s.type == .mixed { return AnyRealmValue(stored: v, realm) }
        return AnyConversion.swiftValue(v, type: s.type)
    }
}

/// `Optional<Optional<X>>.some(.none)` and the like as plain nil, so that `oldValue == nil` reads naturally.
func flatten(_ v: Any??) -> Any? {
    guard case .some(.some(let x)) = v else { return nil }
    let m = Mirror(reflecting: x)
    if m.displayStyle == .optional {
        guard let inner = m.children.first?.value else { return nil }
        return flatten(.some(.some(inner)))
    }
    return x
}
