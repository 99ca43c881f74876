import ArgumentParser
import BrowserCore
import Foundation
import RealmCoreFile
import RealmStorage
import RealmTools

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a Realm Core file (one an app wrote) into a file of this format.",
        discussion: """
        Every class, property, object, value, link, primary key and index is carried over (backlinks follow \
        from the links); the copy is verified afterwards. The Realm Core file is only read: its bytes and \
        modification time stay as they were. --key/--key-file/REALM_KEY open an encrypted one; the copy is \
        not encrypted.
        """)

    @Argument(help: "The Realm Core file.") var input: String
    @Argument(help: "The file to write.") var output: String
    @Flag(help: "Replace the output file if it exists.") var force = false
    @OptionGroup var key: KeyOptions

    func run() throws {
        let keyBytes = try key.key()
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isDir), !isDir.boolValue else {
            throw CommandFailure(message: "\(input): no such file")
        }
        let core = try openRealmCoreFileForConversion(input, key: keyBytes)
        if FileManager.default.fileExists(atPath: output) {
            guard force else { throw CommandFailure(message: "\(output) exists; give --force to replace it") }
            let a = URL(fileURLWithPath: input).resolvingSymlinksInPath().path, b = URL(fileURLWithPath: output).resolvingSymlinksInPath().path
            guard a != b else { throw CommandFailure(message: "\(output) is the input file: give another name for the copy") }
            removeDatabaseFiles(output)
        }
        let start = Date()
        var converted = start
        let report: CoreConversion.Report
        let verify: VerifyReport
        do {
            let db = try Database.open(path: output)
            let bar = ProgressBar("convert")
            report = try CoreConversion(file: core, progress: bar.update).run(into: db)
            bar.finish()
            converted = Date()
            verify = try db.verify()
        } catch {
            removeDatabaseFiles(output)
            throw error
        }
        guard verify.isOK else {
            throw CommandFailure(message: "\(output): the converted copy does not verify: \(verify.problems.first ?? "")")
        }
        let seconds = converted.timeIntervalSince(start), checking = Date().timeIntervalSince(converted)
        print("\(input) (Realm Core file, format \(core.format)) → \(output): \(counted(report.classes.count, "class", "classes")), "
              + "\(counted(report.total, "object")), converted in \(String(format: "%.2f", seconds)) s, verified in "
              + "\(String(format: "%.2f", checking)) s; no problems")
        for c in report.classes { print("  \(c.name)  \(c.objects)") }
        for r in report.renamed {
            print("  note: \(r.className).\(r.from.isEmpty ? "(no name)" : r.from) is \(r.className).\(r.to) in the copy (a name the class already has, or none)")
        }
    }
}

/// The Realm Core file at `path` for `convert`: one by its header, or an encrypted one opened with the key.
func openRealmCoreFileForConversion(_ path: String, key: [UInt8]?) throws -> RealmCoreFile {
    if RealmCoreFile.looksLikeRealmCoreFile(path: path) { return try RealmCoreFile(path: path, key: key) }
    if let key {
        do {
            return try RealmCoreFile(path: path, key: key)
        } catch RealmCoreFileError.wrongKey {
            // One of our own encrypted files does not authenticate as a Realm Core file either.
            if (try? Database.open(path: path, options: DatabaseOptions(readOnly: true, encryptionKey: key))) != nil {  // (any error: not ours)
                throw CommandFailure(message: "\(path) is already a file of this format (encrypted), not a Realm Core file")
            }
            throw RealmCoreFileError.wrongKey(path: path)
        }
    }
    if (try? Database.open(path: path, options: DatabaseOptions(readOnly: true))) != nil {  // (any error: not ours either)
        throw CommandFailure(message: "\(path) is already a file of this format, not a Realm Core file")
    }
    // No header and no key: an encrypted Realm Core file, or not a Realm file at all (the reader says which).
    return try RealmCoreFile(path: path, key: nil)
}

/// A file a read-only command was given: one of our format, or a Realm Core file.
enum ReadableFile {
    case own(Database)
    case realmCore(RealmCoreFile)

    /// Opens `path` read-only: a Realm Core file by its header, else one of ours, else (an encrypted file our
    /// format refused, with a key) a Realm Core file after all; our format's error when it is neither.
    static func open(_ path: String, key: [UInt8]?) throws -> ReadableFile {
        if let core = try openRealmCoreFile(path, key: key) { return .realmCore(core) }
        do {
            return .own(try openExisting(path, readOnly: true, key: key))
        } catch {
            guard let core = try openRealmCoreFile(path, key: key, ownFormatError: error) else { throw error }
            return .realmCore(core)
        }
    }
}

/// Runs a read-only command's `body` on `path`: a snapshot of a file of our format, or a Realm Core file
/// (recognised by its contents) read in place.
func readFile<T>(_ path: String, key: [UInt8]?, _ body: (any ObjectReader) throws -> T) throws -> T {
    switch try ReadableFile.open(path, key: key) {
    case .own(let db): return try db.read { try body($0) }
    case .realmCore(let core):
        // A file an app has open is read from a snapshot copy, consistent whatever the app commits meanwhile.
        let file = RealmCoreFile.isOpenByAnApp(path: path) ? try RealmCoreFile.openConsistent(path: path, key: key).file : core
        return try body(try CoreFileReader(file: file))
    }
}

/// A Realm Core file converted into a new in-memory database.
func convertInMemory(_ core: RealmCoreFile) throws -> Database {
    let db = try Database.inMemory(identifier: "realm-core-\(UUID().uuidString)")
    try CoreConversion(file: core).run(into: db)
    return db
}

/// Removes a database file and what the engine keeps beside it.
func removeDatabaseFiles(_ path: String) {
    for suffix in ["", ".lock", ".log"] {
        try? FileManager.default.removeItem(atPath: path + suffix)  // (absent: nothing to remove)
    }
}

/// Opens `file` for the browser: a file of our format, or a Realm Core file (by its header, or an encrypted one)
/// shown through a conversion in memory, read-only. An encrypted file opened without a key asks `prompt` for
/// one (nil: no one to ask). A key that opens neither kind says which error applies: our format's when the file
/// is ours, `wrong key` when it is an encrypted Realm Core file.
func openForBrowsing(_ file: String, readOnly: Bool, key: [UInt8]?, prompt: () throws -> [UInt8]?) throws -> BrowserData {
    if RealmCoreFile.looksLikeRealmCoreFile(path: file) { return try BrowserData(realmCorePath: file, key: key) }
    let own: Error
    do {
        return try BrowserData(database: try openExisting(file, readOnly: readOnly, key: key))
    } catch {
        own = error
    }
    if case StorageError.invalidKey? = own as? StorageError { throw own }  // one of ours, with a key that is not its own
    do {
        return try BrowserData(realmCorePath: file, key: key)
    } catch let core as RealmCoreFileError {
        switch core {
        case .keyRequired where key == nil:
            guard let typed = try prompt() else { throw own }
            return try openForBrowsing(file, readOnly: readOnly, key: typed, prompt: { nil })
        case .wrongKey, .decryptionFailed, .interruptedUpgrade, .unsupportedFormat, .corrupt, .unsupportedValue:
            throw core
        default:
            if case StorageError.encryptionKeyRequired? = own as? StorageError, key == nil, let typed = try prompt() {
                return try openForBrowsing(file, readOnly: readOnly, key: typed, prompt: { nil })
            }
            throw own
        }
    }
}
