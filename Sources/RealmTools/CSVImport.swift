import Foundation
import RealmStorage

/// Imports CSV files (RFC 4180), one per class, in one write transaction: on any error nothing is written, and
/// the error names the file, the line (and record) and the column.
///
/// A file's first record names the properties, one per column, in any order; a property without a column is
/// null or takes its default, as in a JSON import. Each cell is read in the form `export --format csv` writes
/// (see `DataExport.writeCSV`): an empty field is null (in a required string or data property, empty) and
/// `""` the empty string (or empty data); strings, dates, data (base64), objectId, uuid and decimal128 as
/// their JSON strings without quotes; numbers and `true`/`false` as in JSON (`NaN`, `Infinity`, `-Infinity` for floats and
/// doubles); a link as the target's primary key, or as JSON (`{"$class": "Dog", "$index": 3}`) for a
/// target without one; an embedded object, a list, set, dictionary or mixed value as its JSON. The objects
/// then go through `DataImport`, so links between the files resolve as in a JSON document.
public struct CSVImport {
    /// A CSV file and the class its records are objects of.
    public struct Source: Equatable, Sendable {
        public var path: String
        public var className: String

        public init(path: String, className: String) {
            self.path = path
            self.className = className
        }
    }

    let sources: [Source]
    let schema: SchemaFile?
    var progress: ((Int, Int) -> Void)?

    public init(sources: [Source], schema: SchemaFile?, progress: ((Int, Int) -> Void)? = nil) {
        self.sources = sources
        self.schema = schema
        self.progress = progress
    }

    /// The files of `path`: every `*.csv` of a directory, each of the class its name says (as `export --format
    /// csv` names them), or one file, of `className` or else of the class its name says.
    public static func sources(at path: String, className: String?) throws -> [Source] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ToolError.io(path: path, message: "no such file or directory")
        }
        func classOf(_ name: String) -> String {
            let base = (name as NSString).lastPathComponent
            return base.lowercased().hasSuffix(".csv") ? String(base.dropLast(4)) : base
        }
        guard isDirectory.boolValue else { return [Source(path: path, className: className ?? classOf(path))] }
        if className != nil {
            throw ToolError.invalidArgument("--class names the class of one CSV file; the files of a directory are named after their classes")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.lowercased().hasSuffix(".csv") }.sorted()
        } catch {
            throw ToolError.io(path: path, message: "cannot list the directory")
        }
        guard !names.isEmpty else { throw ToolError.io(path: path, message: "no .csv files in the directory") }
        return names.map { Source(path: (path as NSString).appendingPathComponent($0), className: classOf($0)) }
    }

    /// One file, read and split into records.
    struct Table {
        let source: Source
        let header: [String]
        let headerLine: Int
        let records: [[CSVField]]
        /// The line each record starts on.
        let lines: [Int]
    }

    /// Reads every file, then imports them all into `db` in one transaction.
    public func run(into db: Database) throws -> DataImport.Report {
        // Every file is read and split first: a syntax error anywhere opens no transaction.
        var tables: [Table] = []
        var seen: [String: String] = [:]
        for s in sources {
            if let other = seen[s.className] {
                throw ToolError.invalidArgument("\(other) and \(s.path) are both of class '\(s.className)'")
            }
            seen[s.className] = s.path
            tables.append(try Self.read(s))
        }
        var byClass: [String: Table] = [:]
        for t in tables { byClass[t.source.className] = t }
        var importer = DataImport(file: sources.first?.path ?? "", schema: schema, progress: progress)
        importer.place = { className, i, e in
            guard let t = byClass[className], i >= 0, i < t.lines.count else { return e }
            switch e {
            case .data(_, let c, _, let p, let m):
                // An error inside an embedded or nested object names that object's class and property.
                if c == className { return .csv(file: t.source.path, line: t.lines[i], record: i + 1, column: p, message: m) }
                return .csv(file: t.source.path, line: t.lines[i], record: i + 1, column: nil, message: "\(c)\(p.map { ".\($0)" } ?? ""): \(m)")
            case .storage(let se):
                return .csv(file: t.source.path, line: t.lines[i], record: i + 1, column: nil, message: se.description)
            default:
                return e
            }
        }
        return try db.write { tx in
            var report = DataImport.Report()
            report.classesCreated = try importer.createClasses(tx)
            var classes: [(String, JSONValue)] = []
            for t in tables { classes.append((t.source.className, .array(try Self.objects(t, tx, hasSchemaFile: schema != nil)))) }
            try importer.importObjects(classes, tx, &report)
            return report
        }
    }

    /// The records of one file, each with as many fields as its header.
    static func read(_ source: Source) throws -> Table {
        guard let data = FileManager.default.contents(atPath: source.path) else {
            throw ToolError.io(path: source.path, message: "cannot read the file (missing or not readable)")
        }
        var reader = CSVReader([UInt8](data))
        do {
            guard let first = try reader.next() else {
                throw ToolError.csv(file: source.path, line: 1, record: nil, column: nil,
                                    message: "the file is empty: its first line names the properties, one per column")
            }
            let header = first.fields
            var records: [[CSVField]] = []
            var lines: [Int] = []
            while let (fields, line) = try reader.next().map({ ($0.fields, $0.line) }) {
                guard fields.count == header.count else {
                    throw ToolError.csv(file: source.path, line: line, record: records.count + 1, column: nil,
                                        message: "\(fields.count) field\(fields.count == 1 ? "" : "s") where the header has \(header.count)"
                                            + (fields.count == 1 && fields[0].isNull ? " (an empty line)" : ""))
                }
                records.append(fields)
                lines.append(line)
            }
            return Table(source: source, header: header.map(\.text), headerLine: first.line, records: records, lines: lines)
        } catch let e as CSVSyntaxError {
            throw ToolError.csv(file: source.path, line: e.line, record: nil, column: nil, message: "field \(e.field): \(e.message)")
        }
    }

    /// The records of a file as JSON objects for `DataImport`, each cell converted by its property's type.
    static func objects(_ t: Table, _ tx: WriteTransaction, hasSchemaFile: Bool) throws -> [JSONValue] {
        let file = t.source.path, className = t.source.className
        guard let cs = tx.classSchema(className) else {
            let known = tx.schema.map(\.name).joined(separator: ", ")
            throw ToolError.data(file: file, className: className, index: nil, property: nil,
                                 message: "no such class in the database\(hasSchemaFile ? "" : " (give --schema to create it)") — it has: \(known.isEmpty ? "no classes" : known)")
        }
        var properties: [PropertySchema] = []
        for (n, name) in t.header.enumerated() {
            func fail(_ m: String) -> ToolError { .csv(file: file, line: t.headerLine, record: nil, column: name, message: m) }
            if name.isEmpty { throw ToolError.csv(file: file, line: t.headerLine, record: nil, column: nil, message: "column \(n + 1) has no name") }
            if t.header[..<n].contains(name) { throw fail("a second column of the same name") }
            guard let p = cs.property(named: name) else {
                let near = SchemaCompare.nearest(name, cs.properties.filter { $0.type != .linkingObjects }.map(\.name))
                throw fail("\(className) has no such property\(near.map { " (did you mean '\($0)'?)" } ?? "")")
            }
            if p.type == .linkingObjects { throw fail("linking objects are computed and cannot be imported") }
            properties.append(p)
        }
        var out: [JSONValue] = []
        out.reserveCapacity(t.records.count)
        for (r, fields) in t.records.enumerated() {
            var members: [(String, JSONValue)] = []
            members.reserveCapacity(fields.count)
            for (f, p) in zip(fields, properties) {
                do {
                    members.append((p.name, try cell(f, p, tx)))
                } catch {
                    throw ToolError.csv(file: file, line: t.lines[r], record: r + 1, column: p.name, message: error.message)
                }
            }
            out.append(.object(members))
        }
        return out
    }

    /// A cell as the JSON value a data file holds for `p`.
    static func cell(_ f: CSVField, _ p: PropertySchema, _ tx: WriteTransaction) throws(ValueError) -> JSONValue {
        if f.isNull {
            // A required string or data cannot be null: its empty field is empty, as spreadsheets write it.
            if (p.type == .string || p.type == .data) && !p.isOptional && !p.isCollection { return .string("") }
            return .null
        }
        if p.isCollection || p.type == .mixed {
            return try json(f.text, p.isDictionary ? "a dictionary" : p.isSet ? "a set" : p.isList ? "a list"
                                : "a mixed value (a string in it is quoted: \"text\")")
        }
        if p.type == .link {
            // A link by primary key is the key in its own cell form; other links and embedded objects are JSON.
            let ts = tx.classSchema(p.objectClassName!)
            if let ts, !ts.isEmbedded, let pk = ts.properties.first(where: \.isPrimaryKey) { return try scalar(f.text, pk.type) }
            return try json(f.text, ts?.isEmbedded == true ? "an embedded object" : "a link")
        }
        return try scalar(f.text, p.type)
    }

    /// A cell of a primitive type; the value itself is checked by `ValueCodec` after.
    static func scalar(_ text: String, _ type: PropertyType) throws(ValueError) -> JSONValue {
        switch type {
        case .bool:
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: throw ValueError("expected true or false")
            }
        case .int:
            guard Int64(text) != nil else { throw ValueError("expected an integer in -2^63 ... 2^63-1") }
            return .number(text)
        case .float, .double:
            if text == "NaN" || text == "Infinity" || text == "-Infinity" { return .string(text) }
            guard text.first != "+", !text.contains(where: \.isWhitespace), Double(text) != nil else {
                throw ValueError("expected a number (or NaN, Infinity, -Infinity)")
            }
            return .number(text)
        default:
            return .string(text)
        }
    }

    /// A cell holding JSON.
    static func json(_ text: String, _ what: String) throws(ValueError) -> JSONValue {
        do {
            return try JSONParser.parse(text)
        } catch let e as JSONSyntaxError {
            throw ValueError("\(what) is written as JSON: \(e.message) at character \(e.column)\(e.line > 1 ? " of line \(e.line) of the cell" : "")")
        } catch {
            throw ValueError("\(what) is written as JSON: \(error)")
        }
    }
}
