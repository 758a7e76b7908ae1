/* compare.c - dedisgen show / compare: a distribution's rows, power-of-two histogram of copies,
 * most-copied contents and sections; two distributions side by side with their distances. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gen/alignshow.h"
#include "gen/compare.h"
#include "lib/report.h"

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

static void rate_text(double p, char *buf, size_t len)
{
	if (p >= 1)
		snprintf(buf, len, "all");
	else if (p > 0 && 1 / p == (double)(uint64_t)(1 / p))
		snprintf(buf, len, "1/%" PRIu64, (uint64_t)(1 / p));
	else
		snprintf(buf, len, "%g", p);
}

static void window_text(const struct dist_locality *l, char *buf, size_t len)
{
	if (l->window)
		snprintf(buf, len, "windows of %" PRIu64 " blocks", l->window);
	else
		snprintf(buf, len, "the whole stream");
}

/* Bytes over compressed bytes (0 when nothing was measured at that size). */
static double gran_ratio(uint64_t bytes, uint64_t out)
{
	return out ? (double)bytes / (double)out : 0;
}

/* The curve as a table: one line per piece size. */
static void gran_table(FILE *out, const struct dist_gran *g)
{
	char rate[32];
	rate_text(g->sample_rate, rate, sizeof rate);
	fprintf(out, "\n  granularity (128 KiB windows aligned in their file, sample %s, %" PRIu64 " measured; each piece\n"
		     "    compressed alone, all-zero pieces left out)\n", rate, g->windows);
	fprintf(out, "    %-8s %10s %10s %10s %12s\n", "piece", "zstd -1", "zstd -3", "LZ4", "pieces");
	for (int k = 0; k < DIST_GRAN_SIZES; k++) {
		char size[16];
		snprintf(size, sizeof size, "%u KiB", (DIST_GRAN_MIN << k) >> 10);
		fprintf(out, "    %-8s %8.3f:1 %8.3f:1 %8.3f:1 %12" PRIu64 "\n", size, gran_ratio(g->bytes[k], g->zstd1[k]),
			gran_ratio(g->bytes[k], g->zstd3[k]), gran_ratio(g->bytes[k], g->lz4[k]),
			g->bytes[k] / ((uint64_t)DIST_GRAN_MIN << k));
	}
}

void sections_text(FILE *out, const struct dist *d, const char *indent)
{
	if (d->comp.present) {
		struct dist_comp_figures f;
		char rate[32];
		dist_comp_figures(&d->comp, &f);
		rate_text(d->comp.sample_rate, rate, sizeof rate);
		fprintf(out, "%scompressibility: sample %s, %" PRIu64 " contents measured; after dedup zstd -1 %.3f:1, "
			"LZ4 %.3f:1\n", indent, rate, d->comp.measured, f.zstd_ratio, f.lz4_ratio);
	}
	if (d->locality.present) {
		struct dist_loc_figures f;
		char win[64];
		dist_loc_figures(&d->locality, &f);
		window_text(&d->locality, win, sizeof win);
		fprintf(out, "%slocality: %" PRIu64 " blocks analysed (%s); duplicates %.1f %%: %.1f %% of them in runs "
			">= 8, %.1f %% with a sequential source, mean run %.2f blocks\n", indent, d->locality.analysed, win,
			100 * f.dup_share, 100 * f.runs_ge8_share, 100 * f.sequential_share, f.mean_dup_run);
	}
	if (d->gran.present) {
		const struct dist_gran *g = &d->gran;
		const int last = DIST_GRAN_SIZES - 1;
		char rate[32];
		rate_text(g->sample_rate, rate, sizeof rate);
		fprintf(out, "%sgranularity: sample %s, %" PRIu64 " window%s; 4 KiB -> 128 KiB pieces zstd -1 %.3f -> %.3f:1, "
			"zstd -3 %.3f -> %.3f:1, LZ4 %.3f -> %.3f:1\n", indent, rate, g->windows, g->windows == 1 ? "" : "s",
			gran_ratio(g->bytes[0], g->zstd1[0]),
			gran_ratio(g->bytes[last], g->zstd1[last]), gran_ratio(g->bytes[0], g->zstd3[0]),
			gran_ratio(g->bytes[last], g->zstd3[last]), gran_ratio(g->bytes[0], g->lz4[0]),
			gran_ratio(g->bytes[last], g->lz4[last]));
	}
	align_cdc_summary(out, d, indent);
}

static void show_sections(FILE *out, const struct dist *d)
{
	if (d->comp.present) {
		struct dist_comp_figures f;
		char rate[32];
		dist_comp_figures(&d->comp, &f);
		rate_text(d->comp.sample_rate, rate, sizeof rate);
		fprintf(out, "\n  compressibility (each distinct block compressed alone; sample %s, %" PRIu64
			" contents measured; the zero block left out)\n", rate, d->comp.measured);
		fprintf(out, "    after dedup: zstd -1 %.3f:1, LZ4 %.3f:1\n", f.zstd_ratio, f.lz4_ratio);
		/* eighth e holds sizes in [e/8, (e+1)/8) of the block, the last also the whole block */
		fprintf(out, "    share of distinct contents by compressed size (zstd -1, of the block), per copies;\n"
			     "    contents estimated from the sample\n");
		fprintf(out, "    %-6s %10s", "copies", "contents");
		for (int e = 1; e < 8; e++) {
			char head[8];
			snprintf(head, sizeof head, "<%d/8", e);
			fprintf(out, " %6s", head);
		}
		fprintf(out, " %6s\n", ">=7/8");
		for (int g = 0; g < DIST_GROUPS; g++) {
			fprintf(out, "    %-6s %10.0f", dist_group_names[g], f.contents[g]);
			for (int e = 0; e < 8; e++)
				fprintf(out, " %6.3f", f.eighths[g][e]);
			fputc('\n', out);
		}
	}
	if (d->locality.present) {
		const struct dist_locality *l = &d->locality;
		struct dist_loc_figures f;
		char win[64];
		dist_loc_figures(l, &f);
		window_text(l, win, sizeof win);
		fprintf(out, "\n  locality (%" PRIu64 " blocks analysed, %s)\n", l->analysed, win);
		fprintf(out, "    duplicates             %7.3f %%\n", 100 * f.dup_share);
		fprintf(out, "    in runs >= 8           %7.3f %% of duplicates\n", 100 * f.runs_ge8_share);
		fprintf(out, "    sequential source      %7.3f %% of duplicates\n", 100 * f.sequential_share);
		fprintf(out, "    mean duplicate run     %7.2f blocks\n", f.mean_dup_run);
		const struct dist_len_hist *h[4] = {&l->new_runs, &l->dup_runs, &l->copy_runs, &l->zero_runs};
		int top = -1;
		for (int k = 0; k < 4; k++)
			for (int b = 0; b < DIST_LEN_BINS; b++)
				if (h[k]->count[b] && b > top)
					top = b;
		fprintf(out, "    runs by length (runs / blocks)\n    %-16s %21s %21s %21s %21s\n", "length", "new", "duplicate",
			"copied sequence", "zero block");
		for (int b = 0; b <= top; b++) {
			char range[48], cell[4][32];
			copies_range(b, range, sizeof range);
			for (int k = 0; k < 4; k++)
				snprintf(cell[k], sizeof cell[k], "%" PRIu64 " / %" PRIu64, h[k]->count[b], h[k]->blocks[b]);
			fprintf(out, "    %-16s %21s %21s %21s %21s\n", range, cell[0], cell[1], cell[2], cell[3]);
		}
	}
	if (d->gran.present)
		gran_table(out, &d->gran);
	align_cdc_tables(out, d);
}

json_t *comp_json(const struct dist_comp *c)
{
	if (!c->present)
		return json_null();
	struct dist_comp_figures f;
	dist_comp_figures(c, &f);
	json_t *o = json_pack("{s:f,s:I,s:f,s:f}", "sample_rate", c->sample_rate, "measured", (json_int_t)c->measured,
			      "zstd_ratio", f.zstd_ratio, "lz4_ratio", f.lz4_ratio);
	json_t *eighths = json_object(), *contents = json_object();
	for (int g = 0; g < DIST_GROUPS; g++) {
		json_t *a = json_array();
		for (int e = 0; e < 8; e++)
			json_array_append_new(a, json_real(f.eighths[g][e]));
		json_object_set_new(eighths, dist_group_names[g], a);
		json_object_set_new(contents, dist_group_names[g], json_real(f.contents[g]));
	}
	json_object_set_new(o, "zstd_eighths", eighths);
	json_object_set_new(o, "contents", contents);
	return o;
}

json_t *loc_json(const struct dist_locality *l)
{
	if (!l->present)
		return json_null();
	struct dist_loc_figures f;
	dist_loc_figures(l, &f);
	return json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f}", "analysed", (json_int_t)l->analysed, "window",
			 (json_int_t)l->window, "duplicates", (json_int_t)l->duplicates, "sequential",
			 (json_int_t)l->sequential, "dup_share", f.dup_share, "runs_ge8_share", f.runs_ge8_share,
			 "sequential_share", f.sequential_share, "mean_dup_run", f.mean_dup_run);
}

json_t *gran_json(const struct dist_gran *g)
{
	if (!g->present)
		return json_null();
	json_t *pieces = json_array();
	for (int k = 0; k < DIST_GRAN_SIZES; k++)
		json_array_append_new(pieces, json_pack("{s:I,s:I,s:f,s:f,s:f}", "size", (json_int_t)(DIST_GRAN_MIN << k),
							"bytes", (json_int_t)g->bytes[k], "zstd1_ratio",
							gran_ratio(g->bytes[k], g->zstd1[k]), "zstd3_ratio",
							gran_ratio(g->bytes[k], g->zstd3[k]), "lz4_ratio",
							gran_ratio(g->bytes[k], g->lz4[k])));
	return json_pack("{s:f,s:I,s:o}", "sample_rate", g->sample_rate, "windows", (json_int_t)g->windows, "pieces",
			 pieces);
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
	show_sections(out, d);
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
		/* a record may hold up to 2^64 - 1 contents or copies: reals past json_int_t, not -1 */
		json_array_append_new(a, json_pack("{s:o,s:o,s:o,s:o,s:f}", "copies_min", report_count(1ULL << k),
						   "copies_max", report_count(hi), "contents", report_count(h.contents[k]),
						   "blocks", report_count(h.blocks[k]), "share", h.share[k]));
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
	json_object_set_new(o, "zero_blocks", report_count(d->zero_blocks));
	json_object_set_new(o, "rows", report_dist_rows(&r));
	json_object_set_new(o, "histogram", pow2_json(d));
	uint64_t shown = 0;
	for (size_t i = d->nrows; i-- > 0 && shown < top;) {
		const struct dist_row *w = &d->rows[i];
		json_array_append_new(t, json_pack("{s:o,s:o}", "copies", report_count(w->dups + 1), "contents",
						   report_count(w->blocks)));
		shown += w->blocks;
	}
	json_object_set_new(o, "top", t);
	json_object_set_new(o, "compressibility", comp_json(&d->comp));
	json_object_set_new(o, "locality", loc_json(&d->locality));
	json_object_set_new(o, "granularity", gran_json(&d->gran));
	json_object_set_new(o, "alignment", align_json(&d->align, d->block_size));
	json_object_set_new(o, "cdc", cdc_json(&d->cdc));
	return o;
}

bool compare_within(const struct compare_result *c, const struct compare_limits *lim, struct dd_err *err)
{
	const struct dist_sect_diff *x = &c->sect;
	struct dd_err spare;
	if (!err)
		err = &spare;
	err_clear(err);
	if (lim->max_diff >= 0 && c->rows.max_pp > lim->max_diff + 1e-9)
		err_fail(err, -1, "a row differs by %.3f pp (--max-diff %g)", c->rows.max_pp, lim->max_diff);
	else if ((lim->max_ratio_diff >= 0 || lim->max_tv >= 0) && !x->comp)
		err_fail(err, -1, "%s has no compressibility section", x->ca.contents[0] > 0 ? "B" : "A");
	else if (lim->max_ratio_diff >= 0 && 100 * fabs(x->zstd_ratio_err) > lim->max_ratio_diff + 1e-9)
		err_fail(err, -1, "the after-dedup zstd -1 ratio differs by %+.2f %% (--max-ratio-diff %g)",
			 100 * x->zstd_ratio_err, lim->max_ratio_diff);
	else if (lim->max_ratio_diff >= 0 && 100 * fabs(x->lz4_ratio_err) > lim->max_ratio_diff + 1e-9)
		err_fail(err, -1, "the after-dedup LZ4 ratio differs by %+.2f %% (--max-ratio-diff %g)",
			 100 * x->lz4_ratio_err, lim->max_ratio_diff);
	else if (lim->max_tv >= 0 && x->tv_eighths[0] > lim->max_tv + 1e-12)
		err_fail(err, -1, "the zstd -1 size histograms are %.4f apart (--max-tv %g)", x->tv_eighths[0],
			 lim->max_tv);
	else if (lim->max_loc_diff >= 0 && !x->loc)
		err_fail(err, -1, "%s has no locality section", x->la.dup_share > 0 || x->la.mean_dup_run > 0 ? "B" : "A");
	else if (lim->max_loc_diff >= 0 && 100 * fabs(x->lb.runs_ge8_share - x->la.runs_ge8_share) > lim->max_loc_diff + 1e-9)
		err_fail(err, -1, "the share of duplicates in runs >= 8 differs by %+.2f pp (--max-locality-diff %g)",
			 100 * (x->lb.runs_ge8_share - x->la.runs_ge8_share), lim->max_loc_diff);
	else if (lim->max_loc_diff >= 0 &&
		 100 * fabs(x->lb.sequential_share - x->la.sequential_share) > lim->max_loc_diff + 1e-9)
		err_fail(err, -1, "the sequential-source share differs by %+.2f pp (--max-locality-diff %g)",
			 100 * (x->lb.sequential_share - x->la.sequential_share), lim->max_loc_diff);
	return err->msg[0] == 0;
}

static void compare_sections_text(FILE *out, const struct dist_sect_diff *x)
{
	if (x->comp) {
		fprintf(out, "\ncompressibility (after dedup, each block alone)\n");
		fprintf(out, "%-22s %12.3f:1 %12.3f:1 %+10.3f %%\n", "zstd -1 ratio", x->ca.zstd_ratio, x->cb.zstd_ratio,
			100 * x->zstd_ratio_err);
		fprintf(out, "%-22s %12.3f:1 %12.3f:1 %+10.3f %%\n", "LZ4 ratio", x->ca.lz4_ratio, x->cb.lz4_ratio,
			100 * x->lz4_ratio_err);
		fprintf(out, "total-variation distance (zstd -1 size eighths), by copies:");
		for (int g = 0; g < DIST_GROUPS; g++) {
			if (x->ca.contents[g] > 0 && x->cb.contents[g] > 0)
				fprintf(out, " %s %.4f%s", dist_group_names[g], x->tv_eighths[g], g + 1 < DIST_GROUPS ? "," : "");
			else
				fprintf(out, " %s -%s", dist_group_names[g], g + 1 < DIST_GROUPS ? "," : "");
		}
		fputc('\n', out);
	} else if (x->ca.contents[0] > 0 || x->cb.contents[0] > 0) {
		fprintf(out, "\ncompressibility: only %s has the section\n", x->ca.contents[0] > 0 ? "A" : "B");
	}
	if (x->loc) {
		fprintf(out, "\nlocality\n");
		fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "duplicates", 100 * x->la.dup_share,
			100 * x->lb.dup_share, 100 * (x->lb.dup_share - x->la.dup_share));
		fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "in runs >= 8", 100 * x->la.runs_ge8_share,
			100 * x->lb.runs_ge8_share, 100 * (x->lb.runs_ge8_share - x->la.runs_ge8_share));
		fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "sequential source", 100 * x->la.sequential_share,
			100 * x->lb.sequential_share, 100 * (x->lb.sequential_share - x->la.sequential_share));
		fprintf(out, "%-22s %14.2f %14.2f\n", "mean duplicate run", x->la.mean_dup_run, x->lb.mean_dup_run);
	}
}

void compare_dists(const struct dist *a, const struct dist *b, struct compare_result *out)
{
	memset(out, 0, sizeof *out);
	dist_compare(a, b, &out->rows);
	dist_compare_sections(a, b, &out->sect);
	uint64_t ta = out->rows.a.total_blocks, tb = out->rows.b.total_blocks;
	const struct dist *big = ta >= tb ? a : b;
	uint64_t tbig = ta >= tb ? ta : tb, small = ta >= tb ? tb : ta;
	if (!small || tbig == small)
		return;
	/* dedisbench's rule (bench/content/dupgen.c, scaled_build): dominant above n/64 copies, at least 2 */
	out->dominant_above = small / 64 > 2 ? small / 64 : 2;
	uint64_t blocks = 0;
	for (size_t i = 0; i < big->nrows; i++)
		if (big->rows[i].dups + 1 > out->dominant_above) {
			out->dominant_contents += big->rows[i].blocks;
			blocks += big->rows[i].blocks * (big->rows[i].dups + 1);
		}
	if (!out->dominant_contents)
		return;
	out->dominant_share = (double)blocks / (double)tbig;
	snprintf(out->scale_note, sizeof out->scale_note,
		 "%s holds %" PRIu64 " blocks, %s %" PRIu64 ": %s's %" PRIu64 " content%s with more than %" PRIu64
		 " copies (1/64 of %s, %.2f %% of its blocks) cannot keep their copy count at %s's size; a run scaled "
		 "from %s keeps their share with fewer copies, so their buckets move left. To judge a run, compare it "
		 "with its scaled target (dedisbench --output-dir DIR: DIR/scaled-target.dist)",
		 big == a ? "A" : "B", tbig, big == a ? "B" : "A", small, big == a ? "A" : "B", out->dominant_contents,
		 out->dominant_contents == 1 ? "" : "s", out->dominant_above, big == a ? "B" : "A",
		 100 * out->dominant_share, big == a ? "B" : "A", big == a ? "A" : "B");
}

void compare_text(FILE *out, const char *na, const char *nb, const struct compare_result *c,
		  const struct compare_limits *lim)
{
	const struct dist_diff *df = &c->rows;
	struct dd_err why = {0};
	fprintf(out, "A: %s\nB: %s\n\n%-22s %14s %14s %12s\n", na, nb, "", "A", "B", "B - A");
	fprintf(out, "%-22s %14" PRIu64 " %14" PRIu64 "\n", "blocks (T)", df->a.total_blocks, df->b.total_blocks);
	fprintf(out, "%-22s %14" PRIu64 " %14" PRIu64 "\n", "distinct contents", df->a.distinct, df->b.distinct);
	fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "U0 unique", 100 * df->a.u0, 100 * df->b.u0, df->du0);
	fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "U1 first copies", 100 * df->a.u1, 100 * df->b.u1, df->du1);
	fprintf(out, "%-22s %12.3f %% %12.3f %% %+9.3f pp\n", "D  redundant copies", 100 * df->a.d, 100 * df->b.d, df->dd);
	fprintf(out, "%-22s %14.4f %14.4f %+10.3f %%\n", "dedup ratio", df->a.ratio, df->b.ratio, 100 * df->ratio_err);
	fprintf(out, "\nlargest row difference: %.3f pp\n", df->max_pp);
	fprintf(out, "total-variation distance (histograms of copies): %.4f\n", df->tv);
	if (c->scale_note[0])
		fprintf(out, "scale: %s\n", c->scale_note);
	compare_sections_text(out, &c->sect);
	bool any = lim->max_diff >= 0 || lim->max_ratio_diff >= 0 || lim->max_tv >= 0 || lim->max_loc_diff >= 0;
	if (!any)
		return;
	if (compare_within(c, lim, &why))
		fprintf(out, "\nOK: within every limit given\n");
	else
		fprintf(out, "\nDIFFERENT: %s\n", why.msg);
}

static json_t *limit_json(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

json_t *compare_json(const char *na, const char *nb, const struct compare_result *c, const struct compare_limits *lim)
{
	const struct dist_diff *df = &c->rows;
	const struct dist_sect_diff *x = &c->sect;
	struct dd_err why = {0};
	json_t *o = json_object();
	json_object_set_new(o, "a", json_pack("{s:s,s:o}", "file", na, "rows", report_dist_rows(&df->a)));
	json_object_set_new(o, "b", json_pack("{s:s,s:o}", "file", nb, "rows", report_dist_rows(&df->b)));
	json_object_set_new(o, "diff", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "U0_pp", df->du0, "U1_pp", df->du1, "D_pp",
						 df->dd, "max_pp", df->max_pp, "ratio_err", df->ratio_err, "tv", df->tv));
	json_object_set_new(o, "scale",
			    c->scale_note[0] ? json_pack("{s:I,s:I,s:f,s:s}", "dominant_above", (json_int_t)c->dominant_above,
							 "dominant_contents", (json_int_t)c->dominant_contents,
							 "dominant_share", c->dominant_share, "note", c->scale_note)
					     : json_null());
	if (x->comp) {
		json_t *tv = json_object();
		for (int g = 0; g < DIST_GROUPS; g++)
			json_object_set_new(tv, dist_group_names[g], x->ca.contents[g] > 0 && x->cb.contents[g] > 0
									 ? json_real(x->tv_eighths[g]) : json_null());
		json_object_set_new(o, "compressibility", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:o}", "a_zstd_ratio",
								     x->ca.zstd_ratio, "b_zstd_ratio", x->cb.zstd_ratio,
								     "a_lz4_ratio", x->ca.lz4_ratio, "b_lz4_ratio",
								     x->cb.lz4_ratio, "zstd_ratio_err", x->zstd_ratio_err,
								     "lz4_ratio_err", x->lz4_ratio_err, "tv_eighths", tv));
	} else {
		json_object_set_new(o, "compressibility", json_null());
	}
	if (x->loc)
		json_object_set_new(o, "locality", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "a_dup_share",
							      x->la.dup_share, "b_dup_share", x->lb.dup_share,
							      "a_runs_ge8_share", x->la.runs_ge8_share, "b_runs_ge8_share",
							      x->lb.runs_ge8_share, "a_sequential_share",
							      x->la.sequential_share, "b_sequential_share",
							      x->lb.sequential_share, "a_mean_dup_run", x->la.mean_dup_run,
							      "b_mean_dup_run", x->lb.mean_dup_run));
	else
		json_object_set_new(o, "locality", json_null());
	json_object_set_new(o, "max_diff", limit_json(lim->max_diff));
	json_object_set_new(o, "max_ratio_diff", limit_json(lim->max_ratio_diff));
	json_object_set_new(o, "max_tv", limit_json(lim->max_tv));
	json_object_set_new(o, "max_locality_diff", limit_json(lim->max_loc_diff));
	bool within = compare_within(c, lim, &why);
	json_object_set_new(o, "within", json_boolean(within));
	json_object_set_new(o, "why", within ? json_null() : json_string(why.msg));
	return o;
}
