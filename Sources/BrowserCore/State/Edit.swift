import RealmStorage

/// What a cell editor writes to.
public struct EditTarget: Equatable, Sendable {
    public enum Place: Equatable, Sendable {
        /// The property of the object.
        case property
        /// An element of a list of values.
        case listElement(Int)
        /// A new element at the end of a list of values.
        case listAppend
        /// A new element of a set of values.
        case setInsert
        /// An element of a set of values, replaced by the typed one.
        case setElement(Value)
        /// The value at a path in the property: a dictionary entry, or an element of a collection nested in a
        /// mixed value (the property is then the element's: mixed, or the dictionary's value type).
        case entry([PathStep])
        /// A new element at the end of the list nested at a path.
        case entryAppend([PathStep])
        /// A new key of the dictionary at a path (its value is asked next).
        case newKey([PathStep])
        /// A new name for a key of the dictionary at a path.
        case renameKey([PathStep], String)
    }

    public var object: ObjectRef
    public var property: PropertySchema
    public var place: Place

    public init(object: ObjectRef, property: PropertySchema, place: Place = .property) {
        self.object = object
        self.property = property
        self.place = place
    }

    /// Whether Ctrl-N may write null here (never for a dictionary key).
    public var allowsNull: Bool {
        switch place {
        case .newKey, .renameKey: return false
        default: return property.isOptional || property.type == .mixed
        }
    }

    /// The type typed text is parsed as (a list's element type for list places; keys are text).
    public var type: PropertyType {
        switch place {
        case .newKey, .renameKey: return .string
        default: return property.type
        }
    }
}

/// A table opened to choose an object for a link or a list.
public struct PickRequest: Equatable, Sendable {
    public enum Purpose: Equatable, Sendable {
        case setLink(ObjectRef, property: String)
        case appendToList(ObjectRef, property: String)
        case insertIntoSet(ObjectRef, property: String)
        /// The value at a path of a dictionary of links (a key).
        case setEntryLink(ObjectRef, property: String, path: [PathStep])
    }

    public var purpose: Purpose
    /// The depth of the picker's table on the stack (Enter there picks; leaving it cancels).
    public var depth: Int
}

/// A change the user asked for, as data: applied at once, or kept and retried while another process holds
/// the write lock.
public enum WriteIntent: Equatable, Sendable {
    case set(ObjectRef, property: String, Value)
    case createObject(className: String)
    case delete(className: String, keys: [ObjectKey])
    case listAppend(ObjectRef, property: String, Value)
    case listSet(ObjectRef, property: String, index: Int, Value)
    case listRemove(ObjectRef, property: String, index: Int)
    case listMove(ObjectRef, property: String, from: Int, to: Int)
    case createAndAppend(ObjectRef, property: String, targetClass: String)
    case setInsert(ObjectRef, property: String, Value)
    case setRemove(ObjectRef, property: String, Value)
    /// One element of a set exchanged for another (removed and inserted in one transaction).
    case setReplace(ObjectRef, property: String, old: Value, new: Value)
    /// The value at a path: a dictionary key added or set, or an element nested in a mixed value set (one past
    /// the end of a nested list appends).
    case entrySet(ObjectRef, property: String, path: [PathStep], Value)
    /// A dictionary key or a nested list element removed.
    case entryRemove(ObjectRef, property: String, path: [PathStep])
    /// A key of the dictionary at `path` renamed (removed and inserted with its value in one transaction).
    case renameKey(ObjectRef, property: String, path: [PathStep], from: String, to: String)
    /// A new embedded object as the value of a to-one link (the one there before is deleted).
    case createEmbedded(ObjectRef, property: String)
    /// A new embedded object as the value of a key of a dictionary of embedded objects.
    case createEmbeddedEntry(ObjectRef, property: String, key: String)
    case begin
}

/// What a yes/no question does on yes.
public enum ConfirmedAction: Equatable, Sendable {
    case task(AppTask)
    case write(WriteIntent)
    case quit
}
