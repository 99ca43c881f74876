import RealmStorage

/// Why a collection the browser was showing cannot be followed any more (another process changed it).
public struct CollectionGone: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

/// A change that was not made because there was nothing to change (a set element already there): said in the
/// status bar as information, not as an error.
public struct NothingToWrite: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

/// Sets, dictionaries and collections nested in mixed values: reading them along a path, and writing at a path.
extension BrowserData {
    // MARK: Reading

    /// The whole value a path starts from: a dictionary property as a dictionary, a list or set property as a
    /// list, any other property's value.
    static func rootValue(_ ref: ObjectRef, _ p: PropertySchema, in reader: any ObjectReader) throws -> Value {
        let h = try reader.property(reader.table(ref.className), p.name)
        if p.isDictionary { return .dictionary(try reader.dictionary(ref.key, h)) }
        if p.isList || p.isSet { return .list(try reader.list(ref.key, h)) }
        return try reader.value(ref.key, h)
    }

    /// The list or dictionary at `path` in property `property` of `ref`; throws when there is none there now.
    func nestedCollection(_ ref: ObjectRef, _ property: String, path: [PathStep]) throws -> Value {
        try BrowserData.nestedCollection(ref, property, path: path, in: snapshot)
    }

    static func nestedCollection(_ ref: ObjectRef, _ property: String, path: [PathStep], in reader: any ObjectReader) throws -> Value {
        guard let p = reader.classSchema(ref.className)?.property(named: property) else {
            throw CollectionGone("\(ref.className) has no property \(property) any more")
        }
        let v = try BrowserData.follow(rootValue(ref, p, in: reader), path)
        guard let v, v.isCollection else {
            throw CollectionGone("\(property)\(path.map(\.text).joined()) is no longer a list or dictionary")
        }
        return v
    }

    /// The value at `path` inside `v`, or nil when a step finds nothing.
    static func follow(_ v: Value, _ path: some Collection<PathStep>) -> Value? {
        var v = v
        for step in path {
            switch (step, v) {
            case (.index(let i), .list(let l)) where l.indices.contains(i): v = l[i]
            case (.key(let k), .dictionary(let d)):
                guard let x = d[k] else { return nil }
                v = x
            default: return nil
            }
        }
        return v
    }

    /// Whether an entries table shows a dictionary (key/value rows) rather than a list (index/value rows).
    public func isDictionaryTable(_ source: TableSource) -> Bool {
        guard case .entries(let o, let p, let path) = source else { return false }
        if path.isEmpty, let prop = classSchema(o.className)?.property(named: p), prop.isDictionary { return true }
        if case .dictionary? = try? nestedCollection(o, p, path: path) { return true }  // a read error shows in the cells
        return false
    }

    /// The key of a row of a dictionary table.
    public func entryKey(row: Int, in source: TableSource) throws -> String? {
        _ = try collection(source)
        guard case .entries(let o, let p, let path) = source,
              let keys = dictionaryKeys["entries \(o.className) \(o.key.rawValue) \(p) \(path)"] else { return nil }
        return row >= 0 && row < keys.count ? keys[row] : nil
    }

    /// What the values of an entries table are: the dictionary's own element type at its first level, mixed
    /// deeper (and anywhere in a mixed property).
    public func elementProperty(_ source: TableSource) -> PropertySchema? {
        guard case .entries(let o, let pName, let path) = source, var p = classSchema(o.className)?.property(named: pName) else {
            return nil
        }
        let nestedInMixed = !path.isEmpty || !(p.isDictionary || p.isList)
        p.isList = false
        p.isSet = false
        p.isDictionary = false
        if nestedInMixed {
            p.type = .mixed
            p.isOptional = true
            p.objectClassName = nil
        }
        return p
    }

    /// Whether `className` is an embedded class.
    public func isEmbedded(_ className: String?) -> Bool {
        className.flatMap { classSchema($0)?.isEmbedded } ?? false
    }

    /// The object a value leads to: a link of a property to `targetClass`, or a typed link in a mixed value.
    func linkedObject(_ v: Value, targetClass: String?) -> ObjectRef? {
        switch v {
        case .link(let k): return targetClass.map { ObjectRef(className: $0, key: k) }
        case .typedLink(let c, let k): return snapshot.className(classID: c).map { ObjectRef(className: $0, key: k) }
        default: return nil
        }
    }

    // MARK: Writing at a path

    /// Changes the value at `path` in property `property` of `ref` inside `tx`: `change` gets the value there
    /// (nil when there is none) and returns the new one (nil removes it: a dictionary key or a list element).
    /// One step into a dictionary or list property uses the engine's own entry operations (so an embedded
    /// object let go is deleted); deeper steps rewrite the element or entry they are nested in.
    static func change(_ tx: WriteTransaction, _ ref: ObjectRef, _ property: String, path: [PathStep],
                       _ change: (Value?) throws -> Value?) throws {
        let t = try tx.table(ref.className)
        let h = try tx.property(t, property)
        guard let p = tx.classSchema(ref.className)?.property(named: property) else {
            throw CollectionGone("\(ref.className) has no property \(property)")
        }
        if path.isEmpty {
            let old = try BrowserData.rootValueIn(tx, ref, p, h)
            guard let new = try change(old) else { throw CollectionGone("\(property) cannot be removed") }
            switch (p.isDictionary, p.isList || p.isSet, new) {
            case (true, _, .dictionary(let d)): try tx.setDictionary(ref.key, h, d)
            case (_, true, .list(let l)): if p.isSet { try tx.setAssign(ref.key, h, l) } else { try tx.setList(ref.key, h, l) }
            case (false, false, _): try tx.set(ref.key, h, new)
            default: throw CollectionGone("\(property) keeps its kind of collection")
            }
            return
        }
        let first = path[0], rest = path.dropFirst()
        if p.isDictionary, case .key(let k) = first {
            let old = try tx.dictionaryValue(ref.key, h, key: k)
            if rest.isEmpty {
                if let new = try change(old) { try tx.dictionarySet(ref.key, h, key: k, new) } else { try tx.dictionaryRemove(ref.key, h, key: k) }
            } else {
                guard let old else { throw CollectionGone("\(property) has no key '\(k)' any more") }
                try tx.dictionarySet(ref.key, h, key: k, try rewrite(old, rest, change))
            }
            return
        }
        if p.isList, case .index(let i) = first {
            let list = try tx.list(ref.key, h)
            guard list.indices.contains(i) || (rest.isEmpty && i == list.count) else {
                throw CollectionGone("\(property) has no element \(i) any more")
            }
            let old = i < list.count ? list[i] : nil
            if rest.isEmpty {
                if let new = try change(old) {
                    if old == nil { try tx.listAppend(ref.key, h, new) } else { try tx.listSet(ref.key, h, new, at: i) }
                } else {
                    try tx.listRemove(ref.key, h, at: i)
                }
            } else if let old {
                try tx.listSet(ref.key, h, try rewrite(old, rest, change), at: i)
            }
            return
        }
        guard !p.isCollection else { throw CollectionGone("\(property)\(first.text) is not in \(property)") }
        try tx.set(ref.key, h, try rewrite(tx.value(ref.key, h), path[...], change))
    }

    private static func rootValueIn(_ tx: WriteTransaction, _ ref: ObjectRef, _ p: PropertySchema, _ h: PropertyHandle) throws -> Value {
        if p.isDictionary { return .dictionary(try tx.dictionary(ref.key, h)) }
        if p.isList || p.isSet { return .list(try tx.list(ref.key, h)) }
        return try tx.value(ref.key, h)
    }

    /// `v` with the value at `path` changed (a position one past the end of a list appends).
    static func rewrite(_ v: Value, _ path: ArraySlice<PathStep>, _ change: (Value?) throws -> Value?) throws -> Value {
        guard let step = path.first else {
            guard let new = try change(v) else { throw CollectionGone("a nested collection cannot remove itself") }
            return new
        }
        let rest = path.dropFirst()
        switch (step, v) {
        case (.index(let i), .list(var l)):
            guard l.indices.contains(i) || (rest.isEmpty && i == l.count) else { throw CollectionGone("no element \(i) any more") }
            if rest.isEmpty {
                let new = try change(i < l.count ? l[i] : nil)
                switch (new, i < l.count) {
                case (let n?, true): l[i] = n
                case (let n?, false): l.append(n)
                case (nil, true): l.remove(at: i)
                case (nil, false): break
                }
            } else {
                l[i] = try rewrite(l[i], rest, change)
            }
            return .list(l)
        case (.key(let k), .dictionary(var d)):
            if rest.isEmpty {
                d[k] = try change(d[k])
            } else {
                guard let inner = d[k] else { throw CollectionGone("no key '\(k)' any more") }
                d[k] = try rewrite(inner, rest, change)
            }
            return .dictionary(d)
        default:
            throw CollectionGone("\(step.text) is no longer there")
        }
    }

    /// Why a dictionary key cannot be stored (Realm's rules), or nil when it can.
    public static func keyProblem(_ key: String) -> String? {
        if key.isEmpty { return "a key may not be empty" }
        if key.hasPrefix("$") { return "a key may not start with '$'" }
        if key.contains(".") { return "a key may not contain '.'" }
        if key.contains("\u{0}") { return "a key may not contain a NUL character" }
        return nil
    }
}
