import Foundation
import RealmStorage

// Printing: every tree prints as query text that parses back to an equal tree.

extension Query: CustomStringConvertible {
    public var description: String {
        var s = predicate.description
        for o in ordering { s += " " + o.description }
        return s
    }
}

extension OrderingClause: CustomStringConvertible {
    public var description: String {
        switch self {
        case .sort(let keys): return "SORT(" + keys.map { "\($0.keyPath) \($0.ascending ? "ASC" : "DESC")" }.joined(separator: ", ") + ")"
        case .distinct(let paths): return "DISTINCT(" + paths.map(\.description).joined(separator: ", ") + ")"
        case .limit(let n, _): return "LIMIT(\(n))"
        }
    }
}

extension Predicate: CustomStringConvertible {
    public var description: String {
        switch self {
        case .constant(let b, _): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let ps):
            // A nested AND or an OR inside AND was parenthesized in the source (AND binds tighter, and chains
            // are flattened), so it is printed parenthesized.
            return ps.map { p -> String in
                switch p {
                case .and, .or: return "(\(p))"
                default: return p.description
                }
            }.joined(separator: " AND ")
        case .or(let ps):
            return ps.map { p -> String in
                if case .or = p { return "(\(p))" }
                return p.description
            }.joined(separator: " OR ")
        case .not(let p, _):
            switch p {
            case .and, .or: return "NOT (\(p))"
            default: return "NOT \(p)"
            }
        case .comparison(let c): return c.description
        }
    }
}

extension Comparison: CustomStringConvertible {
    public var description: String {
        var s = ""
        if let q = quantifier { s += q.rawValue + " " }
        s += lhs.description + " " + op.rawValue
        if !options.isEmpty {
            s += "[" + (options.contains(.caseInsensitive) ? "c" : "") + (options.contains(.diacriticInsensitive) ? "d" : "") + "]"
        }
        return s + " " + rhs.description
    }
}

extension Expression: CustomStringConvertible {
    public var description: String {
        switch self {
        case .keyPath(let k): return k.description
        case .literal(let l, _): return l.description
        case .argument(let n, _): return "$\(n)"
        case .list(let items, _): return "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .subqueryCount(let s, _): return "SUBQUERY(\(s.collection), $\(s.variable), \(s.predicate)).@count"
        case .object(let o, _): return "obj(\(Literal.quote(o.className)), \(o.primaryKey))"
        case .arithmetic(let op, let l, let r, _):
            // Parentheses where the tree differs from the precedence and left-to-right order of the text.
            func side(_ e: Expression, right: Bool) -> String {
                if case .arithmetic(let o, _, _, _) = e, o.precedence < op.precedence || (right && o.precedence == op.precedence) {
                    return "(\(e))"
                }
                return e.description
            }
            return "\(side(l, right: false)) \(op.rawValue) \(side(r, right: true))"
        }
    }
}

extension KeyPath: CustomStringConvertible {
    public var description: String {
        var names = ""
        for c in components {
            if c.isAll {
                names += "[*]"
            } else if let a = c.argument {
                names += "[$\(a)]"
            } else if let n = c.index {
                names += n == KeyPath.Component.lastIndex ? "[LAST]" : "[\(n)]"
            } else if let k = c.key {
                names += "['" + k.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "']"
            } else {
                names += (names.isEmpty ? "" : ".") + Query.escapedName(c.name)
            }
        }
        guard let v = variable else { return names }
        return names.isEmpty ? "$\(v)" : "$\(v).\(names)"
    }
}

extension Literal: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d):
            if d.isNaN { return "nan" }
            if d.isInfinite { return d < 0 ? "-inf" : "inf" }
            // Swift prints the shortest text that reads back as the same double.
            let s = "\(d)"
            return s.contains(".") || s.contains("e") ? s : s + ".0"
        case .decimal(let d):
            // Finite decimals print in a form the parser reads back as the same value.
            if d.isNaN { return "nan" }
            if d.isInfinite { return d.isNegative ? "-inf" : "inf" }
            let s = d.description
            return s.contains(".") || s.contains("E") ? s : s + ".0"
        case .string(let s): return Literal.quote(s)
        case .binary(let b): return "bin(B64\"\(Base64.encode(b))\")"
        case .date(let t): return "T\(t.seconds):\(t.nanoseconds)"
        case .objectId(let o): return "oid(\(o.hexString))"
        case .uuid(let u): return "uuid(\(u.uuidString.lowercased()))"
        }
    }

    /// A string literal with escapes, single-quoted unless `quote` is `"`.
    static func quote(_ s: String, with quote: Unicode.Scalar = "'") -> String {
        var out = String(quote)
        for u in s.unicodeScalars {
            switch u {
            case quote: out += "\\" + String(quote)
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if u.value < 0x20 || u.value == 0x7F {
                    out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + String(quote)
    }
}
