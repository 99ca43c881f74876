import Foundation
import RealmStorage

/// Schemas in the Realm JS convention: a JSON array of
/// `{"name": "Person", "primaryKey": "id", "properties": {"id": "int", "dogs": "Dog[]", ...}}`.
///
/// A property is a type string (`int`, `string?`, `Dog`, `Dog[]`, `string[]`, `int?[]`) or an object
/// `{"type", "optional", "indexed", "objectType", "property", "default"}`; `{"type": "linkingObjects",
/// "objectType": "Person", "property": "dogs"}` is a backlink.
public struct SchemaFile: Equatable {
    public var classes: [ClassSchema]
    /// Default values given in the file, by class and property.
    public var defaults: [String: [String: JSONValue]]

    public init(classes: [ClassSchema], defaults: [String: [String: JSONValue]] = [:]) {
        self.classes = classes
        self.defaults = defaults
    }

    static let primitiveTypes: [String: PropertyType] = [
        "bool": .bool, "int": .int, "float": .float, "double": .double, "string": .string, "date": .date,
        "data": .data, "objectId": .objectId, "uuid": .uuid, "decimal128": .decimal128, "decimal": .decimal128,
        "mixed": .mixed,
    ]

    /// Parses a schema file's contents; `file` names it in errors.
    public static func parse(_ data: Data, file: String) throws -> SchemaFile {
        let json: JSONValue
        do { json = try JSONParser.parse(data) } catch let e as JSONSyntaxError { throw ToolError.json(file: file, e) }
        func fail(_ location: String, _ message: String) -> ToolError { .schema(file: file, location: location, message: message) }
        guard case .array(let items) = json else { throw fail("(top level)", "expected an array of classes, found \(json.kind)") }
        var classes: [ClassSchema] = []
        var defaults: [String: [String: JSONValue]] = [:]
        for (n, item) in items.enumerated() {
            guard case .object = item else { throw fail("[\(n)]", "expected a class object, found \(item.kind)") }
            guard case .string(let name)? = item["name"] else { throw fail("[\(n)]", "a class needs a \"name\" string") }
            var pk: String?
            if let p = item["primaryKey"] {
                guard case .string(let s) = p else { throw fail("\(name).primaryKey", "expected a property name") }
                pk = s
            }
            guard case .object(let props)? = item["properties"] else {
                throw fail(name, "a class needs a \"properties\" object")
            }
            var properties: [PropertySchema] = []
            for (pname, spec) in props {
                let loc = "\(name).properties.\(pname)"
                var p = try property(pname, spec, loc, fail)
                if pname == pk { p.isPrimaryKey = true; p.isIndexed = false }
                if case .object = spec, let d = spec["default"] { defaults[name, default: [:]][pname] = d }
                properties.append(p)
            }
            if let pk, !properties.contains(where: { $0.name == pk }) {
                throw fail("\(name).primaryKey", "names '\(pk)', which is not among the properties")
            }
            var embedded = false
            if let e = item["embedded"] {
                guard case .bool(let b) = e else { throw fail("\(name).embedded", "expected true or false") }
                embedded = b
            }
            classes.append(ClassSchema(name: name, properties: properties, isEmbedded: embedded))
        }
        let names = Set(classes.map(\.name))
        for c in classes {
            for p in c.properties where p.type == .link || p.type == .linkingObjects {
                if let t = p.objectClassName, !names.contains(t) {
                    if p.type == .link, let near = SchemaCompare.nearest(t, Array(primitiveTypes.keys)) {
                        throw fail("\(c.name).properties.\(p.name)", "unknown type '\(t)' (did you mean '\(near)'?)")
                    }
                    throw fail("\(c.name).properties.\(p.name)", "refers to class '\(t)', which the schema does not define")
                }
            }
        }
        return SchemaFile(classes: classes, defaults: defaults)
    }

    private static func property(_ name: String, _ spec: JSONValue, _ loc: String,
                                 _ fail: (String, String) -> ToolError) throws -> PropertySchema {
        switch spec {
        case .string(let s): return try parseTypeString(name, s, loc, fail)
        case .object:
            guard case .string(var type)? = spec["type"] else { throw fail(loc, "a property object needs a \"type\" string") }
            var optional = false
            if case .bool(let o)? = spec["optional"] { optional = o }
            var indexed = false
            if case .bool(let i)? = spec["indexed"] { indexed = i }
            var objectType: String?
            if case .string(let o)? = spec["objectType"] { objectType = o }
            switch type {
            case "linkingObjects":
                guard let o = objectType, case .string(let prop)? = spec["property"] else {
                    throw fail(loc, "linkingObjects needs \"objectType\" and \"property\"")
                }
                return .linkingObjects(name, from: o, property: prop)
            case "list", "object", "set", "dictionary":
                guard let o = objectType else { throw fail(loc, "\"\(type)\" needs an \"objectType\"") }
                let suffix = ["list": "[]", "set": "<>", "dictionary": "{}"][type] ?? ""
                if type == "object" { type = o } else { type = o + (optional && type != "dictionary" ? "?" : "") + suffix }
                var p = try parseTypeString(name, type, loc, fail)
                if !p.isList && !p.isSet && optional { p.isOptional = true }
                p.isIndexed = indexed
                return p
            default:
                var p = try parseTypeString(name, type + (optional && !type.hasSuffix("?") ? "?" : ""), loc, fail)
                p.isIndexed = indexed
                return p
            }
        default:
            throw fail(loc, "expected a type string or a property object, found \(spec.kind)")
        }
    }

    /// `int`, `string?`, `Dog`, `Dog[]`, `string[]`, `int?[]`, sets `string<>` / `Dog<>`, dictionaries `int{}` /
    /// `Dog{}` (Realm JS's notation).
    static func parseTypeString(_ name: String, _ s: String, _ loc: String, _ fail: (String, String) -> ToolError) throws -> PropertySchema {
        var t = s.trimmingCharacters(in: .whitespaces)
        var isList = false, isSet = false, isDictionary = false
        if t.hasSuffix("[]") { isList = true; t.removeLast(2) }
        else if t.hasSuffix("<>") { isSet = true; t.removeLast(2) }
        else if t.hasSuffix("{}") { isDictionary = true; t.removeLast(2) }
        var optional = false
        if t.hasSuffix("?") { optional = true; t.removeLast() }
        guard !t.isEmpty else { throw fail(loc, "empty type") }
        if let prim = primitiveTypes[t] {
            return PropertySchema(name: name, type: prim, isOptional: optional || prim == .mixed, isList: isList,
                                  isSet: isSet, isDictionary: isDictionary)
        }
        let lower = t.lowercased()
        if let near = primitiveTypes.keys.first(where: { $0.lowercased() == lower }) {
            throw fail(loc, "unknown type '\(s)' (did you mean '\(near)'?)")
        }
        guard t.first?.isLetter == true || t.first == "_" else { throw fail(loc, "unknown type '\(s)'") }
        if isList {
            if optional { throw fail(loc, "a list of objects cannot hold nulls ('\(s)')") }
            return .list(name, of: t)
        }
        if isSet {
            if optional { throw fail(loc, "a set of objects cannot hold nulls ('\(s)')") }
            return .set(name, of: t)
        }
        if isDictionary { return .dictionary(name, of: t) }
        return .link(name, to: t)
    }

    /// The file's text: the same convention, properties as type strings unless they need more.
    public func json() -> JSONValue {
        .array(classes.map { c in
            var members: [(String, JSONValue)] = [("name", .string(c.name))]
            if let pk = c.primaryKey { members.append(("primaryKey", .string(pk))) }
            if c.isEmbedded { members.append(("embedded", .bool(true))) }
            members.append(("properties", .object(c.properties.map { p in (p.name, SchemaFile.propertyJSON(p, defaults[c.name]?[p.name])) })))
            return .object(members)
        })
    }

    static func typeString(_ p: PropertySchema) -> String {
        let base: String
        switch p.type {
        case .link: base = p.objectClassName ?? "?"
        default: base = p.type.description
        }
        let suffix = p.isList ? "[]" : p.isSet ? "<>" : p.isDictionary ? "{}" : ""
        if p.type == .link { return base + suffix }
        let opt = p.isOptional && p.type != .mixed ? "?" : ""
        return base + opt + suffix
    }

    static func propertyJSON(_ p: PropertySchema, _ def: JSONValue?) -> JSONValue {
        if p.type == .linkingObjects {
            return .object([("type", .string("linkingObjects")), ("objectType", .string(p.objectClassName ?? "")),
                            ("property", .string(p.originProperty ?? ""))])
        }
        let t = typeString(p)
        if !p.isIndexed && def == nil { return .string(t) }
        var members: [(String, JSONValue)] = [("type", .string(t))]
        if p.isIndexed { members.append(("indexed", .bool(true))) }
        if let def { members.append(("default", def)) }
        return .object(members)
    }
}
