/// One field of a CSV record: its text, and whether it was quoted. `export --format csv` writes null as an
/// empty field and the empty string as `""`, so the two are told apart by `quoted`.
public struct CSVField: Equatable, Sendable {
    public var text: String
    public var quoted: Bool

    public init(_ text: String, quoted: Bool = false) {
        self.text = text
        self.quoted = quoted
    }

    /// An empty field that was not quoted (null in the cell form of `export --format csv`).
    public var isNull: Bool { !quoted && text.isEmpty }
}

/// A CSV file that does not follow RFC 4180, at a line (1-based, counting the line breaks inside quoted
/// fields) and a field (1-based).
public struct CSVSyntaxError: Error, Equatable, CustomStringConvertible, Sendable {
    public let line: Int
    public let field: Int
    public let message: String

    public var description: String { "line \(line), field \(field): \(message)" }
}

/// Reads CSV as RFC 4180 has it, one record at a time: fields separated by commas, records by CRLF (LF and a
/// lone CR are taken too), a field in double quotes may hold commas, line breaks and quotes written twice
/// (`""`). The text is UTF-8; a byte order mark at the start is skipped. A quote inside an unquoted field,
/// text after a closing quote, a quoted field never closed and bytes that are not UTF-8 are errors naming the
/// line and field, never guessed at.
public struct CSVReader {
    private let bytes: [UInt8]
    private var i: Int
    /// The line the next record starts on.
    public private(set) var line = 1

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    }

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")

    /// The next record and the line it starts on; nil at the end of the input. A line break at the end of the
    /// last record is optional; an empty line is a record of one empty field.
    public mutating func next() throws(CSVSyntaxError) -> (fields: [CSVField], line: Int)? {
        guard i < bytes.count else { return nil }
        let start = line
        var fields: [CSVField] = []
        while true {
            let field = try readField(number: fields.count + 1)
            fields.append(field)
            if i >= bytes.count { return (fields, start) }
            let c = bytes[i]
            i += 1
            // After a comma comes another field (empty when the input ends there).
            if c == Self.comma { continue }
            // The field ended on a line break.
            if c == Self.cr, i < bytes.count, bytes[i] == Self.lf { i += 1 }
            line += 1
            return (fields, start)
        }
    }

    /// Reads one field, leaving `i` on the comma or line break after it (or at the end).
    private mutating func readField(number: Int) throws(CSVSyntaxError) -> CSVField {
        if i < bytes.count, bytes[i] == Self.quote {
            let openedOn = line
            i += 1
            var out: [UInt8] = []
            var from = i
            while true {
                guard i < bytes.count else {
                    throw CSVSyntaxError(line: openedOn, field: number,
                                         message: "a quoted field is never closed (a missing \" before the end of the file)")
                }
                let c = bytes[i]
                if c == Self.quote {
                    out.append(contentsOf: bytes[from..<i])
                    i += 1
                    if i < bytes.count, bytes[i] == Self.quote {
                        out.append(Self.quote)
                        i += 1
                        from = i
                        continue
                    }
                    if i < bytes.count, bytes[i] != Self.comma, bytes[i] != Self.cr, bytes[i] != Self.lf {
                        throw CSVSyntaxError(line: line, field: number,
                                             message: "text after the closing quote of a field (a quote inside a quoted field is written twice: \"\")")
                    }
                    return CSVField(try text(out, number), quoted: true)
                }
                if c == Self.lf || (c == Self.cr && !(i + 1 < bytes.count && bytes[i + 1] == Self.lf)) { line += 1 }
                i += 1
            }
        }
        let from = i
        while i < bytes.count {
            let c = bytes[i]
            if c == Self.comma || c == Self.cr || c == Self.lf { break }
            if c == Self.quote {
                throw CSVSyntaxError(line: line, field: number,
                                     message: "a quote inside a field that does not start with one (quote the whole field and write the quote twice)")
            }
            i += 1
        }
        return CSVField(try text(bytes[from..<i], number), quoted: false)
    }

    private func text<C: Collection<UInt8>>(_ b: C, _ number: Int) throws(CSVSyntaxError) -> String {
        guard let s = String(validating: b, as: UTF8.self) else {
            throw CSVSyntaxError(line: line, field: number, message: "not valid UTF-8")
        }
        return s
    }
}
