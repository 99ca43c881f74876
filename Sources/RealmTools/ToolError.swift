import RealmStorage

/// Every error of the command-line tools: what failed and where (file, class, object index, property).
public enum ToolError: Error, CustomStringConvertible, Equatable {
    /// A JSON file does not parse.
    case json(file: String, JSONSyntaxError)
    /// A schema file is not a valid schema; `location` is like `Person.properties.age`.
    case schema(file: String, location: String, message: String)
    /// A value in a data file does not fit; `index` is the 0-based position in the class's array.
    case data(file: String, className: String, index: Int?, property: String?, message: String)
    /// A CSV file does not parse or a cell does not fit: `line` is where the record starts, `record` its
    /// number among the data records (1-based, the header not counted), `column` the property.
    case csv(file: String, line: Int, record: Int?, column: String?, message: String)
    /// The schema in the file conflicts with the one given.
    case conflict(String)
    /// A file could not be read or written.
    case io(path: String, message: String)
    /// The engine reported an error.
    case storage(StorageError)
    /// A problem with what was asked (unknown class, bad option value).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .json(let f, let e): return "\(f): invalid JSON at \(e)"
        case .schema(let f, let l, let m): return "\(f): \(l): \(m)"
        case .data(let f, let c, let i, let p, let m):
            var place = c
            if let i { place += "[\(i)]" }
            if let p { place += ".\(p)" }
            return "\(f): \(place): \(m)"
        case .csv(let f, let l, let r, let c, let m):
            var place = "line \(l)"
            if let r { place += " (record \(r))" }
            if let c { place += ", column '\(c)'" }
            return "\(f): \(place): \(m)"
        case .conflict(let m): return "schema conflict: \(m)"
        case .io(let p, let m): return "\(p): \(m)"
        case .storage(let e): return e.description
        case .invalidArgument(let m): return m
        }
    }

    /// Runs `body`, wrapping storage errors.
    static func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as StorageError {
            throw ToolError.storage(e)
        }
    }
}
