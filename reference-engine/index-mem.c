/* index-mem.c - the in-memory index: open-addressing tables (linear probing, backward-shift
 * deletion), one per fingerprint stripe of the volume, in one MAP_SHARED file. The engine's
 * stripe lock covers a whole partition, so different stripes never share a probe run. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "reference-engine/fpindex.h"
#include "reference-engine/meta.h"

#define MEM_MAGIC 0x32584544494d454dULL /* "MEMIDEX2" */
#define MEM_FILE "index.mem"
#define MEM_MIN_SLOTS 16

struct mem_header {
	uint64_t magic;
	uint64_t part_slots;  /* slots per partition, a power of two */
	uint64_t entries;     /* at the last recount only: the live count is the sum of the partitions' */
	uint32_t fp_len;
	uint32_t slot_size;
	uint32_t parts;       /* partitions: the volume's stripes (0 in files before v3: INDEX_STRIPES) */
	uint8_t pad[4096 - 36];
};

/* Per partition: its entry count (changed under that stripe's lock), so a partition refuses an
 * insert past 7/8 full instead of its probe runs growing without bound. */
static size_t counts_len(unsigned parts)
{
	return parts * sizeof(uint32_t);
}

static unsigned parts_of(const struct index_params *p)
{
	return p->stripes ? p->stripes : INDEX_STRIPES;
}

/* A slot: address + 1 (0 = empty), then the fingerprint, padded to 8 bytes. The geometry is
 * copied out of the shared header: every probe reads it, and a line other processes write (as
 * the header's once was, by a shared entry count bumped on every insert) costs a miss per read. */
struct index {
	struct mem_header *h;
	uint32_t *counts;
	uint8_t *table;
	uint64_t part_slots;
	uint32_t slot_size, fp_len;
	unsigned parts;       /* a power of two */
	size_t map_len;
	uint64_t meta_writes;
};

/* Slots per partition: the mean load at capacity is at most 0.75, with room for a partition
 * six standard deviations above the mean (entries spread binomially over the stripes). */
static uint64_t part_slots(uint64_t capacity, unsigned parts)
{
	double mean = (double)capacity / parts;
	double need = (mean + 6 * sqrt(mean) + 2) * 4 / 3;
	uint64_t n = MEM_MIN_SLOTS;
	while ((double)n < need)
		n <<= 1;
	return n;
}

static uint32_t slot_size(unsigned fp_len)
{
	return (uint32_t)((8 + fp_len + 7) & ~7u);
}

static size_t file_len(const struct index_params *p)
{
	unsigned parts = parts_of(p);
	return sizeof(struct mem_header) + counts_len(parts) + parts * part_slots(p->capacity, parts) * slot_size(p->fp_len);
}

static uint64_t mem_created_bytes(const struct index_params *p)
{
	return file_len(p);
}

static int mem_create(const struct index_params *p)
{
	size_t len = file_len(p);
	int fd;
	struct mem_header *h = meta_map(p->dir, MEM_FILE, len, 1, &fd);
	if (!h)
		return -errno;
	meta_advise(h, len, 0);
	memset(h, 0, sizeof *h);
	h->magic = MEM_MAGIC;
	h->part_slots = part_slots(p->capacity, parts_of(p));
	h->fp_len = p->fp_len;
	h->slot_size = slot_size(p->fp_len);
	h->parts = parts_of(p);
	munmap(h, len);
	close(fd);
	return 0;
}

static int mem_destroy(const struct index_params *p)
{
	char path[4096];
	if (meta_path(path, sizeof path, p->dir, MEM_FILE))
		return -ENAMETOOLONG;
	return unlink(path) && errno != ENOENT ? -errno : 0;
}

static inline unsigned partition(struct index *ix, const uint8_t *fp)
{
	return index_stripe(fp) & (ix->parts - 1);
}

static inline uint8_t *slot(struct index *ix, unsigned part, uint64_t i)
{
	return ix->table + ((uint64_t)part * ix->part_slots + i) * ix->slot_size;
}

static inline uint64_t home(struct index *ix, const uint8_t *fp)
{
	uint64_t x;
	memcpy(&x, fp + 2, 8); /* a cryptographic digest is already uniformly spread */
	return x & (ix->part_slots - 1);
}

/* The slot holding fp in its partition, or the empty slot ending its probe run (UINT64_MAX when
 * the partition is full and fp absent). */
static uint64_t probe(struct index *ix, unsigned part, const uint8_t *fp, int *found)
{
	uint64_t mask = ix->part_slots - 1, i = home(ix, fp);
	for (uint64_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uint8_t *s = slot(ix, part, i);
		uint64_t v;
		memcpy(&v, s, 8);
		if (!v) {
			*found = 0;
			return i;
		}
		if (!memcmp(s + 8, fp, ix->fp_len)) {
			*found = 1;
			return i;
		}
	}
	*found = 0;
	return UINT64_MAX;
}

static void count_entries(struct index *ix)
{
	uint64_t total = 0;
	meta_advise(ix->h, ix->map_len, 1);
	for (unsigned p = 0; p < ix->parts; p++) {
		uint32_t n = 0;
		for (uint64_t i = 0; i < ix->part_slots; i++)
			n += *(uint64_t *)(void *)slot(ix, p, i) != 0;
		ix->counts[p] = n;
		total += n;
	}
	ix->h->entries = total;
	meta_advise(ix->h, ix->map_len, 0);
}

static int mem_open(const struct index_params *p, int recover, struct index **out)
{
	struct index *ix = calloc(1, sizeof *ix);
	if (!ix)
		return -ENOMEM;
	size_t len = file_len(p);
	ix->h = meta_map(p->dir, MEM_FILE, len, 0, NULL);
	if (!ix->h) {
		int e = -errno;
		free(ix);
		return e ? e : -EIO;
	}
	meta_advise(ix->h, len, 0); /* before the header's own fault */
	if (ix->h->magic != MEM_MAGIC || ix->h->fp_len != p->fp_len ||
	    ix->h->part_slots != part_slots(p->capacity, parts_of(p)) || ix->h->slot_size != slot_size(p->fp_len) ||
	    (ix->h->parts ? ix->h->parts : INDEX_STRIPES) != parts_of(p)) {
		munmap(ix->h, len);
		free(ix);
		return -EBADMSG; /* not this volume's table: the engine rebuilds it */
	}
	ix->map_len = len;
	meta_make_resident(p->dir, ix->h, len);
	ix->parts = parts_of(p);
	ix->part_slots = ix->h->part_slots;
	ix->slot_size = ix->h->slot_size;
	ix->fp_len = ix->h->fp_len;
	ix->counts = (uint32_t *)(void *)((uint8_t *)ix->h + sizeof *ix->h);
	ix->table = (uint8_t *)ix->counts + counts_len(ix->parts);
	if (recover) /* a writer may have died mid-update: recount */
		count_entries(ix);
	*out = ix;
	return 0;
}

static int mem_lookup(struct index *ix, const uint8_t *fp, uint64_t *addr)
{
	int found;
	unsigned part = partition(ix, fp);
	uint64_t i = probe(ix, part, fp, &found);
	if (found) {
		memcpy(addr, slot(ix, part, i), 8);
		(*addr)--;
	}
	return found;
}

static int mem_insert(struct index *ix, const uint8_t *fp, uint64_t addr)
{
	int found;
	unsigned part = partition(ix, fp);
	uint64_t i = probe(ix, part, fp, &found);
	if (!found && (uint64_t)(ix->counts[part] + 1) * 8 > ix->part_slots * 7)
		return -ENOSPC;
	uint8_t *s = slot(ix, part, i);
	memcpy(s + 8, fp, ix->fp_len);
	uint64_t v = addr + 1;
	memcpy(s, &v, 8);
	if (!found) {
		ix->counts[part]++;
	}
	return 0;
}

static int mem_remove(struct index *ix, const uint8_t *fp)
{
	int found;
	unsigned part = partition(ix, fp);
	uint64_t mask = ix->part_slots - 1, i = probe(ix, part, fp, &found);
	if (!found)
		return -ENOENT;
	/* Backward-shift: pull later members of the probe run into the hole, so no tombstones. */
	uint64_t hole = i, j = i;
	for (;;) {
		j = (j + 1) & mask;
		uint8_t *s = slot(ix, part, j);
		uint64_t v;
		memcpy(&v, s, 8);
		if (!v)
			break;
		uint64_t h = home(ix, s + 8);
		/* s may move to the hole if its home is not in (hole, j] cyclically */
		bool stays = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
		if (!stays) {
			memcpy(slot(ix, part, hole), s, ix->slot_size);
			hole = j;
		}
	}
	memset(slot(ix, part, hole), 0, ix->slot_size);
	ix->counts[part]--;
	return 0;
}

static int mem_iterate(struct index *ix, int (*fn)(void *arg, const uint8_t *fp, uint64_t addr), void *arg)
{
	int rc = 0;
	meta_advise(ix->h, ix->map_len, 1);
	for (uint64_t i = 0; !rc && i < ix->parts * ix->part_slots; i++) {
		uint8_t *s = ix->table + i * ix->slot_size;
		uint64_t v;
		memcpy(&v, s, 8);
		if (v)
			rc = fn(arg, s + 8, v - 1);
	}
	meta_advise(ix->h, ix->map_len, 0);
	return rc;
}

static int mem_flush(struct index *ix)
{
	ix->meta_writes++;
	return msync(ix->h, ix->map_len, MS_SYNC) ? -errno : 0;
}

static int mem_repair(struct index *ix)
{
	count_entries(ix);
	return 0;
}

static void mem_stats(struct index *ix, struct index_stats *s)
{
	memset(s, 0, sizeof *s);
	for (unsigned p = 0; p < ix->parts; p++)
		s->entries += __atomic_load_n(&ix->counts[p], __ATOMIC_RELAXED);
	s->meta_writes = ix->meta_writes;
	s->bytes = ix->map_len;
}

static uint64_t mem_digest(struct index *ix)
{
	meta_advise(ix->h, ix->map_len, 1);
	uint64_t d = meta_digest(MEM_MAGIC, ix->h, ix->map_len);
	meta_advise(ix->h, ix->map_len, 0);
	return d;
}

static void mem_close(struct index *ix)
{
	munmap(ix->h, ix->map_len);
	free(ix);
}

const struct index_ops index_mem_ops = {
	.name = "mem",
	.flags = FPINDEX_OPENS_READ_ONLY,
	.create = mem_create,
	.created_bytes = mem_created_bytes,
	.open = mem_open,
	.lookup = mem_lookup,
	.insert = mem_insert,
	.remove = mem_remove,
	.iterate = mem_iterate,
	.flush = mem_flush,
	.repair = mem_repair,
	.stats = mem_stats,
	.digest = mem_digest,
	.close = mem_close,
	.destroy = mem_destroy,
};
