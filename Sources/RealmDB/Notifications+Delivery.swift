import Foundation
import RealmStorage

/// One registered observer: brought from one version to the next at every delivery.
protocol Notifier: AnyObject {
    /// Advances the notifier's state to `changes.new` and, when `notify` is true, calls its block if anything it
    /// observes changed. A notifier skipped with `commitWrite(withoutNotifying:)` still advances (`notify` false),
    /// so the skipped changes are never reported later.
    func deliver(realm: Realm, changes: ChangeCache, notify: Bool)
}

/// The notifiers of one Realm, called in registration order after each version change.
final class NotifierSet {
    private var notifiers: [(id: Int, notifier: Notifier)] = []
    private var nextID = 0

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
            n.deliver(realm: realm, changes: changes, notify: !skip.contains(id))
        }
    }
}

/// What changed between two versions, computed per class on first use and shared by all notifiers of a
/// delivery: `Snapshot.changes(in:since:)` walks only the parts of the two object trees that differ, so the
/// cost follows the size of the change, not of the class.
final class ChangeCache {
    let old: Snapshot
    let new: Snapshot
    private var tables: [String: TableChanges] = [:]
    private var modified: [String: Set<ObjectKey>] = [:]
    /// How many links deep a change still makes an object in a collection modified (as Realm Core).
    static let maxLinkDepth = 4

    init(old: Snapshot, new: Snapshot) {
        self.old = old
        self.new = new
    }

    /// Classes whose contents or schema may differ (read from the two catalogues only).
    lazy var changedClasses: Set<String> = {
        if let c = try? new.changedClasses(since: old) { return c }
        return Set(new.schema.map(\.name) + old.schema.map(\.name))
    }()

    /// The changes of one class; empty when it did not change.
    func changes(_ className: String) -> TableChanges {
        if let t = tables[className] { return t }
        var t = TableChanges()
        if changedClasses.contains(className) {
            if let c = try? new.changes(in: className, since: old) { t = c }
        }
        tables[className] = t
        return t
    }

    /// Keys of objects of `className` present in both versions whose stored values differ (backlinks excluded).
    func modifiedKeys(_ className: String) -> Set<ObjectKey> {
        if let m = modified[className] { return m }
        let m = ChangeCache.scanEveryObject ? scanModifiedKeys(className) : Set(changes(className).modified.keys)
        modified[className] = m
        return m
    }

    /// Find modified objects by comparing every object's values (the first implementation), for the
    /// before/after measurement in docs/DECISIONS.md (`NotificationBenchTests`); never set otherwise.
    nonisolated(unsafe) static var scanEveryObject = false

    private func scanModifiedKeys(_ className: String) -> Set<ObjectKey> {
        var out = Set<ObjectKey>()
        guard let o = old.classSchema(className), let n = new.classSchema(className),
              let ot = try? old.table(className), let nt = try? new.table(className), let keys = try? new.keys(nt) else { return out }
        let names = o.properties.filter { $0.type != .linkingObjects && n.property(named: $0.name) != nil }.map(\.name)
        let pairs = names.compactMap { name in (try? old.property(ot, name)).flatMap { a in (try? new.property(nt, name)).map { (a, $0) } } }
        for k in keys where (try? old.exists(ot, k)) == true {
            for (a, b) in pairs {
                let differ = a.isList ? (try? old.list(k, a)) != (try? new.list(k, b)) : (try? old.value(k, a)) != (try? new.value(k, b))
                if differ { out.insert(k); break }
            }
        }
        return out
    }

    /// Whether any of `classes` may have changed.
    func anyChanged(_ classes: Set<String>) -> Bool { !changedClasses.isDisjoint(with: classes) }

    /// Objects of `className` in both versions that changed themselves or through the objects they link to
    /// (to-one and to-many links, up to `maxLinkDepth` links away; backlinks do not count).
    ///
    /// Found from the changed side: starting at every directly modified object, incoming links (the stored
    /// backlinks of the newer version) are followed back `maxLinkDepth` steps, so the cost follows the size of
    /// the change and its fan-in, not the size of the observed collection.
    func deepModifiedKeys(_ className: String) -> Set<ObjectKey> { deepModified[className] ?? [] }

    private lazy var deepModified: [String: Set<ObjectKey>] = {
        var result: [String: Set<ObjectKey>] = [:]
        var frontier: [(String, ObjectKey)] = []
        for c in changedClasses {
            let m = modifiedKeys(c)
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
            for (c, k) in frontier where targets.contains(c) {
                guard let t = try? new.table(c), let incoming = try? new.allBacklinks(k, in: t) else { continue }
                for (origin, _, keys) in incoming {
                    for o in keys where result[origin, default: []].insert(o).inserted { next.append((origin, o)) }
                }
            }
            frontier = next
        }
        // Objects that exist only in the newer version are insertions, not modifications.
        for (c, keys) in result where !changes(c).inserted.isEmpty {
            result[c] = keys.subtracting(changes(c).inserted)
        }
        return result
    }()
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
}

final class ResultsNotifier<Element: Object>: Notifier {
    let results: Results<Element>
    let block: (RealmCollectionChange<Results<Element>>) -> Void
    var oldKeys: [ObjectKey]

    init(results: Results<Element>, block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) {
        self.results = results
        self.block = block
        oldKeys = results.keys
    }

    /// The classes whose changes can change these results (computed at each delivery: the schema may change).
    private func affecting(_ reader: Snapshot) -> Set<String> {
        switch results.source {
        case .table(let name): return classesAffecting(name, in: reader)
        case .list(let o, _), .linkingObjects(let o, _): return classesAffecting(results.className, in: reader, extra: [o.info.name])
        }
    }

    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) {
        guard changes.anyChanged(affecting(changes.new)) else { return }
        let newKeys = results.keys
        let modified = changes.deepModifiedKeys(results.className)
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
}

final class ObjectNotifier<T: Object>: Notifier {
    let object: T
    let block: (ObjectChange<T>) -> Void
    var done = false

    init(object: T, block: @escaping (ObjectChange<T>) -> Void) {
        self.object = object
        self.block = block
    }

    func deliver(realm: Realm, changes: ChangeCache, notify: Bool) {
        guard !done, let info = object._info else { return }
        let old = changes.old, new = changes.new
        guard let nt = try? new.table(info.name), (try? new.exists(nt, object._key)) == true else {
            done = true
            if notify { block(.deleted) }
            return
        }
        guard notify, let names = changes.changes(info.name).modified[object._key], let ot = try? old.table(info.name) else { return }
        var out: [PropertyChange] = []
        for name in names {
            guard let i = info.index(of: name), let oh = try? old.property(ot, name) else { continue }
            let p = info.properties[i]
            let newAny = flatten(try? realm.anyValue(of: object, property: i))
            var oldAny: Any?
            if !p.schema.isList, let ov = try? old.value(object._key, oh) {
                oldAny = typed(ov, property: i, info: info, realm: realm, new: new)
            }
            out.append(PropertyChange(name: name, oldValue: oldAny, newValue: newAny))
        }
        if !out.isEmpty { block(.change(object, out)) }
    }

    /// An old stored value as the property's Swift value; a link to an object deleted since is nil.
    private func typed(_ v: RealmStorage.Value, property i: Int, info: ClassInfo, realm: Realm, new: Snapshot) -> Any? {
        if case .null = v { return nil }
        let s = info.properties[i].schema
        if case .link(let k) = v {
            guard let target = s.objectClassName, let t = try? new.table(target), (try? new.exists(t, k)) == true else { return nil }
            return realm.object(of: target, key: k, preferring: nil)
        }
        if let model = info.model, let typed = flatten(model.fields[i].accessor.typedValue(v, realm)) { return typed }
        if s.type == .mixed { return AnyRealmValue(stored: v) }
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
