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

/* A shifted block (a shifted copy: redundancy a fixed-block dedup does not see, as a tar's or an
 * edited file's): the bytes of contents A = B - 1 and B laid end to end, from `shift` bytes into
 * A (a multiple of CONTENT_SHIFT_UNIT, 1 .. block_size / unit - 1 units) - A's tail, then B's head,
 * whose header names B. Consecutive B give consecutive ids, so a run of them is a copy of a
 * sequence of contents shifted by `shift`, which a content-defined chunker finds again. Its id:
 * the unique bit, SHIFTED, bit 60 when B is a layout-unique id (bits 63 and 62), the shift in units
 * at bits 48-53, B's low 40 bits. Fresh unique ids of workers 2^21 .. 2^22 - 1 would read as
 * shifted: workers stay below 2^21. */
#define CONTENT_SHIFTED_BIT (1ULL << 61)
#define CONTENT_SHIFT_UNIT 64u
#define CONTENT_SHIFT_ID_MASK ((1ULL << 40) - 1)
static inline int content_is_shifted(uint64_t id)
{
	return (id >> 61) == 5 && (id & (0x3fULL << 54 | 0xffULL << 40)) == 0 && ((id >> 48) & 0x3f) != 0;
}
static inline uint64_t content_shifted_id(uint64_t b, uint32_t shift)
{
	uint64_t layout_unique = (b >> 62) == 3 ? 1ULL << 60 : 0;
	return (1ULL << 63) | CONTENT_SHIFTED_BIT | layout_unique | (uint64_t)(shift / CONTENT_SHIFT_UNIT) << 48 |
	       (b & CONTENT_SHIFT_ID_MASK);
}
/* B, and the shift in bytes, of a shifted id. */
static inline uint64_t content_shifted_source(uint64_t id, uint32_t *shift)
{
	*shift = (uint32_t)((id >> 48) & 0x3f) * CONTENT_SHIFT_UNIT;
	return (id & (1ULL << 60) ? 3ULL << 62 : 0) | (id & CONTENT_SHIFT_ID_MASK);
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
	                          * incompressible layout: the header as before recipes existed) */
};

/* A recipe says how a block's payload is built. The header carries it, so a reader recognises a
 * block without knowing which option its writer chose:
 * - 0, the plain layout: incompressible (written with R = 1);
 * - a ratio recipe, 0x5a000000 | R << 16 (R = 2..CONTENT_MAX_COMPRESS): the layout that
 *   compresses about R:1 (--compress R; a generator with R > 1 writes it for the plain layout).
 *   Top bit clear, so never a model recipe; five or more bits from 0, so one flipped header bit
 *   never turns an incompressible block's header into one; the low 16 bits clear, so the
 *   filler (block_check's first two bytes) is the one it was before headers named R;
 * - a model recipe (top bit set): built so that it compresses to a chosen size under the
 *   compressors storage uses on single blocks (zstd -1, LZ4): each 4 KiB sector (the block
 *   itself below 4 KiB) holds `literals` bytes drawn uniformly from an alphabet of `alphabet`
 *   symbols (log2(alphabet) bits each: zstd's entropy coder gains from a small alphabet, LZ4's
 *   byte-oriented literals do not), then filler. A model recipe may also name a vocabulary:
 *   `share`/128 of each sector's literals are a slice of a pool of 4 KiB << `pool` symbols that
 *   every content of the same band (CONTENT_BAND consecutive ids) and alphabet draws from, at
 *   an offset of its own. A block alone sees no repeat (its slice is contiguous), so what it
 *   compresses to alone is unchanged; a compressor whose window holds several blocks of a band
 *   finds their slices overlapping, as a long-window compressor finds a file's words again. */
typedef uint32_t content_recipe;
#define CONTENT_RECIPE_PLAIN 0u
#define CONTENT_SECTOR 4096u
#define CONTENT_MIN_ALPHABET 2u
#define CONTENT_MAX_ALPHABET 256u
#define CONTENT_MAX_COMPRESS 20
#define CONTENT_RATIO_TAG 0x5a000000u

/* The ratio recipe for R (2..CONTENT_MAX_COMPRESS), and the R a recipe names (0: none). */
static inline content_recipe content_recipe_ratio(uint32_t compress)
{
	return CONTENT_RATIO_TAG | compress << 16;
}
static inline uint32_t content_recipe_ratio_of(content_recipe r)
{
	uint32_t compress = (r >> 16) & 0xff;
	return (r & 0xff00ffffu) == CONTENT_RATIO_TAG && compress >= 2 && compress <= CONTENT_MAX_COMPRESS ? compress : 0;
}

/* literals: bytes per sector (capped at the sector); alphabet: 2..256. */
static inline content_recipe content_recipe_make(uint32_t literals, uint32_t alphabet)
{
	if (literals > CONTENT_SECTOR)
		literals = CONTENT_SECTOR;
	return 1u << 31 | (alphabet - 1) << 16 | literals;
}
static inline uint32_t content_recipe_literals(content_recipe r) { return r & 0x1fff; }
static inline uint32_t content_recipe_alphabet(content_recipe r) { return ((r >> 16) & 0xff) + 1; }
static inline int content_recipe_is_model(content_recipe r) { return (int)(r >> 31); }

/* The vocabulary of a model recipe: share in 1/128 of the literals (0: none, the layout of
 * recipes before vocabularies), pool size 4 KiB << pool (pool 0..7). Ids share a pool by band. */
#define CONTENT_SHARE_MAX 127u
#define CONTENT_POOL_MAX 7u
#define CONTENT_BAND_BITS 6
static inline uint32_t content_recipe_share(content_recipe r) { return (r >> 24) & 0x7f; }
static inline uint32_t content_recipe_pool(content_recipe r) { return (r >> 13) & 0x7; }
static inline content_recipe content_recipe_vocabulary(content_recipe r, uint32_t share, uint32_t pool)
{
	if (!content_recipe_is_model(r))
		return r;
	return (r & ~0x7f00e000u) | (share & 0x7f) << 24 | (pool & 0x7) << 13;
}
/* Does r name a recipe this version builds (the plain layout, or a valid literals/alphabet pair)? */
static inline int content_recipe_valid(content_recipe r)
{
	return r == CONTENT_RECIPE_PLAIN || content_recipe_ratio_of(r) ||
	       (content_recipe_is_model(r) && content_recipe_literals(r) <= CONTENT_SECTOR &&
		content_recipe_alphabet(r) >= CONTENT_MIN_ALPHABET);
}

struct content_gen {
	uint64_t seed;
	uint64_t id_mask;
	uint32_t block_size;
	uint32_t compress; /* R: blocks compress about R:1; 1 = incompressible */
	uint32_t random_bytes; /* random (incompressible) bytes per block after the header */
	/* The recipe content `id` is built by, for the halves of a shifted block (their headers are
	 * not at its start): NULL, the generator's own (content_fill). */
	content_recipe (*recipe_of)(const void *ctx, uint64_t id);
	const void *recipe_ctx;
};

/* block_size: multiple of 64, >= 64; compress: 1..CONTENT_MAX_COMPRESS. */
int content_init(struct content_gen *g, uint64_t seed, uint32_t block_size, uint32_t compress);

/* Fill buf (block_size bytes, 8-byte aligned) with the bytes of content `id` (a shifted id: its
 * two halves, each by its recipe_of recipe). */
void content_fill(const struct content_gen *g, uint64_t id, void *buf);
/* The same content built by recipe r (CONTENT_RECIPE_PLAIN: content_fill, which is the ratio
 * recipe of the generator's R when R > 1). The bytes depend on (seed, id, r): a content must
 * always be written with the same recipe. */
void content_fill_recipe(const struct content_gen *g, uint64_t id, content_recipe r, void *buf);

/* Are len (>= 1) bytes all zero? (A store's hole, the zero block.) */
int content_all_zero(const void *buf, size_t len);

/* What a block holds, as far as its bytes tell. */
enum content_kind {
	CONTENT_IS_ZERO,     /* all zeros */
	CONTENT_IS_VALID,    /* a block of this seed and block size, whatever its recipe or R (the
	                      * header names it); *id says which */
	CONTENT_IS_GARBAGE,  /* anything else */
	CONTENT_IS_FOREIGN,  /* an intact block of a generator with another seed (same block size);
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
