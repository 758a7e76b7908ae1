/* content.c - block bytes for a content id: a 32-byte self-describing header, then a keyed
 * 4-lane xorshift128+ stream (vectorized by the compiler), fast enough to outrun any device. */

/* What the bytes look like.
 *
 * Every block but the zero block (id 0, all zeros) starts with the 32-byte header of
 * content.h: magic and seed tag, id ^ mask(seed), mix(seed), and block_check = mix(id ^ seed ^
 * block_size) ^ recipe. The header alone makes different ids differ, and says how the payload
 * was built (incompressible, R:1 or a model recipe), so a reader needs only the seed and the
 * block size to rebuild it.
 *
 * R = 1 (incompressible, recipe 0): the header, then block_size - 32 bytes of a keyed stream
 * (4-lane xorshift128+, key mix(seed ^ mix(id))). No compressor finds anything in them.
 *
 * R > 1 (compresses about R:1, the ratio recipe of R): the block is cut into 4 KiB sectors (the last one, or a block
 * below 4 KiB, is shorter). Each sector holds, from its start (after the header in sector 0),
 * its share of n random bytes, then filler up to its end:
 *
 *     sector 0                                   sector 1
 *     | header 32 | random ~4K/R | ab ab ab ...   | random ~4K/R | ab ab ab ...   | ...
 *
 * - random bytes: the same keyed stream as R = 1, read on from sector to sector; a sector
 *   ending at block offset x brings the count to floor(x * n / block_size), so every 4 KiB
 *   of a large block compresses like the whole;
 * - filler: the first two bytes ("ab") of the header's block_check, repeated from the end of
 *   the random bytes to the end of the sector. It depends on the id, so the filler of two
 *   contents differs as well (no sub-block duplicates between contents), and a 2-byte period
 *   costs deflate no more than zeros would (its matches stop at 258 bytes and repeat at an
 *   even distance);
 * - n is chosen so the block costs block_size / R to the cost model below: about 1/R of a
 *   block is random bytes, a little less because even filler is not free (gzip spends ~1 byte
 *   per 258, zstd far less).
 *
 * zstd -1 and gzip -1 over a stream of such blocks both land within 10 % of R for 512 B to
 * 1 MiB blocks and R = 2..20, zstd above R and gzip below (table in doc/notes/content.md). A block
 * compressed on its own pays the compressor's frame and code tables too: from 64 KiB on that
 * is within the same 10 %, at 4 KiB zstd stays within 10 % and gzip up to R = 4 only, and at
 * 512 B the header and frame alone exceed the budget beyond R = 2. */
#include <stdlib.h>
#include <string.h>
#include "lib/content.h"
#include "lib/rng.h"

typedef uint64_t lanes4 __attribute__((vector_size(32)));

/* On x86-64 the generator is compiled twice and picked at load time: the AVX2 build makes
 * content generation ~4x faster than baseline SSE2, where most of its cost is. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PAYLOAD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PAYLOAD_CLONES
#endif

static uint64_t id_mask_of(uint64_t seed)
{
	return rng_mix64(seed ^ 0x5eedf00dULL);
}

static uint64_t seed_tag(uint64_t seed)
{
	return (CONTENT_MAGIC << 16) | (rng_mix64(seed ^ 0x7a9cULL) & 0xffff);
}

/* Compressible blocks are built from sectors of SECTOR bytes (the last one may be shorter). */
#define SECTOR 4096

/* The cost model the compressible layout is calibrated with, in 1/10000 byte: a compressor
 * spends CAL_LITERAL per random byte (gzip codes literals in a little over 8 bits), CAL_FILLER
 * per filler byte (deflate's matches stop at 258 bytes; zstd's do not) and CAL_BLOCK per
 * block (the header and where the filler starts). The constants are a least-squares fit to
 * the harmonic mean of the sizes zstd -1 and gzip -1 reach over streams of 512 B to 1 MiB
 * blocks, so the two tools land on either side of R; see doc/notes/content.md. */
#define CAL_LITERAL 10099
#define CAL_FILLER 38
#define CAL_BLOCK 145000

/* Random bytes per block after the header for ratio R: what the budget block_size / R leaves
 * once the filler and the block are paid for. */
static uint32_t random_bytes(uint32_t block_size, uint32_t compress)
{
	uint64_t budget = (uint64_t)block_size * 10000 / compress;
	uint64_t cost = CAL_BLOCK + (uint64_t)CAL_FILLER * (block_size - sizeof(struct content_header));
	return budget > cost ? (uint32_t)((budget - cost) / (CAL_LITERAL - CAL_FILLER)) : 0;
}

static uint32_t random_bytes_at(uint32_t block_size, uint32_t compress)
{
	return compress == 1 ? block_size - (uint32_t)sizeof(struct content_header) : random_bytes(block_size, compress);
}

int content_init(struct content_gen *g, uint64_t seed, uint32_t block_size, uint32_t compress)
{
	if (block_size < 64 || block_size % 64 || compress < 1 || compress > CONTENT_MAX_COMPRESS)
		return -1;
	g->seed = seed;
	g->id_mask = id_mask_of(seed);
	g->block_size = block_size;
	g->compress = compress;
	g->random_bytes = random_bytes_at(block_size, compress);
	g->recipe_of = NULL;
	g->recipe_ctx = NULL;
	return 0;
}

/* Random bytes per block of the layout for R: this generator's own, or (a block another R
 * wrote, its header says which) worked out again. */
static uint32_t ratio_random_bytes(const struct content_gen *g, uint32_t compress)
{
	return compress == g->compress ? g->random_bytes : random_bytes_at(g->block_size, compress);
}

static uint64_t block_check(const struct content_gen *g, uint64_t id)
{
	return rng_mix64(id ^ g->seed ^ g->block_size);
}

static void fill_header(const struct content_gen *g, uint64_t id, content_recipe r, struct content_header *h)
{
	h->magic_seed_tag = seed_tag(g->seed);
	h->id_masked = id ^ g->id_mask;
	h->seed_check = rng_mix64(g->seed);
	h->block_check = block_check(g, id) ^ r;
}

/* The payload after the header: a deterministic stream keyed by (seed, id). Four independent
 * xorshift128+ lanes advance together so each step yields 32 bytes with SIMD-friendly ops. */
struct payload_stream {
	lanes4 a, b;
};

static void payload_start(struct payload_stream *s, const struct content_gen *g, uint64_t id)
{
	uint64_t key = rng_mix64(g->seed ^ rng_mix64(id));
	for (int i = 0; i < 4; i++) {
		s->a[i] = rng_mix64(key + 2 * i) | 1;
		s->b[i] = rng_mix64(key + 2 * i + 1);
	}
}

static inline void payload_next(struct payload_stream *s, lanes4 *out)
{
	lanes4 s1 = s->a;
	const lanes4 s0 = s->b;
	s->a = s0;
	s1 ^= s1 << 23;
	s->b = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
	*out = s->b + s0;
}

PAYLOAD_CLONES
static void fill_payload(const struct content_gen *g, uint64_t id, uint8_t *p, size_t len)
{
	struct payload_stream s;
	payload_start(&s, g, id);
	for (size_t off = 0; off < len; off += 32) {
		lanes4 out;
		payload_next(&s, &out);
		memcpy(p + off, &out, 32);
	}
}

/* A compressible block after its header (see the top of this file), sector by sector: that
 * sector's share of the random bytes, then the filler, starting afresh in each sector. */
struct filler {
	lanes4 even, odd; /* the pattern from its first byte, and shifted by one byte */
};

static void filler_init(struct filler *f, const struct content_header *h)
{
	uint16_t two;
	memcpy(&two, &h->block_check, 2);
	uint64_t even = two * 0x0001000100010001ULL; /* b0 b1 b0 b1 ... in memory, either endianness */
	uint64_t odd = (uint16_t)(two >> 8 | two << 8) * 0x0001000100010001ULL;
	f->even = (lanes4){even, even, even, even};
	f->odd = (lanes4){odd, odd, odd, odd};
}

typedef uint16_t words16 __attribute__((vector_size(32)));

/* 32 random bytes, each b mapped to the symbol (b * alphabet) >> 8 of an alphabet of that many
 * symbols (256: unchanged). Done in place on 16-bit lanes, low and high byte apart, so there is
 * no widening or narrowing: a handful of vector instructions per 32 bytes. */
static inline void map_symbols(lanes4 *v, uint16_t alphabet)
{
	if (alphabet == 256)
		return;
	words16 w;
	memcpy(&w, v, 32);
	words16 lo = ((w & 0xff) * alphabet) >> 8;
	words16 hi = ((w >> 8) * alphabet) & 0xff00;
	w = lo | hi;
	memcpy(v, &w, 32);
}

static inline void payload_symbols(struct payload_stream *s, lanes4 *v, uint16_t alphabet)
{
	payload_next(s, v);
	map_symbols(v, alphabet);
}

/* ---- vocabularies (content.h): pools of symbols a band of contents shares ---- */

/* Which pool a content draws from: its band, its alphabet and the pool size, under the seed. */
static uint64_t vocabulary_key(const struct content_gen *g, uint64_t id, uint16_t alphabet, uint32_t pool)
{
	uint64_t band = id >> CONTENT_BAND_BITS;
	return rng_mix64(g->seed ^ rng_mix64(band ^ 0x766f636162ULL /* "vocab" */) ^ ((uint64_t)alphabet << 8 | pool));
}

/* 32 bytes of the pool at chunk c: a counter-based stream (any chunk without its predecessors,
 * so a slice costs its own length), mixed well enough that no compressor finds a pattern. */
static inline void pool_chunk(uint64_t key, uint64_t c, lanes4 *v)
{
	lanes4 x = (lanes4){4 * c, 4 * c + 1, 4 * c + 2, 4 * c + 3} * 0x9e3779b97f4a7c15ULL ^ key;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 32;
	*v = x;
}

/* len bytes (a multiple of 32) of the pool from chunk `first` on, wrapping at its end. */
PAYLOAD_CLONES
static void vocabulary_slice(uint8_t *out, uint32_t len, uint64_t key, uint64_t pool_chunks, uint64_t first,
			     uint16_t alphabet)
{
	for (uint32_t i = 0; i < len; i += 32) {
		lanes4 v;
		pool_chunk(key, (first + i / 32) & (pool_chunks - 1), &v);
		map_symbols(&v, alphabet);
		memcpy(out + i, &v, 32);
	}
}

/* One sector from its first payload byte: nrand random bytes (symbols of the alphabet), then
 * filler up to len. */
PAYLOAD_CLONES
static void emit_sector(struct payload_stream *ps, const struct filler *f, uint8_t *out,
			uint32_t nrand, uint32_t len, uint16_t alphabet)
{
	struct payload_stream s = *ps;
	lanes4 v, even = f->even;
	uint32_t i = 0;
	for (; i + 32 <= nrand; i += 32) {
		payload_symbols(&s, &v, alphabet);
		memcpy(out + i, &v, 32);
	}
	if (i < nrand) {
		payload_symbols(&s, &v, alphabet);
		if (i + 32 <= len)
			memcpy(out + i, &v, 32); /* the filler overwrites the excess */
		else
			memcpy(out + i, &v, nrand - i);
	}
	*ps = s;
	for (i = nrand; i + 32 <= len; i += 32)
		memcpy(out + i, &even, 32);
	if (i < len) {
		if (len - nrand >= 32) /* one store ending at len, overlapping filler already written */
			memcpy(out + len - 32, (len - nrand) & 1 ? &f->odd : &even, 32);
		else
			memcpy(out + i, &even, len - i);
	}
}

/* Write the payload of a compressible block with n random bytes into buf (a whole block), or,
 * when buf is NULL, compare it with the block at cmp; returns 0, or -1 at the first difference. */
static int compressible_payload(const struct content_gen *g, uint64_t id, const struct content_header *h,
				uint32_t n, uint8_t *buf, const uint8_t *cmp)
{
	struct payload_stream s;
	struct filler f;
	uint8_t want[SECTOR];
	uint32_t bs = g->block_size;
	payload_start(&s, g, id);
	filler_init(&f, h);
	for (uint32_t start = 0, end; start < bs; start = end) {
		end = bs - start > SECTOR ? start + SECTOR : bs;
		uint32_t nrand = n;
		if (bs > SECTOR)
			nrand = (uint32_t)(((uint64_t)end * n) / bs - ((uint64_t)start * n) / bs);
		uint32_t begin = start ? start : (uint32_t)sizeof *h;
		if (buf) {
			emit_sector(&s, &f, buf + begin, nrand, end - begin, 256);
		} else {
			emit_sector(&s, &f, want, nrand, end - begin, 256);
			if (memcmp(cmp + begin, want, end - begin) != 0)
				return -1;
		}
	}
	return 0;
}

/* A recipe block after its header: every sector (4 KiB, or the whole block below that) holds
 * the recipe's literals, from its start (after the header in sector 0), then filler. Writes buf,
 * or compares with cmp when buf is NULL; returns 0, or -1 at the first difference. */
static int recipe_payload(const struct content_gen *g, uint64_t id, const struct content_header *h,
			  content_recipe r, uint8_t *buf, const uint8_t *cmp)
{
	struct payload_stream s;
	struct filler f;
	uint8_t want[SECTOR];
	uint32_t bs = g->block_size, sector = bs < SECTOR ? bs : SECTOR;
	uint32_t literals = content_recipe_literals(r), share = content_recipe_share(r);
	uint16_t alphabet = (uint16_t)content_recipe_alphabet(r);
	uint64_t key = 0, pool_chunks = (uint64_t)CONTENT_SECTOR / 32 << content_recipe_pool(r), slice = 0;
	if (share) {
		key = vocabulary_key(g, id, alphabet, content_recipe_pool(r));
		slice = rng_mix64(id ^ 0x736c696365ULL /* "slice" */) & (pool_chunks - 1);
	}
	payload_start(&s, g, id);
	filler_init(&f, h);
	for (uint32_t start = 0; start < bs; start += sector) {
		uint32_t begin = start ? start : (uint32_t)sizeof *h, len = start + sector - begin;
		uint32_t nlit = literals < len ? literals : len;
		uint32_t shared = (nlit * share / 128) & ~31u, own = nlit - shared;
		uint8_t *out = buf ? buf + begin : want;
		/* own literals, filler; then the slice over the filler's start, whose phase it keeps */
		emit_sector(&s, &f, out, own, len, alphabet);
		if (shared) {
			vocabulary_slice(out + own, shared, key, pool_chunks, slice, alphabet);
			slice += shared / 32;
		}
		if (!buf && memcmp(cmp + begin, want, len) != 0)
			return -1;
	}
	return 0;
}

/* A block-sized buffer per thread and use (a shifted block's second half; identification's
 * expected block), kept for the thread's life: shifted blocks are a few per cent of a run. NULL
 * when out of memory. */
static uint8_t *scratch(int which, size_t len)
{
	static _Thread_local uint8_t *buf[2];
	static _Thread_local size_t size[2];
	if (size[which] < len) {
		free(buf[which]);
		buf[which] = aligned_alloc(64, (len + 63) & ~(size_t)63);
		size[which] = buf[which] ? len : 0;
	}
	return buf[which];
}

static content_recipe recipe_of(const struct content_gen *g, uint64_t id)
{
	return g->recipe_of ? g->recipe_of(g->recipe_ctx, id) : CONTENT_RECIPE_PLAIN;
}

/* A shifted block (content.h): A's bytes from `shift` on, then B's first `shift` bytes. Out of
 * memory for B's half, zeros stand there (and the block fails verification, as it should). */
static void fill_shifted(const struct content_gen *g, uint64_t id, uint8_t *buf)
{
	uint32_t shift, bs = g->block_size;
	uint64_t b = content_shifted_source(id, &shift), a = b - 1;
	content_fill_recipe(g, a, recipe_of(g, a), buf);
	memmove(buf, buf + shift, bs - shift);
	uint8_t *second = scratch(0, bs);
	if (!second) {
		memset(buf + bs - shift, 0, shift);
		return;
	}
	content_fill_recipe(g, b, recipe_of(g, b), second);
	memcpy(buf + bs - shift, second, shift);
}

void content_fill_recipe(const struct content_gen *g, uint64_t id, content_recipe r, void *buf)
{
	if (content_is_shifted(id) && g->block_size > CONTENT_SHIFT_UNIT) {
		fill_shifted(g, id, buf);
		return;
	}
	if (id == CONTENT_ZERO) {
		memset(buf, 0, g->block_size);
		return;
	}
	if (r == CONTENT_RECIPE_PLAIN && g->compress > 1)
		r = content_recipe_ratio(g->compress);
	struct content_header h;
	fill_header(g, id, r, &h);
	memcpy(buf, &h, sizeof h);
	uint32_t ratio = content_recipe_ratio_of(r);
	if (ratio)
		compressible_payload(g, id, &h, ratio_random_bytes(g, ratio), buf, NULL);
	else if (r != CONTENT_RECIPE_PLAIN)
		recipe_payload(g, id, &h, r, buf, NULL);
	else
		fill_payload(g, id, (uint8_t *)buf + sizeof h, g->block_size - sizeof h);
}

void content_fill(const struct content_gen *g, uint64_t id, void *buf)
{
	content_fill_recipe(g, id, CONTENT_RECIPE_PLAIN, buf);
}

int content_all_zero(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	/* memcmp against itself shifted by one byte: zero iff the first byte and every later one is 0 */
	return p[0] == 0 && memcmp(p, p + 1, len - 1) == 0;
}

/* The multiplicative inverse of an odd number modulo 2^64 (Newton's iteration: each step
 * doubles the correct low bits, 3 -> 6 -> ... -> 96). */
static uint64_t inverse_odd(uint64_t a)
{
	uint64_t x = a;
	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

/* rng_mix64 undone: each of its steps (add, xor-shift, multiply by an odd constant) is a
 * bijection, so the seed a header's seed_check was made from can be read back. */
static uint64_t unmix64(uint64_t x)
{
	x ^= (x >> 31) ^ (x >> 62);
	x *= inverse_odd(0x94d049bb133111ebULL);
	x ^= (x >> 27) ^ (x >> 54);
	x *= inverse_odd(0xbf58476d1ce4e5b9ULL);
	x ^= (x >> 30) ^ (x >> 60);
	return x - 0x9e3779b97f4a7c15ULL;
}

/* The seed and block size a header was written with, if its magic and seed tag agree with its
 * seed check. block_check = mix(id ^ seed ^ block size) ^ recipe: the block size is `want`, or
 * (want 0) the power of two, that leaves a valid recipe - a wrong size leaves 64 random bits,
 * not 32 zero bits and a recipe. */
static int header_origin(const void *buf, uint64_t want, uint64_t *seed, uint64_t *block_size)
{
	struct content_header h;
	memcpy(&h, buf, sizeof h);
	if (h.magic_seed_tag >> 16 != CONTENT_MAGIC)
		return -1;
	uint64_t s = unmix64(h.seed_check);
	if (seed_tag(s) != h.magic_seed_tag)
		return -1;
	uint64_t id = h.id_masked ^ id_mask_of(s);
	for (uint64_t bs = want ? want : 64; bs <= (want ? want : 1U << 30); bs <<= 1) {
		uint64_t r = h.block_check ^ rng_mix64(id ^ s ^ bs);
		if (r <= UINT32_MAX && content_recipe_valid((content_recipe)r)) {
			*seed = s;
			*block_size = bs;
			return 0;
		}
	}
	return -1;
}

int content_header_probe(const void *buf, uint64_t *seed, uint32_t *block_size)
{
	uint64_t s, bs;
	if (header_origin(buf, 0, &s, &bs))
		return -1;
	*seed = s;
	*block_size = (uint32_t)bs;
	return 0;
}

static int incompressible_check(const struct content_gen *g, uint64_t id, const uint8_t *p)
{
	struct payload_stream s;
	payload_start(&s, g, id);
	for (size_t off = sizeof(struct content_header); off < g->block_size; off += 32) {
		lanes4 want;
		payload_next(&s, &want);
		if (memcmp(p + off, &want, 32) != 0)
			return -1;
	}
	return 0;
}

/* Does the payload of block p match content id built by the recipe r its header names? 0 or -1. */
static int payload_check(const struct content_gen *g, uint64_t id, const struct content_header *h, content_recipe r,
			 const uint8_t *p)
{
	uint32_t ratio = content_recipe_ratio_of(r);
	if (ratio)
		return compressible_payload(g, id, h, ratio_random_bytes(g, ratio), NULL, p);
	if (r != CONTENT_RECIPE_PLAIN)
		return recipe_payload(g, id, h, r, NULL, p);
	if (incompressible_check(g, id, p) == 0)
		return 0;
	/* Written before headers named R: --compress R data under recipe 0, recognised when this
	 * generator has the same R. */
	return g->compress > 1 ? compressible_payload(g, id, h, g->random_bytes, NULL, p) : -1;
}

/* A shifted block: B's header inside it, at block_size - shift for a shift of whole units, and
 * every byte as fill_shifted makes them. 0 with *id, or -1. */
static int identify_shifted(const struct content_gen *g, const uint8_t *p, uint64_t *id, content_recipe *recipe)
{
	uint32_t bs = g->block_size;
	for (uint32_t shift = CONTENT_SHIFT_UNIT; shift + CONTENT_SHIFT_UNIT <= bs && shift / CONTENT_SHIFT_UNIT < 64;
	     shift += CONTENT_SHIFT_UNIT) {
		struct content_header h;
		memcpy(&h, p + bs - shift, sizeof h);
		if (h.magic_seed_tag != seed_tag(g->seed) || h.seed_check != rng_mix64(g->seed))
			continue;
		uint64_t b = h.id_masked ^ g->id_mask, r64 = h.block_check ^ block_check(g, b);
		uint64_t candidate = content_shifted_id(b, shift);
		uint32_t back;
		if (r64 > UINT32_MAX || !content_recipe_valid((content_recipe)r64) ||
		    content_shifted_source(candidate, &back) != b || !content_is_shifted(candidate))
			continue;
		uint8_t *want = scratch(1, bs);
		if (!want)
			return -1;
		content_fill_recipe(g, candidate, CONTENT_RECIPE_PLAIN, want);
		if (memcmp(want, p, bs) != 0)
			continue;
		*id = candidate;
		if (recipe)
			*recipe = (content_recipe)r64;
		return 0;
	}
	return -1;
}

/* A block whose header names another seed: intact if it verifies as that seed's content. */
static enum content_kind identify_foreign(const struct content_gen *g, const void *buf, uint64_t *id)
{
	uint64_t seed, bs;
	struct content_gen other;
	if (header_origin(buf, g->block_size, &seed, &bs) || seed == g->seed ||
	    content_init(&other, seed, g->block_size, g->compress))
		return CONTENT_IS_GARBAGE;
	return content_identify(&other, buf, id) == CONTENT_IS_VALID ? CONTENT_IS_FOREIGN : CONTENT_IS_GARBAGE;
}

enum content_kind content_identify_recipe(const struct content_gen *g, const void *buf, uint64_t *id,
					  content_recipe *recipe)
{
	const uint8_t *p = buf;
	struct content_header h;
	memcpy(&h, p, sizeof h);
	if (h.magic_seed_tag != seed_tag(g->seed) || h.seed_check != rng_mix64(g->seed)) {
		if (content_all_zero(p, g->block_size)) {
			*id = CONTENT_ZERO;
			if (recipe)
				*recipe = CONTENT_RECIPE_PLAIN;
			return CONTENT_IS_ZERO;
		}
		if (identify_shifted(g, p, id, recipe) == 0)
			return CONTENT_IS_VALID;
		return identify_foreign(g, p, id);
	}
	uint64_t candidate = h.id_masked ^ g->id_mask;
	uint64_t r64 = h.block_check ^ block_check(g, candidate);
	if (r64 > UINT32_MAX || !content_recipe_valid((content_recipe)r64))
		return CONTENT_IS_GARBAGE;
	content_recipe r = (content_recipe)r64;
	if (recipe)
		*recipe = r;
	/* The header alone could be a stale or torn block: the payload must match too. */
	if (payload_check(g, candidate, &h, r, p) != 0)
		return CONTENT_IS_GARBAGE;
	*id = candidate;
	return CONTENT_IS_VALID;
}

enum content_kind content_identify(const struct content_gen *g, const void *buf, uint64_t *id)
{
	return content_identify_recipe(g, buf, id, NULL);
}
