/* fuzz_distfile.c - the distribution parser (lib/distfile dist_parse) on any bytes: a one-line
 * error naming the input, or a valid distribution that dist_write writes back unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/distfile.h"
#include "harness.h"

int harness_setup(void)
{
	return 0;
}

static void check_valid(const struct dist *d)
{
	if (!d->nrows || !d->rows)
		harness_fail("accepted a distribution without rows");
	uint64_t total = 0, distinct = 0;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct dist_row *r = &d->rows[i];
		if (i && r->dups <= d->rows[i - 1].dups)
			harness_fail("rows not strictly sorted by duplicates at row %zu", i);
		if (!r->blocks)
			harness_fail("row %zu has no blocks", i);
		uint64_t copies, blocks;
		if (__builtin_add_overflow(r->dups, 1, &copies) || __builtin_mul_overflow(r->blocks, copies, &blocks) ||
		    __builtin_add_overflow(total, blocks, &total) || __builtin_add_overflow(distinct, r->blocks, &distinct))
			harness_fail("accepted counts that overflow 64 bits (row %zu)", i);
	}
	struct dist_rows fig;
	dist_compute_rows(d, &fig);
	if (fig.total_blocks != total || fig.distinct != distinct)
		harness_fail("derived figures disagree with the rows");
	double sum = fig.u0 + fig.u1 + fig.d;
	if (sum < 0.999999 || sum > 1.000001 || fig.ratio < 1)
		harness_fail("U0 + U1 + D = %g, ratio %g", sum, fig.ratio);
}

/* What dist_write writes, read back, is the same distribution. */
static void check_round_trip(const struct dist *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		harness_fail("open_memstream");
	char l1[64], l2[64], l3[64];
	const char *header[3];
	size_t nh = 0;
	if (d->block_size)
		snprintf(l1, sizeof l1, "block-size: %llu", (unsigned long long)d->block_size), header[nh++] = l1;
	if (d->hash[0])
		snprintf(l2, sizeof l2, "hash: %s", d->hash), header[nh++] = l2;
	if (d->zero_blocks)
		snprintf(l3, sizeof l3, "zero-blocks: %llu", (unsigned long long)d->zero_blocks), header[nh++] = l3;
	if (dist_write(f, d, header, nh))
		harness_fail("dist_write failed on a valid distribution");
	fclose(f);
	struct dist back;
	struct dd_err err;
	if (dist_parse(text, len, "round-trip", &back, &err))
		harness_fail("what dist_write wrote does not parse: %s", err.msg);
	if (back.nrows != d->nrows || memcmp(back.rows, d->rows, d->nrows * sizeof *d->rows) ||
	    back.zero_blocks != d->zero_blocks || back.block_size != d->block_size || strcmp(back.hash, d->hash) ||
	    memcmp(&back.gran, &d->gran, sizeof d->gran)) /* both parsed into zeroed structs: padding too */
		harness_fail("the distribution changed through dist_write and dist_parse");
	dist_free(&back);
	free(text);
}

void harness_one(const uint8_t *data, size_t len)
{
	struct dist d;
	struct dd_err err;
	memset(&err, 0x5a, sizeof err); /* the parser must write a terminated message */
	if (dist_parse((const char *)data, len, "fuzz", &d, &err)) {
		size_t n = strnlen(err.msg, sizeof err.msg);
		if (n == sizeof err.msg || strncmp(err.msg, "fuzz:", 5) || strchr(err.msg, '\n'))
			harness_fail("the error is not one line naming the input: %.80s", err.msg);
		if (d.rows || d.nrows)
			harness_fail("a failed parse left rows behind");
		return;
	}
	check_valid(&d);
	check_round_trip(&d);
	dist_free(&d);
}
