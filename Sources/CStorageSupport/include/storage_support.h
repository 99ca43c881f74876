#ifndef STORAGE_SUPPORT_H
#define STORAGE_SUPPORT_H

#include <stddef.h>

/// Copies `n` bytes to `dst` with non-temporal stores where the CPU has them (x86-64), else `memcpy`;
/// the stores are complete (fenced) when it returns. For buffers the CPU writes once and a device then
/// reads by DMA (a direct-I/O record): ordinary stores first read each line into the cache, which the
/// device's last read had left cold.
void storage_copy_nontemporal(void *dst, const void *src, size_t n);

/// Copies `count` pieces one after another to `dst` (piece `i` is `lengths[i]` bytes at `sources[i]`) as
/// `storage_copy_nontemporal` does, fencing once at the end: nothing between the pieces waits for the
/// stores to drain.
void storage_gather_nontemporal(void *dst, const void *const *sources, const size_t *lengths, size_t count);

/// Sets `n` bytes at `dst` to zero, as `storage_copy_nontemporal` stores.
void storage_zero_nontemporal(void *dst, size_t n);

#endif
