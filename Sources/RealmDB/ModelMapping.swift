@_spi(Reflection) import Swift
import Synchronization
import RealmStorage

/// A model class as found by reflection: its schema and where each property's field lies in an instance.
///
/// Fields are found with the standard library's field reflection (`_forEachField`), which reports every
/// stored field of a class and its superclasses with its byte offset; see docs/DECISIONS.md.
final class ModelMapping: @unchecked Sendable {
    // Safe: immutable after init.
    struct Field {
        let name: String
        let offset: Int
        let accessor: RealmField.Type
    }

    let type: Object.Type
    let className: String
    let schema: ClassSchema
    /// One per property, in schema order.
    let fields: [Field]
    let primaryKeyIndex: Int?
    /// Target and origin classes this class refers to.
    let relatedTypes: [Object.Type]
    private let indexByName: [String: Int]

    private init(type: Object.Type, className: String, schema: ClassSchema, fields: [Field], relatedTypes: [Object.Type]) {
        self.type = type
        self.className = className
        self.schema = schema
        self.fields = fields
        self.relatedTypes = relatedTypes
        primaryKeyIndex = schema.properties.firstIndex(where: \.isPrimaryKey)
        indexByName = Dictionary(schema.properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    func index(of name: String) -> Int? { indexByName[name] }

    private static let cache = Mutex<[ObjectIdentifier: ModelMapping]>([:])

    /// Every model class mapped so far in this process (used when a configuration names no object types).
    static var allMapped: [ModelMapping] {
        cache.withLock { Array($0.values) }.sorted { $0.className < $1.className }
    }

    /// The mapping of `type`, discovered (and validated) on first use.
    static func mapping(for type: Object.Type) throws -> ModelMapping {
        if let m = cache.withLock({ $0[ObjectIdentifier(type)] }) { return m }
        let m = try discover(type)
        return cache.withLock { c in
            if let existing = c[ObjectIdentifier(type)] { return existing }
            c[ObjectIdentifier(type)] = m
            return m
        }
    }

    /// The mappings of `types` and of every class they link to or are linked from, validated together.
    static func closure(of types: [Object.Type]) throws -> [ModelMapping] {
        var out: [ModelMapping] = []
        var seen = Set<ObjectIdentifier>()
        var names: [String: Object.Type] = [:]
        var queue = types
        while let t = queue.popLast() {
            guard seen.insert(ObjectIdentifier(t)).inserted else { continue }
            let m = try mapping(for: t)
            if let other = names[m.className], other != t {
                throw RealmError.invalidModel(className: m.className,
                                              reason: "two model classes have this name (\(String(reflecting: other)) and \(String(reflecting: t)))")
            }
            names[m.className] = t
            out.append(m)
            queue.append(contentsOf: m.relatedTypes)
        }
        try validateLinkingObjects(out)
        return out.sorted { $0.className < $1.className }
    }

    private static func validateLinkingObjects(_ mappings: [ModelMapping]) throws {
        let byName = Dictionary(mappings.map { ($0.className, $0) }, uniquingKeysWith: { a, _ in a })
        for m in mappings {
            for p in m.schema.properties where p.type == .linkingObjects {
                guard let originName = p.objectClassName, let origin = byName[originName] else { continue }
                guard let prop = p.originProperty, let op = origin.schema.property(named: prop) else {
                    throw RealmError.invalidModel(className: m.className,
                        reason: "LinkingObjects '\(p.name)' names property '\(p.originProperty ?? "")' which \(originName) does not have")
                }
                guard op.type == .link, op.objectClassName == m.className else {
                    throw RealmError.invalidModel(className: m.className,
                        reason: "LinkingObjects '\(p.name)' names \(originName).\(prop), which is not a link to \(m.className)")
                }
            }
        }
    }

    /// `_EachFieldOptions.classType`, read once (the standard library declares it as a mutable static).
    private static let fieldOptions: _EachFieldOptions = {
        _EachFieldOptions(rawValue: 1 << 0)
    }()

    private static func discover(_ type: Object.Type) throws -> ModelMapping {
        let className = type.className()
        let prototype = type.init()
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
        let ignored = Set(type.ignoredProperties())
        let indexedByName = Set(type.indexedProperties())
        let pkByName = type.primaryKey()
        var found: [(FieldDescription, Field)] = []
        let ok = withExtendedLifetime(prototype) {
            _forEachField(of: type, options: ModelMapping.fieldOptions) { label, offset, fieldType, _ in
                guard let accessor = fieldType as? RealmField.Type else { return true }
                let d = accessor.describe(base + offset, label: String(cString: label))
                if !ignored.contains(d.name) {
                    found.append((d, Field(name: d.name, offset: offset, accessor: accessor)))
                }
                return true
            }
        }
        guard ok else { throw RealmError.invalidModel(className: className, reason: "its fields cannot be reflected") }

        var properties: [PropertySchema] = []
        var related: [Object.Type] = []
        func fail(_ reason: String) -> RealmError { .invalidModel(className: className, reason: reason) }
        for (d, _) in found {
            let desc = d.descriptor
            let isPK = d.isPrimaryKey || d.name == pkByName
            let isIndexed = d.isIndexed || indexedByName.contains(d.name)
            if properties.contains(where: { $0.name == d.name }) { throw fail("property '\(d.name)' is declared twice") }
            switch desc.type {
            case .link:
                guard let target = desc.objectType else { throw fail("link '\(d.name)' has no target class") }
                if desc.isList && desc.isOptional { throw fail("list '\(d.name)' cannot hold optional objects") }
                if desc.isSet && desc.isOptional {
                    throw fail("MutableSet<\(target.className())> property '\(d.name)' must not be marked as optional")
                }
                if desc.isDictionary && !desc.isOptional {
                    throw fail("Map<String, \(target.className())> property '\(d.name)' must be marked as optional")
                }
                if !desc.isList && !desc.isSet && !desc.isDictionary && !desc.isOptional {
                    throw fail("to-one link '\(d.name)' must be optional (declare it as \(target.className())?)")
                }
                related.append(target)
            case .linkingObjects:
                guard let origin = desc.objectType else { throw fail("LinkingObjects '\(d.name)' has no origin class") }
                guard desc.originProperty?.isEmpty == false else { throw fail("LinkingObjects '\(d.name)' names no origin property") }
                related.append(origin)
            default: break
            }
            if isPK {
                guard !desc.isList, !desc.isSet, !desc.isDictionary, desc.type.canBePrimaryKey else {
                    throw fail("property '\(d.name)' of type \(desc.type)\(desc.isList ? " list" : "") cannot be a primary key (int, string, objectId or uuid only)")
                }
                if properties.contains(where: \.isPrimaryKey) { throw fail("more than one primary key") }
            }
            if isIndexed && !isPK {
                // A set's elements may be indexed too (a MutableSet of any of these but AnyRealmValue).
                guard !desc.isList, !desc.isDictionary, desc.type.isIndexable, !(desc.isSet && desc.type == .mixed) else {
                    throw fail("property '\(d.name)' of type \(desc.type)\(desc.isList ? " list" : desc.isSet ? " set" : desc.isDictionary ? " dictionary" : "") cannot be indexed (bool, int, string, date, objectId, uuid or AnyRealmValue, or a MutableSet of one of them but AnyRealmValue)")
                }
            }
            properties.append(PropertySchema(
                name: d.name, type: desc.type, isOptional: desc.isOptional,
                isList: desc.isList || desc.type == .linkingObjects, isIndexed: isIndexed && !isPK, isPrimaryKey: isPK,
                objectClassName: desc.objectClassName, originProperty: desc.originProperty,
                isSet: desc.isSet, isDictionary: desc.isDictionary))
        }
        if let pk = pkByName, !properties.contains(where: { $0.name == pk }) {
            throw fail("primaryKey() names '\(pk)', which is not a persisted property")
        }
        for name in indexedByName where !properties.contains(where: { $0.name == name }) {
            throw fail("indexedProperties() names '\(name)', which is not a persisted property")
        }
        let embedded = type is EmbeddedObject.Type
        if embedded, properties.contains(where: \.isPrimaryKey) {
            throw fail("Embedded object type '\(className)' cannot have a primary key.")
        }
        return ModelMapping(type: type, className: className,
                            schema: ClassSchema(name: className, properties: properties, isEmbedded: embedded),
                            fields: found.map(\.1), relatedTypes: related)
    }
}

extension PropertySchema {
    /// `int`, `string?`, `[Dog]`, `Dog?`, `LinkingObjects<Person>.dogs`: for messages and descriptions.
    var typeDescription: String {
        switch type {
        case .linkingObjects: return "LinkingObjects<\(objectClassName ?? "?")>.\(originProperty ?? "?")"
        case .link:
            if isSet { return "Set<\(objectClassName ?? "?")>" }
            if isDictionary { return "Map<String, \(objectClassName ?? "?")?>" }
            return isList ? "[\(objectClassName ?? "?")]" : "\(objectClassName ?? "?")?"
        default:
            let base = type.description + (isOptional ? "?" : "")
            if isSet { return "Set<\(base)>" }
            if isDictionary { return "Map<String, \(base)>" }
            return isList ? "[\(base)]" : base
        }
    }
}
