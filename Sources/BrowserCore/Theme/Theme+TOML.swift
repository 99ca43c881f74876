import Foundation
internal import TOMLKit

/// A theme file that cannot be used: names the file, the line and the key.
public struct ThemeError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int?
    public var key: String?
    public var message: String

    public var description: String {
        var s = file
        if let line { s += ":\(line)" }
        s += ": "
        if let key { s += "\(key): " }
        return s + message
    }
}

extension Theme {
    /// The built-in themes, in the order `--theme` lists them.
    public static let builtinNames = BuiltinThemes.all.map(\.name)

    /// The default theme (dark).
    public static var dark: Theme { try! builtin("dark")! }
    public static var light: Theme { try! builtin("light")! }

    /// A built-in theme by name, or nil.
    public static func builtin(_ name: String) throws -> Theme? {
        guard let entry = BuiltinThemes.all.first(where: { $0.name == name }) else { return nil }
        return try Theme.parse(entry.toml, file: "themes/\(entry.name).toml")
    }

    /// Finds a theme: a path to a `.toml` file, a file `NAME.toml` in `searchDirectories`, or a built-in name.
    public static func load(_ nameOrPath: String, searchDirectories: [String]) throws -> Theme {
        let fm = FileManager.default
        if nameOrPath.hasSuffix(".toml") || nameOrPath.contains("/") {
            guard let data = fm.contents(atPath: nameOrPath) else {
                throw ThemeError(file: nameOrPath, message: "cannot read the theme file")
            }
            return try parse(String(decoding: data, as: UTF8.self), file: nameOrPath)
        }
        for dir in searchDirectories {
            let path = "\(dir)/\(nameOrPath).toml"
            if let data = fm.contents(atPath: path) { return try parse(String(decoding: data, as: UTF8.self), file: path) }
        }
        if let t = try builtin(nameOrPath) { return t }
        throw ThemeError(file: nameOrPath, message: "no theme named '\(nameOrPath)' (built in: \(builtinNames.joined(separator: ", "))"
                         + (searchDirectories.isEmpty ? "" : "; also looked in \(searchDirectories.joined(separator: ", "))") + ")")
    }

    /// Parses a theme file:
    ///
    /// ```toml
    /// name = "dark"
    /// bools = "symbols"          # or "words"
    /// [styles]
    /// normal = { fg = "default", bg = "default" }
    /// header = { fg = "#88c0d0", bold = true }
    /// ```
    ///
    /// Colours are `"default"`, a name (`"red"`, `"bright-blue"`), `"#rrggbb"` or a number 0-255. Every
    /// mistake is reported with the file, line and key.
    public static func parse(_ text: String, file: String) throws -> Theme {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let e as TOMLParseError {
            throw ThemeError(file: file, line: e.source.begin.line, message: "TOML syntax: \(e.description) (column \(e.source.begin.column))")
        }
        let lines = ThemeLines(text)
        func fail(_ key: String, _ message: String) -> ThemeError {
            ThemeError(file: file, line: lines.line(of: key), key: key, message: message)
        }
        var theme = Theme(name: (file as NSString).lastPathComponent.replacingOccurrences(of: ".toml", with: ""), styles: [:])
        for key in table.keys {
            let value = table[key]!
            switch key {
            case "name":
                guard let s = value.string else { throw fail(key, "expected a string") }
                theme.name = s
            case "bools":
                guard let s = value.string, let b = BoolStyle(rawValue: s) else {
                    throw fail(key, "expected \"symbols\" (✓/✗) or \"words\" (true/false)")
                }
                theme.bools = b
            case "monochrome":
                guard let b = value.bool else { throw fail(key, "expected true or false") }
                theme.monochrome = b
            case "styles":
                guard let styles = value.table else { throw fail(key, "expected a table of roles ([styles])") }
                for roleName in styles.keys {
                    let path = "styles.\(roleName)"
                    guard let role = Role(rawValue: roleName) else {
                        throw fail(path, "unknown role (roles: \(Role.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    guard let st = styles[roleName]!.table else {
                        throw fail(path, "expected a table such as { fg = \"#ffffff\", bold = true }")
                    }
                    theme.styles[role] = try parseStyle(st, path: path, fail: fail)
                }
            default:
                throw fail(key, "unknown key (expected name, bools, monochrome or [styles])")
            }
        }
        guard theme.styles[.normal] != nil else {
            throw ThemeError(file: file, line: nil, key: "styles.normal", message: "missing: every theme sets the normal style")
        }
        return theme
    }

    static func parseStyle(_ t: TOMLTable, path: String, fail: (String, String) -> ThemeError) throws -> Style {
        var s = Style()
        for key in t.keys {
            let v = t[key]!
            let p = "\(path).\(key)"
            switch key {
            case "fg", "bg":
                guard let c = color(v) else {
                    throw fail(p, "not a colour (use \"default\", a name such as \"blue\" or \"bright-blue\", \"#rrggbb\", or a number 0-255)")
                }
                if key == "fg" { s.foreground = c } else { s.background = c }
            case "bold", "dim", "italic", "underline", "reverse":
                guard let b = v.bool else { throw fail(p, "expected true or false") }
                switch key {
                case "bold": s.bold = b
                case "dim": s.dim = b
                case "italic": s.italic = b
                case "underline": s.underline = b
                default: s.reverse = b
                }
            default:
                throw fail(p, "unknown attribute (expected fg, bg, bold, dim, italic, underline, reverse)")
            }
        }
        return s
    }

    static let colorNames = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    static func color(_ v: TOMLValueConvertible) -> Color? {
        if let i = v.int { return (0...255).contains(i) ? .indexed(UInt8(i)) : nil }
        guard let s = v.string?.lowercased() else { return nil }
        if s == "default" { return .default }
        if let i = colorNames.firstIndex(of: s) { return .indexed(UInt8(i)) }
        if s.hasPrefix("bright-"), let i = colorNames.firstIndex(of: String(s.dropFirst(7))) { return .indexed(UInt8(i + 8)) }
        if s.hasPrefix("#"), s.count == 7, let n = UInt32(s.dropFirst(), radix: 16) {
            return .rgb(UInt8(n >> 16), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF))
        }
        return nil
    }
}

/// Finds the line of a key in a theme file, for messages (TOMLKit reports positions for syntax errors only).
struct ThemeLines {
    let lines: [Substring]
    init(_ text: String) { lines = text.split(separator: "\n", omittingEmptySubsequences: false) }

    /// The line of `styles.header.fg`: the `header` entry inside `[styles]` (or a `[styles.header]` table),
    /// then `fg` on or after it.
    func line(of dotted: String) -> Int? {
        let parts = dotted.split(separator: ".").map(String.init)
        var section = ""
        var best: Int?
        var matched = 0
        for (i, raw) in lines.enumerated() {
            let l = raw.trimmingCharacters(in: .whitespaces)
            if l.hasPrefix("[") {
                section = l.trimmingCharacters(in: CharacterSet(charactersIn: "[] "))
                let sp = section.split(separator: ".").map(String.init)
                if sp.count <= parts.count && Array(parts.prefix(sp.count)) == sp && sp.count > matched {
                    matched = sp.count
                    best = i + 1
                }
                continue
            }
            let sp = section.isEmpty ? [] : section.split(separator: ".").map(String.init)
            guard sp.count <= parts.count, Array(parts.prefix(sp.count)) == sp else { continue }
            let rest = parts.dropFirst(sp.count)
            guard let first = rest.first else { continue }
            let keyPart = l.split(separator: "=", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if keyPart == first || keyPart == "\"\(first)\"" {
                // The remaining parts, if any, are inline on this line.
                if rest.count == 1 || rest.dropFirst().allSatisfy({ l.contains($0) }) { return i + 1 }
                best = i + 1
            }
        }
        return best
    }
}
