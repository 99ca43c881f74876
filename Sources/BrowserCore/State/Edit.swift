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
    }

    public var object: ObjectRef
    public var property: PropertySchema
    public var place: Place

    public init(object: ObjectRef, property: PropertySchema, place: Place = .property) {
        self.object = object
        self.property = property
        self.place = place
    }

    /// The type typed text is parsed as (a list's element type for list places).
    public var type: PropertyType { property.type }
}

/// A table opened to choose an object for a link or a list.
public struct PickRequest: Equatable, Sendable {
    public enum Purpose: Equatable, Sendable {
        case setLink(ObjectRef, property: String)
        case appendToList(ObjectRef, property: String)
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
    case begin
}

/// What a yes/no question does on yes.
public enum ConfirmedAction: Equatable, Sendable {
    case task(AppTask)
    case write(WriteIntent)
    case quit
}
