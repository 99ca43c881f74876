import RealmStorage
import RealmTools

/// One field of the object view: a property, or incoming links that no property declares.
public struct ObjectField: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case property(PropertySchema)
        case incoming(originClass: String, property: String, count: Int)
    }
    public var kind: Kind
    public var name: String
    public var typeName: String
}

/// One line of the object view.
public struct ObjectLine: Equatable, Sendable {
    /// The field this line belongs to.
    public var field: Int
    /// The first line of its field (the one that shows the name and type).
    public var isFirst: Bool
    public var text: String
    public var role: Role
}

extension BrowserData {
    /// The fields of an object: the primary key, the other properties in schema order, then its incoming
    /// links from properties no `LinkingObjects` declares (found with `allBacklinks`, so none is missed).
    public func fields(_ ref: ObjectRef) -> [ObjectField] {
        guard let cs = classSchema(ref.className) else { return [] }
        var out = (cs.properties.filter(\.isPrimaryKey) + cs.properties.filter { !$0.isPrimaryKey }).map {
            ObjectField(kind: .property($0), name: $0.name, typeName: ValueFormat.typeName($0))
        }
        let declared = Set(cs.properties.filter { $0.type == .linkingObjects }.map { "\($0.objectClassName ?? "").\($0.originProperty ?? "")" })
        for group in (try? incoming(ref)) ?? [] where !declared.contains("\(group.className).\(group.property)") {
            out.append(ObjectField(kind: .incoming(originClass: group.className, property: group.property, count: group.keys.count),
                                   name: "← \(group.className).\(group.property)", typeName: "incoming"))
        }
        return out
    }

    /// The object view's lines for `width` cells of value: every value whole, long strings wrapped, data as
    /// its size and a hex dump, lists with their first elements.
    public func objectLines(_ ref: ObjectRef, fields: [ObjectField], valueWidth: Int, format: ValueFormat) -> [ObjectLine] {
        let id = "\(ref.className) \(ref.key.rawValue) \(valueWidth) \(format.bools) \(fields.count)"
        if let c = objectLinesCache, c.id == id { return c.lines }
        let lines = makeObjectLines(ref, fields: fields, valueWidth: valueWidth, format: format)
        objectLinesCache = (id, lines)
        return lines
    }

    func makeObjectLines(_ ref: ObjectRef, fields: [ObjectField], valueWidth: Int, format: ValueFormat) -> [ObjectLine] {
        var out: [ObjectLine] = []
        let width = max(8, valueWidth)
        for (i, f) in fields.enumerated() {
            var lines: [(String, Role)]
            do {
                lines = try valueLines(ref, f, width: width, format: format)
            } catch {
                lines = [("⚠ \(error)", .statusError)]
            }
            if lines.isEmpty { lines = [("", .normal)] }
            for (n, l) in lines.enumerated() {
                for (m, part) in ObjectLayout.wrap(l.0, width: width).enumerated() {
                    out.append(ObjectLine(field: i, isFirst: n == 0 && m == 0, text: part, role: l.1))
                }
            }
        }
        return out
    }

    /// The lines of a list or dictionary nested in a mixed value, one per element, nested ones indented.
    func nestedLines(_ v: Value, indent: String, format: ValueFormat, limit: Int = 200) -> [(String, Role)] {
        var out: [(String, Role)] = []
        func add(_ name: String, _ e: Value, _ indent: String) {
            guard out.count < limit else { return }
            switch e {
            case .list(let l):
                out.append(("\(indent)\(name)list of \(l.count)", .list))
                for (i, x) in l.enumerated() { add("[\(i)] ", x, indent + "  ") }
            case .dictionary(let d):
                out.append(("\(indent)\(name)dictionary of \(d.count)", .list))
                for (k, x) in d { add("\(k): ", x, indent + "  ") }
            default:
                let c = mixedAwareCell(e, format)
                out.append(("\(indent)\(name)\(c.text)", c.role))
            }
        }
        switch v {
        case .list(let l): for (i, x) in l.enumerated() { add("[\(i)] ", x, indent) }
        case .dictionary(let d): for (k, x) in d { add("\(k): ", x, indent) }
        default: break
        }
        if out.count >= limit { out.append(("\(indent)… more", .null)) }
        return out
    }

    func valueLines(_ ref: ObjectRef, _ f: ObjectField, width: Int, format: ValueFormat) throws -> [(String, Role)] {
        switch f.kind {
        case .incoming(let c, let p, let n):
            let keys = try backlinks(ref, from: c, property: p)
            return [("\(n) \(c) object\(n == 1 ? "" : "s") link here (Enter opens them)", .list)]
                + keys.prefix(20).map { ("  " + label(ObjectRef(className: c, key: $0)), .link) }
                + (keys.count > 20 ? [("  … \(keys.count - 20) more", .null)] : [])
        case .property(let p):
            if p.type == .linkingObjects || ((p.isList || p.isSet) && p.type == .link) {
                let values = try collection(p.type == .linkingObjects ? .linkingObjects(owner: ref, property: p.name)
                                                                         : .list(owner: ref, property: p.name))
                let target = p.objectClassName ?? "?"
                var lines: [(String, Role)] = [("\(values.count) object\(values.count == 1 ? "" : "s") (Enter opens the \(p.isSet ? "set" : "list"))", .list)]
                for (i, v) in values.prefix(20).enumerated() {
                    if case .link(let k) = v {
                        lines.append(("  \(p.isSet ? "" : "[\(i)] ")\(target) \(label(ObjectRef(className: target, key: k)))", .link))
                    }
                }
                if values.count > 20 { lines.append(("  … \(values.count - 20) more", .null)) }
                return lines
            }
            if p.isDictionary {
                let d = try snapshot.dictionary(ref.key, handle(ref.className, p.name))
                var lines: [(String, Role)] = [("\(d.count) key\(d.count == 1 ? "" : "s") (Enter opens the dictionary)", .list)]
                for e in d.prefix(200) {
                    if case .link(let k) = e.value, let target = p.objectClassName {
                        lines.append(("  \(e.key): \(target) \(label(ObjectRef(className: target, key: k)))", .link))
                    } else {
                        let c = mixedAwareCell(e.value, format)
                        lines.append(("  \(e.key): \(c.text)", c.role))
                    }
                }
                if d.count > 200 { lines.append(("  … \(d.count - 200) more", .null)) }
                return lines
            }
            if p.isList || p.isSet {
                let values = try collection(.list(owner: ref, property: p.name))
                var lines: [(String, Role)] = [("\(values.count) element\(values.count == 1 ? "" : "s")\(p.isSet ? " (Enter opens the set)" : "")", .list)]
                for (i, v) in values.prefix(200).enumerated() {
                    let c = mixedAwareCell(v, format)
                    // A set has no positions: its elements are listed in its order, without an index.
                    lines.append((p.isSet ? "  \(c.text)" : "  [\(i)] \(c.text)", c.role))
                }
                if values.count > 200 { lines.append(("  … \(values.count - 200) more (Enter opens the list)", .null)) }
                return lines
            }
            let v = try value(ref, p.name)
            switch v {
            case .null: return [("null", .null)]
            case .string(let s):
                if s.isEmpty { return [("\"\" (empty)", .null)] }
                let paragraphs = s.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                return paragraphs.map { ($0, .string) }
            case .data(let d):
                return [("\(ValueFormat.grouped(d.count)) bytes", .data)] + ValueFormat.hexDump(d).map { ($0, .data) }
            case .link(let k):
                let target = p.objectClassName ?? "?"
                return [("\(target) \(label(ObjectRef(className: target, key: k)))  (Enter opens it)", .link)]
            case .list, .dictionary:
                return [("\(ValueFormat.mixedTypeName(v)) (Enter opens it)", .list)] + nestedLines(v, indent: "  ", format: format)
            default:
                let c = mixedAwareCell(v, format)
                if case .typedLink = v { return [("\(c.text)  (Link: Enter opens it)", c.role)] }
                if p.type == .mixed { return [("\(c.text)  (\(ValueFormat.mixedTypeName(v)))", c.role)] }
                return [(c.text, c.role)]
            }
        }
    }
}

/// Geometry of the object view.
public enum ObjectLayout {
    /// Where the type and the value columns start.
    public static func columns(_ fields: [ObjectField], width: Int) -> (typeX: Int, valueX: Int) {
        let nameW = min(max(fields.map { Canvas.width(of: $0.name) }.max() ?? 8, 8), 28)
        let typeW = min(max(fields.map { Canvas.width(of: $0.typeName) }.max() ?? 4, 4), 24)
        let typeX = 2 + nameW + 2
        var valueX = typeX + typeW + 2
        if width - valueX < 20 { valueX = max(typeX, width - 20) }
        return (typeX, valueX)
    }

    /// `s` cut into lines of at most `width` cells: at a space when there is one in the second half of the
    /// line, anywhere otherwise (text without spaces, such as Japanese); wide characters never split.
    public static func wrap(_ s: String, width: Int) -> [String] {
        guard width > 0 else { return [s] }
        var lines: [String] = []
        var line: [Character] = []
        var widths: [Int] = []
        var w = 0
        for g in s {
            let gw = Canvas.visible(g).width
            if w + gw > width {
                // Break after the last space if it leaves at least half a line.
                if g != " ", let space = line.lastIndex(of: " "), widths[..<space].reduce(0, +) >= width / 2 {
                    lines.append(String(line[...space]))
                    line = Array(line[(space + 1)...])
                    widths = Array(widths[(space + 1)...])
                    w = widths.reduce(0, +)
                } else {
                    lines.append(String(line))
                    line = []
                    widths = []
                    w = 0
                    if g == " " { continue }
                }
            }
            line.append(g)
            widths.append(gw)
            w += gw
        }
        lines.append(String(line))
        return lines
    }
}
