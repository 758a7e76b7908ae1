/* fingerprint.h - block fingerprints through OpenSSL EVP (sha1, sha256), with a reusable
 * per-thread context so hashing a block costs no allocation of ours (OpenSSL 3.0's
 * EVP_DigestInit_ex2 still re-creates its ~96-byte provider context each call: ~3 %). */
#ifndef DEDIS_FINGERPRINT_H
#define DEDIS_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

#define FP_MAX_LEN 32

struct fp_ctx;

/* name: "sha1" or "sha256" (case-insensitive; fp_name gives the lower-case form). Returns NULL
 * on any other name or on OpenSSL failure. A context is used by one thread at a time. */
struct fp_ctx *fp_new(const char *name);
size_t fp_len(const struct fp_ctx *c);
const char *fp_name(const struct fp_ctx *c);
/* out must hold fp_len(c) bytes. Returns 0 or -1. */
int fp_hash(struct fp_ctx *c, const void *data, size_t len, uint8_t *out);
void fp_free(struct fp_ctx *c);

#endif
