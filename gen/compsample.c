/* compsample.c - compressibility sampling: per-thread sets of measured contents (zstd -1 and LZ4,
 * each block alone), merged per block size and joined with the final counts into weighted cells. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/bitfilter.h"
#include "gen/compsample.h"

uint64_t comp_threshold(double p)
{
	if (p >= 1)
		return UINT64_MAX;
	if (!(p > 0))
		return 0;
	return (uint64_t)ldexp(p, 64) - 1; /* p < 1: p * 2^64 < 2^64 fits */
}

/* ---- the set: open addressing, linear probing, load <= 1/2. Entries [fp | sample] and, apart,
 * one 8-byte tag per slot (a hash of the fingerprint, never 0; 0: empty): the join probes with
 * every index entry and most are absent, so probing reads the compact tags, not the entries. ---- */

struct comp_set {
	size_t fl, vo, es;       /* fingerprint length, sample offset (8-aligned), entry size */
	uint64_t *tags;
	uint8_t *slots;
	size_t cap, n;           /* cap a power of two (0: none yet) */
};

static inline uint64_t tag_of(const uint8_t *fp, size_t fl)
{
	uint64_t h;
	memcpy(&h, fp + fl - 8, 8); /* a digest's last bytes: independent of the selection's first */
	return h | 1;
}

static inline struct comp_sample *slot_val(const struct comp_set *s, size_t i)
{
	return (struct comp_sample *)(void *)(s->slots + i * s->es + s->vo);
}

struct comp_set *comp_set_new(size_t fp_len)
{
	struct comp_set *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fl = fp_len;
	s->vo = (fp_len + 7) / 8 * 8;
	s->es = s->vo + sizeof(struct comp_sample);
	return s;
}

/* The slot holding fp, or the empty slot where it belongs (*found says which). */
static size_t find(const struct comp_set *s, const uint8_t *fp, uint64_t tag, bool *found)
{
	size_t mask = s->cap - 1, i = (size_t)(tag >> 1) & mask;
	for (;; i = (i + 1) & mask) {
		if (s->tags[i] == 0) {
			*found = false;
			return i;
		}
		if (s->tags[i] == tag && !memcmp(s->slots + i * s->es, fp, s->fl)) {
			*found = true;
			return i;
		}
	}
}

static int grow(struct comp_set *s)
{
	size_t ncap = s->cap ? 2 * s->cap : 256, ocap = s->cap;
	uint64_t *otags = s->tags;
	uint8_t *oslots = s->slots;
	uint64_t *tags = calloc(ncap, sizeof *tags);
	uint8_t *slots = malloc(ncap * s->es);
	if (!tags || !slots) {
		free(tags);
		free(slots);
		return -1;
	}
	s->tags = tags;
	s->slots = slots;
	s->cap = ncap;
	for (size_t i = 0; i < ocap; i++) {
		if (!otags[i])
			continue;
		bool found;
		size_t j = find(s, oslots + i * s->es, otags[i], &found);
		s->tags[j] = otags[i];
		memcpy(s->slots + j * s->es, oslots + i * s->es, s->es);
	}
	free(otags);
	free(oslots);
	return 0;
}

/* Room for n entries without growing. */
static int reserve_set(struct comp_set *s, size_t n)
{
	while (s->cap < 2 * n)
		if (grow(s))
			return -1;
	return 0;
}

int comp_set_put(struct comp_set *s, const uint8_t *fp, const struct comp_sample *v)
{
	bool found = false;
	if ((s->n + 1) * 2 > s->cap && grow(s))
		return -1;
	uint64_t tag = tag_of(fp, s->fl);
	size_t i = find(s, fp, tag, &found);
	if (found) {
		struct comp_sample *old = slot_val(s, i);
		if (v->hmin < old->hmin)
			old->hmin = v->hmin;
		return 0;
	}
	s->tags[i] = tag;
	memcpy(s->slots + i * s->es, fp, s->fl);
	*slot_val(s, i) = *v;
	s->n++;
	return 0;
}

const struct comp_sample *comp_set_get(const struct comp_set *s, const uint8_t *fp)
{
	bool found = false;
	if (!s->n)
		return NULL;
	size_t i = find(s, fp, tag_of(fp, s->fl), &found);
	return found ? slot_val(s, i) : NULL;
}

size_t comp_set_size(const struct comp_set *s)
{
	return s->n;
}

int comp_set_each(const struct comp_set *s, comp_visit_fn fn, void *arg)
{
	for (size_t i = 0; i < s->cap; i++) {
		int rc;
		if (s->tags[i] && (rc = fn(s->slots + i * s->es, slot_val(s, i), arg)) != 0)
			return rc;
	}
	return 0;
}

void comp_set_free(struct comp_set *s)
{
	if (!s)
		return;
	free(s->tags);
	free(s->slots);
	free(s);
}

/* ---- the sampler of one block size ---- */

/* Accumulated during the join: per (class, zstd bucket, LZ4 bucket) the weights and the
 * weighted sizes (bytes). */
/* A cell's sums in fixed point (weights in units of 2^-COMP_WEIGHT_BITS): integers, so the
 * sums are exact and the same in any order (threads, spills, dedisgen-mpi's owners). */
struct cell_acc {
	comp_sum w, wz, wl;
};

/* The cells by copy class: a class's 32 x 32 block is allocated when a content of that class is
 * first joined. A handful of classes ever are; one dense table of all 64 was 3 MiB that every
 * join, and each thread's part of it, paid for in page faults (10 ms and more at 2 GiB). */
#define CLASS_CELLS ((size_t)DIST_COMP_BUCKETS * DIST_COMP_BUCKETS)
typedef struct cell_acc *class_cells[DIST_CLASSES];

static struct cell_acc *cell_block(class_cells acc, unsigned cls)
{
	if (!acc[cls])
		acc[cls] = calloc(CLASS_CELLS, sizeof *acc[cls]);
	return acc[cls];
}

static void free_cells(class_cells acc)
{
	for (int k = 0; k < DIST_CLASSES; k++) {
		free(acc[k]);
		acc[k] = NULL;
	}
}

struct comp_sampler {
	pthread_mutex_t lock;
	size_t fl;
	uint64_t block_size;
	double p;
	uint64_t threshold;
	uint8_t zero_fp[32];
	struct comp_set *set;       /* what the threads handed in, and loaded samples */
	struct bitfilter filter;    /* the samples' tags, from comp_join_begin (none before) */
	class_cells acc;            /* the join's cells */
	uint64_t class_measured[DIST_CLASSES];
	uint64_t expect;            /* contents per thread, for sizing their sets */
};

struct comp_sampler *comp_sampler_new(size_t fp_len, uint64_t block_size, double p, const uint8_t *zero_fp)
{
	struct comp_sampler *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	if (!(s->set = comp_set_new(fp_len))) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->fl = fp_len;
	s->block_size = block_size;
	s->p = p;
	s->threshold = comp_threshold(p);
	memcpy(s->zero_fp, zero_fp, fp_len);
	return s;
}

double comp_sampler_rate(const struct comp_sampler *s)
{
	return s->p;
}

void comp_sampler_expect(struct comp_sampler *s, uint64_t per_thread)
{
	s->expect = per_thread < (1u << 16) ? per_thread : (1u << 16);
}

void comp_sampler_lower_rate(struct comp_sampler *s, double p)
{
	if (p < s->p) {
		s->p = p;
		s->threshold = comp_threshold(p);
	}
}

int comp_sampler_load(struct comp_sampler *s, const uint8_t *fp, const struct comp_sample *v)
{
	return comp_set_put(s->set, fp, v);
}

struct each_arg {
	comp_visit_fn fn;
	void *arg;
	uint64_t threshold;
};

static int each_selected(const uint8_t *fp, const struct comp_sample *v, void *arg)
{
	struct each_arg *e = arg;
	return v->hmin <= e->threshold ? e->fn(fp, v, e->arg) : 0;
}

int comp_sampler_each(const struct comp_sampler *s, comp_visit_fn fn, void *arg)
{
	struct each_arg e = {fn, arg, s->threshold};
	return comp_set_each(s->set, each_selected, &e);
}

void comp_sampler_free(struct comp_sampler *s)
{
	if (!s)
		return;
	comp_set_free(s->set);
	bitfilter_free(&s->filter);
	free_cells(s->acc);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* ---- a hashing thread's side ---- */

int comp_local_init(struct comp_local *l, struct comp_sampler *s)
{
	memset(l, 0, sizeof *l);
	if (!(l->set = comp_set_new(s->fl)) || (s->expect && reserve_set(l->set, (size_t)s->expect))) {
		comp_set_free(l->set);
		l->set = NULL;
		return -1;
	}
	l->s = s;
	l->threshold = s->threshold;
	l->block_size = s->block_size;
	l->zero_fp = s->zero_fp;
	l->fp_len = s->fl;
	return 0;
}

int comp_local_measure(struct comp_local *l, struct compmodel_codecs *c, const uint8_t *fp, const uint8_t *block,
		       uint64_t h, struct dd_err *err)
{
	struct comp_sample v = {.hmin = h};
	const struct comp_sample *seen = comp_set_get(l->set, fp);
	if (seen) {
		if (h < seen->hmin)
			((struct comp_sample *)seen)->hmin = h;
		return 0;
	}
	if (!memcmp(fp, l->zero_fp, l->fp_len))
		return 0; /* the zero block is its own header line, never a cell */
	struct compmodel_sizes sizes;
	if (compmodel_measure(c, block, l->block_size, &sizes, err))
		return -1;
	v.zstd = (uint32_t)sizes.zstd;
	v.lz4 = (uint32_t)sizes.lz4;
	if (comp_set_put(l->set, fp, &v)) {
		err_fail(err, -1, "out of memory for the compressibility samples");
		return -1;
	}
	return 0;
}

static int put_into(const uint8_t *fp, const struct comp_sample *v, void *arg)
{
	return comp_set_put(arg, fp, v);
}

int comp_local_flush(struct comp_local *l)
{
	pthread_mutex_lock(&l->s->lock);
	int rc = comp_set_each(l->set, put_into, l->s->set);
	pthread_mutex_unlock(&l->s->lock);
	comp_local_release(l);
	return rc;
}

void comp_local_release(struct comp_local *l)
{
	comp_set_free(l->set);
	l->set = NULL;
}

/* ---- the join ---- */

static unsigned bucket_of(uint32_t size, uint64_t bs)
{
	uint64_t b = (uint64_t)size * DIST_COMP_BUCKETS / bs;
	return b < DIST_COMP_BUCKETS ? (unsigned)b : DIST_COMP_BUCKETS - 1;
}

/* A bitmap of the set's tags (bits 40.. of the tag, apart from the bits that place it in the set):
 * every index entry is offered to the join and almost none was measured, so most are turned away
 * by a bit in the cache (16 KiB for 8,192 samples) rather than a probe of the set's tags (a miss in
 * L1 each; 14 ns an entry, a tenth of the end of a scan). None for a set too large for one to
 * stay in cache. */
#define FILTER_BITS_PER_ENTRY 16
#define FILTER_MAX_BITS ((size_t)1 << 24)

int comp_join_begin(struct comp_sampler *s)
{
	bitfilter_free(&s->filter);
	if (bitfilter_init(&s->filter, s->set->n, FILTER_BITS_PER_ENTRY, FILTER_MAX_BITS))
		return -1;
	for (size_t i = 0; i < s->set->cap; i++)
		if (s->set->tags[i])
			bitfilter_add(&s->filter, s->set->tags[i] >> 40);
	return 0;
}

/* One entry into cells acc and class_measured: the sampler is only read, so threads joining
 * disjoint entries into their own cells may share it. */
static int join_into(const struct comp_sampler *s, class_cells acc, uint64_t *class_measured, const uint8_t *fp,
		     uint64_t copies)
{
	if (!s->set->n || copies == 0 || !bitfilter_maybe(&s->filter, tag_of(fp, s->fl) >> 40))
		return 0;
	const struct comp_sample *v = comp_set_get(s->set, fp);
	if (!v || v->hmin > s->threshold || !memcmp(fp, s->zero_fp, s->fl))
		return 0;
	int cls = 63 - __builtin_clzll(copies);
	/* Horvitz-Thompson: measured with probability 1 - (1 - p)^copies (p = 1: always) */
	double w = s->p >= 1 ? 1.0 : 1.0 / -expm1((double)copies * log1p(-s->p));
	/* w <= 1/p <= 2^32: at most 2^56 in fixed point */
	comp_sum fw = (comp_sum)(uint64_t)nearbyint(w * (double)(UINT64_C(1) << COMP_WEIGHT_BITS));
	struct cell_acc *block = cell_block(acc, (unsigned)cls);
	if (!block)
		return -1;
	struct cell_acc *a = &block[bucket_of(v->zstd, s->block_size) * DIST_COMP_BUCKETS + bucket_of(v->lz4, s->block_size)];
	a->w += fw;
	a->wz += fw * v->zstd;
	a->wl += fw * v->lz4;
	class_measured[cls]++;
	return 0;
}

int comp_join_visit(struct comp_sampler *s, const uint8_t *fp, uint64_t copies)
{
	return join_into(s, s->acc, s->class_measured, fp, copies);
}

struct comp_join_part {
	const struct comp_sampler *s;
	class_cells acc;
	uint64_t class_measured[DIST_CLASSES];
};

struct comp_join_part *comp_join_part_new(const struct comp_sampler *s)
{
	struct comp_join_part *j = calloc(1, sizeof *j);
	if (j)
		j->s = s;
	return j;
}

int comp_join_part_visit(struct comp_join_part *j, const uint8_t *fp, uint64_t copies)
{
	return join_into(j->s, j->acc, j->class_measured, fp, copies);
}

int comp_join_part_add(struct comp_sampler *s, struct comp_join_part *j)
{
	for (unsigned k = 0; k < DIST_CLASSES; k++) {
		s->class_measured[k] += j->class_measured[k];
		if (!j->acc[k])
			continue;
		struct cell_acc *to = cell_block(s->acc, k);
		if (!to)
			return -1;
		for (size_t i = 0; i < CLASS_CELLS; i++) {
			to[i].w += j->acc[k][i].w;
			to[i].wz += j->acc[k][i].wz;
			to[i].wl += j->acc[k][i].wl;
		}
	}
	return 0;
}

void comp_join_part_free(struct comp_join_part *j)
{
	if (j)
		free_cells(j->acc);
	free(j);
}

/* A weighted mean size in 1/2^20 of the block (a byte or finer up to 1 MiB blocks), kept inside its
 * bucket against rounding, and never 0: the ratios divide by it. */
static uint32_t mean_unit(double wsize, double w, uint64_t bs, unsigned bucket)
{
	double m = wsize / w * DIST_COMP_UNIT / (double)bs;
	uint32_t lo = bucket * (DIST_COMP_UNIT / DIST_COMP_BUCKETS);
	uint32_t hi = bucket + 1 == DIST_COMP_BUCKETS ? DIST_COMP_UNIT : lo + DIST_COMP_UNIT / DIST_COMP_BUCKETS;
	long r = lround(m);
	if (r < 1)
		r = 1;
	return r < (long)lo ? lo : r > (long)hi ? hi : (uint32_t)r;
}

int comp_join_finish(struct comp_sampler *s, struct dist_comp *out)
{
	memset(out, 0, sizeof *out);
	size_t n = 0;
	bool any = false;
	for (unsigned cls = 0; cls < DIST_CLASSES; cls++)
		for (size_t c = 0; s->acc[cls] && c < CLASS_CELLS; c++, any = true)
			n += s->acc[cls][c].w != 0;
	if (!any)
		return 0;
	if (!(out->cells = malloc(n * sizeof *out->cells)))
		return -1;
	for (size_t i = 0; i < (size_t)DIST_CLASSES * CLASS_CELLS; i++) {
		const struct cell_acc *block = s->acc[i / CLASS_CELLS];
		const struct cell_acc *a = block ? &block[i % CLASS_CELLS] : NULL;
		if (!a || !a->w)
			continue;
		const double unit = (double)(UINT64_C(1) << COMP_WEIGHT_BITS);
		double w = (double)a->w / unit;
		unsigned lb = i % DIST_COMP_BUCKETS, zb = i / DIST_COMP_BUCKETS % DIST_COMP_BUCKETS;
		unsigned cls = (unsigned)(i / DIST_COMP_BUCKETS / DIST_COMP_BUCKETS);
		uint64_t contents = (uint64_t)llround(w);
		out->cells[out->ncells++] = (struct dist_comp_cell){
			(uint8_t)cls, (uint8_t)zb, (uint8_t)lb, contents ? contents : 1,
			mean_unit((double)a->wz / unit, w, s->block_size, zb), mean_unit((double)a->wl / unit, w, s->block_size, lb)};
	}
	for (int k = 0; k < DIST_CLASSES; k++) {
		out->class_measured[k] = s->class_measured[k];
		out->measured += s->class_measured[k];
	}
	out->sample_rate = s->p;
	out->present = out->ncells > 0;
	return 0;
}

void comp_join_export(const struct comp_sampler *s, comp_sum *sums)
{
	size_t cells = (size_t)DIST_CLASSES * DIST_COMP_BUCKETS * DIST_COMP_BUCKETS;
	memset(sums, 0, COMP_JOIN_SUMS * sizeof *sums);
	for (size_t i = 0; i < cells; i++) {
		const struct cell_acc *block = s->acc[i / CLASS_CELLS];
		if (!block)
			continue;
		sums[3 * i] = block[i % CLASS_CELLS].w;
		sums[3 * i + 1] = block[i % CLASS_CELLS].wz;
		sums[3 * i + 2] = block[i % CLASS_CELLS].wl;
	}
	for (int k = 0; k < DIST_CLASSES; k++)
		sums[3 * cells + (size_t)k] = s->class_measured[k];
}

int comp_join_add(struct comp_sampler *s, const comp_sum *sums)
{
	size_t cells = (size_t)DIST_CLASSES * DIST_COMP_BUCKETS * DIST_COMP_BUCKETS;
	bool any = false;
	for (size_t i = 0; i < cells && !any; i++)
		any = sums[3 * i] != 0;
	if (!any) /* nothing joined there: the join stays as it is (no cells, not an empty table) */
		return 0;
	for (size_t i = 0; i < cells; i++) {
		if (!sums[3 * i] && !sums[3 * i + 1] && !sums[3 * i + 2])
			continue;
		struct cell_acc *block = cell_block(s->acc, (unsigned)(i / CLASS_CELLS));
		if (!block)
			return -1;
		block[i % CLASS_CELLS].w += sums[3 * i];
		block[i % CLASS_CELLS].wz += sums[3 * i + 1];
		block[i % CLASS_CELLS].wl += sums[3 * i + 2];
	}
	for (int k = 0; k < DIST_CLASSES; k++)
		s->class_measured[k] += (uint64_t)sums[3 * cells + (size_t)k];
	return 0;
}
