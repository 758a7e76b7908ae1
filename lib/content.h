/* content.h - content id -> block bytes: a pure, fast function of (seed, id). Different ids
 * always give different bytes (the id is encoded in every block); they compress about R:1. */
#ifndef DEDIS_CONTENT_H
#define DEDIS_CONTENT_H

#include <stdint.h>
#include <stddef.h>

/* Id 0 is the all-zero block. Ids with the top bit set are unique contents (see content_unique_id);
 * ids in [1, 2^63) name the duplicated contents of a distribution. */
#define CONTENT_ZERO 0ULL
#define CONTENT_UNIQUE_BIT (1ULL << 63)
#define CONTENT_WORKER_SHIFT 40 /* 2^40 unique blocks per worker, 2^23 workers */
#define CONTENT_MAX_WORKERS (1ULL << 23)

/* The unique content number `n` of worker `worker`: never equal across workers or to any
 * duplicated-content id. */
static inline uint64_t content_unique_id(uint64_t worker, uint64_t n)
{
	return CONTENT_UNIQUE_BIT | (worker << CONTENT_WORKER_SHIFT) | (n & ((1ULL << CONTENT_WORKER_SHIFT) - 1));
}

/* Every non-zero block starts with this 32-byte header, so a reader can tell which content a
 * block holds (the verifier and the engine's validation use it). */
#define CONTENT_MAGIC 0x53494445444bULL /* "KDEDIS" little-endian-ish, 48 bits */
struct content_header {
	uint64_t magic_seed_tag; /* CONTENT_MAGIC << 16 | (seed-derived 16-bit tag) */
	uint64_t id_masked;      /* id ^ mask(seed): bijective in id, so distinct ids differ */
	uint64_t seed_check;     /* mix(seed): different seeds give different bytes */
	uint64_t block_check;    /* mix(id ^ seed ^ block_size): catches torn or misplaced blocks */
};

struct content_gen {
	uint64_t seed;
	uint64_t id_mask;
	uint32_t block_size;
	uint32_t compress; /* R: blocks compress about R:1; 1 = incompressible */
	uint32_t random_bytes; /* random (incompressible) bytes per block after the header */
};

#define CONTENT_MAX_COMPRESS 20

/* block_size: multiple of 64, >= 64; compress: 1..CONTENT_MAX_COMPRESS. */
int content_init(struct content_gen *g, uint64_t seed, uint32_t block_size, uint32_t compress);

/* Fill buf (block_size bytes, 8-byte aligned) with the bytes of content `id`. */
void content_fill(const struct content_gen *g, uint64_t id, void *buf);

/* What a block holds, as far as its bytes tell. */
enum content_kind {
	CONTENT_IS_ZERO,     /* all zeros */
	CONTENT_IS_VALID,    /* a block this generator (same seed) produced; *id says which */
	CONTENT_IS_GARBAGE,  /* anything else */
	CONTENT_IS_FOREIGN,  /* an intact block of a generator with another seed (same block size and R);
	                      * *id says which content under that seed */
};
enum content_kind content_identify(const struct content_gen *g, const void *buf, uint64_t *id);

/* Is buf (at least 32 bytes) the start of a block content_fill wrote, whatever its seed, with a
 * power-of-two block size? The header alone answers (magic, seed tag and both checks must agree);
 * the payload is not read. Returns 0 with the seed and block size it was written with, or -1. */
int content_header_probe(const void *buf, uint64_t *seed, uint32_t *block_size);

#endif
