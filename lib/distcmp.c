/* distcmp.c - power-of-two histograms of copies, total-variation distance and row differences
 * between two duplicate distributions (dedisgen show/compare; any tool checking a workload). */
#include <math.h>
#include <string.h>
#include "distcmp.h"

static int log2_floor(uint64_t c)
{
	return 63 - __builtin_clzll(c);
}

void dist_pow2_histogram(const struct dist *d, struct dist_pow2 *h)
{
	uint64_t t = 0;
	memset(h, 0, sizeof *h);
	h->top = -1;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct dist_row *r = &d->rows[i];
		uint64_t copies = r->dups + 1;
		int k = copies ? log2_floor(copies) : 63; /* dups = UINT64_MAX: the last bucket */
		h->blocks[k] += r->blocks * copies;
		h->contents[k] += r->blocks;
		t += r->blocks * copies;
		if (k > h->top)
			h->top = k;
	}
	for (int k = 0; k < DIST_POW2_BUCKETS && t; k++)
		h->share[k] = (double)h->blocks[k] / (double)t;
}

double dist_tv_distance(const struct dist_pow2 *a, const struct dist_pow2 *b)
{
	double s = 0;
	for (int k = 0; k < DIST_POW2_BUCKETS; k++)
		s += fabs(a->share[k] - b->share[k]);
	return s / 2;
}

void dist_compare(const struct dist *a, const struct dist *b, struct dist_diff *out)
{
	struct dist_pow2 ha, hb;
	memset(out, 0, sizeof *out);
	dist_compute_rows(a, &out->a);
	dist_compute_rows(b, &out->b);
	out->du0 = 100 * (out->b.u0 - out->a.u0);
	out->du1 = 100 * (out->b.u1 - out->a.u1);
	out->dd = 100 * (out->b.d - out->a.d);
	out->max_pp = fmax(fabs(out->du0), fmax(fabs(out->du1), fabs(out->dd)));
	if (out->a.ratio > 0)
		out->ratio_err = (out->b.ratio - out->a.ratio) / out->a.ratio;
	dist_pow2_histogram(a, &ha);
	dist_pow2_histogram(b, &hb);
	out->tv = dist_tv_distance(&ha, &hb);
}
