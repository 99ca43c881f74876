/// What `Database.verify()` found.
public struct VerifyReport: Sendable, CustomStringConvertible {
    public var version: UInt64 = 0
    public var classes = 0
    public var objects = 0
    public var nodes = 0
    public var usedPages: UInt64 = 0
    public var freePages: UInt64 = 0
    public var totalPages: UInt64 = 0
    /// Every problem found, each naming the structure and page. Empty when the file is sound.
    public var problems: [String] = []
    /// Damage found where no data is kept (nonzero bytes in the unused tail of a node's last page): the data
    /// reads intact, but the disk or something writing to the file changed bytes it should not have.
    public var warnings: [String] = []

    /// Where the pages go, by structure (`SpaceUse.label`s such as "Person: clusters", "Person.name: index"),
    /// and the bytes of each column inside its class's clusters.
    public var space: [String: SpaceUse] = [:]

    public var isOK: Bool { problems.isEmpty }

    public var description: String {
        var s = "version \(version): \(classes) classes, \(objects) objects, \(nodes) nodes; "
            + "\(usedPages) pages used, \(freePages) free, \(totalPages) in the file"
        if problems.isEmpty { s += "\nno problems found" } else {
            s += "\n\(problems.count) problem(s):\n" + problems.prefix(50).map { "  - " + $0 }.joined(separator: "\n")
        }
        if !warnings.isEmpty {
            s += "\n\(warnings.count) warning(s):\n" + warnings.prefix(50).map { "  - " + $0 }.joined(separator: "\n")
        }
        return s
    }
}

extension Database {
    /// Bytes of a page: every node fills a whole number of them.
    public static var bytesPerPage: Int { pageSize }
}

/// The space one structure of a file takes: its nodes, their bytes, and the pages they occupy (a node fills
/// whole pages; the rest of its last page is padding). For a column, the bytes of its blocks inside the clusters
/// (no nodes or pages of its own).
public struct SpaceUse: Sendable, Equatable {
    public var nodes = 0
    public var bytes = 0
    public var pages: UInt64 = 0

    public init(nodes: Int = 0, bytes: Int = 0, pages: UInt64 = 0) {
        self.nodes = nodes
        self.bytes = bytes
        self.pages = pages
    }
}

extension Database {
    /// Walks every structure of the newest version: checksums of every node, B+tree order and counts, values,
    /// links and backlinks, the one owner of each embedded object, indexes, and page accounting (every page used
    /// exactly once or free exactly once).
    public func verify() throws -> VerifyReport {
        try read { snapshot in
            var v = Verifier(snapshot: snapshot)
            return try v.run()
        }
    }
}

private struct Verifier {
    let s: Snapshot
    var report = VerifyReport()
    /// Page → owner description, for overlap detection.
    var owner: [UInt64: String] = [:]

    init(snapshot: Snapshot) { s = snapshot }

    mutating func problem(_ p: String) { report.problems.append(p) }

    /// An error as a problem's text: a corrupt error without the path every problem shares.
    func brief(_ error: Error) -> String {
        if case StorageError.corrupt(_, let location, let reason) = error { return "corrupt \(location): \(reason)" }
        return "\(error)"
    }

    mutating func account(_ label: String, nodes: Int = 0, bytes: Int, pages: UInt64 = 0) {
        report.space[label, default: SpaceUse()].nodes += nodes
        report.space[label, default: SpaceUse()].bytes += bytes
        report.space[label, default: SpaceUse()].pages += pages
    }

    /// Records that `ref` is a node owned by `what`, counted in the space of `label`; checks its checksum.
    mutating func claim(_ ref: UInt64, _ what: String, space label: String) -> Bool {
        let node: UnsafeRawBufferPointer
        do { node = try s.node(ref, expected: nil) } catch {
            // Outside the file, a bad length, failing its checksum (which reading checks) or authentication.
            problem("\(what): \(brief(error))")
            return false
        }
        // Hashed again: a read takes a node this process checked before as checked, and damage may be newer.
        // With its page (format 6): a whole node copied to another page (swapped, misdirected) fails here.
        if !checksumHolds(node, page: ref, pageBound: s.meta.hasPageBoundChecksums) {
            problem("\(what): corrupt node at page \(ref): \(Snapshot.checksumFailure(node, pageBound: s.meta.hasPageBoundChecksums))")
            return false
        }
        report.nodes += 1
        let pages = UInt64(pagesFor(bytes: node.count))
        // The rest of the node's last page is zero; a node only in the commit log has no such tail in the file.
        if s.logIndex?.node(ref) == nil, let base = node.baseAddress {
            let tail = UnsafeRawBufferPointer(start: base + node.count, count: Int(pages) * pageSize - node.count)
            if let i = tail.firstIndex(where: { $0 != 0 }) {
                report.warnings.append("\(what): page \(ref + UInt64((node.count + i) / pageSize)) has nonzero bytes after the end of "
                    + "the node at page \(ref), from byte \((node.count + i) % pageSize) (unused: the node's data is intact)")
            }
        }
        for p in ref..<ref + pages {
            if let other = owner[p] {
                problem("page \(p) is used twice: by \(what) and by \(other)")
                return false
            }
            owner[p] = what
        }
        report.usedPages += pages
        account(label, nodes: 1, bytes: node.count, pages: pages)
        return true
    }

    mutating func run() throws -> VerifyReport {
        report.version = s.meta.version
        report.totalPages = s.meta.pageCount
        for p: UInt64 in 0..<2 { owner[p] = "meta slot" }
        report.usedPages = 2
        account("meta slots", nodes: 2, bytes: 2 * pageSize, pages: 2)
        if s.meta.catalogueRef != 0, claim(s.meta.catalogueRef, "commit root", space: "commit root (catalogue, free list)") {
            do {
                let entries = try CommitRoot.freeList(s.node(s.meta.catalogueRef, expected: .catalogue), ref: s.meta.catalogueRef,
                                                      source: s, pageCount: s.meta.pageCount)
                for (e, _) in entries {
                    for p in e.page..<e.end {
                        if let other = owner[p] { problem("free page \(p) is also used by \(other)") } else { owner[p] = "free list" }
                    }
                    report.freePages += e.count
                    account("free pages", bytes: 0, pages: e.count)
                }
            } catch { problem(brief(error)) }
        }
        report.classes = s.catalogue.classes.count
        for c in s.catalogue.classes { checkClass(c) }
        // Every page must be accounted for.
        var leaked: [UInt64] = []
        for p in 2..<s.meta.pageCount where owner[p] == nil { leaked.append(p) }
        if !leaked.isEmpty {
            problem("\(leaked.count) page(s) neither used nor free, first at page \(leaked[0])")
        }
        return report
    }

    mutating func checkClass(_ c: ClassInfo) {
        let table = TableHandle(name: c.name, classID: c.classID)
        var count = 0
        var lastKey: UInt64?
        // Tree structure: node checksums, order, counts, levels.
        if c.tableRoot != 0 { _ = checkTree(c, c.tableRoot, level: nil, path: "\(c.name) tree") }
        do {
            try s.forEachKey(table) { k in
                if let l = lastKey, k.rawValue <= l { self.problem("\(c.name): keys out of order (\(l) then \(k.rawValue))") }
                if c.keyFromPrimaryKey == nil, k.rawValue >= c.nextObjectKey {
                    self.problem("\(c.name): key \(k.rawValue) is not below nextObjectKey \(c.nextObjectKey)")
                }
                lastKey = k.rawValue
                count += 1
                return true
            }
        } catch { problem("\(c.name): \(brief(error))"); return }
        report.objects += count
        if let pk = c.keyFromPrimaryKey {
            // The object key must be the primary key's value.
            let h = PropertyHandle(name: pk.name, type: pk.type, isList: false, isOptional: false, info: pk, classID: c.classID)
            do {
                for k in try s.keys(table) {
                    guard case .int(let v) = try s.value(k, h), ObjectKey.fromPrimaryKey(v) == k else {
                        problem("\(c.name) #\(k.rawValue): key does not match its primary key \(pk.name)")
                        break
                    }
                }
            } catch { problem("\(c.name): \(brief(error))") }
        }
        if UInt64(count) != c.objectCount { problem("\(c.name): catalogue says \(c.objectCount) objects, tree holds \(count)") }
        checkValues(c, table)
        for p in c.properties where p.hasIndexTree { checkIndex(c, table, p) }
        for p in c.properties where p.type == .backlink { checkBacklinkTree(c, p) }
        if c.isEmbedded { checkOwners(c, table) }
    }

    /// Each object of an embedded class has exactly one incoming link, from all its backlink trees together
    /// (none: an orphan no owner deletes; more: an object shared, which deleting one owner would take from
    /// the other).
    mutating func checkOwners(_ c: ClassInfo, _ table: TableHandle) {
        do {
            var links: [UInt64: Int] = [:]
            for bl in c.properties where bl.type == .backlink {
                try s.forEachBacklink(c.classID, bl) { t, _ in links[t, default: 0] += 1 }
            }
            for k in try s.keys(table) {
                switch links[k.rawValue, default: 0] {
                case 1: continue
                case 0: problem("\(c.name) #\(k.rawValue): embedded object without an owner (no link or list holds it)")
                case let n: problem("\(c.name) #\(k.rawValue): embedded object with \(n) incoming links (it must have exactly one owner)")
                }
            }
        } catch {
            problem("\(c.name): \(brief(error))")
        }
    }

    /// Returns (firstKey, count) of the subtree.
    mutating func checkTree(_ c: ClassInfo, _ ref: UInt64, level: Int?, path: String) -> (UInt64, Int)? {
        let isLeaf = (try? s.node(ref, expected: nil)).map(TableTree.isLeafNode) ?? false  // an unreadable node: claim says why
        guard claim(ref, path, space: isLeaf ? "\(c.name): clusters" : "\(c.name): tree inner nodes") else { return nil }
        do {
            let node = try s.node(ref, expected: nil)
            if TableTree.isLeafNode(node) {
                if let l = level, l != 0 { problem("\(path): leaf at page \(ref) where level \(l) was expected") }
                let v = try ClusterView(node: node, ref: ref, source: s)
                if v.count == 0 { problem("\(path): empty cluster at page \(ref)") ; return nil }
                for i in 1..<max(v.count, 1) where v.key(at: i) <= v.key(at: i - 1) {
                    problem("\(path): cluster at page \(ref) keys out of order at row \(i)")
                }
                claimCluster(c, v, path: path)
                return (v.key(at: 0), v.count)
            }
            guard node[0] == NodeType.tableInner.rawValue else { problem("\(path): page \(ref) has node type \(node[0])"); return nil }
            let v = try InnerView(node: node, ref: ref, source: s)
            if let l = level, l != v.level { problem("\(path): inner node at page \(ref) has level \(v.level), expected \(l)") }
            var total = 0
            for i in 0..<v.count {
                guard let (fk, n) = checkTree(c, v.ref(i), level: v.level - 1, path: "\(path)/\(i)") else { continue }
                if fk != v.firstKey(i) { problem("\(path): inner node at page \(ref) child \(i) first key \(v.firstKey(i)), child starts at \(fk)") }
                if n != v.childCount(i) { problem("\(path): inner node at page \(ref) child \(i) count \(v.childCount(i)), child holds \(n)") }
                total += n
            }
            return (v.firstKey(0), total)
        } catch {
            problem("\(path): \(brief(error))")
            return nil
        }
    }

    /// Claims the blobs, list nodes and backlink nodes a cluster references.
    mutating func claimCluster(_ c: ClassInfo, _ v: ClusterView, path: String) {
        var refs: [UInt64] = []
        do {
            for id in v.columnIDs {
                guard let e = v.columnEntry(id), let enc = ColumnEncoding(rawValue: e.encoding) else {
                    problem("\(path): cluster at page \(v.ref) column \(id) has an unknown encoding"); continue
                }
                account("\(c.name).\(c.property(column: id)?.name ?? "column \(id)"): column", bytes: e.length)
                guard enc == .bytes else { continue }
                let r = try ColumnReader(node: v.node, offset: e.offset, length: e.length, count: v.count, encoding: enc, type: .data, linkStorage: .raw)
                r.forEachBlobRef { refs.append($0) }
            }
            // Lists (and the backlink sets format 2 left in clusters not yet rewritten) are bytes columns too:
            // their long values are among these blobs.
            for r in refs { _ = claim(r, "\(path): blob", space: "\(c.name): blobs") }
        } catch {
            problem("\(path): \(brief(error))")
        }
    }

    /// Values decode; links point at live objects; backlinks are exactly the inverse of links.
    mutating func checkValues(_ c: ClassInfo, _ table: TableHandle) {
        do {
            let keys = try s.keys(table)
            for k in keys {
                for p in c.properties where p.hasColumn {
                    let h = PropertyHandle(name: p.name, type: p.type, isList: p.isList, isOptional: p.isOptional, info: p, classID: c.classID)
                    let values: [Value]
                    if p.isList || p.isSet {
                        values = try s.list(k, h)
                        if p.isSet, let i = SetElements.firstDisorder(values) {
                            problem("\(c.name) #\(k.rawValue).\(p.name): set elements \(i - 1) and \(i) are out of order or equal")
                        }
                    } else if p.isDictionary {
                        // Decoding checks the keys: valid UTF-8, strictly increasing.
                        values = try s.dictionary(k, h).values
                    } else {
                        values = [try s.value(k, h)]
                    }
                    if p.type == .mixed {
                        for v in values { try checkTypedLinks(v, of: k, c, p) }
                        continue
                    }
                    guard p.type == .link else { continue }
                    for case .link(let t) in values {
                        guard let target = s.catalogue.classInfo(id: p.targetClassID) else { continue }
                        guard try s.locate(target.classID, t.rawValue) != nil else {
                            problem("\(c.name) #\(k.rawValue).\(p.name): link to missing \(target.name) #\(t.rawValue)"); continue
                        }
                        guard let bl = target.properties.first(where: { $0.type == .backlink && $0.targetClassID == c.classID && $0.originColumnID == p.columnID }) else {
                            problem("\(target.name): no backlink column for \(c.name).\(p.name)"); continue
                        }
                        if try !s.hasBacklink(to: t.rawValue, from: k.rawValue, target.classID, bl) {
                            problem("\(c.name) #\(k.rawValue).\(p.name) links to \(target.name) #\(t.rawValue), which has no backlink to it")
                        }
                    }
                }
            }
        } catch {
            problem("\(c.name): \(brief(error))")
        }
    }

    /// The typed links in a mixed value of object `k`: each names an existing class that is not embedded and an
    /// existing object of it, which has a backlink to `k` through the property.
    mutating func checkTypedLinks(_ v: Value, of k: ObjectKey, _ c: ClassInfo, _ p: PropertyInfo) throws {
        for (tc, t) in MixedLinks.typedLinks(in: v) {
            let at = "\(c.name) #\(k.rawValue).\(p.name)"
            guard let target = s.catalogue.classInfo(id: tc) else { problem("\(at): typed link to missing class \(tc)"); continue }
            if target.isEmbedded { problem("\(at): typed link to an object of embedded class \(target.name)") }
            guard try s.locate(tc, t.rawValue) != nil else {
                problem("\(at): typed link to missing \(target.name) #\(t.rawValue)"); continue
            }
            guard let bl = target.properties.first(where: { $0.type == .backlink && $0.targetClassID == c.classID && $0.originColumnID == p.columnID }) else {
                problem("\(target.name): no backlink column for the typed links of \(c.name).\(p.name)"); continue
            }
            if try !s.hasBacklink(to: t.rawValue, from: k.rawValue, tc, bl) {
                problem("\(at) links to \(target.name) #\(t.rawValue), which has no backlink to it")
            }
        }
    }

    /// A backlink tree: its nodes, shape and entries; each entry names a live target and a live origin whose
    /// link property holds exactly as many links to the target as the entry records. (That every link has
    /// its entry is checked from the links' side, in `checkValues`.)
    mutating func checkBacklinkTree(_ c: ClassInfo, _ bl: PropertyInfo) {
        let what = "backlink tree \(c.name).\(bl.name)"
        guard let origin = s.catalogue.classInfo(id: bl.targetClassID), let op = origin.property(column: bl.originColumnID),
              (op.type == .link && op.targetClassID == c.classID) || op.type == .mixed else {
            problem("\(what) names a missing origin property"); return
        }
        let tree = EntryTree(root: bl.indexRoot)
        do {
            if bl.indexRoot != 0 {
                var refs: [UInt64] = []
                try tree.collectRefs(source: s, into: &refs)
                for r in refs { _ = claim(r, what, space: "\(c.name).\(bl.name): backlinks") }
            }
            _ = try tree.checkInvariants(source: s)
            let originTable = TableHandle(name: origin.name, classID: origin.classID)
            let h = try s.property(originTable, op.name)
            var counts: [(target: UInt64, origin: UInt64, links: Int)] = []
            try s.forEachBacklink(c.classID, bl) { t, o in
                if let last = counts.last, last.target == t, last.origin == o { counts[counts.count - 1].links += 1 } else { counts.append((t, o, 1)) }
            }
            for (t, o, recorded) in counts {
                guard try s.locate(c.classID, t) != nil else { problem("\(what): entry for missing \(c.name) #\(t)"); continue }
                guard try s.locate(origin.classID, o) != nil else {
                    problem("\(c.name) #\(t): backlink from missing \(origin.name) #\(o)"); continue
                }
                let links: Int
                if op.type == .mixed {
                    // Typed links to this object anywhere in the value (or in the collection's elements).
                    let values = op.isList || op.isSet ? try s.list(ObjectKey(o), h)
                        : op.isDictionary ? try s.dictionary(ObjectKey(o), h).values : [try s.value(ObjectKey(o), h)]
                    links = values.reduce(0) { n, v in
                        n + MixedLinks.typedLinks(in: v).filter { $0.classID == c.classID && $0.key.rawValue == t }.count
                    }
                } else {
                    links = op.isList || op.isSet ? try s.list(ObjectKey(o), h).filter { $0 == .link(ObjectKey(t)) }.count
                        : op.isDictionary ? try s.dictionary(ObjectKey(o), h).values.filter { $0 == .link(ObjectKey(t)) }.count
                        : (try s.value(ObjectKey(o), h) == .link(ObjectKey(t)) ? 1 : 0)
                }
                if links != recorded {
                    problem("\(c.name) #\(t): \(recorded) backlink(s) from \(origin.name) #\(o).\(op.name), which holds \(links) link(s)")
                }
            }
        } catch {
            problem("\(what): \(brief(error))")
        }
    }

    mutating func checkIndex(_ c: ClassInfo, _ table: TableHandle, _ p: PropertyInfo) {
        let tree = EntryTree(root: p.indexRoot)
        do {
            if p.indexRoot != 0 {
                var refs: [UInt64] = []
                try tree.collectRefs(source: s, into: &refs)
                for r in refs { _ = claim(r, "index \(c.name).\(p.name)", space: "\(c.name).\(p.name): index") }
            }
            let n = try tree.checkInvariants(source: s)
            var expected: [[UInt8]] = []
            let h = PropertyHandle(name: p.name, type: p.type, isList: false, isOptional: p.isOptional, info: p, classID: c.classID)
            for k in try s.keys(table) {
                // A set's index holds each of its elements' distinct entries (long strings sharing a cut
                // prefix have one); any other index the one value.
                var entries: [[UInt8]] = []
                for v in p.isElementIndexed ? try s.list(k, h) : [try s.value(k, h)] {
                    var e: [UInt8] = []
                    IndexKey.encode(v, into: &e)
                    IndexKey.appendObjectKey(k.rawValue, to: &e)
                    if !entries.contains(e) { entries.append(e) }
                }
                expected.append(contentsOf: entries)
            }
            if n != expected.count {
                problem("index \(c.name).\(p.name): \(n) entries for \(expected.count) \(p.isElementIndexed ? "elements" : "objects")")
            }
            var seenValues = Set<[UInt8]>()
            for e in expected {
                if try !tree.contains(e, source: s) { problem("index \(c.name).\(p.name): entry missing for object #\(IndexKey.objectKey(fromEntry: e))") ; break }
                if p.isPrimaryKey, !seenValues.insert(Array(e.dropLast(8))).inserted, !IndexKey.isTruncated(encoded: Array(e.dropLast(8))) {
                    problem("primary key \(c.name).\(p.name): duplicate value at object #\(IndexKey.objectKey(fromEntry: e))")
                }
            }
        } catch {
            problem("index \(c.name).\(p.name): \(brief(error))")
        }
    }
}
