import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// Hostile files: mutated copies of a small database (its data file, commit log and lock file) are opened, read
/// whole and verified by child processes (`realm-storage-worker check-files`), a batch per child. Each file must
/// read, or fail with a `StorageError`: a child that dies (a trap, a signal) or stops answering names the file
/// and its mutation. `REALM_FUZZ_FILES` sets how many files (300 by default, per kind of file), `REALM_FUZZ_SEED`
/// the seed.
@Suite struct HostileFilesTests {
    typealias Kit = ErrorTestKit

    static var files: Int { ProcessInfo.processInfo.environment["REALM_FUZZ_FILES"].flatMap { Int($0) } ?? 300 }
    static var seed: UInt64 { ProcessInfo.processInfo.environment["REALM_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x4057_11E }

    @Test func hostilePlainFiles() throws {
        try run(key: nil)
    }

    @Test func hostileEncryptedFiles() throws {
        try run(key: EncryptionTests.key)
    }

    /// Offsets and counts of a meta slot and of the log header set to values past `Int.max` (or near it), with
    /// checksums made right: each file opens at the other slot or fails with a `StorageError`, never traps.
    @Test func forgedMetaAndLogOffsetsAreErrors() throws {
        let dir = TempDir()
        let pristine = try makeDatabase(in: dir, key: nil)
        var sets: [(FileSet, String)] = [(pristine, "none"), (pristine, "none")]
        let values: [UInt64] = [1 << 63, UInt64.max, (1 << 63) + 4096, 1 << 62, 1 << 48 + 1]
        for slot in 0..<2 {
            // version, catalogueRef, freeListRef, commitLogRef, pageCount, flags, logID, logGeneration, logEnd, logStart
            for field in stride(from: 16, through: 88, by: 8) {
                for v in values {
                    var s = pristine
                    store(v, at: slot * pageSize + field, in: &s.data)
                    if field == 80 || field == 88 {
                        // logEnd and logStart together, so that start <= end holds.
                        store(v, at: slot * pageSize + 80, in: &s.data)
                    }
                    let sum = s.data.withUnsafeBytes { hash64(UnsafeRawBufferPointer(rebasing: $0[slot * pageSize..<slot * pageSize + 120])) }
                    store(sum, at: slot * pageSize + 120, in: &s.data)
                    sets.append((s, "meta slot \(slot) field \(field) = \(v)"))
                }
            }
        }
        if let log = pristine.log, log.count >= 56 {
            for field in [32, 40] {
                for v in values {
                    var s = pristine
                    var l = log
                    store(v, at: field, in: &l)
                    let sum = l.withUnsafeBytes { hash64(UnsafeRawBufferPointer(rebasing: $0[0..<48])) }
                    store(sum, at: 48, in: &l)
                    s.log = l
                    sets.append((s, "log header field \(field) = \(v)"))
                }
            }
        }
        // The newest commit root's free list made to free more pages than the file has (entries overlapping), in
        // a file whose last commit wrote many nodes (its commit root's list of them leaves room for the entries).
        do {
            let path = dir.file("many.realm")
            try Kit.populate(try Database.open(path: path), people: 40)
            var s = FileSet(data: Kit.bytes(path), log: nil, lock: nil)
            let slots = (0..<2).map { slot in
                s.data.withUnsafeBytes { (version: $0.u64(at: slot * pageSize + 16), root: $0.u64(at: slot * pageSize + 24),
                                          pageCount: $0.u64(at: slot * pageSize + 48)) }
            }
            let newest = slots.max { $0.version < $1.version }!
            let root = Int(newest.root) * pageSize, pageCount = newest.pageCount
            let length = s.data.withUnsafeBytes { Int($0.u32(at: root + 4)) }
            let o = (nodeHeaderSize + 8 + s.data.withUnsafeBytes { Int($0.u32(at: root + nodeHeaderSize + 4)) } + 7) / 8 * 8
            let entries = min(3, (length - o - 8) / 24)
            #expect(entries >= 2, "no room for the forged free list")
            if entries >= 2 {
                store(UInt32(entries), at: root + o, in: &s.data)
                for i in 0..<entries {
                    store(UInt64(2), at: root + o + 8 + 24 * i, in: &s.data)
                    store(pageCount - 2, at: root + o + 16 + 24 * i, in: &s.data)
                    store(UInt64(0), at: root + o + 24 + 24 * i, in: &s.data)
                }
                reseal(node: root, in: &s.data)
                sets.append((s, "free list of \(entries) entries of every page"))
            }
        }
        let results = try check(sets, in: dir.file("forged"), keyArgs: [])
        for (i, r) in results.enumerated() {
            if case .died(let how) = r { Issue.record("\(sets[i].1): the worker died: \(how)") }
            if case .line(let open, let read, let verify, _, _) = r, [open, read, verify].contains(where: { $0.hasPrefix("foreign") }) {
                Issue.record("\(sets[i].1): \(open) \(read) \(verify)")
            }
        }
    }

    /// Writes `sets` as files in a new directory `batch` and checks them.
    func check(_ sets: [(FileSet, String)], in batch: String, keyArgs: [String]) throws -> [Result] {
        try FileManager.default.createDirectory(atPath: batch, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: batch) }
        var paths: [String] = []
        for (i, (set, _)) in sets.enumerated() {
            let p = "\(batch)/f\(i).realm"
            Kit.write(set.data, to: p)
            if let log = set.log { Kit.write(log, to: p + ".log") }
            if let lock = set.lock { Kit.write(lock, to: p + ".lock") }
            paths.append(p)
        }
        let list = "\(batch)/list"
        Kit.write(Array(paths.joined(separator: "\n").utf8), to: list)
        return try check(list: list, count: sets.count, keyArgs: keyArgs, errPath: "\(batch)/err")
    }

    /// The three files of one database, as bytes (an absent file as nil).
    struct FileSet {
        var data: [UInt8]
        var log: [UInt8]?
        var lock: [UInt8]?
    }

    func run(key: [UInt8]?) throws {
        let dir = TempDir()
        let pristine = try makeDatabase(in: dir, key: key)
        let keyArgs = key.map { ["--key", $0.map { String(format: "%02x", $0) }.joined()] } ?? []
        var rng = SplitMix64(seed: Self.seed ^ (key == nil ? 0 : 0xE4C))
        var outcomes: [String: Int] = [:]
        var mutations: [String: Int] = [:]
        var digest: String?
        var version: UInt64?
        var samples: [String: String] = [:]
        var index = 0
        let total = Self.files
        let batchSize = 100
        var done = 0
        while done < total {
            // A batch: the pristine file twice (writable, then read-only) so its digest is known, then mutants.
            var sets: [(FileSet, String)] = [(pristine, "none"), (pristine, "none")]
            while sets.count < batchSize + 2 && done + sets.count - 2 < total {
                sets.append(mutate(pristine, encrypted: key != nil, rng: &rng))
            }
            let results = try check(sets, in: dir.file("batch\(index)"), keyArgs: keyArgs)
            index += 1
            for (i, result) in results.enumerated() {
                let what = sets[i].1
                switch result {
                case .died(let how):
                    Issue.record("\(what) (file \(i) of a batch): the worker died: \(how)")
                    outcomes["died", default: 0] += 1
                case .line(let open, let read, let verify, let d, let v):
                    for step in [open, read, verify] where step.hasPrefix("foreign") {
                        Issue.record("\(what): an error other than StorageError: \(step)")
                    }
                    if i < 2 {
                        #expect(open == "ok" && read == "ok" && verify == "ok", "the pristine file: \(open) \(read) \(verify)")
                        if let digest { #expect(d == digest, "the pristine file reads differently when opened read-only") }
                        digest = d
                        version = v
                        continue
                    }
                    mutations[what.split(separator: " ").first.map(String.init) ?? what, default: 0] += 1
                    var outcome = "open \(open)"
                    if open == "ok" {
                        let data = d == digest ? "same data" : v.flatMap { v in version.map { v < $0 } } == true ? "an older version" : "other data"
                        // Damage that leaves every checksum as it was never reads as other data of the same version:
                        // swapped pages included, since a node's checksum covers its page (format 6).
                        if read == "ok", data == "other data", !what.hasPrefix("forge") {
                            Issue.record("\(what): read other data without an error (verify: \(verify))")
                        }
                        outcome += ", read \(read == "ok" ? data : read), verify \(verify)"
                    }
                    outcomes[outcome, default: 0] += 1
                    if samples[outcome] == nil { samples[outcome] = what }
                }
            }
            done += sets.count - 2
        }
        print("hostile \(key == nil ? "plain" : "encrypted") files: \(done) mutated files ("
              + mutations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")")
        for (k, v) in outcomes.sorted(by: { $0.key < $1.key }) { print("  \(v)\t\(k)\t(e.g. \(samples[k] ?? ""))") }
    }

    enum Result {
        case line(open: String, read: String, verify: String, digest: String, version: UInt64?)
        case died(String)
    }

    /// Runs workers over the listed files until every file has a result; a worker that dies or stops answering
    /// is replaced by one starting after the file it was on.
    func check(list: String, count: Int, keyArgs: [String], errPath: String) throws -> [Result] {
        var results: [Result] = []
        while results.count < count {
            let w = try WorkerProcess(["check-files", list, "\(results.count)"] + keyArgs, stderrPath: errPath)
            var current: Int?
            while results.count < count {
                guard let line = w.readLine(timeout: 60) else {
                    // Its output ended or stopped: it dies (a trap prints a backtrace first), or it hangs.
                    let status = try? w.waitForExit(timeout: 30)
                    let how = status.map(WorkerProcess.describe) ?? "no answer for 60 s (killed)"
                    // The runtime's message (a trap's "Fatal error: ...") rather than the end of its backtrace.
                    let message = w.stderrText.split(separator: "\n").first { $0.contains("rror") }.map { ": " + $0 } ?? ""
                    results.append(.died("\(how) on file \(current ?? results.count)\(message)"))
                    break
                }
                let parts = line.split(separator: " ").map(String.init)
                if parts.first == "begin" {
                    current = Int(parts[1])
                } else if parts.first == "end", parts.count == 7, Int(parts[1]) == results.count {
                    results.append(.line(open: parts[2], read: parts[3], verify: parts[4], digest: parts[5], version: UInt64(parts[6])))
                } else if parts.first == "done" {
                    break
                } else {
                    Issue.record("unexpected worker line: \(line)")
                }
            }
            if results.count >= count { try w.waitForExit(timeout: 60) }
        }
        return results
    }

    /// A small database with every kind of value, closed (its log checkpointed), then one more commit by a
    /// process killed after it: its record is still in the log, and the lock file is as a dead process left it.
    func makeDatabase(in dir: TempDir, key: [UInt8]?) throws -> FileSet {
        let path = dir.file("pristine.realm")
        do {
            let db = try Database.open(path: path, options: DatabaseOptions(encryptionKey: key))
            try Kit.populate(db, people: 40)
            try db.write { tx in try tx.setSchemaVersion(3) }
        }
        let keyArgs = key.map { ["--key", $0.map { String(format: "%02x", $0) }.joined()] } ?? []
        let w = try WorkerProcess(["write-then-idle", path] + keyArgs, stderrPath: dir.file("idle.err"))
        #expect(w.readLine(timeout: 60) == "idle", "\(w.stderrTail())")
        w.sendKill()
        try w.waitForExit(timeout: 10)
        let log = FileManager.default.fileExists(atPath: path + ".log") ? Kit.bytes(path + ".log") : nil
        return FileSet(data: Kit.bytes(path), log: log, lock: Kit.bytes(path + ".lock"))
    }

    /// One mutation of `set`, and its description.
    func mutate(_ set: FileSet, encrypted: Bool, rng: inout SplitMix64) -> (FileSet, String) {
        var s = set
        func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(rng.next() % UInt64(n)) }
        let extremes: [UInt64] = [0, 1, 0xFFFF_FFFF, 0x7FFF_FFFF, 0x8000_0000, 1 << 40, 1 << 62, 1 << 63, UInt64.max,
                                  UInt64.max - 1, 0x7FFF_FFFF_FFFF_FFFF]
        func extreme() -> UInt64 { rng.next() % 3 == 0 ? rng.next() : extremes[below(extremes.count)] }
        let pages = s.data.count / pageSize
        let kinds = ["flip", "flip-node", "truncate", "swap-pages", "zero-page", "forge-node", "forge-meta", "log", "lock"]
        var kind = kinds[below(kinds.count)]
        if encrypted && kind.hasPrefix("forge") { kind = "flip" }
        if kind == "log" && s.log == nil { kind = "lock" }
        switch kind {
        case "flip":
            var at: [Int] = []
            for _ in 0..<1 + below(4) {
                let o = below(s.data.count)
                s.data[o] ^= UInt8(1) << UInt8(below(8))
                at.append(o)
            }
            return (s, "flip bits at bytes \(at)")
        case "flip-node":
            // Inside a node's bytes (a page that starts with a node header), not in the zero tail of its pages.
            let nodes = nodePages(s.data)
            guard let n = nodes.isEmpty ? nil : nodes[below(nodes.count)] else { return mutate(set, encrypted: encrypted, rng: &rng) }
            let o = n.page * pageSize + below(n.length)
            s.data[o] ^= UInt8(1 + below(255))
            return (s, "flip-node byte \(o) (node at page \(n.page))")
        case "truncate":
            let n = rng.next() % 2 == 0 ? below(pages) * pageSize : below(s.data.count)
            s.data.removeSubrange(n...)
            return (s, "truncate to \(n) bytes")
        case "swap-pages":
            let a = below(pages), b = below(pages)
            for i in 0..<pageSize { s.data.swapAt(a * pageSize + i, b * pageSize + i) }
            return (s, "swap-pages \(a) and \(b)")
        case "zero-page":
            let p = below(pages)
            for i in 0..<pageSize { s.data[p * pageSize + i] = 0 }
            return (s, "zero-page \(p)")
        case "forge-node":
            // A length or count field of a node set to an extreme value, its checksum made right again.
            let nodes = nodePages(s.data)
            guard !nodes.isEmpty else { return mutate(set, encrypted: encrypted, rng: &rng) }
            let n = nodes[below(nodes.count)]
            let offset = [4, 16, 20, 24, 28, 32, 36, 40, 48, 56][below(10)]
            let o = n.page * pageSize
            let v = extreme()
            if offset == 4 || rng.next() % 2 == 0 { store(UInt32(truncatingIfNeeded: v), at: o + offset, in: &s.data) } else {
                store(v, at: o + offset, in: &s.data)
            }
            reseal(node: o, in: &s.data)
            return (s, "forge-node page \(n.page) field \(offset) = \(v)")
        case "forge-meta":
            // A field of a meta slot set to an extreme value, the slot's checksum made right again.
            let slot = below(2) * pageSize
            let field = 16 + 8 * below(13)
            let v = extreme()
            store(v, at: slot + field, in: &s.data)
            let sum = s.data.withUnsafeBytes { hash64(UnsafeRawBufferPointer(rebasing: $0[slot..<slot + 120])) }
            store(sum, at: slot + 120, in: &s.data)
            return (s, "forge-meta slot \(slot / pageSize) field \(field) = \(v)")
        case "log":
            var log = s.log!
            let how = below(5)
            switch how {
            case 0:
                for _ in 0..<1 + below(4) { log[below(log.count)] ^= UInt8(1) << UInt8(below(8)) }
            case 1:
                log.removeSubrange(below(log.count)...)
            case 2:
                // The header's start or pin forged, its checksum made right again.
                if log.count >= 56 {
                    store(extreme(), at: [32, 40, 16, 24][below(4)], in: &log)
                    let sum = log.withUnsafeBytes { hash64(UnsafeRawBufferPointer(rebasing: $0[0..<48])) }
                    store(sum, at: 48, in: &log)
                }
            case 3:
                // A field of the first record (count, generation, version, total length, an entry) forged.
                let start = log.count >= 40 ? Int(truncatingIfNeeded: log.withUnsafeBytes { $0.u64(at: 32) }) : 0
                let field = start + [4, 8, 16, 24, 32, 40][below(6)]
                if start > 0, field + 8 <= log.count { store(extreme(), at: field, in: &log) }
            default:
                s.log = nil
                return (s, "log removed")
            }
            s.log = log
            return (s, "log mutation \(how)")
        default:
            guard var lock = s.lock, !lock.isEmpty else { return (s, "lock absent") }
            let how = below(3)
            switch how {
            case 0:
                for _ in 0..<1 + below(4) { lock[below(lock.count)] ^= UInt8(1) << UInt8(below(8)) }
            case 1:
                lock.removeSubrange(below(lock.count)...)
            default:
                let field = 8 * below(min(lock.count / 8, 64))
                store(extreme(), at: field, in: &lock)
            }
            s.lock = lock
            return (s, "lock mutation \(how)")
        }
    }

    /// Pages that start with a node header whose length fits in the file.
    func nodePages(_ data: [UInt8]) -> [(page: Int, length: Int)] {
        (2..<max(2, data.count / pageSize)).compactMap { page in
            let o = page * pageSize
            let length = data.withUnsafeBytes { Int($0.u32(at: o + 4)) }
            guard (1...8).contains(data[o]), length >= nodeHeaderSize, o + length <= data.count else { return nil }
            return (page, length)
        }
    }

    func store<T: FixedWidthInteger>(_ v: T, at offset: Int, in bytes: inout [UInt8]) {
        guard offset >= 0, offset + MemoryLayout<T>.size <= bytes.count else { return }
        withUnsafeBytes(of: v.littleEndian) { bytes.replaceSubrange(offset..<offset + MemoryLayout<T>.size, with: $0) }
    }

    /// Recomputes the checksum of the node at byte `o` (bound to its page) when its length fits in the file.
    func reseal(node o: Int, in bytes: inout [UInt8]) {
        let length = bytes.withUnsafeBytes { Int($0.u32(at: o + 4)) }
        guard length >= nodeHeaderSize, o + length <= bytes.count else { return }
        let sum = bytes.withUnsafeBytes { nodeChecksum(UnsafeRawBufferPointer(rebasing: $0[o..<o + length])) }
            ^ pageChecksumTerm(UInt64(o / pageSize))
        store(sum, at: o + 8, in: &bytes)
    }
}
