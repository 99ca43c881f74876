import Foundation
import RealmStorage

/// Where a file's bytes go, structure by structure (`info --detail`): the pages each class's clusters, tree
/// nodes, blobs, indexes and backlink trees take, how full those pages are, the columns' share of the clusters,
/// free pages, and the file's bytes past its pages. Read from one walk of every structure (`Database.verify`).
public struct SpaceReport {
    public struct Row: Equatable {
        public var label: String
        public var use: SpaceUse
    }

    public var fileBytes: Int
    public var pageBytes: Int
    /// Structures that occupy pages, most pages first.
    public var structures: [Row]
    /// Each class's column blocks inside its clusters (bytes only), largest first.
    public var columns: [Row]
    /// Problems the walk found (the figures then leave out what could not be read).
    public var problems: [String]

    public init(database db: Database) throws {
        let report = try ToolError.wrap { try db.verify() }
        let attrs = try? FileManager.default.attributesOfItem(atPath: db.path)  // an in-memory database has no file
        fileBytes = (attrs?[.size] as? Int) ?? 0
        pageBytes = Int(report.totalPages) * Database.bytesPerPage
        let rows = report.space.map { Row(label: $0.key, use: $0.value) }
        structures = rows.filter { !$0.label.hasSuffix(": column") }
            .sorted { ($0.use.pages, $0.label) > ($1.use.pages, $1.label) }
        columns = rows.filter { $0.label.hasSuffix(": column") }
            .map { Row(label: String($0.label.dropLast(": column".count)), use: $0.use) }
            .sorted { ($0.use.bytes, $0.label) > ($1.use.bytes, $1.label) }
        problems = report.problems
    }

    static func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

    static func percent(_ part: Int, of whole: Int) -> String {
        whole == 0 ? "-" : String(format: "%.1f %%", 100 * Double(part) / Double(whole))
    }

    public var text: String {
        var out = "space of \(Self.mib(fileBytes)) (\(fileBytes) bytes), \(pageBytes / Database.bytesPerPage) pages of \(Database.bytesPerPage) bytes\n\n"
        var table = [["structure", "pages", "size", "of file", "nodes", "data", "fill"]]
        for r in structures {
            let size = Int(r.use.pages) * Database.bytesPerPage
            table.append([r.label, "\(r.use.pages)", Self.mib(size), Self.percent(size, of: fileBytes), "\(r.use.nodes)",
                          r.label == "free pages" ? "-" : Self.mib(r.use.bytes),
                          r.label == "free pages" ? "-" : Self.percent(r.use.bytes, of: size)])
        }
        let past = fileBytes - pageBytes
        if past > 0 { table.append(["past the last page (log, preallocation)", "-", Self.mib(past), Self.percent(past, of: fileBytes), "-", "-", "-"]) }
        out += Self.render(table)
        if !columns.isEmpty {
            out += "\ncolumns inside the clusters\n\n"
            var cols = [["column", "bytes", "size", "of file"]]
            for c in columns { cols.append([c.label, "\(c.use.bytes)", Self.mib(c.use.bytes), Self.percent(c.use.bytes, of: fileBytes)]) }
            out += Self.render(cols)
        }
        if !problems.isEmpty {
            out += "\n\(problems.count) problem(s) found while walking the file (run `verify`); the figures leave out what could not be read\n"
        }
        return out
    }

    /// Columns padded to their widest cell, numbers right-aligned.
    static func render(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        var widths = Array(repeating: 0, count: first.count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        return rows.map { r in
            r.enumerated().map { i, c in
                let pad = String(repeating: " ", count: widths[i] - c.count)
                return i == 0 ? c + pad : pad + c
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + "\n"
    }
}
