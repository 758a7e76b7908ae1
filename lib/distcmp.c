/* distcmp.c - power-of-two histograms of copies, total-variation distance and row differences
 * between two duplicate distributions (dedisgen show/compare; any tool checking a workload). */
#include <math.h>
#include <string.h>
#include "lib/distcmp.h"

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

const char *const dist_group_names[DIST_GROUPS] = {"all", "1", "2-3", "4-15", "16+"};

static int group_of(int cls)
{
	return cls == 0 ? 1 : cls == 1 ? 2 : cls <= 3 ? 3 : 4;
}

void dist_comp_figures(const struct dist_comp *c, struct dist_comp_figures *f)
{
	double n = 0, zs = 0, ls = 0;
	memset(f, 0, sizeof *f);
	if (!c->present)
		return;
	for (size_t i = 0; i < c->ncells; i++) {
		const struct dist_comp_cell *x = &c->cells[i];
		double k = (double)x->contents;
		int g = group_of(x->cls), e = x->zstd_bucket / (DIST_COMP_BUCKETS / 8);
		n += k;
		zs += k * x->zstd_mean;
		ls += k * x->lz4_mean;
		f->contents[0] += k;
		f->contents[g] += k;
		f->eighths[0][e] += k;
		f->eighths[g][e] += k;
	}
	f->zstd_ratio = zs > 0 ? n * DIST_COMP_UNIT / zs : 0;
	f->lz4_ratio = ls > 0 ? n * DIST_COMP_UNIT / ls : 0;
	for (int g = 0; g < DIST_GROUPS; g++)
		for (int e = 0; e < 8 && f->contents[g] > 0; e++)
			f->eighths[g][e] /= f->contents[g];
}

void dist_loc_figures(const struct dist_locality *l, struct dist_loc_figures *f)
{
	uint64_t runs = 0, long_blocks = 0;
	memset(f, 0, sizeof *f);
	if (!l->present)
		return;
	for (int k = 0; k < DIST_LEN_BINS; k++) {
		runs += l->dup_runs.count[k];
		if (k >= 3) /* bin 3 holds lengths 8..15 */
			long_blocks += l->dup_runs.blocks[k];
	}
	double d = (double)l->duplicates;
	f->dup_share = l->analysed ? d / (double)l->analysed : 0;
	f->runs_ge8_share = d > 0 ? (double)long_blocks / d : 0;
	f->sequential_share = d > 0 ? (double)l->sequential / d : 0;
	f->mean_dup_run = runs ? d / (double)runs : 0;
}

void dist_compare_sections(const struct dist *a, const struct dist *b, struct dist_sect_diff *out)
{
	memset(out, 0, sizeof *out);
	out->comp = a->comp.present && b->comp.present;
	out->loc = a->locality.present && b->locality.present;
	dist_comp_figures(&a->comp, &out->ca);
	dist_comp_figures(&b->comp, &out->cb);
	if (out->comp) {
		if (out->ca.zstd_ratio > 0)
			out->zstd_ratio_err = (out->cb.zstd_ratio - out->ca.zstd_ratio) / out->ca.zstd_ratio;
		if (out->ca.lz4_ratio > 0)
			out->lz4_ratio_err = (out->cb.lz4_ratio - out->ca.lz4_ratio) / out->ca.lz4_ratio;
		for (int g = 0; g < DIST_GROUPS; g++) {
			double tv = 0;
			if (!(out->ca.contents[g] > 0 && out->cb.contents[g] > 0))
				continue;
			for (int e = 0; e < 8; e++)
				tv += fabs(out->ca.eighths[g][e] - out->cb.eighths[g][e]);
			out->tv_eighths[g] = tv / 2;
		}
	}
	dist_loc_figures(&a->locality, &out->la);
	dist_loc_figures(&b->locality, &out->lb);
}
