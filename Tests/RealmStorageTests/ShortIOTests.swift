import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RealmStorage

/// The loops every read and write of the files goes through (`writeFully`, `writeVectorsFully`, `readFully`),
/// driven through a system call that does a little at a time: a write split into one-byte pieces, a read that
/// returns one byte, every other call interrupted by a signal (EINTR). Each must end with every byte where it
/// belongs. `strace` can interrupt a real call (`InterruptedCallTests`) but cannot shorten one, so the short
/// counts are tested here.
@Suite struct ShortIOTests {
    /// A file holding `count` bytes of a pattern, and the pattern.
    private func patterned(_ dir: TempDir, count: Int) throws -> (fd: Int32, bytes: [UInt8]) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let fd = open(dir.file("f"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        return (fd, bytes)
    }

    /// The file's bytes, read with one plain `pread`.
    private func contents(_ fd: Int32, count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0xEE, count: count)
        let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, 0) }
        return Array(out.prefix(max(0, n)))
    }

    @Test func aWriteSplitIntoOneBytePiecesEndsWhole() throws {
        let dir = TempDir()
        let (fd, bytes) = try patterned(dir, count: 5_000)
        defer { close(fd) }
        var calls = 0
        try bytes.withUnsafeBytes { b in
            try writeFully(fd, b, at: 100, path: dir.file("f"), operation: "write") { fd, p, n, offset in
                calls += 1
                if calls % 2 == 0 { errno = EINTR; return -1 }
                return pwrite(fd, p, min(n, 1), offset)
            }
        }
        #expect(calls == 2 * bytes.count - 1)
        #expect(contents(fd, count: 5_100) == [UInt8](repeating: 0, count: 100) + bytes)
    }

    @Test func aVectorWriteSplitIntoOneBytePiecesEndsWhole() throws {
        let dir = TempDir()
        let (fd, bytes) = try patterned(dir, count: 3_000)
        defer { close(fd) }
        // Pieces of unequal lengths, one of them empty, written as one vector write that the call takes a byte at
        // a time (and is interrupted every third time).
        let cuts = [0, 1, 1, 700, 2_048, 2_049, 3_000]
        var calls = 0
        try bytes.withUnsafeBytes { b in
            var vecs = zip(cuts, cuts.dropFirst()).map { iovec(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress! + $0), iov_len: $1 - $0) }
            try writeVectorsFully(fd, &vecs, at: 4096, path: dir.file("f"), operation: "write") { fd, vecs, count, offset in
                calls += 1
                if calls % 3 == 0 { errno = EINTR; return -1 }
                // One byte of the first vector with bytes left (the loop trims the ones it has written).
                guard let first = UnsafeBufferPointer(start: vecs, count: Int(count)).first(where: { $0.iov_len > 0 }) else { return 0 }
                return pwrite(fd, first.iov_base, 1, offset)
            }
        }
        #expect(calls > bytes.count)
        #expect(contents(fd, count: 4096 + 3_000) == [UInt8](repeating: 0, count: 4096) + bytes)
    }

    @Test func aReadReturningFewerBytesEndsWhole() throws {
        let dir = TempDir()
        let (fd, bytes) = try patterned(dir, count: 4_000)
        defer { close(fd) }
        try bytes.withUnsafeBytes { try writeFully(fd, $0, at: 0, path: dir.file("f"), operation: "write") }
        var calls = 0
        var read = [UInt8](repeating: 0, count: 3_000)
        let n = try read.withUnsafeMutableBytes { buffer in
            try readFully(fd, into: buffer, at: 500, path: dir.file("f"), operation: "read") { fd, p, n, offset in
                calls += 1
                if calls % 2 == 1 { errno = EINTR; return -1 }
                return pread(fd, p, min(n, 1), offset)
            }
        }
        #expect(n == 3_000)
        #expect(read == Array(bytes[500..<3_500]))
        // Past the end of the file: what there is, then the count says where the file ended.
        var tail = [UInt8](repeating: 0, count: 1_000)
        let m = try tail.withUnsafeMutableBytes { buffer in
            try readFully(fd, into: buffer, at: 3_700, path: dir.file("f"), operation: "read") { fd, p, n, offset in
                pread(fd, p, min(n, 7), offset)
            }
        }
        #expect(m == 300)
        #expect(tail.prefix(300).elementsEqual(bytes[3_700...]))
    }

    @Test func anErrorNamesTheFileAndTheOperation() throws {
        let dir = TempDir()
        let (fd, bytes) = try patterned(dir, count: 100)
        defer { close(fd) }
        let error = #expect(throws: StorageError.self) {
            try bytes.withUnsafeBytes { b in
                try writeFully(fd, b, at: 0, path: dir.file("f"), operation: "write the test file") { fd, p, n, offset in
                    if offset == 0 { return pwrite(fd, p, 10, offset) }
                    errno = ENOSPC
                    return -1
                }
            }
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("write the test file"))
        #expect(error.map { "\($0)" }?.contains(dir.file("f")) == true)
        #expect(contents(fd, count: 100) == Array(bytes.prefix(10)))
    }

    /// A write that returns 0 for a positive count made no progress and will make none: an error, not a loop
    /// without end (as `writeVectorsFully` has always done).
    @Test func aWriteThatMakesNoProgressIsAnError() throws {
        let dir = TempDir()
        let (fd, bytes) = try patterned(dir, count: 100)
        defer { close(fd) }
        var calls = 0
        #expect(throws: StorageError.self) {
            try bytes.withUnsafeBytes { b in
                try writeFully(fd, b, at: 0, path: dir.file("f"), operation: "write") { fd, p, n, offset in
                    calls += 1
                    // (After a few calls it writes, so that a loop that retries does not run forever.)
                    return calls <= 3 ? 0 : pwrite(fd, p, n, offset)
                }
            }
        }
        #expect(calls == 1)
    }
}
