import Foundation
import RealmQuery
import RealmStorage

/// The schema a query is checked against: the file's classes, and model classes not yet written to it.
struct RealmQuerySchema: QuerySchema {
    let realm: Realm
    let model: Object.Type?

    func classSchema(_ name: String) -> ClassSchema? {
        if let s = realm.reader.classSchema(name) { return s }
        if let m = model, m != DynamicObject.self, m.className() == name {
            do {
                // Nil: no table for the class yet and no write transaction to create it in.
                if let info = try realm.rlm.info(for: m) { return info.schema }
            } catch RealmError.invalidModel, RealmError.schemaMismatch {
                // The model cannot describe this class (an invalid model, or one the file's class differs from).
            } catch {
                realm.rlm.readFailed(error, "create the class \(name)")
            }
        }
        return realm.rlm.typedInfos.values.first { $0.name == name }?.schema
    }
}

extension Results {
    /// The objects matching a query in Realm's query language, with `$0`, `$1`, ... bound to `args`:
    /// `realm.objects(Dog.self).filter("color = 'tan' AND name BEGINSWITH $0", "B")`.
    ///
    /// Trailing `SORT(...)`, `DISTINCT(...)` and `LIMIT(n)` apply in the order written. Like every
    /// operation on `Results` it is evaluated lazily and again after each change. A query that does not
    /// parse or does not fit the class is a programmer error: the process stops with the full diagnostic
    /// (as realm-swift raises an exception). Use `filter(query:arguments:)` to get the error as a value.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        filterOrFail(predicateFormat, args)
    }

    func filterOrFail(_ predicateFormat: String, _ args: [Any]) -> Results<Element> {
        do {
            return try filter(query: predicateFormat, arguments: args)
        } catch let RealmError.query(e) {
            fatalError("invalid query for \(className): \(e)")
        } catch {
            fatalError("invalid query for \(className): \(error)")
        }
    }

    /// `filter(_:_:)` that throws `RealmError.query` with the diagnostic (message, column, caret line)
    /// instead of stopping: for queries typed by users (the browser's query bar, the command line).
    public func filter(query: String, arguments: [Any] = []) throws -> Results<Element> {
        var args = try arguments.map { try RealmQueryArguments.convert($0) }
        let parsed: RealmQuery.Query
        do {
            parsed = try RealmQuery.Query.parse(query, arguments: &args)  // `%K` takes its key path from args
        } catch {
            throw RealmError.query(error)
        }
        let realm = rlmRealm
        realm.verifyThread("Results")
        if let c = valueCollection {
            // Values: `self` stands for each value.
            _ = try c.bind(parsed, args)
            return appending(.query(parsed, args))
        }
        let schema = RealmQuerySchema(realm: realm, model: objectModel)
        if schema.classSchema(className) != nil {
            do {
                _ = try parsed.bind(to: className, in: schema, arguments: args)
            } catch {
                throw RealmError.query(error)
            }
        }
        return appending(.query(parsed, args))
    }

    /// Runs a query operation on the keys so far (`nil`: every object of the class, planned with indexes).
    func evaluateQuery(_ q: RealmQuery.Query, _ args: [QueryArgument], _ realm: Realm, _ keys: [ObjectKey]?) throws -> [ObjectKey] {
        let reader = realm.reader
        guard reader.classSchema(className) != nil else { return [] }
        let bound: BoundQuery
        do {
            bound = try q.bind(to: className, in: RealmQuerySchema(realm: realm, model: objectModel), arguments: args)
        } catch {
            // The schema changed under a query that was valid when made.
            throw RealmError.query(error)
        }
        return try RealmError.wrap {
            if let keys { return try bound.evaluate(in: reader, keys: keys) }
            return try bound.evaluate(in: reader)
        }
    }
}

enum RealmQueryArguments {
    /// A Swift value given for `$n`: a value, an object (its key), or a collection for `IN $n`.
    static func convert(_ any: Any) throws -> QueryArgument {
        if let v = try value(any) { return .value(v) }
        if let s = any as? any Sequence, !(any is String), !(any is Data) {
            var out: [Value] = []
            for element in s {
                guard let v = try value(element) else { throw unsupported(element) }
                out.append(v)
            }
            return .list(out)
        }
        throw unsupported(any)
    }

    static func unsupported(_ any: Any) -> RealmError {
        RealmError.invalidValue(className: "query", property: "argument", reason: "a \(type(of: any)) cannot be a query argument")
    }

    static func value(_ any: Any) throws -> Value? {
        switch any {
        case let o as Optional<Any>:
            guard case .some(let unwrapped) = o else { return .null }
            if !(type(of: unwrapped) == type(of: any)) { return try value(unwrapped) }
        }
        switch any {
        case is NSNull: return .null
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int8: return .int(Int64(v))
        case let v as Int16: return .int(Int64(v))
        case let v as Int32: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as UInt8: return .int(Int64(v))
        case let v as UInt16: return .int(Int64(v))
        case let v as UInt32: return .int(Int64(v))
        case let v as Double: return .double(v)
        case let v as Float: return .float(v)
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as Date: return .date(Timestamp(v))
        case let v as Data: return .data(Array(v))
        case let v as ObjectId: return .objectId(v)
        case let v as UUID: return .uuid(v)
        case let v as Decimal128: return .decimal128(v)
        case let v as AnyRealmValue: return v.stored
        case let v as _AnyPersistableEnum: return try value(v._rlmRawValueAny)
        case let o as Object:
            guard o._realm != nil else {
                throw RealmError.invalidValue(className: type(of: o).className(), property: "(query argument)",
                                              reason: "an unmanaged object cannot be compared; add it to the Realm first")
            }
            return .link(o._key)
        default: return nil
        }
    }
}
