import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files an app has open: Realm Core writes a new version into free space and then switches the header to it,
/// and may reuse the space of versions no reader it knows of holds. The browser is not one of its readers (it
/// creates and locks nothing), so a file an app is writing is read from a consistent copy (a snapshot), and a
/// file whose size or modification time changes is opened again (DECISIONS 99).
extension RealmCoreFile {
    /// The size and modification time of a file, to notice that it changed.
    public struct Stamp: Equatable, Sendable {
        public let size: Int64
        public let modified: timespec
        public let inode: UInt64

        public static func == (a: Stamp, b: Stamp) -> Bool {
            a.size == b.size && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec && a.inode == b.inode
        }
    }

    /// The file's stamp now; nil when it cannot be read (gone, or not permitted).
    public static func stamp(path: String) -> Stamp? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Stamp(size: Int64(st.st_size), modified: st.st_mtim, inode: UInt64(st.st_ino))
    }

    /// Whether a process holds a lock on the file's `.lock` companion, as Realm Core does for as long as an app
    /// has the file open. Read from `/proc/locks` (Linux): the lock file is not opened, let alone locked.
    public static func isOpenByAnApp(path: String) -> Bool {
        var st = stat()
        guard stat(path + ".lock", &st) == 0 else { return false }
        // No /proc/locks (not Linux, or not mounted): nothing known to hold the file; it is read in place.
        guard let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return false }
        let dev = UInt64(st.st_dev)
        let major = ((dev >> 8) & 0xFFF) | ((dev >> 32) & ~UInt64(0xFFF))
        let minor = (dev & 0xFF) | ((dev >> 12) & ~UInt64(0xFF))
        let inode = UInt64(st.st_ino)
        for line in locks.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 18411 fe:00:16237532 0 EOF" (a "->" marks a blocked waiter).
            for field in line.split(separator: " ") where field.filter({ $0 == ":" }).count == 2 {
                let parts = field.split(separator: ":")
                guard parts.count == 3, let ma = UInt64(parts[0], radix: 16), let mi = UInt64(parts[1], radix: 16),
                      let ino = UInt64(parts[2]) else { continue }
                if ma == major && mi == minor && ino == inode { return true }
            }
        }
        return false
    }

    /// Copies `path` to `destination` so that the copy holds one committed version: the file's stamp and header
    /// are read before and after the copy, and the copy is made again when a commit landed meanwhile. An error
    /// after `attempts` copies that each saw a commit.
    public static func snapshotCopy(of path: String, to destination: String, attempts: Int = 8) throws {
        for _ in 0..<attempts {
            guard let before = stamp(path: path) else { throw RealmCoreFileError.io(path: path, operation: "stat", errno: errno) }
            let headerBefore = try header(of: path)
            try copyFile(path, destination)
            guard let after = stamp(path: path), after == before, try header(of: path) == headerBefore,
                  try header(of: destination) == headerBefore else { continue }
            return
        }
        try? FileManager.default.removeItem(atPath: destination)  // (a partial copy: nothing to keep)
        throw RealmCoreFileError.io(path: path, operation: "copy (the app committed during each of \(attempts) attempts)", errno: EAGAIN)
    }

    /// Opens `path` in place, or, while an app has it open, a snapshot copy of it (made in the temporary directory,
    /// and removed as soon as it is mapped, so that nothing is left behind).
    public static func openConsistent(path: String, key: [UInt8]?) throws -> (file: RealmCoreFile, isSnapshot: Bool) {
        guard isOpenByAnApp(path: path) else { return (try RealmCoreFile(path: path, key: key), false) }
        let copy = NSTemporaryDirectory() + "/realm-browser-snapshot-\(UUID().uuidString).realm"
        try snapshotCopy(of: path, to: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }  // (already gone: nothing to remove)
        return (try RealmCoreFile(path: copy, key: key), true)
    }

    /// The first 24 bytes (the header: both top refs, the format bytes and the switch).
    static func header(of path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RealmCoreFileError.io(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 24)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 24, 0) }
        guard n >= 0 else { throw RealmCoreFileError.io(path: path, operation: "read", errno: errno) }
        return Array(bytes[0..<n])
    }

    static func copyFile(_ from: String, _ to: String) throws {
        let input = open(from, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw RealmCoreFileError.io(path: from, operation: "open", errno: errno) }
        defer { close(input) }
        let output = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw RealmCoreFileError.io(path: to, operation: "create", errno: errno) }
        defer { close(output) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        while true {
            let n = read(input, buffer, 1 << 20)
            if n < 0 {
                if errno == EINTR { continue }
                throw RealmCoreFileError.io(path: from, operation: "read", errno: errno)
            }
            if n == 0 { return }
            var done = 0
            while done < n {
                let w = write(output, buffer + done, n - done)
                if w < 0 {
                    if errno == EINTR { continue }
                    throw RealmCoreFileError.io(path: to, operation: "write", errno: errno)
                }
                done += w
            }
        }
    }
}
