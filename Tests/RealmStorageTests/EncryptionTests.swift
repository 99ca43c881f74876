import Foundation
import Testing
@testable import RealmStorage
@testable import realm_storage_worker

/// Encrypted files: AES-256-GCM pages, the key checked at open, every page authenticated on read.
@Suite struct EncryptionTests {
    static let key = (0..<64).map { UInt8(($0 * 7 + 3) & 0xFF) }
    static let otherKey = (0..<64).map { UInt8(($0 * 11 + 5) & 0xFF) }
    static let marker = "secret-marker-日本語-🔑"

    static let schema = ClassSchema(name: "Thing", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "text", type: .string, isIndexed: true),
        PropertySchema(name: "long", type: .string, isOptional: true),
        PropertySchema(name: "flag", type: .bool),
        PropertySchema(name: "f", type: .float),
        PropertySchema(name: "d", type: .double),
        PropertySchema(name: "when", type: .date),
        PropertySchema(name: "oid", type: .objectId),
        PropertySchema(name: "u", type: .uuid),
        PropertySchema(name: "dec", type: .decimal128),
        PropertySchema(name: "blob", type: .data, isOptional: true),
        PropertySchema(name: "any", type: .mixed, isOptional: true),
        PropertySchema(name: "tags", type: .string, isList: true),
    ])

    static func values(_ i: Int) -> [String: Value] {
        [
            "id": .int(Int64(i)), "text": .string("\(marker) \(i)"),
            "long": i % 50 == 0 ? .string(String(repeating: "長い", count: 3000)) : .null,
            "flag": .bool(i % 2 == 0), "f": .float(Float(i) / 4), "d": .double(Double(i) * 1e-3 - 7),
            "when": .date(Timestamp(seconds: Int64(i) * 86_400 - 2_000_000_000, nanoseconds: Int32(i % 1000))),
            "oid": .objectId(ObjectId(byteArray: (0..<12).map { UInt8(($0 + i) & 0xFF) })),
            "u": .uuid(UUID(uuidString: String(format: "%08X-0000-4000-8000-000000000000", i))!),
            "dec": .decimal128(Decimal128(string: "\(i).25")!),
            "blob": i % 100 == 0 ? .data((0..<20_000).map { UInt8(($0 * i) & 0xFF) }) : .null,
            "any": i % 3 == 0 ? .string("mixed \(i)") : .int(Int64(i)),
        ]
    }

    static func fill(_ db: Database, count: Int = 600) throws {
        try db.write { tx in
            try tx.createClass(schema)
            for i in 0..<count {
                _ = try tx.createObject("Thing", values(i), lists: ["tags": [.string("t\(i)"), .string("🏷️")]])
            }
        }
    }

    static func check(_ db: Database, count: Int = 600) throws {
        try db.read { s in
            let t = try s.table("Thing")
            #expect(try s.count(t) == count)
            for i in stride(from: 0, to: count, by: 7) {
                let k = try #require(try s.object(t, primaryKey: .int(Int64(i))))
                for (name, v) in values(i) { #expect(try s.value(k, s.property(t, name)) == v, "\(name) of \(i)") }
                #expect(try s.list(k, s.property(t, "tags")) == [.string("t\(i)"), .string("🏷️")])
            }
            if count > 42 { #expect(try s.find(s.property(t, "text"), equalTo: .string("\(marker) 42")).count == 1) }
        }
    }

    @Test func everyValueTypeRoundTripsAndNothingIsPlainOnDisk() throws {
        let dir = TempDir()
        let path = dir.file("e.realm")
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key))
            #expect(db.isEncrypted)
            try Self.fill(db)
            try Self.check(db)
        }
        let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key))
        try Self.check(db)
        #expect(try db.verify().isOK)
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(raw.range(of: Data(Self.marker.utf8)) == nil)
        #expect(raw.range(of: Data("Thing".utf8)) == nil)
        #expect(raw.prefix(8) == Data("RBDBCRYP".utf8))
    }

    @Test func keysAreCheckedAtOpenWithAClearErrorEach() throws {
        let dir = TempDir()
        let path = dir.file("e.realm"), plain = dir.file("p.realm")
        do { try Self.fill(try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key)), count: 10) }
        do { try Self.fill(try Database.open(path: plain), count: 10) }
        #expect(throws: StorageError.invalidKey(path: path)) {
            try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.otherKey))
        }
        #expect(throws: StorageError.encryptionKeyRequired(path: path)) { try Database.open(path: path) }
        #expect(throws: StorageError.encryptionKeyRequired(path: path)) {
            try Database.open(path: path, options: DatabaseOptions(readOnly: true))
        }
        #expect(throws: StorageError.notEncrypted(path: plain)) {
            try Database.open(path: plain, options: DatabaseOptions(encryptionKey: Self.key))
        }
        #expect(throws: StorageError.invalidKeyLength(32)) {
            try Database.open(path: dir.file("new.realm"), options: DatabaseOptions(encryptionKey: Array(Self.key.prefix(32))))
        }
        // The messages never hold the key.
        let hex = Self.otherKey.map { String(format: "%02x", $0) }.joined()
        #expect(!"\(StorageError.invalidKey(path: path))".contains(hex))
        // The right key still opens it, read-only too.
        try Self.check(try Database.open(path: path, options: DatabaseOptions(readOnly: true, encryptionKey: Self.key)), count: 10)
    }

    @Test func flippedBitsAreDetectedNeverReadAsValues() throws {
        let dir = TempDir()
        let original = dir.file("o.realm")
        do {
            let db = try Database.open(path: original, options: DatabaseOptions(encryptionKey: Self.key))
            try Self.fill(db, count: 300)
            // A last small commit: a flip in one of its pages reads as a torn commit, and the file opens at
            // the version before it, which holds every Thing.
            try db.write { try $0.createClass(ClassSchema(name: "Extra", properties: [PropertySchema(name: "n", type: .int)])) }
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: original))
        let pages = bytes.count / pageSize
        var rng = SplitMix64(seed: 99)
        var detected = 0, unaffected = 0
        for trial in 0..<24 {
            var damaged = bytes
            let page = 1 + Int(rng.next() % UInt64(pages - 1))
            let offset = page * pageSize + Int(rng.next() % UInt64(pageSize))
            damaged[offset] ^= UInt8(1 << (rng.next() % 8))
            let path = dir.file("d\(trial).realm")
            try damaged.write(to: URL(fileURLWithPath: path))
            do {
                let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key))
                let report = try db.verify()
                if report.isOK {
                    // The flip hit a page nothing reads (free space): everything must read back exactly.
                    try Self.check(db, count: 300)
                    unaffected += 1
                } else {
                    #expect(report.problems.contains { $0.contains("authentication") || $0.contains("page") }, "\(report)")
                    detected += 1
                }
            } catch let e as StorageError {
                switch e {
                case .corrupt, .truncated: detected += 1
                default: Issue.record("page \(page): unexpected error \(e)")
                }
            }
        }
        #expect(detected > 0)
        #expect(detected + unaffected == 24)
    }

    /// A page of the newest commit that fails authentication is damage, not a torn commit (its slot was written
    /// after it was synced): the file opens at the newest version and `verify()` names the page.
    @Test func aDamagedPageOfTheNewestCommitIsReportedNotRolledBack() throws {
        let dir = TempDir()
        let path = dir.file("t.realm")
        var logged: [Extent] = []
        var newest: UInt64 = 0
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key))
            try Self.fill(db, count: 100)
            try db.write { tx in _ = try tx.createObject("Thing", Self.values(100)) }
            (logged, newest) = try db.read { s in
                let root = try s.node(s.meta.catalogueRef, expected: .catalogue)
                return ((CommitRoot.logEntries(root) ?? []) + [Extent(page: s.meta.catalogueRef, count: 1)], s.version)
            }
        }
        let victim = try #require(logged.first)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let at = Int(EncryptedLayout.physical(victim.page)) * pageSize + 100
        bytes[at] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
        let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key))
        #expect(try db.read { $0.version } == newest)
        do {
            let report = try db.verify()
            #expect(report.problems.contains { $0.contains("page \(victim.page)") }, "\(report)")
        } catch let e as StorageError {
            guard case .corrupt(_, let location, _) = e else { throw e }
            #expect(location.contains("page \(victim.page)"), "\(e)")
        }
    }

    @Test func copiesEncryptDecryptAndChangeTheKey() throws {
        let dir = TempDir()
        let plain = dir.file("p.realm")
        let db = try Database.open(path: plain)
        try Self.fill(db, count: 200)
        try db.writeCopy(to: dir.file("e1.realm"), encryptionKey: Self.key)
        let e1 = try Database.open(path: dir.file("e1.realm"), options: DatabaseOptions(encryptionKey: Self.key))
        try Self.check(e1, count: 200)
        try e1.writeCopy(to: dir.file("e2.realm"), encryptionKey: Self.otherKey)
        #expect(throws: StorageError.invalidKey(path: dir.file("e2.realm"))) {
            try Database.open(path: dir.file("e2.realm"), options: DatabaseOptions(encryptionKey: Self.key))
        }
        try Self.check(try Database.open(path: dir.file("e2.realm"), options: DatabaseOptions(encryptionKey: Self.otherKey)), count: 200)
        try e1.writeCopy(to: dir.file("p2.realm"), encryptionKey: nil)
        try Self.check(try Database.open(path: dir.file("p2.realm")), count: 200)
        // writeCopy(to:) keeps the source's key.
        try e1.writeCopy(to: dir.file("e3.realm"))
        #expect(throws: StorageError.encryptionKeyRequired(path: dir.file("e3.realm"))) { try Database.open(path: dir.file("e3.realm")) }
    }

    @Test func compactionKeepsAFileEncrypted() throws {
        let dir = TempDir()
        let path = dir.file("c.realm")
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key))
            try Self.fill(db, count: 300)
            try db.write { tx in
                let t = try tx.table("Thing")
                for i in 0..<150 { try tx.delete(t, try #require(try tx.object(t, primaryKey: .int(Int64(i * 2))))) }
            }
            try db.compact()
            #expect(try db.verify().isOK)
        }
        let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key))
        #expect(try db.read { try $0.count("Thing") } == 150)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(8) == Data("RBDBCRYP".utf8))
    }

    @Test func manySmallCommitsAndReopens() throws {
        let dir = TempDir()
        let path = dir.file("m.realm")
        for round in 0..<5 {
            let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: Self.key))
            if round == 0 { try db.write { try $0.createClass(Self.schema) } }
            for i in 0..<40 {
                let id = round * 40 + i
                try db.write { tx in _ = try tx.createObject("Thing", Self.values(id)) }
            }
            #expect(try db.read { try $0.count("Thing") } == (round + 1) * 40)
            #expect(try db.verify().isOK)
        }
    }
}

/// Several processes on one encrypted file: each sees the others' commits (pages another process rewrote
/// are decrypted again, never read stale from this process's plaintext mirror).
@Suite(.serialized) struct EncryptedMultiProcessTests {
    @Test func writersAndAReaderInSeparateProcesses() throws {
        let dir = TempDir()
        let path = dir.file("shared.realm")
        let hex = EncryptionTests.key.map { String(format: "%02x", $0) }.joined()
        let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: EncryptionTests.key))
        try SharedCounter.ensureSchema(db)
        let writers = 2, perWriter = 120, total = writers * perWriter
        var children: [WorkerProcess] = []
        defer { for c in children { c.sendKill() } }
        let reader = try WorkerProcess(["reader", path, "120", "\(total)", "--key", hex], stderrPath: dir.file("reader.stderr"))
        children.append(reader)
        #expect(reader.readLine(timeout: 30)?.hasPrefix("start reader") == true)
        let ws = try (1...writers).map { w -> WorkerProcess in
            let c = try WorkerProcess(["writer", path, "\(w)", "\(perWriter)", "--key", hex], stderrPath: dir.file("w\(w).stderr"))
            children.append(c)
            return c
        }
        // This process reads meanwhile, with the same invariants, through its own mirror.
        var last = 0
        while ws.contains(where: { !$0.hasExited() }) {
            switch try db.read({ try SharedCounter.check($0) }) {
            case .failure(let e): Issue.record("in-process reader: \(e)")
            case .success(let c):
                #expect(c >= last)
                last = c
            }
            usleep(2000)
        }
        for w in ws {
            let status = try w.waitForExit(timeout: 60)
            #expect(WorkerProcess.exitedNormally(status), "\(w.arguments): \(WorkerProcess.describe(status))\(w.stderrTail())")
        }
        let status = try reader.waitForExit(timeout: 60)
        let out = reader.remainingLines(timeout: 5)
        #expect(WorkerProcess.exitedNormally(status) && out.last?.contains("max=\(total)") == true, "\(out)\(reader.stderrTail())")
        let final = try db.read { try SharedCounter.check($0) }
        guard case .success(let c) = final else { Issue.record("final state fails the invariants"); return }
        #expect(c == total)
        #expect(try db.verify().isOK)
    }
}

/// The decrypted pages can be given back between reads (`trimDecryptedPages`), so memory stays bounded.
@Suite struct DecryptedPagesTests {
    @Test func trimmingFreesTheMirrorOnlyWhenNothingReadsAndReadsStayExact() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("t.realm"), options: DatabaseOptions(encryptionKey: EncryptionTests.key))
        try EncryptionTests.fill(db, count: 400)
        try EncryptionTests.check(db, count: 400)
        #expect(db.decryptedBytes > 0)
        let s = try db.snapshot()
        #expect(!db.trimDecryptedPages())        // a snapshot is open: nothing freed
        s.close()
        let tx = try db.beginWrite()
        #expect(!db.trimDecryptedPages())        // nor while a write transaction is
        tx.rollback()
        #expect(db.trimDecryptedPages())
        #expect(db.decryptedBytes == 0)
        try EncryptionTests.check(db, count: 400)   // decrypted again, exactly
        try db.write { tx in _ = try tx.createObject("Thing", EncryptionTests.values(400)) }
        #expect(db.trimDecryptedPages())
        try EncryptionTests.check(db, count: 401)
        #expect(try db.verify().isOK)
        #expect(!(try Database.open(path: dir.file("plain.realm"))).trimDecryptedPages())
    }

    /// One scan of more decrypted pages than the budget stays within it (DECISIONS 41): the pages behind
    /// are given back between leaves, the path being walked is kept, and every value read is exact.
    @Test func aLongScanGivesDecryptedPagesBackAsItGoes() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("big.realm"), options: DatabaseOptions(encryptionKey: EncryptionTests.key))
        let count = 70_000  // two levels of inner nodes, ~10 MB of pages
        try db.write { tx in
            try tx.createClass(ClassSchema(name: "Row", properties: [
                PropertySchema(name: "n", type: .int, isIndexed: true), PropertySchema(name: "text", type: .string),
            ]))
            let t = try tx.table("Row")
            let columns = try ["n", "text"].map { try tx.property(t, $0) }
            for i in 0..<count {
                try tx.createObject(t, columns: columns, values: [.int(Int64(i)), .string("row \(i) " + String(repeating: "é", count: i % 90))])
            }
        }
        #expect(db.trimDecryptedPages())
        db.decryptedPageBudget = 512 << 10
        var peak = 0, seen = 0, sum: Int64 = 0
        try db.read { s in
            let t = try s.table("Row")
            let n = try s.property(t, "n"), text = try s.property(t, "text")
            try s.scan(t) { leaf in
                let ns = try leaf.column(n), texts = try leaf.column(text)
                for r in 0..<leaf.count {
                    let i = ns.int(r)
                    sum += i
                    #expect(try texts.value(r) == .string("row \(i) " + String(repeating: "é", count: Int(i) % 90)))
                }
                seen += leaf.count
                peak = max(peak, db.decryptedBytes)
                return true
            }
            // Iterating keys and reading each object walks the tree the same way.
            var keys = 0
            try s.forEachKey(t) { k in
                if keys % 997 == 0 { _ = try s.value(k, n) }
                keys += 1
                peak = max(peak, db.decryptedBytes)
                return true
            }
            #expect(keys == count)
            #expect(sum == Int64(count) * Int64(count - 1) / 2)
            // A loop of single reads in key order gives pages back when it says it holds nothing.
            var all: [ObjectKey] = []
            try s.forEachKey(t) { all.append($0); return true }
            for (i, k) in all.enumerated() {
                guard case .int(let v) = try s.value(k, n) else { Issue.record("row \(i) is not an int"); break }
                sum -= v
                if i % 64 == 63 { s.releaseDecryptedPagesIfOverBudget() }
                peak = max(peak, db.decryptedBytes)
            }
            #expect(sum == 0)
            // Walking a whole index in order (SORT by an indexed property) keeps its path the same way.
            let before = peak
            let ordered = try #require(try s.keysInIndexOrder(s.property(t, "n")))
            #expect(ordered.keys == all)
            #expect(db.decryptedBytes <= (512 << 10) + (256 << 10), "after the index walk: \(db.decryptedBytes) bytes")
            peak = max(before, db.decryptedBytes)
        }
        #expect(seen == count)
        // Within the budget plus one leaf's pages and the path (a leaf is at most 64 KiB).
        #expect(peak <= (512 << 10) + (256 << 10), "peak \(peak) bytes of decrypted pages")
        // A compacted copy reads every page of the file the same way.
        #expect(db.trimDecryptedPages())
        let copyPath = dir.file("copy.realm")
        try db.writeCopy(to: copyPath)
        #expect(db.decryptedBytes <= (512 << 10) + (256 << 10), "after writeCopy: \(db.decryptedBytes) bytes")
        let copy = try Database.open(path: copyPath, options: DatabaseOptions(encryptionKey: EncryptionTests.key))
        #expect(try copy.read { try $0.count("Row") } == count)
        #expect(try copy.verify().isOK)
        // Without a budget the same scan holds every page it read.
        db.decryptedPageBudget = Int.max
        #expect(db.trimDecryptedPages())
        try db.read { s in try s.scan(s.table("Row")) { _ in true } }
        #expect(db.decryptedBytes > 4 << 20)
        #expect(try db.verify().isOK)
    }

    /// Nonces are never repeated: within one open (a counter) and across opens of the same file (a random
    /// prefix each), and every sealed page still opens.
    @Test func noncesAreUniqueWithinAndAcrossOpens() throws {
        let salt = PageCipher.randomSalt()
        let a = PageCipher(userKey: EncryptionTests.key, salt: salt), b = PageCipher(userKey: EncryptionTests.key, salt: salt)
        var seen = Set<[UInt8]>()
        let page = [UInt8](repeating: 0x5A, count: pageSize)
        for i in 0..<3000 {
            for c in [a, b] {
                let sealed = try page.withUnsafeBytes { try c.seal($0, logicalPage: UInt64(i)) }
                #expect(seen.insert(sealed.nonce).inserted, "nonce repeated at page \(i)")
                var out = [UInt8](repeating: 0, count: pageSize)
                let ok = sealed.ciphertext.withUnsafeBytes { ct in sealed.nonce.withUnsafeBytes { n in sealed.tag.withUnsafeBytes { t in
                    out.withUnsafeMutableBytes { c.open(ct, nonce: n, tag: t, logicalPage: UInt64(i), into: $0) } } } }
                #expect(ok && out == page)
            }
        }
    }
}

