/// Typed links and nested collections in mixed values (format 7).
///
/// A typed link anywhere in a mixed value — the value itself, or inside its nested lists and dictionaries at
/// any depth — has a backlink on its target, as a link property's link does. The target class keeps one hidden
/// backlink property per origin (class, mixed property), `@links.<OriginClass>.<property>`, added the first
/// time a link from that property reaches that class (Realm Core's `find_or_add_backlink_column`); every link
/// nested in the property's values shares it, so an origin holding the same link twice has a counted entry.
extension WriteTransaction {
    // MARK: Validation

    /// Checks a mixed value that is a typed link or a nested collection (for property `p` of `c`, or an element
    /// of it): the file's format can hold it; nested collections go at most `ColumnCodec.maxNestingLevel`
    /// levels deep (as Realm Core, "Max nesting level reached"; the levels the decoder reads); dictionary keys
    /// are allowed; strings and data fit the size limit; links name their class (never an untyped `.link`),
    /// reach an existing object, and never an embedded one.
    func validateMixedStructure(_ value: Value, for p: PropertyInfo, in c: ClassInfo) throws {
        if !meta.hasPageBoundChecksums { throw formatTooOld("a typed link or nested collection in \(c.name).\(p.name)") }
        try validateMixed(value, level: 1, p, c)
    }

    private func validateMixed(_ value: Value, level: Int, _ p: PropertyInfo, _ c: ClassInfo) throws {
        switch value {
        case .link:
            throw StorageError.typeMismatch(className: c.name, property: p.name,
                                            expected: "a mixed value (a link in a mixed value names its class: a typed link)", got: "link")
        case .typedLink(let classID, let k):
            guard let target = catalogue.classInfo(id: classID) else { throw StorageError.noSuchClass("#\(classID)") }
            if target.isEmbedded {
                throw StorageError.invalidValue(className: c.name, property: p.name, reason: "a mixed value cannot link to an embedded object")
            }
            guard try locate(classID, k.rawValue) != nil else { throw StorageError.noSuchObject(className: target.name, key: k.rawValue) }
        case .list(let l):
            try checkLevel(level, p, c)
            for e in l { try validateMixed(e, level: level + 1, p, c) }
        case .dictionary(let d):
            try checkLevel(level, p, c)
            for (k, v) in d {
                try validateDictionaryKey(k, p, c)
                try validateMixed(v, level: level + 1, p, c)
            }
        case .string(let s) where s.utf8.count > SchemaLimits.maxValueBytes:
            throw StorageError.valueTooLarge(className: c.name, property: p.name, bytes: s.utf8.count, limit: SchemaLimits.maxValueBytes)
        case .data(let d) where d.count > SchemaLimits.maxValueBytes:
            throw StorageError.valueTooLarge(className: c.name, property: p.name, bytes: d.count, limit: SchemaLimits.maxValueBytes)
        default:
            return
        }
    }

    /// A collection at `level` (1: the property's value or element itself) may hold another only below the
    /// limit: the decoder refuses a collection at `maxNestingLevel` (`ColumnCodec.decodeMixed`).
    private func checkLevel(_ level: Int, _ p: PropertyInfo, _ c: ClassInfo) throws {
        guard level < ColumnCodec.maxNestingLevel else {
            throw StorageError.invalidValue(className: c.name, property: p.name,
                                            reason: "Max nesting level reached (collections in a mixed value nest at most \(ColumnCodec.maxNestingLevel) levels)")
        }
    }

    /// A dictionary key as Realm Core allows it: not empty, not starting with `$`, without `.`.
    func validateDictionaryKey(_ key: String, _ p: PropertyInfo, _ c: ClassInfo) throws {
        if key.isEmpty { throw StorageError.invalidValue(className: c.name, property: p.name, reason: "a dictionary key cannot be empty") }
        if key.hasPrefix("$") { throw StorageError.invalidValue(className: c.name, property: p.name, reason: "a dictionary key cannot start with '$'") }
        if key.contains(".") { throw StorageError.invalidValue(className: c.name, property: p.name, reason: "a dictionary key cannot contain '.'") }
        if key.utf8.count > SchemaLimits.maxValueBytes {
            throw StorageError.valueTooLarge(className: c.name, property: p.name, bytes: key.utf8.count, limit: SchemaLimits.maxValueBytes)
        }
    }

    // MARK: Backlinks

    /// The backlink property of class `targetClass` for typed links held by mixed property `p` of
    /// `originClass`; added to the target class the first time when `create` (else nil when there is none).
    func mixedBacklinkColumn(targetClass: UInt32, via p: PropertyInfo, from originClass: UInt32, create: Bool) throws -> PropertyInfo? {
        guard let ti = catalogue.classIndex(id: targetClass) else {
            throw StorageError.corrupt(path: database.path, location: "schema", reason: "typed link in \(p.name) to missing class \(targetClass)")
        }
        if let bl = catalogue.classes[ti].properties.first(where: {
            $0.type == .backlink && $0.targetClassID == originClass && $0.originColumnID == p.columnID
        }) { return bl }
        guard create else { return nil }
        let originName = catalogue.classInfo(id: originClass)?.name ?? "?"
        let bcol = catalogue.classes[ti].nextColumnID
        catalogue.classes[ti].nextColumnID += 1
        let bl = PropertyInfo(columnID: bcol, name: "@links.\(originName).\(p.name)", type: .backlink, flags: [.hidden],
                              targetClassID: originClass, originColumnID: p.columnID, indexRoot: 0)
        catalogue.classes[ti].properties.append(bl)
        catalogueChanged = true
        // The target's insert plan was made from its property list.
        plans[targetClass] = nil
        return bl
    }

    /// Records the backlinks of every typed link in `value`, held by mixed property `p` of object `origin`.
    func addMixedBacklinks(_ value: Value, via p: PropertyInfo, from originClass: UInt32, origin: UInt64) throws {
        for (tc, t) in MixedLinks.typedLinks(in: value) {
            let bl = try mixedBacklinkColumn(targetClass: tc, via: p, from: originClass, create: true)!
            try addBacklink(target: t.rawValue, in: tc, column: bl, origin: origin)
        }
    }

    /// Forgets the backlinks of every typed link in `value` (the old value of mixed property `p` of `origin`).
    func removeMixedBacklinks(_ value: Value, via p: PropertyInfo, from originClass: UInt32, origin: UInt64) throws {
        for (tc, t) in MixedLinks.typedLinks(in: value) {
            guard let bl = try mixedBacklinkColumn(targetClass: tc, via: p, from: originClass, create: false) else {
                throw StorageError.corrupt(path: database.path, location: "schema",
                                           reason: "no backlink column for the typed links of \(p.name) in class \(tc)")
            }
            try removeBacklink(target: t.rawValue, in: tc, column: bl, origin: origin)
        }
    }

    /// Every backlink property (in any class) that records typed links of mixed property `p` of `originClass`.
    func mixedBacklinkColumns(via p: PropertyInfo, from originClass: UInt32) -> [(classID: UInt32, column: PropertyInfo)] {
        var out: [(UInt32, PropertyInfo)] = []
        for c in catalogue.classes {
            for bl in c.properties where bl.type == .backlink && bl.targetClassID == originClass && bl.originColumnID == p.columnID {
                out.append((c.classID, bl))
            }
        }
        return out
    }

    // MARK: Deleting targets

    /// Stores `new` as the value of single-valued mixed property `op` of object `o` (its links to a deleted
    /// object gone), keeping its index.
    func storeNullified(_ originClass: UInt32, _ o: UInt64, _ op: PropertyInfo, old: Value, new: Value) throws {
        let (leaf, row) = try mutableRow(originClass, o)
        try leaf.set(row: row, property: op, new)
        if op.isIndexed {
            try removeFromIndex(originClass, op, old, o)
            try addToIndex(originClass, op, new, o)
        }
    }

    /// Removes the typed links `drop` picks from mixed property `op` of object `o`: a single value that is such
    /// a link becomes null; a list element that is one is erased; a nested dictionary's value becomes null.
    /// Backlinks are the caller's.
    func removeMixedLinks(_ originClass: UInt32, _ o: UInt64, _ op: PropertyInfo, where drop: (UInt32, ObjectKey) -> Bool) throws {
        if op.isList || op.isSet {
            let list = try listForUpdate(originClass, o, op)
            if case .list(let kept)? = MixedLinks.removingLinks(in: .list(list), where: drop) {
                dirtyLists[SlotKey(classID: originClass, key: o, columnID: op.columnID)] = kept
            }
        } else if op.isDictionary {
            guard let loc = try locate(originClass, o) else { return }
            let d = try dictionaryValues(originClass, o, op, loc)
            if case .dictionary(let kept)? = MixedLinks.removingLinks(in: .dictionary(d), where: drop) {
                dirtyDictionaries[SlotKey(classID: originClass, key: o, columnID: op.columnID)] = kept
            }
        } else {
            guard let loc = try locate(originClass, o) else { return }
            let old = try rawValue(loc, op)
            if let new = MixedLinks.removingLinks(in: old, where: drop) {
                try storeNullified(originClass, o, op, old: old, new: new)
            }
        }
    }

    /// Removes the backlinks of every typed link mixed property `p` of object `key` holds (it is being deleted).
    func removeOutgoingMixedBacklinks(_ classID: UInt32, _ key: UInt64, _ p: PropertyInfo, _ loc: RowLocation) throws {
        let values = p.isList || p.isSet ? try listValues(classID, key, p, loc)
            : p.isDictionary ? try dictionaryValues(classID, key, p, loc).values : [try rawValue(loc, p)]
        for v in values where MixedLinks.containsTypedLink(v) {
            try removeMixedBacklinks(v, via: p, from: classID, origin: key)
        }
    }

    // MARK: Testing

    /// Stores `value` in a single-valued property without validation or backlinks: a test plants what a damaged
    /// file could hold (a dangling typed link) and checks that `verify` finds it.
    func storeUncheckedForTesting(_ key: ObjectKey, _ p: PropertyHandle, _ value: Value) throws {
        let (c, info) = try currentInfo(p)
        let (leaf, row) = try mutableRow(c.classID, key.rawValue)
        try leaf.set(row: row, property: info, value)
    }
}
