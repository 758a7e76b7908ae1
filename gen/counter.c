/* counter.c - one block size's counts: each hashing thread (writer) counts into its own memory
 * indexes, one per fingerprint range, with no lock; at the end the writers' parts of each range
 * are walked as one by parallel threads, or spilled (in fingerprint order) to an optional Berkeley
 * DB index behind, which also takes a part whenever memory reaches --mem-limit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen/counter.h"
#include "gen/counts.h"
#include "lib/fanout.h"

/* Ranges of the first fingerprint byte: range r holds fingerprints whose first byte >> 4 is r,
 * so the ranges in order are fingerprint order (a sorted walk is one range after another), and
 * the final walk has 16 independent pieces of work. */
#define RANGES 16
#define RANGE_OF(fp) ((fp)[0] >> 4)

struct counter {
	size_t fp_len;
	uint64_t mem_limit;
	struct gindex *back;
	pthread_mutex_t back_lock; /* the back is shared by the writers' spills */
	int writers;
	struct gindex **part;      /* part[w * RANGES + r]: writer w's counts of range r */
	uint64_t spills;
	uint64_t peak_entries, peak_bytes; /* entries: once per part holding a content */
	uint64_t walked_distinct;          /* the distinct contents a final walk found (no back), else 0 */
};

static struct gindex *part_of(const struct counter *c, int w, int r)
{
	return c->part[w * RANGES + r];
}

/* Each part may hold 1/(writers x ranges) of the memory limit. */
static uint64_t part_limit(const struct counter *c)
{
	if (!c->back || !c->mem_limit)
		return 0;
	uint64_t l = c->mem_limit / ((uint64_t)c->writers * RANGES);
	return l ? l : 1;
}

static int open_parts(struct counter *c, int from, int to)
{
	uint64_t limit = part_limit(c);
	for (int i = from * RANGES; i < to * RANGES; i++)
		if (!(c->part[i] = index_mem_open(c->fp_len, limit)))
			return -1;
	return 0;
}

struct counter *counter_new(size_t fp_len, uint64_t mem_limit, struct gindex *back)
{
	struct counter *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->fp_len = fp_len;
	c->mem_limit = mem_limit;
	c->back = back;
	c->writers = 1;
	pthread_mutex_init(&c->back_lock, NULL);
	if (!(c->part = calloc(RANGES, sizeof *c->part)) || open_parts(c, 0, 1)) {
		counter_free(c);
		return NULL;
	}
	return c;
}

int counter_set_writers(struct counter *c, int writers)
{
	if (writers <= c->writers)
		return 0;
	struct gindex **np = realloc(c->part, (size_t)writers * RANGES * sizeof *np);
	if (!np)
		return -1;
	memset(np + (size_t)c->writers * RANGES, 0, (size_t)(writers - c->writers) * RANGES * sizeof *np);
	c->part = np;
	int old = c->writers;
	c->writers = writers;
	/* parts opened before keep their (larger) limit share: they spill a little later, that is all */
	return open_parts(c, old, writers);
}

/* Sums over every part: what memory holds now (entries counted once per part). Called when no
 * writer runs (settle, the final walk): the parts are not read while their writers change them. */
static void note_peak(struct counter *c)
{
	uint64_t n = 0, b = 0;
	for (int i = 0; i < c->writers * RANGES; i++) {
		n += c->part[i]->ops->distinct(c->part[i]);
		b += c->part[i]->ops->bytes(c->part[i]);
	}
	if (b > c->peak_bytes) {
		c->peak_entries = n;
		c->peak_bytes = b;
	}
}

static int to_index(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct gindex *ix = arg;
	return ix->ops->add(ix, fp, count, first) ? -1 : 0;
}

/* Moves one part to the back, in fingerprint order (B-tree friendly). Caller holds back_lock. */
static int spill_part(struct counter *c, struct gindex *p, struct dd_err *err)
{
	if (p->ops->distinct(p) == 0)
		return 0;
	if (p->ops->iterate(p, true, true, to_index, c->back)) {
		err_fail(err, -1, "spilling the index: %s", c->back->err.msg);
		return -1;
	}
	c->spills++;
	return 0;
}

/* each == 0: a batch (count 1 each, positions first, first + 1, ...); else one fingerprint
 * (n == 1) counted `each` times at position first. */
static int add_to(struct counter *c, int w, const uint8_t *fps, size_t n, uint64_t each, uint64_t first, struct dd_err *err)
{
	size_t fl = c->fp_len;
	enum { AHEAD = 8 }; /* adds whose home slots are fetched meanwhile: each is a cache miss */
	for (size_t i = 0; i < n; i++) {
		if (i + AHEAD < n) {
			const uint8_t *next = fps + (i + AHEAD) * fl;
			const struct gindex *q = part_of(c, w, RANGE_OF(next));
			if (q->ops->prefetch)
				q->ops->prefetch(q, next);
		}
		const uint8_t *fp = fps + i * fl;
		uint64_t pos = each ? first : first + i, times = each ? each : 1;
		struct gindex *p = part_of(c, w, RANGE_OF(fp));
		int rc = p->ops->add(p, fp, times, pos);
		if (rc == 0)
			continue;
		if (rc != INDEX_FULL) {
			err_fail(err, -1, "%s", p->err.msg);
			return -1;
		}
		pthread_mutex_lock(&c->back_lock);
		if (p->ops->distinct(p) == 0) {
			/* A limit below one table: straight to the back. */
			rc = c->back->ops->add(c->back, fp, times, pos);
			if (rc)
				err_fail(err, -1, "%s", c->back->err.msg);
		} else {
			rc = spill_part(c, p, err);
			if (!rc && (rc = p->ops->add(p, fp, times, pos)) != 0)
				err_fail(err, -1, "%s", rc == INDEX_FULL ? "memory index: full after a spill" : p->err.msg);
		}
		pthread_mutex_unlock(&c->back_lock);
		if (rc)
			return -1;
	}
	return 0;
}

int counter_add_batch(struct counter *c, int writer, const uint8_t *fps, size_t n, uint64_t first, struct dd_err *err)
{
	return add_to(c, writer, fps, n, 0, first, err);
}

int counter_add(struct counter *c, const uint8_t *fp, uint64_t n, uint64_t first, struct dd_err *err)
{
	if (n == 0)
		return 0;
	return add_to(c, 0, fp, 1, n, first, err);
}

/* ---- the end: the writers' parts walked as one (no back), or all spilled (back) ---- */

uint64_t counter_distinct_bound(const struct counter *c)
{
	if (c->back)
		return UINT64_MAX;
	if (c->walked_distinct)
		return c->walked_distinct;
	uint64_t sum = 0;
	for (int w = 0; w < c->writers; w++)
		for (int r = 0; r < RANGES; r++)
			sum += part_of(c, w, r)->ops->distinct(part_of(c, w, r));
	return sum;
}

int counter_settle(struct counter *c, struct dd_err *err)
{
	if (!c->back)
		return 0; /* nothing moves: the final walk merges the writers' parts as it reads them */
	int rc = 0;
	pthread_mutex_lock(&c->back_lock);
	note_peak(c);
	for (int r = 0; r < RANGES && !rc; r++)
		for (int w = 0; w < c->writers && !rc; w++)
			rc = spill_part(c, part_of(c, w, r), err);
	if (!rc && c->back->ops->flush(c->back)) {
		err_fail(err, -1, "%s", c->back->err.msg);
		rc = -1;
	}
	pthread_mutex_unlock(&c->back_lock);
	return rc;
}

struct walk_arg {
	struct count_hist h;
	index_visit_fn also;
	void *also_arg;
};

static int to_hist(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct walk_arg *w = arg;
	if (count_hist_add(&w->h, count, 1))
		return -1;
	return w->also ? w->also(fp, count, first, w->also_arg) : 0;
}

/* The walk of the ranges, by threads taking ranges in turn (each range's writers' parts walked as
 * one index): each thread its own histogram and visitor argument. */
struct walk_job {
	struct counter *c;
	struct walk_arg *args;
	int slot, next, failed; /* atomics: the next thread's argument, the next range, a failure */
	char why[600];
};

static void *walk_ranges(void *arg)
{
	struct walk_job *j = arg;
	struct walk_arg *mine = &j->args[__atomic_fetch_add(&j->slot, 1, __ATOMIC_RELAXED)];
	struct gindex **parts = malloc((size_t)j->c->writers * sizeof *parts);
	int r;
	if (!parts && !__atomic_exchange_n(&j->failed, 1, __ATOMIC_RELAXED))
		snprintf(j->why, sizeof j->why, "out of memory building the histogram");
	while (parts && !__atomic_load_n(&j->failed, __ATOMIC_RELAXED) &&
	       (r = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < RANGES) {
		for (int w = 0; w < j->c->writers; w++)
			parts[w] = part_of(j->c, w, r);
		if (index_mem_iterate_all(parts, j->c->writers, to_hist, mine)) {
			if (!__atomic_exchange_n(&j->failed, 1, __ATOMIC_RELAXED))
				snprintf(j->why, sizeof j->why, "%s", parts[0]->err.msg[0] ? parts[0]->err.msg : "out of memory building the histogram");
			break;
		}
	}
	free(parts);
	return NULL;
}

/* Threads that do not start leave their ranges to the others: their visitors see nothing. */
static int walk_parallel(struct counter *c, const struct counter_walkers *w, struct count_hist *h, struct dd_err *err)
{
	int n = w->n < 1 ? 1 : w->n > RANGES ? RANGES : w->n;
	struct walk_arg args[RANGES];
	struct walk_job j = {.c = c, .args = args};
	memset(args, 0, sizeof args);
	for (int k = 0; k < n; k++) {
		args[k].also = w->visit;
		args[k].also_arg = w->args ? w->args[k] : NULL;
	}
	fanout_run((size_t)n, walk_ranges, &j);
	int rc = 0;
	if (j.failed) {
		err_fail(err, -1, "%s", j.why);
		rc = -1;
	}
	for (int k = 0; k < n; k++) {
		size_t slot = 0;
		uint64_t copies, contents;
		while (!rc && u64map_next(&args[k].h.map, &slot, &copies, &contents))
			if (count_hist_add(h, copies, contents)) {
				err_fail(err, -1, "out of memory building the histogram");
				rc = -1;
			}
		count_hist_free(&args[k].h);
	}
	return rc;
}

int counter_distribution(struct counter *c, const uint8_t *zero_fp, index_visit_fn also, void *also_arg,
			 struct dist *out, uint64_t *zero_blocks, uint64_t *zero_first, struct dd_err *err)
{
	void *args[1] = {also_arg};
	struct counter_walkers w = {1, also, args};
	return counter_distribution_by(c, zero_fp, &w, out, zero_blocks, zero_first, err);
}

int counter_distribution_by(struct counter *c, const uint8_t *zero_fp, const struct counter_walkers *walkers,
			    struct dist *out, uint64_t *zero_blocks, uint64_t *zero_first, struct dd_err *err)
{
	struct walk_arg w = {.also = walkers->visit, .also_arg = walkers->args ? walkers->args[0] : NULL};
	struct count_hist *h = &w.h;
	struct dd_err e;
	uint64_t zc = 0, zf = UINT64_MAX;
	int rc = -1;

	memset(out, 0, sizeof *out);
	note_peak(c);
	if (c->back) { /* the parts are empty after settle: everything is in the back, walked in order */
		if (c->back->ops->iterate(c->back, false, false, to_hist, &w)) {
			err_fail(err, -1, "%s", c->back->err.msg[0] ? c->back->err.msg : "out of memory building the histogram");
			goto out;
		}
	} else if (walk_parallel(c, walkers, h, err)) {
		goto out;
	}
	for (int k = 0; zero_fp && k < (c->back ? 1 : c->writers); k++) { /* every writer's share of it */
		struct gindex *src = c->back ? c->back : part_of(c, k, RANGE_OF(zero_fp));
		uint64_t n = 0, f = UINT64_MAX;
		int found = src->ops->lookup(src, zero_fp, &n, &f);
		if (found < 0) {
			err_fail(err, -1, "%s", src->err.msg);
			goto out;
		}
		if (found) {
			zc += n;
			zf = f < zf ? f : zf;
		}
	}
	if (count_hist_to_dist(h, out, &e)) {
		err_fail(err, -1, "%s", h->map.used ? e.msg : "no data: nothing to analyse");
		goto out;
	}
	if (!c->back) { /* the distinct contents the walk found: what the bound and the cost go by */
		struct dist_rows rows;
		dist_compute_rows(out, &rows);
		c->walked_distinct = rows.distinct;
	}
	if (zero_blocks)
		*zero_blocks = zc;
	if (zero_first)
		*zero_first = zf;
	out->zero_blocks = zc;
	rc = 0;
out:
	count_hist_free(h);
	return rc;
}

/* A content seen by several threads has an entry in each one's part: per distinct content,
 * memory costs the peak over the distinct contents the final walk found. With a back (spills),
 * the entries memory held at its peak stand in. */
double counter_bytes_per_distinct(const struct counter *c)
{
	uint64_t n = c->walked_distinct ? c->walked_distinct : c->peak_entries;
	return n ? (double)c->peak_bytes / (double)n : 0.0;
}

uint64_t counter_spills(const struct counter *c)
{
	return c->spills;
}

void counter_free(struct counter *c)
{
	if (!c)
		return;
	for (int i = 0; c->part && i < c->writers * RANGES; i++)
		if (c->part[i])
			c->part[i]->ops->close(c->part[i]);
	free(c->part);
	pthread_mutex_destroy(&c->back_lock);
	free(c);
}
