/// One property of a class, as callers describe it and as `Snapshot.schema` reports it.
public struct PropertySchema: Equatable, Sendable {
    public var name: String
    public var type: PropertyType
    public var isOptional: Bool
    /// A list (or, for `linkingObjects`, always true). Exclusive with `isSet` and `isDictionary`.
    public var isList: Bool
    /// A set of unique values (Realm's `MutableSet`), of `type` (links when `.link`).
    public var isSet: Bool
    /// A dictionary with string keys and values of `type` (Realm's `Map<String, T>`).
    public var isDictionary: Bool
    public var isIndexed: Bool
    public var isPrimaryKey: Bool
    /// The target class of a link, or the origin class of a `linkingObjects` property.
    public var objectClassName: String?
    /// For `linkingObjects`: the link property of `objectClassName` whose origins this property lists.
    public var originProperty: String?

    public init(name: String, type: PropertyType, isOptional: Bool = false, isList: Bool = false,
                isIndexed: Bool = false, isPrimaryKey: Bool = false, objectClassName: String? = nil,
                originProperty: String? = nil, isSet: Bool = false, isDictionary: Bool = false) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isList = isList
        self.isSet = isSet
        self.isDictionary = isDictionary
        self.isIndexed = isIndexed
        self.isPrimaryKey = isPrimaryKey
        self.objectClassName = objectClassName
        self.originProperty = originProperty
    }

    public static func link(_ name: String, to target: String) -> PropertySchema {
        PropertySchema(name: name, type: .link, isOptional: true, objectClassName: target)
    }

    public static func list(_ name: String, of target: String) -> PropertySchema {
        PropertySchema(name: name, type: .link, isList: true, objectClassName: target)
    }

    /// A set of links to `target`.
    public static func set(_ name: String, of target: String) -> PropertySchema {
        PropertySchema(name: name, type: .link, objectClassName: target, isSet: true)
    }

    /// A dictionary whose values link to `target` (or are null).
    public static func dictionary(_ name: String, of target: String) -> PropertySchema {
        PropertySchema(name: name, type: .link, isOptional: true, objectClassName: target, isDictionary: true)
    }

    /// Whether the property holds a list, set or dictionary (not `linkingObjects`).
    public var isCollection: Bool { (isList || isSet || isDictionary) && type != .linkingObjects }

    public static func linkingObjects(_ name: String, from origin: String, property: String) -> PropertySchema {
        PropertySchema(name: name, type: .linkingObjects, isList: true, objectClassName: origin, originProperty: property)
    }
}

/// A class of objects: a name and its properties (the hidden backlink properties are not listed).
public struct ClassSchema: Equatable, Sendable {
    public var name: String
    public var properties: [PropertySchema]
    /// An embedded class (Realm's `EmbeddedObject`): each object is owned by exactly one link, list element or
    /// dictionary value of a parent, is created through it and deleted with it; no primary key.
    public var isEmbedded: Bool

    public init(name: String, properties: [PropertySchema], isEmbedded: Bool = false) {
        self.name = name
        self.properties = properties
        self.isEmbedded = isEmbedded
    }

    public var primaryKey: String? { properties.first(where: \.isPrimaryKey)?.name }

    public func property(named name: String) -> PropertySchema? { properties.first { $0.name == name } }
}

/// Limits of names, as in Realm.
public enum SchemaLimits {
    public static let maxClassNameBytes = 57
    public static let maxPropertyNameBytes = 63
    public static let maxValueBytes = 16 * 1024 * 1024
}
