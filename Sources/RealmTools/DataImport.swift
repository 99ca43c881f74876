import Foundation
import RealmStorage

/// Imports a data file `{"ClassName": [ {...}, ... ]}` in one write transaction: on any error nothing is
/// written, and the error names the class, the object's index and the property.
///
/// Links are a target's primary key, a nested object (created), `{"$class": C, "$index": i}` (the i-th object
/// of class C in this file, as `export` writes for classes without a primary key) or `{"$key": k}` (an object
/// already in the database). Missing optional properties are null; missing required ones take the schema
/// file's default or the type's.
public struct DataImport {
    public struct Report: Equatable {
        public var classesCreated: [String] = []
        public var objects: [String: Int] = [:]
        public var total: Int { objects.values.reduce(0, +) }
    }

    let file: String
    let schema: SchemaFile?
    var progress: ((Int, Int) -> Void)?
    /// Turns an error at object `index` of a class into one naming where that object came from (a CSV file's
    /// line); nil keeps `file: Class[index].property`.
    var place: ((_ className: String, _ index: Int, _ error: ToolError) -> ToolError)?

    public init(file: String, schema: SchemaFile?, progress: ((Int, Int) -> Void)? = nil) {
        self.file = file
        self.schema = schema
        self.progress = progress
    }

    /// Parses `data` and imports it into `db`.
    public func run(_ data: Data, into db: Database) throws -> Report {
        let json: JSONValue
        do { json = try JSONParser.parse(data) } catch let e as JSONSyntaxError { throw ToolError.json(file: file, e) }
        guard case .object(let classes) = json else {
            throw ToolError.data(file: file, className: "(top level)", index: nil, property: nil,
                                 message: "expected an object of class names to arrays of objects, found \(json.kind)")
        }
        return try db.write { tx in try importAll(classes, tx) }
    }

    private func fail(_ c: String, _ i: Int?, _ p: String?, _ m: String) -> ToolError {
        .data(file: file, className: c, index: i, property: p, message: m)
    }

    private func importAll(_ classes: [(String, JSONValue)], _ tx: WriteTransaction) throws -> Report {
        var report = Report()
        report.classesCreated = try createClasses(tx)
        try importObjects(classes, tx, &report)
        return report
    }

    /// Creates the schema file's classes the database lacks (their names); a class it has with another schema
    /// is a conflict.
    func createClasses(_ tx: WriteTransaction) throws -> [String] {
        if let schema {
            var toCreate: [ClassSchema] = []
            for c in schema.classes {
                if let existing = tx.classSchema(c.name) {
                    let diffs = SchemaCompare.differences(wanted: c, existing: existing)
                    if !diffs.isEmpty {
                        throw ToolError.conflict("class '\(c.name)' exists with another schema: " + diffs.joined(separator: "; "))
                    }
                } else {
                    toCreate.append(c)
                }
            }
            if !toCreate.isEmpty {
                try ToolError.wrap { try tx.createClasses(toCreate) }
                return toCreate.map(\.name)
            }
        }
        return []
    }

    /// Every object of `classes` (class name → array of objects): plain values first, then links.
    func importObjects(_ classes: [(String, JSONValue)], _ tx: WriteTransaction, _ report: inout Report) throws {
        let total = classes.reduce(0) { n, c in if case .array(let a) = c.1 { return n + a.count } else { return n } }
        var done = 0
        // Phase 1: every object with its plain values and lists of primitives.
        var created: [String: [ObjectKey]] = [:]
        for (className, value) in classes {
            guard let cs = tx.classSchema(className) else {
                let known = tx.schema.map(\.name).joined(separator: ", ")
                throw fail(className, nil, nil, "no such class in the database\(schema == nil ? " (give --schema to create it)" : "") — it has: \(known.isEmpty ? "no classes" : known)")
            }
            guard case .array(let objects) = value else { throw fail(className, nil, nil, "expected an array of objects, found \(value.kind)") }
            let table = try ToolError.wrap { try tx.table(className) }
            var keys: [ObjectKey] = []
            keys.reserveCapacity(objects.count)
            for (i, o) in objects.enumerated() {
                keys.append(try at(className, i) { try createPlain(o, cs, table, className, i, tx) })
                done += 1
                if done % 4096 == 0 { progress?(done, total) }
            }
            created[className, default: []] += keys
            report.objects[className, default: 0] += objects.count
        }
        // Phase 2: links, now that every object exists.
        for (className, value) in classes {
            guard case .array(let objects) = value, let cs = tx.classSchema(className) else { continue }
            let table = try ToolError.wrap { try tx.table(className) }
            let keys = created[className]!
            let linkProps = cs.properties.filter { $0.type == .link || $0.type == .mixed }
            guard !linkProps.isEmpty else { continue }
            for (i, o) in objects.enumerated() {
                guard case .object(let members) = o else { continue }
                try at(className, i) { try setLinks(members, linkProps, table, keys[i], className, i, created, tx) }
            }
        }
        progress?(total, total)
    }

    /// Runs `body` for object `i` of a class, placing its errors with `place`.
    private func at<T>(_ className: String, _ i: Int, _ body: () throws -> T) throws -> T {
        guard let place else { return try body() }
        do { return try body() } catch let e as ToolError { throw place(className, i, e) }
    }

    private func createPlain(_ o: JSONValue, _ cs: ClassSchema, _ table: TableHandle, _ className: String, _ i: Int,
                             _ tx: WriteTransaction,
                             create: (([String: Value], [String: [Value]]) throws -> ObjectKey)? = nil) throws -> ObjectKey {
        guard case .object(let members) = o else { throw fail(className, i, nil, "expected an object, found \(o.kind)") }
        var values: [String: Value] = [:]
        var lists: [String: [Value]] = [:]
        var dictionaries: [String: ValueDictionary] = [:]
        for (name, v) in members {
            guard let p = cs.property(named: name) else {
                let near = SchemaCompare.nearest(name, cs.properties.map(\.name))
                throw fail(className, i, name, "no such property\(near.map { " (did you mean '\($0)'?)" } ?? "")")
            }
            if p.type == .link || p.type == .linkingObjects {
                if p.type == .linkingObjects { throw fail(className, i, name, "linking objects are computed and cannot be imported") }
                continue
            }
            // A mixed value that links to objects is set with the links, once every object exists.
            if p.type == .mixed && DataImport.holdsLink(v) { continue }
            if p.isDictionary {
                guard case .object(let entries) = v else {
                    if case .null = v { continue }
                    throw fail(className, i, name, "expected an object (a dictionary), found \(v.kind)")
                }
                var d = ValueDictionary()
                for (k, item) in entries {
                    switch p.type == .mixed ? mixedValue(item, tx) : ValueCodec.value(item, type: p.type, optional: p.isOptional) {
                    case .success(let sv): d[k] = sv
                    case .failure(let e): throw fail(className, i, "\(name)['\(k)']", e.message)
                    }
                }
                dictionaries[name] = d
            } else if p.isList || p.isSet {
                guard case .array(let items) = v else {
                    if case .null = v { continue }
                    throw fail(className, i, name, "expected an array, found \(v.kind)")
                }
                var out: [Value] = []
                for (n, item) in items.enumerated() {
                    switch p.type == .mixed ? mixedValue(item, tx) : ValueCodec.value(item, type: p.type, optional: p.isOptional) {
                    case .success(let sv): out.append(sv)
                    case .failure(let e): throw fail(className, i, "\(name)[\(n)]", e.message)
                    }
                }
                lists[name] = out
            } else {
                switch p.type == .mixed ? mixedValue(v, tx) : ValueCodec.value(v, type: p.type, optional: p.isOptional) {
                case .success(let sv): values[name] = sv
                case .failure(let e): throw fail(className, i, name, e.message)
                }
            }
        }
        for p in cs.properties where values[p.name] == nil && !p.isList && !p.isCollection && p.type != .link && p.type != .linkingObjects {
            if let d = schema?.defaults[className]?[p.name] {
                if case .success(let sv) = ValueCodec.value(d, type: p.type, optional: p.isOptional) { values[p.name] = sv }
            }
        }
        do {
            guard let create else { return try tx.createObject(table, values, lists: lists, dictionaries: dictionaries) }
            let key = try create(values, lists)
            for (name, d) in dictionaries { try tx.setDictionary(key, try tx.property(table, name), d) }
            return key
        } catch let e as StorageError {
            switch e {
            case .duplicatePrimaryKey(_, let prop): throw fail(className, i, prop, "duplicate primary key")
            case .typeMismatch(_, let prop, let expected, let got): throw fail(className, i, prop, "expected \(expected), got \(got)")
            case .valueTooLarge(_, let prop, let bytes, let limit): throw fail(className, i, prop, "\(bytes) bytes is over the limit of \(limit)")
            default: throw fail(className, i, nil, e.description)
            }
        }
    }

    /// A mixed value from JSON: the tagged scalars `ValueCodec` reads, arrays as nested lists, objects as nested
    /// dictionaries, and `{"$class": C, "$pk": k}` (or `"$key"`) as a link to an object of class C.
    /// Whether a JSON value holds a link to an object (`{"$class": …}`) anywhere: such mixed values are set in
    /// the links pass, once every object of the file exists.
    static func holdsLink(_ j: JSONValue) -> Bool {
        switch j {
        case .array(let items): return items.contains { holdsLink($0) }
        case .object(let members): return members.first?.0 == "$class" || members.contains { holdsLink($0.1) }
        default: return false
        }
    }

    private func mixedValue(_ j: JSONValue, _ tx: WriteTransaction, _ created: [String: [ObjectKey]] = [:]) -> Result<Value, ValueError> {
        switch j {
        case .array(let items):
            var out: [Value] = []
            for item in items {
                switch mixedValue(item, tx, created) {
                case .success(let v): out.append(v)
                case .failure(let e): return .failure(e)
                }
            }
            return .success(.list(out))
        case .object(let members) where members.first?.0 == "$class":
            guard case .string(let cls) = members[0].1, let id = tx.classID(named: cls), let cs = tx.classSchema(cls) else {
                return .failure(ValueError("a mixed link names no class of this file: \(JSONWriter.write(j, pretty: false))"))
            }
            do {
                let table = try tx.table(cls)
                var key: ObjectKey?
                if let pk = members.first(where: { $0.0 == "$pk" })?.1, let pkp = cs.properties.first(where: \.isPrimaryKey) {
                    guard case .success(let v) = ValueCodec.value(pk, type: pkp.type, optional: pkp.isOptional) else {
                        return .failure(ValueError("the primary key of a mixed link to \(cls) is not a \(pkp.type)"))
                    }
                    key = try tx.object(table, primaryKey: v)
                } else if case .number(let n)? = members.first(where: { $0.0 == "$index" })?.1, let i = Int(n),
                          let keys = created[cls], i >= 0, i < keys.count {
                    key = keys[i]
                } else if case .number(let n)? = members.first(where: { $0.0 == "$key" })?.1, let raw = UInt64(n),
                          try tx.exists(table, ObjectKey(raw)) {
                    key = ObjectKey(raw)
                }
                guard let key else { return .failure(ValueError("a mixed link to \(cls) finds no object: \(JSONWriter.write(j, pretty: false))")) }
                return .success(.typedLink(classID: id, key: key))
            } catch {
                return .failure(ValueError("\(error)"))
            }
        case .object(let members) where !(members.count == 1 && members[0].0.hasPrefix("$")):
            var d = ValueDictionary()
            for (k, item) in members {
                switch mixedValue(item, tx, created) {
                case .success(let v): d[k] = v
                case .failure(let e): return .failure(e)
                }
            }
            return .success(.dictionary(d))
        default:
            return ValueCodec.value(j, type: .mixed, optional: true)
        }
    }

    /// A new embedded object of `target` from its JSON object, made by `make` in its parent, with its own links.
    private func embed(_ v: JSONValue, _ target: String, _ created: [String: [ObjectKey]], _ tx: WriteTransaction,
                       _ className: String, _ i: Int, _ prop: String,
                       _ make: @escaping ([String: Value], [String: [Value]]) throws -> ObjectKey) throws {
        guard case .object(let m) = v else { throw fail(className, i, prop, "an embedded \(target) is written as an object, found \(v.kind)") }
        guard let ts = tx.classSchema(target) else { throw fail(className, i, prop, "class '\(target)' does not exist") }
        let table = try ToolError.wrap { try tx.table(target) }
        let key = try createPlain(v, ts, table, target, -1, tx, create: make)
        try setLinks(m, ts.properties.filter { $0.type == .link || $0.type == .mixed }, table, key, target, -1, created, tx)
    }

    private func setLinks(_ members: [(String, JSONValue)], _ linkProps: [PropertySchema], _ table: TableHandle, _ key: ObjectKey,
                          _ className: String, _ i: Int, _ created: [String: [ObjectKey]], _ tx: WriteTransaction) throws {
        for p in linkProps {
            guard let v = members.first(where: { $0.0 == p.name })?.1 else { continue }
            let handle = try ToolError.wrap { try tx.property(table, p.name) }
            if p.type == .mixed {
                guard DataImport.holdsLink(v) else { continue }
                func value(_ j: JSONValue, _ at: String) throws -> Value {
                    switch mixedValue(j, tx, created) {
                    case .success(let sv): return sv
                    case .failure(let e): throw fail(className, i, at, e.message)
                    }
                }
                if p.isDictionary {
                    guard case .object(let entries) = v else { throw fail(className, i, p.name, "expected an object (a dictionary), found \(v.kind)") }
                    var d = ValueDictionary()
                    for (k, item) in entries { d[k] = try value(item, "\(p.name)['\(k)']") }
                    try ToolError.wrap { try tx.setDictionary(key, handle, d) }
                } else if p.isList || p.isSet {
                    guard case .array(let items) = v else { throw fail(className, i, p.name, "expected an array, found \(v.kind)") }
                    let values = try items.enumerated().map { try value($1, "\(p.name)[\($0)]") }
                    try ToolError.wrap { p.isSet ? try tx.setAssign(key, handle, values) : try tx.setList(key, handle, values) }
                } else {
                    let sv = try value(v, p.name)
                    try ToolError.wrap { try tx.set(key, handle, sv) }
                }
                continue
            }
            if tx.classSchema(p.objectClassName!)?.isEmbedded == true {
                if case .null = v { continue }
                if p.isList {
                    guard case .array(let items) = v else { throw fail(className, i, p.name, "expected an array of objects, found \(v.kind)") }
                    for (n, item) in items.enumerated() {
                        try embed(item, p.objectClassName!, created, tx, className, i, "\(p.name)[\(n)]") { vs, ls in
                            try tx.listInsertEmbedded(key, handle, at: n, vs, lists: ls)
                        }
                    }
                } else if p.isCollection {
                    throw fail(className, i, p.name, "dictionaries of embedded objects cannot be imported yet")
                } else {
                    try embed(v, p.objectClassName!, created, tx, className, i, p.name) { vs, ls in
                        try tx.createEmbeddedObject(in: key, handle, vs, lists: ls)
                    }
                }
                continue
            }
            if p.isDictionary {
                if case .null = v { continue }
                guard case .object(let entries) = v else { throw fail(className, i, p.name, "expected an object of links, found \(v.kind)") }
                var d = ValueDictionary()
                for (k, item) in entries {
                    if case .null = item { d[k] = .null; continue }
                    d[k] = .link(try resolve(item, p.objectClassName!, created, tx, className, i, "\(p.name)['\(k)']"))
                }
                try ToolError.wrap { try tx.setDictionary(key, handle, d) }
            } else if p.isSet {
                if case .null = v { continue }
                guard case .array(let items) = v else { throw fail(className, i, p.name, "expected an array of links, found \(v.kind)") }
                var out: [Value] = []
                for (n, item) in items.enumerated() {
                    out.append(.link(try resolve(item, p.objectClassName!, created, tx, className, i, "\(p.name)[\(n)]")))
                }
                try ToolError.wrap { try tx.setAssign(key, handle, out) }
            } else if p.isList {
                if case .null = v { continue }
                guard case .array(let items) = v else { throw fail(className, i, p.name, "expected an array of links, found \(v.kind)") }
                var out: [Value] = []
                for (n, item) in items.enumerated() {
                    out.append(.link(try resolve(item, p.objectClassName!, created, tx, className, i, "\(p.name)[\(n)]")))
                }
                try ToolError.wrap { try tx.setList(key, handle, out) }
            } else {
                if case .null = v { continue }
                let target = try resolve(v, p.objectClassName!, created, tx, className, i, p.name)
                try ToolError.wrap { try tx.set(key, handle, .link(target)) }
            }
        }
    }

    /// The key of a link's target: by primary key, by `$index`/`$key`, or a nested object created now.
    private func resolve(_ v: JSONValue, _ target: String, _ created: [String: [ObjectKey]], _ tx: WriteTransaction,
                         _ className: String, _ i: Int, _ prop: String) throws -> ObjectKey {
        guard let ts = tx.classSchema(target) else { throw fail(className, i, prop, "link target class '\(target)' does not exist") }
        let table = try ToolError.wrap { try tx.table(target) }
        if case .object(let m) = v {
            if let idx = v["$index"] {
                if let c = v["$class"], c != .string(target) {
                    throw fail(className, i, prop, "link to \(c) where \(target) was expected")
                }
                guard case .number(let n) = idx, let k = Int(n), let keys = created[target], k >= 0, k < keys.count else {
                    throw fail(className, i, prop, "$index \(JSONWriter.write(idx, pretty: false)) is not the position of a \(target) in this file")
                }
                return keys[k]
            }
            if let kv = v["$key"] {
                guard case .number(let n) = kv, let raw = UInt64(n), try ToolError.wrap({ try tx.exists(table, ObjectKey(raw)) }) else {
                    throw fail(className, i, prop, "$key \(JSONWriter.write(kv, pretty: false)) is not the key of a \(target) in the database")
                }
                return ObjectKey(raw)
            }
            // A nested object: created (with its own links) now.
            let key = try createPlain(.object(m), ts, table, target, -1, tx)
            let linkProps = ts.properties.filter { $0.type == .link || $0.type == .mixed }
            try setLinks(m, linkProps, table, key, target, -1, created, tx)
            return key
        }
        guard let pk = ts.properties.first(where: \.isPrimaryKey) else {
            throw fail(className, i, prop, "\(target) has no primary key: give the target as an object, {\"$index\": i} or {\"$key\": k}")
        }
        let pkValue: Value
        switch ValueCodec.value(v, type: pk.type, optional: pk.isOptional) {
        case .success(let sv): pkValue = sv
        case .failure(let e): throw fail(className, i, prop, "a link by primary key: \(e.message)")
        }
        guard let k = try ToolError.wrap({ try tx.object(table, primaryKey: pkValue) }) else {
            throw fail(className, i, prop, "no \(target) with primary key \(JSONWriter.write(v, pretty: false))")
        }
        return k
    }
}

/// Comparing schemas and suggesting names.
enum SchemaCompare {
    static func differences(wanted: ClassSchema, existing: ClassSchema) -> [String] {
        var out: [String] = []
        for p in wanted.properties {
            guard let e = existing.property(named: p.name) else { out.append("property '\(p.name)' is missing"); continue }
            if SchemaFile.typeString(p) != SchemaFile.typeString(e) || p.originProperty != e.originProperty
                || p.objectClassName != e.objectClassName {
                out.append("'\(p.name)' is \(SchemaFile.typeString(e)), not \(SchemaFile.typeString(p))")
            } else if p.isPrimaryKey != e.isPrimaryKey {
                out.append("'\(p.name)' \(e.isPrimaryKey ? "is" : "is not") the primary key")
            }
        }
        for e in existing.properties where wanted.property(named: e.name) == nil {
            out.append("property '\(e.name)' is not in the schema file")
        }
        return out
    }

    /// The closest name within an edit distance of 2, if any.
    static func nearest(_ name: String, _ candidates: [String]) -> String? {
        var best: (String, Int)?
        for c in candidates {
            let d = distance(Array(name.lowercased()), Array(c.lowercased()))
            if d <= 2, d < (best?.1 ?? Int.max) { best = (c, d) }
        }
        return best?.0
    }

    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev = Array(0...b.count)
        for i in 1...a.count {
            var cur = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            prev = cur
        }
        return prev[b.count]
    }
}
