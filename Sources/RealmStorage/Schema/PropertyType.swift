import Foundation

/// The type of a property. The raw values are the type codes stored in the catalogue.
public enum PropertyType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case bool = 1
    case int = 2
    case float = 3
    case double = 4
    case string = 5
    case data = 6
    case date = 7
    case objectId = 8
    case uuid = 9
    case decimal128 = 10
    case mixed = 11
    /// A to-one link, or a list of links when the property is a list.
    case link = 12
    /// A computed inverse relationship (Realm's `LinkingObjects`): no column of its own.
    case linkingObjects = 13
    /// The hidden column holding the origins of one incoming link property.
    case backlink = 14

    public var description: String {
        switch self {
        case .bool: return "bool"
        case .int: return "int"
        case .float: return "float"
        case .double: return "double"
        case .string: return "string"
        case .data: return "data"
        case .date: return "date"
        case .objectId: return "objectId"
        case .uuid: return "uuid"
        case .decimal128: return "decimal128"
        case .mixed: return "mixed"
        case .link: return "link"
        case .linkingObjects: return "linkingObjects"
        case .backlink: return "backlink"
        }
    }

    /// Types that may be indexed (mixed from format 7).
    public var isIndexable: Bool {
        switch self {
        case .bool, .int, .string, .date, .objectId, .uuid, .mixed: return true
        default: return false
        }
    }

    /// Types that may be a primary key.
    public var canBePrimaryKey: Bool {
        switch self {
        case .int, .string, .objectId, .uuid: return true
        default: return false
        }
    }

    /// The value a non-optional property of this type takes when nothing was set.
    public var defaultValue: Value {
        switch self {
        case .bool: return .bool(false)
        case .int: return .int(0)
        case .float: return .float(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .data: return .data([])
        case .date: return .date(Timestamp(seconds: 0))
        case .objectId: return .objectId(ObjectId.zero)
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .decimal128: return .decimal128(Decimal128.zero)
        case .mixed, .link, .linkingObjects, .backlink: return .null
        }
    }
}
