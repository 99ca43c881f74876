import Foundation
import RealmCoreFile
import RealmTools

/// `info` on a Realm Core file (recognised by its contents): the format and who writes it, the form, size,
/// classes with counts, and the internal tables apart. The file is only read.
func realmCoreInfoText(_ f: RealmCoreFile) -> String {
    var lines = [
        ("file", f.path),
        ("kind", "Realm Core file · format \(f.format) (\(f.coreReleases)) · read-only"),
        ("written by", f.sdkReleases),
        ("form", f.isStreaming ? "streaming (a copy written whole: writeCopy, bundled files)" : "committed (written in place by a running app)"),
        ("size", InfoReport.bytes(f.fileSize)),
        ("encrypted", f.isEncrypted ? "yes" : "no"),
        ("schema version", f.schemaVersion.map { "\($0)" } ?? "not set"),
        ("classes", "\(f.classes.count)"),
    ]
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

/// The Realm Core file at `path`, if it is one: by its `T-DB` header, or (encrypted, when a key is given) by
/// opening it with the key after our own format refused it.
/// Without a key, a file our format refused that is laid out as an encrypted Realm Core file is (no header, whole
/// pages) is an error that says a key may open it, beside our format's own reason.
func openRealmCoreFile(_ path: String, key: [UInt8]?, ownFormatError: Error? = nil) throws -> RealmCoreFile? {
    if RealmCoreFile.looksLikeRealmCoreFile(path: path) { return try RealmCoreFile(path: path, key: key) }
    guard let ownFormatError else { return nil }
    guard let key else {
        do {
            _ = try RealmCoreFile(path: path, key: nil)
        } catch RealmCoreFileError.keyRequired {
            throw CommandFailure(message: "\(ownFormatError); if it is an encrypted Realm Core file, give its 64-byte key "
                                 + "with --key or --key-file")
        } catch {
            return nil  // not laid out as one either: the caller reports its own error
        }
        return nil
    }
    return try? RealmCoreFile(path: path, key: key)  // (not one either: the caller reports its own error)
}
