import Foundation
import RealmStorage

/// What `info` prints: sizes, versions and classes of a database file.
public struct InfoReport {
    public var path: String
    public var fileBytes: Int
    public var usedBytes: Int
    public var version: UInt64
    public var schemaVersion: UInt64
    public var versionsHeld: Int
    public var classes: [(name: String, count: Int)]
    /// Bytes of commits in `NAME.realm.log` not yet checkpointed into the file; nil without a log.
    public var commitLogBytes: Int?
    public var isEncrypted: Bool
    /// Meta slots that are damaged (the file opened at the other one).
    public var metaSlotProblems: [String]
    /// Why this process's last checkpoint failed (its commits are safe in the commit log meanwhile).
    public var checkpointFailure: String?
    /// The file's format (`Database.fileFormat`); older than `Database.fileFormatVersion` until upgraded.
    public var fileFormat: UInt32

    public init(database db: Database) throws {
        path = db.path
        let attrs = try? FileManager.default.attributesOfItem(atPath: db.path)
        fileBytes = (attrs?[.size] as? Int) ?? 0
        usedBytes = try ToolError.wrap { try db.usedBytes() }
        let s = try ToolError.wrap { try db.snapshot() }
        defer { s.close() }
        version = s.version
        schemaVersion = s.schemaVersion
        versionsHeld = db.liveVersionCount
        commitLogBytes = db.commitLogBytes
        isEncrypted = db.isEncrypted
        metaSlotProblems = db.metaSlotProblems
        checkpointFailure = db.checkpointFailure
        fileFormat = try ToolError.wrap { try db.fileFormat }
        classes = try s.schema.map { c in (c.name, try ToolError.wrap { try s.count(c.name) }) }
    }

    /// The file's format, and for an older one what upgrading it does and how.
    var formatText: String {
        guard fileFormat < Database.fileFormatVersion else { return "\(fileFormat)" }
        if fileFormat == 6 {
            return "6 (read as it is; open it once without read-only, or run `realm-browser upgrade`, to mark it format "
                + "\(Database.fileFormatVersion) for sets, dictionaries, embedded objects and mixed links)"
        }
        return "\(fileFormat) (node checksums do not cover their pages; open it once without read-only, "
            + "or run `realm-browser upgrade`, to upgrade it to format \(Database.fileFormatVersion))"
    }

    public var text: String {
        let free = max(fileBytes - usedBytes, 0)
        var lines = [
            ("file", path),
            ("size", InfoReport.bytes(fileBytes)),
            ("live data", InfoReport.bytes(usedBytes)),
            ("free space", "\(InfoReport.bytes(free)) (\(fileBytes > 0 ? free * 100 / fileBytes : 0) %)"),
            ("format", formatText),
            ("version", "\(version)"),
            ("schema version", "\(schemaVersion)"),
            ("versions held", "\(versionsHeld)"),
            ("commit log", logText),
        ]
        if let f = checkpointFailure { lines.append(("checkpoint", "failed: \(f)")) }
        for p in metaSlotProblems { lines.append(("damage", p)) }
        lines.append(("classes", "\(classes.count)"))
        var out = lines.map { $0.0.padding(toLength: 16, withPad: " ", startingAt: 0) + $0.1 + "\n" }.joined() + "\n"
        let width = classes.map(\.name.count).max() ?? 0
        for c in classes {
            out += "  \(c.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(c.count)\n"
        }
        return out
    }

    private var logText: String {
        guard let n = commitLogBytes else {
            return isEncrypted ? "none (encrypted: every commit is synced in the file)" : "none"
        }
        return n == 0 ? "empty (the file holds every commit)" : "\(InfoReport.bytes(n)) of commits since the last checkpoint"
    }

    /// `1.5 MiB (1,572,864 bytes)`.
    public static func bytes(_ n: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(n)
        var u = 0
        while v >= 1024 && u < units.count - 1 { v /= 1024; u += 1 }
        let grouped = n.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
        return u == 0 ? "\(grouped) bytes" : String(format: "%.1f %@ (%@ bytes)", v, units[u], grouped)
    }
}
