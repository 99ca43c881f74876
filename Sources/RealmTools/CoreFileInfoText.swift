import Foundation
import RealmCoreFile

extension RealmCoreFile {
    /// What `info` prints for a Realm Core file (the command line and the browser's `:info`): the format and who
    /// writes it, the form, size, classes with counts, and the internal tables apart. The file is only read.
    public var infoText: String { realmCoreInfoText(self) }

    /// `infoText` for the file at `path`, of which this is a snapshot copy (an app had it open).
    public func infoText(snapshotOf path: String) -> String {
        realmCoreInfoText(self, path: path, note: "a snapshot: an app has the file open, so a consistent copy is read")
    }
}

func realmCoreInfoText(_ f: RealmCoreFile, path: String? = nil, note: String? = nil) -> String {
    var lines = [
        ("file", path ?? f.path),
        ("kind", "Realm Core file · format \(f.format) (\(f.coreReleases)) · read-only"),
        ("written by", f.sdkReleases),
        ("form", f.isStreaming ? "streaming (a copy written whole: writeCopy, bundled files)" : "committed (written in place by a running app)"),
        ("size", InfoReport.bytes(f.fileSize)),
        ("encrypted", f.isEncrypted ? "yes" : "no"),
        ("schema version", f.schemaVersion.map { "\($0)" } ?? "not set"),
        ("classes", "\(f.classes.count)"),
    ]
    if let note { lines.append(("read", note)) }
    lines.append(("internal tables", "\(f.systemTables.count) (not classes: no `class_` prefix)"))
    var out = lines.map { $0.0.padding(toLength: 16, withPad: " ", startingAt: 0) + $0.1 + "\n" }.joined() + "\n"
    let width = (f.classes + f.systemTables).map(\.name.count).max() ?? 0
    for c in f.classes + f.systemTables {
        var notes: [String] = []
        if !c.tableName.hasPrefix("class_") { notes.append("internal") }
        if c.isEmbedded { notes.append("embedded") }
        if c.isAsymmetric { notes.append("asymmetric") }
        if let pk = c.primaryKey { notes.append("primary key \(pk)") }
        out += "  \(c.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(c.objectCount)"
            + (notes.isEmpty ? "" : "  (\(notes.joined(separator: ", ")))") + "\n"
    }
    return out
}

