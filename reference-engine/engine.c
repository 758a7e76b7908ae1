/* engine.c - the reference engine's paths: the Dmdedup write flowchart (fingerprint, index
 * lookup, LBN lookup, five cases), reads, discard, flush, GC, recovery, fsck, stats. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "errmsg.h"
#include "engine.h"
#include "fingerprint.h"
#include "index.h"
#include "meta.h"
#include "space.h"
#include "store.h"

struct engine {
	char dir[4096];
	struct superblock sb;
	int lock_fd;                  /* flock: shared by openers, exclusive for gc/fsck/recovery */
	struct vol_state *st;
	uint64_t *lbnmap;             /* pbn + 1, 0 = unmapped */
	size_t lbnmap_len, refs_len;
	struct space space;
	struct store store;
	const struct index_ops *iops;
	struct index *ix;
	struct fp_ctx *fp;
	struct engine_open_params p;
	void *scratch;                /* one aligned block: --verify-hits, fsck */
};

const struct index_ops *index_find(const char *name)
{
	static const struct index_ops *const all[] = {&index_mem_ops, &index_bdb_ops, &index_bloom_ops};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (name && !strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

#define fail(err, len, rc, ...) errmsg_set(err, len, rc, __VA_ARGS__)

uint32_t engine_block_size(const struct engine *e) { return e->sb.block_size; }
uint64_t engine_logical_blocks(const struct engine *e) { return e->sb.logical_blocks; }

static struct index_params index_params(const char *dir, const struct superblock *sb, unsigned commit_every)
{
	return (struct index_params){dir, sb->fp_len, sb->data_blocks, commit_every};
}

int engine_format(const char *dir, const struct engine_format_params *p, char *err, size_t errlen)
{
	uint32_t bs = p->block_size ? p->block_size : 4096;
	const char *hash = p->hash ? p->hash : "sha1";
	const char *iname = p->index ? p->index : "mem";
	const struct index_ops *iops = index_find(iname);
	if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
		return fail(err, errlen, -EINVAL, "block size %u is not a power of two from 512 B to 64 KiB", bs);
	if (!iops)
		return fail(err, errlen, -EINVAL, "unknown index '%s' (mem, bdb, bloom)", iname);
	struct fp_ctx *fp = fp_new(hash);
	if (!fp)
		return fail(err, errlen, -EINVAL, "unknown hash '%s' (sha1, sha256)", hash);
	unsigned digest_len = (unsigned)fp_len(fp);
	fp_free(fp);
	uint64_t logical = p->logical_bytes / bs;
	uint64_t data = p->data_bytes ? p->data_bytes / bs : logical + (logical + 15) / 16;
	if (!logical || !data)
		return fail(err, errlen, -EINVAL, "volume size must be at least one %u-byte block", bs);
	if (data >= (1ULL << 40) || logical >= (1ULL << 40))
		return fail(err, errlen, -EINVAL, "volume too large (at most 2^40 blocks)");
	if (mkdir(dir, 0755) && errno != EEXIST)
		return fail(err, errlen, -errno, "cannot create %s: %s", dir, strerror(errno));
	struct superblock sb;
	const char *why;
	char sbpath[4096];
	struct stat sbst;
	/* Any superblock, valid or damaged, means a volume lives here: never format over one. */
	if (meta_path(sbpath, sizeof sbpath, dir, VOL_SUPERBLOCK) || stat(sbpath, &sbst) == 0)
		return fail(err, errlen, -EEXIST, "%s already holds a volume%s", dir,
			    sb_read(dir, &sb, &why) == 0 ? "" : " (with a damaged superblock); refusing to format over it");

	memset(&sb, 0, sizeof sb);
	memcpy(sb.magic, VOL_MAGIC, 8);
	sb.version = VOL_VERSION;
	sb.block_size = bs;
	sb.logical_blocks = logical;
	sb.data_blocks = data;
	snprintf(sb.hash, sizeof sb.hash, "%s", hash);
	snprintf(sb.index, sizeof sb.index, "%s", iname);
	sb.fp_len = digest_len;
	sb.stripes = VOL_STRIPES;
	sb.created = (uint64_t)time(NULL);
	sb_seal(&sb);

	int rc;
	struct vol_state *st = meta_map(dir, VOL_STATE, sizeof *st, 1, NULL);
	if (!st)
		return fail(err, errlen, -errno, "cannot create the state file in %s: %s", dir, strerror(errno));
	memset(st, 0, sizeof *st);
	st->magic = VOL_STATE_MAGIC;
	st->clean = 1;
	rc = state_init_lock(st);
	msync(st, sizeof *st, MS_SYNC);
	munmap(st, sizeof *st);
	void *m;
	if (!rc && !(m = meta_map(dir, VOL_LBNMAP, logical * 8, 1, NULL)))
		rc = -errno;
	else if (!rc)
		munmap(m, logical * 8);
	if (!rc && !(m = meta_map(dir, VOL_REFS, data * 4, 1, NULL)))
		rc = -errno;
	else if (!rc)
		munmap(m, data * 4);
	if (!rc)
		rc = store_create(dir, bs, data, sb.stripes);
	struct index_params ip = index_params(dir, &sb, 0);
	if (!rc)
		rc = iops->create(&ip);
	/* The superblock goes last: a volume without one is not a volume, so a failed format
	 * leaves nothing that looks usable. */
	if (!rc)
		rc = sb_write(dir, &sb);
	if (rc)
		return fail(err, errlen, rc, "cannot format %s: %s", dir, strerror(-rc));
	return 0;
}

int engine_describe(const char *dir, struct engine_stats *g, char *err, size_t errlen)
{
	struct superblock sb;
	const char *why;
	char path[4096];
	struct stat st;
	if (meta_path(path, sizeof path, dir, VOL_SUPERBLOCK) == 0 && stat(path, &st) && errno == ENOENT)
		return -ENOENT;
	int rc = sb_read(dir, &sb, &why);
	if (rc)
		return fail(err, errlen, rc, "%s: %s", dir, why ? why : strerror(-rc));
	memset(g, 0, sizeof *g);
	g->block_size = sb.block_size;
	g->logical_blocks = sb.logical_blocks;
	g->data_blocks = sb.data_blocks;
	snprintf(g->index, sizeof g->index, "%s", sb.index);
	snprintf(g->hash, sizeof g->hash, "%s", sb.hash);
	return 0;
}

/* Collect the PBNs the index points at (for rebuild) and drop entries that cannot be right. */
struct collect {
	uint64_t *pbns;
	uint64_t n, cap, blocks;
};

static int collect_pbn(void *arg, const uint8_t *fp, uint64_t pbn)
{
	struct collect *c = arg;
	if (pbn >= c->blocks)
		return 0;
	if (c->n == c->cap) {
		uint64_t cap = c->cap ? c->cap * 2 : 1024;
		uint64_t *p = realloc(c->pbns, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		c->pbns = p;
		c->cap = cap;
	}
	c->pbns[c->n++] = pbn;
	return 0;
}

/* After a crash (or a process dying inside the lock): the LBN map and the index are the truth;
 * reference words and counters are derived from them again. */
static int recover(struct engine *e)
{
	struct collect c = {NULL, 0, 0, e->sb.data_blocks};
	int rc = e->iops->iterate(e->ix, collect_pbn, &c);
	if (rc) {
		free(c.pbns);
		return rc;
	}
	space_rebuild(&e->space, e->lbnmap, e->sb.logical_blocks, c.pbns, c.n);
	free(c.pbns);
	e->st->generation++;
	return 0;
}

static int gc_locked(struct engine *e, uint64_t *reclaimed);

static int vol_lock(struct engine *e)
{
	int rc = pthread_mutex_lock(&e->st->lock);
	if (rc == EOWNERDEAD) {
		/* Its owner died mid-update: repair before anyone trusts the derived state. */
		rc = recover(e);
		pthread_mutex_consistent(&e->st->lock);
		if (rc) {
			pthread_mutex_unlock(&e->st->lock);
			return rc;
		}
		return 0;
	}
	return -rc;
}

static void vol_unlock(struct engine *e)
{
	pthread_mutex_unlock(&e->st->lock);
}

static void unmap_all(struct engine *e)
{
	if (e->st)
		munmap(e->st, sizeof *e->st);
	if (e->lbnmap)
		munmap(e->lbnmap, e->lbnmap_len);
	if (e->space.refs)
		munmap(e->space.refs, e->refs_len);
	e->st = NULL;
	e->lbnmap = NULL;
	e->space.refs = NULL;
}

static void destroy(struct engine *e)
{
	if (e->ix)
		e->iops->close(e->ix);
	store_close(&e->store);
	unmap_all(e);
	if (e->fp)
		fp_free(e->fp);
	if (e->lock_fd >= 0)
		close(e->lock_fd);
	free(e->scratch);
	free(e);
}

int engine_open(const char *dir, const struct engine_open_params *p, struct engine **out, char *err, size_t errlen)
{
	struct engine *e = calloc(1, sizeof *e);
	if (!e)
		return fail(err, errlen, -ENOMEM, "out of memory");
	e->lock_fd = -1;
	e->p = *p;
	snprintf(e->dir, sizeof e->dir, "%s", dir);
	const char *why;
	int rc = sb_read(dir, &e->sb, &why);
	if (rc) {
		destroy(e);
		return fail(err, errlen, rc, "%s: %s", dir, why ? why : strerror(-rc));
	}
	e->iops = index_find(e->sb.index);
	e->fp = fp_new(e->sb.hash);
	if (!e->iops || !e->fp) {
		destroy(e);
		return fail(err, errlen, -EINVAL, "%s: unknown index or hash in the superblock", dir);
	}
	char path[4096];
	meta_path(path, sizeof path, dir, VOL_STATE);
	e->lock_fd = open(path, O_RDWR | O_CLOEXEC);
	if (e->lock_fd < 0) {
		rc = -errno;
		destroy(e);
		return fail(err, errlen, rc, "%s: cannot open the state file: %s", dir, strerror(-rc));
	}
	/* Whoever gets the volume alone first (LOCK_EX) recovers it if it was not closed cleanly. */
	bool alone = flock(e->lock_fd, LOCK_EX | LOCK_NB) == 0;
	if (!alone && p->exclusive) {
		destroy(e);
		return fail(err, errlen, -EBUSY, "%s is in use by another process", dir);
	}
	if (!alone && flock(e->lock_fd, LOCK_SH)) {
		rc = -errno;
		destroy(e);
		return fail(err, errlen, rc, "%s: cannot lock: %s", dir, strerror(-rc));
	}
	e->st = meta_map(dir, VOL_STATE, sizeof *e->st, 0, NULL);
	e->lbnmap_len = e->sb.logical_blocks * 8;
	e->refs_len = e->sb.data_blocks * 4;
	e->lbnmap = meta_map(dir, VOL_LBNMAP, e->lbnmap_len, 0, NULL);
	e->space.refs = meta_map(dir, VOL_REFS, e->refs_len, 0, NULL);
	if (!e->st || !e->lbnmap || !e->space.refs || e->st->magic != VOL_STATE_MAGIC) {
		destroy(e);
		return fail(err, errlen, -EINVAL, "%s: metadata files are missing or damaged", dir);
	}
	e->space.blocks = e->sb.data_blocks;
	e->space.c = &e->st->c;
	e->space.cursor = &e->st->alloc_cursor;
	bool unclean = alone && !e->st->clean;
	struct index_params ip = index_params(dir, &e->sb, p->commit_every);
	rc = e->iops->open(&ip, unclean, &e->ix);
	if (!rc)
		rc = store_open(&e->store, dir, e->sb.block_size, e->sb.data_blocks, e->sb.stripes, p->direct);
	if (!rc && posix_memalign(&e->scratch, 4096, e->sb.block_size))
		rc = -ENOMEM;
	if (!rc && alone) {
		/* Nobody else has it open: no process can hold the lock, so re-initialise it. */
		rc = state_init_lock(e->st);
		if (!rc && unclean)
			rc = recover(e);
		if (!rc)
			e->st->clean = 0;
		if (!rc && !p->exclusive && flock(e->lock_fd, LOCK_SH))
			rc = -errno;
	}
	if (rc) {
		destroy(e);
		return fail(err, errlen, rc, "%s: cannot open the volume: %s", dir, strerror(-rc));
	}
	*out = e;
	return 0;
}

/* Point lbn at pbn (already referenced for it) and drop the old mapping's reference. With the lock. */
static void remap(struct engine *e, uint64_t lbn, uint64_t pbn)
{
	struct vol_counters *c = &e->st->c;
	uint64_t old = e->lbnmap[lbn];
	/* One aligned 8-byte store: a crash leaves the entry old or new. */
	__atomic_store_n(&e->lbnmap[lbn], pbn + 1, __ATOMIC_RELEASE);
	if (old) {
		space_unref_lbn(&e->space, old - 1); /* overwritten blocks are not reclaimed here */
		c->overwrites++;
	} else {
		c->mapped_blocks++;
	}
}

/* Known data (cases 1-3): with the lock. */
static void write_known(struct engine *e, uint64_t lbn, uint64_t pbn)
{
	struct vol_counters *c = &e->st->c;
	if (e->lbnmap[lbn] == pbn + 1) {
		c->inplace_rewrites++; /* case 1: the same data rewritten in place */
	} else {
		space_ref_lbn(&e->space, pbn); /* cases 2 and 3 */
		remap(e, lbn, pbn);
		c->duplicate_writes++;
	}
	c->logical_writes++;
}

/* Index lookup with the lock held; 1 hit (*pbn), 0 miss, -errno. --verify-hits turns a hit whose
 * bytes differ into a miss and sets *collision. */
static int lookup_locked(struct engine *e, const uint8_t *fp, const void *buf, uint64_t *pbn, bool *collision)
{
	struct vol_counters *c = &e->st->c;
	c->index_lookups++;
	int hit = e->iops->lookup(e->ix, fp, pbn);
	if (hit == INDEX_ABSENT_FILTERED) {
		c->bloom_negatives++;
		hit = 0;
	}
	if (hit == 1 && e->p.verify_hits) {
		int rc = store_read(&e->store, *pbn, e->scratch);
		if (rc)
			return rc;
		if (memcmp(e->scratch, buf, e->sb.block_size)) {
			c->collisions++;
			*collision = true; /* stored unindexed: the index keeps the first owner */
			hit = 0;
		}
	}
	return hit;
}

int engine_write(struct engine *e, uint64_t lbn, const void *buf)
{
	if (lbn >= e->sb.logical_blocks)
		return -EINVAL;
	uint8_t fp[FP_MAX_LEN];
	if (fp_hash(e->fp, buf, e->sb.block_size, fp))
		return -EIO;
	int rc = vol_lock(e);
	if (rc)
		return rc;
	uint64_t pbn = 0;
	bool collision = false;
	int hit = lookup_locked(e, fp, buf, &pbn, &collision);
	if (hit != 0) {
		if (hit == 1)
			write_known(e, lbn, pbn);
		vol_unlock(e);
		return hit < 0 ? hit : 0;
	}
	/* Cases 4 and 5, new data: reserve a block (sequential allocation), write it without the
	 * lock so other writers hash and write meanwhile, then publish. */
	rc = space_alloc(&e->space, &pbn);
	if (rc == -ENOSPC) {
		/* Full of stale blocks (overwrites are not reclaimed on the write path): collect. */
		uint64_t freed = 0;
		rc = gc_locked(e, &freed);
		if (!rc)
			rc = space_alloc(&e->space, &pbn);
	}
	if (rc) {
		vol_unlock(e);
		return rc;
	}
	space_reserve(&e->space, pbn, true);
	vol_unlock(e);

	rc = store_write(&e->store, pbn, buf);

	int lrc = vol_lock(e);
	if (lrc)
		return lrc;
	space_reserve(&e->space, pbn, false);
	struct vol_counters *c = &e->st->c;
	uint64_t other = 0;
	if (!rc && !collision && (hit = lookup_locked(e, fp, buf, &other, &collision)) == 1) {
		/* Another writer stored the same data meanwhile: use its block, ours goes back free. */
		write_known(e, lbn, other);
	} else if (!rc && hit >= 0) {
		if (!collision && (rc = e->iops->insert(e->ix, fp, pbn)) == 0)
			space_set_indexed(&e->space, pbn, true);
		if (!rc) {
			space_ref_lbn(&e->space, pbn);
			remap(e, lbn, pbn);
			c->unique_writes++;
			c->logical_writes++;
		}
	} else if (!rc) {
		rc = hit;
	}
	vol_unlock(e);
	return rc;
}

int engine_read(struct engine *e, uint64_t lbn, void *buf)
{
	if (lbn >= e->sb.logical_blocks)
		return -EINVAL;
	__atomic_fetch_add(&e->st->c.reads, 1, __ATOMIC_RELAXED);
	/* Lock-free: the map entry is one atomic word and blocks are never rewritten in place.
	 * Only a GC pass can free (and a write then reuse) a block under us: if one ran, re-read
	 * under the lock. */
	uint64_t epoch = __atomic_load_n(&e->st->gc_epoch, __ATOMIC_SEQ_CST);
	uint64_t v = __atomic_load_n(&e->lbnmap[lbn], __ATOMIC_ACQUIRE);
	int rc = v ? store_read(&e->store, v - 1, buf) : (memset(buf, 0, e->sb.block_size), 0);
	if (rc || __atomic_load_n(&e->st->gc_epoch, __ATOMIC_SEQ_CST) == epoch)
		return rc;
	if ((rc = vol_lock(e)))
		return rc;
	v = e->lbnmap[lbn];
	rc = v ? store_read(&e->store, v - 1, buf) : (memset(buf, 0, e->sb.block_size), 0);
	vol_unlock(e);
	return rc;
}

int engine_discard(struct engine *e, uint64_t lbn, uint64_t n)
{
	if (lbn > e->sb.logical_blocks || n > e->sb.logical_blocks - lbn)
		return -EINVAL;
	int rc = vol_lock(e);
	if (rc)
		return rc;
	for (uint64_t l = lbn; l < lbn + n; l++) {
		uint64_t old = e->lbnmap[l];
		if (!old)
			continue;
		__atomic_store_n(&e->lbnmap[l], 0, __ATOMIC_RELEASE);
		space_unref_lbn(&e->space, old - 1);
		e->st->c.mapped_blocks--;
		e->st->c.discards++;
	}
	vol_unlock(e);
	return 0;
}

int engine_flush(struct engine *e)
{
	/* Data first, then the maps that point at it, then the index. */
	int rc = store_sync(&e->store);
	if (!rc && (msync(e->lbnmap, e->lbnmap_len, MS_SYNC) || msync(e->space.refs, e->refs_len, MS_SYNC)))
		rc = -errno;
	if (rc)
		return rc;
	if ((rc = vol_lock(e)))
		return rc;
	rc = e->iops->flush(e->ix);
	e->st->c.flushes++;
	vol_unlock(e);
	if (!rc && msync(e->st, sizeof *e->st, MS_SYNC))
		rc = -errno;
	return rc;
}

struct gc_walk {
	struct engine *e;
	uint8_t *fps;
	uint64_t *pbns;
	uint64_t n, cap;
	unsigned fp_len;
};

static int gc_pick(void *arg, const uint8_t *fp, uint64_t pbn)
{
	struct gc_walk *g = arg;
	if (pbn >= g->e->sb.data_blocks || g->e->space.refs[pbn] != REF_INDEXED)
		return 0;
	if (g->n == g->cap) {
		uint64_t cap = g->cap ? g->cap * 2 : 1024;
		uint8_t *f = realloc(g->fps, cap * g->fp_len);
		if (!f)
			return -ENOMEM;
		g->fps = f;
		uint64_t *p = realloc(g->pbns, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		g->pbns = p;
		g->cap = cap;
	}
	memcpy(g->fps + g->n * g->fp_len, fp, g->fp_len);
	g->pbns[g->n++] = pbn;
	return 0;
}

/* One GC pass, with the volume lock held. Blocks that are indexed but mapped by no LBN can only
 * be reached by a future duplicate write: drop their index entries and free them. */
static int gc_locked(struct engine *e, uint64_t *reclaimed)
{
	struct gc_walk g = {e, NULL, NULL, 0, 0, e->sb.fp_len};
	int rc = e->iops->iterate(e->ix, gc_pick, &g);
	if (!rc && g.n)
		__atomic_fetch_add(&e->st->gc_epoch, 1, __ATOMIC_SEQ_CST);
	for (uint64_t i = 0; !rc && i < g.n; i++) {
		rc = e->iops->remove(e->ix, g.fps + i * g.fp_len);
		if (!rc) {
			space_set_indexed(&e->space, g.pbns[i], false);
			e->st->c.gc_reclaimed++;
			(*reclaimed)++;
		}
	}
	free(g.fps);
	free(g.pbns);
	return rc;
}

int engine_gc(struct engine *e, uint64_t *reclaimed)
{
	*reclaimed = 0;
	int rc = vol_lock(e);
	if (rc)
		return rc;
	rc = gc_locked(e, reclaimed);
	vol_unlock(e);
	return rc ? rc : engine_flush(e);
}

void engine_stats(struct engine *e, struct engine_stats *s)
{
	struct index_stats is;
	e->iops->stats(e->ix, &is);
	const struct vol_counters *c = &e->st->c;
	memset(s, 0, sizeof *s);
	s->block_size = e->sb.block_size;
	s->logical_blocks = e->sb.logical_blocks;
	s->data_blocks = e->sb.data_blocks;
	s->logical_writes = c->logical_writes;
	s->unique_writes = c->unique_writes;
	s->duplicate_writes = c->duplicate_writes;
	s->overwrites = c->overwrites;
	s->inplace_rewrites = c->inplace_rewrites;
	s->discards = c->discards;
	s->reads = c->reads;
	s->mapped_blocks = c->mapped_blocks;
	s->physical_blocks = c->used_blocks;
	s->referenced_blocks = c->referenced_blocks;
	s->dedup_ratio = c->referenced_blocks ? (double)c->mapped_blocks / (double)c->referenced_blocks : 0;
	s->index_entries = is.entries;
	s->index_lookups = c->index_lookups;
	s->bloom_negatives = c->bloom_negatives;
	s->meta_reads = is.meta_reads;
	s->meta_writes = is.meta_writes;
	s->gc_reclaimed = c->gc_reclaimed;
	s->collisions = c->collisions;
	s->index_bytes = is.bytes;
	snprintf(s->index, sizeof s->index, "%s", e->sb.index);
	snprintf(s->hash, sizeof s->hash, "%s", e->sb.hash);
}

struct fsck_walk {
	struct engine *e;
	uint32_t *expect;     /* recomputed reference words */
	uint8_t *seen;        /* PBNs already claimed by an index entry */
	long problems;
	void (*report)(void *, const char *);
	void *arg;
	uint64_t entries;
};

__attribute__((format(printf, 2, 3)))
static void problem(struct fsck_walk *w, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	w->problems++;
	if (w->report && w->problems <= 100)
		w->report(w->arg, line);
}

static int fsck_entry(void *arg, const uint8_t *fp, uint64_t pbn)
{
	struct fsck_walk *w = arg;
	struct engine *e = w->e;
	uint8_t want[FP_MAX_LEN];
	w->entries++;
	if (pbn >= e->sb.data_blocks) {
		problem(w, "index entry points past the chunk store (pbn %llu)", (unsigned long long)pbn);
		return 0;
	}
	if (w->seen[pbn]++)
		problem(w, "two index entries point at pbn %llu", (unsigned long long)pbn);
	w->expect[pbn] |= REF_INDEXED;
	int rc = store_read(&e->store, pbn, e->scratch);
	if (rc)
		return rc;
	fp_hash(e->fp, e->scratch, e->sb.block_size, want);
	if (memcmp(want, fp, e->sb.fp_len))
		problem(w, "pbn %llu does not hold the data its index entry names", (unsigned long long)pbn);
	return 0;
}

long engine_fsck(struct engine *e, void (*report)(void *arg, const char *line), void *arg)
{
	struct fsck_walk w = {e, calloc(e->sb.data_blocks, 4), calloc(e->sb.data_blocks, 1), 0, report, arg, 0};
	if (!w.expect || !w.seen) {
		free(w.expect);
		free(w.seen);
		return -ENOMEM;
	}
	int rc = vol_lock(e);
	if (rc)
		goto out;
	uint64_t mapped = 0, used = 0, referenced = 0;
	for (uint64_t l = 0; l < e->sb.logical_blocks; l++) {
		uint64_t v = e->lbnmap[l];
		if (!v)
			continue;
		mapped++;
		if (v - 1 >= e->sb.data_blocks)
			problem(&w, "lbn %llu maps past the chunk store (pbn %llu)", (unsigned long long)l,
				(unsigned long long)(v - 1));
		else
			w.expect[v - 1]++;
	}
	rc = e->iops->iterate(e->ix, fsck_entry, &w);
	for (uint64_t p = 0; !rc && p < e->sb.data_blocks; p++) {
		/* a block reserved by a writer still in its data write (another process) is in flight,
		 * not inconsistent */
		if (w.expect[p] != (e->space.refs[p] & ~REF_RESERVED))
			problem(&w, "pbn %llu: reference word %u/%s, expected %u/%s", (unsigned long long)p,
				REF_LBNS(e->space.refs[p]), e->space.refs[p] & REF_INDEXED ? "indexed" : "unindexed",
				REF_LBNS(w.expect[p]), w.expect[p] & REF_INDEXED ? "indexed" : "unindexed");
		used += w.expect[p] != 0;
		referenced += REF_LBNS(w.expect[p]) != 0;
	}
	const struct vol_counters *c = &e->st->c;
	if (!rc && c->mapped_blocks != mapped)
		problem(&w, "mapped-blocks counter %llu, the LBN map has %llu", (unsigned long long)c->mapped_blocks,
			(unsigned long long)mapped);
	if (!rc && c->used_blocks != used)
		problem(&w, "blocks-in-use counter %llu, actual %llu", (unsigned long long)c->used_blocks,
			(unsigned long long)used);
	if (!rc && c->referenced_blocks != referenced)
		problem(&w, "referenced-blocks counter %llu, actual %llu", (unsigned long long)c->referenced_blocks,
			(unsigned long long)referenced);
	struct index_stats is;
	e->iops->stats(e->ix, &is);
	if (!rc && is.entries != w.entries)
		problem(&w, "index says %llu entries, iteration found %llu", (unsigned long long)is.entries,
			(unsigned long long)w.entries);
	vol_unlock(e);
out:
	free(w.expect);
	free(w.seen);
	return rc ? rc : w.problems;
}

int engine_close(struct engine *e)
{
	int rc = engine_flush(e);
	/* The last one out marks the volume clean. */
	if (!rc && flock(e->lock_fd, LOCK_EX | LOCK_NB) == 0) {
		e->st->clean = 1;
		if (msync(e->st, sizeof *e->st, MS_SYNC))
			rc = -errno;
	}
	destroy(e);
	return rc;
}
