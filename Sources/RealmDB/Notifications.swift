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

    /// Calls `block` after every change this Realm sees. Keep the token; releasing it stops delivery.
    public func observe(_ block: @escaping (Notification, Realm) -> Void) -> NotificationToken {
        verifyThread("Realm")
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
    /// results (objects entering, leaving or changing, including objects they link to).
    public func observe(_ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        let realm = rlmRealm
        realm.verifyThread("Results")
        let n = ResultsNotifier(results: self, block: block)
        let token = realm.rlm.notifiers.add(n)
        block(.initial(self))
        return token
    }
}

extension List where Element: Object {
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
    /// when it is deleted.
    public func observe<T: Object>(_ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        guard let realm = _realm, let obj = self as? T else { preconditionFailure("only managed objects can be observed") }
        realm.verifyThread("Object")
        return realm.rlm.notifiers.add(ObjectNotifier(object: obj, block: block))
    }
}

// MARK: - Delivery

protocol Notifier: AnyObject {
    func deliver(realm: Realm, from old: Snapshot, to new: Snapshot, changes: ChangeCache)
}

/// The notifiers of one Realm, called in registration order after each version change.
final class NotifierSet {
    private var notifiers: [(Int, Notifier)] = []
    private var nextID = 0

    func add(_ n: Notifier) -> NotificationToken {
        nextID += 1
        notifiers.append((nextID, n))
        return NotificationToken(set: self, id: nextID)
    }

    func remove(_ id: Int) { notifiers.removeAll { $0.0 == id } }

    func deliver(realm: Realm, from old: Snapshot, to new: Snapshot, skipping tokens: [NotificationToken] = []) {
        guard !notifiers.isEmpty, old.version != new.version else { return }
        let skip = Set(tokens.filter { $0.set === self }.map(\.id))
        let changes = ChangeCache(old: old, new: new)
        for (id, n) in notifiers where !skip.contains(id) {
            n.deliver(realm: realm, from: old, to: new, changes: changes)
        }
    }
}

/// Which objects changed between two versions, computed once per class and shared by all notifiers.
final class ChangeCache {
    let old: Snapshot
    let new: Snapshot
    private var modified: [String: Set<ObjectKey>] = [:]

    init(old: Snapshot, new: Snapshot) {
        self.old = old
        self.new = new
    }

    /// Keys of objects of `className` present in both versions whose stored values differ.
    func modifiedKeys(_ className: String) -> Set<ObjectKey> {
        if let m = modified[className] { return m }
        var out = Set<ObjectKey>()
        if let o = old.classSchema(className), let n = new.classSchema(className),
           let ot = try? old.table(className), let nt = try? new.table(className) {
            let names = o.properties.filter { $0.type != .linkingObjects && n.property(named: $0.name) != nil }.map(\.name)
            let oh = names.compactMap { try? old.property(ot, $0) }
            let nh = names.compactMap { try? new.property(nt, $0) }
            if let keys = try? new.keys(nt) {
                for k in keys where (try? old.exists(ot, k)) == true {
                    for (a, b) in zip(oh, nh) {
                        let va = a.isList ? (try? old.list(k, a)).map { RealmStorage.Value.data(ListDigest.of($0)) } : try? old.value(k, a)
                        let vb = b.isList ? (try? new.list(k, b)).map { RealmStorage.Value.data(ListDigest.of($0)) } : try? new.value(k, b)
                        if va != vb { out.insert(k); break }
                    }
                }
            }
        }
        modified[className] = out
        return out
    }
}

enum ListDigest {
    static func of(_ values: [RealmStorage.Value]) -> [UInt8] {
        var h = Hasher()
        h.combine(values)
        let x = h.finalize()
        return withUnsafeBytes(of: x) { Array($0) } + [UInt8(truncatingIfNeeded: values.count)]
    }
}

final class RealmNotifier: Notifier {
    let block: (Realm.Notification, Realm) -> Void
    init(block: @escaping (Realm.Notification, Realm) -> Void) { self.block = block }
    func deliver(realm: Realm, from old: Snapshot, to new: Snapshot, changes: ChangeCache) { block(.didChange, realm) }
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

    func deliver(realm: Realm, from old: Snapshot, to new: Snapshot, changes: ChangeCache) {
        let newKeys = results.keys
        let className = results.className
        var modified = changes.modifiedKeys(className)
        // Changes to objects linked from these objects count as modifications too (one level deep).
        if let schema = new.classSchema(className) {
            for p in schema.properties where p.type == .link {
                let targetChanged = changes.modifiedKeys(p.objectClassName!)
                guard !targetChanged.isEmpty, let t = try? new.table(className), let h = try? new.property(t, p.name) else { continue }
                for k in newKeys where !modified.contains(k) {
                    let linked: [RealmStorage.Value] = p.isList ? ((try? new.list(k, h)) ?? []) : [(try? new.value(k, h)) ?? .null]
                    if linked.contains(where: { if case .link(let lk) = $0 { return targetChanged.contains(lk) } else { return false } }) {
                        modified.insert(k)
                    }
                }
            }
        }
        let d = CollectionDiff(old: oldKeys, new: newKeys, modified: modified)
        oldKeys = newKeys
        if d.deletions.isEmpty && d.insertions.isEmpty && d.modifications.isEmpty { return }
        block(.update(results, deletions: d.deletions, insertions: d.insertions, modifications: d.modifications))
    }
}

/// Deletions (old indices), insertions (new indices) and modifications (old indices) between two key lists.
struct CollectionDiff {
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []

    init(old: [ObjectKey], new: [ObjectKey], modified: Set<ObjectKey>) {
        // Keys may repeat (lists); match occurrences in order.
        var newCounts: [ObjectKey: Int] = [:]
        for k in new { newCounts[k, default: 0] += 1 }
        var oldCounts: [ObjectKey: Int] = [:]
        for k in old { oldCounts[k, default: 0] += 1 }
        // Kept objects must keep their relative order; an object that moved is a deletion plus an insertion.
        var seenOld: [ObjectKey: Int] = [:]
        var keptOld: [(Int, ObjectKey, Int)] = []  // old index, key, occurrence
        for (i, k) in old.enumerated() {
            let occ = seenOld[k, default: 0]
            seenOld[k] = occ + 1
            if occ < newCounts[k, default: 0] { keptOld.append((i, k, occ)) } else { deletions.append(i) }
        }
        var seenNew: [ObjectKey: Int] = [:]
        var keptNew: [(Int, ObjectKey, Int)] = []
        for (i, k) in new.enumerated() {
            let occ = seenNew[k, default: 0]
            seenNew[k] = occ + 1
            if occ < oldCounts[k, default: 0] { keptNew.append((i, k, occ)) } else { insertions.append(i) }
        }
        // Longest common subsequence of the kept sequences (by key and occurrence) keeps its place; the rest moved.
        let a = keptOld.map { Pair(key: $0.1, occ: $0.2) }
        let b = keptNew.map { Pair(key: $0.1, occ: $0.2) }
        if a != b {
            let stay = CollectionDiff.lcsMask(a, b)
            var moved: [Int] = []
            for (j, s) in stay.old.enumerated() where !s { moved.append(keptOld[j].0) }
            deletions = (deletions + moved).sorted()
            var movedNew: [Int] = []
            for (j, s) in stay.new.enumerated() where !s { movedNew.append(keptNew[j].0) }
            insertions = (insertions + movedNew).sorted()
            for (j, s) in stay.old.enumerated() where s && modified.contains(keptOld[j].1) { modifications.append(keptOld[j].0) }
        } else {
            for e in keptOld where modified.contains(e.1) { modifications.append(e.0) }
        }
    }

    struct Pair: Hashable {
        let key: ObjectKey
        let occ: Int
    }

    /// Which elements of `a` and `b` belong to a longest common subsequence (patience-style via LIS on positions).
    static func lcsMask(_ a: [Pair], _ b: [Pair]) -> (old: [Bool], new: [Bool]) {
        // Both are permutations of the same multiset, so the LCS is the longest increasing subsequence of the
        // positions in `b` of `a`'s elements.
        var posInB: [Pair: Int] = [:]
        for (i, p) in b.enumerated() { posInB[p] = i }
        let seq = a.map { posInB[$0]! }
        var tails: [Int] = []          // indices into seq
        var prev = [Int](repeating: -1, count: seq.count)
        for (i, v) in seq.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if seq[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { prev[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var oldMask = [Bool](repeating: false, count: a.count)
        var newMask = [Bool](repeating: false, count: b.count)
        var k = tails.last ?? -1
        while k >= 0 {
            oldMask[k] = true
            newMask[seq[k]] = true
            k = prev[k]
        }
        return (oldMask, newMask)
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

    func deliver(realm: Realm, from old: Snapshot, to new: Snapshot, changes: ChangeCache) {
        guard !done, let info = object._info else { return }
        guard let nt = try? new.table(info.name), (try? new.exists(nt, object._key)) == true else {
            done = true
            block(.deleted)
            return
        }
        guard changes.modifiedKeys(info.name).contains(object._key), let ot = try? old.table(info.name) else { return }
        var out: [PropertyChange] = []
        for (i, p) in info.properties.enumerated() where p.schema.type != .linkingObjects {
            guard let oh = try? old.property(ot, p.name), let nh = try? new.property(nt, p.name) else { continue }
            let ov: RealmStorage.Value? = p.schema.isList ? (try? old.list(object._key, oh)).map { .data(ListDigest.of($0)) } : try? old.value(object._key, oh)
            let nv: RealmStorage.Value? = p.schema.isList ? (try? new.list(object._key, nh)).map { .data(ListDigest.of($0)) } : try? new.value(object._key, nh)
            guard ov != nv else { continue }
            let newAny = try? realm.anyValue(of: object, property: i)
            let oldAny: Any? = p.schema.isList || p.schema.type == .link ? nil : ov.flatMap { AnyConversion.swiftValue($0, type: p.schema.type) }
            out.append(PropertyChange(name: p.name, oldValue: oldAny, newValue: newAny ?? nil))
        }
        if !out.isEmpty { block(.change(object, out)) }
    }
}
