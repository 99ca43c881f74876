/// One property of a class, as callers describe it and as `Snapshot.schema` reports it.
public struct PropertySchema: Equatable, Sendable {
    public var name: String
    public var type: PropertyType
    public var isOptional: Bool
    public var isList: Bool
    public var isIndexed: Bool
    public var isPrimaryKey: Bool
    /// The target class of a link, or the origin class of a `linkingObjects` property.
    public var objectClassName: String?
    /// For `linkingObjects`: the link property of `objectClassName` whose origins this property lists.
    public var originProperty: String?

    public init(name: String, type: PropertyType, isOptional: Bool = false, isList: Bool = false,
                isIndexed: Bool = false, isPrimaryKey: Bool = false, objectClassName: String? = nil,
                originProperty: String? = nil) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isList = isList
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

    public static func linkingObjects(_ name: String, from origin: String, property: String) -> PropertySchema {
        PropertySchema(name: name, type: .linkingObjects, isList: true, objectClassName: origin, originProperty: property)
    }
}

/// A class of objects: a name and its properties (the hidden backlink properties are not listed).
public struct ClassSchema: Equatable, Sendable {
    public var name: String
    public var properties: [PropertySchema]

    public init(name: String, properties: [PropertySchema]) {
        self.name = name
        self.properties = properties
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
