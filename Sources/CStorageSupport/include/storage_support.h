#ifndef STORAGE_SUPPORT_H
#define STORAGE_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/// Copies `count` pieces one after another to `dst` (piece `i` is `lengths[i]` bytes at `sources[i]`) with
/// non-temporal stores where the CPU has them (x86-64), else `memcpy`; the stores are complete (fenced once,
/// at the end) when it returns. For a buffer the CPU writes once and a device then reads by DMA (a direct-I/O
/// record): ordinary stores would first read each line into the cache, which the device's last read left
/// cold, and a fence between pieces would make each wait for the stores to drain.
void storage_gather_nontemporal(void *dst, const void *const *sources, const size_t *lengths, size_t count);

/// Sets `n` bytes at `dst` to zero, with the stores of `storage_gather_nontemporal`.
void storage_zero_nontemporal(void *dst, size_t n);

/// Waits while the 32-bit word at `word` (in memory shared between processes: a `MAP_SHARED` file mapping)
/// equals `expected`, until another thread or process calls `storage_wake_all` on it (Linux: a shared
/// futex). Returns at once if the word already differs; may also return spuriously or on a signal, so
/// callers re-check their condition. Elsewhere it sleeps a millisecond.
void storage_wait_on_word(uint32_t *word, uint32_t expected);

/// Wakes every thread, in any process, waiting in `storage_wait_on_word` on `word`.
void storage_wake_all(uint32_t *word);

/// Names the calling thread (at most 15 bytes are kept), as `top -H`, `ps -L` and debuggers show it; does
/// nothing where threads cannot be named.
void storage_name_this_thread(const char *name);

/// This process's id, as `getpid()` returns it, without a system call after the first: kept in a variable
/// that a `pthread_atfork` handler renews in a forked child (one `getpid` costs ~1 µs of system time here, and
/// the writer asks on every transaction whether the lease it holds was taken by this process).
int storage_process_id(void);

/// Asks the CPU to bring the `n` bytes at `p` into the cache, one request per 64-byte line, without waiting:
/// a search that then probes the bytes in an order it learns one comparison at a time waits for the lines
/// together instead of one after another.
void storage_prefetch(const void *p, size_t n);

/// Gives the file open at `fd` blocks for its bytes `[0, length)` without changing its size (Linux `fallocate`
/// with `FALLOC_FL_KEEP_SIZE`), so that pages of them never written read as zeros through a map even on a full
/// file system (tmpfs gives a hole a page at its first read through a map, and raises SIGBUS when it has none).
/// Returns 0 or the `errno`: `ENOSPC` on a full disk, `EOPNOTSUPP` where the file system or platform cannot.
int storage_reserve_blocks(int fd, int64_t length);

#endif
