/// Where something is in the query text: a range of UTF-8 byte offsets.
///
/// Two ranges always compare equal and hash alike, so syntax trees compare by meaning: a query parsed,
/// printed and parsed again gives an equal tree although its tokens moved.
public struct SourceRange: Hashable, Sendable {
    public var start: Int
    public var end: Int

    public init(_ start: Int, _ end: Int) {
        self.start = start
        self.end = max(start, end)
    }

    public static func == (_: SourceRange, _: SourceRange) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}

    /// A range covering both.
    func union(_ other: SourceRange) -> SourceRange { SourceRange(min(start, other.start), max(end, other.end)) }
}

/// Every error a query can produce: what is wrong, and where in the query text.
///
/// `description` reads like a compiler diagnostic:
///
/// ```text
/// unknown property 'agee' on class 'Person'; did you mean 'age'? at column 1
///   agee > 3
///   ^~~~
/// ```
public struct QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The text is not a query: an unexpected token, an unterminated string, an unbalanced parenthesis.
        case syntax
        /// A key path names no property, or goes where it cannot.
        case unknownProperty
        /// The two sides cannot be compared, or the operator does not apply to the type.
        case typeMismatch
        /// An argument is missing or cannot be used where it appears.
        case invalidArgument
        /// A form the language has but not in this position (an aggregate where a value is needed, ...).
        case invalidQuery
        /// The class queried does not exist.
        case unknownClass
        /// The query was stopped before it finished (`QueryProgress.cancel()`): not a fault of the query.
        case cancelled
    }

    public var kind: Kind
    /// What is wrong, without the position.
    public var message: String
    /// The query text the error is about.
    public var query: String
    /// UTF-8 byte offsets of the offending token in `query`.
    public var range: SourceRange

    public init(_ kind: Kind, _ message: String, query: String, range: SourceRange) {
        self.kind = kind
        self.message = message
        self.query = query
        let n = query.utf8.count
        self.range = SourceRange(min(max(range.start, 0), n), min(max(range.end, 0), n))
    }

    /// The 1-based column of the offending token, counted in characters.
    public var column: Int { characterCount(upTo: range.start) + 1 }

    /// The offending token's width in characters (at least 1).
    var width: Int { max(1, characterCount(upTo: range.end) - characterCount(upTo: range.start)) }

    private func characterCount(upTo offset: Int) -> Int {
        let utf8 = query.utf8
        let end = utf8.index(utf8.startIndex, offsetBy: min(offset, utf8.count))
        // An offset inside a character counts that character as started.
        let prefix = String(decoding: utf8[utf8.startIndex..<end], as: UTF8.self)
        return prefix.count
    }

    /// The message with its column, the query on one line and a caret line under the offending token.
    public var description: String {
        let line = query.map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : $0 }
        let caret = String(repeating: " ", count: column - 1) + "^" + String(repeating: "~", count: width - 1)
        return "\(message) at column \(column)\n  \(String(line))\n  \(caret)"
    }

    public static func == (a: QueryError, b: QueryError) -> Bool {
        a.kind == b.kind && a.message == b.message && a.query == b.query
            && a.range.start == b.range.start && a.range.end == b.range.end
    }
}
