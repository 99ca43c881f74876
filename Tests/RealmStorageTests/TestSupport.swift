import Foundation
@_exported import TestSupport
@testable import RealmStorage

/// The schema most engine tests use: people with dogs.
let personDogSchema: [ClassSchema] = [
    ClassSchema(name: "Person", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "name", type: .string, isIndexed: true),
        PropertySchema(name: "age", type: .int),
        PropertySchema(name: "nickname", type: .string, isOptional: true),
        .list("dogs", of: "Dog"),
        PropertySchema(name: "tags", type: .string, isList: true),
    ]),
    ClassSchema(name: "Dog", properties: [
        PropertySchema(name: "name", type: .string),
        PropertySchema(name: "weight", type: .double),
        .link("owner", to: "Person"),
        .linkingObjects("owners", from: "Person", property: "dogs"),
    ]),
]

/// A new database file `name` in `dir` holding the classes of `personDogSchema` (and nothing else).
func personDogDatabase(in dir: TempDir, _ name: String = "a.realm") throws -> Database {
    let db = try Database.open(path: dir.file(name))
    try db.write { tx in try tx.createClasses(personDogSchema) }
    return db
}

/// Every value, list and backlink set of every object of every class, one line per object, in schema and
/// key order: two databases hold the same data exactly when their dumps are equal.
func dumpObjects(_ s: Snapshot) throws -> [String] {
    var lines: [String] = []
    for c in s.schema {
        let t = try s.table(c.name)
        for k in try s.keys(t) {
            var fields: [String] = []
            for p in c.properties {
                let h = try s.property(t, p.name)
                if p.isList || p.isSet {
                    fields.append("\(p.name)=\(try s.list(k, h))")
                } else if p.isDictionary {
                    fields.append("\(p.name)=\(Value.dictionary(try s.dictionary(k, h)))")
                } else {
                    fields.append("\(p.name)=\(try s.value(k, h))")
                }
            }
            for b in try s.allBacklinks(k, in: t) { fields.append("←\(b.className).\(b.property)=\(b.keys)") }
            lines.append("\(c.name) #\(k.rawValue) " + fields.joined(separator: " "))
        }
    }
    return lines
}


/// Rewrites the checksum of every node of the plain file `bytes` (every page from 2 that starts a node whose
/// checksum holds with its page's term, format 6) to the rule of format 5 and before: the node's hash alone.
/// Only for forging a file of an older format from one this build wrote.
func unbindNodeChecksums(_ bytes: inout [UInt8]) {
    for page in 2..<bytes.count / pageSize {
        let o = page * pageSize
        let sum: UInt64? = bytes.withUnsafeBytes { raw in
            let length = Int(raw.u32(at: o + 4))
            guard length >= nodeHeaderSize, o + length <= raw.count else { return nil }
            let node = UnsafeRawBufferPointer(rebasing: raw[o..<o + length])
            return checksumHolds(node, page: UInt64(page), pageBound: true) ? nodeChecksum(node) : nil
        }
        if let sum { withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(o + 8..<o + 16, with: $0) } }
    }
}

/// Runs `body` while another process holds the lock file of `path` shared, as every process with the
/// database open does (the lock file must exist: open the database once first). A file of format 5 opened
/// writable meanwhile is not upgraded (`Database.upgradeNodeChecksumsIfNeeded`), and compaction is refused.
func whileAnotherProcessHasItOpen<R>(_ path: String, _ body: () throws -> R) throws -> R {
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/bin/sh")
    holder.arguments = ["-c", "exec 9<\"$1\"; flock -s 9; echo locked; exec sleep 60", "sh", path + ".lock"]
    let out = Pipe()
    holder.standardOutput = out
    try holder.run()
    defer {
        holder.terminate()
        holder.waitUntilExit()
    }
    let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
    guard line.hasPrefix("locked") else {
        throw StorageError.io(path: path + ".lock", operation: "hold the lock file from another process ('\(line)')", errno: EIO)
    }
    return try body()
}
