import ArgumentParser
import Foundation
import RealmCoreFile
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
                      Info.self, Verify.self, Upgrade.self, Convert.self],
        defaultSubcommand: Browse.self
    )

    static func main() {
        // The arguments are copied before the key is scrubbed from the process's memory.
        let arguments = Array(CommandLine.arguments.dropFirst())
        scrubKeyArguments()
        do {
            var command = try parseAsRoot(arguments)
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
        } catch let e as RealmCoreFileError {
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

    /// The key given, if any: 64 bytes from 128 hex digits (`--key`, or `REALM_KEY` in the environment,
    /// which keeps it out of the process list), or from a file of 64 raw bytes or 128 hex digits. Errors say
    /// what is wrong with the key, never the key itself.
    func key() throws -> [UInt8]? {
        if keyFile != nil && keyHex != nil { throw CommandFailure(message: "give --key or --key-file, not both") }
        if let path = keyFile {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(message: "\(path): cannot read the key file")
            }
            if data.count == 64 { return [UInt8](data) }
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return try KeyOptions.parseHex(text, source: "the key file \(path)")
        }
        if let hex = keyHex ?? ProcessInfo.processInfo.environment["REALM_KEY"] {
            return try KeyOptions.parseHex(hex, source: keyHex != nil ? "--key" : "REALM_KEY")
        }
        return nil
    }

    static func parseHex(_ text: String, source: String) throws -> [UInt8] {
        let digits = Array(text.utf8)
        guard digits.count == 128 else {
            throw CommandFailure(message: "\(source): a key is 64 bytes, written as 128 hex digits (found \(digits.count) characters)")
        }
        var out: [UInt8] = []
        out.reserveCapacity(64)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        for i in stride(from: 0, to: 128, by: 2) {
            guard let hi = nibble(digits[i]), let lo = nibble(digits[i + 1]) else {
                throw CommandFailure(message: "\(source): not a hex key (only 0-9 and a-f may appear)")
            }
            out.append(hi << 4 | lo)
        }
        return out
    }

    /// Checks the key options before anything is opened.
    func check() throws { _ = try key() }
}

/// Opens a database file that must exist, with a clear message when it does not.
func openExisting(_ path: String, readOnly: Bool, key: [UInt8]? = nil) throws -> Database {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
        throw CommandFailure(message: "\(path): no such file")
    }
    guard !isDir.boolValue else { throw CommandFailure(message: "\(path): is a directory, not a database file") }
    do {
        return try Database.open(path: path, options: DatabaseOptions(readOnly: readOnly, encryptionKey: key))
    } catch let e as StorageError {
        // A file of an older format opened read-only: say which command upgrades it.
        if case .olderFormat = e { throw CommandFailure(message: "\(e) (`realm-browser upgrade \(path)` does that)") }
        throw e
    }
}

/// Reads one line from the terminal with echo off (for keys), restoring the terminal whatever happens.
func readHiddenLine(prompt: String) throws -> String {
    let fd = open("/dev/tty", O_RDWR)
    guard fd >= 0 else { throw CommandFailure(message: "no terminal to read the key from: give --key-file") }
    defer { close(fd) }
    var saved = termios()
    tcgetattr(fd, &saved)
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ECHO)
    tcsetattr(fd, TCSAFLUSH, &quiet)
    defer { tcsetattr(fd, TCSAFLUSH, &saved) }
    _ = prompt.withCString { write(fd, $0, strlen($0)) }
    var bytes: [UInt8] = []
    var c: UInt8 = 0
    while read(fd, &c, 1) == 1, c != 10, c != 13 { bytes.append(c) }
    _ = write(fd, "\n", 1)
    return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
}

/// Overwrites the value of `--key` in the process's own argument memory (what `ps` and /proc/PID/cmdline
/// show), after Swift has copied the arguments: the key is used, never left on display.
func scrubKeyArguments() {
    let argc = Int(CommandLine.argc)
    let argv = CommandLine.unsafeArgv
    var i = 1
    while i < argc {
        guard let arg = argv[i] else { i += 1; continue }
        let s = String(cString: arg)
        if s == "--key", i + 1 < argc, let value = argv[i + 1] {
            memset(value, 0x2A, strlen(value))   // '*'
            i += 2
            continue
        }
        if s.hasPrefix("--key=") {
            memset(arg + 6, 0x2A, strlen(arg) - 6)
        }
        i += 1
    }
}
