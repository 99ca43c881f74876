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
    private var deepMemo: [String: [ObjectKey: Bool]] = [:]
    private var classReach: [String: Bool] = [:]
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

    /// Whether an object of `className` in both versions changed itself or through the objects it links to
    /// (to-one and to-many links, up to `maxLinkDepth` links away; backlinks do not count).
    func isModified(_ className: String, _ key: ObjectKey) -> Bool {
        isModified(className, key, depth: 0)
    }

    private func isModified(_ className: String, _ key: ObjectKey, depth: Int) -> Bool {
        if modifiedKeys(className).contains(key) { return true }
        guard depth < ChangeCache.maxLinkDepth, linksReachChanges(className, depth: depth) else { return false }
        if let m = deepMemo[className]?[key] { return m }
        deepMemo[className, default: [:]][key] = false  // a cycle back here adds nothing
        var result = false
        if let schema = new.classSchema(className), let t = try? new.table(className) {
            search: for p in schema.properties where p.type == .link {
                guard let target = p.objectClassName, linksReachChanges(target, depth: depth + 1) || !modifiedKeys(target).isEmpty,
                      let h = try? new.property(t, p.name) else { continue }
                let linked: [RealmStorage.Value] = p.isList ? ((try? new.list(key, h)) ?? []) : [(try? new.value(key, h)) ?? .null]
                for v in linked {
                    if case .link(let lk) = v, isModified(target, lk, depth: depth + 1) {
                        result = true
                        break search
                    }
                }
            }
        }
        deepMemo[className, default: [:]][key] = result
        return result
    }

    /// Whether some class with modified objects can be reached from `className` through links within the
    /// remaining depth (so that following this class's links can find a change at all).
    private func linksReachChanges(_ className: String, depth: Int) -> Bool {
        let memoKey = "\(depth):\(className)"
        if let r = classReach[memoKey] { return r }
        classReach[memoKey] = false
        var r = false
        if depth < ChangeCache.maxLinkDepth, let schema = new.classSchema(className) {
            for p in schema.properties where p.type == .link {
                guard let target = p.objectClassName else { continue }
                if !modifiedKeys(target).isEmpty || linksReachChanges(target, depth: depth + 1) { r = true; break }
            }
        }
        classReach[memoKey] = r
        return r
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
        let className = results.className
        var modified = Set<ObjectKey>()
        if !changes.changedClasses.isEmpty {
            let direct = changes.modifiedKeys(className)
            let old = Set(oldKeys)
            for k in newKeys where old.contains(k) && (direct.contains(k) || changes.isModified(className, k)) {
                modified.insert(k)
            }
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
