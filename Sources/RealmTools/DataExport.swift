import Foundation
import RealmStorage

/// Writes text to a file descriptor in large chunks.
public final class TextSink {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private let closeWhenDone: Bool

    public init(fd: Int32) {
        self.fd = fd
        closeWhenDone = false
        buffer.reserveCapacity(1 << 16)
    }

    /// A new file (replacing an existing one).
    public init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw ToolError.io(path: path, message: String(cString: strerror(errno))) }
        self.fd = fd
        closeWhenDone = true
    }

    public func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    public func flush() {
        var off = 0
        while off < buffer.count {
            let n = buffer[off...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            off += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit {
        flush()
        if closeWhenDone { close(fd) }
    }
}

/// Objects as JSON and CSV, in the data-file encodings (see `ValueCodec`). An export keeps the keys of the
/// classes it has numbered links into, so one export is used by one thread at a time.
public struct DataExport {
    let snapshot: any ObjectReader
    /// For classes without a primary key: each exported class's keys in key order, so a link can say `$index`
    /// (its position, found by binary search). Read the first time a link into the class is written: a query
    /// printing a few objects of a class of millions reads none of them.
    private let positions = PositionCache()
    /// Classes written in this document (links to others use `$key`).
    private let exported: Set<String>

    public init(snapshot: any ObjectReader, classes: [String]) throws {
        self.snapshot = snapshot
        exported = Set(classes)
    }

    private final class PositionCache {
        var keys: [String: [ObjectKey]] = [:]
        /// For a reader whose keys did not come in ascending order: their positions by key.
        var unordered: [String: [ObjectKey: Int]] = [:]
    }

    /// The position of `k` among the objects of `target` (an exported class without a primary key), nil when
    /// it is not one of them.
    func position(of k: ObjectKey, in target: String) throws -> Int? {
        guard exported.contains(target) else { return nil }
        let keys: [ObjectKey]
        if let known = positions.keys[target] {
            keys = known
        } else {
            var all: [ObjectKey] = []
            try ToolError.wrap { try snapshot.forEachKey(snapshot.table(target)) { all.append($0); return true } }
            if zip(all, all.dropFirst()).contains(where: { $0 >= $1 }) {
                positions.unordered[target] = Dictionary(all.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            }
            positions.keys[target] = all
            keys = all
        }
        if let map = positions.unordered[target] { return map[k] }
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid].rawValue < k.rawValue { lo = mid + 1 } else { hi = mid }
        }
        return lo < keys.count && keys[lo] == k ? lo : nil
    }

    /// For tests: the classes whose keys have been read to number links.
    var classesNumberedForTesting: Set<String> { Set(positions.keys.keys) }

    /// One object as a JSON object: every stored property in schema order, backlinks left out.
    public func object(_ key: ObjectKey, _ cs: ClassSchema, _ handles: [PropertyHandle]) throws -> JSONValue {
        var members: [(String, JSONValue)] = []
        for (p, h) in zip(cs.properties, handles) where p.type != .linkingObjects {
            if p.isDictionary {
                let d = try ToolError.wrap { try snapshot.dictionary(key, h) }
                members.append((p.name, .object(try d.map { ($0.key, try element($0.value, p)) })))
            } else if p.isList || p.isSet {
                let values = try ToolError.wrap { try snapshot.list(key, h) }
                members.append((p.name, .array(try values.map { try element($0, p) })))
            } else {
                let v = try ToolError.wrap { try snapshot.value(key, h) }
                members.append((p.name, try element(v, p)))
            }
        }
        return .object(members)
    }

    private func element(_ v: Value, _ p: PropertySchema) throws -> JSONValue {
        if p.type == .mixed { return try mixed(v) }
        guard case .link(let k) = v else { return ValueCodec.json(v, type: p.type) }
        if let target = snapshot.classSchema(p.objectClassName!), target.isEmbedded {
            // An embedded object has no identity of its own: it is written inside its parent.
            let t = try ToolError.wrap { try snapshot.table(target.name) }
            let hs = try ToolError.wrap { try target.properties.map { try snapshot.property(t, $0.name) } }
            return try object(k, target, hs)
        }
        return try link(k, p.objectClassName!)
    }

    /// A mixed value: as `ValueCodec` writes it, with typed links as `{"$class": …}` plus the target's primary
    /// key (`"$pk"`) or position, and nested lists and dictionaries as arrays and objects of mixed values.
    func mixed(_ v: Value) throws -> JSONValue {
        switch v {
        case .typedLink(let c, let k):
            guard let name = snapshot.className(classID: c) else {
                throw ToolError.invalidArgument("a mixed value links to class \(c), which the file does not have")
            }
            var members: [(String, JSONValue)] = [("$class", .string(name))]
            switch try link(k, name) {
            case .object(let inner): members += inner.filter { $0.0 != "$class" }
            case let pk: members.append(("$pk", pk))
            }
            return .object(members)
        case .list(let l): return .array(try l.map { try mixed($0) })
        case .dictionary(let d): return .object(try d.map { ($0.key, try mixed($0.value)) })
        default: return ValueCodec.json(v, type: .mixed)
        }
    }

    /// A link: the target's primary key, or `{"$class", "$index"}` / `{"$class", "$key"}` without one.
    public func link(_ k: ObjectKey, _ target: String) throws -> JSONValue {
        if let ts = snapshot.classSchema(target), let pk = ts.properties.first(where: \.isPrimaryKey) {
            let t = try ToolError.wrap { try snapshot.table(target) }
            let v = try ToolError.wrap { try snapshot.value(k, snapshot.property(t, pk.name)) }
            return ValueCodec.json(v, type: pk.type)
        }
        if let i = try position(of: k, in: target) { return .object([("$class", .string(target)), ("$index", .int(Int64(i)))]) }
        return .object([("$class", .string(target)), ("$key", .number(String(k.rawValue)))])
    }

    func handles(_ cs: ClassSchema) throws -> [PropertyHandle] {
        try ToolError.wrap {
            let t = try snapshot.table(cs.name)
            return try cs.properties.map { try snapshot.property(t, $0.name) }
        }
    }

    /// The whole document `{"Class": [ ... ], ...}`, streamed; `progress` gets (objects written, total).
    public func writeJSON(classes: [String], to sink: TextSink, progress: ((Int, Int) -> Void)? = nil) throws {
        let total = try classes.reduce(0) { n, c in n + (try ToolError.wrap { try snapshot.count(c) }) }
        var done = 0
        sink.write("{")
        for (ci, c) in classes.enumerated() {
            guard let cs = snapshot.classSchema(c) else { throw ToolError.invalidArgument("no class named '\(c)'") }
            let hs = try handles(cs)
            sink.write(ci == 0 ? "\n" : ",\n")
            var name = ""
            JSONWriter.quote(c, into: &name)
            sink.write("  \(name): [")
            var first = true
            try ToolError.wrap {
                try snapshot.forEachKey(snapshot.table(c)) { k in
                    var out = first ? "\n    " : ",\n    "
                    first = false
                    JSONWriter.emit(try object(k, cs, hs), indent: 2, pretty: true, into: &out)
                    sink.write(out)
                    done += 1
                    if done % 4096 == 0 { progress?(done, total) }
                    return true
                }
            }
            sink.write(first ? "]" : "\n  ]")
        }
        sink.write(classes.isEmpty ? "}\n" : "\n}\n")
        sink.flush()
        progress?(total, total)
    }

    /// One class as CSV (RFC 4180): a header of property names, one row per object, CRLF after each. Null is
    /// an empty field, an empty string `""`; other strings, dates, data, objectIds, uuids and decimals are their
    /// JSON strings without the quotes (empty data as `""`), numbers and booleans their JSON; a link is the
    /// target's primary key, or `{"$class": C, "$index": i}` as JSON; an embedded object, a list, set,
    /// dictionary or mixed value is its JSON. A field holding a comma, a quote or a line break (or an empty
    /// string) is quoted, quotes written twice. `CSVImport` reads this form back.
    public func writeCSV(className: String, to sink: TextSink) throws {
        var keys: [ObjectKey] = []
        try ToolError.wrap { try snapshot.forEachKey(snapshot.table(className)) { keys.append($0); return true } }
        try writeCSV(className: className, keys: keys, to: sink)
    }

    /// The objects `keys` of a class as CSV. `progress` is told every 256 objects how many are written (it
    /// may throw to stop the export).
    public func writeCSV(className: String, keys: [ObjectKey], to sink: TextSink, progress: ((Int) throws -> Void)? = nil) throws {
        guard let cs = snapshot.classSchema(className) else { throw ToolError.invalidArgument("no class named '\(className)'") }
        let props = cs.properties.filter { $0.type != .linkingObjects }
        let hs = try handles(ClassSchema(name: cs.name, properties: props))
        sink.write(props.map { DataExport.csvField($0.name, forceQuote: false) }.joined(separator: ",") + "\r\n")
        try ToolError.wrap {
            for (n, k) in keys.enumerated() {
                if n & 255 == 255 {
                    snapshot.releaseDecryptedPagesIfOverBudget()
                    try progress?(n)
                }
                var fields: [String] = []
                for (p, h) in zip(props, hs) {
                    if p.isDictionary {
                        let d = try snapshot.dictionary(k, h)
                        fields.append(DataExport.csvField(JSONWriter.write(.object(try d.map { ($0.key, try element($0.value, p)) }), pretty: false),
                                                          forceQuote: false))
                        continue
                    }
                    if p.isList || p.isSet {
                        let values = try snapshot.list(k, h)
                        fields.append(DataExport.csvField(JSONWriter.write(.array(try values.map { try element($0, p) }), pretty: false), forceQuote: false))
                        continue
                    }
                    let v = try snapshot.value(k, h)
                    switch v {
                    case .null: fields.append("")
                    case _ where p.type == .mixed:
                        // Its JSON, as in a JSON export: a string, a number and a tagged value stay apart.
                        fields.append(DataExport.csvField(JSONWriter.write(try mixed(v), pretty: false), forceQuote: false))
                    case .string(let s): fields.append(DataExport.csvField(s, forceQuote: s.isEmpty))
                    case .link:
                        // The target's primary key, `{"$class", "$index"}`, or an embedded object's JSON.
                        let j = try element(v, p)
                        if case .string(let s) = j { fields.append(DataExport.csvField(s, forceQuote: s.isEmpty)) } else {
                            fields.append(DataExport.csvField(JSONWriter.write(j, pretty: false), forceQuote: false))
                        }
                    default:
                        let j = ValueCodec.json(v, type: p.type)
                        // Empty data (an empty base64 string) is quoted as the empty string is, apart from null.
                        if case .string(let s) = j { fields.append(DataExport.csvField(s, forceQuote: s.isEmpty)) } else {
                            fields.append(DataExport.csvField(JSONWriter.write(j, pretty: false), forceQuote: false))
                        }
                    }
                }
                sink.write(fields.joined(separator: ",") + "\r\n")
            }
        }
        sink.flush()
    }

    /// The objects `keys` of a class as a JSON array, one object per element. `progress` as for `writeCSV`.
    public func writeJSONArray(className: String, keys: [ObjectKey], to sink: TextSink, progress: ((Int) throws -> Void)? = nil) throws {
        guard let cs = snapshot.classSchema(className) else { throw ToolError.invalidArgument("no class named '\(className)'") }
        let hs = try handles(cs)
        if keys.isEmpty { sink.write("[]\n"); sink.flush(); return }
        sink.write("[")
        for (n, k) in keys.enumerated() {
            if n & 255 == 255 {
                snapshot.releaseDecryptedPagesIfOverBudget()
                try progress?(n)
            }
            var out = n == 0 ? "\n  " : ",\n  "
            JSONWriter.emit(try object(k, cs, hs), indent: 1, pretty: true, into: &out)
            sink.write(out)
        }
        sink.write("\n]\n")
        sink.flush()
    }

    /// The objects `keys` of a class as an aligned table for a terminal: one column per property (lists and
    /// linking objects as counts), numbers right-aligned, long values cut with `…`, wide characters measured.
    public func writeTable(className: String, keys: [ObjectKey], to sink: TextSink, maxColumnWidth: Int = 40) throws {
        guard let cs = snapshot.classSchema(className) else { throw ToolError.invalidArgument("no class named '\(className)'") }
        let hs = try handles(cs)
        var rows: [[String]] = []
        for k in keys {
            var row: [String] = []
            for (p, h) in zip(cs.properties, hs) {
                row.append(try ToolError.wrap { try cell(k, p, h) })
            }
            rows.append(row)
        }
        let header = cs.properties.map(\.name)
        var widths = header.map { TextWidth.of($0) }
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], min(TextWidth.of(c), maxColumnWidth)) } }
        let numeric = cs.properties.map { !$0.isList && !$0.isCollection && [.int, .float, .double, .decimal128].contains($0.type) }
        func line(_ cells: [String]) -> String {
            zip(cells.indices, cells).map { i, c in
                TextWidth.pad(TextWidth.truncate(c, to: widths[i]), to: widths[i], right: numeric[i])
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) + "\n"
        }
        sink.write(line(header))
        sink.write(widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ") + "\n")
        for r in rows { sink.write(line(r)) }
        sink.flush()
    }

    /// One value as table text: `null` for null, strings without quotes (newlines shown as ⏎), lists as
    /// `[n]`, links as the target's primary key or `Class#key`.
    func cell(_ k: ObjectKey, _ p: PropertySchema, _ h: PropertyHandle) throws -> String {
        if p.type == .linkingObjects || p.isList { return "[\(try snapshot.list(k, h).count)]" }
        if p.isSet { return "{\(try snapshot.list(k, h).count)}" }
        if p.isDictionary { return "{\(try snapshot.dictionary(k, h).count) keys}" }
        let v = try snapshot.value(k, h)
        switch v {
        case .null: return "null"
        case .string(let s): return s.replacingOccurrences(of: "\n", with: "⏎").replacingOccurrences(of: "\t", with: "→")
        case .data(let d): return "<\(d.count) bytes>"
        case .link(let lk):
            let j = try link(lk, p.objectClassName!)
            switch j {
            case .string(let s): return s
            case .number(let n): return n
            default: return "\(p.objectClassName!)#\(lk.rawValue)"
            }
        default:
            let j = ValueCodec.json(v, type: p.type)
            switch j {
            case .string(let s): return s
            case .object(let m): if case .string(let s)? = m.first?.1 { return s } else { return JSONWriter.write(j, pretty: false) }
            default: return JSONWriter.write(j, pretty: false)
            }
        }
    }

    static func csvField(_ s: String, forceQuote: Bool) -> String {
        if forceQuote || s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return s
    }
}
