/* compare.c - dedisgen show / compare: a distribution's rows, power-of-two histogram of copies
 * and most-copied contents; two distributions' rows side by side with their distances. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "compare.h"
#include "report.h"

static void copies_range(int k, char *buf, size_t len)
{
	uint64_t lo = 1ULL << k, hi = k == 63 ? UINT64_MAX : (1ULL << (k + 1)) - 1;
	if (lo == hi)
		snprintf(buf, len, "%" PRIu64, lo);
	else
		snprintf(buf, len, "%" PRIu64 "-%" PRIu64, lo, hi);
}

static void header_text(FILE *out, const struct dist *d)
{
	if (d->block_size || d->hash[0]) {
		fprintf(out, "  block size %" PRIu64 ", hash %s, zero blocks %" PRIu64 "\n", d->block_size,
			d->hash[0] ? d->hash : "?", d->zero_blocks);
	}
}

void show_text(FILE *out, const char *name, const struct dist *d, uint64_t top)
{
	struct dist_rows r;
	struct dist_pow2 h;
	dist_compute_rows(d, &r);
	dist_pow2_histogram(d, &h);
	fprintf(out, "%s\n", name);
	header_text(out, d);
	fprintf(out, "  blocks (T)           %" PRIu64 "\n", r.total_blocks);
	fprintf(out, "  distinct contents    %" PRIu64 "\n", r.distinct);
	fprintf(out, "  U0 unique            %7.3f %%\n", 100 * r.u0);
	fprintf(out, "  U1 first copies      %7.3f %%\n", 100 * r.u1);
	fprintf(out, "  D  redundant copies  %7.3f %%\n", 100 * r.d);
	fprintf(out, "  dedup ratio          %.4f\n", r.ratio);
	fprintf(out, "\n  histogram of copies (block-weighted)\n  %-22s %14s %16s %8s\n", "copies", "contents", "blocks",
		"share");
	for (int k = 0; k <= h.top; k++) {
		char range[48];
		if (!h.blocks[k])
			continue;
		copies_range(k, range, sizeof range);
		fprintf(out, "  %-22s %14" PRIu64 " %16" PRIu64 " %7.3f%%\n", range, h.contents[k], h.blocks[k],
			100 * h.share[k]);
	}
	if (top) {
		fprintf(out, "\n  most-copied contents\n  %16s %14s %8s\n", "copies", "contents", "share");
		uint64_t shown = 0;
		for (size_t i = d->nrows; i-- > 0 && shown < top;) {
			const struct dist_row *w = &d->rows[i];
			double share = r.total_blocks ? (double)(w->blocks * (w->dups + 1)) / (double)r.total_blocks : 0;
			fprintf(out, "  %16" PRIu64 " %14" PRIu64 " %7.3f%%\n", w->dups + 1, w->blocks, 100 * share);
			shown += w->blocks;
		}
	}
}

json_t *pow2_json(const struct dist *d)
{
	struct dist_pow2 h;
	json_t *a = json_array();
	dist_pow2_histogram(d, &h);
	for (int k = 0; k <= h.top; k++) {
		if (!h.blocks[k])
			continue;
		uint64_t hi = k == 63 ? UINT64_MAX : (1ULL << (k + 1)) - 1;
		json_array_append_new(a, json_pack("{s:I,s:I,s:I,s:I,s:f}", "copies_min", (json_int_t)(1ULL << k),
						   "copies_max", (json_int_t)hi, "contents", (json_int_t)h.contents[k],
						   "blocks", (json_int_t)h.blocks[k], "share", h.share[k]));
	}
	return a;
}

json_t *show_json(const char *name, const struct dist *d, uint64_t top)
{
	struct dist_rows r;
	dist_compute_rows(d, &r);
	json_t *o = json_object(), *t = json_array();
	json_object_set_new(o, "file", json_string(name));
	if (d->block_size)
		json_object_set_new(o, "block_size", json_integer((json_int_t)d->block_size));
	if (d->hash[0])
		json_object_set_new(o, "hash", json_string(d->hash));
	json_object_set_new(o, "zero_blocks", json_integer((json_int_t)d->zero_blocks));
	json_object_set_new(o, "rows", report_dist_rows(&r));
	json_object_set_new(o, "histogram", pow2_json(d));
	uint64_t shown = 0;
	for (size_t i = d->nrows; i-- > 0 && shown < top;) {
		const struct dist_row *w = &d->rows[i];
		json_array_append_new(t, json_pack("{s:I,s:I}", "copies", (json_int_t)(w->dups + 1), "contents",
						   (json_int_t)w->blocks));
		shown += w->blocks;
	}
	json_object_set_new(o, "top", t);
	return o;
}

bool compare_within(const struct dist_diff *df, double max_diff)
{
	return max_diff < 0 || df->max_pp <= max_diff + 1e-9;
}

void compare_text(FILE *out, const char *na, const char *nb, const struct dist_diff *df, double max_diff)
{
	fprintf(out, "A: %s\nB: %s\n\n%-22s %14s %14s %12s\n", na, nb, "", "A", "B", "B - A");
	fprintf(out, "%-22s %14" PRIu64 " %14" PRIu64 "\n", "blocks (T)", df->a.total_blocks, df->b.total_blocks);
	fprintf(out, "%-22s %14" PRIu64 " %14" PRIu64 "\n", "distinct contents", df->a.distinct, df->b.distinct);
	fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "U0 unique", 100 * df->a.u0, 100 * df->b.u0, df->du0);
	fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "U1 first copies", 100 * df->a.u1, 100 * df->b.u1, df->du1);
	fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "D  redundant copies", 100 * df->a.d, 100 * df->b.d, df->dd);
	fprintf(out, "%-22s %14.4f %14.4f %+10.3f %%\n", "dedup ratio", df->a.ratio, df->b.ratio, 100 * df->ratio_err);
	fprintf(out, "\nlargest row difference: %.3f pp\n", df->max_pp);
	fprintf(out, "total-variation distance (histograms of copies): %.4f\n", df->tv);
	if (max_diff >= 0)
		fprintf(out, "%s: every row within %.3f pp\n", compare_within(df, max_diff) ? "OK" : "DIFFERENT",
			max_diff);
}

json_t *compare_json(const char *na, const char *nb, const struct dist_diff *df, double max_diff)
{
	json_t *o = json_object();
	json_object_set_new(o, "a", json_pack("{s:s,s:o}", "file", na, "rows", report_dist_rows(&df->a)));
	json_object_set_new(o, "b", json_pack("{s:s,s:o}", "file", nb, "rows", report_dist_rows(&df->b)));
	json_object_set_new(o, "diff", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "U0_pp", df->du0, "U1_pp", df->du1, "D_pp",
						 df->dd, "max_pp", df->max_pp, "ratio_err", df->ratio_err, "tv", df->tv));
	json_object_set_new(o, "max_diff", max_diff >= 0 ? json_real(max_diff) : json_null());
	json_object_set_new(o, "within", json_boolean(compare_within(df, max_diff)));
	return o;
}
