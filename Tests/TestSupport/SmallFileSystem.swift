import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted on a new directory for one test, unmounted and removed afterwards: a disk that can be
/// filled in a moment. Needs the right to mount (root; CI runs as root).
public final class SmallFileSystem {
    public let path: String
    /// The file `fill()` wrote, and how many bytes.
    public private(set) var fillerBytes = 0
    public var filler: String { path + "/filler" }

    /// Whether a tmpfs can be mounted here (tried once).
    public static let canMount: Bool = {
        guard let fs = try? SmallFileSystem(kilobytes: 64) else { return false }  // (any failure means "cannot")
        return access(fs.path, W_OK) == 0
    }()

    public init(kilobytes: Int) throws {
        path = FileManager.default.temporaryDirectory.path + "/rbtest-smallfs-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let status = Self.run(["mount", "-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
        guard status == 0 else {
            rmdir(path)
            throw SmallFileSystemFailure("mount -t tmpfs on \(path) failed (status \(status))")
        }
    }

    deinit {
        if Self.run(["umount", path]) != 0 { _ = Self.run(["umount", "-l", path]) }
        rmdir(path)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes zeros to `filler` until the file system is full.
    public func fill() throws {
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SmallFileSystemFailure("cannot create \(filler): errno \(errno)") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 { fillerBytes += n; continue }
            if n < 0 && errno == EINTR { continue }
            guard n < 0 && errno == ENOSPC else { throw SmallFileSystemFailure("filling \(filler): errno \(errno)") }
            return
        }
    }

    /// Gives `bytes` of the filler back.
    public func free(_ bytes: Int) {
        fillerBytes = max(0, fillerBytes - bytes)
        _ = truncate(filler, off_t(fillerBytes))
    }

    /// Runs a command found on the usual paths; its exit status (-1 when it could not be run).
    @discardableResult
    public static func run(_ arguments: [String]) -> Int32 {
        let directories = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        guard let exe = directories.map({ $0 + "/" + arguments[0] }).first(where: { access($0, X_OK) == 0 }) else { return -1 }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = Array(arguments.dropFirst())
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }
}

/// Why a `SmallFileSystem` could not be set up or filled.
public struct SmallFileSystemFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
