#if canImport(Glibc)
import Glibc
#endif

/// The byte-range locks of the lock file: `fcntl` record locks (the writer lease, the open guard, the waiter
/// byte), and the liveness byte of each reader slot (`LockFile.livenessBase`): an open file description lock
/// its owner holds while it uses the slot, which the kernel drops when the owner's descriptor closes or its
/// process dies, in any PID namespace.
extension LockFile {
    /// `fcntl` record lock on one byte; returns 0 or the errno. Retries on EINTR.
    static func recordLock(_ fd: Int32, type: Int32, byte: off_t, wait: Bool) -> Int32 {
        var fl = flock()
        fl.l_type = Int16(type)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = byte
        fl.l_len = 1
        while true {
            if fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl) == 0 { return 0 }
            let e = errno
            if e != EINTR { return e }
        }
    }
    /// `F_OFD_SETLK` (non-blocking) of slot `slot`'s liveness byte; 0 or the errno.
    static func livenessLock(_ fd: Int32, slot: Int, type: Int32) -> Int32 {
        var fl = flock()
        fl.l_type = Int16(type)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = livenessBase + off_t(slot)
        fl.l_len = 1
        while true {
            if fcntl(fd, ofdSetLock, &fl) == 0 { return 0 }
            let e = errno
            if e != EINTR { return e }
        }
    }

    /// Whether another open file description holds slot `slot`'s liveness byte (`F_OFD_GETLK`); nil when the
    /// kernel could not say.
    static func livenessHeld(_ fd: Int32, slot: Int) -> Bool? {
        var fl = flock()
        fl.l_type = Int16(F_WRLCK)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = livenessBase + off_t(slot)
        fl.l_len = 1
        guard fcntl(fd, ofdGetLock, &fl) == 0 else { return nil }
        return fl.l_type != Int16(F_UNLCK)
    }

    /// Linux's `F_OFD_GETLK` and `F_OFD_SETLK` (open file description locks), which Swift's Glibc module does not export.
    static let ofdGetLock: Int32 = 36
    static let ofdSetLock: Int32 = 37
}
