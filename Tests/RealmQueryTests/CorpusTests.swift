import Foundation
import Testing
import RealmStorage
@testable import RealmQuery
import TestSupport

/// Reference semantics written directly over Swift values, independent of the evaluator.
enum Ref {
    static func foldCase(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for u in s.unicodeScalars {
            let v = u.value
            if (65...90).contains(v) || ((0xC0...0xDE).contains(v) && v != 0xD7) { out.append(Unicode.Scalar(v + 32)!) } else { out.append(u) }
        }
        return String(out)
    }
    static func foldDiacritics(_ s: String) -> String {
        String(String.UnicodeScalarView(s.decomposedStringWithCanonicalMapping.unicodeScalars.filter { !(0x300...0x36F).contains($0.value) }))
    }
    static func fold(_ s: String, _ o: String) -> String {
        var s = s
        if o.contains("d") { s = foldDiacritics(s) }
        if o.contains("c") { s = foldCase(s) }
        return s.precomposedStringWithCanonicalMapping
    }
    /// Code point order.
    static func less(_ a: String, _ b: String) -> Bool { a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) }
    static func same(_ a: String, _ b: String) -> Bool { a.unicodeScalars.elementsEqual(b.unicodeScalars) }

    static func like(_ s: [Unicode.Scalar], _ p: [Unicode.Scalar]) -> Bool {
        if p.isEmpty { return s.isEmpty }
        if p[0] == "*" { return like(s, Array(p.dropFirst())) || (!s.isEmpty && like(Array(s.dropFirst()), p)) }
        if s.isEmpty { return false }
        if p[0] == "?" || p[0] == s[0] { return like(Array(s.dropFirst()), Array(p.dropFirst())) }
        return false
    }

    static func string(_ v: String?, _ op: String, _ c: String, _ o: String) -> Bool {
        guard let v else { return op == "!=" }
        let a = fold(v, o), b = fold(c, o)
        let sa = Array(a.unicodeScalars), sb = Array(b.unicodeScalars)
        switch op {
        case "==": return same(a, b)
        case "!=": return !same(a, b)
        case "BEGINSWITH": return sa.starts(with: sb)
        case "ENDSWITH": return sa.reversed().starts(with: sb.reversed())
        case "CONTAINS": return sb.isEmpty || (0...max(0, sa.count - sb.count)).contains { i in i + sb.count <= sa.count && Array(sa[i..<(i + sb.count)]) == sb }
        case "LIKE": return like(sa, sb)
        case "<": return less(a, b)
        case ">": return less(b, a)
        case "<=": return !less(b, a)
        case ">=": return !less(a, b)
        default: fatalError(op)
        }
    }

    static func ordered<T: Comparable>(_ v: T?, _ op: String, _ c: T?) -> Bool {
        guard let v, let c else {
            if op == "==" { return v == nil && c == nil }
            if op == "!=" { return !(v == nil && c == nil) }
            return false
        }
        switch op {
        case "==": return v == c
        case "!=": return v != c
        case "<": return v < c
        case "<=": return v <= c
        case ">": return v > c
        case ">=": return v >= c
        default: fatalError(op)
        }
    }

    /// A decimal written as text, exactly (Foundation's `Decimal` holds 38 digits: an oracle independent of
    /// `Decimal128`).
    static func dec(_ s: String) -> Decimal { Decimal(string: s, locale: Locale(identifier: "en_US_POSIX"))! }

    /// `v op c` for decimals as text (nil: null); NaN equals NaN and is unordered.
    static func decimal(_ v: String?, _ op: String, _ c: String?) -> Bool {
        if v == "NaN" || c == "NaN" {
            let same = v == "NaN" && c == "NaN"
            return op == "==" ? same : (op == "!=" ? !same : false)
        }
        return ordered(v.map(dec), op, c.map(dec))
    }

    /// The decimals of a list as aggregates take them: NaN skipped, as Realm Core skips it.
    static func decimals(_ vs: [String]) -> [Decimal] { vs.filter { $0 != "NaN" }.map(dec) }
    static func decimalSum(_ vs: [String]) -> Decimal { decimals(vs).reduce(Decimal(0), +) }
    static func decimalAverage(_ vs: [String]) -> Decimal? { decimals(vs).isEmpty ? nil : decimalSum(vs) / Decimal(decimals(vs).count) }

    /// A mixed number as an exact decimal (nil: not a number, or NaN).
    static func number(_ v: Value) -> Decimal? {
        switch v {
        case .int(let i): return Decimal(i)
        case .double(let d): return d.isNaN ? nil : Decimal(d)
        case .float(let f): return f.isNaN ? nil : Decimal(Double(f))
        case .decimal128(let d): return d.isNaN ? nil : dec(d.description)
        default: return nil
        }
    }

    /// The type names `@type` accepts and the types each stands for, written independently of the binder.
    static let typeNames: [(String, Set<String>)] = [
        ("int", ["int"]), ("integer", ["int"]), ("double", ["double"]), ("float", ["float"]), ("string", ["string"]),
        ("bool", ["bool"]), ("boolean", ["bool"]), ("date", ["date"]), ("timestamp", ["date"]), ("objectId", ["objectId"]),
        ("uuid", ["uuid"]), ("decimal", ["decimal"]), ("decimal128", ["decimal"]), ("binary", ["binary"]), ("data", ["binary"]),
        ("null", ["null"]), ("numeric", ["int", "double", "float", "decimal"]), ("link", ["link"]), ("objectlink", ["link"]),
        // As Realm Core names them (src/realm/query_value.cpp): `object` is a dictionary, `char` an int.
        ("object", ["dictionary"]), ("dictionary", ["dictionary"]), ("char", ["int"]), ("int64", ["int"]), ("short", ["int"]),
        ("byte", ["int"]), ("bytearray", ["binary"]), ("byte[]", ["binary"]), ("datetimeoffset", ["date"]),
        ("collection", ["list", "dictionary"]),
    ]

    static func typeName(_ v: Value) -> String {
        switch v {
        case .null: return "null"
        case .int: return "int"
        case .bool: return "bool"
        case .float: return "float"
        case .double: return "double"
        case .string: return "string"
        case .data: return "binary"
        case .date: return "date"
        case .objectId: return "objectId"
        case .uuid: return "uuid"
        case .decimal128: return "decimal"
        case .link, .typedLink: return "link"
        case .list: return "list"
        case .dictionary: return "dictionary"
        }
    }

    static func intVsDouble(_ v: Int64, _ op: String, _ d: Double) -> Bool {
        // Only integral or out-of-range doubles are used against ints in the corpus.
        if d >= 1e19 { return ["<", "<=", "!="].contains(op) }
        if d <= -1e19 { return [">", ">=", "!="].contains(op) }
        if d == d.rounded() { return ordered(v, op, Int64(d)) }
        return ordered(Double(v), op, d)
    }
}

/// A date as plain numbers, ordered lexicographically.
struct Instant: Comparable {
    var s: Int64
    var n: Int32
    init(_ t: Timestamp) { s = t.seconds; n = t.nanoseconds }
    static func < (a: Instant, b: Instant) -> Bool { a.s != b.s ? a.s < b.s : a.n < b.n }
}

struct Case: CustomStringConvertible {
    var query: String
    var cls = "Person"
    var people: ((PersonModel) -> Bool)?
    var dogs: ((Int, DogModel) -> Bool)?
    var description: String { query }
}

func corpus(_ f: Fixture) -> [Case] {
    var cases: [Case] = []
    func p(_ q: String, _ r: @escaping (PersonModel) -> Bool) { cases.append(Case(query: q, people: r)) }
    func d(_ q: String, _ r: @escaping (Int, DogModel) -> Bool) { cases.append(Case(query: q, cls: "Dog", dogs: r)) }
    let ops = ["==", "!=", "<", "<=", ">", ">="]

    // Ints: indexed, primary key, optional, extremes.
    for op in ops {
        for c: Int64 in [0, 17, 45, 89, -1] { p("age \(op) \(c)") { Ref.ordered($0.age, op, c) } }
        for c: Int64 in [-20, 1, 40, 121] { p("id \(op) \(c)") { Ref.ordered($0.id, op, c) } }
        for c: Int64 in [-5, 0, 3] { p("ageOpt \(op) \(c)") { Ref.ordered($0.ageOpt, op, c) } }
        for c: Int64 in [.min, .max, 0, -1, 9_007_199_254_740_993] { p("big \(op) \(c)") { Ref.ordered($0.big, op, c) } }
        for c in [2.5, 45.0, 1e19, -1e19, 9_007_199_254_740_992.0] { p("big \(op) \(Literal.double(c))") { Ref.intVsDouble($0.big, op, c) } }
        p("age \(op) 44.5") { Ref.ordered(Double($0.age), op, 44.5) }
    }
    p("ageOpt == nil") { $0.ageOpt == nil }
    p("ageOpt != NULL") { $0.ageOpt != nil }
    p("nil == ageOpt") { $0.ageOpt == nil }
    p("age BETWEEN {20, 40}") { (20...40).contains($0.age) }
    p("age BETWEEN {40, 20}") { _ in false }
    p("age BETWEEN {19.5, 40.5}") { (20...40).contains($0.age) }
    p("big BETWEEN {-1, 42}") { (-1...42).contains($0.big) }
    p("age IN {1, 5, 17, 45, 89}") { [1, 5, 17, 45, 89].contains($0.age) }
    p("id IN {-20, 1, 4, 400}") { [-20, 1, 4, 400].contains($0.id) }
    p("NOT age IN {1, 2, 3}") { ![1, 2, 3].contains($0.age) }
    p("ageOpt IN {nil, 0}") { $0.ageOpt == nil || $0.ageOpt == 0 }
    p("age IN {}") { _ in false }
    p("age == 0x1F") { $0.age == 31 }
    p("big == -9223372036854775808") { $0.big == .min }
    // Doubles and floats.
    for op in ops {
        for c in [0.0, -0.0, 1.5, .infinity, -.infinity, 1e308, 5e-324, 2.25, -1.5] {
            p("height \(op) \(Literal.double(c))") { Ref.ordered($0.height, op, c) }
        }
        for c in [2.2, 0.0, 70.5, .infinity] {
            p("weight \(op) \(Literal.double(c))") { Ref.ordered($0.weight, op, Float(c)) }
        }
        p("height \(op) 2") { Ref.ordered($0.height, op, 2.0) }
    }
    p("weight == nil") { $0.weight == nil }
    p("weight != nil") { $0.weight != nil }
    p("height BETWEEN {-1.5, 2.25}") { $0.height >= -1.5 && $0.height <= 2.25 }
    p("height == inf") { $0.height == .infinity }
    p("height < -inf") { _ in false }
    // Bools.
    p("active == true") { $0.active }
    p("active = FALSE") { !$0.active }
    p("active != true") { !$0.active }
    // Dates before 1970 and after 2038.
    let dates: [(String, Timestamp)] = [
        ("1900-01-01@00:00:00", Timestamp(seconds: -2_208_988_800)), ("1969-12-31@23:59:59", Timestamp(seconds: -1)),
        ("1970-01-01T00:00:00", Timestamp(seconds: 0)), ("T0:1", Timestamp(seconds: 0, nanoseconds: 1)),
        ("2038-01-19@03:14:07", Timestamp(seconds: 2_147_483_647)), ("2038-01-19@03:14:08", Timestamp(seconds: 2_147_483_648)),
        ("2100-01-01@00:00:00:999999999", Timestamp(seconds: 4_102_444_800, nanoseconds: 999_999_999)), ("T-1:-500", Timestamp(seconds: -1, nanoseconds: -500)),
        ("0001-01-01@00:00:00", Timestamp(seconds: -62_135_596_800)),
    ]
    for op in ops {
        for (text, t) in dates {
            p("born \(op) \(text)") { Ref.ordered(Instant($0.born), op, Instant(t)) }
        }
        p("bornOpt \(op) 2038-01-19@03:14:08") { Ref.ordered($0.bornOpt.map(Instant.init), op, Instant(Timestamp(seconds: 2_147_483_648))) }
    }
    p("bornOpt == nil") { $0.bornOpt == nil }
    // Object ids, uuids, data.
    let oid = ObjectId(hexString: String(format: "%024x", 7 * 977))!
    p("oid == oid(\(oid.hexString))") { $0.oid == oid }
    p("oid != oid(\(oid.hexString))") { $0.oid != oid }
    p("oid > oid(\(oid.hexString))") { $0.oid.map { $0 > oid } ?? false }
    p("oid == nil") { $0.oid == nil }
    let uid = UUID(uuidString: String(format: "%08X-0000-4000-8000-%012X", 7 * 31, 7))!
    p("uid == uuid(\(uid.uuidString.lowercased()))") { $0.uid == uid }
    p("uid != uuid(\(uid.uuidString))") { $0.uid != uid }
    p("uid == nil") { $0.uid == nil }
    p("blob == B64\"\(Base64.encode(Array("Ann".utf8)))\"") { $0.blob == Array("Ann".utf8) }
    p("blob BEGINSWITH B64\"\(Base64.encode(Array("J".utf8)))\"") { $0.blob?.first == 74 }
    p("blob == nil") { $0.blob == nil }
    p("blob != nil") { $0.blob != nil }
    // Strings: CJK, emoji, accents, escapes, modifiers.
    let strings = ["ann", "Ann", "Émile", "emile", "JOSE", "東京", "🦄", "O\\'Brien", "", "MÜLLER", "ü", "chloe", "ÅNG", "straße", "Jo", "e"]
    let stringOps = ["==", "!=", "BEGINSWITH", "ENDSWITH", "CONTAINS"]
    for c in strings {
        let plain = c.replacingOccurrences(of: "\\'", with: "'")
        for op in stringOps {
            for o in ["", "c", "d", "cd"] {
                let mod = o.isEmpty ? "" : "[\(o)]"
                if op == "==" || op == "CONTAINS" || o == "cd" || o == "" {
                    p("name \(op)\(mod) '\(c)'") { Ref.string($0.name, op, plain, o) }
                }
            }
            p("nickname \(op)[c] '\(c)'") { Ref.string($0.nickname, op, plain, "c") }
        }
    }
    for pattern in ["*ll*", "?oe", "J*", "*🦄", "?", "*", "東*", "*ü*", "Z?ë"] {
        p("name LIKE '\(pattern)'") { Ref.string($0.name, "LIKE", pattern.replacingOccurrences(of: "\\*", with: "*"), "") }
        p("name LIKE[c] '\(pattern)'") { Ref.string($0.name, "LIKE", pattern.replacingOccurrences(of: "\\*", with: "*"), "c") }
    }
    for c in ["Bob", "zed", "É", "東", ""] {
        for op in ["<", ">", "<=", ">="] { p("name \(op) '\(c)'") { Ref.string($0.name, op, c, "") } }
    }
    p("name IN {'Ann', 'Bob', '李小龙'}") { ["Ann", "Bob", "李小龙"].contains($0.name) }
    p("name IN[c] {'ann', 'joe'}") { ["ann", "joe"].contains(Ref.foldCase($0.name)) }
    p("nickname == nil") { $0.nickname == nil }
    p("NULL != nickname") { $0.nickname != nil }
    p("name == \"unicorn\\uD83E\\uDD84\"") { $0.name == "unicorn🦄" }
    p("name.@count > 5") { $0.name.utf8.count > 5 }
    p("name.@size == 0") { $0.name.isEmpty }
    // To-one links.
    let P = f.people
    func buddy(_ x: PersonModel) -> PersonModel? { x.buddy.map { P[$0] } }
    p("buddy == nil") { $0.buddy == nil }
    p("buddy <> NULL") { $0.buddy != nil }
    p("buddy.age > 40") { buddy($0).map { $0.age > 40 } ?? false }
    p("buddy.name ==[c] 'ann'") { buddy($0).map { Ref.foldCase($0.name) == "ann" } ?? false }
    p("buddy.nickname == nil") { buddy($0)?.nickname == nil }
    p("buddy.buddy.age < 30") { buddy($0).flatMap(buddy).map { $0.age < 30 } ?? false }
    p("buddy.buddy.buddy.age > 0") { buddy($0).flatMap(buddy).flatMap(buddy).map { $0.age > 0 } ?? false }
    p("buddy.age > age") { x in buddy(x).map { $0.age > x.age } ?? false }
    p("buddy.born < 1970-01-01@00:00:00") { buddy($0).map { $0.born.seconds < 0 } ?? false }
    // Lists of objects (ANY by default), quantifiers, aggregates.
    let D = f.dogs
    func dogs(_ x: PersonModel) -> [DogModel] { x.dogs.map { D[$0] } }
    p("dogs.name == 'Rex'") { dogs($0).contains { $0.name == "Rex" } }
    p("dogs.name ==[c] 'rex'") { dogs($0).contains { Ref.foldCase($0.name) == "rex" } }
    p("ANY dogs.age > 10") { dogs($0).contains { $0.age > 10 } }
    p("SOME dogs.age > 10") { dogs($0).contains { $0.age > 10 } }
    p("ALL dogs.age > 5") { dogs($0).allSatisfy { $0.age > 5 } }
    p("NONE dogs.age > 10") { !dogs($0).contains { $0.age > 10 } }
    p("dogs.weight == nil") { dogs($0).contains { $0.weight == nil } }
    p("dogs.@count == 0") { $0.dogs.isEmpty }
    p("dogs.@count > 2") { $0.dogs.count > 2 }
    p("dogs.@size >= 1") { !$0.dogs.isEmpty }
    p("dogs.@max.age > 12") { dogs($0).map(\.age).max().map { $0 > 12 } ?? false }
    p("dogs.@min.age < 2") { dogs($0).map(\.age).min().map { $0 < 2 } ?? false }
    p("dogs.@sum.age > 20") { dogs($0).reduce(0) { $0 + $1.age } > 20 }
    p("dogs.@sum.age == 0") { dogs($0).reduce(0) { $0 + $1.age } == 0 }
    p("dogs.@avg.age > 7") { x in let a = dogs(x).map(\.age); return !a.isEmpty && Double(a.reduce(0, +)) / Double(a.count) > 7 }
    p("dogs.@avg.age == nil") { $0.dogs.isEmpty }
    p("dogs.@max.weight > 30.5") { dogs($0).compactMap(\.weight).max().map { $0 > 30.5 } ?? false }
    p("dogs.name BEGINSWITH[c] 'f'") { dogs($0).contains { Ref.string($0.name, "BEGINSWITH", "f", "c") } }
    p("dogs.owner.age > 50") { dogs($0).contains { $0.owner.map { P[$0].age > 50 } ?? false } }
    p("SUBQUERY(dogs, $d, $d.age > 5 AND $d.name BEGINSWITH 'R').@count > 0") { dogs($0).contains { $0.age > 5 && $0.name.hasPrefix("R") } }
    p("SUBQUERY(dogs, $d, $d.weight == nil || $d.age < 3).@count >= 2") { dogs($0).filter { $0.weight == nil || $0.age < 3 }.count >= 2 }
    p("SUBQUERY(dogs, $d, TRUEPREDICATE).@count == dogs.@count") { _ in true }
    // Lists of values.
    p("scores.@sum > 100") { $0.scores.reduce(0, +) > 100 }
    p("scores.@avg > 50") { $0.scores.isEmpty ? false : Double($0.scores.reduce(0, +)) / Double($0.scores.count) > 50 }
    p("scores.@min == nil") { $0.scores.isEmpty }
    p("scores.@max >= 90") { ($0.scores.max() ?? -1) >= 90 }
    p("scores.@count == 0") { $0.scores.isEmpty }
    p("50 IN scores") { $0.scores.contains(50) }
    p("ANY scores > 90") { $0.scores.contains { $0 > 90 } }
    p("ALL scores < 50") { $0.scores.allSatisfy { $0 < 50 } }
    p("NONE scores BETWEEN {10, 20}") { !$0.scores.contains { (10...20).contains($0) } }
    p("'milk' IN tags") { $0.tags.contains("milk") }
    p("tags ==[c] 'cafe'") { $0.tags.contains { Ref.foldCase($0) == "cafe" } }
    p("tags ==[cd] 'cafe'") { $0.tags.contains { Ref.fold($0, "cd") == "cafe" } }
    p("tags CONTAINS '東'") { $0.tags.contains { $0.contains("東") } }
    p("tags.@count > 1") { $0.tags.count > 1 }
    p("age IN scores") { x in x.scores.contains(x.age) }
    // Decimal128: exact to 34 digits, cohort members equal (1.1 == 1.10), literals never read as doubles.
    let decimals = ["12345678901234567890.15", "12345678901234567890.10", "12345678901234567890.1", "1.1", "1.10", "0.3",
                    "1E20", "100000000000000000001.0", "1.000000000000000000000000000000001", "-12345678901234567890.1",
                    "9999999999999999999999999999999999", "0", "-0.0", "0.30000000000000004", "9223372036854775807", "45"]
    for op in ops {
        for c in decimals { p("balance \(op) \(c)") { Ref.decimal($0.balance, op, c) } }
    }
    p("balance == nil") { $0.balance == nil }
    p("balance == nan") { $0.balance == "NaN" }
    p("balance != NaN") { $0.balance != "NaN" }
    p("balance IN {12345678901234567890.10, 0.3, 1.1, nil}") { x in x.balance == nil || ["12345678901234567890.10", "0.3", "1.1"].contains { Ref.decimal(x.balance, "==", $0) } }
    p("balance BETWEEN {0.3, 12345678901234567890.10}") { Ref.decimal($0.balance, ">=", "0.3") && Ref.decimal($0.balance, "<=", "12345678901234567890.10") }
    p("ANY amounts == 12345678901234567890.1") { $0.amounts.contains { Ref.decimal($0, "==", "12345678901234567890.1") } }
    p("ALL amounts > 0.05") { $0.amounts.allSatisfy { Ref.decimal($0, ">", "0.05") } }
    p("12345678901234567890.15 IN amounts") { $0.amounts.contains { Ref.decimal($0, "==", "12345678901234567890.15") } }
    for (op, c) in [("==", "0.3"), (">", "12345678901234567890.10"), ("==", "1"), ("<", "0"), ("==", "0"), (">", "1E20"),
                    (">=", "100000000000000000000.05"), ("==", "24691357802469135780.25")] {
        p("amounts.@sum \(op) \(c)") { Ref.ordered(Ref.decimalSum($0.amounts), op, Ref.dec(c)) }
    }
    for (op, c) in [(">", "0.1"), ("==", "0.15"), ("<", "-1"), (">", "6172839450617283945.1"), ("==", "2"),
                    ("<", "0.3333333333333333333333333333333334"), (">", "0.3333333333333333333333333333333332"),
                    ("==", "12345678901234567890.125"), ("==", "50000000000000000000.00000000000005")] {
        p("amounts.@avg \(op) \(c)") { Ref.ordered(Ref.decimalAverage($0.amounts), op, Ref.dec(c)) }
    }
    p("amounts.@min == 12345678901234567890.10") { x in Ref.decimals(x.amounts).min() == Ref.dec("12345678901234567890.10") }
    p("amounts.@max > 12345678901234567890.10") { x in Ref.decimals(x.amounts).max().map { $0 > Ref.dec("12345678901234567890.10") } ?? false }
    p("amounts.@max == 12345678901234567890.15") { x in Ref.decimals(x.amounts).max() == Ref.dec("12345678901234567890.15") }
    // Backlinks.
    func buddiedBy(_ i: Int) -> Int { P.filter { $0.buddy == i }.count }
    func ownedBy(_ i: Int) -> Int { D.filter { $0.owner == i }.count }
    let index = Dictionary(uniqueKeysWithValues: P.enumerated().map { ($0.element.id, $0.offset) })
    p("@links.Person.buddy.@count > 0") { buddiedBy(index[$0.id]!) > 0 }
    p("@links.Dog.owner.@count >= 2") { ownedBy(index[$0.id]!) >= 2 }
    p("@links.@count == 0") { buddiedBy(index[$0.id]!) + ownedBy(index[$0.id]!) == 0 }
    p("@links.Person.buddy.age > 60") { x in P.contains { $0.buddy == index[x.id]! && $0.age > 60 } }
    p("@links.Dog.owner.@max.age > 10") { x in (D.filter { $0.owner == index[x.id]! }.map(\.age).max() ?? -1) > 10 }
    d("owner.name == 'Ann'") { _, x in x.owner.map { P[$0].name == "Ann" } ?? false }
    d("owner == nil") { _, x in x.owner == nil }
    d("owner.age > 50") { _, x in x.owner.map { P[$0].age > 50 } ?? false }
    d("owner.name BEGINSWITH[c] 'j'") { _, x in x.owner.map { Ref.string(P[$0].name, "BEGINSWITH", "j", "c") } ?? false }
    d("owners.@count > 0") { i, _ in P.contains { $0.dogs.contains(i) } }
    d("owners.@count == 0") { i, _ in !P.contains { $0.dogs.contains(i) } }
    d("ANY owners.name BEGINSWITH[c] 'j'") { i, _ in P.contains { $0.dogs.contains(i) && Ref.string($0.name, "BEGINSWITH", "j", "c") } }
    d("owners.age > 40") { i, _ in P.contains { $0.dogs.contains(i) && $0.age > 40 } }
    d("@links.Person.dogs.@count > 1") { i, _ in P.reduce(0) { $0 + $1.dogs.filter { $0 == i }.count } > 1 }
    d("weight == nil AND age > 3") { _, x in x.weight == nil && x.age > 3 }
    d("name ==[cd] 'fifi'") { _, x in Ref.fold(x.name, "cd") == "fifi" }
    d("name CONTAINS[c] 'ŁAJ'") { _, x in Ref.string(x.name, "CONTAINS", "ŁAJ", "c") }
    // Mixed values: numbers compare by value across int, float, double and decimal; other types only with
    // their own; `@type` names the type of the value held.
    for c in ["3", "3.0", "2.5", "-7", "0"] {
        for op in ops { p("mixed \(op) \(c)") { Ref.ordered(Ref.number($0.mixed), op, Ref.dec(c)) } }
    }
    p("mixed == '3'") { $0.mixed == .string("3") }
    p("mixed != '3'") { $0.mixed != .string("3") }
    p("mixed BEGINSWITH[c] 'CA'") { if case .string(let s) = $0.mixed { return Ref.string(s, "BEGINSWITH", "CA", "c") } else { return false } }
    p("mixed == nil") { $0.mixed.isNull }
    p("mixed == true") { $0.mixed == .bool(true) }
    p("mixed IN {3, 'café', false}") { x in Ref.number(x.mixed) == 3 || x.mixed == .string("café") || x.mixed == .bool(false) }
    p("mixed == 3.0f") { Ref.number($0.mixed) == 3 }
    for (name, types) in Ref.typeNames {
        p("mixed.@type == '\(name)'") { types.contains(Ref.typeName($0.mixed)) }
        p("mixed.@type != '\(name)'") { !types.contains(Ref.typeName($0.mixed)) }
        p("ANY mixes.@type == '\(name)'") { $0.mixes.contains { types.contains(Ref.typeName($0)) } }
        p("ALL mixes.@type != '\(name)'") { $0.mixes.allSatisfy { !types.contains(Ref.typeName($0)) } }
        p("mixes.@type != '\(name)'") { $0.mixes.contains { !types.contains(Ref.typeName($0)) } }
        p("NONE mixes.@type == '\(name)'") { !$0.mixes.contains { types.contains(Ref.typeName($0)) } }
    }
    p("mixed.@type IN {'string', 'bool'}") { ["string", "bool"].contains(Ref.typeName($0.mixed)) }
    p("mixed.@type ==[c] 'STRING'") { Ref.typeName($0.mixed) == "string" }
    p("'double' == mixed.@type") { Ref.typeName($0.mixed) == "double" }
    p("age.@type == 'int'") { _ in true }
    p("height.@type == 'numeric'") { _ in true }
    p("nickname.@type == 'null'") { $0.nickname == nil }
    p("buddy.@type == 'objectlink'") { $0.buddy != nil }
    p("buddy.@type == 'object'") { _ in false }
    p("buddy.@type != 'null'") { $0.buddy != nil }
    d("ANY owners.buddy.@type == 'null'") { i, _ in P.contains { $0.dogs.contains(i) && $0.buddy == nil } }
    p("buddy.mixed.@type == 'string'") { buddy($0).map { Ref.typeName($0.mixed) == "string" } ?? false }
    p("mixes == 3") { $0.mixes.contains { Ref.number($0) == 3 } }
    p("ALL mixes > 0") { $0.mixes.allSatisfy { (Ref.number($0) ?? -1) > 0 } }
    p("3 IN mixes") { $0.mixes.contains { Ref.number($0) == 3 } }
    p("mixes.@count == 2") { $0.mixes.count == 2 }
    p("mixes.@sum == 6") { x in !x.mixes.contains(.double(.nan)) && x.mixes.compactMap(Ref.number).reduce(0, +) == 6 }
    // List literals with every operator: true when any element matches, on either side; ANY/ALL/NONE before a
    // list on the left.
    p("age == {17, 45, 89}") { [17, 45, 89].contains($0.age) }
    p("age != {17, 45}") { _ in true }
    p("age > {80, 85}") { $0.age > 80 }
    p("name BEGINSWITH {'J', 'Z'}") { $0.name.hasPrefix("J") || $0.name.hasPrefix("Z") }
    p("name BEGINSWITH[c] {'j', 'é'}") { Ref.string($0.name, "BEGINSWITH", "j", "c") || Ref.string($0.name, "BEGINSWITH", "é", "c") }
    p("name CONTAINS {'o', '東'}") { $0.name.contains("o") || $0.name.contains("東") }
    p("name LIKE[c] {'j*', '?ob'}") { Ref.string($0.name, "LIKE", "j*", "c") || Ref.string($0.name, "LIKE", "?ob", "c") }
    p("name ENDSWITH {'e', '🦄'}") { $0.name.hasSuffix("e") || $0.name.hasSuffix("🦄") }
    p("tags BEGINSWITH {'ca', '東'}") { $0.tags.contains { $0.hasPrefix("ca") || $0.hasPrefix("東") } }
    p("{17, 45, 89} == age") { [17, 45, 89].contains($0.age) }
    p("ANY {17, 45, 89} == age") { [17, 45, 89].contains($0.age) }
    p("ALL {10, 20} < age") { $0.age > 20 }
    p("NONE {10, 20, 30} == age") { ![10, 20, 30].contains($0.age) }
    p("{'Ann', 'Bob'} ==[c] name") { ["ann", "bob"].contains(Ref.foldCase($0.name)) }
    p("ANY {50, 60} IN scores") { $0.scores.contains(50) || $0.scores.contains(60) }
    // `.length` as `@size`; the float suffix; bin('...') literals.
    p("name.length > 5") { $0.name.utf8.count > 5 }
    p("blob.length == 3") { $0.blob?.count == 3 }
    p("buddy.name.length == 0") { buddy($0).map { $0.name.isEmpty } ?? false }
    p("weight == 70.5f") { $0.weight == 70.5 }
    p("weight > 2.2F") { ($0.weight ?? -.infinity) > 2.2 }
    p("blob == bin('Ann')") { $0.blob == Array("Ann".utf8) }
    p("blob BEGINSWITH bin(\"J\")") { $0.blob?.first == 74 }
    // Arithmetic: ints stay ints (integer division), a double makes a double, null stays null.
    p("age + 5 > 30") { $0.age + 5 > 30 }
    p("30 < age + 5") { $0.age + 5 > 30 }
    p("age / 10 == 3") { $0.age / 10 == 3 }
    p("age * 2 - 1 >= 99") { $0.age * 2 - 1 >= 99 }
    p("age - 3 * 4 < 10") { $0.age - 12 < 10 }
    p("age * (ageOpt + 1) > 20") { x in x.ageOpt.map { x.age * ($0 + 1) > 20 } ?? false }
    p("age - ageOpt > 10") { x in x.ageOpt.map { x.age - $0 > 10 } ?? false }
    p("age - ageOpt == nil") { $0.ageOpt == nil }
    p("height * 100 > 150") { $0.height * 100 > 150 }
    p("age / 2.0 == 10.5") { Double($0.age) / 2 == 10.5 }
    p("buddy.age + age > 100") { x in buddy(x).map { $0.age + x.age > 100 } ?? false }
    p("scores.@sum * 2 > 100") { $0.scores.reduce(0, +) * 2 > 100 }
    p("dogs.@count + 1 == 2") { $0.dogs.count == 1 }
    p("mixed + 1 == 4") { Ref.number($0.mixed).map { $0 + 1 == 4 } ?? false }
    p("balance + 0.05 == 12345678901234567890.15") { x in x.balance.map { $0 != "NaN" && Ref.dec($0) + Ref.dec("0.05") == Ref.dec("12345678901234567890.15") } ?? false }
    p("age == id - id + age") { _ in true }
    p("balance * 3 == 37037036703703703670.3") { $0.balance == "12345678901234567890.10" }
    p("balance / 8 < 0.05") { x in x.balance.map { $0 != "NaN" && Ref.dec($0) / 8 < Ref.dec("0.05") } ?? false }
    p("balance * 10 >= 1E21") { x in x.balance.map { $0 != "NaN" && Ref.dec($0) * 10 >= Ref.dec("1E21") } ?? false }
    // obj('Class', primary key): the object, or null when there is none (as in Realm).
    p("buddy == obj('Person', 1)") { $0.buddy == 7 }
    p("obj('Person', 1) == buddy") { $0.buddy == 7 }
    p("buddy != obj('Person', 1)") { $0.buddy != 7 }
    p("buddy IN {obj('Person', 1), obj('Person', -20)}") { $0.buddy == 7 || $0.buddy == 0 }
    p("buddy == obj('Person', 100000)") { $0.buddy == nil }
    p("buddy.buddy == obj('Person', 1)") { buddy($0)?.buddy == 7 }
    p("mixed == obj('Person', 1)") { _ in false }
    d("owner == obj('Person', 1)") { _, dog in dog.owner == 7 }
    d("owners == obj('Person', 1)") { i, _ in P[7].dogs.contains(i) }
    d("NONE owners == obj('Person', 1)") { i, _ in !P[7].dogs.contains(i) }
    // B64"…" is a string as Realm reads it; compared with binary data, its bytes.
    p("name == B64\"\(Base64.encode(Array("Ann".utf8)))\"") { $0.name == "Ann" }
    p("blob == bin(B64\"\(Base64.encode(Array("Ann".utf8)))\")") { $0.blob == Array("Ann".utf8) }
    // SUBQUERY over backlinks.
    p("SUBQUERY(@links.Person.buddy, $b, $b.age > 40).@count > 0") { x in P.contains { $0.buddy == index[x.id]! && $0.age > 40 } }
    d("SUBQUERY(owners, $o, $o.age > 40 AND $o.name BEGINSWITH[c] 'j').@count >= 1") { i, _ in P.contains { $0.dogs.contains(i) && $0.age > 40 && Ref.string($0.name, "BEGINSWITH", "j", "c") } }
    // Constants and logic.
    p("TRUEPREDICATE") { _ in true }
    p("FALSEPREDICATE") { _ in false }
    p("!FALSEPREDICATE") { _ in true }
    p("NOT TRUEPREDICATE") { _ in false }
    p("(age > 1 || height >= 2.25) && age == 4") { ($0.age > 1 || $0.height >= 2.25) && $0.age == 4 }
    p("age > 2 and age < 4") { $0.age > 2 && $0.age < 4 }
    p("age = 1 || age == 3") { $0.age == 1 || $0.age == 3 }
    p("active == true or active = TRUE") { $0.active }

    // Random combinations of the atoms above.
    let atoms = cases.filter { $0.cls == "Person" && !$0.query.contains("SUBQUERY") }
    var rng = SplitMix64(seed: 99)
    for _ in 0..<120 {
        let a = atoms[rng.below(atoms.count)], b = atoms[rng.below(atoms.count)], c = atoms[rng.below(atoms.count)]
        let ra = a.people!, rb = b.people!, rc = c.people!
        switch rng.below(5) {
        case 0: p("(\(a.query)) AND (\(b.query))") { ra($0) && rb($0) }
        case 1: p("(\(a.query)) || (\(b.query))") { ra($0) || rb($0) }
        case 2: p("NOT (\(a.query)) && (\(b.query) OR \(c.query))") { !ra($0) && (rb($0) || rc($0)) }
        // Each atom in parentheses: an atom may hold OR (`active == true or active = TRUE`).
        case 3: p("(\(a.query)) && (\(b.query)) && (\(c.query))") { ra($0) && rb($0) && rc($0) }
        default: p("!(\(a.query) || \(b.query)) OR \(c.query)") { !(ra($0) || rb($0)) || rc($0) }
        }
    }
    return cases
}

@Suite(.serialized) struct CorpusTests {
    @Test func corpusMatchesReferenceFilter() throws {
        let f = try Fixture()
        let cases = corpus(f)
        #expect(cases.count >= 300)
        let s = try f.db.snapshot()
        defer { s.close() }
        var failures = 0
        for c in cases {
            let expected = c.people.map { f.expectedPeople($0) } ?? f.expectedDogs(c.dogs!)
            do {
                let q = try Query.parse(c.query)
                let bound = try q.bind(to: c.cls, in: s)
                let got = try bound.evaluate(in: s)
                if got != expected {
                    failures += 1
                    Issue.record("\(c.query): got \(got.count) objects, expected \(expected.count)")
                }
                // Per-object evaluation (lists, index candidates) agrees with the scan.
                let allKeys = c.cls == "Person" ? f.personKeys : f.dogKeys
                let one = try bound.evaluate(in: s, keys: allKeys).sorted()
                if one != expected { Issue.record("\(c.query) per object: got \(one.count), expected \(expected.count)") }
                // And the printed query means the same.
                #expect(try Query.parse(q.description) == q, "\(c.query)")
            } catch {
                failures += 1
                Issue.record("\(c.query): \(error)")
            }
            if failures > 30 { break }
        }
        print("query corpus: \(cases.count) queries")
    }

    @Test func argumentsBindValues() throws {
        let f = try Fixture()
        #expect(try f.run("age > $0", [.value(.int(40))]) == f.expectedPeople { $0.age > 40 })
        #expect(try f.run("age > $0 || height == $1", [.value(.int(80)), .value(.double(1.5))]) == f.expectedPeople { $0.age > 80 || $0.height == 1.5 })
        #expect(try f.run("age BETWEEN {$0, $1}", [.value(.int(10)), .value(.int(20))]) == f.expectedPeople { (10...20).contains($0.age) })
        #expect(try f.run("name IN $0", [.list([.string("Ann"), .string("Bob")])]) == f.expectedPeople { ["Ann", "Bob"].contains($0.name) })
        #expect(try f.run("name.@count > $0", [.value(.int(6))]) == f.expectedPeople { $0.name.utf8.count > 6 })
        #expect(try f.run("buddy == $0", [.value(.link(f.personKeys[1]))]) == f.expectedPeople { $0.buddy == 1 })
        #expect(throws: QueryError.self) { try f.run("age > $1", [.value(.int(1))]) }
        #expect(throws: QueryError.self) { try f.run("age > $0", [.value(.string("x"))]) }
    }

    @Test func sortDistinctLimit() throws {
        let f = try Fixture()
        let P = f.people
        func keys(_ idx: [Int]) -> [ObjectKey] { idx.map { f.personKeys[$0] } }
        let byAgeThenName = P.indices.sorted { a, b in
            if P[a].age != P[b].age { return P[a].age < P[b].age }
            if !Ref.same(P[a].name, P[b].name) { return Ref.less(P[b].name, P[a].name) }
            return f.personKeys[a] < f.personKeys[b]
        }
        #expect(try f.run("TRUEPREDICATE SORT(age ASC, name DESC)") == keys(byAgeThenName))
        let byName = P.indices.sorted { a, b in
            Ref.less(P[a].name, P[b].name) || (Ref.same(P[a].name, P[b].name) && f.personKeys[a] < f.personKeys[b])
        }
        #expect(try f.run("TRUEPREDICATE SORT(name ASC)") == keys(byName))
        #expect(try f.run("TRUEPREDICATE SORT(name ASC) LIMIT(2)") == Array(keys(byName).prefix(2)))
        // Nulls first; stable: equal values in key order.
        let byNick = P.indices.sorted { a, b in
            switch (P[a].nickname, P[b].nickname) {
            case (nil, nil): return f.personKeys[a] < f.personKeys[b]
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?): return Ref.less(x, y) || (Ref.same(x, y) && f.personKeys[a] < f.personKeys[b])
            }
        }
        #expect(try f.run("TRUEPREDICATE SORT(nickname ASC)") == keys(byNick))
        // Through a to-one link, as Realm Core orders it: a null link sorts after every value ascending and
        // before every value descending (a null value through a link is a value, first ascending).
        let byBuddyAge = P.indices.sorted { a, b in
            let x = P[a].buddy.map { P[$0].age }, y = P[b].buddy.map { P[$0].age }
            if x != y { return (x ?? .max) > (y ?? .max) }
            return f.personKeys[a] < f.personKeys[b]
        }
        #expect(P.contains { $0.buddy == nil } && P.contains { $0.buddy != nil })
        #expect(try f.run("TRUEPREDICATE SORT(buddy.age DESC)") == keys(byBuddyAge))
        // 0: a null nickname, 1: a nickname, 2: no buddy.
        func buddyNick(_ i: Int) -> (Int, String) {
            guard let b = P[i].buddy else { return (2, "") }
            return P[b].nickname.map { (1, $0) } ?? (0, "")
        }
        let byBuddyNick = P.indices.sorted { a, b in
            let x = buddyNick(a), y = buddyNick(b)
            if x.0 != y.0 { return x.0 < y.0 }
            if !Ref.same(x.1, y.1) { return Ref.less(x.1, y.1) }
            return f.personKeys[a] < f.personKeys[b]
        }
        #expect(try f.run("TRUEPREDICATE SORT(buddy.nickname ASC)") == keys(byBuddyNick))
        #expect(try f.run("TRUEPREDICATE SORT(buddy.nickname ASC, name ASC)").suffix(P.filter { $0.buddy == nil }.count)
                == keys(P.indices.filter { P[$0].buddy == nil }.sorted { Ref.less(P[$0].name, P[$1].name) || (Ref.same(P[$0].name, P[$1].name) && f.personKeys[$0] < f.personKeys[$1]) }))
        // DISTINCT drops the objects whose path meets a null link, and keeps one for a null value.
        var seenNicks = Set<String?>()
        let distinctNicks = byBuddyNick.filter { P[$0].buddy != nil && seenNicks.insert(P[P[$0].buddy!].nickname).inserted }
        #expect(try f.run("TRUEPREDICATE SORT(buddy.nickname ASC) DISTINCT(buddy.nickname)") == keys(distinctNicks))
        #expect(try f.run("buddy == nil DISTINCT(buddy.age)").isEmpty)
        // DISTINCT keeps the first of each value in the current order; the clauses apply in the order written.
        var seen = Set<Int64>()
        let distinctAges = byAgeThenName.filter { seen.insert(P[$0].age).inserted }
        #expect(try f.run("TRUEPREDICATE SORT(age ASC, name DESC) DISTINCT(age)") == keys(distinctAges))
        #expect(try f.run("TRUEPREDICATE SORT(age ASC, name DESC) DISTINCT(age) LIMIT(3)") == keys(Array(distinctAges.prefix(3))))
        #expect(try f.run("age > 10 LIMIT(0)").isEmpty)
        #expect(try f.run("TRUEPREDICATE LIMIT(5) SORT(age DESC)").count == 5)
        let firstFive = Array(P.indices.sorted { f.personKeys[$0] < f.personKeys[$1] }.prefix(5))
        #expect(try f.run("TRUEPREDICATE LIMIT(5) SORT(age DESC)") == keys(firstFive.sorted { P[$0].age > P[$1].age || (P[$0].age == P[$1].age && f.personKeys[$0] < f.personKeys[$1]) }))
        #expect(try f.run("TRUEPREDICATE SORT(height ASC)").count == P.count)
        // Decimals in exact order (nulls, then NaN, then by value); DISTINCT takes 1.1 and 1.10, 0 and -0 as one.
        func decimalRank(_ v: String?) -> (Int, Decimal) { v == nil ? (0, 0) : (v == "NaN" ? (1, 0) : (2, Ref.dec(v!))) }
        let byBalance = P.indices.sorted { a, b in
            let x = decimalRank(P[a].balance), y = decimalRank(P[b].balance)
            if x.0 != y.0 { return x.0 < y.0 }
            if x.1 != y.1 { return x.1 < y.1 }
            return f.personKeys[a] < f.personKeys[b]
        }
        #expect(try f.run("TRUEPREDICATE SORT(balance ASC)") == keys(byBalance))
        var seenBalances: [(Int, Decimal)] = []
        let distinctBalances = byBalance.filter { i in
            let r = decimalRank(P[i].balance)
            if seenBalances.contains(where: { $0 == r }) { return false }
            seenBalances.append(r)
            return true
        }
        #expect(try f.run("TRUEPREDICATE SORT(balance ASC) DISTINCT(balance)") == keys(distinctBalances))
    }
}
