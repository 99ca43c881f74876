import RealmStorage

extension Query {
    /// Parses, binds and runs a query in one call: the keys of the matching objects of `className`.
    public static func evaluate(_ text: String, on className: String, in snapshot: any ObjectReader,
                                arguments: [QueryArgument] = []) throws -> [ObjectKey] {
        try Query.parse(text).bind(to: className, in: snapshot, arguments: arguments).evaluate(in: snapshot)
    }
}
