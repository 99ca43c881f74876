#if canImport(Glibc)
import Glibc
#endif
import RealmStorage

/// `check-files LIST [FIRST]`: for the hostile-files test. Takes each database path listed in the file LIST
/// (one a line) from line FIRST on, opens it (odd lines read-only), reads everything through the public read
/// API and runs `verify()`. Per file, before touching it: `begin I`; after: `end I OPEN READ VERIFY DIGEST`:
/// each step `ok` or the error's kind (`StorageError` case name; `foreign:TYPE` for any other error),
/// `-` for a step not reached, a digest of everything read (`-` when reading failed) and the version read. A file that makes the
/// process die leaves a `begin` without its `end`: the parent names it and starts again after it.
enum CheckFiles {
    static func run(list: String, first: Int) throws {
        guard let text = readWhole(list) else { throw WorkerUsage("cannot read \(list)") }
        let paths = text.split(separator: "\n").map(String.init)
        for i in paths.indices where i >= first {
            emit("begin \(i)")
            emit("end \(i) " + check(paths[i], readOnly: i % 2 == 1))
        }
        emit("done")
    }

    static func check(_ path: String, readOnly: Bool) -> String {
        var options = workerOptions
        options.readOnly = readOnly
        let db: Database
        do { db = try Database.open(path: path, options: options) } catch { return "\(kind(error)) - - - -" }
        var digest = Digest()
        let version = (try? db.read { $0.version }).map { "\($0)" } ?? "-"
        let read: String
        do {
            try readEverything(db, into: &digest)
            read = "ok"
        } catch {
            read = kind(error)
        }
        let verify: String
        do {
            let report = try db.verify()
            verify = report.isOK ? "ok" : "problems"
        } catch {
            verify = kind(error)
        }
        return "ok \(read) \(verify) " + (read == "ok" ? String(digest.value, radix: 16) : "-") + " \(version)"
    }

    /// The `StorageError` case's name, or `foreign:TYPE`.
    static func kind(_ error: Error) -> String {
        guard let e = error as? StorageError else { return "foreign:\(type(of: error))" }
        let label = Mirror(reflecting: e).children.first?.label ?? "\(e)"
        return label.isEmpty ? "\(e)" : label
    }

    /// Every class, object, value, list, backlink and index lookup, in order, into `digest`.
    static func readEverything(_ db: Database, into digest: inout Digest) throws {
        // What `realm-browser info` reads besides the classes.
        _ = try db.usedBytes()
        _ = db.liveVersionCount
        _ = db.commitLogBytes
        try db.read { s in
            digest.add("v\(s.version) s\(s.schemaVersion)")
            for c in s.schema {
                let t = try s.table(c.name)
                digest.add("\(c.name) \(try s.count(t))")
                _ = try s.key(at: 0, in: t)
                for k in try s.keys(t) {
                    digest.add("#\(k.rawValue)")
                    guard try s.exists(t, k) else { throw WorkerUsage("a listed key does not exist") }
                    for p in c.properties {
                        let h = try s.property(t, p.name)
                        if p.isList || p.type == .linkingObjects {
                            for v in try s.list(k, h) { digest.add("\(v)") }
                        } else {
                            let v = try s.value(k, h)
                            digest.add("\(v)")
                            if p.isIndexed { _ = try s.find(h, equalTo: v) }
                            if p.isPrimaryKey { _ = try s.object(t, primaryKey: v) }
                        }
                    }
                    for b in try s.allBacklinks(k, in: t) { digest.add("\(b.className).\(b.property) \(b.keys.map(\.rawValue))") }
                }
                for p in c.properties where !p.isList && p.type != .linkingObjects {
                    let h = try s.property(t, p.name)
                    if p.type == .int { digest.add("\(try s.sum(h))") }
                    try s.scan(t) { leaf in
                        let col = try leaf.column(h)
                        for row in 0..<leaf.count { digest.add("\(try col.value(row))") }
                        return true
                    }
                }
            }
        }
    }
}

/// FNV-1a over the text of what was read.
struct Digest {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325
    mutating func add(_ s: String) {
        for b in s.utf8 { value = (value ^ UInt64(b)) &* 0x100_0000_01b3 }
        value = (value ^ 0x0A) &* 0x100_0000_01b3
    }
}

struct WorkerUsage: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private func readWhole(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n < 0 { return nil }
        if n == 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
