// The two primitives Realm Core's page encryption needs, from the system's OpenSSL (libcrypto):
// AES-256-CBC without padding and HMAC-SHA224. Wrapped so the Swift side sees two plain functions.
#ifndef REALM_BROWSER_COPENSSL_SHIM_H
#define REALM_BROWSER_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stddef.h>
#include <stdint.h>

/// Decrypts `length` bytes (a multiple of 16) with AES-256-CBC, no padding. Returns 1 on success, 0 on failure.
static inline int rb_aes256cbc_decrypt(const uint8_t *key32, const uint8_t *iv16, const uint8_t *input,
                                       uint8_t *output, int length) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_cbc(), NULL, key32, iv16) == 1
          && EVP_CIPHER_CTX_set_padding(ctx, 0) == 1;
    int written = 0, tail = 0;
    if (ok) ok = EVP_DecryptUpdate(ctx, output, &written, input, length) == 1;
    if (ok) ok = EVP_DecryptFinal_ex(ctx, output + written, &tail) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok && written + tail == length;
}

/// HMAC-SHA224 of `length` bytes under a 32-byte key into `out28`. Returns 1 on success, 0 on failure.
static inline int rb_hmac_sha224(const uint8_t *key32, const uint8_t *input, size_t length, uint8_t *out28) {
    unsigned int outLength = 0;
    return HMAC(EVP_sha224(), key32, 32, input, length, out28, &outLength) != NULL && outLength == 28;
}

#endif
