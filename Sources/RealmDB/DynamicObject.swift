import RealmStorage

/// An object of any class, read and written by property name: for code without model classes (the browser,
/// migrations). `object["name"]` gives `Int`, `String`, `Date`, ..., `DynamicObject` for links and arrays for
/// lists; setting converts and checks the value against the property's type.
public final class DynamicObject: Object {
    /// The name of the object's class.
    public var className: String { _info?.name ?? "DynamicObject" }

    public override var objectSchema: ObjectSchema {
        ObjectSchema(_info?.schema ?? ClassSchema(name: className, properties: []))
    }

    /// The objects linking here, from every class and link property (declared as LinkingObjects or not).
    public func allLinkingObjects() throws -> [(className: String, property: String, objects: [DynamicObject])] {
        guard let realm = _realm, let info = _info else { return [] }
        realm.verifyThread("Object")
        let groups = try RealmError.wrap { try realm.reader.allBacklinks(_key, in: info.table) }
        return try groups.map { g in
            let origin = try realm.rlm.dynamicInfo(g.className)
            return (g.className, g.property, g.keys.map { realm.dynamicObject(origin, $0) })
        }
    }
}
