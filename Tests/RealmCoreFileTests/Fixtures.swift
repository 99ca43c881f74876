import Foundation
@testable import RealmCoreFile
import Testing

/// The real Realm Core files of `Fixtures/` beside this file (copied unmodified from realm-core's and
/// realm-java's tests, Apache-2.0: `Fixtures/NOTICE`; `REALM_CORE_FIXTURES` names another directory) and the
/// oracle in their README: the inventory (§2) and the tables and row counts (§4) of every file.
enum Fixtures {
    static let directory: String = {
        if let dir = ProcessInfo.processInfo.environment["REALM_CORE_FIXTURES"] { return dir }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path
    }()

    static func path(_ name: String) -> String { directory + "/" + name }

    /// Every `.realm` file, as `core/NAME.realm` / `java/NAME.realm`.
    static let all: [String] = {
        var names: [String] = []
        for sub in ["core", "java"] {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + sub)) ?? []  // (missing: the test below fails on the count)
            names += files.filter { $0.hasSuffix(".realm") }.map { sub + "/" + $0 }
        }
        return names.sorted()
    }()

    /// The 64-byte key of an encrypted fixture (README §1).
    static func key(_ name: String) -> [UInt8]? {
        if name.contains("test_shared_decrypt_") { return Array("1234567890123456789012345678901123456789012345678901234567890123".utf8) }
        if name.contains("9_to_10_encrypted") { return Array(String(repeating: "abcdefgh", count: 8).utf8) }
        if name.hasPrefix("java/") && name.contains("-encrypted") { return [UInt8](repeating: 1, count: 64) }
        return nil
    }

    struct Inventory {
        var format: Int
        var streaming: Bool
        var encrypted: Bool
    }

    struct Tables {
        /// (table name, rows, "embedded"/"asymmetric"/"") in file order; nil for an expected error.
        var tables: [(name: String, rows: Int, kind: String)]?
    }

    static let readme: String = (try? String(contentsOfFile: directory + "/README.md", encoding: .utf8)) ?? ""  // (missing: the tests fail on it)

    /// README §2: `| file | source | bytes | sha256 | fmt fmt flags | **format** | form | enc |`.
    static let inventory: [String: Inventory] = {
        var result: [String: Inventory] = [:]
        for line in readme.split(separator: "\n") where line.hasPrefix("| `core/") || line.hasPrefix("| `java/") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 8, cells[0].hasSuffix(".realm`"),
                  let format = Int(cells[5].replacingOccurrences(of: "*", with: "")) else { continue }
            result[String(cells[0].dropFirst().dropLast())] = Inventory(format: format, streaming: cells[6] == "streaming", encrypted: cells[7] == "yes")
        }
        return result
    }()

    /// README §4: `core/NAME.realm | top size N | table:rows, …` (or `ERROR: …`, `(no tables)`).
    static let observed: [String: Tables] = {
        var result: [String: Tables] = [:]
        guard let start = readme.range(of: "## 4. Observed tables and row counts") else { return result }
        for line in readme[start.upperBound...].split(separator: "\n") {
            guard line.hasPrefix("core/") || line.hasPrefix("java/") else {
                if line.hasPrefix("## ") { break }
                continue
            }
            let parts = line.components(separatedBy: " | ")
            let name = parts[0]
            if parts.count == 2 && parts[1].hasPrefix("ERROR") {
                result[name] = Tables(tables: nil)
                continue
            }
            guard parts.count == 3 else { continue }
            var tables: [(String, Int, String)] = []
            for entry in parts[2].components(separatedBy: ", ") where !entry.hasPrefix("(") {
                var words = entry.split(separator: " ").map(String.init)
                var kind = ""
                if let last = words.last, last == "embedded" || last == "asymmetric" { kind = last; words.removeLast() }
                let text = words.joined(separator: " ")
                guard let colon = text.lastIndex(of: ":"), let rows = Int(text[text.index(after: colon)...]) else { continue }
                tables.append((String(text[..<colon]), rows, kind))
            }
            result[name] = Tables(tables: tables)
        }
        return result
    }()

    static func open(_ name: String) throws -> RealmCoreFile {
        try RealmCoreFile(path: path(name), key: key(name))
    }
}

extension RealmCoreFile {
    /// Every class and system table, in file order.
    var allTables: [CoreClass] { (classes + systemTables).sorted { $0.table < $1.table } }

    /// Every value of `property` of `className`, by position.
    func column(_ className: String, _ property: String) throws -> [CoreValue] {
        let cls = try #require(self.class(named: className), "no class \(className)")
        let prop = try #require(cls.property(named: property), "no property \(className).\(property)")
        return try (0..<cls.objectCount).map { try value(of: cls, at: $0, property: prop) }
    }

    /// Reads every value and every backlink of every object (at most `limit` per table): the reader's whole path.
    func readEverything(limit: Int = .max) throws -> Int {
        var n = 0
        for cls in classes + systemTables {
            for p in 0..<min(cls.objectCount, limit) {
                n += try object(of: cls, at: p).values.count
                n += try backlinks(of: cls, at: p).count
            }
        }
        return n
    }
}

extension CoreValue {
    var string: String? { if case let .string(s) = self { s } else { nil } }
    var int: Int64? { if case let .int(i) = self { i } else { nil } }
    /// The links in this value and in the collections it holds.
    var links: [CoreLink] {
        switch self {
        case let .link(l): [l]
        case let .list(v), let .set(v): v.flatMap(\.links)
        case let .dictionary(entries): entries.flatMap(\.value.links)
        default: []
        }
    }

    var list: [CoreValue]? {
        switch self {
        case let .list(v), let .set(v): v
        default: nil
        }
    }
}
