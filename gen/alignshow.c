/* alignshow.c - [alignment 1] and [cdc 1] in words and JSON: fixed dedup per record size, where
 * copies sit modulo 2..32 blocks, the chunker's dedup and what of it is shifted. */
#include <inttypes.h>
#include "gen/alignshow.h"

#define TOP_SHIFTS 8

double align_ratio(const struct dist_align *a, int i)
{
	return a->distinct[i] ? (double)a->records[i] / (double)a->distinct[i] : 0;
}

double align_copies_at(const struct dist_align *a, unsigned k)
{
	uint64_t all = 0, at = 0;
	for (unsigned r = 0; r < DIST_ALIGN_MOD; r++) {
		all += a->shift_blocks[r];
		at += r % k == 0 ? a->shift_blocks[r] : 0;
	}
	return all ? (double)at / (double)all : 0;
}

double cdc_ratio(const struct dist_cdc *c)
{
	return dist_cdc_ratio(c);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

static void sample_text(double p, char *buf, size_t len)
{
	if (p >= 1)
		snprintf(buf, len, "all");
	else
		snprintf(buf, len, "1/%.0f", 1 / p);
}

/* "8 KiB" for 2 blocks of 4 KiB; "2 blocks" when the block size is unknown. */
static void record_text(uint64_t block_size, int i, char *buf, size_t len)
{
	uint64_t bytes = block_size << (i + 1);
	if (!block_size)
		snprintf(buf, len, "%d blocks", 2 << i);
	else if (bytes % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " B", bytes);
}

void align_cdc_summary(FILE *out, const struct dist *d, const char *indent)
{
	if (d->align.present) {
		const struct dist_align *a = &d->align;
		char first[24], last[24];
		record_text(d->block_size, 0, first, sizeof first);
		record_text(d->block_size, DIST_ALIGN_SIZES - 1, last, sizeof last);
		fprintf(out, "%salignment: fixed dedup %s -> %s", indent, first, last);
		for (int i = 0; i < DIST_ALIGN_SIZES; i++)
			fprintf(out, "%s%.3f", i ? " / " : " ", align_ratio(a, i));
		fprintf(out, "; copied blocks at a multiple of 2 / 32 blocks from their source %.1f / %.1f %%\n",
			100 * align_copies_at(a, 2), 100 * align_copies_at(a, 32));
	}
	if (d->cdc.present) {
		const struct dist_cdc *c = &d->cdc;
		char rate[32];
		sample_text(c->sample_rate, rate, sizeof rate);
		fprintf(out, "%scdc: %" PRIu64 " chunks of %u B average (sample %s); dedup %.4f:1; shifted duplicates %.2f %% "
			"of the non-zero bytes (fixed %" PRIu64 " B dedup misses them)\n", indent, c->chunks, c->avg, rate, cdc_ratio(c),
			100 * share(c->shifted_bytes, c->sampled_bytes), c->block_size);
	}
}

static void align_table(FILE *out, const struct dist_align *a, uint64_t block_size)
{
	char rate[32];
	sample_text(a->sample_rate, rate, sizeof rate);
	fprintf(out, "\n  alignment (records aligned in their file, the last padded with zero blocks; distinct "
		     "sample %s)\n    %-10s %14s %14s %10s\n", rate, "record", "records", "distinct", "dedup");
	for (int i = 0; i < DIST_ALIGN_SIZES; i++) {
		char size[24];
		record_text(block_size, i, size, sizeof size);
		fprintf(out, "    %-10s %14" PRIu64 " %14" PRIu64 " %8.4f:1\n", size, a->records[i], a->distinct[i],
			align_ratio(a, i));
	}
	fprintf(out, "    copied blocks whose (copy - source) is a multiple of k blocks:");
	for (unsigned k = 2; k <= DIST_ALIGN_MOD; k *= 2)
		fprintf(out, " k=%u %.1f %%", k, 100 * align_copies_at(a, k));
	fputc('\n', out);
}

/* The largest shifts by bytes, up to TOP_SHIFTS of them, largest first. */
static void top_shifts(FILE *out, const struct dist_cdc *c)
{
	const struct dist_cdc_shift *top[TOP_SHIFTS];
	int n = 0;
	for (size_t i = 0; i < c->nshifts; i++) {
		int at = n < TOP_SHIFTS ? n++ : TOP_SHIFTS;
		while (at > 0 && top[at - 1]->bytes < c->shifts[i].bytes) {
			if (at < TOP_SHIFTS)
				top[at] = top[at - 1];
			at--;
		}
		if (at < TOP_SHIFTS)
			top[at] = &c->shifts[i];
	}
	fprintf(out, "    largest shifts (bytes mod %" PRIu64 ": chunks / bytes):", c->block_size);
	for (int t = 0; t < n; t++)
		fprintf(out, " %u: %" PRIu64 " / %" PRIu64 ";", top[t]->shift, top[t]->chunks, top[t]->bytes);
	fputc('\n', out);
}

static void cdc_table(FILE *out, const struct dist_cdc *c)
{
	char rate[32];
	sample_text(c->sample_rate, rate, sizeof rate);
	fprintf(out, "\n  cdc (gear chunker, average %u B, min %u, max %u; sample %s of %" PRIu64 " chunks, %" PRIu64
		     " bytes)\n", c->avg, c->min, c->max, rate, c->chunks, c->bytes);
	fprintf(out, "    dedup %.4f:1; all-zero chunks %.2f %% of the bytes; of the sampled others: duplicates aligned "
		     "%.2f %%, shifted %.2f %%\n", cdc_ratio(c), 100 * share(c->zero_bytes, c->bytes),
		100 * share(c->aligned_bytes, c->sampled_bytes), 100 * share(c->shifted_bytes, c->sampled_bytes));
	fprintf(out, "    runs of shifted duplicates by length (runs / bytes):");
	for (int k = 0; k < DIST_CDC_RUN_BINS; k++)
		if (c->run_count[k])
			fprintf(out, " 2^%d: %" PRIu64 " / %" PRIu64 ";", k, c->run_count[k], c->run_bytes[k]);
	fputc('\n', out);
	top_shifts(out, c);
}

void align_cdc_tables(FILE *out, const struct dist *d)
{
	if (d->align.present)
		align_table(out, &d->align, d->block_size);
	if (d->cdc.present)
		cdc_table(out, &d->cdc);
}

json_t *align_json(const struct dist_align *a, uint64_t block_size)
{
	if (!a->present)
		return json_null();
	json_t *records = json_array(), *runs = json_array(), *blocks = json_array(), *at = json_object();
	for (int i = 0; i < DIST_ALIGN_SIZES; i++)
		json_array_append_new(records, json_pack("{s:I,s:I,s:I,s:I,s:f}", "blocks", (json_int_t)(2 << i), "bytes",
							 (json_int_t)(block_size << (i + 1)), "records",
							 (json_int_t)a->records[i], "distinct", (json_int_t)a->distinct[i],
							 "ratio", align_ratio(a, i)));
	for (int r = 0; r < DIST_ALIGN_MOD; r++) {
		json_array_append_new(runs, json_integer((json_int_t)a->shift_runs[r]));
		json_array_append_new(blocks, json_integer((json_int_t)a->shift_blocks[r]));
	}
	for (unsigned k = 2; k <= DIST_ALIGN_MOD; k *= 2) {
		char key[8];
		snprintf(key, sizeof key, "%u", k);
		json_object_set_new(at, key, json_real(align_copies_at(a, k)));
	}
	return json_pack("{s:f,s:o,s:o,s:o,s:o}", "sample_rate", a->sample_rate, "records", records,
			 "copy_shift_runs", runs, "copy_shift_blocks", blocks, "copies_aligned_share", at);
}

json_t *cdc_json(const struct dist_cdc *c)
{
	if (!c->present)
		return json_null();
	json_t *runs = json_array(), *shifts = json_array();
	for (int k = 0; k < DIST_CDC_RUN_BINS; k++)
		if (c->run_count[k])
			json_array_append_new(runs, json_pack("{s:i,s:I,s:I}", "bin", k, "count", (json_int_t)c->run_count[k],
							      "bytes", (json_int_t)c->run_bytes[k]));
	for (size_t i = 0; i < c->nshifts; i++)
		json_array_append_new(shifts, json_pack("{s:i,s:I,s:I}", "shift", (int)c->shifts[i].shift, "chunks",
							(json_int_t)c->shifts[i].chunks, "bytes",
							(json_int_t)c->shifts[i].bytes));
	json_t *o = json_pack("{s:i,s:i,s:i,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:I}", "avg", (int)c->avg, "min",
			      (int)c->min, "max", (int)c->max, "block_size", (json_int_t)c->block_size, "range",
			      (json_int_t)c->range, "sample_rate", c->sample_rate, "chunks", (json_int_t)c->chunks, "bytes",
			      (json_int_t)c->bytes, "sampled_chunks", (json_int_t)c->sampled_chunks, "sampled_bytes",
			      (json_int_t)c->sampled_bytes, "distinct_chunks", (json_int_t)c->distinct_chunks,
			      "distinct_bytes", (json_int_t)c->distinct_bytes);
	json_object_set_new(o, "dedup_ratio", json_real(cdc_ratio(c)));
	json_object_set_new(o, "zero_chunks", json_integer((json_int_t)c->zero_chunks));
	json_object_set_new(o, "zero_bytes", json_integer((json_int_t)c->zero_bytes));
	json_object_set_new(o, "zero_distinct_bytes", json_integer((json_int_t)c->zero_distinct_bytes));
	json_object_set_new(o, "aligned_bytes", json_integer((json_int_t)c->aligned_bytes));
	json_object_set_new(o, "shifted_bytes", json_integer((json_int_t)c->shifted_bytes));
	json_object_set_new(o, "shifted_chunks", json_integer((json_int_t)c->shifted_chunks));
	json_object_set_new(o, "shifted_share", json_real(share(c->shifted_bytes, c->sampled_bytes)));
	json_object_set_new(o, "runs", runs);
	json_object_set_new(o, "shifts", shifts);
	return o;
}
