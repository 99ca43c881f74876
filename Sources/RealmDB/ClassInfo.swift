import RealmStorage

/// One class as a Realm sees it: its table, properties resolved once, and (for typed access) the model mapping.
///
/// For a model class, property `i` is the model's field `i`, so `@Persisted` wrappers hold only an index.
final class ClassInfo {
    struct Property {
        let name: String
        let handle: PropertyHandle
        let schema: PropertySchema
    }

    let name: String
    let table: TableHandle
    let schema: ClassSchema
    let properties: [Property]
    let model: ModelMapping?
    let primaryKeyIndex: Int?
    private let indexByName: [String: Int]

    /// `fileNames` gives the names the properties have in the file when they differ (during a migration).
    init(reader: Snapshot, schema: ClassSchema, model: ModelMapping?, fileNames: [String]? = nil) throws {
        name = schema.name
        let table = try reader.table(schema.name)
        self.table = table
        self.schema = schema
        self.model = model
        let names = fileNames ?? schema.properties.map(\.name)
        properties = try zip(schema.properties, names).map { p, fileName in
            Property(name: p.name, handle: try reader.property(table, fileName), schema: p)
        }
        primaryKeyIndex = schema.properties.firstIndex(where: \.isPrimaryKey)
        indexByName = Dictionary(schema.properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    func index(of name: String) -> Int? { indexByName[name] }

    /// The class info of the target of link property `i`.
    func isLink(_ i: Int) -> Bool { properties[i].schema.type == .link }
}

/// The schema of a class, in the shape realm-swift users know.
public struct ObjectSchema: CustomStringConvertible, Sendable, Equatable {
    public let className: String
    public let properties: [Property]
    /// Whether the class is embedded (its objects live inside one parent object each).
    public let isEmbedded: Bool

    init(_ c: ClassSchema) {
        className = c.name
        properties = c.properties.map(Property.init)
        isEmbedded = c.isEmbedded
    }

    public var primaryKeyProperty: Property? { properties.first(where: \.isPrimary) }

    public subscript(propertyName: String) -> Property? { properties.first { $0.name == propertyName } }

    public var description: String {
        "\(className) {\n" + properties.map { "\t\($0.name) \($0.typeName)\($0.isPrimary ? " (primary key)" : $0.isIndexed ? " (indexed)" : "")" }
            .joined(separator: "\n") + "\n}"
    }
}

/// One property of a class.
public struct Property: Sendable, Equatable {
    public let name: String
    public let type: PropertyType
    public let isOptional: Bool
    /// A list (or linking objects).
    public let isArray: Bool
    /// A `MutableSet`.
    public let isSet: Bool
    /// A `Map<String, …>`.
    public let isMap: Bool
    public let isIndexed: Bool
    public let isPrimary: Bool
    /// The target class of a link or list of links, or the origin class of linking objects.
    public let objectClassName: String?
    public let linkOriginPropertyName: String?

    init(_ p: PropertySchema) {
        name = p.name
        type = p.type
        isOptional = p.isOptional
        isArray = p.isList
        isSet = p.isSet
        isMap = p.isDictionary
        isIndexed = p.isIndexed
        isPrimary = p.isPrimaryKey
        objectClassName = p.objectClassName
        linkOriginPropertyName = p.originProperty
        typeName = p.typeDescription
    }

    /// `int`, `string?`, `[Dog]`, `Dog?`, `LinkingObjects<Person>.dogs`.
    public let typeName: String
}

/// The schema of a Realm: one `ObjectSchema` per class.
public struct Schema: Sendable, Equatable {
    public let objectSchema: [ObjectSchema]
    public subscript(className: String) -> ObjectSchema? { objectSchema.first { $0.className == className } }
}
