/* mem.c - the in-memory fingerprint index: 256 shards (by the first fingerprint byte), each a
 * Robin Hood table of [full digest | 32-bit count | 48-bit first position] slots grown by 1.25x
 * at 85 %. Slots stay sorted by their 64-bit hash, so growing is one sequential merge; several
 * indexes are walked as one by gathering each shard's entries from all of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "gen/index/gindex.h"
#include "lib/reserve.h"

/* Sizing: a SHA-1 slot is 20 + 4 + 6 = 30 bytes; the load stays within [0.68, 0.85] once a shard
 * has grown a few times, so a large index costs 35-44 B per distinct fingerprint (about 39 on
 * average over the growth cycle). The full digest is kept: the result is exact to the hash. The
 * first position (for the locality analysis) takes 48 bits: 2^48 blocks is 1 EiB at 4 KiB. */
#define NSHARDS 256
#define MIN_CAP 64
#define MAX_LOAD_NUM 85
#define MAX_LOAD_DEN 100
#define COUNT_OVERFLOW UINT32_MAX /* the slot's true count lives in the overflow list */
#define FIRST_BYTES 6
#define SLOT_EXTRA (4 + FIRST_BYTES) /* count, first position */
#define SLOT_MAX (32 + SLOT_EXTRA)

struct shard {
	uint8_t *slots;
	uint64_t cap, n;
};

struct overflow {
	uint8_t fp[32];
	uint64_t count;
};

struct mem_index {
	struct gindex base;
	size_t es;               /* slot size: fp_len + SLOT_EXTRA */
	uint64_t limit, bytes;   /* bytes = sum of the shards' tables */
	uint64_t n;
	struct shard shards[NSHARDS];
	struct overflow *ovf;
	size_t novf, ovfcap;
};

static inline uint32_t slot_count(const uint8_t *s, size_t fl)
{
	uint32_t c;
	memcpy(&c, s + fl, 4);
	return c;
}

static inline void set_count(uint8_t *s, size_t fl, uint32_t c)
{
	memcpy(s + fl, &c, 4);
}

static inline uint64_t slot_first(const uint8_t *s, size_t fl)
{
	uint64_t v = 0;
	for (int i = FIRST_BYTES - 1; i >= 0; i--)
		v = v << 8 | s[fl + 4 + i];
	return v;
}

static inline void set_first(uint8_t *s, size_t fl, uint64_t v)
{
	for (int i = 0; i < FIRST_BYTES; i++, v >>= 8)
		s[fl + 4 + i] = (uint8_t)v;
}

/* The fingerprint is a cryptographic digest: its bytes 1..8 are as good as any hash of it. */
static inline uint64_t hash_of(const uint8_t *fp)
{
	uint64_t h;
	memcpy(&h, fp + 1, 8);
	return h;
}

/* Multiply-shift: monotone in the hash, so the order of homes is the order of hashes at any
 * capacity (what lets grow() merge instead of rehash). */
static inline uint64_t home_of(const uint8_t *fp, uint64_t cap)
{
	return (uint64_t)(((unsigned __int128)hash_of(fp) * cap) >> 64);
}

static inline uint64_t disp_of(const uint8_t *fp, uint64_t pos, uint64_t cap)
{
	uint64_t home = home_of(fp, cap);
	return pos >= home ? pos - home : pos + cap - home;
}

static struct overflow *ovf_find(struct mem_index *m, const uint8_t *fp)
{
	for (size_t i = 0; i < m->novf; i++)
		if (!memcmp(m->ovf[i].fp, fp, m->base.fp_len))
			return &m->ovf[i];
	return NULL;
}

static int ovf_add(struct mem_index *m, const uint8_t *fp, uint64_t count)
{
	if (m->novf == m->ovfcap) {
		size_t nc = m->ovfcap ? 2 * m->ovfcap : 8;
		struct overflow *o = realloc(m->ovf, nc * sizeof *o);
		if (!o) {
			err_fail(&m->base.err, -1, "memory index: out of memory");
			return -1;
		}
		m->ovf = o;
		m->ovfcap = nc;
	}
	memset(&m->ovf[m->novf], 0, sizeof m->ovf[0]);
	memcpy(m->ovf[m->novf].fp, fp, m->base.fp_len);
	m->ovf[m->novf++].count = count;
	return 0;
}

static inline uint64_t true_count(struct mem_index *m, const uint8_t *slot)
{
	uint32_t c = slot_count(slot, m->base.fp_len);
	if (c != COUNT_OVERFLOW)
		return c;
	struct overflow *o = ovf_find(m, slot);
	return o ? o->count : c;
}

/* Adds n to a slot's count, moving it to the overflow list past 32 bits. */
static int bump(struct mem_index *m, uint8_t *slot, uint64_t n)
{
	size_t fl = m->base.fp_len;
	uint32_t c = slot_count(slot, fl);
	if (c == COUNT_OVERFLOW) {
		struct overflow *o = ovf_find(m, slot);
		o->count += n;
		return 0;
	}
	uint64_t sum = (uint64_t)c + n;
	if (sum < COUNT_OVERFLOW) {
		set_count(slot, fl, (uint32_t)sum);
		return 0;
	}
	if (ovf_add(m, slot, sum))
		return -1;
	set_count(slot, fl, COUNT_OVERFLOW);
	return 0;
}

/* Places a slot known to be absent. Robin Hood, with ties on displacement (same home) broken by
 * the hash: every run of occupied slots stays sorted by (home, hash), i.e. by hash. */
static void place(struct mem_index *m, uint8_t *slots, uint64_t cap, const uint8_t *entry)
{
	size_t es = m->es, fl = m->base.fp_len;
	uint8_t carry[SLOT_MAX], tmp[SLOT_MAX];
	memcpy(carry, entry, es);
	uint64_t pos = home_of(carry, cap), d = 0;
	for (;;) {
		uint8_t *s = slots + pos * es;
		if (slot_count(s, fl) == 0) {
			memcpy(s, carry, es);
			return;
		}
		uint64_t sd = disp_of(s, pos, cap);
		if (sd < d || (sd == d && hash_of(s) > hash_of(carry))) {
			memcpy(tmp, s, es);
			memcpy(s, carry, es);
			memcpy(carry, tmp, es);
			d = sd;
		}
		if (++pos == cap)
			pos = 0;
		d++;
	}
}

/* A table of zeroed slots. malloc + memset, not calloc: writing the pages first spares a
 * zero-page read fault followed by a copy-on-write fault (and its TLB shootdown) per page. Fresh
 * pages of a large table are faulted in by one madvise rather than one fault each (a fault costs
 * several microseconds on a virtual machine). */
static uint8_t *zeroed_table(size_t bytes)
{
	uint8_t *t = malloc(bytes);
	if (!t)
		return NULL;
#ifdef MADV_POPULATE_WRITE
	const uintptr_t page = 4096;
	uintptr_t lo = ((uintptr_t)t + page - 1) & ~(page - 1), hi = ((uintptr_t)t + bytes) & ~(page - 1);
	if (hi >= lo + 4 * page)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* pages already there: a no-op */
#endif
	memset(t, 0, bytes);
	return t;
}

/* Grows a shard by 1.25x. The slots are sorted by hash (cyclically: the first run may hold
 * entries wrapped from the end), and homes are monotone in the hash, so walking the old table
 * from the start of a run and placing each entry at max(new home, next free) builds the new
 * table in one sequential pass; only entries pushed past the end go through place(). */
static int grow(struct mem_index *m, struct shard *sh)
{
	size_t es = m->es, fl = m->base.fp_len;
	uint64_t ncap = sh->cap ? sh->cap + sh->cap / 4 : MIN_CAP;
	uint64_t nbytes = ncap * es, obytes = sh->cap * es;
	if (m->limit && m->bytes - obytes + nbytes > m->limit)
		return INDEX_FULL;
	uint8_t *ns = zeroed_table(nbytes);
	if (!ns) {
		err_fail(&m->base.err, -1, "memory index: out of memory growing to %llu slots "
			 "(use --mem-limit to spill to disk)", (unsigned long long)ncap);
		return -1;
	}
	uint64_t start = 0, cursor = 0, k, over = sh->cap;
	while (start < sh->cap) { /* an empty slot or one at its home starts a run */
		const uint8_t *s = sh->slots + start * es;
		if (!slot_count(s, fl) || disp_of(s, start, sh->cap) == 0)
			break;
		start++;
	}
	for (k = 0; k < sh->cap; k++) {
		uint64_t i = start + k < sh->cap ? start + k : start + k - sh->cap;
		const uint8_t *s = sh->slots + i * es;
		if (!slot_count(s, fl))
			continue;
		uint64_t nh = home_of(s, ncap);
		if (i < start && home_of(s, sh->cap) <= i)
			nh += ncap; /* comes after the wrap in this cyclic order */
		uint64_t pos = nh > cursor ? nh : cursor;
		if (pos >= ncap) {
			over = k;
			break;
		}
		memcpy(ns + pos * es, s, es);
		cursor = pos + 1;
	}
	for (k = over; k < sh->cap; k++) {
		uint64_t i = start + k < sh->cap ? start + k : start + k - sh->cap;
		const uint8_t *s = sh->slots + i * es;
		if (slot_count(s, fl))
			place(m, ns, ncap, s);
	}
	free(sh->slots);
	sh->slots = ns;
	sh->cap = ncap;
	m->bytes = m->bytes - obytes + nbytes;
	return 0;
}

static int new_entry(struct mem_index *m, const uint8_t *fp, uint64_t n, uint64_t first, uint8_t *entry)
{
	size_t fl = m->base.fp_len;
	memcpy(entry, fp, fl);
	set_first(entry, fl, first);
	if (n >= COUNT_OVERFLOW) {
		if (ovf_add(m, fp, n))
			return -1;
		set_count(entry, fl, COUNT_OVERFLOW);
	} else {
		set_count(entry, fl, (uint32_t)n);
	}
	return 0;
}

/* One probe finds the key or the slot where it belongs in (home, hash) order; a new key goes
 * there and the rest of its run moves up one slot (one memmove: the same table Robin Hood's
 * swap-and-carry builds, since a run is sorted). */
static int mem_add(struct gindex *ix, const uint8_t *fp, uint64_t n, uint64_t first)
{
	struct mem_index *m = (struct mem_index *)ix;
	struct shard *sh = &m->shards[fp[0]];
	size_t es = m->es, fl = ix->fp_len;
	uint8_t entry[SLOT_MAX];
	uint64_t pos = 0;
	int rc;

	if (first > INDEX_POS_MAX) {
		err_fail(&ix->err, -1, "memory index: stream position %llu past 2^48 blocks",
			 (unsigned long long)first);
		return -1;
	}
	if (sh->cap) {
		uint64_t h = hash_of(fp), home = home_of(fp, sh->cap), d = 0;
		pos = home;
		for (;;) {
			uint8_t *s = sh->slots + pos * es;
			if (slot_count(s, fl) == 0)
				break;
			uint64_t sd = disp_of(s, pos, sh->cap);
			if (sd < d)
				break;
			if (sd == d) {
				uint64_t sh_h = hash_of(s);
				if (sh_h > h)
					break;
				if (sh_h == h && !memcmp(s, fp, fl)) {
					if (first < slot_first(s, fl))
						set_first(s, fl, first);
					return bump(m, s, n);
				}
			}
			if (++pos == sh->cap)
				pos = 0;
			d++;
		}
	}
	if ((rc = new_entry(m, fp, n, first, entry)) != 0)
		return rc;
	if ((sh->n + 1) * MAX_LOAD_DEN > sh->cap * MAX_LOAD_NUM) {
		if ((rc = grow(m, sh)) != 0) {
			if (n >= COUNT_OVERFLOW) /* undo the overflow record of the entry not added */
				m->novf--;
			return rc;
		}
		place(m, sh->slots, sh->cap, entry);
	} else {
		uint64_t e = pos;
		while (slot_count(sh->slots + e * es, fl))
			if (++e == sh->cap)
				e = 0;
		if (e >= pos) {
			memmove(sh->slots + (pos + 1) * es, sh->slots + pos * es, (e - pos) * es);
			memcpy(sh->slots + pos * es, entry, es);
		} else {
			place(m, sh->slots, sh->cap, entry); /* the run wraps around the end: rare */
		}
	}
	sh->n++;
	m->n++;
	return 0;
}

/* fp's home slot: its fingerprint bytes and, a slot being 30 bytes unaligned, its count in the
 * next cache line about a third of the time. */
static void mem_prefetch(const struct gindex *ix, const uint8_t *fp)
{
	const struct mem_index *m = (const struct mem_index *)ix;
	const struct shard *sh = &m->shards[fp[0]];
	if (!sh->cap)
		return;
	const uint8_t *s = sh->slots + home_of(fp, sh->cap) * m->es;
	__builtin_prefetch(s);
	__builtin_prefetch(s + m->es - 1);
}

static int mem_add_batch(struct gindex *ix, const uint8_t *fps, size_t n, uint64_t first, size_t *done)
{
	size_t fl = ix->fp_len;
	enum { AHEAD = 8 };
	for (size_t i = 0; i < n; i++) {
		if (i + AHEAD < n)
			mem_prefetch(ix, fps + (i + AHEAD) * fl);
		int rc = mem_add(ix, fps + i * fl, 1, first + i);
		if (rc) {
			*done = i;
			return rc;
		}
	}
	*done = n;
	return 0;
}

static int mem_lookup(struct gindex *ix, const uint8_t *fp, uint64_t *count, uint64_t *first)
{
	struct mem_index *m = (struct mem_index *)ix;
	const struct shard *sh = &m->shards[fp[0]];
	size_t es = m->es, fl = ix->fp_len;
	if (!sh->cap)
		return 0;
	uint64_t pos = home_of(fp, sh->cap), d = 0;
	for (;;) {
		uint8_t *s = sh->slots + pos * es;
		if (slot_count(s, fl) == 0 || disp_of(s, pos, sh->cap) < d)
			return 0;
		if (!memcmp(s, fp, fl)) {
			*count = true_count(m, s);
			if (first)
				*first = slot_first(s, fl);
			return 1;
		}
		if (++pos == sh->cap)
			pos = 0;
		d++;
	}
}

static int cmp_fp(const void *a, const void *b, void *fl)
{
	return memcmp(a, b, *(const size_t *)fl);
}

static void reset(struct mem_index *m)
{
	for (int i = 0; i < NSHARDS; i++) {
		free(m->shards[i].slots);
		m->shards[i] = (struct shard){0};
	}
	free(m->ovf);
	m->ovf = NULL;
	m->novf = m->ovfcap = 0;
	m->bytes = 0;
	m->n = 0;
}

static int mem_iterate(struct gindex *ix, bool sorted, bool drain, index_visit_fn fn, void *arg)
{
	struct mem_index *m = (struct mem_index *)ix;
	size_t es = m->es, fl = ix->fp_len;
	int rc = 0;
	for (int i = 0; i < NSHARDS && !rc; i++) {
		struct shard *sh = &m->shards[i];
		if (sorted && drain) {
			/* Compact the occupied slots to the front and sort them: shard i holds the
			 * fingerprints starting with byte i, so shard order is global order. */
			uint64_t w = 0;
			for (uint64_t r = 0; r < sh->cap; r++) {
				uint8_t *s = sh->slots + r * es;
				if (slot_count(s, fl)) {
					if (w != r)
						memcpy(sh->slots + w * es, s, es);
					w++;
				}
			}
			if (w) /* qsort_r with a NULL base is undefined even for zero elements */
				qsort_r(sh->slots, w, es, cmp_fp, &fl);
			for (uint64_t k = 0; k < w && !rc; k++) {
				const uint8_t *s = sh->slots + k * es;
				rc = fn(s, true_count(m, s), slot_first(s, fl), arg);
			}
			free(sh->slots);
			m->bytes -= sh->cap * es;
			*sh = (struct shard){0};
			continue;
		}
		for (uint64_t r = 0; r < sh->cap && !rc; r++) {
			const uint8_t *s = sh->slots + r * es;
			if (slot_count(s, fl))
				rc = fn(s, true_count(m, s), slot_first(s, fl), arg);
		}
	}
	if (drain)
		reset(m);
	return rc;
}

/* ---- several indexes walked as one: shard by shard, their entries gathered in one table ---- */

static const struct gindex_ops mem_ops;

/* A shard's occupied slots in ascending hash order: from the first slot that is empty or holds
 * an entry at or after its home, cyclically (the slots before it hold entries wrapped from the
 * end, the largest hashes). */
struct cursor {
	const uint8_t *slots;
	uint64_t cap, start, k; /* k: slots passed since start; the current one is start + k */
	size_t es, fl;
};

static void cursor_skip_empty(struct cursor *c)
{
	while (c->k < c->cap) {
		uint64_t i = c->start + c->k < c->cap ? c->start + c->k : c->start + c->k - c->cap;
		if (slot_count(c->slots + i * c->es, c->fl))
			return;
		c->k++;
	}
}

static struct cursor cursor_at(const struct mem_index *m, const struct shard *sh)
{
	struct cursor c = {sh->slots, sh->cap, 0, 0, m->es, m->base.fp_len};
	while (c.start < sh->cap) {
		const uint8_t *s = sh->slots + c.start * m->es;
		if (!slot_count(s, c.fl) || home_of(s, sh->cap) <= c.start)
			break;
		c.start++;
	}
	if (c.start == sh->cap)
		c.start = 0;
	cursor_skip_empty(&c);
	return c;
}

/* the current slot, NULL past the last */
static const uint8_t *cursor_slot(const struct cursor *c)
{
	if (c->k >= c->cap)
		return NULL;
	uint64_t i = c->start + c->k < c->cap ? c->start + c->k : c->start + c->k - c->cap;
	return c->slots + i * c->es;
}

static void cursor_next(struct cursor *c)
{
	c->k++;
	cursor_skip_empty(c);
}

/* One digest being gathered: its slot in the first index holding it, its counts summed and its
 * earliest first position. */
struct gathered {
	const uint8_t *slot; /* NULL: an empty place */
	uint64_t hash, count, first;
};

/* The table gathers a shard's entries a slice of the hash space at a time, slices of about this
 * many entries: it stays in cache, and costs the same small memory whatever the index's size. */
#define GATHER_SLICE 4096

struct gather {
	struct gathered *t;
	size_t alloc;        /* entries allocated */
	size_t cap;          /* the entries in use for this shard: a power of two */
	unsigned slice_bits; /* the shard's 2^slice_bits slices: the top bits of the hash, the same in
			      * a slice, so the place is taken from the bits below them */
	struct cursor *cur;
	struct dd_err *err; /* the first index's, where out of memory is said */
};

/* Where a hash's probe starts in a table of cap places (a power of two): the hash's bits below
 * the slice's (lead of them), their top log2(cap). */
static inline size_t gather_home(uint64_t h, unsigned lead, size_t cap)
{
	return (size_t)((h << lead) >> (64 - __builtin_ctzll(cap)));
}

/* A table of cap empty places; keep: the entries of the one it replaces moved into it. */
static int gather_resize(struct gather *g, size_t cap, bool keep)
{
	struct gathered *old = g->t;
	size_t ocap = keep ? g->cap : 0;
	if (!(g->t = calloc(cap, sizeof *g->t))) {
		g->t = old;
		err_fail(g->err, -1, "memory index: out of memory walking");
		return -1;
	}
	g->alloc = g->cap = cap;
	for (size_t k = 0; k < ocap; k++) {
		if (!old[k].slot)
			continue;
		size_t at = gather_home(old[k].hash, g->slice_bits, cap);
		while (g->t[at].slot)
			at = (at + 1) & (cap - 1);
		g->t[at] = old[k];
	}
	free(old);
	return 0;
}

/* One entry into the table of cap places (lead: the slice's bits, see gather_home): 1 if its
 * digest is new there, 0 if it joined the digest's entry. */
static inline int gather_one(struct gathered *t, size_t cap, unsigned lead, const uint8_t *s, size_t fl,
			     uint64_t count, uint64_t first)
{
	uint64_t h = hash_of(s);
	for (size_t at = gather_home(h, lead, cap);; at = (at + 1) & (cap - 1)) {
		struct gathered *e = &t[at];
		if (!e->slot) {
			*e = (struct gathered){s, h, count, first};
			return 1;
		}
		if (e->hash == h && !memcmp(e->slot, s, fl)) {
			e->count += count;
			if (first < e->first)
				e->first = first;
			return 0;
		}
	}
}

/* Visits one index's shard as it is: the common case of data without copies across threads. */
static int visit_shard(struct mem_index *m, const struct shard *sh, index_visit_fn fn, void *arg)
{
	size_t fl = m->base.fp_len;
	for (uint64_t k = 0; k < sh->cap; k++) {
		const uint8_t *s = sh->slots + k * m->es;
		if (!slot_count(s, fl))
			continue;
		int rc = fn(s, true_count(m, s), slot_first(s, fl), arg);
		if (rc)
			return rc;
	}
	return 0;
}

/* Shard `shard` of the indexes, each digest visited once: 0, fn's non-zero return, or -1 (out of
 * memory). A shard one index alone holds is visited as it is; else the hash space is cut into
 * slices of about GATHER_SLICE entries, and each index's cursor (its slots in hash order) hands
 * its slice's entries to the table, which is visited and emptied before the next. */
static int gather_shard(struct gather *g, struct mem_index *const *ix, int n, int shard, index_visit_fn fn, void *arg)
{
	size_t fl = ix[0]->base.fp_len;
	uint64_t total = 0;
	int holders = 0, holder = 0;
	for (int i = 0; i < n; i++) {
		if (ix[i]->shards[shard].n) {
			total += ix[i]->shards[shard].n;
			holders++;
			holder = i;
		}
	}
	if (holders <= 1)
		return holders ? visit_shard(ix[holder], &ix[holder]->shards[shard], fn, arg) : 0;
	unsigned slice_bits = 0; /* 2^slice_bits slices */
	while (slice_bits < 32 && (total >> slice_bits) > GATHER_SLICE)
		slice_bits++;
	size_t want = 64; /* one slice: room for every entry; slices: for a quarter more than average,
			   * and the table grows if one holds more */
	while (want < (slice_bits ? 2 * (total >> slice_bits) + (total >> slice_bits) / 2 : 2 * total))
		want *= 2;
	g->slice_bits = slice_bits;
	if (want > g->alloc) {
		if (gather_resize(g, want, false))
			return -1;
	} else { /* a table no larger than this shard needs: fewer places to visit, closer together */
		g->cap = want;
	}
	for (int i = 0; slice_bits && i < n; i++)
		g->cur[i] = cursor_at(ix[i], &ix[i]->shards[shard]);
	/* the table in locals: the compiler keeps them in registers, not reloaded after every store */
	struct gathered *t = g->t;
	size_t cap = g->cap, used;
	for (uint64_t q = 0; q >> slice_bits == 0; q++) {
		bool last = (q + 1) >> slice_bits != 0;
		uint64_t end = last ? 0 : (q + 1) << (64 - slice_bits);
		memset(t, 0, cap * sizeof *t);
		used = 0;
		for (int i = 0; i < n; i++) {
			const struct shard *sh = &ix[i]->shards[shard];
			if (!slice_bits) { /* one slice, the usual case: the slots in any order; room for all */
				for (uint64_t k = 0; k < sh->cap; k++) {
					const uint8_t *s = sh->slots + k * ix[i]->es;
					if (slot_count(s, fl))
						(void)gather_one(t, cap, 0, s, fl, true_count(ix[i], s), slot_first(s, fl));
				}
				continue;
			}
			const uint8_t *s;
			while ((s = cursor_slot(&g->cur[i])) && (last || hash_of(s) < end)) {
				cursor_next(&g->cur[i]);
				used += (size_t)gather_one(t, cap, slice_bits, s, fl, true_count(ix[i], s),
							   slot_first(s, fl));
				if (used * 2 > cap) { /* a slice fuller than most */
					g->cap = cap;
					if (gather_resize(g, cap * 2, true))
						return -1;
					t = g->t;
					cap = g->cap;
				}
			}
		}
		for (size_t k = 0; k < cap; k++) {
			if (!t[k].slot)
				continue;
			int rc = fn(t[k].slot, t[k].count, t[k].first, arg);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int index_mem_iterate_all(struct gindex *const *ix, int n, index_visit_fn fn, void *arg)
{
	for (int i = 0; i < n; i++) {
		if (ix[i]->ops != &mem_ops || ix[i]->fp_len != ix[0]->fp_len) {
			err_fail(&ix[0]->err, -1, "memory index: can only walk memory indexes of one hash together");
			return -1;
		}
	}
	if (n == 1)
		return ix[0]->ops->iterate(ix[0], false, false, fn, arg);
	struct gather g = {.err = &ix[0]->err};
	struct mem_index **m = malloc((size_t)n * sizeof *m);
	g.cur = malloc((size_t)n * sizeof *g.cur);
	int rc = 0;
	if (!m || !g.cur) {
		err_fail(&ix[0]->err, -1, "memory index: out of memory walking");
		rc = -1;
	}
	for (int i = 0; !rc && i < n; i++)
		m[i] = (struct mem_index *)ix[i];
	for (int sh = 0; sh < NSHARDS && !rc; sh++)
		rc = gather_shard(&g, m, n, sh, fn, arg);
	free(g.t);
	free(g.cur);
	free(m);
	return rc;
}

static uint64_t mem_distinct(const struct gindex *ix)
{
	return ((const struct mem_index *)ix)->n;
}

static uint64_t mem_bytes(const struct gindex *ix)
{
	const struct mem_index *m = (const struct mem_index *)ix;
	return m->bytes + m->ovfcap * sizeof(struct overflow);
}

static int mem_flush(struct gindex *ix)
{
	return 0;
}

static void mem_close(struct gindex *ix)
{
	struct mem_index *m = (struct mem_index *)ix;
	if (!m)
		return;
	reset(m);
	free(m);
}

static const struct gindex_ops mem_ops = {
	.name = "mem",
	.add = mem_add,
	.add_batch = mem_add_batch,
	.prefetch = mem_prefetch,
	.lookup = mem_lookup,
	.iterate = mem_iterate,
	.distinct = mem_distinct,
	.bytes = mem_bytes,
	.flush = mem_flush,
	.close = mem_close,
};

struct gindex *index_mem_open(size_t fp_len, uint64_t mem_limit)
{
	if (fp_len < 9 || fp_len > 32)
		return NULL;
	struct mem_index *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->base.ops = &mem_ops;
	m->base.fp_len = fp_len;
	m->es = fp_len + SLOT_EXTRA;
	m->limit = mem_limit;
	return &m->base;
}
