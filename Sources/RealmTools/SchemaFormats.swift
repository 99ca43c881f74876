import RealmStorage

/// The schema as text for people and as Swift model classes.
public enum SchemaFormats {
    /// One class per block: `Person (3 objects)` then `  id: int  primary key`.
    public static func text(_ schema: [ClassSchema], counts: [String: Int]) -> String {
        var out = ""
        for c in schema {
            out += "\(c.name)\(c.isEmbedded ? " (embedded)" : "") (\(counts[c.name].map { "\($0) object\($0 == 1 ? "" : "s")" } ?? "?"))\n"
            let width = c.properties.map(\.name.count).max() ?? 0
            for p in c.properties {
                var type: String
                if p.type == .linkingObjects {
                    type = "← \(p.objectClassName ?? "?").\(p.originProperty ?? "?")"
                } else {
                    type = SchemaFile.typeString(p)
                }
                if p.isPrimaryKey { type += "  primary key" } else if p.isIndexed { type += "  indexed" }
                out += "  \(p.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(type)\n"
            }
        }
        return out
    }

    /// `Object` subclasses with `@Persisted` properties for the RealmDB module.
    public static func swift(_ schema: [ClassSchema]) -> String {
        var out = "import Foundation\nimport RealmDB\n"
        for c in schema {
            out += "\nclass \(identifier(c.name)): \(c.isEmbedded ? "EmbeddedObject" : "Object") {\n"
            for p in c.properties {
                let name = identifier(p.name)
                var attrs = ""
                if p.isPrimaryKey { attrs = "(primaryKey: true)" } else if p.isIndexed { attrs = "(indexed: true)" }
                switch p.type {
                case .linkingObjects:
                    out += "    @Persisted(originProperty: \"\(p.originProperty ?? "")\") var \(name): LinkingObjects<\(identifier(p.objectClassName ?? ""))>\n"
                case .link where p.isList:
                    out += "    @Persisted\(attrs) var \(name): List<\(identifier(p.objectClassName ?? ""))>\n"
                case .link where p.isSet:
                    out += "    @Persisted\(attrs) var \(name): MutableSet<\(identifier(p.objectClassName ?? ""))>\n"
                case .link where p.isDictionary:
                    out += "    @Persisted\(attrs) var \(name): Map<String, \(identifier(p.objectClassName ?? ""))?>\n"
                case .link:
                    out += "    @Persisted\(attrs) var \(name): \(identifier(p.objectClassName ?? ""))?\n"
                default:
                    let t = swiftType(p.type) + (p.isOptional && p.type != .mixed ? "?" : "")
                    if p.isList {
                        out += "    @Persisted\(attrs) var \(name): List<\(t)>\n"
                    } else if p.isSet {
                        out += "    @Persisted\(attrs) var \(name): MutableSet<\(t)>\n"
                    } else if p.isDictionary {
                        out += "    @Persisted\(attrs) var \(name): Map<String, \(t)>\n"
                    } else if p.isOptional || p.type == .mixed {
                        out += "    @Persisted\(attrs) var \(name): \(t)\n"
                    } else {
                        out += "    @Persisted\(attrs) var \(name): \(t)\(defaultValue(p.type).map { " = \($0)" } ?? "")\n"
                    }
                }
            }
            out += "}\n"
        }
        return out
    }

    /// The Swift type RealmDB uses for a stored type (`Int`, `String`, `AnyRealmValue`, ...).
    public static func swiftType(_ t: PropertyType) -> String {
        switch t {
        case .bool: return "Bool"
        case .int: return "Int"
        case .float: return "Float"
        case .double: return "Double"
        case .string: return "String"
        case .data: return "Data"
        case .date: return "Date"
        case .objectId: return "ObjectId"
        case .uuid: return "UUID"
        case .decimal128: return "Decimal128"
        case .mixed: return "AnyRealmValue"
        case .link, .linkingObjects, .backlink: return "Object"
        }
    }

    static func defaultValue(_ t: PropertyType) -> String? {
        switch t {
        case .bool: return "false"
        case .int, .float: return "0"
        case .double: return "0.0"
        case .string: return "\"\""
        case .data: return "Data()"
        default: return nil
        }
    }

    /// A name usable as a Swift identifier (back-quoted keywords, invalid characters replaced).
    static func identifier(_ s: String) -> String {
        let keywords: Set<String> = ["class", "struct", "enum", "protocol", "func", "var", "let", "in", "is", "as", "self",
                                     "Self", "return", "if", "else", "for", "while", "switch", "case", "default", "import",
                                     "public", "private", "internal", "static", "true", "false", "nil", "init", "deinit",
                                     "extension", "operator", "subscript", "where", "throw", "throws", "try", "catch", "do", "repeat", "break", "continue", "guard", "defer", "inout", "typealias", "associatedtype", "Any", "super"]
        var out = String(s.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        if out.first?.isNumber == true { out = "_" + out }
        if out.isEmpty { out = "_" }
        return keywords.contains(out) ? "`\(out)`" : out
    }
}
