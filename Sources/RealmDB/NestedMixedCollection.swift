import RealmStorage

/// Where a list or dictionary nested in a managed mixed property lives: the object, the property and the path
/// from the property's value down to it. Such a collection reads the stored value each time and writes every
/// change back into it (inside a write transaction), so it stays current and changes what is stored, as
/// realm-swift's nested collections do.
final class NestedMixedPlace {
    enum Step {
        case index(Int)
        case key(String)
    }

    let owner: ObjectRef
    let propertyIndex: Int
    let path: [Step]

    init(owner: ObjectRef, propertyIndex: Int, path: [Step]) {
        self.owner = owner
        self.propertyIndex = propertyIndex
        self.path = path
    }

    func appending(_ step: Step) -> NestedMixedPlace {
        NestedMixedPlace(owner: owner, propertyIndex: propertyIndex, path: path + [step])
    }

    private var property: ClassInfo.Property { owner.info.properties[propertyIndex] }
    private var where_: String { "\(owner.info.name).\(property.name)" + path.map { s in
        switch s { case .index(let i): return "[\(i)]"; case .key(let k): return "['\(k)']" }
    }.joined() }

    /// The property's stored value.
    private func root(_ reader: Snapshot) -> RealmStorage.Value {
        do {
            return try reader.value(owner.key, property.handle)
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
        var v = root(owner.realm.reader)
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
            guard let newRoot = replace(root(tx), path[...]) else {
                fatalError("the nested collection \(where_) no longer exists")
            }
            try RealmError.wrap { try tx.set(owner.key, property.handle, newRoot) }
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
