#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the directory entries of the directory holding `path` durable (`fsync` of the directory): a file's
/// creation, or a rename into that directory, survives a power cut only once this returns. Syncing the file
/// itself does not make its name durable.
///
/// The error names the directory; the caller's operation has not been made durable when this throws.
func syncParentDirectory(of path: String) throws {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    var fd: Int32
    repeat { fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) } while fd < 0 && errno == EINTR
    guard fd >= 0 else { throw StorageError.io(path: directory, operation: "open the directory to sync it", errno: errno) }
    defer { close(fd) }
    var rc: Int32
    repeat { rc = fsync(fd) } while rc != 0 && errno == EINTR
    guard rc == 0 else { throw StorageError.io(path: directory, operation: "fsync the directory", errno: errno) }
}
