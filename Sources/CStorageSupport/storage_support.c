#include "storage_support.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>

static void copy_streaming(void *dst, const void *src, size_t n) {
    if (n == 0) return;  /* an empty piece may come without an address */
    unsigned char *d = dst;
    const unsigned char *s = src;
    // Ordinary stores up to the first 16-byte boundary of the destination, streaming stores after it.
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    while (n >= 64) {
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
        n -= 64;
    }
    while (n >= 16) {
        _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
        d += 16;
        s += 16;
        n -= 16;
    }
    memcpy(d, s, n);
}

void storage_copy_nontemporal(void *dst, const void *src, size_t n) {
    copy_streaming(dst, src, n);
    _mm_sfence();
}

void storage_gather_nontemporal(void *dst, const void *const *sources, const size_t *lengths, size_t count) {
    unsigned char *d = dst;
    for (size_t i = 0; i < count; i++) {
        copy_streaming(d, sources[i], lengths[i]);
        d += lengths[i];
    }
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

void storage_copy_nontemporal(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }

void storage_gather_nontemporal(void *dst, const void *const *sources, const size_t *lengths, size_t count) {
    unsigned char *d = dst;
    for (size_t i = 0; i < count; i++) {
        if (lengths[i] > 0) memcpy(d, sources[i], lengths[i]);
        d += lengths[i];
    }
}

void storage_zero_nontemporal(void *dst, size_t n) { memset(dst, 0, n); }

#endif
