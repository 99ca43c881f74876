import Foundation
import RealmCoreFile
import RealmQuery
import RealmStorage
@testable import RealmTools
import Testing
import TestSupport

/// Realm Core files read in place (`CoreFileReader`) against their conversion into our format: the same
/// schema, objects, values (by key and through scans), backlinks, and the same answers to queries.
@Suite struct CoreFileReaderTests {
    static let fixtures = CoreFileInfoTests.fixtures

    @Test(arguments: CoreConversionTests.all)
    func fixtureReadsInPlaceAsItsConversion(_ name: String) throws {
        guard !CoreConversionTests.refused.contains(name) else { return }
        let core = try RealmCoreFile(path: Self.fixtures + "/" + name, key: CoreConversionTests.key(name))
        let reader = try CoreFileReader(file: core, includeInternalTables: true)
        let db = try Database.inMemory(identifier: "reader-\(name)-\(UUID().uuidString)")
        let report = try CoreConversion(file: core, includeInternalTables: true).run(into: db)
        try db.read { s in
            let pair = Pair(reader: reader, snapshot: s, keys: report.keys, fixture: name)
            #expect(reader.schema.map(\.name) == s.schema.map(\.name).sorted { reader.classID(named: $0) ?? 0 < reader.classID(named: $1) ?? 0 })
            for cls in reader.schema {
                #expect(s.classSchema(cls.name)?.properties == cls.properties, "\(name): \(cls.name)")
                #expect(try reader.count(cls.name) == s.count(cls.name), "\(name): \(cls.name)")
                guard !cls.isEmbedded else { continue }
                try pair.compareObjects(cls)
                try pair.compareQueries(cls)
            }
        }
    }

    /// The scans' leaf filters and the order of indexed strings, read in place (DECISIONS 107), against the
    /// conversion, on files Realm Core wrote: ints of several widths, nullable ones and ones beyond 32 bits, short
    /// strings and longer ones, nulls beside "" and strings sharing 230 bytes; constants taken from objects spread
    /// over the class, each int and string operator the kernels serve, and every string sort both ways.
    @Test(arguments: ["written/people-1k.realm", "index/search-indexes.realm"])
    func leafFiltersAndStringOrderAnswerAsTheConversion(_ name: String) throws {
        let core = try RealmCoreFile(path: Self.fixtures + "/" + name)
        let reader = try CoreFileReader(file: core)
        let db = try Database.inMemory(identifier: "kernels-\(UUID().uuidString)")
        let report = try CoreConversion(file: core).run(into: db)
        try db.read { s in
            let pair = Pair(reader: reader, snapshot: s, keys: report.keys, fixture: name)
            var compared = 0
            for cls in reader.schema where !cls.isEmbedded {
                let t = try reader.table(cls.name)
                let n = try reader.count(t)
                guard n > 0 else { continue }
                let samples = Set([0, 1, n / 3, n / 2, n - 1]).sorted()
                for p in cls.properties where !p.isList && !p.isSet && !p.isDictionary && !p.name.hasPrefix("!") {
                    var queries: [(String, [QueryArgument])] = []
                    for position in samples {
                        guard let key = try reader.key(at: position, in: t) else { continue }
                        let v = try reader.value(key, try reader.property(t, p.name))
                        switch (p.type, v) {
                        case (.int, .int(let x)):
                            let lo = x > .min + 3 ? x - 3 : x, hi = x < .max - 3 ? x + 3 : x
                            queries += ["== \(x)", "!= \(x)", "> \(x)", "<= \(x)", "BETWEEN {\(lo), \(hi)}"].map { ("\(p.name) \($0)", []) }
                        case (.string, .string):
                            queries += ["==", "!=", "CONTAINS[c]"].map { ("\(p.name) \($0) $0", [.value(v)]) }
                        default: break
                        }
                    }
                    if p.type == .int || p.type == .string {
                        queries.append(("\(p.name) == nil", []))
                        queries.append(("\(p.name) != nil", []))
                    }
                    if p.type == .int { queries.append(("\(p.name) BETWEEN {\(Int64.min), \(Int64.max)}", [])) }
                    if p.type == .string {
                        queries += [("\(p.name) == ''", []), ("\(p.name) CONTAINS[c] 'E'", []),
                                    ("TRUEPREDICATE SORT(\(p.name) ASC)", []), ("TRUEPREDICATE SORT(\(p.name) DESC)", [])]
                    }
                    for (q, arguments) in queries {
                        let got = try Query.evaluate(q, on: cls.name, in: reader, arguments: arguments).map { pair.ours(cls.name, $0) }
                        let want = try Query.evaluate(q, on: cls.name, in: s, arguments: arguments)
                        #expect(got == want.map(Optional.some), "\(name): \(cls.name) \(q): \(got.count) against \(want.count)")
                        compared += 1
                    }
                }
            }
            #expect(compared > 40)
        }
    }

    /// A reader and the snapshot of the file's conversion, with the conversion's key map.
    struct Pair {
        let reader: CoreFileReader
        let snapshot: Snapshot
        let keys: [String: [Int64: ObjectKey]]
        let fixture: String

        /// Our key for a key of the file (a class of embedded objects has none: its objects are made anew).
        func ours(_ className: String, _ key: ObjectKey) -> ObjectKey? { keys[className]?[Int64(bitPattern: key.rawValue)] }

        /// A value the reader gave, as the conversion holds it.
        func mapped(_ v: Value, _ p: PropertySchema) -> Value? {
            switch v {
            case .link(let k):
                guard let target = p.objectClassName else { return nil }
                return ours(target, k).map(Value.link)
            case .typedLink(let id, let k):
                guard let cls = reader.className(classID: id), let key = ours(cls, k), let theirs = snapshot.classID(named: cls) else { return nil }
                return .typedLink(classID: theirs, key: key)
            case .list(let items):
                var out: [Value] = []
                for item in items { guard let m = mapped(item, p) else { return nil }; out.append(m) }
                return .list(out)
            case .dictionary(let d):
                var out = ValueDictionary()
                for e in d { guard let m = mapped(e.value, p) else { return nil }; out[e.key] = m }
                return .dictionary(out)
            default:
                return v
            }
        }

        func links(toEmbedded p: PropertySchema) -> Bool {
            p.type == .link && p.objectClassName.flatMap { reader.classSchema($0)?.isEmbedded } == true
        }

        /// Every object: its key (scan and position), each value read by key and through a scan's column.
        func compareObjects(_ cls: ClassSchema) throws {
            let rt = try reader.table(cls.name), st = try snapshot.table(cls.name)
            let keys = try reader.keys(rt)
            #expect(keys.count == (try reader.count(rt)))
            #expect(try keys.enumerated().allSatisfy { try reader.key(at: $0.offset, in: rt) == $0.element }, "\(fixture): \(cls.name) keys")
            let mappedKeys = keys.compactMap { ours(cls.name, $0) }
            #expect(mappedKeys.count == keys.count, "\(fixture): \(cls.name) unmapped keys")
            var row = 0
            try reader.scan(rt) { leaf in
                for p in cls.properties {
                    let rh = try reader.property(rt, p.name), sh = try snapshot.property(st, p.name)
                    let column = try leaf.column(rh)
                    for i in 0..<leaf.count {
                        let key = leaf.key(i), theirs = mappedKeys[row + i]
                        let at = "\(fixture): \(cls.name) #\(key.rawValue).\(p.name)"
                        if p.isList || p.isSet || p.isDictionary {
                            let got: Value = p.isDictionary ? .dictionary(try reader.dictionary(key, rh)) : .list(try reader.list(key, rh))
                            let want: Value = p.isDictionary ? .dictionary(try snapshot.dictionary(theirs, sh)) : .list(try snapshot.list(theirs, sh))
                            if links(toEmbedded: p) { #expect(Self.elements(got) == Self.elements(want), "\(at)") } else { #expect(same(mapped(got, p), want, set: p.isSet), "\(at): \(got) → \(want)") }
                            continue
                        }
                        let byKey = try reader.value(key, rh), inLeaf = try column.value(i)
                        #expect(same(byKey, inLeaf), "\(at): by key \(byKey), in its leaf \(inLeaf)")
                        let want = try snapshot.value(theirs, sh)
                        if links(toEmbedded: p) { #expect(byKey.isNull == want.isNull, "\(at)") } else { #expect(same(mapped(byKey, p), want), "\(at): \(byKey) → \(want)") }
                        checkTyped(column, i, byKey, p, at)
                    }
                }
                row += leaf.count
                return true
            }
            // Backlinks, counted per origin class and property.
            for (key, theirs) in zip(keys, mappedKeys) {
                let a = try reader.allBacklinks(key, in: rt).map { "\($0.className).\($0.property):\($0.keys.count)" }.sorted()
                let b = try snapshot.allBacklinks(theirs, in: st).filter { !$0.keys.isEmpty }.map { "\($0.className).\($0.property):\($0.keys.count)" }.sorted()
                #expect(a == b, "\(fixture): \(cls.name) #\(key.rawValue) backlinks")
            }
        }

        /// The typed reads a query's column scan makes agree with the value.
        func checkTyped(_ column: ColumnCursor, _ i: Int, _ v: Value, _ p: PropertySchema, _ at: String) {
            #expect(column.isNull(i) == v.isNull, "\(at): isNull")
            switch v {
            case .int(let x): #expect(column.int(i) == x, "\(at): int")
            case .bool(let x): #expect(column.bool(i) == x, "\(at): bool")
            case .double(let x): #expect(column.double(i).bitPattern == x.bitPattern || x.isNaN, "\(at): double")
            case .float(let x): #expect(column.float(i).bitPattern == Double(x).bitPattern || x.isNaN, "\(at): float")
            case .link(let k): #expect(column.link(i) == k, "\(at): link")
            case .string(let s): #expect((try? column.withUTF8(i) { Array($0) }) == Array(s.utf8), "\(at): bytes")  // (a read error fails the comparison)
            default: break
            }
        }

        /// Names the query language reads as keywords.
        static let keywords: Set<String> = ["any", "all", "none", "some", "and", "or", "not", "true", "false", "nil", "null", "between",
                                            "in", "contains", "beginswith", "endswith", "like", "subquery", "sort", "distinct", "limit",
                                            "truepredicate", "falsepredicate", "asc", "desc", "ascending", "descending"]

        /// Queries made from each property's values answer the same (mapped keys, same order).
        func compareQueries(_ cls: ClassSchema) throws {
            let rt = try reader.table(cls.name)
            guard let first = try reader.key(at: 0, in: rt) else { return }
            var queries = ["TRUEPREDICATE"]
            for p in cls.properties where !p.name.hasPrefix("!") && p.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
                && !Self.keywords.contains(p.name.lowercased()) {
                if p.isList || p.isSet || p.isDictionary {
                    queries.append("\(p.name).@count > 0")
                    continue
                }
                let v = try reader.value(first, try reader.property(rt, p.name))
                switch (p.type, v) {
                case (.int, .int(let x)): queries += ["\(p.name) == \(x)", "\(p.name) > \(x)", "\(p.name) BETWEEN {\(x > .min + 5 ? x - 5 : x), \(x < .max - 5 ? x + 5 : x)}", "TRUEPREDICATE SORT(\(p.name) DESC)"]
                case (.string, .string(let x)):
                    let needle = String(x.prefix(2)).replacingOccurrences(of: "'", with: "")
                    queries += ["\(p.name) == $0", "\(p.name) CONTAINS[c] '\(needle)'", "\(p.name) BEGINSWITH '\(needle)'", "TRUEPREDICATE SORT(\(p.name) ASC)"]
                case (.bool, _): queries += ["\(p.name) == true", "\(p.name) == false"]
                case (.double, .double(let x)) where x.isFinite: queries += ["\(p.name) < \(x)", "TRUEPREDICATE SORT(\(p.name) ASC)"]
                case (.float, .float(let x)) where x.isFinite: queries += ["\(p.name) >= \(x)"]
                case (.link, _) where !links(toEmbedded: p): queries += ["\(p.name) == nil", "\(p.name) != nil"]
                case (.date, _): queries += ["\(p.name) != nil", "TRUEPREDICATE SORT(\(p.name) ASC)"]
                default: queries.append(p.isOptional ? "\(p.name) == nil" : "TRUEPREDICATE")
                }
            }
            for q in queries {
                let arguments: [QueryArgument]
                if q.contains("$0"), let p = cls.properties.first(where: { q.hasPrefix($0.name + " ") }) {
                    arguments = [.value(try reader.value(first, try reader.property(rt, p.name)))]
                } else {
                    arguments = []
                }
                let got = try Query.evaluate(q, on: cls.name, in: reader, arguments: arguments).map { ours(cls.name, $0) }
                let want = try Query.evaluate(q, on: cls.name, in: snapshot, arguments: arguments)
                #expect(got == want.map(Optional.some), "\(fixture): \(cls.name) \(q): \(got.count) against \(want.count)")
            }
        }

        static func elements(_ v: Value) -> Int {
            switch v {
            case .list(let items): return items.count
            case .dictionary(let d): return d.count
            default: return -1
            }
        }

        /// Equal, floats and doubles by their bits, sets in any order.
        func same(_ a: Value?, _ b: Value, set: Bool = false) -> Bool {
            guard let a else { return false }
            switch (a, b) {
            case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
            case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
            case (.list(let x), .list(let y)):
                guard x.count == y.count else { return false }
                return set ? x.allSatisfy { e in y.contains { same(e, $0) } } : zip(x, y).allSatisfy { same($0, $1) }
            case (.dictionary(let x), .dictionary(let y)): return x.count == y.count && x.allSatisfy { e in y[e.key].map { same(e.value, $0) } == true }
            default: return a == b
            }
        }
    }
}
