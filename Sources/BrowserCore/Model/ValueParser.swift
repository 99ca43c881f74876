import Foundation
import RealmStorage
import RealmTools

/// Text typed into a cell editor, checked against the property's type: a value, or a message that says what
/// was expected. Nothing is written until the text parses.
public enum ValueParser {
    /// The text the editor starts with for a value (the whole value, not the table's shortened cell).
    public static func editText(_ v: Value) -> String {
        switch v {
        case .null: return ""
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .float(let f): return f.isNaN ? "nan" : f.isInfinite ? (f < 0 ? "-inf" : "inf") : "\(f)"
        case .double(let d): return d.isNaN ? "nan" : d.isInfinite ? (d < 0 ? "-inf" : "inf") : "\(d)"
        case .decimal128(let d): return d.description
        case .string(let s): return s
        case .data: return ""
        case .date(let t): return ValueCodec.iso8601(t)
        case .objectId(let o): return o.hexString
        case .uuid(let u): return u.uuidString.lowercased()
        case .link(let k), .typedLink(_, let k): return "#\(k.rawValue)"
        case .list, .dictionary: return ""
        }
    }

    /// The type names a mixed value's text may start with (`int 5`).
    static let mixedTypes: [String: PropertyType] = [
        "bool": .bool, "int": .int, "float": .float, "double": .double, "decimal": .decimal128, "decimal128": .decimal128,
        "string": .string, "date": .date, "objectid": .objectId, "uuid": .uuid, "data": .data,
    ]

    /// The text a mixed value's editor starts with: its type, then its value (`int 5`, `string abc`, `null`);
    /// parsed back to the same value. Collections and links start empty (typing replaces them).
    public static func mixedEditText(_ v: Value) -> String {
        switch v {
        case .null: return "null"
        case .bool: return "bool " + editText(v)
        case .int: return "int " + editText(v)
        case .float: return "float " + editText(v)
        case .double: return "double " + editText(v)
        case .decimal128: return "decimal " + editText(v)
        case .string(let s): return "string " + s
        case .date: return "date " + editText(v)
        case .objectId: return "objectId " + editText(v)
        case .uuid: return "uuid " + editText(v)
        case .data: return "data @"
        case .link, .typedLink, .list, .dictionary: return ""
        }
    }

    /// What the editor's hint line says the type accepts.
    public static func hint(_ type: PropertyType) -> String {
        switch type {
        case .bool: return "true or false (Space toggles)"
        case .int: return "an integer"
        case .float, .double: return "a number (1.5, -2e10, inf, nan)"
        case .decimal128: return "a decimal (12.50, -1e-3)"
        case .string: return "text"
        case .data: return "@/path/to/file loads a file"
        case .date: return "ISO 8601: 2024-05-01T12:00:00Z, 2024-05-01, now"
        case .objectId: return "24 hex digits, or new"
        case .uuid: return "a uuid, or new"
        case .mixed: return "int 5, string abc, null, list, link Dog #3"
        default: return ""
        }
    }

    public static func parse(_ raw: String, as type: PropertyType) -> Result<Value, EditError> {
        let text = raw.trimmingCharacters(in: .whitespaces)
        func fail(_ m: String) -> Result<Value, EditError> { .failure(EditError(m)) }
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        switch type {
        case .string:
            return .success(.string(raw))
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "y", "1", "✓": return .success(.bool(true))
            case "false", "no", "n", "0", "✗": return .success(.bool(false))
            default: return fail("'\(shown)' is not a boolean: true or false")
            }
        case .int:
            let digits = text.replacingOccurrences(of: "_", with: "")
            if let i = Int64(digits) { return .success(.int(i)) }
            if !digits.isEmpty, digits.dropFirst(digits.first == "-" || digits.first == "+" ? 1 : 0).allSatisfy(\.isNumber) {
                return fail("\(shown) is out of range for an integer (-9223372036854775808 … 9223372036854775807)")
            }
            return fail("'\(shown)' is not an integer")
        case .float, .double:
            let d: Double?
            switch text.lowercased() {
            case "inf", "+inf", "infinity": d = .infinity
            case "-inf", "-infinity": d = -.infinity
            case "nan": d = .nan
            default: d = Double(text.replacingOccurrences(of: "_", with: ""))
            }
            guard let d else { return fail("'\(shown)' is not a number") }
            if type == .float {
                let f = Float(d)
                if f.isInfinite && d.isFinite { return fail("\(shown) is too large for a float (±3.4e38)") }
                return .success(.float(f))
            }
            return .success(.double(d))
        case .decimal128:
            guard let d = Decimal128(string: text) else { return fail("'\(shown)' is not a decimal") }
            return .success(.decimal128(d))
        case .date:
            if text.lowercased() == "now" {
                return .success(.date(Timestamp(Date())))
            }
            let full = text.count == 10 ? text + "T00:00:00Z" : text
            guard let t = ValueCodec.parseISO8601(full) else {
                return fail("'\(shown)' is not an ISO 8601 date: YYYY-MM-DDTHH:MM:SS[.fraction]Z")
            }
            return .success(.date(t))
        case .objectId:
            if text.lowercased() == "new" { return .success(.objectId(ObjectId.generate())) }
            guard let o = ObjectId(hexString: text) else { return fail("'\(shown)' is not an objectId: 24 hex digits") }
            return .success(.objectId(o))
        case .uuid:
            if text.lowercased() == "new" { return .success(.uuid(UUID())) }
            guard let u = UUID(uuidString: text) else { return fail("'\(shown)' is not a uuid (8-4-4-4-12 hex digits)") }
            return .success(.uuid(u))
        case .data:
            guard text.hasPrefix("@") else { return fail("data is not typed: @/path/to/file loads a file") }
            let path = String(text.dropFirst())
            guard let attrs = try? FileManager.default.attributesOfItem(atPath: path) else { return fail("\(path): no such file") }
            let size = (attrs[.size] as? Int) ?? 0
            guard size <= 16 << 20 else { return fail("\(path) is \(ValueFormat.byteSize(size)): data values hold at most 16 MiB") }
            guard let d = FileManager.default.contents(atPath: path) else { return fail("\(path): cannot read the file") }
            return .success(.data([UInt8](d)))
        case .mixed:
            switch text.lowercased() {
            case "null": return .success(.null)
            case "true": return .success(.bool(true))
            case "false": return .success(.bool(false))
            case "list", "[]": return .success(.list([]))
            case "dictionary", "{}": return .success(.dictionary(ValueDictionary()))
            default: break
            }
            // `int 5`, `string abc`, `date now`: the type named first, the value parsed as that type.
            if let space = text.firstIndex(of: " "), let t = mixedTypes[text[..<space].lowercased()] {
                let rest = String(text[text.index(after: space)...])
                if t == .string {
                    // Text keeps its spaces: everything after the one space that ends the type's name.
                    let afterName = raw.drop { $0.unicodeScalars.allSatisfy(CharacterSet.whitespaces.contains) }.dropFirst(text.distance(from: text.startIndex, to: space) + 1)
                    return .success(.string(String(afterName)))
                }
                return parse(rest, as: t)
            }
            if let i = Int64(text) { return .success(.int(i)) }
            if let d = Double(text) { return .success(.double(d)) }
            if text.count >= 2, text.first == "\"", text.last == "\"" { return .success(.string(String(text.dropFirst().dropLast()))) }
            return .success(.string(raw))
        case .link, .linkingObjects, .backlink:
            return fail("links are chosen from a table, not typed")
        }
    }
}

/// Why typed text was not written.
public struct EditError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
