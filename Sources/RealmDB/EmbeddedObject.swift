import Foundation
import RealmStorage

/// An object that belongs to exactly one parent (Realm's `EmbeddedObject`): it is stored through a to-one link,
/// a list element or a dictionary value of its parent, is created by assigning an unmanaged object there, is
/// deleted when the parent is deleted or the link, element or value is replaced or removed, and has no primary
/// key. `realm.add` and `realm.create` refuse it; linking a managed embedded object from a second place is an
/// error.
///
/// ```swift
/// class Address: EmbeddedObject {
///     @Persisted var street = ""
///     @Persisted var city = ""
/// }
/// class Contact: Object {
///     @Persisted var name = ""
///     @Persisted var address: Address?
/// }
/// try realm.write { contact.address = Address(value: ["city": "Tokyo"]) }
/// ```
open class EmbeddedObject: Object {
    /// The object that owns this one, or nil when unmanaged (or deleted).
    public var parent: Object? {
        guard let realm = _realm, let info = _info else { return nil }
        realm.verifyThread("EmbeddedObject")
        do {
            guard let owner = try RealmError.wrap({ try realm.reader.owner(of: _key, in: info.table) }) else { return nil }
            return realm.dynamicObject(try realm.targetInfo(owner.className), owner.key)
        } catch {
            realm.rlm.readFailed(error, "read the owner of an object of \(info.name)")
        }
    }
}

/// Where an embedded object is stored in its parent.
enum EmbeddedPlace {
    case toOne
    case listInsert(Int)
    case listSet(Int)
    case dictionary(String)
}

extension Realm {
    /// Whether the property links to objects of an embedded class.
    func linksToEmbedded(_ s: PropertySchema) -> Bool {
        guard s.type == .link, let t = s.objectClassName else { return false }
        return reader.classSchema(t)?.isEmbedded ?? false
    }

    /// Creates a new embedded object at `place` of property `i` of the parent object `parent` from `value` (an
    /// unmanaged object, a dictionary or an array of values), with its own links and collections; an unmanaged
    /// model object given becomes the managed one. Returns its key.
    @discardableResult
    func createEmbedded(_ value: Any, parent: ObjectKey, parentInfo: ClassInfo, property i: Int, at place: EmbeddedPlace,
                        update: UpdatePolicy = .all) throws -> ObjectKey {
        let tx = try requireWrite("add an embedded object")
        let p = parentInfo.properties[i]
        let raw = AnyConversion.unwrap(value) ?? value
        if let o = raw as? Object, o._realm != nil {
            throw RealmError.invalidValue(className: parentInfo.name, property: p.name,
                                          reason: "Cannot set a link to an existing managed embedded object")
        }
        let target = try targetInfo(p.schema.objectClassName!)
        let key = try createObject(target, raw, update) { plain in
            try RealmError.wrap { () -> ObjectKey in
                switch place {
                case .toOne: return try tx.createEmbeddedObject(in: parent, p.handle, plain)
                case .listInsert(let n): return try tx.listInsertEmbedded(parent, p.handle, at: n, plain)
                case .listSet(let n): return try tx.listSetEmbedded(parent, p.handle, at: n, plain)
                case .dictionary(let k): return try tx.dictionarySetEmbedded(parent, p.handle, key: k, plain)
                }
            }
        }
        if let o = raw as? Object, !(o is DynamicObject), target.model?.type == type(of: o) { bind(o, key: key, info: target) }
        rlm.changed()
        return key
    }

    /// Replaces a list of embedded objects with new ones made from `values`.
    func setEmbeddedList(_ values: [Any], parent: ObjectKey, parentInfo: ClassInfo, property i: Int, update: UpdatePolicy = .all) throws {
        let tx = try requireWrite("modify a list")
        try RealmError.wrap { try tx.setList(parent, parentInfo.properties[i].handle, []) }
        for (n, v) in values.enumerated() {
            try createEmbedded(v, parent: parent, parentInfo: parentInfo, property: i, at: .listInsert(n), update: update)
        }
    }
}

extension Object {
    /// Sets to-one link property `index` to a new embedded object made from `value` (nil: no object; the old one
    /// is deleted either way).
    final func _rlmWriteEmbedded(_ index: Int, _ value: Object?) {
        guard let realm = _realm, let info = _info else { fatalError("object is not managed") }
        realm.verifyThread("Object")
        do {
            if let value {
                try realm.createEmbedded(value, parent: _key, parentInfo: info, property: index, at: .toOne)
            } else {
                try realm.setStored(.null, on: self, property: index)
            }
        } catch {
            fatalError("cannot set '\(info.name).\(info.properties[index].name)': \(error)")
        }
    }
}
