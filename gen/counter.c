/* counter.c - one block size's counts: a mutex, the memory index in front and an optional
 * Berkeley DB index behind, spilled to in fingerprint order (B-tree friendly) at --mem-limit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counter.h"
#include "counts.h"

struct counter {
	pthread_mutex_t lock;
	struct gindex *mem, *back;
	uint64_t spills;
	uint64_t peak_entries, peak_bytes;
};

struct counter *counter_new(size_t fp_len, uint64_t mem_limit, struct gindex *back)
{
	struct counter *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	if (!(c->mem = index_mem_open(fp_len, back ? mem_limit : 0))) {
		free(c);
		return NULL;
	}
	c->back = back;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

static void note_peak(struct counter *c)
{
	uint64_t n = c->mem->ops->distinct(c->mem);
	if (n > c->peak_entries) {
		c->peak_entries = n;
		c->peak_bytes = c->mem->ops->bytes(c->mem);
	}
}

static int to_back(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct gindex *back = arg;
	return back->ops->add(back, fp, count, first) ? -1 : 0;
}

static int spill(struct counter *c, char *why, size_t whylen)
{
	note_peak(c);
	if (!c->back || c->mem->ops->distinct(c->mem) == 0)
		return 0;
	if (c->mem->ops->iterate(c->mem, true, true, to_back, c->back)) {
		snprintf(why, whylen, "spilling the index: %s", c->back->err);
		return -1;
	}
	c->spills++;
	return 0;
}

/* each == 0: a batch (count 1 each, positions first, first + 1, ...); else one fingerprint
 * (n == 1) counted `each` times at position first. */
static int add_locked(struct counter *c, const uint8_t *fps, size_t n, uint64_t each, uint64_t first, char *why,
		      size_t whylen)
{
	size_t fl = c->mem->fp_len;
	while (n > 0) {
		size_t done = 0;
		int rc = each == 0 ? c->mem->ops->add_batch(c->mem, fps, n, first, &done)
				   : c->mem->ops->add(c->mem, fps, each, first);
		if (each != 0 && rc == 0)
			done = 1;
		fps += done * fl;
		n -= done;
		if (each == 0)
			first += done;
		if (rc == 0)
			continue;
		if (rc != INDEX_FULL) {
			snprintf(why, whylen, "%s", c->mem->err);
			return -1;
		}
		if (c->mem->ops->distinct(c->mem) == 0) {
			/* A limit below one table: straight to the back. */
			if (c->back->ops->add(c->back, fps, each ? each : 1, first)) {
				snprintf(why, whylen, "%s", c->back->err);
				return -1;
			}
			fps += fl;
			n--;
			first += each == 0;
			continue;
		}
		if (spill(c, why, whylen))
			return -1;
	}
	return 0;
}

int counter_add_batch(struct counter *c, const uint8_t *fps, size_t n, uint64_t first, char *why, size_t whylen)
{
	pthread_mutex_lock(&c->lock);
	int rc = add_locked(c, fps, n, 0, first, why, whylen);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int counter_add(struct counter *c, const uint8_t *fp, uint64_t n, uint64_t first, char *why, size_t whylen)
{
	if (n == 0)
		return 0;
	pthread_mutex_lock(&c->lock);
	int rc = add_locked(c, fp, 1, n, first, why, whylen);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int counter_settle(struct counter *c, char *why, size_t whylen)
{
	pthread_mutex_lock(&c->lock);
	int rc = spill(c, why, whylen);
	if (!rc && c->back && c->back->ops->flush(c->back)) {
		snprintf(why, whylen, "%s", c->back->err);
		rc = -1;
	}
	pthread_mutex_unlock(&c->lock);
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

int counter_distribution(struct counter *c, const uint8_t *zero_fp, index_visit_fn also, void *also_arg,
			 struct dist *out, uint64_t *zero_blocks, uint64_t *zero_first, char *why, size_t whylen)
{
	struct gindex *src = c->back ? c->back : c->mem;
	struct walk_arg w = {.also = also, .also_arg = also_arg};
	struct count_hist *h = &w.h;
	struct dist_error e;
	uint64_t zc = 0, zf = UINT64_MAX;
	int rc = -1;

	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&c->lock);
	note_peak(c);
	if (src->ops->iterate(src, false, false, to_hist, &w)) {
		snprintf(why, whylen, "%s", src->err[0] ? src->err : "out of memory building the histogram");
		goto out;
	}
	if (zero_fp && src->ops->lookup(src, zero_fp, &zc, &zf) < 0) {
		snprintf(why, whylen, "%s", src->err);
		goto out;
	}
	if (count_hist_to_dist(h, out, &e)) {
		snprintf(why, whylen, "%s", h->n ? e.msg : "no data: nothing to analyse");
		goto out;
	}
	if (zero_blocks)
		*zero_blocks = zc;
	if (zero_first)
		*zero_first = zf;
	out->zero_blocks = zc;
	rc = 0;
out:
	pthread_mutex_unlock(&c->lock);
	count_hist_free(h);
	return rc;
}

double counter_bytes_per_distinct(const struct counter *c)
{
	return c->peak_entries ? (double)c->peak_bytes / (double)c->peak_entries : 0.0;
}

uint64_t counter_spills(const struct counter *c)
{
	return c->spills;
}

void counter_free(struct counter *c)
{
	if (!c)
		return;
	c->mem->ops->close(c->mem);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
