import RealmStorage

/// Where a list or dictionary nested in a managed mixed value lives: the object, the property, the value of
/// the property it starts from (the property's own value, an element of a list of mixed values or a value of a
/// map of them) and the path from that value down to it. Such a collection reads the stored value each time
/// and writes every change back into it (inside a write transaction), so it stays current and changes what is
/// stored, as realm-swift's nested collections do.
final class NestedMixedPlace {
    enum Step {
        case index(Int)
        case key(String)
    }

    /// The stored value the path starts from.
    enum Root {
        /// The value of a mixed property.
        case property
        /// The element at a position of a list of mixed values.
        case element(Int)
        /// The value of a key of a map of mixed values.
        case entry(String)
    }

    let owner: ObjectRef
    let propertyIndex: Int
    let root: Root
    let path: [Step]

    init(owner: ObjectRef, propertyIndex: Int, root: Root = .property, path: [Step]) {
        self.owner = owner
        self.propertyIndex = propertyIndex
        self.root = root
        self.path = path
    }

    func appending(_ step: Step) -> NestedMixedPlace {
        NestedMixedPlace(owner: owner, propertyIndex: propertyIndex, root: root, path: path + [step])
    }

    private var property: ClassInfo.Property { owner.info.properties[propertyIndex] }
    private var where_: String {
        let start: String
        switch root {
        case .property: start = ""
        case .element(let i): start = "[\(i)]"
        case .entry(let k): start = "['\(k)']"
        }
        return "\(owner.info.name).\(property.name)" + start + path.map { s in
            switch s { case .index(let i): return "[\(i)]"; case .key(let k): return "['\(k)']" }
        }.joined()
    }

    /// The stored value the path starts from; nil when the list has no such position or the map no such key.
    private func root(_ reader: Snapshot) -> RealmStorage.Value? {
        do {
            switch root {
            case .property:
                return try reader.value(owner.key, property.handle)
            case .element(let i):
                let list = try reader.list(owner.key, property.handle)
                return i < list.count ? list[i] : nil
            case .entry(let k):
                return try reader.dictionaryValue(owner.key, property.handle, key: k)
            }
        } catch StorageError.noSuchObject {
            fatalError(RealmError.invalidatedObject(className: owner.info.name).description)
        } catch {
            owner.realm.rlm.readFailed(error, "read \(where_)")
        }
    }

    private static func child(_ v: RealmStorage.Value, _ step: Step) -> RealmStorage.Value? {
        switch (v, step) {
        case (.list(let l), .index(let i)): return i >= 0 && i < l.count ? l[i] : nil
        case (.dictionary(let d), .key(let k)): return d[k]
        default: return nil
        }
    }

    /// The nested collection as stored now; a collection that is gone (replaced by another value) stops the
    /// program, as realm-swift's invalidated collections do.
    func read() -> RealmStorage.Value {
        owner.realm.verifyThread("AnyRealmValue")
        guard var v = root(owner.realm.reader) else {
            fatalError("the nested collection \(where_) no longer exists")
        }
        for step in path {
            guard let c = NestedMixedPlace.child(v, step) else {
                fatalError("the nested collection \(where_) no longer exists")
            }
            v = c
        }
        return v
    }

    /// Stores `value` as the nested collection, inside the Realm's write transaction.
    func write(_ value: RealmStorage.Value) {
        let realm = owner.realm
        func replace(_ v: RealmStorage.Value, _ steps: ArraySlice<Step>) -> RealmStorage.Value? {
            guard let step = steps.first else { return value }
            guard let c = NestedMixedPlace.child(v, step), let new = replace(c, steps.dropFirst()) else { return nil }
            switch (v, step) {
            case (.list(var l), .index(let i)): l[i] = new; return .list(l)
            case (.dictionary(var d), .key(let k)): d[k] = new; return .dictionary(d)
            default: return nil
            }
        }
        do {
            let tx = try realm.requireWrite("modify the nested collection \(where_)")
            guard let old = root(tx), let newRoot = replace(old, path[...]) else {
                fatalError("the nested collection \(where_) no longer exists")
            }
            try RealmError.wrap {
                switch root {
                case .property: try tx.set(owner.key, property.handle, newRoot)
                case .element(let i): try tx.listSet(owner.key, property.handle, newRoot, at: i)
                case .entry(let k): try tx.dictionarySet(owner.key, property.handle, key: k, newRoot)
                }
            }
            realm.rlm.changed()
        } catch {
            fatalError("cannot modify the nested collection \(where_): \(error)")
        }
    }

    /// The elements of the nested list, each nested collection in it placed below this one.
    func readList() -> [AnyRealmValue] {
        guard case .list(let l) = read() else { fatalError("\(where_) is no longer a list") }
        return l.enumerated().map { AnyRealmValue(stored: $1, owner.realm, place: appending(.index($0))) }
    }

    /// The entries of the nested dictionary, each nested collection in it placed below this one.
    func readDictionary() -> [(key: String, value: AnyRealmValue)] {
        guard case .dictionary(let d) = read() else { fatalError("\(where_) is no longer a dictionary") }
        return d.map { (key: $0.key, value: AnyRealmValue(stored: $0.value, owner.realm, place: appending(.key($0.key)))) }
    }

    func writeList(_ elements: [AnyRealmValue]) {
        do {
            write(.list(try elements.map { try $0.stored(owner.realm) }))
        } catch {
            fatalError("cannot modify the nested collection \(where_): \(error)")
        }
    }

    func writeDictionary(_ entries: [(key: String, value: AnyRealmValue)]) {
        do {
            write(.dictionary(ValueDictionary(try entries.map { ($0.key, try $0.value.stored(owner.realm)) })))
        } catch {
            fatalError("cannot modify the nested collection \(where_): \(error)")
        }
    }
}

extension CollectionProperty {
    /// An element of this managed list, or a value of this managed map, read from its stored value: for a list
    /// or map of mixed values, a nested list or dictionary in it reads and writes through, as one read from a
    /// mixed property does.
    func storedElement<E: RealmCollectionValue>(_ v: RealmStorage.Value, _ root: NestedMixedPlace.Root,
                                                _ realm: Realm) -> E {
        guard E.self == AnyRealmValue.self, let owner else { return E._rlmFromStored(v, realm) }
        switch v {
        case .list, .dictionary:
            let place = NestedMixedPlace(owner: owner, propertyIndex: propertyIndex, root: root, path: [])
            return AnyRealmValue(stored: v, realm, place: place) as! E  // E is AnyRealmValue
        default:
            return E._rlmFromStored(v, realm)
        }
    }
}
