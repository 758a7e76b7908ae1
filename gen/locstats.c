/* locstats.c - duplicate locality: per-thread records of fingerprint prefixes by stream position,
 * their resolution to first positions through one walk of the index, and the run histograms. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "lib/bitfilter.h"
#include "lib/fanout.h"
#include "gen/locstats.h"
#include "lib/reserve.h"

unsigned loc_level_for(uint64_t stream_blocks)
{
	unsigned level = 0;
	while (level < 40 && (LOC_BUDGET << level) < stream_blocks)
		level++;
	return level;
}

bool loc_window_selected(uint64_t window, unsigned level)
{
	if (level == 0)
		return true;
	uint64_t x = window ^ UINT64_C(0x6c6f63616c697479); /* "locality": apart from other hashes */
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return level >= 64 ? x == 0 : (x >> (64 - level)) == 0;
}

static inline uint64_t prefix_of(const uint8_t *fp)
{
	uint64_t p;
	memcpy(&p, fp, 8);
	return p;
}

/* Consecutive recorded positions of one window: prefixes pfx[off .. off + n). */
struct seg {
	uint64_t pos;
	uint64_t off;
	uint32_t n;
};

/* A prefix and its content's first position (prefix 0: an empty slot). */
struct pslot {
	uint64_t key, first;
};
#define RESOLVE_AHEAD 16 /* lookups in flight: each is a cache miss in a table of many MiB */

/* A window's resolved records: first position per block, UINT64_MAX where none. */
struct win {
	uint64_t number;
	uint64_t *firsts;
	bool unfilled; /* made by the end's placing, which fills it */
};

struct loc_recorder {
	pthread_mutex_t lock;
	size_t fl;
	unsigned level;          /* raised by the reader, read by the hashers (atomics) */
	struct loc_local **parts; /* the threads' records, handed over as they are (no copy) */
	size_t nparts, partcap, npfx;
	/* resolution: the distinct recorded prefixes -> their content's first position, an
	 * open-addressing table (linear probing, at most 2/3 full; prefix 0 lives apart), and the
	 * index entries waiting in a short pipeline for their probe's cache line */
	struct pslot *table;
	size_t table_bytes;
	size_t cap, nkeys, grow_at; /* grown when nkeys would pass grow_at (2/3 of cap) */
	bool zero_key;
	uint64_t zero_key_first;
	struct pslot ring[RESOLVE_AHEAD]; /* a circular buffer: entry k at k % RESOLVE_AHEAD */
	size_t ring_n;                    /* entries ever pushed since loc_resolve_begin */
	/* loc_resolve_begin_copies: the table is built at the end from the copied contents the
	 * resolvers gathered, one array each (the key: prefix, first: the content's first position) */
	bool by_copies;
	struct bitfilter keys;      /* by copies: a bit per key (its low bits) */
	struct copied {
		struct pslot *e;
		size_t n;
	} *copied;
	size_t ncopied, copiedcap;
	uint64_t shift_runs[DIST_ALIGN_MOD];   /* loc_compute's copied runs by (copy - source) mod 32 */
	uint64_t shift_blocks[DIST_ALIGN_MOD];
	struct win *wins;        /* sorted by number */
	size_t nwin, wincap;
	/* the windows' arrays, carved from chunks of WIN_CHUNK windows, each window faulted in at
	 * once (by the chunk's mapping, or by the thread that fills it at the end): one at a time
	 * from malloc, each was a fresh mapping faulted in 4 KiB page by page (16 ms of a 2 GiB
	 * scan's end for 8 windows on a VM, more than resolving them); after a resolution, from the
	 * resolution table's pages first (they are faulted in already) */
	struct win_chunk {
		uint64_t *base;
		size_t used, cap; /* windows */
		size_t bytes;     /* of the mapping */
	} *chunks;
	size_t nchunks, chunkcap;
};
#define WIN_CHUNK 16 /* windows per chunk: 8 MiB */

struct loc_local {
	struct loc_recorder *r;
	struct seg *segs;
	size_t nseg, segcap;
	uint64_t *pfx;
	size_t npfx, pfxcap;
	size_t compact_at;
};

struct loc_recorder *loc_recorder_new(size_t fp_len)
{
	struct loc_recorder *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	r->fl = fp_len;
	return r;
}

static void free_resolution(struct loc_recorder *r)
{
	if (r->table)
		munmap(r->table, r->table_bytes);
	r->table = NULL;
	r->cap = r->nkeys = r->grow_at = r->ring_n = 0;
	r->zero_key = false;
	for (size_t i = 0; i < r->ncopied; i++)
		free(r->copied[i].e);
	free(r->copied);
	r->copied = NULL;
	r->ncopied = r->copiedcap = 0;
	bitfilter_free(&r->keys);
}

void loc_recorder_free(struct loc_recorder *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nparts; i++)
		loc_local_free(r->parts[i]);
	free(r->parts);
	free_resolution(r);
	for (size_t i = 0; i < r->nchunks; i++)
		munmap(r->chunks[i].base, r->chunks[i].bytes);
	free(r->chunks);
	free(r->wins);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

void loc_recorder_advance(struct loc_recorder *r, uint64_t end)
{
	unsigned level = loc_level_for(end);
	if (level > __atomic_load_n(&r->level, __ATOMIC_RELAXED))
		__atomic_store_n(&r->level, level, __ATOMIC_RELAXED);
}

/* ---- a hashing thread's records ---- */

struct loc_local *loc_local_new(struct loc_recorder *r)
{
	struct loc_local *l = calloc(1, sizeof *l);
	if (l) {
		l->r = r;
		l->compact_at = (size_t)LOC_WINDOW;
	}
	return l;
}

void loc_local_free(struct loc_local *l)
{
	if (!l)
		return;
	free(l->segs);
	free(l->pfx);
	free(l);
}

/* Drops the segments of windows no longer selected at level (the stream outgrew them). */
static void compact(struct loc_local *l, unsigned level)
{
	size_t ns = 0, np = 0;
	for (size_t i = 0; i < l->nseg; i++) {
		struct seg s = l->segs[i];
		if (!loc_window_selected(s.pos >> LOC_WINDOW_SHIFT, level))
			continue;
		memmove(l->pfx + np, l->pfx + s.off, s.n * sizeof *l->pfx);
		s.off = np;
		np += s.n;
		l->segs[ns++] = s;
	}
	l->nseg = ns;
	l->npfx = np;
}

int loc_local_record(struct loc_local *l, const uint8_t *fps, size_t n, uint64_t pos)
{
	unsigned level = __atomic_load_n(&l->r->level, __ATOMIC_RELAXED);
	size_t fl = l->r->fl;
	if (l->npfx >= l->compact_at) {
		compact(l, level);
		l->compact_at = l->npfx * 2 > LOC_WINDOW ? l->npfx * 2 : LOC_WINDOW;
	}
	for (size_t i = 0; i < n;) {
		uint64_t w = (pos + i) >> LOC_WINDOW_SHIFT;
		size_t end = (size_t)(((w + 1) << LOC_WINDOW_SHIFT) - pos);
		if (end > n)
			end = n;
		if (loc_window_selected(w, level)) {
			size_t k = end - i;
			if (array_reserve((void **)&l->segs, &l->segcap, l->nseg + 1, sizeof *l->segs, 64) ||
			    array_reserve((void **)&l->pfx, &l->pfxcap, l->npfx + k, sizeof *l->pfx, 64))
				return -1;
			l->segs[l->nseg++] = (struct seg){pos + i, l->npfx, (uint32_t)k};
			for (size_t j = 0; j < k; j++)
				l->pfx[l->npfx++] = prefix_of(fps + (i + j) * fl);
		}
		i = end;
	}
	return 0;
}

int loc_local_flush(struct loc_local *l)
{
	struct loc_recorder *r = l->r;
	int rc = 0;
	compact(l, __atomic_load_n(&r->level, __ATOMIC_RELAXED));
	pthread_mutex_lock(&r->lock);
	if (array_reserve((void **)&r->parts, &r->partcap, r->nparts + 1, sizeof *r->parts, 64)) {
		rc = -1;
	} else {
		r->parts[r->nparts++] = l;
		r->npfx += l->npfx;
		l = NULL;
	}
	pthread_mutex_unlock(&r->lock);
	loc_local_free(l);
	return rc;
}

/* ---- resolution ---- */

/* The prefix's home slot: multiply-shift (any capacity; prefixes are uniform already). */
static inline size_t home(const struct loc_recorder *r, uint64_t p)
{
	return (size_t)(((unsigned __int128)p * r->cap) >> 64);
}

/* The slot holding p, or the empty one where it goes; NULL for prefix 0 (kept apart). */
static struct pslot *slot_of(struct loc_recorder *r, uint64_t p)
{
	if (!p)
		return NULL;
	for (size_t i = home(r, p);; i = i + 1 == r->cap ? 0 : i + 1)
		if (r->table[i].key == p || r->table[i].key == 0)
			return &r->table[i];
}

static uint64_t *first_of(struct loc_recorder *r, uint64_t p)
{
	if (!p)
		return r->zero_key ? &r->zero_key_first : NULL;
	struct pslot *s = slot_of(r, p);
	return s->key ? &s->first : NULL;
}

/* bytes of zeroed memory straight from mmap, faulted in by one madvise: a table of tens of MiB
 * costs thousands of page faults otherwise, more than the inserts themselves. In 4 KiB pages, not
 * 2 MiB ones: on the 2-core VM a fresh 2 MiB page costs seven times what its 512 small ones do
 * (32 MiB by a new process: 60-73 ms against 10 ms), which was most of an 8 GiB scan's end; the
 * table's random probes are cache misses with 2 MiB pages too. NULL: out of memory. */
static void populate(void *m, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	(void)madvise(m, bytes, MADV_POPULATE_WRITE); /* before Linux 5.14: faulted in as written */
#endif
}

static void *map_zeroed(size_t bytes, bool now)
{
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (now)
		populate(m, bytes);
	return m;
}

/* A table of cap empty slots. */
static struct pslot *new_table(size_t cap, size_t *bytes)
{
	*bytes = cap * sizeof(struct pslot);
	return map_zeroed(*bytes, true);
}

/* Room for twice the keys: the bound the table was sized by was passed (a caller's wrong bound);
 * rare, so a plain rehash. */
static int grow_table(struct loc_recorder *r)
{
	struct pslot *old = r->table;
	size_t old_cap = r->cap, old_bytes = r->table_bytes, bytes;
	struct pslot *t = new_table(old_cap * 2, &bytes);
	if (!t)
		return -1;
	r->table = t;
	r->table_bytes = bytes;
	r->cap = old_cap * 2;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			*slot_of(r, old[i].key) = old[i];
	munmap(old, old_bytes);
	return 0;
}

/* Threads for that many jobs: one each, no more than the cores. */
static size_t threads_for(size_t jobs)
{
	size_t cores = fanout_cores();
	return jobs < cores ? jobs : cores;
}

/* A table for `keys` prefixes, and the keys a table of cap slots takes before it grows: at most
 * 2/3 full, and never full (a probe for an absent prefix ends at an empty slot), whatever the
 * bound it was sized by, 0 included. */
static size_t cap_for(size_t keys)
{
	return keys + keys / 2 + 2;
}

static size_t room_for(size_t cap)
{
	return cap * 2 / 3 < cap - 1 ? cap * 2 / 3 : cap - 1;
}

/* One key into the table, alone: its first position lowered to pos; the table grows when it would
 * pass 2/3 full. 0 or -1 (out of memory). */
static int insert_key(struct loc_recorder *r, uint64_t key, uint64_t pos)
{
	struct pslot *s = slot_of(r, key);
	if (!s) {
		if (!r->zero_key || pos < r->zero_key_first)
			r->zero_key_first = pos;
		r->zero_key = true;
	} else if (!s->key) {
		if (r->nkeys >= r->grow_at) {
			if (grow_table(r))
				return -1;
			r->grow_at = room_for(r->cap);
			s = slot_of(r, key);
		}
		*s = (struct pslot){key, pos};
		r->nkeys++;
	} else if (pos < s->first) {
		s->first = pos;
	}
	return 0;
}

/* The records of several threads into the table at once: a slot is taken by a compare-and-swap
 * of its key, and its first position lowered by another, kept meanwhile as position + 1 (the
 * table's zeros then read as "none", UINT64_MAX). A table that would pass 2/3 full cannot grow
 * under the threads: they stop, and the build starts over alone. */
struct insert_job {
	struct loc_recorder *r;
	size_t next;      /* the next part (or copied array), then the next slice of the table (atomic) */
	size_t nkeys;     /* atomic */
	int overflow;     /* atomic */
	uint64_t zero;    /* prefix 0's first position + 1, 0: none (atomic) */
};

static void lower_plus_one(uint64_t *v, uint64_t pos)
{
	uint64_t cur = __atomic_load_n(v, __ATOMIC_RELAXED);
	while (cur - 1 > pos && !__atomic_compare_exchange_n(v, &cur, pos + 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* New keys are added to the job's count in batches: one shared counter bumped by every thread for
 * every key was most of the build's time (its cache line moving between the cores). The table may
 * then pass grow_at by up to threads x KEYS_BATCH keys before a thread sees it, and a small table
 * may even fill: a probe that went round the whole table stops the build (probes == cap), and
 * each thread's last keys are counted when it ends, so a table past grow_at is never kept. */
#define KEYS_BATCH 1024

/* One key into the shared table; *mine counts the thread's new keys not yet added to the job's.
 * 0, or 1: the table would pass 2/3 full (the job stops). */
static int insert_key_shared(struct insert_job *j, uint64_t key, uint64_t pos, size_t *mine)
{
	struct loc_recorder *r = j->r;
	if (!key) {
		lower_plus_one(&j->zero, pos);
		return 0;
	}
	size_t at = home(r, key), probes = 0;
	for (;;) {
		uint64_t k = __atomic_load_n(&r->table[at].key, __ATOMIC_ACQUIRE);
		if (!k && __atomic_compare_exchange_n(&r->table[at].key, &k, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			if (++*mine == KEYS_BATCH) {
				if (__atomic_add_fetch(&j->nkeys, *mine, __ATOMIC_RELAXED) > r->grow_at)
					return 1;
				*mine = 0;
			}
			break;
		}
		if (k == key)
			break;
		if (++probes == r->cap) /* full: only past grow_at, which another thread saw */
			return 1;
		at = at + 1 == r->cap ? 0 : at + 1;
	}
	lower_plus_one(&r->table[at].first, pos);
	return 0;
}

/* Ends a thread's part of the build: its last new keys counted; 0 or 1 as above. */
static int keys_done(struct insert_job *j, size_t mine)
{
	return __atomic_add_fetch(&j->nkeys, mine, __ATOMIC_RELAXED) > j->r->grow_at;
}

/* The table's key sources: the threads' records (by the records) or the resolvers' copies. */
static size_t sources(const struct loc_recorder *r)
{
	return r->by_copies ? r->ncopied : r->nparts;
}

static inline int insert_one(struct loc_recorder *r, struct insert_job *j, uint64_t key, uint64_t pos, size_t *mine)
{
	return j ? insert_key_shared(j, key, pos, mine) : insert_key(r, key, pos);
}

/* Source k's keys into the table: alone (j NULL: the table grows as it fills), or beside other
 * threads (j: a table that would pass 2/3 full sets the job's overflow and stops them). 0, or -1
 * (out of memory, alone). */
static int insert_source(struct loc_recorder *r, struct insert_job *j, size_t k)
{
	size_t mine = 0;
	int rc = 0;
	if (r->by_copies) {
		const struct copied *c = &r->copied[k];
		for (size_t i = 0; i < c->n && !rc; i++) {
			if (i + RESOLVE_AHEAD < c->n)
				__builtin_prefetch(&r->table[home(r, c->e[i + RESOLVE_AHEAD].key)], 1);
			rc = insert_one(r, j, c->e[i].key, c->e[i].first, &mine);
		}
	} else {
		const struct loc_local *l = r->parts[k];
		for (size_t g = 0; g < l->nseg && !rc && !(j && __atomic_load_n(&j->overflow, __ATOMIC_RELAXED)); g++) {
			const struct seg *sg = &l->segs[g];
			for (size_t i = sg->off; i < sg->off + sg->n && !rc; i++) {
				if (i + RESOLVE_AHEAD < l->npfx)
					__builtin_prefetch(&r->table[home(r, l->pfx[i + RESOLVE_AHEAD])], 1);
				rc = insert_one(r, j, l->pfx[i], sg->pos + (i - sg->off), &mine);
			}
		}
	}
	if (j && (rc || keys_done(j, mine)))
		__atomic_store_n(&j->overflow, 1, __ATOMIC_RELAXED);
	return j ? 0 : rc;
}

static void *insert_parts(void *arg)
{
	struct insert_job *j = arg;
	size_t k;
	while ((k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < sources(j->r))
		insert_source(j->r, j, k);
	return NULL;
}

/* After the shared build: first positions back from position + 1, by slices of the table. */
#define FIX_SLICE ((size_t)1 << 16)
static void *fix_firsts(void *arg)
{
	struct insert_job *j = arg;
	struct pslot *t = j->r->table;
	size_t k;
	while ((k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) * FIX_SLICE < j->r->cap) {
		size_t end = (k + 1) * FIX_SLICE < j->r->cap ? (k + 1) * FIX_SLICE : j->r->cap;
		for (size_t i = k * FIX_SLICE; i < end; i++)
			t[i].first -= 1; /* empty slots too: their first is never read */
	}
	return NULL;
}

/* 0, or 1: the table would pass 2/3 full (nothing kept). */
static int insert_shared(struct loc_recorder *r)
{
	struct insert_job j = {.r = r};
	fanout_run(threads_for(sources(r)), insert_parts, &j);
	if (j.overflow)
		return 1;
	j.next = 0;
	size_t slices = (r->cap + FIX_SLICE - 1) / FIX_SLICE;
	fanout_run(threads_for(slices), fix_firsts, &j);
	r->nkeys = j.nkeys;
	r->zero_key = j.zero != 0;
	r->zero_key_first = j.zero - 1;
	return 0;
}

/* The table for about `keys` keys, built from every source: by as many threads as sources (up to
 * the cores) - built by one, the records' table was the longest part of the end of a scan by 16
 * threads - or, when it would pass 2/3 full (more keys than said), emptied (its pages kept) and
 * built again by one, growing. 0 or -1 (out of memory). */
static int build_table(struct loc_recorder *r, size_t keys)
{
	r->cap = cap_for(keys);
	r->grow_at = room_for(r->cap);
	if (!(r->table = new_table(r->cap, &r->table_bytes)))
		return -1;
	if (sources(r) > 1 && fanout_cores() > 1) {
		if (!insert_shared(r))
			return 0;
		memset(r->table, 0, r->table_bytes);
	}
	for (size_t k = 0; k < sources(r); k++)
		if (insert_source(r, NULL, k))
			return -1;
	return 0;
}

int loc_resolve_begin(struct loc_recorder *r, uint64_t keys_bound)
{
	free_resolution(r);
	r->by_copies = false;
	if (!r->npfx)
		return 0;
	/* Sized for the distinct prefixes the records can hold, at most 2/3 full: there are no more
	 * than the records, nor than the contents counted (keys_bound), which on data with copies is
	 * a fraction of them. Fresh pages are what this table costs: on a VM, one sized by the
	 * records of an 8 GiB scan (48 MiB) took 0.12 s to fault in, most of that scan's end. Each
	 * prefix starts from its first recorded position: the index's first position of its content
	 * is no later (every record was counted). */
	return build_table(r, keys_bound < r->npfx ? (size_t)keys_bound : r->npfx);
}

int loc_resolve_begin_copies(struct loc_recorder *r)
{
	free_resolution(r);
	r->by_copies = true;
	return 0;
}

bool loc_records_complete(const struct loc_recorder *r)
{
	return __atomic_load_n(&r->level, __ATOMIC_RELAXED) == 0;
}

/* Two contents sharing a 64-bit prefix: the earlier first wins, whatever the walk order. */
static void resolve_one(struct loc_recorder *r, const struct pslot *e)
{
	uint64_t *f = first_of(r, e->key);
	if (f && e->first < *f)
		*f = e->first;
}

/* the entry's probe is RESOLVE_AHEAD visits away: its cache line is fetched meanwhile */
static void pipeline_push(struct loc_recorder *r, struct pslot *ring, size_t *ring_n, const uint8_t *fp, uint64_t first)
{
	if (!r->nkeys && !r->zero_key)
		return;
	struct pslot e = {prefix_of(fp), first};
	__builtin_prefetch(&r->table[home(r, e.key)], 1);
	struct pslot *slot = &ring[*ring_n % RESOLVE_AHEAD];
	if (*ring_n >= RESOLVE_AHEAD)
		resolve_one(r, slot);
	*slot = e;
	(*ring_n)++;
}

static void pipeline_drain(struct loc_recorder *r, struct pslot *ring, size_t *ring_n)
{
	for (size_t i = *ring_n > RESOLVE_AHEAD ? *ring_n - RESOLVE_AHEAD : 0; i < *ring_n; i++)
		resolve_one(r, &ring[i % RESOLVE_AHEAD]);
	*ring_n = 0;
}

void loc_resolve_visit(struct loc_recorder *r, const uint8_t *fp, uint64_t first)
{
	pipeline_push(r, r->ring, &r->ring_n, fp, first);
}

/* A thread's own pipeline into the shared table. Threads offer disjoint fingerprint ranges and a
 * prefix is the fingerprint's first 8 bytes, so each slot is written by one thread only. By copies:
 * the thread's copied contents, handed to the recorder when it finishes. */
struct loc_resolver {
	struct loc_recorder *r;
	struct pslot ring[RESOLVE_AHEAD];
	size_t ring_n;
	struct pslot *copied;
	size_t ncopied, cap;
	bool failed; /* out of memory gathering */
};

struct loc_resolver *loc_resolver_new(struct loc_recorder *r)
{
	struct loc_resolver *v = calloc(1, sizeof *v);
	if (v)
		v->r = r;
	return v;
}

void loc_resolver_visit(struct loc_resolver *v, const uint8_t *fp, uint64_t count, uint64_t first)
{
	if (!v->r->by_copies) {
		pipeline_push(v->r, v->ring, &v->ring_n, fp, first);
		return;
	}
	if (count < 2 || v->failed)
		return;
	if (array_reserve((void **)&v->copied, &v->cap, v->ncopied + 1, sizeof *v->copied, 1024)) {
		v->failed = true;
		return;
	}
	v->copied[v->ncopied++] = (struct pslot){prefix_of(fp), first};
}

int loc_resolver_finish(struct loc_resolver *v)
{
	if (!v)
		return 0;
	struct loc_recorder *r = v->r;
	int rc = v->failed ? -1 : 0;
	if (!r->by_copies) {
		pipeline_drain(r, v->ring, &v->ring_n);
	} else if (!rc && v->ncopied) {
		pthread_mutex_lock(&r->lock);
		if (array_reserve((void **)&r->copied, &r->copiedcap, r->ncopied + 1, sizeof *r->copied, 16)) {
			rc = -1;
		} else {
			r->copied[r->ncopied++] = (struct copied){v->copied, v->ncopied};
			v->copied = NULL;
		}
		pthread_mutex_unlock(&r->lock);
	}
	free(v->copied);
	free(v);
	return rc;
}

/* Makes a mapping of `bytes` the chunk the next windows are carved from; 0 or -1 (out of memory:
 * the mapping is not taken). */
static int add_chunk(struct loc_recorder *r, void *base, size_t bytes)
{
	if (array_reserve((void **)&r->chunks, &r->chunkcap, r->nchunks + 1, sizeof *r->chunks, 64))
		return -1;
	r->chunks[r->nchunks++] = (struct win_chunk){base, 0, bytes / (LOC_WINDOW * sizeof(uint64_t)), bytes};
	return 0;
}

/* A window's array of LOC_WINDOW firsts, all UINT64_MAX when `fill` (else the caller fills it); it
 * lives until the recorder is freed. */
static uint64_t *window_array(struct loc_recorder *r, bool fill)
{
	if (!r->nchunks || r->chunks[r->nchunks - 1].used == r->chunks[r->nchunks - 1].cap) {
		const size_t bytes = WIN_CHUNK * LOC_WINDOW * sizeof(uint64_t);
		void *m = map_zeroed(bytes, fill); /* unfilled: the threads that fill fault it in */
		if (!m)
			return NULL;
		if (add_chunk(r, m, bytes)) {
			munmap(m, bytes);
			return NULL;
		}
	}
	struct win_chunk *c = &r->chunks[r->nchunks - 1];
	uint64_t *f = c->base + c->used++ * LOC_WINDOW;
	if (fill)
		memset(f, 0xff, LOC_WINDOW * sizeof *f); /* UINT64_MAX: no record */
	return f;
}

/* The first of wins[lo, hi) numbered `number` or more (hi: none). */
static size_t window_at(const struct loc_recorder *r, size_t lo, size_t hi, uint64_t number)
{
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->wins[mid].number < number)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The window of that number, made if missing: filled with UINT64_MAX, or (fill false) marked
 * `unfilled` for the caller to fill. */
static struct win *window(struct loc_recorder *r, uint64_t number, bool fill)
{
	size_t lo = window_at(r, 0, r->nwin, number);
	if (lo < r->nwin && r->wins[lo].number == number)
		return &r->wins[lo];
	if (array_reserve((void **)&r->wins, &r->wincap, r->nwin + 1, sizeof *r->wins, 64))
		return NULL;
	uint64_t *f = window_array(r, fill);
	if (!f)
		return NULL;
	memmove(r->wins + lo + 1, r->wins + lo, (r->nwin - lo) * sizeof *r->wins);
	r->wins[lo] = (struct win){number, f, !fill};
	r->nwin++;
	return &r->wins[lo];
}

/* By copies almost every record's prefix is absent from the table (a content seen once): a bit per
 * key, in a bitmap that stays in cache while the keys are few (at most 1 MiB), turns most of them
 * away before a probe (which
 * reads several slots of a table at most 2/3 full: 14 ns a record, the longest part of the end
 * of a scan of a tar of /usr after the walk). Past FILTER_MAX_BITS (many copies) there is none. */
#define FILTER_BITS_PER_KEY 16
#define FILTER_MAX_BITS ((size_t)1 << 23)

static int build_key_filter(struct loc_recorder *r)
{
	if (bitfilter_init(&r->keys, r->nkeys + 1, FILTER_BITS_PER_KEY, FILTER_MAX_BITS))
		return -1;
	for (size_t i = 0; i < r->cap; i++)
		if (r->table[i].key)
			bitfilter_add(&r->keys, r->table[i].key);
	if (r->zero_key) /* prefix 0, kept apart from the table */
		bitfilter_add(&r->keys, 0);
	return 0;
}

/* A thread's records: every prefix becomes its first position, in place (lookups pipelined). By
 * copies, a prefix the table lacks is a content seen once (its own first position), as is one
 * whose copied content starts later (another content sharing the prefix). By the records, the
 * table holds every record's prefix at a position no later than its own, so the same rule
 * gives the table's. */
static void resolve_part(struct loc_recorder *r, struct loc_local *l)
{
	uint64_t *pfx = l->pfx;
	bool ahead = !r->keys.bits; /* with a filter the table is small: no prefetch */
	for (size_t g = 0; g < l->nseg; g++) {
		const struct seg *sg = &l->segs[g];
		for (size_t i = sg->off; i < sg->off + sg->n; i++) {
			if (ahead && i + RESOLVE_AHEAD < l->npfx && pfx[i + RESOLVE_AHEAD])
				__builtin_prefetch(&r->table[home(r, pfx[i + RESOLVE_AHEAD])]);
			uint64_t pos = sg->pos + (i - sg->off);
			const uint64_t *f = bitfilter_maybe(&r->keys, pfx[i]) ? first_of(r, pfx[i]) : NULL;
			pfx[i] = f && *f <= pos ? *f : pos;
		}
	}
}

/* The threads' records resolved by as many threads as there are records' owners and cores: the
 * table is only read, each record array written by one. Alone this was 30-35 ms of the end of
 * an 8 GiB scan, with the other cores idle. */
struct resolve_job {
	struct loc_recorder *r;
	size_t next; /* the next part (atomic) */
};

static void *resolve_parts(void *arg)
{
	struct resolve_job *j = arg;
	size_t k;
	while ((k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->r->nparts)
		resolve_part(j->r, j->r->parts[k]);
	return NULL;
}

static void resolve_all(struct loc_recorder *r)
{
	struct resolve_job j = {r, 0};
	fanout_run(threads_for(r->nparts), resolve_parts, &j);
}

/* The resolved records into their windows, by threads that each own a run of windows: they fault
 * in and fill the new ones, then copy every segment that falls in theirs. One thread did this
 * for 11 ms of an 8 GiB scan's end on the 2-core VM (5 of them faulting in the windows' 16 MiB),
 * with the other cores idle. */
struct place_job {
	struct loc_recorder *r;
	size_t pieces;
	size_t next; /* the next piece (atomic) */
};

/* A window made unfilled, faulted in and emptied (UINT64_MAX: no record). */
static void fill_window(struct win *w)
{
	if (w->unfilled) {
		populate(w->firsts, LOC_WINDOW * sizeof(uint64_t));
		memset(w->firsts, 0xff, LOC_WINDOW * sizeof(uint64_t));
	}
	w->unfilled = false;
}

static void place_piece(struct loc_recorder *r, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		fill_window(&r->wins[i]);
	uint64_t lo = r->wins[from].number, hi = r->wins[to - 1].number;
	for (size_t k = 0; k < r->nparts; k++) {
		const struct loc_local *l = r->parts[k];
		size_t at = from;
		for (size_t i = 0; i < l->nseg; i++) {
			const struct seg *s = &l->segs[i];
			uint64_t number = s->pos >> LOC_WINDOW_SHIFT;
			if (number < lo || number > hi)
				continue;
			if (r->wins[at].number != number)
				at = window_at(r, from, to, number); /* it exists: made from these segments */
			memcpy(&r->wins[at].firsts[s->pos & (LOC_WINDOW - 1)], &l->pfx[s->off], s->n * sizeof *l->pfx);
		}
	}
}

static void *place_pieces(void *arg)
{
	struct place_job *j = arg;
	size_t k, n = j->r->nwin;
	while ((k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->pieces)
		place_piece(j->r, n * k / j->pieces, n * (k + 1) / j->pieces);
	return NULL;
}

/* As many threads as recorded (the hashers: -t), no more than the windows or the cores. */
static void place_all(struct loc_recorder *r)
{
	if (!r->nwin || !r->nparts) /* no records: every window was made filled (-k's) */
		return;
	size_t n = threads_for(r->nwin);
	struct place_job j = {r, r->nparts < n ? r->nparts : n, 0};
	fanout_run(j.pieces, place_pieces, &j);
}

int loc_resolve_end(struct loc_recorder *r)
{
	int rc = 0;
	pipeline_drain(r, r->ring, &r->ring_n);
	/* by copies: sized by the copies gathered, so it never grows; small where most contents are
	 * seen once (a tar of /usr: 2 % of them), so the records' lookups hit the cache */
	size_t copies = 0;
	for (size_t i = 0; i < r->ncopied; i++)
		copies += r->copied[i].n;
	if (r->by_copies && r->npfx && (build_table(r, copies) || build_key_filter(r)))
		return -1;
	if (r->table)
		resolve_all(r);
	/* then goes to its window; the table, done with, holds the first windows */
	if (r->table && r->table_bytes >= LOC_WINDOW * sizeof(uint64_t) && !add_chunk(r, r->table, r->table_bytes))
		r->table = NULL;
	free_resolution(r);
	struct win *w = NULL;
	for (size_t k = 0; k < r->nparts && !rc; k++) {
		struct loc_local *l = r->parts[k];
		for (size_t i = 0; i < l->nseg; i++) {
			uint64_t number = l->segs[i].pos >> LOC_WINDOW_SHIFT;
			if ((!w || w->number != number) && !(w = window(r, number, false))) {
				rc = -1;
				break;
			}
		}
	}
	if (!rc) {
		place_all(r);
	} else { /* out of memory making them: those made are left empty, as window() makes them */
		for (size_t i = 0; i < r->nwin; i++)
			fill_window(&r->wins[i]);
	}
	for (size_t i = 0; i < r->nparts; i++)
		loc_local_free(r->parts[i]);
	r->nparts = r->npfx = 0;
	return rc;
}

int loc_load_window(struct loc_recorder *r, uint64_t number, const uint64_t *firsts)
{
	struct win *w = window(r, number, true);
	if (!w)
		return -1;
	for (size_t i = 0; i < LOC_WINDOW; i++)
		if (firsts[i] != UINT64_MAX)
			w->firsts[i] = firsts[i];
	return 0;
}

/* ---- the runs ---- */

enum run_type { RUN_KIND, RUN_COPY, RUN_ZERO, RUN_TYPES };

/* The runs state machine over positions in order. A piece of a stream cut for threads starts as
 * if it had just taken the previous piece's last record (continue_from): the runs open there
 * continue, and their lengths here (that record counted once more) are kept as `lead` for the
 * stitch instead of being counted, as are the runs still open at the piece's end. */
struct runs {
	struct dist_locality *out;
	uint64_t zero;               /* the zero block's first position */
	bool have_prev, prev_dup, prev_zero, kind_dup;
	uint64_t prev_pos, prev_first;
	uint64_t len[RUN_TYPES];     /* of the open run of each type (kind: new or duplicate blocks) */
	bool continued[RUN_TYPES];   /* the piece started inside a run of that type */
	bool lead_open[RUN_TYPES];   /* ... which has not ended yet */
	uint64_t lead_len[RUN_TYPES]; /* its length here when it ended */
	uint64_t shift_runs[DIST_ALIGN_MOD];   /* copied runs started here, by (pos - first) mod 32 */
	uint64_t shift_blocks[DIST_ALIGN_MOD]; /* their blocks here */
};

static void hist_add(struct dist_len_hist *h, uint64_t len)
{
	if (!len)
		return;
	int k = 63 - __builtin_clzll(len);
	if (k >= DIST_LEN_BINS)
		k = DIST_LEN_BINS - 1; /* cannot happen below 2^48 blocks */
	h->count[k]++;
	h->blocks[k] += len;
}

static void count_run(struct dist_locality *out, enum run_type type, bool dup, uint64_t len)
{
	struct dist_len_hist *h[RUN_TYPES] = {dup ? &out->dup_runs : &out->new_runs, &out->copy_runs, &out->zero_runs};
	hist_add(h[type], len);
}

/* The open run of a type ends (a zero length: there was none). */
static void end_run(struct runs *t, enum run_type type)
{
	if (t->lead_open[type]) {
		t->lead_open[type] = false;
		t->lead_len[type] = t->len[type];
	} else {
		count_run(t->out, type, t->kind_dup, t->len[type]);
	}
	t->len[type] = 0;
}

static void close_all(struct runs *t)
{
	for (int k = 0; k < RUN_TYPES; k++)
		end_run(t, (enum run_type)k);
	t->have_prev = false;
}

static void push(struct runs *t, uint64_t pos, uint64_t first)
{
	bool brk = !t->have_prev || pos != t->prev_pos + 1;
	if (brk)
		close_all(t);
	bool dup = first < pos, zero = dup && first == t->zero;
	bool next = !brk && t->prev_dup && first == t->prev_first + 1; /* sequential */
	t->out->analysed++;
	t->out->duplicates += dup;
	t->out->sequential += dup && next;
	if (!t->len[RUN_KIND] || dup != t->kind_dup) {
		end_run(t, RUN_KIND);
		t->kind_dup = dup;
	}
	t->len[RUN_KIND]++;
	if (dup && !zero) {
		if (!t->len[RUN_COPY] || t->prev_zero || !next)
			end_run(t, RUN_COPY);
		unsigned shift = (unsigned)((pos - first) % DIST_ALIGN_MOD); /* the same along a run */
		t->shift_runs[shift] += !t->len[RUN_COPY];
		t->shift_blocks[shift]++;
		t->len[RUN_COPY]++;
	} else {
		end_run(t, RUN_COPY);
	}
	if (zero)
		t->len[RUN_ZERO]++;
	else
		end_run(t, RUN_ZERO);
	t->have_prev = true;
	t->prev_pos = pos;
	t->prev_first = first;
	t->prev_dup = dup;
	t->prev_zero = zero;
}

/* The state push() leaves after the record (pos, first), its open runs one block long and marked
 * as continued; the record itself is the previous piece's, not counted here. */
static void continue_from(struct runs *t, uint64_t pos, uint64_t first)
{
	bool dup = first < pos, zero = dup && first == t->zero;
	t->have_prev = true;
	t->prev_pos = pos;
	t->prev_first = first;
	t->prev_dup = t->kind_dup = dup;
	t->prev_zero = zero;
	t->len[RUN_KIND] = 1;
	t->len[RUN_COPY] = dup && !zero;
	t->len[RUN_ZERO] = zero;
	for (int k = 0; k < RUN_TYPES; k++)
		t->continued[k] = t->lead_open[k] = t->len[k] != 0;
}

void loc_runs(const uint64_t *firsts, size_t n, uint64_t start, uint64_t piece_len, uint64_t zero_first,
	      struct dist_locality *out)
{
	struct runs t = {.out = out, .zero = zero_first};
	for (size_t i = 0; i < n; i++) {
		uint64_t pos = start + i;
		if (piece_len && pos % piece_len == 0)
			close_all(&t);
		if (firsts[i] != UINT64_MAX)
			push(&t, pos, firsts[i]);
	}
	close_all(&t);
	out->present = true;
	if (piece_len > out->window)
		out->window = piece_len;
}

/* The windows cut into pieces, one thread each. With a level the runs end at window edges, so
 * the pieces are independent; without one (the whole stream) each piece continues from the
 * previous piece's last record, and a serial stitch joins the runs that cross the cuts. One
 * thread took 6 ms of an 8 GiB scan's end on the 2-core VM (on a 16-core VM this and the
 * placing were most of the 32 ms the end spent on the locality, the other cores idle). */
struct piece {
	size_t from, to; /* windows */
	struct dist_locality out;
	struct runs t;
};

struct compute_job {
	const struct loc_recorder *r;
	unsigned level;
	uint64_t zero_first;
	struct piece *pieces;
	size_t npieces;
	size_t next; /* the next piece (atomic) */
};

static void piece_runs(const struct compute_job *j, struct piece *p)
{
	const struct loc_recorder *r = j->r;
	struct runs *t = &p->t;
	*t = (struct runs){.out = &p->out, .zero = j->zero_first};
	if (!j->level && p->from > 0) { /* a window missing between: push() sees the gap */
		const struct win *prev = &r->wins[p->from - 1];
		uint64_t last = prev->firsts[LOC_WINDOW - 1];
		if (last != UINT64_MAX)
			continue_from(t, prev->number << LOC_WINDOW_SHIFT | (LOC_WINDOW - 1), last);
	}
	for (size_t i = p->from; i < p->to; i++) {
		const struct win *w = &r->wins[i];
		if (j->level)
			close_all(t); /* runs end at window edges */
		for (size_t k = 0; k < LOC_WINDOW; k++)
			if (w->firsts[k] != UINT64_MAX)
				push(t, w->number << LOC_WINDOW_SHIFT | k, w->firsts[k]);
	}
	if (j->level)
		close_all(t);
	p->out.present = true;
}

static void *compute_pieces(void *arg)
{
	struct compute_job *j = arg;
	size_t k;
	while ((k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->npieces)
		piece_runs(j, &j->pieces[k]);
	return NULL;
}

/* The pieces' counts, and (whole stream) the runs open at each cut counted once they end: a
 * continued run's length is the previous pieces' part plus its own less the shared record. */
static void stitch(const struct compute_job *j, struct dist_locality *out)
{
	uint64_t carry[RUN_TYPES] = {0};
	bool carry_dup = false;
	for (size_t p = 0; p < j->npieces; p++) {
		const struct runs *t = &j->pieces[p].t;
		loc_add(out, &j->pieces[p].out);
		if (j->level)
			continue;
		for (int k = 0; k < RUN_TYPES; k++) {
			if (!t->continued[k]) {
				count_run(out, (enum run_type)k, carry_dup, carry[k]);
				carry[k] = t->len[k];
			} else if (t->lead_open[k]) { /* it spans the piece */
				carry[k] += t->len[k] - 1;
			} else {
				count_run(out, (enum run_type)k, carry_dup, carry[k] + t->lead_len[k] - 1);
				carry[k] = t->len[k];
			}
		}
		carry_dup = t->kind_dup;
	}
	for (int k = 0; k < RUN_TYPES; k++)
		count_run(out, (enum run_type)k, carry_dup, carry[k]);
}

int loc_compute(struct loc_recorder *r, uint64_t stream_blocks, uint64_t zero_first, size_t pieces,
		struct dist_locality *out)
{
	unsigned level = loc_level_for(stream_blocks);
	size_t kept = 0;
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < r->nwin; i++) {
		if (loc_window_selected(r->wins[i].number, level))
			r->wins[kept++] = r->wins[i]; /* the others' arrays go with the recorder */
	}
	r->nwin = kept;
	if (pieces > r->nwin)
		pieces = r->nwin;
	if (pieces < 1)
		pieces = 1;
	struct compute_job j = {r, level, zero_first, calloc(pieces, sizeof *j.pieces), pieces, 0};
	if (!j.pieces)
		return -1;
	for (size_t k = 0; k < pieces; k++) {
		j.pieces[k].from = r->nwin * k / pieces;
		j.pieces[k].to = r->nwin * (k + 1) / pieces;
	}
	fanout_run(pieces, compute_pieces, &j);
	stitch(&j, out);
	memset(r->shift_runs, 0, sizeof r->shift_runs);
	memset(r->shift_blocks, 0, sizeof r->shift_blocks);
	for (size_t k = 0; k < pieces; k++)
		for (int m = 0; m < DIST_ALIGN_MOD; m++) {
			r->shift_runs[m] += j.pieces[k].t.shift_runs[m];
			r->shift_blocks[m] += j.pieces[k].t.shift_blocks[m];
		}
	free(j.pieces);
	out->window = level ? LOC_WINDOW : 0;
	out->present = true;
	return 0;
}

void loc_copy_shifts(const struct loc_recorder *r, struct dist_align *out)
{
	memcpy(out->shift_runs, r->shift_runs, sizeof out->shift_runs);
	memcpy(out->shift_blocks, r->shift_blocks, sizeof out->shift_blocks);
}

int loc_each_window(const struct loc_recorder *r, loc_window_fn fn, void *arg)
{
	for (size_t i = 0; i < r->nwin; i++) {
		int rc = fn(r->wins[i].number, r->wins[i].firsts, arg);
		if (rc)
			return rc;
	}
	return 0;
}

void loc_add(struct dist_locality *out, const struct dist_locality *add)
{
	if (!add->present)
		return;
	struct dist_len_hist *o[4] = {&out->new_runs, &out->dup_runs, &out->copy_runs, &out->zero_runs};
	const struct dist_len_hist *a[4] = {&add->new_runs, &add->dup_runs, &add->copy_runs, &add->zero_runs};
	for (int k = 0; k < 4; k++) {
		for (int b = 0; b < DIST_LEN_BINS; b++) {
			o[k]->count[b] += a[k]->count[b];
			o[k]->blocks[b] += a[k]->blocks[b];
		}
	}
	out->analysed += add->analysed;
	out->duplicates += add->duplicates;
	out->sequential += add->sequential;
	if (add->window > out->window)
		out->window = add->window;
	out->present = true;
}
