#if canImport(Glibc)
import Glibc
#endif

// The loops every read and write of the files goes through: each call is retried when a signal interrupted
// it (EINTR) and continued from where a short count left it. The system call is a parameter, so that tests
// can split a write into one-byte pieces or return fewer bytes than asked (`ShortIOTests`); the engine
// always passes the default.

/// `pwrite(2)`.
typealias PWriteCall = (_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int
/// `pwritev(2)`.
typealias PWriteVCall = (_ fd: Int32, _ vecs: UnsafePointer<iovec>?, _ count: Int32, _ offset: off_t) -> Int
/// `pread(2)`.
typealias PReadCall = (_ fd: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int, _ offset: off_t) -> Int

/// `pwritev` until every byte of `vecs` is at `offset` of `fd`, in order (at most 1,024 vectors per call;
/// retrying after signals, skipping written vectors and trimming a partly written one); an error names
/// `path` and `operation`.
func writeVectorsFully(_ fd: Int32, _ vecs: inout [iovec], at offset: Int, path: String, operation: String,
                       pwritev call: PWriteVCall = { pwritev($0, $1, $2, $3) }) throws {
    var done = 0
    var vi = 0
    while vi < vecs.count {
        if vecs[vi].iov_len == 0 { vi += 1; continue }
        let n = vecs[vi...].withUnsafeBufferPointer { call(fd, $0.baseAddress, Int32(min($0.count, 1024)), off_t(offset + done)) }
        if n < 0 {
            if errno == EINTR { continue }
            throw StorageError.io(path: path, operation: operation, errno: errno)
        }
        if n == 0 { throw StorageError.io(path: path, operation: operation + " (no progress)", errno: EIO) }
        done += n
        var left = n
        while vi < vecs.count, left >= vecs[vi].iov_len { left -= vecs[vi].iov_len; vi += 1 }
        if left > 0 {
            vecs[vi].iov_base = vecs[vi].iov_base.advanced(by: left)
            vecs[vi].iov_len -= left
        }
    }
}

/// `pwrite` until every byte of `bytes` is at `offset` of `fd` (retrying after signals); an error names
/// `path` and `operation`.
func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String, operation: String,
                pwrite call: PWriteCall = { pwrite($0, $1, $2, $3) }) throws {
    var done = 0
    while done < bytes.count {
        let n = call(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
        if n < 0 {
            if errno == EINTR { continue }
            throw StorageError.io(path: path, operation: operation, errno: errno)
        }
        if n == 0 { throw StorageError.io(path: path, operation: operation + " (no progress)", errno: EIO) }
        done += n
    }
}

/// `pread` until `buffer` is full or the file ends (retrying after signals, continuing after a short count);
/// returns the bytes read, fewer than `buffer.count` only at the end of the file. An error names `path` and
/// `operation`.
func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String, operation: String,
               pread call: PReadCall = { pread($0, $1, $2, $3) }) throws -> Int {
    var done = 0
    while done < buffer.count {
        let n = call(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
        if n < 0 {
            if errno == EINTR { continue }
            throw StorageError.io(path: path, operation: operation, errno: errno)
        }
        if n == 0 { break }
        done += n
    }
    return done
}

/// `fdatasync`, tried again when a signal interrupted it; an error names `path` and `operation`.
func syncData(_ fd: Int32, path: String, operation: String) throws {
    while fdatasync(fd) != 0 {
        if errno == EINTR { continue }
        throw StorageError.io(path: path, operation: operation, errno: errno)
    }
}

/// `ftruncate` to `bytes`, tried again when a signal interrupted it; an error names `path` and `operation`.
func setFileSize(_ fd: Int32, to bytes: Int, path: String, operation: String) throws {
    while ftruncate(fd, off_t(bytes)) != 0 {
        if errno == EINTR { continue }
        throw StorageError.io(path: path, operation: operation, errno: errno)
    }
}

/// `open`, tried again when a signal interrupted it; the descriptor, or -1 with `errno` set.
func openRetrying(_ path: String, _ flags: Int32, mode: mode_t = 0o644) -> Int32 {
    while true {
        let fd = open(path, flags, mode)
        if fd >= 0 || errno != EINTR { return fd }
    }
}
