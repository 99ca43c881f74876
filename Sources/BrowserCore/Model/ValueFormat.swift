import RealmStorage
import RealmTools

/// A value ready for one table cell: its text, role and alignment.
public struct CellText: Equatable, Sendable {
    public var text: String
    public var role: Role
    public var rightAligned = false

    public init(_ text: String, _ role: Role, rightAligned: Bool = false) {
        self.text = text
        self.role = role
        self.rightAligned = rightAligned
    }
}

/// How values and types read in the browser: numbers right-aligned, null distinct from an empty string,
/// dates in ISO 8601, bools as ✓/✗ or true/false (per theme), data as size and hex.
public struct ValueFormat: Equatable, Sendable {
    public var bools: Theme.BoolStyle

    public init(bools: Theme.BoolStyle = .symbols) { self.bools = bools }

    /// `Int`, `String?`, `→ Person`, `[Dog]`, `[Double?]`, `← Person.dogs`.
    public static func typeName(_ p: PropertySchema) -> String {
        switch p.type {
        case .link where p.isList: return "[\(p.objectClassName ?? "?")]"
        case .link where p.isSet: return "Set<\(p.objectClassName ?? "?")>"
        case .link where p.isDictionary: return "Map<\(p.objectClassName ?? "?")?>"
        case .link: return "→ \(p.objectClassName ?? "?")"
        case .linkingObjects: return "← \(p.objectClassName ?? "?").\(p.originProperty ?? "?")"
        default:
            let base = scalarTypeName(p.type) + (p.isOptional && p.type != .mixed ? "?" : "")
            if p.isSet { return "Set<\(base)>" }
            if p.isDictionary { return "Map<\(base)>" }
            return p.isList ? "[\(base)]" : base
        }
    }

    static func scalarTypeName(_ t: PropertyType) -> String {
        switch t {
        case .mixed: return "Mixed"
        case .link: return "Link"
        case .linkingObjects: return "LinkingObjects"
        case .backlink: return "Backlink"
        default: return SchemaFormats.swiftType(t)
        }
    }

    static func isNumeric(_ t: PropertyType) -> Bool { [.int, .float, .double, .decimal128].contains(t) }

    /// One value on one line, for a table cell. Strings keep their characters (the canvas shows newlines
    /// as ⏎); links are given as their label by the caller.
    public func cell(_ v: Value) -> CellText {
        switch v {
        case .null: return CellText("null", .null)
        case .bool(let b):
            return bools == .symbols ? CellText(b ? "✓" : "✗", b ? .boolTrue : .boolFalse)
                                     : CellText(b ? "true" : "false", b ? .boolTrue : .boolFalse)
        case .int(let i): return CellText(String(i), .number, rightAligned: true)
        case .float(let f): return CellText(ValueFormat.float(Double(f), text: "\(f)"), .number, rightAligned: true)
        case .double(let d): return CellText(ValueFormat.float(d, text: "\(d)"), .number, rightAligned: true)
        case .decimal128(let d): return CellText(d.description, .number, rightAligned: true)
        case .string(let s): return CellText(s, .string)
        case .data(let d): return CellText(ValueFormat.dataSummary(d), .data)
        case .date(let t): return CellText(ValueCodec.iso8601(t), .date)
        case .objectId(let o): return CellText(o.hexString, .string)
        case .uuid(let u): return CellText(u.uuidString.lowercased(), .string)
        case .link(let k): return CellText("#\(k.rawValue)", .link)
        case .typedLink(_, let k): return CellText("#\(k.rawValue)", .link)
        case .list(let l): return CellText("[\(l.count)]", .link)
        case .dictionary(let d): return CellText("{\(d.count)}", .link)
        }
    }

    /// The type of a mixed value, shown beside it in the object view.
    public static func mixedTypeName(_ v: Value) -> String {
        switch v {
        case .list(let l): return "List of \(l.count)"
        case .dictionary(let d): return "Dictionary of \(d.count)"
        case .typedLink: return "Link"
        default: return v.type.map { scalarTypeName($0) } ?? "null"
        }
    }

    static func float(_ d: Double, text: String) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        return text
    }

    /// `16 B 0a1b2c…`: the size, then the first bytes in hex.
    static func dataSummary(_ d: [UInt8]) -> String {
        let size = byteSize(d.count)
        if d.isEmpty { return size }
        return size + " " + d.prefix(24).map { hex2($0) }.joined()
    }

    /// `0 B`, `16 B`, `4.0 KiB`, `1.0 MiB`.
    public static func byteSize(_ n: Int) -> String {
        if n < 1024 { return "\(n) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var v = Double(n) / 1024
        var u = 0
        while v >= 1024 && u < units.count - 1 { v /= 1024; u += 1 }
        let tenths = Int((v * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[u])"
    }

    static func hex2(_ b: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }

    /// A hex dump: offset, 16 bytes in hex, the printable ASCII; at most `maxBytes`.
    public static func hexDump(_ d: [UInt8], maxBytes: Int = 256) -> [String] {
        var lines: [String] = []
        var off = 0
        while off < min(d.count, maxBytes) {
            let chunk = d[off..<min(off + 16, d.count)]
            var hex = chunk.map { hex2($0) }.joined(separator: " ")
            hex += String(repeating: " ", count: max(0, 16 * 3 - 1 - hex.count))
            let ascii = String(chunk.map { (0x20..<0x7F).contains($0) ? Character(Unicode.Scalar($0)) : "." })
            let o = String(off, radix: 16)
            lines.append(String(repeating: "0", count: max(0, 6 - o.count)) + o + "  " + hex + "  " + ascii)
            off += 16
        }
        if d.count > maxBytes { lines.append("… \(grouped(d.count - maxBytes)) more bytes") }
        return lines
    }

    /// `1,000,000`.
    public static func grouped(_ n: Int) -> String {
        let s = String(n.magnitude)
        var out = ""
        for (i, c) in s.enumerated() {
            if i > 0 && (s.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return n < 0 ? "-" + out : out
    }
}
