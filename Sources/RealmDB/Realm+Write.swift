import Foundation
import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

extension Realm {
    /// What `add` and `create` do when an object with the same primary key exists.
    public enum UpdatePolicy: Int, Sendable {
        /// Fail with a duplicate primary key error.
        case error = 1
        /// Overwrite only the properties whose values differ.
        case modified = 3
        /// Overwrite every property given.
        case all = 2
    }

    // MARK: Transactions

    /// Runs `block` in a write transaction and commits it (without notifying the observers of `tokens`); if
    /// `block` throws, rolls back and rethrows.
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken] = [],
                              _ block: () throws -> Result) throws -> Result {
        try tryBeginWrite()
        let result: Result
        do {
            result = try block()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite(withoutNotifying: tokens) }
        return result
    }

    /// Begins a write transaction, advancing reads to the newest version (waits while another thread or process
    /// writes). As in Realm, misuse (a write already open, a read-only Realm) or a file that cannot be written
    /// stops the program with a message; `tryBeginWrite` reports the error instead.
    public func beginWrite() {
        RealmError.stopOnError("begin a write transaction") { try tryBeginWrite() }
    }

    /// `beginWrite`, reporting an error instead of stopping.
    public func tryBeginWrite() throws {
        _ = try beginWrite(waiting: true)
    }

    /// `tryBeginWrite` without waiting for another writer: false (and nothing begun) while another thread or
    /// process writes.
    func beginWriteIfFree() throws -> Bool {
        try beginWrite(waiting: false)
    }

    private func beginWrite(waiting: Bool) throws -> Bool {
        verifyThread("Realm")
        guard rlm.transaction == nil else { throw RealmError.alreadyInWriteTransaction }
        if rlm.frozen != nil { throw RealmError.frozen(operation: "begin a write transaction") }
        if rlm.configuration.readOnly { throw RealmError.readOnly(path: rlm.configuration.displayPath) }
        let begun = try RealmError.wrap { waiting ? try rlm.database.beginWrite() : try rlm.database.tryBeginWrite() }
        guard let tx = begun else { return false }
        let old = rlm.snapshot
        // Reads now see the newest version: observers learn about what others committed before this write. A
        // version that cannot be opened fails the write before it begins, rather than hiding those commits.
        var now: Snapshot?
        if let old, old.version != tx.version {
            do {
                now = try RealmError.wrap { try rlm.database.snapshot() }
            } catch {
                tx.rollback()
                throw error
            }
        }
        rlm.transaction = tx
        rlm.writeThread = pthread_self()
        rlm.changed()
        if let old, let now {
            rlm.snapshot = now
            rlm.notifiers.deliver(realm: self, from: old, to: now)
            old.close()
        }
        return true
    }

    /// The writer lock belongs to the thread that took it: a write transaction of an actor-isolated Realm must
    /// end on that thread, so before the task suspends (`asyncWrite` does this for its block).
    private func verifyWriteThread() {
        guard rlm.isolation != nil, let t = rlm.writeThread, pthread_equal(t, pthread_self()) == 0 else { return }
        fatalError("a write transaction of an actor-isolated Realm must end before the task suspends: it began on "
            + "another thread, which holds the write lock (use asyncWrite, or write { } without await inside)")
    }

    /// Commits the write transaction and delivers notifications (for observers not listed in `tokens`).
    public func commitWrite(withoutNotifying tokens: [NotificationToken] = []) throws {
        verifyThread("Realm")
        guard let tx = rlm.transaction else { throw RealmError.notInWriteTransaction(operation: "commit") }
        verifyWriteThread()
        do {
            try RealmError.wrap { try tx.commit() }
        } catch {
            tx.rollback()
            rlm.transaction = nil
            rlm.changed()
            throw error
        }
        rlm.transaction = nil
        let old = rlm.snapshot
        let now: Snapshot
        do {
            now = try rlm.database.snapshot()
        } catch {
            // The commit is durable: throwing would report it as failed (and invite writing it again), and going
            // on would read nothing and tell observers nothing (DECISIONS 70).
            rlm.readFailed(error, "read the version just committed (the commit is durable)")
        }
        rlm.snapshot = now
        rlm.changed()
        ChangeWatcher.shared.poke()
        if let old {
            rlm.notifiers.deliver(realm: self, from: old, to: now, skipping: tokens)
            old.close()
        }
    }

    /// Discards the changes of the write transaction.
    public func cancelWrite() {
        verifyThread("Realm")
        guard let tx = rlm.transaction else { return }
        verifyWriteThread()
        tx.rollback()
        rlm.transaction = nil
        rlm.schemaChanged()
    }

    func requireWrite(_ operation: String) throws -> WriteTransaction {
        verifyThread("Realm")
        if rlm.frozen != nil { throw RealmError.frozen(operation: operation) }
        guard let tx = rlm.transaction else { throw RealmError.notInWriteTransaction(operation: operation) }
        return tx
    }

    // MARK: Adding objects

    /// Adds an unmanaged object (and the unmanaged objects it links to) to the Realm; from then on it reads
    /// and writes through. With `update` other than `.error`, an existing object with the same primary key
    /// is updated instead, and `object` becomes that object. As in Realm, misuse (outside a write transaction,
    /// a duplicate primary key, an object of another Realm) stops the program with a message naming the class
    /// and property; `tryAdd` reports the error instead.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        RealmError.stopOnError("add an object of class '\(type(of: object).className())'") { try tryAdd(object, update: update) }
    }

    /// Adds every object of a sequence; stops the program on misuse, as `add(_:update:)`.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for o in objects { add(o, update: update) }
    }

    /// `add(_:update:)`, reporting an error instead of stopping.
    public func tryAdd(_ object: Object, update: UpdatePolicy = .error) throws {
        _ = try requireWrite("add an object")
        let saved = rlm.activeUpdatePolicy
        rlm.activeUpdatePolicy = update
        defer { rlm.activeUpdatePolicy = saved }
        _ = try addOrReuse(object)
    }

    /// `add(_:update:)` of every object of a sequence, reporting the first error instead of stopping.
    public func tryAdd<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) throws where S.Element: Object {
        for o in objects { try tryAdd(o, update: update) }
    }

    /// The key of `object` in this Realm, adding it first when unmanaged.
    func addOrReuse(_ object: Object) throws -> ObjectKey {
        if let r = object._realm {
            guard r.rlm === rlm else {
                if r.rlm.database === rlm.database, let info = object._info { return try copyKeyOfSameFile(object, info) }
                throw RealmError.objectInOtherRealm(className: type(of: object).className())
            }
            return object._key
        }
        if object is EmbeddedObject || object._info?.schema.isEmbedded == true {
            throw RealmError.invalidValue(className: type(of: object).className(), property: "(object)",
                                          reason: "Embedded objects cannot be created directly; assign one to a property of its parent")
        }
        if object is DynamicObject {
            throw RealmError.invalidValue(className: "DynamicObject", property: "(object)", reason: "an unmanaged DynamicObject cannot be added")
        }
        let tx = try requireWrite("add an object")
        let info = try rlm.requireInfo(for: type(of: object), "add an object")
        let model = info.model!
        // Take every field's contents before the object becomes managed.
        let contents = model.fields.map { f in object.withFieldPointer(f.offset) { f.accessor.unmanagedContent(UnsafeRawPointer($0)) } }
        // Maps of embedded objects are made from their Swift values (each value a new embedded object).
        var embeddedMaps: [Int: _AnyMap] = [:]
        for (i, f) in model.fields.enumerated() where info.properties[i].schema.isDictionary && linksToEmbedded(info.properties[i].schema) {
            embeddedMaps[i] = object.withFieldPointer(f.offset) { f.accessor.unmanagedValue(UnsafeRawPointer($0)) } as? _AnyMap
        }
        var plain: [String: RealmStorage.Value] = [:]
        for (i, c) in contents.enumerated() where !info.isLink(i) {
            if case .value(let convert) = c { plain[info.properties[i].name] = try convert(self) }
        }
        let policy = rlm.activeUpdatePolicy
        var existing: ObjectKey?
        if let pki = info.primaryKeyIndex, let pk = plain[info.properties[pki].name] {
            existing = try RealmError.wrap { try tx.object(info.table, primaryKey: pk) }
            if existing != nil && policy == .error {
                throw RealmError.storage(.duplicatePrimaryKey(className: info.name, property: info.properties[pki].name))
            }
        }
        let key: ObjectKey
        if let existing {
            key = existing
            for (i, p) in info.properties.enumerated() where i != info.primaryKeyIndex {
                if let v = plain[p.name] { try setStoredIfNeeded(v, key: key, info: info, property: i, policy: policy) }
            }
        } else {
            key = try RealmError.wrap { try tx.createObject(info.table, plain) }
        }
        bind(object, key: key, info: info)
        // Links and lists last, so that cycles between unmanaged objects end at objects already added.
        for (i, c) in contents.enumerated() {
            switch c {
            case .value(let convert) where info.isLink(i):
                try setStoredIfNeeded(try convert(self), key: key, info: info, property: i, policy: policy)
            case .object(let o):
                if linksToEmbedded(info.properties[i].schema) {
                    try createEmbedded(o, parent: key, parentInfo: info, property: i, at: .toOne, update: policy)
                } else {
                    try setStoredIfNeeded(.link(try addOrReuse(o)), key: key, info: info, property: i, policy: policy)
                }
            case .objectList(let os):
                if linksToEmbedded(info.properties[i].schema) {
                    try setEmbeddedList(os, parent: key, parentInfo: info, property: i, update: policy)
                } else {
                    try setStoredIfNeeded(nil, list: try os.map { .link(try addOrReuse($0)) }, key: key, info: info, property: i, policy: policy)
                }
            case .list(let convert):
                try setStoredIfNeeded(nil, list: try convert(self), key: key, info: info, property: i, policy: policy)
            case .set(let convert):
                let elements = try convert(self)
                let h = info.properties[i].handle
                try RealmError.wrap {
                    if policy == .modified, try tx.list(key, h) == elements { return }
                    try tx.setAssign(key, h, elements)
                }
            case .dictionary where embeddedMaps[i] != nil:
                try setAny(embeddedMaps[i], key: key, info: info, property: i, update: policy == .modified ? .modified : .all)
            case .dictionary(let convert):
                let entries = try convert(self)
                let h = info.properties[i].handle
                try RealmError.wrap {
                    if policy == .modified, try tx.dictionary(key, h) == entries { return }
                    try tx.setDictionary(key, h, entries)
                }
            default: break
            }
        }
        rlm.changed()
        return key
    }

    /// Linking to an object read through another Realm instance of the same file: the same key.
    private func copyKeyOfSameFile(_ object: Object, _ info: ClassInfo) throws -> ObjectKey { object._key }

    func bind(_ object: Object, key: ObjectKey, info: ClassInfo) {
        object._realm = self
        object._key = key
        object._info = info
        guard let model = info.model else { return }
        for (i, f) in model.fields.enumerated() {
            object.withFieldPointer(f.offset) { f.accessor.bind($0, to: object, index: i) }
        }
    }

    func setStoredIfNeeded(_ value: RealmStorage.Value?, list: [RealmStorage.Value]? = nil, key: ObjectKey, info: ClassInfo,
                           property i: Int, policy: UpdatePolicy) throws {
        let tx = try requireWrite("set a property")
        let h = info.properties[i].handle
        try RealmError.wrap {
            if let list {
                if policy == .modified, try tx.list(key, h) == list { return }
                try tx.setList(key, h, list)
            } else if let value {
                if policy == .modified, try tx.value(key, h) == value { return }
                try tx.set(key, h, value)
            }
        }
    }

    /// Writes a stored value (or, for a list property, a `.data`-free list given through `setList`).
    func setStored(_ value: RealmStorage.Value, on object: Object, property i: Int) throws {
        let tx = try requireWrite("modify an object")
        let info = object._info!
        try RealmError.wrap { try tx.set(object._key, info.properties[i].handle, value) }
        rlm.changed()
    }

    func setStoredList(_ values: [RealmStorage.Value], on object: Object, property i: Int) throws {
        let tx = try requireWrite("modify a list")
        try RealmError.wrap { try tx.setList(object._key, object._info!.properties[i].handle, values) }
        rlm.changed()
    }

    // MARK: Creating from values

    /// Creates (or with `update`, updates) an object from a dictionary of property names to values, an array of
    /// values in property order, or another object (possibly of another Realm). Nested dictionaries and arrays
    /// create linked objects; properties not given take the model's defaults; dictionary keys that are not
    /// properties are ignored, as in Realm. Misuse stops the program with a message, as in Realm; `tryCreate`
    /// reports the error instead.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        RealmError.stopOnError("create an object of class '\(type.className())'") {
            try tryCreate(type, value: value, update: update)
        }
    }

    /// `create(_:value:update:)`, reporting an error instead of stopping.
    @discardableResult
    public func tryCreate<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) throws -> T {
        _ = try requireWrite("create an object")
        let info = try rlm.requireInfo(for: type, "create an object")
        let key = try createObject(info, value, update)
        return try managedObject(type, key: key)
    }

    /// Creates an object of a class by name (no model class needed); misuse stops the program, as `create`.
    @discardableResult
    public func dynamicCreate(_ className: String, value: Any = [String: Any](), update: UpdatePolicy = .error) -> DynamicObject {
        RealmError.stopOnError("create an object of class '\(className)'") {
            try tryDynamicCreate(className, value: value, update: update)
        }
    }

    /// `dynamicCreate(_:value:update:)`, reporting an error instead of stopping.
    @discardableResult
    public func tryDynamicCreate(_ className: String, value: Any = [String: Any](), update: UpdatePolicy = .error) throws -> DynamicObject {
        _ = try requireWrite("create an object")
        let info = try rlm.dynamicInfo(className)
        let key = try createObject(info, value, update)
        return dynamicObject(info, key)
    }

    /// `create` makes the object from its plain values (embedded objects are made through their parent); the
    /// default makes a top-level object.
    func createObject(_ info: ClassInfo, _ value: Any, _ update: UpdatePolicy,
                      create: (([String: RealmStorage.Value]) throws -> ObjectKey)? = nil) throws -> ObjectKey {
        let tx = try requireWrite("create an object")
        if info.schema.isEmbedded && create == nil {
            throw RealmError.invalidValue(className: info.name, property: "(object)",
                                          reason: "Embedded objects cannot be created directly; assign one to a property of its parent")
        }
        let given = try normalize(value, info)
        if update != .error, let pki = info.primaryKeyIndex, let pkAny = given[info.properties[pki].name],
           let pk = AnyConversion.stored(pkAny, type: info.properties[pki].schema.type, optional: info.properties[pki].schema.isOptional),
           let existing = try RealmError.wrap({ try tx.object(info.table, primaryKey: pk) }) {
            for (name, v) in given where name != info.properties[pki].name {
                // Keys that are not properties are ignored, as in Realm (JSON often carries more than the model).
                guard let i = info.index(of: name) else { continue }
                try setAny(v, key: existing, info: info, property: i, update: update)
            }
            rlm.changed()
            return existing
        }
        // Defaults: the model's default values, or the type's.
        var defaults: [String: RealmStorage.Value] = [:]
        if let model = info.model {
            let proto = model.type.init()
            for (i, f) in model.fields.enumerated() where !info.isLink(i) && given[info.properties[i].name] == nil {
                if case .value(let convert) = proto.withFieldPointer(f.offset, { f.accessor.unmanagedContent(UnsafeRawPointer($0)) }) {
                    defaults[info.properties[i].name] = try convert(self)
                }
            }
        }
        var plain = defaults
        for (name, v) in given {
            guard let i = info.index(of: name) else { continue }
            let s = info.properties[i].schema
            guard s.type != .link, !s.isList, !s.isCollection else { continue }
            guard let stored = AnyConversion.stored(v, type: s.type, optional: s.isOptional) else {
                throw RealmError.invalidValue(className: info.name, property: name,
                                              reason: "expected \(s.typeDescription), got \(Swift.type(of: v ?? NSNull()))")
            }
            plain[name] = stored
        }
        let key = try create?(plain) ?? RealmError.wrap { try tx.createObject(info.table, plain) }
        for (name, v) in given {
            guard let i = info.index(of: name) else { continue }
            let s = info.properties[i].schema
            if s.type == .link || s.isCollection {
                try setAny(v, key: key, info: info, property: i, update: update)
            }
        }
        rlm.changed()
        return key
    }

    /// A dictionary of property names to values from a dictionary, an array in property order, or an object.
    private func normalize(_ value: Any, _ info: ClassInfo) throws -> [String: Any?] {
        if let d = value as? [String: Any?] { return d }
        if let d = value as? [String: Any] { return d.mapValues { $0 } }
        if let a = value as? [Any?] {
            let stored = info.properties.filter { $0.schema.type != .linkingObjects }
            guard a.count <= stored.count else {
                throw RealmError.invalidValue(className: info.name, property: "(array)", reason: "\(a.count) values for \(stored.count) properties")
            }
            return Dictionary(uniqueKeysWithValues: zip(stored.map(\.name), a))
        }
        if let o = value as? Object {
            var out: [String: Any?] = [:]
            // Properties the object's class lacks are left out (they take the defaults).
            for p in info.properties where p.schema.type != .linkingObjects && o.objectSchema[p.name] != nil {
                out[p.name] = try o.value(forProperty: p.name)
            }
            return out
        }
        throw RealmError.invalidValue(className: info.name, property: "(value)",
                                      reason: "expected a dictionary, an array or an object, got \(type(of: value))")
    }

    /// The entries a dictionary property is given: a Swift dictionary's, or a `Map`'s through `fromMap`.
    private func dictionaryPairs(_ value: Any, _ s: PropertySchema, _ bad: (String) -> RealmError,
                                 fromMap: (_AnyMap) throws -> [(String, Any?)]) throws -> [(String, Any?)] {
        let raw = AnyConversion.unwrap(value)
        if let d = raw as? [String: Any?] { return d.map { ($0.key, $0.value) } }
        if let d = raw as? [String: Any] { return d.map { ($0.key, $0.value) } }
        if let m = raw as? _AnyMap { return try fromMap(m) }
        throw bad("expected a dictionary for \(s.typeDescription), got \(type(of: raw as Any))")
    }

    /// Sets a property from a loosely typed value: links from objects, dictionaries or arrays (creating objects
    /// with `update`), lists from arrays.
    func setAny(_ value: Any?, key: ObjectKey, info: ClassInfo, property i: Int, update: UpdatePolicy) throws {
        let p = info.properties[i]
        let s = p.schema
        let tx = try requireWrite("modify an object")
        func bad(_ reason: String) -> RealmError { .invalidValue(className: info.name, property: p.name, reason: reason) }
        if s.type == .linkingObjects { throw bad("linking objects cannot be set") }
        if s.isDictionary && linksToEmbedded(s) {
            // Each value a new embedded object (nil: no object); the old ones are deleted with the entries.
            try RealmError.wrap { try tx.setDictionary(key, p.handle, ValueDictionary()) }
            guard !AnyConversion.isNull(value) else { return }
            let pairs = try dictionaryPairs(value!, s, bad) { $0._rlmAnyEntries() }
            for (k, e) in pairs.sorted(by: { $0.0 < $1.0 }) {
                if AnyConversion.isNull(e) {
                    try RealmError.wrap { try tx.dictionarySet(key, p.handle, key: k, .null) }
                } else {
                    try createEmbedded(e!, parent: key, parentInfo: info, property: i, at: .dictionary(k), update: update == .modified ? .modified : .all)
                }
            }
            return
        }
        if s.isDictionary {
            var entries = ValueDictionary()
            if !AnyConversion.isNull(value) {
                let pairs = try dictionaryPairs(value!, s, bad) { m in
                    try m._rlmStoredEntries(self).map { ($0.key, AnyConversion.swiftValue($0.value, type: s.type)) }
                }
                for (k, e) in pairs {
                    if s.type == .link {
                        entries[k] = AnyConversion.isNull(e) ? .null : .link(try linkKey(e!, s, update, bad))
                    } else {
                        guard let v = AnyConversion.stored(e, type: s.type, optional: s.isOptional) else {
                            throw bad("expected values of \(s.typeDescription), got \(type(of: e ?? NSNull()))")
                        }
                        entries[k] = v
                    }
                }
            }
            try RealmError.wrap { try tx.setDictionary(key, p.handle, entries) }
            return
        }
        if s.isSet {
            var elements: [RealmStorage.Value] = []
            if !AnyConversion.isNull(value) {
                let raw = AnyConversion.unwrap(value!)
                let seq: [Any?]
                if let a = raw.flatMap(Realm.asArray) {
                    seq = a
                } else if let m = raw as? _AnyMutableSet {
                    seq = m._rlmAnyElements()
                } else if let h = raw as? Set<AnyHashable> {
                    seq = Array(h)
                } else {
                    throw bad("expected an array or a set for \(s.typeDescription), got \(type(of: raw as Any))")
                }
                for e in seq {
                    if s.type == .link {
                        guard !AnyConversion.isNull(e) else { throw bad("sets of objects cannot hold nil") }
                        elements.append(.link(try linkKey(e!, s, update, bad)))
                    } else {
                        guard let v = AnyConversion.stored(e, type: s.type, optional: s.isOptional) else {
                            throw bad("expected elements of \(s.typeDescription), got \(type(of: e ?? NSNull()))")
                        }
                        elements.append(v)
                    }
                }
            }
            try RealmError.wrap { try tx.setAssign(key, p.handle, elements) }
            return
        }
        if linksToEmbedded(s) {
            if s.isList {
                var items: [Any] = []
                if !AnyConversion.isNull(value) {
                    let raw = AnyConversion.unwrap(value!)
                    if let l = raw as? _AnyList {
                        items = l._rlmAnyElements().compactMap { $0 }
                    } else if let seq = raw.flatMap(Realm.asArray) {
                        items = seq.compactMap { $0 }
                    } else {
                        throw bad("expected an array for \(s.typeDescription), got \(type(of: raw as Any))")
                    }
                }
                try setEmbeddedList(items, parent: key, parentInfo: info, property: i, update: update == .modified ? .modified : .all)
            } else if AnyConversion.isNull(value) {
                try RealmError.wrap { try tx.set(key, p.handle, .null) }
            } else if !s.isCollection {
                // `.modified` updates the embedded object there in place, as Realm does (`.all` replaces it).
                if update == .modified, case .link(let existing) = try RealmError.wrap({ try tx.value(key, p.handle) }),
                   !(AnyConversion.unwrap(value!) is EmbeddedObject && (AnyConversion.unwrap(value!) as? Object)?._realm != nil) {
                    let target = try targetInfo(s.objectClassName!)
                    for (name, v) in try normalize(AnyConversion.unwrap(value!) ?? value!, target) {
                        guard let j = target.index(of: name) else { continue }
                        try setAny(v, key: existing, info: target, property: j, update: .modified)
                    }
                    rlm.changed()
                    return
                }
                try createEmbedded(value!, parent: key, parentInfo: info, property: i, at: .toOne, update: update == .modified ? .modified : .all)
            } else {
                throw bad("dictionaries of embedded objects are not supported yet")
            }
            return
        }
        if s.isList {
            var elements: [RealmStorage.Value] = []
            if !AnyConversion.isNull(value) {
                guard let seq = AnyConversion.unwrap(value!).flatMap(Realm.asArray) else {
                    throw bad("expected an array for \(s.typeDescription), got \(type(of: value!))")
                }
                for e in seq {
                    if s.type == .link {
                        guard !AnyConversion.isNull(e) else { throw bad("lists of objects cannot hold nil") }
                        elements.append(.link(try linkKey(e!, s, update, bad)))
                    } else {
                        guard let v = AnyConversion.stored(e, type: s.type, optional: s.isOptional) else {
                            throw bad("expected elements of \(s.typeDescription), got \(type(of: e ?? NSNull()))")
                        }
                        elements.append(v)
                    }
                }
            }
            try RealmError.wrap { try tx.setList(key, p.handle, elements) }
        } else if s.type == .link {
            let v: RealmStorage.Value = AnyConversion.isNull(value) ? .null : .link(try linkKey(value!, s, update, bad))
            try setStoredIfNeeded(v, key: key, info: info, property: i, policy: update == .modified ? .modified : .all)
        } else {
            if s.type == .mixed, let raw = value.flatMap({ AnyConversion.unwrap($0) }), let a = AnyRealmValue._rlmFromAny(raw) {
                // A mixed value may hold objects (links) and collections: stored with this Realm.
                try setStoredIfNeeded(try a.stored(self), key: key, info: info, property: i, policy: update == .modified ? .modified : .all)
                return
            }
            guard let v = AnyConversion.stored(value, type: s.type, optional: s.isOptional) else {
                throw bad("expected \(s.typeDescription), got \(type(of: value ?? NSNull()))")
            }
            try setStoredIfNeeded(v, key: key, info: info, property: i, policy: update == .modified ? .modified : .all)
        }
        rlm.changed()
    }

    func setAny(_ value: Any?, on object: Object, property i: Int, update: UpdatePolicy) throws {
        try setAny(value, key: object._key, info: object._info!, property: i, update: update)
    }

    static func asArray(_ any: Any) -> [Any?]? {
        if let a = any as? [Any?] { return a }
        if let a = any as? [Any] { return a.map { $0 } }
        if let l = any as? _AnyList { return l._rlmAnyElements() }
        if let r = any as? _AnyResults { return r._rlmAnyElements() }
        return nil
    }

    private func linkKey(_ value: Any, _ s: PropertySchema, _ update: UpdatePolicy,
                         _ bad: (String) -> RealmError) throws -> ObjectKey {
        let target = s.objectClassName!
        let raw = AnyConversion.unwrap(value) ?? value
        if let o = raw as? Object {
            let oname = o._info?.name ?? type(of: o).className()
            guard oname == target else { throw bad("expected an object of class \(target), got \(oname)") }
            if let r = o._realm, r.rlm.database === rlm.database { return o._key }
            if o._realm == nil && !(o is DynamicObject) {
                let saved = rlm.activeUpdatePolicy
                rlm.activeUpdatePolicy = update
                defer { rlm.activeUpdatePolicy = saved }
                return try addOrReuse(o)
            }
            // An object of another Realm: copy it.
            return try createObject(try rlm.dynamicInfo(target), o, update)
        }
        if raw is [String: Any?] || raw is [String: Any] || raw is [Any?] || raw is [Any] {
            return try createObject(try targetInfo(target), raw, update)
        }
        throw bad("expected an object of class \(target), a dictionary or an array, got \(type(of: raw))")
    }

    /// The typed class info of `className` when a model class of that name is in use, else the dynamic one.
    func targetInfo(_ className: String) throws -> ClassInfo {
        if let typed = rlm.typedInfos.values.first(where: { $0.name == className }) { return typed }
        if let m = rlm.models[className], let i = try rlm.info(for: m.type) {
            return i
        }
        return try rlm.dynamicInfo(className)
    }

    // MARK: Deleting

    /// Deletes an object; links to it become nil and lists drop it. Misuse (outside a write transaction, an
    /// object of no Realm) stops the program with a message, as in Realm; `tryDelete` reports the error instead.
    public func delete(_ object: Object) {
        RealmError.stopOnError("delete an object of class '\(type(of: object).className())'") { try tryDelete(object) }
    }

    /// Deletes every object of a sequence (for example a `Results` or a `List`); stops the program on misuse.
    public func delete<S: Sequence>(_ objects: S) where S.Element: Object {
        RealmError.stopOnError("delete objects") { try tryDelete(objects) }
    }

    /// Deletes the objects that are the values of a map (its keys stay, holding nil).
    public func delete<Key: _MapKey, Value: Object>(_ map: Map<Key, Value?>) {
        delete(map.values.compactMap { $0 })
    }

    /// Deletes every object of every class; stops the program on misuse, as `delete`.
    public func deleteAll() {
        RealmError.stopOnError("delete all objects") { try tryDeleteAll() }
    }

    /// `delete(_:)`, reporting an error instead of stopping.
    public func tryDelete(_ object: Object) throws {
        let tx = try requireWrite("delete an object")
        guard let r = object._realm, r.rlm.database === rlm.database, let info = object._info else {
            throw RealmError.invalidValue(className: type(of: object).className(), property: "(object)",
                                          reason: "only objects managed by this Realm can be deleted")
        }
        try RealmError.wrap { try tx.delete(info.table, object._key) }
        rlm.changed()
    }

    /// `delete(_:)` of every object of a sequence, reporting the first error instead of stopping.
    public func tryDelete<S: Sequence>(_ objects: S) throws where S.Element: Object {
        let all = Array(objects)
        for o in all {
            if try !o._rlmIsInvalidated() { try tryDelete(o) }
        }
    }

    /// `deleteAll()`, reporting an error instead of stopping.
    public func tryDeleteAll() throws {
        let tx = try requireWrite("delete all objects")
        try RealmError.wrap {
            for c in tx.schema { try tx.deleteAll(tx.table(c.name)) }
        }
        rlm.changed()
    }
}
