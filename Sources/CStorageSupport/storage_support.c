#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // pthread_setname_np
#endif
#include "storage_support.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#if defined(__linux__)
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <unistd.h>
#endif

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>

/* The pieces are streamed as one run of bytes: every aligned 16 bytes of the destination is written by one
   streaming store, assembled in a staging buffer where two pieces meet. Copying piece by piece wrote the bytes
   around each boundary with ordinary stores, and each such store first read its line from memory, which the
   device's last read of the buffer had left cold: ~a dozen reads from memory per commit record. Only the bytes
   before the destination's first 16-byte boundary and after its last one take ordinary stores. */
void storage_gather_nontemporal(void *dst, const void *const *sources, const size_t *lengths, size_t count) {
    unsigned char *d = dst;
    size_t i = 0;
    const unsigned char *s = NULL;
    size_t left = 0;
#define STORAGE_NEXT_PIECE() while (left == 0 && i < count) { s = sources[i]; left = lengths[i]; i++; }
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    while (head > 0) {
        STORAGE_NEXT_PIECE();
        if (left == 0) break;
        size_t k = head < left ? head : left;
        memcpy(d, s, k);
        d += k;
        s += k;
        left -= k;
        head -= k;
    }
    unsigned char stage[16] __attribute__((aligned(16)));
    size_t fill = 0;
    for (;;) {
        STORAGE_NEXT_PIECE();
        if (left == 0) break;
        if (fill > 0) {
            size_t k = 16 - fill;
            if (k > left) k = left;
            memcpy(stage + fill, s, k);
            fill += k;
            s += k;
            left -= k;
            if (fill == 16) {
                _mm_stream_si128((__m128i *)d, _mm_load_si128((const __m128i *)stage));
                d += 16;
                fill = 0;
            }
            continue;
        }
        while (left >= 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)s);
            __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
            _mm_stream_si128((__m128i *)d, a);
            _mm_stream_si128((__m128i *)(d + 16), b);
            _mm_stream_si128((__m128i *)(d + 32), c);
            _mm_stream_si128((__m128i *)(d + 48), e);
            d += 64;
            s += 64;
            left -= 64;
        }
        while (left >= 16) {
            _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
            d += 16;
            s += 16;
            left -= 16;
        }
        if (left > 0) {
            memcpy(stage, s, left);
            fill = left;
            s += left;
            left = 0;
        }
    }
#undef STORAGE_NEXT_PIECE
    if (fill > 0) memcpy(d, stage, fill);
    _mm_sfence();
}

void storage_zero_nontemporal(void *dst, size_t n) {
    unsigned char *d = dst;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n) head = n;
    memset(d, 0, head);
    d += head;
    n -= head;
    __m128i z = _mm_setzero_si128();
    while (n >= 16) {
        _mm_stream_si128((__m128i *)d, z);
        d += 16;
        n -= 16;
    }
    memset(d, 0, n);
    _mm_sfence();
}

#else

void storage_gather_nontemporal(void *dst, const void *const *sources, const size_t *lengths, size_t count) {
    unsigned char *d = dst;
    for (size_t i = 0; i < count; i++) {
        if (lengths[i] > 0) memcpy(d, sources[i], lengths[i]);
        d += lengths[i];
    }
}

void storage_zero_nontemporal(void *dst, size_t n) { memset(dst, 0, n); }

#endif

/* The futex calls are here because Swift cannot call the variadic syscall(2). No FUTEX_PRIVATE_FLAG: the
   word lives in a file mapping shared between processes. */
void storage_wait_on_word(uint32_t *word, uint32_t expected) {
#if defined(__linux__)
    syscall(SYS_futex, word, FUTEX_WAIT, expected, NULL, NULL, 0);
#else
    if (__atomic_load_n(word, __ATOMIC_SEQ_CST) == expected) usleep(1000);
#endif
}

void storage_wake_all(uint32_t *word) {
#if defined(__linux__)
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
#else
    (void)word;
#endif
}

void storage_name_this_thread(const char *name) {
#if defined(__linux__)
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
#elif defined(__APPLE__)
    pthread_setname_np(name);
#else
    (void)name;
#endif
}

static volatile int cached_process_id = 0;
static pthread_once_t process_id_once = PTHREAD_ONCE_INIT;

static void renew_process_id(void) { cached_process_id = (int)getpid(); }

static void watch_forks(void) {
    renew_process_id();
    pthread_atfork(NULL, NULL, renew_process_id);
}

int storage_process_id(void) {
    pthread_once(&process_id_once, watch_forks);
    return cached_process_id;
}

void storage_prefetch(const void *p, size_t n) {
    const char *c = (const char *)p;
    for (size_t i = 0; i < n; i += 64) __builtin_prefetch(c + i, 0, 3);
}

#if defined(__linux__)
int storage_reserve_blocks(int fd, int64_t length) {
    while (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)length) != 0) {
        if (errno != EINTR) return errno;
    }
    return 0;
}
#else
int storage_reserve_blocks(int fd, int64_t length) {
    (void)fd;
    (void)length;
    return EOPNOTSUPP;
}
#endif
