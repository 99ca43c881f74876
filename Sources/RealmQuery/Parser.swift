import Foundation
import RealmStorage

extension Query {
    /// Parses query text. Bad text is a `QueryError` with the position of the offending token.
    /// A text parsed lately is taken from a table shared by every thread (`ParsedQueries`).
    public static func parse(_ text: String) throws(QueryError) -> Query {
        try ParsedQueries.query(text, parse: uncachedParse)
    }

    /// `parse` without the table.
    static func uncachedParse(_ text: String) throws(QueryError) -> Query {
        var lexer = Lexer(text)
        var parser = Parser(text: text, tokens: try lexer.tokens())
        return try parser.query()
    }

    /// Parses query text whose `%K` placeholders take key paths from `arguments` (as NSPredicate's do):
    /// `"%K > %@"` with `["age", 30]` is `age > $0` with `[30]`. The arguments `%K` took are removed from
    /// `arguments`. `%K` cannot be mixed with `$n`.
    public static func parse(_ text: String, arguments: inout [QueryArgument]) throws(QueryError) -> Query {
        // Without `%K` the arguments play no part in parsing: the shared table applies.
        if !text.contains("%K") && !text.contains("%k") { return try parse(text) }
        var lexer = Lexer(text, keyPathArguments: arguments)
        var parser = Parser(text: text, tokens: try lexer.tokens())
        let q = try parser.query()
        for n in lexer.keyPathsTaken.reversed() { arguments.remove(at: n) }
        return q
    }

    /// `name` as a key path component in query text: escaped with `#` when it is a reserved word (`#any`), and
    /// quoted after `#` when it is not an identifier (`#"first name"`, `#"2nd"`, `#"a.b"`).
    public static func escapedName(_ name: String) -> String {
        // `@count`, `@links`: the aggregates and operators a key path's components hold with their `@`.
        guard Lexer.isIdentifier(name.hasPrefix("@") ? name.utf8.dropFirst() : name.utf8[...]) else {
            return "#" + Literal.quote(name, with: "\"")
        }
        return Parser.reserved.contains(name.lowercased()) ? "#" + name : name
    }

    /// Parses query text; `nil` text or a parse failure throws.
    public init(_ text: String) throws(QueryError) { self = try Query.parse(text) }
}

/// A recursive-descent parser. Precedence, loosest first: OR, AND, NOT, comparison.
struct Parser {
    let text: String
    let tokens: [Token]
    var index = 0
    var depth = 0
    static let maxDepth = 200

    /// Words that are never a name where a key path may start: they start a condition or are a value. A
    /// property named so is written `#any` (NSPredicate's escape) or given by `%K`.
    static let reserved: Set<String> = [
        "and", "or", "not", "any", "some", "all", "none", "truepredicate", "falsepredicate", "true", "false", "nil",
        "null", "subquery", "inf", "infinity", "nan",
    ]

    // The other keywords (`between`, `in`, `beginswith`, `endswith`, `contains`, `like`, `sort`, `distinct`,
    // `limit`) are keywords only where an operator or a clause goes; where a key path starts they are names,
    // as Realm's parser reads them (`sort == 1`, `SORT(limit ASC)`).

    init(text: String, tokens: [Token]) {
        self.text = text
        self.tokens = tokens
    }

    var current: Token { tokens[min(index, tokens.count - 1)] }
    mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    func error(_ message: String, _ range: SourceRange) -> QueryError {
        QueryError(.syntax, message, query: text, range: range)
    }

    /// The token as the user wrote it, for messages.
    func spelling(_ t: Token) -> String {
        if t.kind == .end { return "the end of the query" }
        let b = Array(text.utf8)
        let s = String(decoding: b[t.range.start..<min(t.range.end, b.count)], as: UTF8.self)
        return "'\(s.count > 30 ? String(s.prefix(30)) + "…" : s)'"
    }

    func isKeyword(_ t: Token, _ word: String) -> Bool {
        if case .identifier(let s) = t.kind { return s.count == word.count && s.lowercased() == word }
        return false
    }

    func isSymbol(_ t: Token, _ s: String) -> Bool { t.kind == .symbol(s) }

    mutating func expectSymbol(_ s: String, _ what: String) throws(QueryError) {
        guard isSymbol(current, s) else { throw error("expected '\(s)' \(what), found \(spelling(current))", current.range) }
        advance()
    }

    // MARK: Query

    mutating func query() throws(QueryError) -> Query {
        if current.kind == .end { throw error("empty query: expected a condition such as TRUEPREDICATE", current.range) }
        let p = try orPredicate()
        var ordering: [OrderingClause] = []
        while current.kind != .end {
            if isKeyword(current, "sort") { ordering.append(try sortClause()) }
            else if isKeyword(current, "distinct") { ordering.append(try distinctClause()) }
            else if isKeyword(current, "limit") { ordering.append(try limitClause()) }
            else if isSymbol(current, ")") {
                throw error("unbalanced parenthesis: ')' without a matching '('", current.range)
            } else {
                throw error("unexpected \(spelling(current)) after a complete condition; expected AND, OR, SORT, DISTINCT or LIMIT", current.range)
            }
        }
        return Query(predicate: p, ordering: ordering, text: text)
    }

    mutating func sortClause() throws(QueryError) -> OrderingClause {
        advance()
        try expectSymbol("(", "after SORT")
        var keys: [SortKey] = []
        repeat {
            if !keys.isEmpty { advance() }
            let k = try keyPath(allowVariable: false)
            var ascending = true
            if isKeyword(current, "asc") || isKeyword(current, "ascending") { advance() }
            else if isKeyword(current, "desc") || isKeyword(current, "descending") { ascending = false; advance() }
            else { throw error("expected ASC or DESC after a sort key path, found \(spelling(current))", current.range) }
            keys.append(SortKey(keyPath: k, ascending: ascending))
        } while isSymbol(current, ",")
        try expectSymbol(")", "to close SORT(")
        return .sort(keys)
    }

    mutating func distinctClause() throws(QueryError) -> OrderingClause {
        advance()
        try expectSymbol("(", "after DISTINCT")
        var paths: [KeyPath] = []
        repeat {
            if !paths.isEmpty { advance() }
            paths.append(try keyPath(allowVariable: false))
        } while isSymbol(current, ",")
        try expectSymbol(")", "to close DISTINCT(")
        return .distinct(paths)
    }

    mutating func limitClause() throws(QueryError) -> OrderingClause {
        advance()
        try expectSymbol("(", "after LIMIT")
        let start = current.range
        var negative = false
        if isSymbol(current, "-") { negative = true; advance() }
        guard case .number(let digits) = current.kind else {
            throw error("LIMIT needs a non-negative integer, found \(spelling(current))", current.range)
        }
        let r = start.union(current.range)
        guard !negative, let n = Int(digits), n >= 0 else {
            throw error("LIMIT needs a non-negative integer", r)
        }
        advance()
        try expectSymbol(")", "to close LIMIT(")
        return .limit(n, r)
    }

    // MARK: Predicates

    mutating func enter() throws(QueryError) {
        depth += 1
        if depth > Parser.maxDepth { throw error("query nested too deeply (more than \(Parser.maxDepth) levels)", current.range) }
    }

    mutating func orPredicate() throws(QueryError) -> Predicate {
        try enter()
        defer { depth -= 1 }
        var items = [try andPredicate()]
        while isKeyword(current, "or") || isSymbol(current, "||") {
            let op = current
            advance()
            if current.kind == .end { throw error("expected a condition after \(spelling(op))", current.range) }
            items.append(try andPredicate())
        }
        return items.count == 1 ? items[0] : .or(items)
    }

    mutating func andPredicate() throws(QueryError) -> Predicate {
        var items = [try notPredicate()]
        while isKeyword(current, "and") || isSymbol(current, "&&") {
            let op = current
            advance()
            if current.kind == .end { throw error("expected a condition after \(spelling(op))", current.range) }
            items.append(try notPredicate())
        }
        return items.count == 1 ? items[0] : .and(items)
    }

    mutating func notPredicate() throws(QueryError) -> Predicate {
        if isKeyword(current, "not") || isSymbol(current, "!") {
            let r = current.range
            advance()
            try enter()
            defer { depth -= 1 }
            if current.kind == .end { throw error("expected a condition after NOT", current.range) }
            return .not(try notPredicate(), r)
        }
        return try atom()
    }

    mutating func atom() throws(QueryError) -> Predicate {
        if isSymbol(current, "(") {
            let open = current.range
            advance()
            let p = try orPredicate()
            guard isSymbol(current, ")") else {
                if current.kind == .end { throw error("unbalanced parenthesis: '(' is never closed", open) }
                throw error("expected ')' to close the '(' at column \(column(open)), found \(spelling(current))", current.range)
            }
            advance()
            return p
        }
        if isKeyword(current, "truepredicate") { defer { advance() }; return .constant(true, current.range) }
        if isKeyword(current, "falsepredicate") { defer { advance() }; return .constant(false, current.range) }
        if isSymbol(current, ")") { throw error("unbalanced parenthesis: ')' without a matching '('", current.range) }
        return .comparison(try comparison())
    }

    func column(_ r: SourceRange) -> Int { QueryError(.syntax, "", query: text, range: r).column }

    mutating func comparison() throws(QueryError) -> Comparison {
        var quantifier: Comparison.Quantifier?
        let word = current
        if isKeyword(current, "any") || isKeyword(current, "some") { quantifier = .any; advance() }
        else if isKeyword(current, "all") { quantifier = .all; advance() }
        else if isKeyword(current, "none") { quantifier = Comparison.Quantifier.none; advance() }
        if quantifier != nil, case .identifier(let w) = word.kind, case .symbol(let s) = current.kind, s != "(" && s != "{" {
            // `any > 1`: most likely a property named so.
            throw error("expected a key path after \(spelling(word)), found \(spelling(current)); a property named \(spelling(word)) is written #\(w)", current.range)
        }
        if current.kind == .end {
            throw error(quantifier.map { "expected a key path after \($0.rawValue)" } ?? "expected a condition", current.range)
        }
        let lhs = try arithmetic(after: nil)
        let opToken = current
        let op: Comparison.Operator
        switch current.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .identifier(let w):
            switch w.lowercased() {
            case "beginswith": op = .beginsWith
            case "endswith": op = .endsWith
            case "contains": op = .contains
            case "like": op = .like
            case "in": op = .in
            case "between": op = .between
            default:
                // `first name == 'Ada'`: most likely a property whose name has a space.
                var hint = ""
                if case .keyPath(let path) = lhs, path.variable == nil, path.components.count == 1,
                   path.components[0].key == nil, path.components[0].index == nil, !path.components[0].name.hasPrefix("@") {
                    hint = "; a name with a space is written #\"\(path.components[0].name) \(w)\""
                }
                throw error("expected an operator after '\(lhs)', found \(spelling(current))\(hint)", current.range)
            }
        case .end: throw error("expected an operator after '\(lhs)'", current.range)
        default: throw error("expected an operator after '\(lhs)', found \(spelling(current))", current.range)
        }
        advance()
        var options: Comparison.Options = []
        var opRange = opToken.range
        if isSymbol(current, "["), tokens[min(index + 1, tokens.count - 1)].kind != .end {
            let open = current.range
            advance()
            guard case .identifier(let m) = current.kind else {
                throw error("expected a modifier c, d or cd inside '[ ]'", current.range)
            }
            for ch in m.lowercased() {
                switch ch {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                default: throw error("unknown modifier '[\(m)]'; expected [c], [d] or [cd]", open.union(current.range))
                }
            }
            advance()
            guard isSymbol(current, "]") else { throw error("expected ']' after the modifier", current.range) }
            opRange = opRange.union(current.range)
            advance()
            if !(op.isStringOperator || op == .equal || op == .notEqual || op == .in) {
                throw QueryError(.invalidQuery, "modifier [\(m)] cannot follow '\(op.rawValue)'", query: text, range: opRange)
            }
        }
        // `age == ANY {1, 2}`: a quantified list on the right, as Realm's grammar allows, is the same comparison
        // with the sides swapped (`ANY {1, 2} == age`).
        if let q = listQuantifier(), tokens[min(index + 1, tokens.count - 1)].kind == .symbol("{") {
            let qToken = current
            advance()
            let list = try arithmetic(after: qToken)
            guard quantifier == nil else {
                throw error("only one side of a comparison can take ANY, ALL or NONE", qToken.range)
            }
            guard let flipped = op.flipped else {
                throw error("\(q.rawValue) {…} on the right needs ==, !=, <, <=, > or >=, not \(op.rawValue)", qToken.range)
            }
            return Comparison(quantifier: q, lhs: list, op: flipped, options: options, rhs: lhs, range: opRange)
        }
        let rhs = try arithmetic(after: opToken)
        if op == .between {
            // `{low, high}`, or an argument holding two values (`BETWEEN %@` with [42, 43], as NSPredicate takes it).
            if case .argument = rhs {} else {
                guard case .list(let items, _) = rhs, items.count == 2 else {
                    throw error("BETWEEN needs a list of two values, {low, high}, or an argument holding two", rhs.range)
                }
            }
        }
        return Comparison(quantifier: quantifier, lhs: lhs, op: op, options: options, rhs: rhs, range: opRange)
    }

    /// The quantifier keyword at the current token, if any.
    func listQuantifier() -> Comparison.Quantifier? {
        if isKeyword(current, "any") || isKeyword(current, "some") { return .any }
        if isKeyword(current, "all") { return .all }
        if isKeyword(current, "none") { return Comparison.Quantifier.none }
        return nil
    }

    // MARK: Expressions

    /// Terms joined by `+` and `-`, left to right.
    mutating func arithmetic(after op: Token?) throws(QueryError) -> Expression {
        var e = try term(after: op)
        while isSymbol(current, "+") || isSymbol(current, "-") {
            let t = current
            advance()
            let r = try term(after: t)
            e = .arithmetic(t.kind == .symbol("+") ? .add : .subtract, e, r, e.range.union(r.range))
        }
        return e
    }

    /// Factors joined by `*` and `/`, left to right.
    mutating func term(after op: Token?) throws(QueryError) -> Expression {
        var e = try factor(after: op)
        while isSymbol(current, "*") || isSymbol(current, "/") {
            let t = current
            advance()
            let r = try factor(after: t)
            e = .arithmetic(t.kind == .symbol("*") ? .multiply : .divide, e, r, e.range.union(r.range))
        }
        return e
    }

    /// A value, or arithmetic in parentheses after an operator (`age * (height + 1)`; at the start of a
    /// condition a parenthesis groups conditions).
    mutating func factor(after op: Token?) throws(QueryError) -> Expression {
        if op != nil, isSymbol(current, "(") {
            let open = current
            advance()
            let e = try arithmetic(after: open)
            guard isSymbol(current, ")") else {
                throw error("expected ')' to close the '(' at column \(column(open.range)), found \(spelling(current))", current.range)
            }
            advance()
            return e
        }
        return try expression(after: op)
    }

    mutating func expression(after op: Token?) throws(QueryError) -> Expression {
        let t = current
        func noValue() -> QueryError {
            if let op {
                if t.kind == .end { return error("expected a value after \(spelling(op)), found the end of the query", t.range) }
                return error("expected a value after \(spelling(op))", t.range)
            }
            if isSymbol(t, ")") { return error("unbalanced parenthesis: ')' without a matching '('", t.range) }
            return error("expected a key path or a value, found \(spelling(t))", t.range)
        }
        switch t.kind {
        case .string(let s): advance(); return .literal(.string(s), t.range)
        case .binary(let b): advance(); return .literal(.binary(b), t.range)
        case .date(let d): advance(); return .literal(.date(d), t.range)
        case .objectId(let o): advance(); return .literal(.objectId(o), t.range)
        case .uuid(let u): advance(); return .literal(.uuid(u), t.range)
        case .argument(let n): advance(); return .argument(n, t.range)
        case .number: return try number(negative: false, start: t.range)
        case .symbol("-"), .symbol("+"):
            advance()
            return try number(negative: t.kind == .symbol("-"), start: t.range)
        case .symbol("{"):
            advance()
            var items: [Expression] = []
            if isSymbol(current, "}") {
                let r = t.range.union(current.range)
                advance()
                return .list([], r)
            }
            repeat {
                if !items.isEmpty { advance() }
                let v = try expression(after: items.isEmpty ? t : tokens[index - 1])
                if case .list = v { throw error("lists cannot be nested", v.range) }
                items.append(v)
            } while isSymbol(current, ",")
            guard isSymbol(current, "}") else {
                if current.kind == .end { throw error("unbalanced braces: '{' is never closed", t.range) }
                throw error("expected ',' or '}' in a list, found \(spelling(current))", current.range)
            }
            let r = t.range.union(current.range)
            advance()
            return .list(items, r)
        case .identifier(let w):
            switch w.lowercased() {
            case "true": advance(); return .literal(.bool(true), t.range)
            case "false": advance(); return .literal(.bool(false), t.range)
            case "nil", "null": advance(); return .literal(.null, t.range)
            case "inf", "infinity": advance(); return .literal(.double(.infinity), t.range)
            case "nan": advance(); return .literal(.double(.nan), t.range)
            case "subquery": return try subquery()
            case "obj" where index + 1 < tokens.count && isSymbol(tokens[index + 1], "("): return try objectLiteral()
            default:
                if Parser.reserved.contains(w.lowercased()) { throw noValue() }
                return .keyPath(try keyPath(allowVariable: true))
            }
        case .atIdentifier, .variable, .name: return .keyPath(try keyPath(allowVariable: true))
        default: throw noValue()
        }
    }

    /// `obj('Class', primaryKey)`, Realm's object literal; the current token is `obj`.
    mutating func objectLiteral() throws(QueryError) -> Expression {
        let start = current
        advance()
        let open = current
        advance()
        guard case .string(let cls) = current.kind else {
            throw error("obj(...) needs the class name in quotes and a primary key: obj('Person', 1)", current.range)
        }
        let classRange = current.range
        advance()
        guard isSymbol(current, ",") else {
            throw error("expected ',' and the primary key after the class name in obj(...), found \(spelling(current))", current.range)
        }
        let comma = current
        advance()
        let key = try expression(after: comma)
        switch key {
        case .literal, .argument: break
        default: throw error("the primary key in obj(...) is a value or an argument", key.range)
        }
        guard isSymbol(current, ")") else {
            throw error("expected ')' to close the '(' of obj at column \(column(open.range)), found \(spelling(current))", current.range)
        }
        let r = start.range.union(current.range)
        advance()
        return .object(ObjectLiteral(className: cls, primaryKey: key, classRange: classRange), r)
    }

    /// A number after an optional sign; `start` is the sign's (or the number's) range.
    mutating func number(negative: Bool, start: SourceRange) throws(QueryError) -> Expression {
        let t = current
        let r = start.union(t.range)
        if case .identifier(let w) = t.kind, ["inf", "infinity"].contains(w.lowercased()) {
            advance()
            return .literal(.double(negative ? -.infinity : .infinity), r)
        }
        if case .identifier(let w) = t.kind, w.lowercased() == "nan" {
            advance()
            return .literal(.double(.nan), r)
        }
        guard case .number(let digits) = t.kind else { throw error("expected a number after the sign", t.range) }
        advance()
        let lower = digits.lowercased()
        if lower.hasPrefix("0x") {
            let hex = lower.dropFirst(2)
            guard !hex.isEmpty, let u = UInt64(hex, radix: 16) else { throw error("invalid hexadecimal number '\(digits)'", r) }
            // Hex digits give the bit pattern: 0xFFFFFFFFFFFFFFFF is -1.
            let v = Int64(bitPattern: u)
            return .literal(.int(negative ? 0 &- v : v), r)
        }
        // The float suffix (`70.5f`): the number as a float holds it, compared as that value.
        if lower.hasSuffix("f"), lower.count > 1 {
            let body = lower.dropLast()
            guard body.utf8.allSatisfy({ Lexer.isDigit($0) || $0 == 46 || $0 == 101 || $0 == 43 || $0 == 45 }),
                  let d = Double(body) else { throw error("invalid number '\(digits)'", r) }
            let f = Double(Float(negative ? -d : d))
            return .literal(.double(f), r)
        }
        let isFloat = lower.contains(".") || lower.contains("e")
        if !isFloat {
            guard digits.utf8.allSatisfy(Lexer.isDigit) else { throw error("invalid number '\(digits)'", r) }
            if let v = Int64((negative ? "-" : "") + digits) { return .literal(.int(v), r) }
            // Beyond Int64 (`9999999999999999999999999999999999` for a decimal128): the number written, as a
            // decimal (Realm Core clamps it to Int64 instead).
            guard let exact = Decimal128(string: digits) else { throw error("invalid number '\(digits)'", r) }
            return .literal(.decimal(negative ? exact.negated : exact), r)
        }
        guard let d = Double(digits), let exact = Decimal128(string: digits),
              digits.utf8.allSatisfy({ Lexer.isDigit($0) || $0 == 46 || $0 == 101 || $0 == 69 || $0 == 43 || $0 == 45 }) else {
            throw error("invalid number '\(digits)'", r)
        }
        // The double when its shortest digits are the number written (`1.5`, `0.1`, `1.10`), else the
        // decimal: a decimal128 property compares with the number written, never a rounded double.
        if Decimal128(d) == exact { return .literal(.double(negative ? -d : d), r) }
        return .literal(.decimal(negative ? exact.negated : exact), r)
    }

    mutating func subquery() throws(QueryError) -> Expression {
        let start = current.range
        advance()
        try expectSymbol("(", "after SUBQUERY")
        let collection = try keyPath(allowVariable: true)
        try expectSymbol(",", "after the SUBQUERY collection")
        guard case .variable(let v) = current.kind else {
            throw error("expected a variable such as $x as the second SUBQUERY argument, found \(spelling(current))", current.range)
        }
        advance()
        try expectSymbol(",", "after the SUBQUERY variable")
        try enter()
        let p = try orPredicate()
        depth -= 1
        guard isSymbol(current, ")") else {
            if current.kind == .end { throw error("unbalanced parenthesis: SUBQUERY( is never closed", start) }
            throw error("expected ')' to close SUBQUERY(, found \(spelling(current))", current.range)
        }
        advance()
        guard isSymbol(current, "."), case .atIdentifier(let agg) = tokens[min(index + 1, tokens.count - 1)].kind,
              agg.lowercased() == "count" || agg.lowercased() == "size" else {
            throw QueryError(.invalidQuery, "SUBQUERY(...) must be followed by .@count", query: text, range: current.range)
        }
        advance()
        let end = current.range
        advance()
        return .subqueryCount(Subquery(collection: collection, variable: v, predicate: p), start.union(end))
    }

    mutating func keyPath(allowVariable: Bool) throws(QueryError) -> KeyPath {
        var variable: String?
        var components: [KeyPath.Component] = []
        let t = current
        switch t.kind {
        case .variable(let v) where allowVariable:
            variable = v
            advance()
            if !isSymbol(current, ".") { return KeyPath(variable: v, components: []) }
            advance()
        case .identifier(let w) where !Parser.reserved.contains(w.lowercased()), .name(let w):
            components.append(.init(w, t.range))
            advance()
            try subscripts(&components)
            if !isSymbol(current, ".") { return KeyPath(components: components) }
            advance()
        case .atIdentifier(let a):
            components.append(.init("@" + a, t.range))
            advance()
            if !isSymbol(current, ".") { return KeyPath(components: components) }
            advance()
        default:
            throw error("expected a key path, found \(spelling(t))", t.range)
        }
        while true {
            switch current.kind {
            case .identifier(let w), .name(let w): components.append(.init(w, current.range))
            case .atIdentifier(let a): components.append(.init("@" + a, current.range))
            default: throw error("expected a property name after '.', found \(spelling(current))", current.range)
            }
            advance()
            try subscripts(&components)
            if !isSymbol(current, ".") { break }
            advance()
        }
        return KeyPath(variable: variable, components: components)
    }

    /// `['key']`, `[0]`, `[$0]`, `[FIRST]`, `[LAST]`, `[*]` or `[SIZE]` after a key path component, as many as
    /// follow.
    mutating func subscripts(_ components: inout [KeyPath.Component]) throws(QueryError) {
        while isSymbol(current, "[") {
            let open = current.range
            switch tokens[min(index + 1, tokens.count - 1)].kind {
            case .string(let key):
                advance()
                advance()
                guard isSymbol(current, "]") else { throw error("expected ']' after the key '\(key)'", current.range) }
                components.append(.init(key: key, open.union(current.range)))
            case .number(let digits):
                guard let n = Int(digits) else { throw error("a position in brackets is a whole number, found \(digits)", tokens[index + 1].range) }
                advance()
                advance()
                guard isSymbol(current, "]") else { throw error("expected ']' after the position \(n)", current.range) }
                components.append(.init(index: n, open.union(current.range)))
            case .argument(let n):
                // `[$0]`, `[%@]`: a key or a position given by an argument (Realm's `path '[' ARG ']'`).
                advance()
                advance()
                guard isSymbol(current, "]") else { throw error("expected ']' after the argument $\(n)", current.range) }
                components.append(.init(argument: n, open.union(current.range)))
            case .symbol("*"):
                // `[*]`: every element or value.
                advance()
                advance()
                guard isSymbol(current, "]") else { throw error("expected ']' after '[*'", current.range) }
                components.append(.all(open.union(current.range)))
            case .identifier(let w) where ["first", "last", "size"].contains(w.lowercased()):
                // Realm's `[FIRST]` (position 0), `[LAST]` and `[SIZE]` (`.@size`).
                advance()
                advance()
                guard isSymbol(current, "]") else { throw error("expected ']' after '\(w)'", current.range) }
                let r = open.union(current.range)
                switch w.lowercased() {
                case "first": components.append(.init(index: 0, r))
                case "last": components.append(.init(index: KeyPath.Component.lastIndex, r))
                default: components.append(.init("@size", r))
                }
            default:
                return
            }
            advance()
        }
    }
}
