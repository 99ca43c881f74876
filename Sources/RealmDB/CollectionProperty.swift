import RealmStorage

/// A collection property of an object (`List`, `MutableSet`, `Map`): unmanaged it holds its elements itself;
/// managed it reads and writes through its owning object's property. The reading and writing every such
/// collection does, in one place.
protocol CollectionProperty: AnyObject {
    /// The owning object when managed.
    var owner: ObjectRef? { get }
    /// The property's index in the owner's class info.
    var propertyIndex: Int { get }
    /// The type's name for thread checks and messages ("List", "MutableSet", "Map").
    static var typeName: String { get }
}

extension CollectionProperty {
    /// The owner's Realm, the owner and the property, checked for the calling thread; nil when unmanaged.
    var managedContext: (Realm, ObjectRef, ClassInfo.Property)? {
        guard let owner else { return nil }
        owner.realm.verifyThread(Self.typeName)
        return (owner.realm, owner, owner.info.properties[propertyIndex])
    }

    /// Reads the managed collection: a deleted owner stops the program (as realm-swift's invalidated
    /// collections do), and any other read error stops it naming the file, page and class (DECISIONS 70).
    func readStored<T>(_ realm: Realm, _ owner: ObjectRef, _ p: ClassInfo.Property,
                       _ body: (Snapshot, ObjectKey, PropertyHandle) throws -> T) -> T {
        do {
            return try body(realm.reader, owner.key, p.handle)
        } catch StorageError.noSuchObject {
            fatalError(RealmError.invalidatedObject(className: owner.info.name).description)
        } catch {
            realm.rlm.readFailed(error, "read the \(Self.typeName) \(owner.info.name).\(p.name)")
        }
    }

    /// Changes the managed collection inside the Realm's write transaction; outside one, or when the write is
    /// refused, a fatal error naming the operation and the property, as realm-swift raises.
    func modify(_ operation: String, _ body: (WriteTransaction, ObjectKey, PropertyHandle, Realm) throws -> Void) {
        guard let (realm, owner, p) = managedContext else { return }
        do {
            let tx = try realm.requireWrite(operation)
            try RealmError.wrap { try body(tx, owner.key, p.handle, realm) }
            realm.rlm.changed()
        } catch {
            fatalError("cannot \(operation) '\(owner.info.name).\(p.name)': \(error)")
        }
    }
}
