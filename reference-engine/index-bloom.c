/* index-bloom.c - Data Domain's summary vector: a Bloom filter in a MAP_SHARED file in front of
 * the bdb index, answering "certainly new" lookups without touching Berkeley DB.
 *
 * The filter is <dir>/bloom: a 4 KiB header (geometry, removals since the last rebuild) and
 * a bit array shared by every process with the volume open. Sizing for n = capacity entries at
 * p = 1 %: m = n * ln(1/p) / ln(2)^2 = 9.585 n bits (rounded up to whole 64-bit words, at
 * least 4096 bits), k = (m / n) * ln 2 = 6.64 -> 7 hash functions. The fingerprint is already
 * a cryptographic digest, so its bytes are independent uniform hashes: h1 = bytes 0..7 and
 * h2 = bytes 8..15 (forced odd) as little-endian words, and the k probes are
 * g_i = (h1 + i * h2) mod m (Kirsch-Mitzenmacher double hashing, same asymptotic rate as k
 * fully independent hashes).
 *
 * insert sets the bits (atomic OR: any number of processes at once) after the bdb insert; lookup
 * tests them with plain loads and returns INDEX_ABSENT_FILTERED if any is clear, so a "certainly
 * new" answer takes no lock of Berkeley DB's. remove cannot clear bits (other entries may share
 * them), so the filter only goes stale towards false positives: removals since the last rebuild
 * are counted, and the false-positive rate grows with them until the filter is rebuilt from bdb,
 * which happens at the end of a GC pass whose removals left more than 25 % of the live entries'
 * count stale (GC runs with the volume quiesced: one walk of the index a pass, at most), on open
 * with `recover`, and on repair.
 *
 * A process killed between the bdb insert and setting the bits leaves an entry the filter denies
 * (a false negative: the engine would store that content again). The engine repairs the index
 * whenever a process died inside an operation, and that rebuilds the filter. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "reference-engine/fpindex.h"
#include "reference-engine/meta.h"

#define BLOOM_MAGIC 0x4d4f4f4c42534944ULL /* "DISBLOOM" */
#define BLOOM_FILE "bloom"
#define BLOOM_BITS_PER_ENTRY 9.585058    /* ln(100) / ln(2)^2: 1 % false positives */
#define BLOOM_K 7                        /* round(9.585 * ln 2) */
#define BLOOM_MIN_BITS 4096
#define BLOOM_REBUILD_PCT 25             /* rebuild when removals exceed this % of entries */

struct bloom_header {
	uint64_t magic;
	uint64_t bits;          /* m, a multiple of 64 */
	uint64_t capacity;
	uint32_t k;
	uint32_t fp_len;
	uint64_t removals;      /* since the last rebuild: bits that may be stale */
	uint64_t lookups;
	uint64_t negatives;     /* answered by the filter */
	uint64_t positives;     /* passed on to bdb */
	uint64_t rebuilds;
	uint32_t unused;
	uint32_t reserved;
	uint8_t pad[4096 - 80];
};

struct index {
	struct index *bdb;      /* index_bdb_ops' own state */
	struct bloom_header *h;
	uint64_t *words;
	size_t map_len;
};

static uint64_t bloom_bits(uint64_t capacity)
{
	double m = (double)capacity * BLOOM_BITS_PER_ENTRY;
	uint64_t bits = (uint64_t)m + 1;
	if (bits < BLOOM_MIN_BITS)
		bits = BLOOM_MIN_BITS;
	return (bits + 63) & ~(uint64_t)63;
}

static size_t bloom_len(uint64_t capacity)
{
	return sizeof(struct bloom_header) + bloom_bits(capacity) / 8;
}

static uint64_t bloom_created_bytes(const struct index_params *p)
{
	return bloom_len(p->capacity); /* and a bdb index beside it, which grows as it fills */
}

static uint64_t le64(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

/* The k bit positions of fp. */
static void probes(const struct bloom_header *h, const uint8_t *fp, uint64_t *pos)
{
	uint64_t h1 = le64(fp), h2 = le64(fp + 8) | 1;
	for (uint32_t i = 0; i < h->k; i++)
		pos[i] = (h1 + i * h2) % h->bits;
}

static void set_bits(struct index *ix, const uint8_t *fp)
{
	uint64_t pos[BLOOM_K];
	probes(ix->h, fp, pos);
	for (uint32_t i = 0; i < ix->h->k; i++) {
		uint64_t *w = &ix->words[pos[i] >> 6], bit = 1ULL << (pos[i] & 63);
		if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit))
			__atomic_fetch_or(w, bit, __ATOMIC_RELEASE);
	}
}

static bool test_bits(struct index *ix, const uint8_t *fp)
{
	uint64_t pos[BLOOM_K];
	probes(ix->h, fp, pos);
	for (uint32_t i = 0; i < ix->h->k; i++)
		if (!(__atomic_load_n(&ix->words[pos[i] >> 6], __ATOMIC_ACQUIRE) & (1ULL << (pos[i] & 63))))
			return false;
	return true;
}

static int bloom_create(const struct index_params *p)
{
	int rc = index_bdb_ops.create(p);
	if (rc)
		return rc;
	size_t len = bloom_len(p->capacity);
	int fd;
	struct bloom_header *h = meta_map(p->dir, BLOOM_FILE, len, 1, &fd);
	if (!h)
		return errno ? -errno : -EIO;
	memset(h, 0, len);
	h->magic = BLOOM_MAGIC;
	h->bits = bloom_bits(p->capacity);
	h->capacity = p->capacity;
	h->k = BLOOM_K;
	h->fp_len = p->fp_len;
	rc = msync(h, len, MS_SYNC) ? -errno : 0;
	munmap(h, len);
	close(fd);
	return rc;
}

static int rebuild_one(void *arg, const uint8_t *fp, uint64_t pbn)
{
	set_bits(arg, fp);
	return 0;
}

/* Fresh bits from every bdb entry (with the volume quiesced). */
static int rebuild(struct index *ix)
{
	meta_advise(ix->h, ix->map_len, 1);
	memset(ix->words, 0, ix->h->bits / 8);
	meta_advise(ix->h, ix->map_len, 0);
	int rc = index_bdb_ops.iterate(ix->bdb, rebuild_one, ix);
	if (rc)
		return rc;
	ix->h->removals = 0;
	ix->h->rebuilds++;
	return 0;
}

static int bloom_open(const struct index_params *p, int recover, struct index **out)
{
	struct index *ix = calloc(1, sizeof *ix);
	if (!ix)
		return -ENOMEM;
	int rc = index_bdb_ops.open(p, recover, &ix->bdb);
	if (rc) {
		free(ix);
		return rc;
	}
	ix->map_len = bloom_len(p->capacity);
	ix->h = meta_map(p->dir, BLOOM_FILE, ix->map_len, 0, NULL);
	if (ix->h)
		meta_advise(ix->h, ix->map_len, 0); /* before the header's own fault */
	if (!ix->h)
		rc = errno ? -errno : -EIO;
	else if (ix->h->magic != BLOOM_MAGIC || ix->h->fp_len != p->fp_len || ix->h->k != BLOOM_K ||
		 ix->h->bits != bloom_bits(p->capacity) || p->fp_len < 16)
		rc = -EBADMSG; /* not this volume's filter: the engine rebuilds it */
	if (!rc) {
		meta_make_resident(p->dir, ix->h, ix->map_len);
		ix->words = (uint64_t *)((uint8_t *)ix->h + sizeof *ix->h);
		if (recover) /* alone (the engine holds the volume exclusively while it recovers) */
			rc = rebuild(ix);
	}
	if (rc) {
		if (ix->h)
			munmap(ix->h, ix->map_len);
		index_bdb_ops.close(ix->bdb);
		free(ix);
		return rc;
	}
	*out = ix;
	return 0;
}

/* The counters are the engine's (per process); the filter keeps none on its hot path, so a
 * negative answer touches no shared cache line but the filter's own words. */
static int bloom_lookup(struct index *ix, const uint8_t *fp, uint64_t *addr)
{
	if (!test_bits(ix, fp))
		return INDEX_ABSENT_FILTERED;
	return index_bdb_ops.lookup(ix->bdb, fp, addr);
}

static int bloom_insert(struct index *ix, const uint8_t *fp, uint64_t addr)
{
	int rc = index_bdb_ops.insert(ix->bdb, fp, addr);
	if (!rc)
		set_bits(ix, fp);
	return rc;
}

static int bloom_remove(struct index *ix, const uint8_t *fp)
{
	int rc = index_bdb_ops.remove(ix->bdb, fp);
	if (rc)
		return rc;
	__atomic_fetch_add(&ix->h->removals, 1, __ATOMIC_RELAXED);
	return 0;
}

/* A GC pass removes many entries at once: rebuilding inside remove each time 25 % of the
 * survivors had gone walked the whole index several times per pass, every writer waiting. */
static int bloom_settle(struct index *ix)
{
	struct index_stats s;
	index_bdb_ops.stats(ix->bdb, &s);
	return ix->h->removals * 100 > s.entries * BLOOM_REBUILD_PCT ? rebuild(ix) : 0;
}

static int bloom_iterate(struct index *ix, int (*fn)(void *arg, const uint8_t *fp, uint64_t addr), void *arg)
{
	return index_bdb_ops.iterate(ix->bdb, fn, arg);
}

static int bloom_flush(struct index *ix)
{
	int rc = msync(ix->h, ix->map_len, MS_SYNC) ? -errno : 0;
	return rc ? rc : index_bdb_ops.flush(ix->bdb);
}

static int bloom_repair(struct index *ix)
{
	int rc = index_bdb_ops.repair(ix->bdb);
	return rc ? rc : rebuild(ix);
}

static int bloom_destroy(const struct index_params *p)
{
	char path[4096];
	if (meta_path(path, sizeof path, p->dir, BLOOM_FILE))
		return -ENAMETOOLONG;
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return index_bdb_ops.destroy(p);
}

static void bloom_stats(struct index *ix, struct index_stats *s)
{
	index_bdb_ops.stats(ix->bdb, s);
	s->bytes += ix->map_len;
}

static uint64_t bloom_digest(struct index *ix)
{
	meta_advise(ix->h, ix->map_len, 1);
	uint64_t d = meta_digest(index_bdb_ops.digest(ix->bdb), ix->h, ix->map_len);
	meta_advise(ix->h, ix->map_len, 0);
	return d;
}

static void bloom_close(struct index *ix)
{
	index_bdb_ops.close(ix->bdb);
	munmap(ix->h, ix->map_len);
	free(ix);
}

const struct index_ops index_bloom_ops = {
	.name = "bloom",
	.about = "Bloom filter + bdb",
	.create = bloom_create,
	.created_bytes = bloom_created_bytes,
	.open = bloom_open,
	.lookup = bloom_lookup,
	.insert = bloom_insert,
	.remove = bloom_remove,
	.settle = bloom_settle,
	.iterate = bloom_iterate,
	.flush = bloom_flush,
	.repair = bloom_repair,
	.stats = bloom_stats,
	.digest = bloom_digest,
	.close = bloom_close,
	.destroy = bloom_destroy,
};
