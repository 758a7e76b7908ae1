/* index-mem.c - the in-memory index: an open-addressing table (linear probing, backward-shift
 * deletion) in a MAP_SHARED file, so every process sees it and msync persists it on flush. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "index.h"
#include "meta.h"

#define MEM_MAGIC 0x584544494d454d44ULL /* "DMEMIDEX" */
#define MEM_FILE "index.mem"

struct mem_header {
	uint64_t magic;
	uint64_t slots;     /* power of two */
	uint64_t entries;
	uint32_t fp_len;
	uint32_t slot_size;
	uint64_t lookups;   /* shared counter */
	uint8_t pad[4096 - 40];
};

/* A slot: pbn + 1 (0 = empty), then the fingerprint, padded to 8 bytes. */
struct index {
	struct mem_header *h;
	uint8_t *table;
	size_t map_len;
	uint64_t meta_writes;
};

static uint64_t slots_for(uint64_t capacity)
{
	uint64_t n = 1024;
	while (n < capacity + capacity / 3 + 1) /* load factor at most 0.75 */
		n <<= 1;
	return n;
}

static uint32_t slot_size(unsigned fp_len)
{
	return (uint32_t)((8 + fp_len + 7) & ~7u);
}

static size_t file_len(uint64_t slots, unsigned fp_len)
{
	return sizeof(struct mem_header) + slots * slot_size(fp_len);
}

static int mem_create(const struct index_params *p)
{
	uint64_t slots = slots_for(p->capacity);
	size_t len = file_len(slots, p->fp_len);
	int fd;
	struct mem_header *h = meta_map(p->dir, MEM_FILE, len, 1, &fd);
	if (!h)
		return -errno;
	memset(h, 0, sizeof *h);
	h->magic = MEM_MAGIC;
	h->slots = slots;
	h->fp_len = p->fp_len;
	h->slot_size = slot_size(p->fp_len);
	int rc = msync(h, len, MS_SYNC) ? -errno : 0;
	munmap(h, len);
	close(fd);
	return rc;
}

static int mem_open(const struct index_params *p, int recover, struct index **out)
{
	struct index *ix = calloc(1, sizeof *ix);
	if (!ix)
		return -ENOMEM;
	size_t len = file_len(slots_for(p->capacity), p->fp_len);
	ix->h = meta_map(p->dir, MEM_FILE, len, 0, NULL);
	if (!ix->h) {
		int e = -errno;
		free(ix);
		return e ? e : -EIO;
	}
	if (ix->h->magic != MEM_MAGIC || ix->h->fp_len != p->fp_len || ix->h->slots != slots_for(p->capacity)) {
		munmap(ix->h, len);
		free(ix);
		return -EINVAL;
	}
	ix->map_len = len;
	ix->table = (uint8_t *)ix->h + sizeof *ix->h;
	if (recover) { /* a writer may have died mid-update: recount */
		uint64_t n = 0;
		for (uint64_t i = 0; i < ix->h->slots; i++)
			n += *(uint64_t *)(ix->table + i * ix->h->slot_size) != 0;
		ix->h->entries = n;
	}
	*out = ix;
	return 0;
}

static inline uint8_t *slot(struct index *ix, uint64_t i)
{
	return ix->table + i * ix->h->slot_size;
}

static inline uint64_t home(struct index *ix, const uint8_t *fp)
{
	uint64_t x;
	memcpy(&x, fp, 8); /* a cryptographic digest is already uniformly spread */
	return x & (ix->h->slots - 1);
}

/* The slot holding fp, or the empty slot ending its probe run. */
static uint64_t probe(struct index *ix, const uint8_t *fp, int *found)
{
	uint64_t mask = ix->h->slots - 1, i = home(ix, fp);
	for (;;) {
		uint8_t *s = slot(ix, i);
		uint64_t v;
		memcpy(&v, s, 8);
		if (!v) {
			*found = 0;
			return i;
		}
		if (!memcmp(s + 8, fp, ix->h->fp_len)) {
			*found = 1;
			return i;
		}
		i = (i + 1) & mask;
	}
}

static int mem_lookup(struct index *ix, const uint8_t *fp, uint64_t *pbn)
{
	int found;
	ix->h->lookups++;
	uint64_t i = probe(ix, fp, &found);
	if (found) {
		memcpy(pbn, slot(ix, i), 8);
		(*pbn)--;
	}
	return found;
}

static int mem_insert(struct index *ix, const uint8_t *fp, uint64_t pbn)
{
	int found;
	uint64_t i = probe(ix, fp, &found);
	if (!found && (ix->h->entries + 1) * 4 > ix->h->slots * 3)
		return -ENOSPC;
	uint8_t *s = slot(ix, i);
	memcpy(s + 8, fp, ix->h->fp_len);
	uint64_t v = pbn + 1;
	memcpy(s, &v, 8); /* published last: a reader never sees a slot with half a fingerprint */
	if (!found)
		ix->h->entries++;
	return 0;
}

static int mem_remove(struct index *ix, const uint8_t *fp)
{
	int found;
	uint64_t mask = ix->h->slots - 1, i = probe(ix, fp, &found);
	if (!found)
		return -ENOENT;
	/* Backward-shift: pull later members of the probe run into the hole, so no tombstones. */
	uint64_t hole = i, j = i;
	for (;;) {
		j = (j + 1) & mask;
		uint8_t *s = slot(ix, j);
		uint64_t v;
		memcpy(&v, s, 8);
		if (!v)
			break;
		uint64_t h = home(ix, s + 8);
		/* s may move to the hole if its home is not in (hole, j] cyclically */
		bool stays = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
		if (!stays) {
			memcpy(slot(ix, hole), s, ix->h->slot_size);
			hole = j;
		}
	}
	memset(slot(ix, hole), 0, ix->h->slot_size);
	ix->h->entries--;
	return 0;
}

static int mem_iterate(struct index *ix, int (*fn)(void *arg, const uint8_t *fp, uint64_t pbn), void *arg)
{
	for (uint64_t i = 0; i < ix->h->slots; i++) {
		uint8_t *s = slot(ix, i);
		uint64_t v;
		memcpy(&v, s, 8);
		if (!v)
			continue;
		int rc = fn(arg, s + 8, v - 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int mem_flush(struct index *ix)
{
	ix->meta_writes++;
	return msync(ix->h, ix->map_len, MS_SYNC) ? -errno : 0;
}

static void mem_stats(struct index *ix, struct index_stats *s)
{
	memset(s, 0, sizeof *s);
	s->entries = ix->h->entries;
	s->lookups = ix->h->lookups;
	s->meta_writes = ix->meta_writes;
	s->bytes = ix->map_len;
}

static void mem_close(struct index *ix)
{
	munmap(ix->h, ix->map_len);
	free(ix);
}

const struct index_ops index_mem_ops = {
	.name = "mem",
	.create = mem_create,
	.open = mem_open,
	.lookup = mem_lookup,
	.insert = mem_insert,
	.remove = mem_remove,
	.iterate = mem_iterate,
	.flush = mem_flush,
	.stats = mem_stats,
	.close = mem_close,
};
