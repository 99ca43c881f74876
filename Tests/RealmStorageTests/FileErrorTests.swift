import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// Opening files that are not (whole, readable) databases: each gives its own clear `StorageError`, never a
/// crash, and nothing is created beside a file that is not ours.
@Suite struct FileErrorTests {
    typealias Kit = ErrorTestKit

    /// Creates a populated database at `path` and lets it go (closed when this returns).
    func makeDatabase(_ path: String, people: Int = 120) throws {
        let db = try Database.open(path: path)
        try Kit.populate(db, people: people)
        // One more small commit, so the older of the two versions the file holds is the populated one.
        try db.write { tx in try tx.setSchemaVersion(1) }
    }

    /// The two meta slots as stored in `bytes`.
    func slots(_ bytes: [UInt8]) -> [Meta.Decoded] {
        bytes.withUnsafeBytes { b in
            [Meta.decode(UnsafeRawBufferPointer(rebasing: b[0..<pageSize])),
             Meta.decode(UnsafeRawBufferPointer(rebasing: b[pageSize..<2 * pageSize]))]
        }
    }

    func validMetas(_ bytes: [UInt8]) -> [(slot: Int, meta: Meta)] {
        slots(bytes).enumerated().compactMap { i, s in if case .valid(let m) = s { return (i, m) } else { return nil } }
            .sorted { $0.meta.version > $1.meta.version }
    }

    // MARK: Foreign files

    @Test func foreignFilesAreNotADatabase() throws {
        let dir = TempDir()
        let sqlitePath = dir.file("real.sqlite")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = [sqlitePath, "CREATE TABLE t(x INTEGER, y TEXT); INSERT INTO t VALUES (1, 'one');"]
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0 && Kit.fileSize(sqlitePath) > 0, "sqlite3 could not create a file")

        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        png += [UInt8](repeating: 7, count: 200)
        let text = Array("Dear diary,\ntoday I tried to open a text file as a database.\n".utf8)
        var zeros = [UInt8](repeating: 0, count: 3 * pageSize)
        zeros[5000] = 1
        let cases: [(String, [UInt8]?)] = [
            ("image.png", png), ("notes.txt", text), ("real.sqlite", nil), ("zeros.realm", zeros),
            ("tiny.realm", Array("ab".utf8)), ("big-text.realm", [UInt8](repeating: 0x41, count: 5 * pageSize)),
        ]
        for (name, content) in cases {
            let path = dir.file(name)
            if let content { Kit.write(content, to: path) }
            let before = Kit.bytes(path)
            for readOnly in [false, true] {
                let e = Kit.storageError(name) { _ = try Database.open(path: path, options: DatabaseOptions(readOnly: readOnly)) }
                #expect(e == .notADatabase(path: path), "\(name)")
                if readOnly, let e { print("  \(name): \(e)") }
            }
            #expect(!Kit.exists(path + ".lock"), "a lock file was left beside \(name)")
            let unchanged = Kit.bytes(path) == before
            #expect(unchanged, "\(name) was modified")
        }
    }

    @Test func emptyFileBecomesADatabaseButNotReadOnly() throws {
        let dir = TempDir()
        let path = dir.file("empty.realm")
        Kit.write([], to: path)
        let e = Kit.storageError { _ = try Database.open(path: path, options: DatabaseOptions(readOnly: true)) }
        #expect(e == .truncated(path: path, expectedBytes: UInt64(2 * pageSize), actualBytes: 0))
        #expect(!Kit.exists(path + ".lock"))
        // Read-write, an empty file is a new database (as creating one that does not exist).
        let db = try Database.open(path: path)
        try db.read { #expect($0.schema.isEmpty) }
    }

    // MARK: Truncation

    @Test func truncatedFiles() throws {
        let dir = TempDir()
        let path = dir.file("whole.realm")
        try makeDatabase(path)
        let whole = Kit.bytes(path)
        let metas = validMetas(whole)
        try #require(metas.count == 2)
        // Every version the file holds needs more than the header: cuts below the older one are truncation.
        let older = metas[1].meta.pageCount * UInt64(pageSize)
        try #require(older > UInt64(3 * pageSize), "fixture too small")
        var cuts = [1, 3, 7, 100, 119, 128, pageSize / 2, pageSize, pageSize + 64, 3 * pageSize / 2, 2 * pageSize - 1,
                    2 * pageSize, 2 * pageSize + 10, 3 * pageSize, Int(older) - pageSize / 2, Int(older) - 1]
        var rng = SplitMix64(seed: 42)
        for _ in 0..<6 { cuts.append(2 * pageSize + Int(rng.next() % (older - UInt64(2 * pageSize)))) }
        for (i, cut) in cuts.enumerated() {
            let path = dir.file("cut\(i).realm")
            let cutBytes = Array(whole[0..<cut])
            Kit.write(cutBytes, to: path)
            for readOnly in [true, false] {
                let e = Kit.storageError("cut at \(cut)") {
                    _ = try Database.open(path: path, options: DatabaseOptions(readOnly: readOnly))
                }
                guard case .truncated(let p, let expected, let actual)? = e else {
                    Issue.record("cut at \(cut) (readOnly \(readOnly)): expected .truncated, got \(String(describing: e))")
                    continue
                }
                #expect(p == path && actual == UInt64(cut) && expected > actual)
                if readOnly && [3, pageSize / 2, 2 * pageSize, Int(older) - 1].contains(cut) { print("  cut at \(cut): \(e!)") }
            }
            let unchanged = Kit.bytes(path) == cutBytes
            #expect(unchanged, "opening the file cut at \(cut) changed it")
            if cut < 2 * pageSize { #expect(!Kit.exists(path + ".lock"), "lock file beside the file cut at \(cut)") }
        }
    }

    /// A file that holds the previous version whole but not the newest commit's pages cannot be what a crash
    /// left (a slot is written only after its commit's pages and the file's size are synced,
    /// docs/RELIABILITY.md): the file was cut, and opening it says so instead of opening the previous version.
    @Test func aFileCutThroughTheNewestCommitIsReportedAsTruncated() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        do {
            let db = try Database.open(path: path)
            try Kit.populate(db, people: 60)
            try db.write { tx in
                for i in 0..<300 { try tx.createObject("Person", ["id": .int(Int64(10_000 + i)), "name": .string("late \(i)")]) }
            }
        }
        let whole = Kit.bytes(path)
        let metas = validMetas(whole)
        let newest = Int(metas[0].meta.pageCount) * pageSize, older = Int(metas[1].meta.pageCount) * pageSize
        try #require(newest > older && whole.count == newest)
        for (name, readOnly) in [("rw", false), ("ro", true)] {
            let p = dir.file("\(name).realm")
            let cut = (older + newest) / 2
            Kit.write(Array(whole[0..<cut]), to: p)
            #expect {
                _ = try Database.open(path: p, options: DatabaseOptions(readOnly: readOnly))
            } throws: { error in
                guard case .truncated(_, let expected, let actual)? = error as? StorageError else { return false }
                return expected == UInt64(newest) && actual == UInt64(cut)
            }
        }
    }

    // MARK: Header damage

    @Test func newerFormatVersion() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        try makeDatabase(path, people: 10)
        let original = Kit.bytes(path)
        for slotsToPatch in [[0], [1], [0, 1]] {
            var bytes = original
            for s in slotsToPatch {
                let o = s * pageSize
                bytes.replaceSubrange(o + 8..<o + 12, with: [UInt8(Meta.formatVersion + 1), 0, 0, 0])
                let sum = bytes.withUnsafeBytes { hash64(UnsafeRawBufferPointer(rebasing: $0[o..<o + 120])) }
                withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(o + 120..<o + 128, with: $0) }
            }
            let p = dir.file("newer\(slotsToPatch.count)\(slotsToPatch[0]).realm")
            Kit.write(bytes, to: p)
            for readOnly in [false, true] {
                let e = Kit.storageError { _ = try Database.open(path: p, options: DatabaseOptions(readOnly: readOnly)) }
                #expect(e == .newerFormat(path: p, fileVersion: Meta.formatVersion + 1, supported: Meta.formatVersion))
                if let e {
                    #expect(!e.description.lowercased().contains("encrypt"), "\(e)")
                    #expect(e.description.contains("newer"))
                    if slotsToPatch == [0, 1] && readOnly { print("  \(e)") }
                }
            }
            #expect(!Kit.exists(p + ".lock"))
            let unchanged = Kit.bytes(p) == bytes
            #expect(unchanged)
        }
    }

    @Test func bothMetaSlotsDamaged() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        try makeDatabase(path, people: 10)
        let original = Kit.bytes(path)
        // A flipped bit in each slot's checksummed fields (not the magic: then it would be foreign).
        for (name, offsets) in [("version", [17, pageSize + 17]), ("refs", [25, pageSize + 41]), ("checksum", [121, pageSize + 127])] {
            var bytes = original
            for o in offsets { bytes[o] ^= 0x10 }
            let p = dir.file("damaged-\(name).realm")
            Kit.write(bytes, to: p)
            for readOnly in [false, true] {
                let e = Kit.storageError(name) { _ = try Database.open(path: p, options: DatabaseOptions(readOnly: readOnly)) }
                guard case .corrupt(let ep, let location, _)? = e else {
                    Issue.record("\(name): expected .corrupt, got \(String(describing: e))"); continue
                }
                #expect(ep == p && location.contains("header"), "\(e!)")
                if name == "refs" && readOnly { print("  \(e!)") }
            }
            let unchanged = Kit.bytes(p) == bytes
            #expect(unchanged, "opening changed the damaged file")
        }
    }

    /// A slot whose checksum is right but whose page count is absurd (a bug elsewhere, or a crafted file) must
    /// not overflow size computations: it is treated as damaged.
    @Test func absurdPageCountInAChecksummedSlot() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        try makeDatabase(path, people: 10)
        let original = Kit.bytes(path)
        let metas = validMetas(original)
        for count: UInt64 in [UInt64.max, 1 << 60, (1 << 52) + 1] {
            var bytes = original
            let o = metas[0].slot * pageSize
            withUnsafeBytes(of: count.littleEndian) { bytes.replaceSubrange(o + 48..<o + 56, with: $0) }
            let sum = bytes.withUnsafeBytes { hash64(UnsafeRawBufferPointer(rebasing: $0[o..<o + 120])) }
            withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(o + 120..<o + 128, with: $0) }
            let p = dir.file("huge\(count).realm")
            Kit.write(bytes, to: p)
            let db = try Database.open(path: p, options: DatabaseOptions(readOnly: true))
            try db.read { #expect($0.version == metas[1].meta.version) }
        }
    }

    @Test func oneDamagedSlotFallsBackToTheOther() throws {
        let dir = TempDir()
        let path = dir.file("a.realm")
        try makeDatabase(path, people: 10)
        let original = Kit.bytes(path)
        let metas = validMetas(original)
        for (slot, expectedVersion) in [(metas[0].slot, metas[1].meta.version), (metas[1].slot, metas[0].meta.version)] {
            var bytes = original
            bytes[slot * pageSize + 20] ^= 0xFF
            let p = dir.file("slot\(slot).realm")
            Kit.write(bytes, to: p)
            let db = try Database.open(path: p, options: DatabaseOptions(readOnly: true))
            try db.read { #expect($0.version == expectedVersion) }
        }
    }

    // MARK: Random damage

    /// Reads everything a database holds through every read API; throws what the engine throws.
    func readEverything(_ db: Database) throws {
        try db.read { s in
            for c in s.schema {
                let t = try s.table(c.name)
                _ = try s.count(t)
                _ = try s.key(at: 0, in: t)
                _ = try s.key(at: max(0, try s.count(t) - 1), in: t)
                for k in try s.keys(t) {
                    _ = try s.exists(t, k)
                    for p in c.properties {
                        let h = try s.property(t, p.name)
                        if p.isList { _ = try s.list(k, h) } else {
                            let v = try s.value(k, h)
                            if p.isIndexed { _ = try s.find(h, equalTo: v) }
                            if p.isPrimaryKey { _ = try s.object(t, primaryKey: v) }
                        }
                    }
                    _ = try s.allBacklinks(k, in: t)
                }
                for p in c.properties where !p.isList {
                    let h = try s.property(t, p.name)
                    if p.type == .int { _ = try s.sum(h); _ = try s.count(h, in: -1000...1000) }
                    if p.type == .string { _ = try s.count(h, equalTo: "person 7") }
                    try s.scan(t) { leaf in
                        let col = try leaf.column(h)
                        for row in 0..<leaf.count {
                            _ = leaf.key(row)
                            _ = try col.value(row)
                            _ = col.isNull(row)
                            if p.type == .string { _ = try col.withUTF8(row) { $0.count } }
                        }
                        return true
                    }
                }
            }
        }
    }

    /// Fuzzes a real database: each trial XORs 1-4 random bytes inside nodes (half of them in node headers and
    /// the fields right after, where lengths and counts live), then opens the file, reads everything through
    /// every read API and runs `verify()`. Each step must work or throw a `StorageError`, never crash or hang.
    /// With `reseal`, the damaged nodes' checksums are recomputed, so only the decoders' own checks stand
    /// between the damage and a crash; list nodes are left out there, because a list whose checksum matches is
    /// trusted to hold the element count it claims (up to 2^28 elements, decoded whole: time and memory, not a
    /// crash). `FUZZ_TRIALS` / `FUZZ_ONLY` (environment) run more trials / one trial.
    func fuzz(seed: UInt64, trials defaultTrials: Int, reseal: Bool) throws -> [String: Int] {
        let dir = TempDir()
        let path = dir.file("pristine.realm")
        let latest: UInt64
        do {
            let db = try Database.open(path: path)
            try Kit.populate(db, people: 300)
            // A last small commit, so most nodes are not in the newest commit's log: a damaged node listed there
            // makes the first opener take the commit for torn and open the previous version instead.
            try db.write { tx in try tx.setSchemaVersion(7) }
            latest = try db.read { $0.version }
            let report = try db.verify()
            try #require(report.isOK, "\(report)")
        }
        let original = Kit.bytes(path)
        // Flip bytes inside nodes, not in the zero tails of their pages: pages that start with a node header.
        let nodes: [(page: Int, length: Int)] = (2..<original.count / pageSize).compactMap { page in
            let o = page * pageSize
            let length = original.withUnsafeBytes { Int($0.u32(at: o + 4)) }
            guard (1...10).contains(original[o]), length >= 16, o + length <= original.count else { return nil }
            return (page, length)
        }
        try #require(nodes.count > 20)
        var rng = SplitMix64(seed: seed)
        var outcomes: [String: Int] = [:]
        var samples: [String: String] = [:]
        func note(_ kind: String, _ detail: String) {
            outcomes[kind, default: 0] += 1
            if samples[kind] == nil { samples[kind] = detail }
        }
        let env = ProcessInfo.processInfo.environment
        let trials = env["FUZZ_TRIALS"].flatMap { Int($0) } ?? defaultTrials
        for trial in 0..<trials {
            var bytes = original
            let flips = 1 + Int(rng.next() % 4)
            for _ in 0..<flips {
                let node = nodes[Int(rng.next() % UInt64(nodes.count))]
                let offset = Int(rng.next() % UInt64(rng.next() % 2 == 0 ? min(48, node.length) : node.length))
                let o = node.page * pageSize
                bytes[o + offset] ^= UInt8(1 + rng.next() % 255)
                if reseal {
                    let length = bytes.withUnsafeBytes { Int($0.u32(at: o + 4)) }
                    if length >= nodeHeaderSize, o + length <= bytes.count {
                        let sum = bytes.withUnsafeBytes { nodeChecksum(UnsafeRawBufferPointer(rebasing: $0[o..<o + length])) }
                            ^ pageChecksumTerm(UInt64(node.page))
                        withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(o + 8..<o + 16, with: $0) }
                    }
                }
            }
            if let only = env["FUZZ_ONLY"], Int(only) != trial { continue }
            let started = Date()
            defer {
                let t = Date().timeIntervalSince(started)
                if t > 5 { Issue.record("trial \(trial) took \(t) s") }
            }
            let p = dir.file("t\(trial % 4).realm")
            unlink(p + ".lock")
            Kit.write(bytes, to: p)
            let db: Database
            do {
                db = try Database.open(path: p)
            } catch let e as StorageError {
                note("open: StorageError", "\(e)"); continue
            } catch {
                Issue.record("trial \(trial): open threw \(type(of: error)): \(error)"); continue
            }
            if let v = try? db.read({ $0.version }), v < latest { note("open: previous version", "") }
            do {
                try readEverything(db)
                note("read: ok", "")
            } catch let e as StorageError {
                note("read: StorageError", "\(e)")
            } catch {
                Issue.record("trial \(trial): reading threw \(type(of: error)): \(error)")
            }
            do {
                let report = try db.verify()
                note(report.isOK ? "verify: ok" : "verify: problems", report.problems.first ?? "")
            } catch let e as StorageError {
                note("verify: StorageError", "\(e)")
            } catch {
                Issue.record("trial \(trial): verify threw \(type(of: error)): \(error)")
            }
        }
        print("  \(trials) trials\(reseal ? " (checksums resealed)" : ""): "
              + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        for (k, v) in samples.sorted(by: { $0.key < $1.key }) where !v.isEmpty { print("    e.g. \(k): \(v)") }
        return outcomes
    }

    @Test func randomByteFlipsNeverCrash() throws {
        let trials = 120
        let outcomes = try fuzz(seed: 0xF11B5, trials: trials, reseal: false)
        // Every flip lands inside a node, so node checksums should catch nearly all of them (flips in nodes
        // that are free in the newest version are the exception).
        let detected = ["verify: problems", "verify: StorageError", "open: StorageError", "open: previous version"]
            .reduce(0) { $0 + (outcomes[$1] ?? 0) }
        #expect(detected > trials * 3 / 4 || ProcessInfo.processInfo.environment["FUZZ_TRIALS"] != nil)
    }

    @Test func resealedByteFlipsNeverCrash() throws {
        _ = try fuzz(seed: 0x5EA1ED, trials: 120, reseal: true)
    }
}
