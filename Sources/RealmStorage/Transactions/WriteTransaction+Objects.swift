extension WriteTransaction {
    // MARK: Validation

    /// Checks that `value` fits property `p` of class `c`, converting where lossless (int → double, ...).
    func validated(_ value: Value, for p: PropertyInfo, in c: ClassInfo, element: Bool = false) throws -> Value {
        func mismatch(_ expected: String) -> StorageError {
            .typeMismatch(className: c.name, property: p.name, expected: expected, got: value.type?.description ?? "null")
        }
        let nullable = element ? (p.isOptional) : (p.isOptional || p.type == .link || p.type == .mixed)
        if case .null = value {
            if nullable { return .null }
            throw mismatch(p.type.description + " (not optional)")
        }
        switch (p.type, value) {
        case (.bool, .bool), (.int, .int), (.float, .float), (.double, .double), (.date, .date),
             (.objectId, .objectId), (.uuid, .uuid), (.decimal128, .decimal128):
            return value
        case (.float, .int(let i)): return .float(Float(i))
        case (.float, .double(let d)): return .float(Float(d))
        case (.double, .int(let i)): return .double(Double(i))
        case (.double, .float(let f)): return .double(Double(f))
        case (.string, .string(let s)):
            if s.utf8.count > SchemaLimits.maxValueBytes {
                throw StorageError.valueTooLarge(className: c.name, property: p.name, bytes: s.utf8.count, limit: SchemaLimits.maxValueBytes)
            }
            return value
        case (.data, .data(let d)):
            if d.count > SchemaLimits.maxValueBytes {
                throw StorageError.valueTooLarge(className: c.name, property: p.name, bytes: d.count, limit: SchemaLimits.maxValueBytes)
            }
            return value
        case (.mixed, .link): throw mismatch("a mixed value (a link in a mixed value names its class: a typed link)")
        case (.mixed, .typedLink), (.mixed, .list), (.mixed, .dictionary):
            try validateMixedStructure(value, for: p, in: c)
            return value
        case (.mixed, .string(let s)) where s.utf8.count > SchemaLimits.maxValueBytes:
            throw StorageError.valueTooLarge(className: c.name, property: p.name, bytes: s.utf8.count, limit: SchemaLimits.maxValueBytes)
        case (.mixed, .data(let d)) where d.count > SchemaLimits.maxValueBytes:
            throw StorageError.valueTooLarge(className: c.name, property: p.name, bytes: d.count, limit: SchemaLimits.maxValueBytes)
        case (.mixed, _): return value
        case (.link, .link(let k)):
            // An embedded object is linked only by the link or list element it was created in.
            if isEmbeddedClass(p.targetClassID) {
                throw StorageError.existingEmbeddedObject(className: c.name, property: p.name, embeddedClass: className(p.targetClassID))
            }
            guard try locate(p.targetClassID, k.rawValue) != nil else {
                let target = catalogue.classInfo(id: p.targetClassID)?.name ?? "?"
                throw StorageError.noSuchObject(className: target, key: k.rawValue)
            }
            return value
        default:
            throw mismatch(p.type == .link ? "a link to \(catalogue.classInfo(id: p.targetClassID)?.name ?? "?")" : p.type.description)
        }
    }

    func info(_ c: ClassInfo, _ name: String) throws -> PropertyInfo {
        guard let p = c.property(named: name) else { throw StorageError.noSuchProperty(className: c.name, property: name) }
        return p
    }

    // MARK: Creating objects

    /// Creates an object. `values` names properties; lists and sets take arrays of values (a set's are put in
    /// set order, a value equal to an earlier one dropped), dictionaries take `dictionaries`. Properties not
    /// named take their defaults. A duplicate primary key throws and changes nothing.
    @discardableResult
    public func createObject(_ table: TableHandle, _ values: [String: Value] = [:], lists: [String: [Value]] = [:],
                             dictionaries: [String: ValueDictionary] = [:]) throws -> ObjectKey {
        try checkActive()
        let c = try classInfo(table)
        if c.isEmbedded { throw StorageError.embeddedObjectCreation(className: c.name) }
        return try createObject(c, values, lists: lists, dictionaries: dictionaries)
    }

    /// Creates an object of class `c` from values named by property (validated here), whatever its class.
    func createObject(_ c: ClassInfo, _ values: [String: Value], lists: [String: [Value]],
                      dictionaries: [String: ValueDictionary] = [:]) throws -> ObjectKey {
        var row: [UInt32: Value] = [:]
        for (name, v) in values {
            let p = try info(c, name)
            guard !p.isCollection, p.type != .linkingObjects else {
                throw StorageError.typeMismatch(className: c.name, property: name, expected: "a list of values", got: "a single value")
            }
            row[p.columnID] = try validated(v, for: p, in: c)
        }
        return try createObject(c, row: row, lists: lists, dictionaries: dictionaries)
    }

    /// Creates an object from values given in the order of `columns` (the fast path for bulk inserts).
    @discardableResult
    public func createObject(_ table: TableHandle, columns: [PropertyHandle], values: [Value]) throws -> ObjectKey {
        try checkActive()
        precondition(columns.count == values.count, "one value per column")
        let plan = try insertPlan(table)
        if plan.classInfo.isEmbedded { throw StorageError.embeddedObjectCreation(className: plan.classInfo.name) }
        let (positions, inOrder) = try plan.positions(of: columns)
        // Values given for every property in the class's order are the row itself (no copy of the template
        // per object) unless one of them has to be converted.
        var row = inOrder ? values : plan.template
        for i in 0..<columns.count {
            let at = positions[i]
            let kind = plan.kinds[at]
            if kind.type == .link, kind.targetClassID != plan.classID, !kind.targetIsEmbedded, case .link(let k) = values[i] {
                guard try locate(kind.targetClassID, k.rawValue) != nil else {
                    throw StorageError.noSuchObject(className: catalogue.classInfo(id: kind.targetClassID)?.name ?? "?", key: k.rawValue)
                }
                if !inOrder { row[at] = values[i] }
                continue
            }
            // The common cases without copying the property's description; anything else (conversions,
            // nulls, links, errors) through `validated`.
            if kind.accepts(values[i]) {
                if !inOrder { row[at] = values[i] }
            } else {
                row[at] = try validated(values[i], for: plan.classInfo.properties[at], in: plan.classInfo)
            }
        }
        return try createObject(plan, row: row, lists: [String: [Value]](), dictionaries: [String: ValueDictionary]())
    }

    /// What inserting into a class needs, worked out once per schema state: nothing on the per-object
    /// path walks the property list or copies a `PropertyInfo`.
    final class InsertPlan {
        /// What the per-object path checks of a property, without its name (copying a `PropertyInfo` per
        /// value retains and releases its strings: `perf` put copies of class and property descriptions at
        /// ~8 % of a bulk insert).
        struct Kind {
            var type: PropertyType
            var targetClassID: UInt32
            var columnID: UInt32
            var indexRoot: UInt64
            /// A link to an embedded class (whose links `validated` refuses).
            var targetIsEmbedded = false

            /// Whether `value` is stored as given: same type, within the size limit. Nil and every conversion
            /// or error are left to `validated`.
            @inline(__always) func accepts(_ value: Value) -> Bool {
                switch (type, value) {
                case (.bool, .bool), (.int, .int), (.float, .float), (.double, .double), (.date, .date),
                     (.objectId, .objectId), (.uuid, .uuid), (.decimal128, .decimal128):
                    return true
                case (.string, .string(let s)): return s.utf8.count <= SchemaLimits.maxValueBytes
                default: return false
                }
            }
        }

        /// The class as the transaction using the plan started with it (its index roots are refreshed when
        /// the plan is handed to the next transaction).
        private(set) var classInfo: ClassInfo
        let classID: UInt32
        private(set) var properties: [PropertyInfo]
        private(set) var kinds: [Kind]
        let classIndex: Int
        let template: [Value]
        let columnIDs: [UInt32]
        /// Position of the primary key, and whether it is the object key (a required int).
        let primaryKey: Int?
        let keyIsValue: Bool
        /// Positions of indexed properties and of to-one links.
        let indexed: [Int]
        let links: [Int]
        /// Positions of single-valued mixed properties (their typed links have backlinks).
        let mixed: [Int]
        /// The last column list seen by `positions(of:)` (bulk inserts pass the same one every time).
        private var lastColumns: [UInt32] = []
        private var lastPositions: [Int] = []
        /// `lastPositions` are every property's, in the class's order.
        private var lastInOrder = false

        /// `embedded`: the IDs of the embedded classes (a class's embedded flag never changes, nor is a class ID
        /// used again, so a kept plan stays right).
        init(_ c: ClassInfo, classIndex: Int, embedded: Set<UInt32> = []) {
            classInfo = c
            classID = c.classID
            properties = c.properties
            kinds = c.properties.map {
                Kind(type: $0.type, targetClassID: $0.targetClassID, columnID: $0.columnID, indexRoot: $0.indexRoot,
                     targetIsEmbedded: $0.type == .link && embedded.contains($0.targetClassID))
            }
            self.classIndex = classIndex
            template = c.properties.map(\.defaultValue)
            columnIDs = c.properties.map(\.columnID)
            primaryKey = c.primaryKeyColumnID == 0 ? nil : c.properties.firstIndex(where: \.isPrimaryKey)
            keyIsValue = primaryKey.map { c.properties[$0].keyIsValue } ?? false
            indexed = c.properties.indices.filter { c.properties[$0].isIndexed }
            links = c.properties.indices.filter { c.properties[$0].type == .link && !c.properties[$0].isCollection }
            mixed = c.properties.indices.filter { c.properties[$0].type == .mixed && !c.properties[$0].isCollection }
        }

        /// Whether this plan, made for an earlier version of the catalogue, still describes class `c` at
        /// `classIndex`: the same class, properties, types, flags and targets (what a plan derives from).
        func matches(_ c: ClassInfo, classIndex: Int) -> Bool {
            guard classIndex == self.classIndex, c.classID == classID, c.primaryKeyColumnID == classInfo.primaryKeyColumnID,
                  c.name == classInfo.name else { return false }
            return PropertyInfo.sameShape(c.properties, properties)
        }

        /// Takes the class as a new transaction starts with it (a class the plan `matches`): its index and
        /// backlink tree roots, which every commit changes.
        func refresh(_ c: ClassInfo) {
            classInfo = c
            properties = c.properties
            for i in kinds.indices { kinds[i].indexRoot = properties[i].indexRoot }
        }

        @inline(__always) func position(of columnID: UInt32) -> Int? { columnIDs.firstIndex(of: columnID) }

        /// The row positions of `columns`, which must be single-valued properties of this class, and whether
        /// they are every property's in the class's order (a row of values for them is a whole row).
        func positions(of columns: [PropertyHandle]) throws -> (positions: [Int], inOrder: Bool) {
            if columns.count == lastColumns.count {
                var same = true
                for i in columns.indices where columns[i].info.columnID != lastColumns[i] || columns[i].classID != classInfo.classID {
                    same = false
                    break
                }
                if same { return (lastPositions, lastInOrder) }
            }
            var out: [Int] = []
            for p in columns {
                guard p.classID == classInfo.classID, let at = position(of: p.info.columnID), !p.info.isCollection,
                      p.info.type != .linkingObjects else {
                    throw StorageError.typeMismatch(className: classInfo.name, property: p.name,
                                                    expected: "a single-valued property of \(classInfo.name)", got: p.name)
                }
                out.append(at)
            }
            lastColumns = columns.map(\.info.columnID)
            lastPositions = out
            lastInOrder = out == Array(properties.indices)
            return (out, lastInOrder)
        }
    }

    func insertPlan(_ table: TableHandle) throws -> InsertPlan {
        try insertPlan(classID: table.classID)
    }

    func insertPlan(classID: UInt32) throws -> InsertPlan {
        if let p = plans[classID] { return p }
        let ci = try classIndex(classID)
        let c = catalogue.classes[ci]
        let p: InsertPlan
        if let kept = database.insertPlans[classID], kept.matches(c, classIndex: ci) {
            // The last transaction's plan: building one per transaction was a twentieth of a small commit.
            kept.refresh(c)
            p = kept
        } else {
            p = InsertPlan(c, classIndex: ci, embedded: Set(catalogue.classes.lazy.filter(\.isEmbedded).map(\.classID)))
            database.insertPlans[classID] = p
        }
        plans[classID] = p
        return p
    }

    /// Grows a table of dirty collections four times over when it is full: a transaction that inserts many
    /// objects with lists, sets or dictionaries adds one entry per object, and doubling moved every entry again
    /// at each growth (`perf`: 12 % of inserting 100,000 objects with a set and a dictionary).
    @inline(__always)
    static func makeRoomForOneMore<V>(_ table: inout [SlotKey: V]) {
        if table.count == table.capacity { table.reserveCapacity(max(64, 4 * table.capacity)) }
    }

    private func createObject(_ c: ClassInfo, row values: [UInt32: Value], lists: [String: [Value]],
                              dictionaries: [String: ValueDictionary]) throws -> ObjectKey {
        let plan = try insertPlan(classID: c.classID)
        var row = plan.template
        for (i, p) in c.properties.enumerated() { if let v = values[p.columnID] { row[i] = v } }
        return try createObject(plan, row: row, lists: lists, dictionaries: dictionaries)
    }

    /// Creates an object from a row parallel to the class's properties (already validated).
    private func createObject(_ plan: InsertPlan, row: [Value], lists: [String: [Value]],
                              dictionaries: [String: ValueDictionary]) throws -> ObjectKey {
        let classID = plan.classID
        var listValues: [(PropertyInfo, [Value])] = []
        var dictionaryValues: [(PropertyInfo, ValueDictionary)] = []
        if !lists.isEmpty || !dictionaries.isEmpty {
            let c = plan.classInfo
            for (name, vs) in lists {
                let p = try info(c, name)
                guard p.isList || p.isSet, p.type != .linkingObjects else {
                    throw StorageError.typeMismatch(className: c.name, property: name,
                                                    expected: p.isDictionary ? "a dictionary" : "a single value", got: "a list")
                }
                if p.isSet {
                    listValues.append((p, try setElements(vs, for: p, in: c)))
                } else {
                    listValues.append((p, try vs.map { try validated($0, for: p, in: c, element: true) }))
                }
            }
            for (name, d) in dictionaries {
                let p = try info(c, name)
                guard p.isDictionary else {
                    throw StorageError.typeMismatch(className: c.name, property: name,
                                                    expected: p.isCollection ? "a list of values" : "a single value", got: "a dictionary")
                }
                dictionaryValues.append((p, try dictionaryEntries(d, for: p, in: c)))
            }
        }
        let ci = plan.classIndex
        let key: UInt64
        var keyIsPrimaryKey = false
        if let pki = plan.primaryKey {
            if plan.keyIsValue, case .int(let v) = row[pki] {
                key = ObjectKey.fromPrimaryKey(v).rawValue
                keyIsPrimaryKey = true  // checked by the insert's own descent
            } else {
                if try !indexLookup(classID, plan.properties[pki], row[pki], limit: 1).isEmpty {
                    throw StorageError.duplicatePrimaryKey(className: plan.classInfo.name, property: plan.properties[pki].name)
                }
                key = catalogue.classes[ci].nextObjectKey
                catalogue.classes[ci].nextObjectKey += 1
            }
        } else {
            key = catalogue.classes[ci].nextObjectKey
            catalogue.classes[ci].nextObjectKey += 1
        }
        // The root is taken out and always put back, whatever happens: the path the insert made the
        // transaction's replaced committed nodes that are already freed (a refused duplicate leaves it, and a
        // commit writes it unchanged).
        let before = roots[classID]
        var root = before ?? .clean(catalogue.classes[ci].tableRoot)
        let inserted: Bool
        do {
            inserted = try TreeMutator(sink: self, properties: plan.properties).insert(&root, key: key, row: row)
        } catch {
            roots[classID] = root
            throw error
        }
        // Stored again only when the root is another node (dirtied, grown a level): a dirty root changes in place,
        // and storing it for every object was a second hashing of the class ID per insert.
        if !root.isSameNode(as: before) { roots[classID] = root }
        guard inserted else {
            precondition(keyIsPrimaryKey, "object key \(key) already exists")
            throw StorageError.duplicatePrimaryKey(className: plan.classInfo.name, property: plan.properties[plan.primaryKey!].name)
        }
        catalogue.classes[ci].objectCount += 1
        catalogueChanged = true
        for i in plan.indexed {
            let kind = plan.kinds[i]
            try addToIndex(classID, columnID: kind.columnID, indexRoot: kind.indexRoot, row[i], key,
                           isPrimaryKey: plan.primaryKey == i)
        }
        for i in plan.links {
            if case .link(let t) = row[i] {
                try addBacklink(target: t.rawValue, via: plan.properties[i], from: classID, origin: key)
            }
        }
        for i in plan.mixed where MixedLinks.containsTypedLink(row[i]) {
            try addMixedBacklinks(row[i], via: plan.properties[i], from: classID, origin: key)
        }
        for (p, vs) in listValues where !vs.isEmpty {
            WriteTransaction.makeRoomForOneMore(&dirtyLists)
            dirtyLists[SlotKey(classID: classID, key: key, columnID: p.columnID)] = vs
            if p.isElementIndexed { for v in vs { try addToIndex(classID, p, v, key) } }
            if p.type == .link {
                for case .link(let t) in vs { try addBacklink(target: t.rawValue, via: p, from: classID, origin: key) }
            } else if p.type == .mixed {
                for v in vs where MixedLinks.containsTypedLink(v) { try addMixedBacklinks(v, via: p, from: classID, origin: key) }
            }
        }
        for (p, d) in dictionaryValues where !d.isEmpty {
            WriteTransaction.makeRoomForOneMore(&dirtyDictionaries)
            dirtyDictionaries[SlotKey(classID: classID, key: key, columnID: p.columnID)] = d
            if p.type == .link {
                for case .link(let t) in d.values { try addBacklink(target: t.rawValue, via: p, from: classID, origin: key) }
            } else if p.type == .mixed {
                for v in d.values where MixedLinks.containsTypedLink(v) { try addMixedBacklinks(v, via: p, from: classID, origin: key) }
            }
        }
        return ObjectKey(key)
    }

    @discardableResult
    public func createObject(_ className: String, _ values: [String: Value] = [:], lists: [String: [Value]] = [:],
                             dictionaries: [String: ValueDictionary] = [:]) throws -> ObjectKey {
        try createObject(table(className), values, lists: lists, dictionaries: dictionaries)
    }

    // MARK: Setting values

    /// Sets a non-list property of an object.
    public func set(_ key: ObjectKey, _ p: PropertyHandle, _ value: Value) throws {
        try checkActive()
        let (c, info) = try currentInfo(p)
        guard !info.isCollection, info.type != .linkingObjects else {
            throw StorageError.typeMismatch(className: c.name, property: info.name, expected: "a list of values", got: "a single value")
        }
        let v = try validated(value, for: info, in: c)
        guard let loc = try locate(c.classID, key.rawValue) else { throw StorageError.noSuchObject(className: c.name, key: key.rawValue) }
        let old = try rawValue(loc, info)
        if old.isStoredIdentically(to: v) { return }
        if info.keyIsValue {
            throw StorageError.primaryKeyChange(className: c.name, property: info.name)
        }
        if info.isPrimaryKey {
            if try !indexLookup(c.classID, info, v, limit: 1).isEmpty {
                throw StorageError.duplicatePrimaryKey(className: c.name, property: info.name)
            }
        }
        let (leaf, row) = try mutableRow(c.classID, key.rawValue)
        try leaf.set(row: row, property: info, v)
        if info.isIndexed {
            try removeFromIndex(c.classID, info, old, key.rawValue)
            try addToIndex(c.classID, info, v, key.rawValue)
        }
        if info.type == .link {
            if case .link(let t) = old { try removeBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
            if case .link(let t) = v { try addBacklink(target: t.rawValue, via: info, from: c.classID, origin: key.rawValue) }
            // An embedded object goes with the link that owned it.
            if case .link(let t) = old, ownsTarget(info) { try deleteObject(info.targetClassID, t.rawValue) }
        } else if info.type == .mixed {
            if MixedLinks.containsTypedLink(old) { try removeMixedBacklinks(old, via: info, from: c.classID, origin: key.rawValue) }
            if MixedLinks.containsTypedLink(v) { try addMixedBacklinks(v, via: info, from: c.classID, origin: key.rawValue) }
        }
    }

    public func set(_ key: ObjectKey, _ className: String, _ property: String, _ value: Value) throws {
        let t = try table(className)
        try set(key, self.property(t, property), value)
    }

    /// Sets a property of every object of the class to `transform(oldValue)`, touching each leaf once.
    /// Returns the number of objects visited.
    @discardableResult
    public func updateAll(_ table: TableHandle, _ p: PropertyHandle, _ transform: (Value) throws -> Value) throws -> Int {
        try checkActive()
        let (c, info) = try currentInfo(p)
        guard !info.isCollection, info.type != .linkingObjects else {
            throw StorageError.typeMismatch(className: c.name, property: info.name, expected: "a list of values", got: "a single value")
        }
        if info.type == .link || info.type == .mixed || info.isIndexed || info.keyIsValue {
            // Links (typed links in mixed values too) and indexes need per-object bookkeeping (and a primary key
            // that is the key may not change).
            var n = 0
            for k in try keys(table) {
                try set(k, p, transform(try value(k, p)))
                n += 1
            }
            return n
        }
        var root = self.root(of: c.classID)
        // Put back whatever happens: the leaves made dirty so far replaced committed nodes that are already freed,
        // and a transform that throws must not leave the transaction reading (and committing) those.
        defer { roots[c.classID] = root }
        let mutator = TreeMutator(sink: self, properties: c.properties)
        var n = 0
        // A leaf at a time, its column decoded once and changed in place; the other columns stay as the
        // committed cluster holds them and are copied as they are at commit (DECISIONS 8).
        try mutator.forEachLeafForUpdate(&root) { leaf in
            try leaf.updateEach(property: info) { try validated(transform($0), for: info, in: c) }
            n += leaf.keys.count
        }
        return n
    }

    // MARK: Deleting objects

    /// Deletes an object: every to-one link to it becomes null and it is removed from every list. A typed link
    /// to it in a mixed value becomes null; inside a list of mixed values or a nested list it is erased, as a
    /// nested dictionary's value it becomes null (the key stays), as Realm Core.
    public func delete(_ table: TableHandle, _ key: ObjectKey) throws {
        try checkActive()
        let c = try classInfo(table)
        guard try locate(c.classID, key.rawValue) != nil else { throw StorageError.noSuchObject(className: c.name, key: key.rawValue) }
        try deleteObject(c.classID, key.rawValue)
    }

    public func delete(_ className: String, _ key: ObjectKey) throws { try delete(table(className), key) }

    /// Deletes every object of a class.
    public func deleteAll(_ table: TableHandle) throws {
        try checkActive()
        let c = try classInfo(table)
        // The embedded objects the class owns go with it (read before its links are dropped).
        let owned = try ownedObjects(of: c)
        if c.properties.contains(where: { $0.type == .link || $0.type == .backlink || $0.type == .mixed }) { try detachAll(c) }
        // Drop the whole tree (lists are values in its rows) and every index at once.
        try freeTree(root(of: c.classID), c)
        roots[c.classID] = .clean(0)
        let ci = try classIndex(c.classID)
        for p in c.properties where p.hasIndexTree {
            try dropIndex(c.classID, p)
            if let pi = catalogue.classes[ci].properties.firstIndex(where: { $0.columnID == p.columnID }) {
                catalogue.classes[ci].properties[pi].indexRoot = 0
            }
        }
        catalogue.classes[ci].objectCount = 0
        catalogueChanged = true
        // The class's insert plan remembers the index roots just freed.
        plans[c.classID] = nil
        try deleteOwned(owned)
    }

    /// Deletes embedded objects whose owners are gone. Those that are every object of their class (what deleting
    /// every owner usually leaves) go as the owners did, the class emptied whole with the objects it owns in
    /// turn; the others one by one.
    private func deleteOwned(_ owned: [(UInt32, UInt64)]) throws {
        var perClass: [UInt32: Int] = [:]
        for (classID, _) in owned { perClass[classID, default: 0] += 1 }
        var whole = Set<UInt32>()
        for (classID, n) in perClass {
            guard let i = catalogue.classIndex(id: classID), catalogue.classes[i].objectCount == UInt64(n) else { continue }
            whole.insert(classID)
            try deleteAll(TableHandle(name: catalogue.classes[i].name, classID: classID))
        }
        for (classID, key) in owned where !whole.contains(classID) { try deleteObject(classID, key) }
    }

    /// Before every object of `c` goes: links from other classes into `c` become null and leave their lists,
    /// found from c's backlink trees; then every backlink tree that holds links from or to `c` is dropped
    /// whole — a tree of a target class holds the links of one origin property only (DECISIONS 38, 50).
    /// Links between objects of `c` go with them.
    private func detachAll(_ c: ClassInfo) throws {
        // Incoming: the origins, read from c's backlink trees.
        for bl in c.properties where bl.type == .backlink && bl.targetClassID != c.classID {
            guard let oc = catalogue.classInfo(id: bl.targetClassID), let op = oc.property(column: bl.originColumnID) else { continue }
            var found: [UInt64] = []
            try forEachBacklink(c.classID, bl) { _, o in if found.last != o { found.append(o) } }
            found.sort()
            var origins: [UInt64] = []
            origins.reserveCapacity(found.count)
            for o in found where origins.last != o { origins.append(o) }
            if op.type == .link, !op.isCollection {
                // Every to-one link of `op` points into `c`: each origin's becomes null, the origins' leaves
                // reached in one walk of their tree.
                var root = self.root(of: oc.classID)
                try mutator(oc.classID).forEachRowForUpdate(&root, keys: origins[...]) { leaf, row in
                    try leaf.set(row: row, property: op, .null)
                }
                roots[oc.classID] = root
                continue
            }
            for o in origins {
                guard let at = try locate(oc.classID, o) else { continue }
                if op.type == .mixed {
                    // Typed links to any object of `c` go; the value's other links stay (their trees are others).
                    try removeMixedLinks(oc.classID, o, op) { tc, _ in tc == c.classID }
                } else if op.isList || op.isSet {
                    // A list or set of links holds links to `c` only: all of them go.
                    dirtyLists[SlotKey(classID: oc.classID, key: o, columnID: op.columnID)] = []
                } else if op.isDictionary {
                    // So does a dictionary of links: every value becomes null, its key stays.
                    var d = try dictionaryValues(oc.classID, o, op, at)
                    for k in d.keys { d[k] = .null }
                    dirtyDictionaries[SlotKey(classID: oc.classID, key: o, columnID: op.columnID)] = d
                } else {
                    let (leaf, row) = try mutableRow(oc.classID, o)
                    try leaf.set(row: row, property: op, .null)
                }
            }
        }
        for bl in c.properties where bl.type == .backlink { try dropBacklinkTree(c.classID, bl) }
        // Outgoing: the targets' trees for c's links hold nothing else.
        for p in c.properties where p.type == .link && p.targetClassID != c.classID {
            try dropBacklinkTree(p.targetClassID, backlinkColumn(target: p.targetClassID, via: p, from: c.classID))
        }
        for p in c.properties where p.type == .mixed {
            for (tc, bl) in mixedBacklinkColumns(via: p, from: c.classID) where tc != c.classID { try dropBacklinkTree(tc, bl) }
        }
        // Pending collection changes of the objects go with them.
        dirtyLists = dirtyLists.filter { $0.key.classID != c.classID }
        dirtyDictionaries = dirtyDictionaries.filter { $0.key.classID != c.classID }
    }

    /// Deletes an object and the embedded objects it owns, through every level of nesting (a work list, not
    /// recursion, so neither a deep nor a wide tree of owned objects can exhaust the stack).
    func deleteObject(_ classID: UInt32, _ key: UInt64) throws {
        var pending = [(classID, key)]
        while let (c, k) = pending.popLast() { try deleteOneObject(c, k, owned: &pending) }
    }

    /// Deletes one object; appends the embedded objects it owned (now without an owner) to `owned`.
    private func deleteOneObject(_ classID: UInt32, _ key: UInt64, owned: inout [(UInt32, UInt64)]) throws {
        let c = catalogue.classInfo(id: classID)!
        guard let loc = try locate(classID, key) else { return }
        // Incoming links: null to-one links and dictionary values, remove from lists and sets.
        for bl in c.properties where bl.type == .backlink {
            let origins = try backlinkKeys(classID, key, bl)
            guard !origins.isEmpty, let originClass = catalogue.classInfo(id: bl.targetClassID),
                  let op = originClass.property(column: bl.originColumnID) else { continue }
            for o in Set(origins) {
                if op.type == .mixed {
                    try removeMixedLinks(originClass.classID, o, op) { $0 == classID && $1.rawValue == key }
                } else if op.isList || op.isSet {
                    var list = try listForUpdate(originClass.classID, o, op)
                    list.removeAll { $0 == .link(ObjectKey(key)) }
                    dirtyLists[SlotKey(classID: originClass.classID, key: o, columnID: op.columnID)] = list
                } else if op.isDictionary {
                    // As Realm Core (`Dictionary::nullify`): the key stays, its value becomes null.
                    guard let at = try locate(originClass.classID, o) else { continue }
                    var d = try dictionaryValues(originClass.classID, o, op, at)
                    for (k, v) in d where v == .link(ObjectKey(key)) { d[k] = .null }
                    dirtyDictionaries[SlotKey(classID: originClass.classID, key: o, columnID: op.columnID)] = d
                } else {
                    guard try locate(originClass.classID, o) != nil else { continue }
                    let (leaf, row) = try mutableRow(originClass.classID, o)
                    try leaf.set(row: row, property: op, .null)
                }
            }
            try removeBacklinks(of: key, classID, bl)
        }
        // Outgoing links: remove this object from its targets' backlinks. (Re-locate: the row may have
        // become dirty above when the object linked to itself.)
        _ = loc
        guard let here = try locate(classID, key) else { return }
        for p in c.properties where p.type == .link {
            let owns = ownsTarget(p)
            if p.isList || p.isSet {
                for case .link(let t) in try listValues(classID, key, p, here) {
                    try removeBacklink(target: t.rawValue, via: p, from: classID, origin: key)
                    if owns { owned.append((p.targetClassID, t.rawValue)) }
                }
            } else if p.isDictionary {
                for case .link(let t) in try dictionaryValues(classID, key, p, here).values {
                    try removeBacklink(target: t.rawValue, via: p, from: classID, origin: key)
                    if owns { owned.append((p.targetClassID, t.rawValue)) }
                }
            } else if case .link(let t) = try rawValue(here, p) {
                try removeBacklink(target: t.rawValue, via: p, from: classID, origin: key)
                if owns { owned.append((p.targetClassID, t.rawValue)) }
            }
        }
        for p in c.properties where p.type == .mixed { try removeOutgoingMixedBacklinks(classID, key, p, here) }
        for p in c.properties where p.isElementIndexed {
            for e in elementEntries(try listValues(classID, key, p, here), key) { try withIndex(classID, p) { _ = try $0.remove(e, sink: self) } }
        }
        // Pending collection changes of the object go with it (its collections are values in its row, removed
        // below).
        for p in c.properties where p.isCollection && p.type != .linkingObjects {
            dirtyLists[SlotKey(classID: classID, key: key, columnID: p.columnID)] = nil
            dirtyDictionaries[SlotKey(classID: classID, key: key, columnID: p.columnID)] = nil
        }
        var root = self.root(of: classID)
        let removed = try TreeMutator(sink: self, properties: c.properties).remove(&root, key: key)
        roots[classID] = root
        for p in c.properties where p.isIndexed {
            try removeFromIndex(classID, p, removed[p.columnID] ?? p.defaultValue, key)
        }
        let ci = try classIndex(classID)
        catalogue.classes[ci].objectCount -= 1
        catalogueChanged = true
    }

    /// Frees every node of a committed or dirty tree (clusters, inner nodes, blobs, lists, backlink lists).
    func freeTree(_ child: TreeChild, _ c: ClassInfo) throws {
        switch child {
        case .clean(let ref):
            if ref == 0 { return }
            var refs: [UInt64] = []
            try collectTableRefs(ref, c, into: &refs)
            for r in refs { try free(r) }
        case .leaf(let l):
            // A dirty leaf's committed node was freed when it was decoded; its lazy columns still own their
            // blobs (materialised columns freed theirs). Lists are values of its rows.
            try l.freeLazyBlobs()
        case .inner(let n):
            for child in n.children { try freeTree(child, c) }
        }
    }
}
