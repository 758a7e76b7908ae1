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
	uint64_t block_check;    /* mix(id ^ seed ^ block_size) ^ recipe: catches torn or misplaced
	                          * blocks, and says how the payload was built (recipe 0, the plain
	                          * layout: the header as before recipes existed) */
};

/* A recipe says how a compressible block is built, so that it compresses to a chosen size under
 * the compressors storage uses on single blocks (zstd -1, LZ4): each 4 KiB sector (the block
 * itself below 4 KiB) holds `literals` bytes drawn uniformly from an alphabet of `alphabet`
 * symbols (log2(alphabet) bits each: zstd's entropy coder gains from a small alphabet, LZ4's
 * byte-oriented literals do not), then filler. 0 is the plain layout (incompressible, or
 * --compress R). The header carries the recipe, so a reader recognises a block without knowing
 * which recipe its writer chose. */
typedef uint32_t content_recipe;
#define CONTENT_RECIPE_PLAIN 0u
#define CONTENT_SECTOR 4096u
#define CONTENT_MIN_ALPHABET 2u
#define CONTENT_MAX_ALPHABET 256u

/* literals: bytes per sector (capped at the sector); alphabet: 2..256. */
static inline content_recipe content_recipe_make(uint32_t literals, uint32_t alphabet)
{
	if (literals > CONTENT_SECTOR)
		literals = CONTENT_SECTOR;
	return 1u << 31 | (alphabet - 1) << 16 | literals;
}
static inline uint32_t content_recipe_literals(content_recipe r) { return r & 0x1fff; }
static inline uint32_t content_recipe_alphabet(content_recipe r) { return ((r >> 16) & 0xff) + 1; }
/* Does r name a recipe this version builds (the plain layout, or a valid literals/alphabet pair)? */
static inline int content_recipe_valid(content_recipe r)
{
	return r == CONTENT_RECIPE_PLAIN ||
	       ((r & 0x7f00e000u) == 0 && (r >> 31) && content_recipe_literals(r) <= CONTENT_SECTOR &&
		content_recipe_alphabet(r) >= CONTENT_MIN_ALPHABET);
}

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
/* The same content built by recipe r (CONTENT_RECIPE_PLAIN: content_fill). The bytes depend on
 * (seed, id, r): a content must always be written with the same recipe. */
void content_fill_recipe(const struct content_gen *g, uint64_t id, content_recipe r, void *buf);

/* What a block holds, as far as its bytes tell. */
enum content_kind {
	CONTENT_IS_ZERO,     /* all zeros */
	CONTENT_IS_VALID,    /* a block this generator (same seed) produced; *id says which */
	CONTENT_IS_GARBAGE,  /* anything else */
	CONTENT_IS_FOREIGN,  /* an intact block of a generator with another seed (same block size and R);
	                      * *id says which content under that seed */
};
enum content_kind content_identify(const struct content_gen *g, const void *buf, uint64_t *id);
/* Same, also saying which recipe the block was built with (when it is valid). */
enum content_kind content_identify_recipe(const struct content_gen *g, const void *buf, uint64_t *id,
					  content_recipe *recipe);

/* Is buf (at least 32 bytes) the start of a block content_fill wrote, whatever its seed, with a
 * power-of-two block size? The header alone answers (magic, seed tag and both checks must agree);
 * the payload is not read. Returns 0 with the seed and block size it was written with, or -1. */
int content_header_probe(const void *buf, uint64_t *seed, uint32_t *block_size);

#endif
