import ArgumentParser
import Foundation
import RealmStorage
import RealmTools

/// `realm-browser`: the terminal browser (no subcommand) and the subcommands that make every capability
/// scriptable. Exit codes: 0 success, 1 the operation failed, 2 usage error. Data goes to stdout, messages
/// to stderr.
@main
struct RealmBrowserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-browser",
        abstract: "Browse, query, import, export and maintain Realm-style database files.",
        subcommands: [Browse.self, Demo.self, SchemaCommand.self, Query.self, Import.self, Export.self, Compact.self,
                      Info.self, Verify.self],
        defaultSubcommand: Browse.self
    )

    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let e as CommandFailure {
            printError("realm-browser: \(e.message)")
            Foundation.exit(1)
        } catch let e as ToolError {
            printError("realm-browser: \(e)")
            Foundation.exit(1)
        } catch let e as StorageError {
            printError("realm-browser: \(e)")
            Foundation.exit(1)
        } catch let e as CleanExit {
            _ = e
            exit(withError: e)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)
            }
            printError(fullMessage(for: error))
            Foundation.exit(code == .validationFailure || code.rawValue == 64 ? 2 : code.rawValue == 0 ? 0 : 1)
        }
    }
}

/// A failure with a message for the user (exit code 1).
struct CommandFailure: Error {
    let message: String
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Options for encrypted files, accepted by every subcommand.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-file"), help: "A file holding the 64-byte encryption key (raw or 128 hex digits).")
    var keyFile: String?

    @Option(name: .customLong("key"), help: "The 64-byte encryption key as 128 hex digits.")
    var keyHex: String?

    /// Until encryption lands, a key is refused with a clear message (never echoing the key).
    func check() throws {
        if keyFile != nil || keyHex != nil {
            throw CommandFailure(message: "encrypted files are not supported yet; --key and --key-file cannot be used")
        }
    }
}

/// Opens a database file that must exist, with a clear message when it does not.
func openExisting(_ path: String, readOnly: Bool) throws -> Database {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
        throw CommandFailure(message: "\(path): no such file")
    }
    guard !isDir.boolValue else { throw CommandFailure(message: "\(path): is a directory, not a database file") }
    return try Database.open(path: path, options: DatabaseOptions(readOnly: readOnly))
}
