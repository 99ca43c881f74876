#if canImport(Glibc)
import Glibc
#endif

/// One read-only (file) or read-write (memory) view of the database's pages.
///
/// The mapping reserves far more address space than the file needs, so the file can grow without remapping;
/// when it outgrows the reservation a new, larger mapping is made and the old one stays alive for as long as
/// a snapshot still references it.
final class Mapping: @unchecked Sendable {
    // Safe to share: the mapped memory is never written through this object for files, and for in-memory
    // stores every write happens under the writer lock into pages no published snapshot can reach.
    let base: UnsafeMutableRawPointer
    let length: Int

    init(base: UnsafeMutableRawPointer, length: Int) {
        self.base = base
        self.length = length
    }

    deinit { munmap(base, length) }
}

/// The pages of one database: a file (`pwrite` to write, a shared read-only map to read) or anonymous memory.
final class PageStore: @unchecked Sendable {
    // Mutable state (`mapping`, `fileBytes`) is only changed under `stateLock`; readers take the current
    // mapping once per snapshot and keep a strong reference to it.
    let path: String
    let fd: Int32
    let isMemory: Bool
    let readOnly: Bool
    private let stateLock = PthreadMutex()
    private var _mapping: Mapping

    static let defaultReservation = 1 << 36  // 64 GiB of address space; pages beyond the file are never touched

    /// Opens a file store. `fd` is owned by the store from here on.
    init(path: String, fd: Int32, readOnly: Bool) throws {
        self.path = path
        self.fd = fd
        self.isMemory = false
        self.readOnly = readOnly
        let size = try PageStore.fileSize(fd: fd, path: path)
        _mapping = try PageStore.mapFile(fd: fd, path: path, length: max(PageStore.defaultReservation, size * 2))
        knownBytes = size
    }

    /// Creates an empty in-memory store.
    init(memoryNamed name: String) throws {
        self.path = name
        self.fd = -1
        self.isMemory = true
        self.readOnly = false
        _mapping = try PageStore.mapAnonymous(length: PageStore.defaultReservation, path: name)
    }

    deinit { if fd >= 0 { close(fd) } }

    var mapping: Mapping { stateLock.withLock { _mapping } }

    /// A meta slot found torn at a read-only open (which cannot zero it): readers of this process skip it.
    private var _tornMeta: Meta?
    var tornMeta: Meta? {
        get { stateLock.withLock { _tornMeta } }
        set { stateLock.withLock { _tornMeta = newValue } }
    }

    /// Bytes in the file (or in use in memory), as the OS reports it for files.
    private var memoryBytes = 0
    func currentSize() throws -> Int {
        if isMemory { return stateLock.withLock { memoryBytes } }
        let size = try PageStore.fileSize(fd: fd, path: path)
        stateLock.withLock { knownBytes = max(knownBytes, size) }
        return size
    }

    /// Bytes the file is known to hold: its size at the last `fstat`, or more after this process's writes.
    /// A database file only grows while it is open (compaction makes a new store), so a version whose pages
    /// lie below this needs no `fstat` to rule out truncation. Asking costs more than the call: on Linux an
    /// `fstat` marks the file's timestamps as seen, so the next write stamps a fine-grained time and dirties
    /// the inode, which the commit's `fdatasync` must then write as well (DECISIONS 17).
    private var knownBytes = 0

    /// Whether the file holds at least `bytes` bytes; `fstat` only when that is not already known.
    func holds(bytes: Int) throws -> (Bool, size: Int) {
        let known = stateLock.withLock { isMemory ? memoryBytes : knownBytes }
        if bytes <= known { return (true, known) }
        let size = try currentSize()
        return (bytes <= size, size)
    }

    /// Makes sure the mapping covers `bytes` bytes (after the file grew).
    func ensureMapped(bytes: Int) throws {
        try stateLock.withLock {
            if !isMemory { knownBytes = max(knownBytes, bytes) }
            if bytes <= _mapping.length { return }
            let newLength = max(bytes * 2, _mapping.length * 2)
            if isMemory {
                let m = try PageStore.mapAnonymous(length: newLength, path: path)
                m.base.copyMemory(from: _mapping.base, byteCount: memoryBytes)
                _mapping = m
            } else {
                _mapping = try PageStore.mapFile(fd: fd, path: path, length: newLength)
            }
        }
    }

    /// Writes `bytes` at page `page`. Pages written must not be reachable from any published version.
    func write(_ bytes: UnsafeRawBufferPointer, atPage page: UInt64) throws {
        let offset = Int(page) * pageSize
        if isMemory {
            try ensureMapped(bytes: offset + bytes.count)
            stateLock.withLock {
                _mapping.base.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                memoryBytes = max(memoryBytes, offset + bytes.count)
            }
            return
        }
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StorageError.io(path: path, operation: "write", errno: errno)
            }
            done += n
        }
        try ensureMapped(bytes: offset + bytes.count)
    }

    /// Writes nodes to consecutive pages starting at `page`, each padded with zeros to whole pages, in one
    /// `pwritev` per batch of buffers (no copying into a staging buffer).
    func write(pages chunks: [[UInt8]], atPage page: UInt64) throws {
        if isMemory {
            var p = page
            for c in chunks {
                let pages = pagesFor(bytes: c.count)
                var padded = c
                padded.append(contentsOf: repeatElement(0, count: pages * pageSize - c.count))
                try padded.withUnsafeBytes { try write($0, atPage: p) }
                p += UInt64(pages)
            }
            return
        }
        let zeros = PageStore.zeroPage
        var offset = Int(page) * pageSize
        var index = 0
        while index < chunks.count {
            // At most IOV_MAX/2 chunks per call (each may need a padding vector).
            let batch = chunks[index..<min(chunks.count, index + 500)]
            var total = 0
            var keep: [[UInt8]] = []
            for c in batch {
                keep.append(c)
                let pad = pagesFor(bytes: c.count) * pageSize - c.count
                total += c.count + pad
            }
            try withIOVecs(keep, zeros: zeros) { vecs in
                var done = 0
                var vi = 0
                var vecs = vecs
                while done < total {
                    let n = vecs[vi...].withUnsafeBufferPointer { pwritev(fd, $0.baseAddress, Int32(min($0.count, 1024)), off_t(offset + done)) }
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw StorageError.io(path: path, operation: "write", errno: errno)
                    }
                    done += n
                    // Skip fully written vectors; trim a partly written one.
                    var left = n
                    while vi < vecs.count, left >= vecs[vi].iov_len { left -= vecs[vi].iov_len; vi += 1 }
                    if left > 0 {
                        vecs[vi].iov_base = vecs[vi].iov_base.advanced(by: left)
                        vecs[vi].iov_len -= left
                    }
                }
            }
            offset += total
            index += batch.count
        }
        try ensureMapped(bytes: offset)
    }

    private static let zeroPage = [UInt8](repeating: 0, count: pageSize)

    /// Builds iovecs over the chunks (and padding from `zeros`) valid for the duration of `body`.
    private func withIOVecs(_ chunks: [[UInt8]], zeros: [UInt8], _ body: ([iovec]) throws -> Void) throws {
        var vecs: [iovec] = []
        func build(_ i: Int) throws {
            if i == chunks.count { try body(vecs); return }
            try chunks[i].withUnsafeBytes { buf in
                try zeros.withUnsafeBytes { z in
                    let pad = pagesFor(bytes: buf.count) * pageSize - buf.count
                    vecs.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: buf.baseAddress), iov_len: buf.count))
                    if pad > 0 { vecs.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: z.baseAddress), iov_len: pad)) }
                    try build(i + 1)
                }
            }
        }
        try build(0)
    }

    /// Flushes written data to stable storage (one `fdatasync`).
    func sync() throws {
        if isMemory { return }
        if fdatasync(fd) != 0 { throw StorageError.io(path: path, operation: "fdatasync", errno: errno) }
    }

    func truncate(toPages pages: UInt64) throws {
        if isMemory { stateLock.withLock { memoryBytes = min(memoryBytes, Int(pages) * pageSize) }; return }
        if ftruncate(fd, off_t(Int(pages) * pageSize)) != 0 {
            throw StorageError.io(path: path, operation: "ftruncate", errno: errno)
        }
        stateLock.withLock { knownBytes = Int(pages) * pageSize }
    }

    static func fileSize(fd: Int32, path: String) throws -> Int {
        var st = stat()
        if fstat(fd, &st) != 0 { throw StorageError.io(path: path, operation: "fstat", errno: errno) }
        return Int(st.st_size)
    }

    private static func mapFile(fd: Int32, path: String, length: Int) throws -> Mapping {
        guard let p = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            throw StorageError.io(path: path, operation: "mmap", errno: errno)
        }
        return Mapping(base: p, length: length)
    }

    private static func mapAnonymous(length: Int, path: String) throws -> Mapping {
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
              p != MAP_FAILED else {
            throw StorageError.io(path: path, operation: "mmap", errno: errno)
        }
        return Mapping(base: p, length: length)
    }
}

/// A small pthread mutex wrapper usable from any thread (`Synchronization.Mutex` needs non-copyable plumbing).
final class PthreadMutex: @unchecked Sendable {
    // Safe: the pthread mutex itself provides the synchronisation; the pointer is never shared otherwise.
    private let m: UnsafeMutablePointer<pthread_mutex_t>

    /// A recursive mutex may be locked again by the thread that holds it.
    init(recursive: Bool = false) {
        m = .allocate(capacity: 1)
        if recursive {
            var attr = pthread_mutexattr_t()
            pthread_mutexattr_init(&attr)
            pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_RECURSIVE))
            pthread_mutex_init(m, &attr)
            pthread_mutexattr_destroy(&attr)
        } else {
            pthread_mutex_init(m, nil)
        }
    }

    deinit {
        pthread_mutex_destroy(m)
        m.deallocate()
    }

    func lock() { pthread_mutex_lock(m) }
    func unlock() { pthread_mutex_unlock(m) }
    /// Locks when free; false at once when another thread holds it.
    func tryLock() -> Bool { pthread_mutex_trylock(m) == 0 }

    @inline(__always) func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return try body()
    }
}
