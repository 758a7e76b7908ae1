/* test_distfile.c - CUnit suite for lib/distfile.c: the bundled distributions against the
 * published Table 1 figures, one malformed file per error class, comments, order, round trip,
 * and the [compressibility 1] / [locality 1] / [granularity 1] sections (every accept and reject rule). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/distfile.h"
#include "lib/distcmp.h"
#include "unit.h"

#define DIST(name) DEDIS_SRCDIR "/distributions/" name
#define DATA(name) UNIT_DATADIR "/" name

/* Published figures (DEDISbench paper, Table 1): shares in %, rounded to 0.1. */
static const struct {
	const char *file;
	uint64_t total;
	double u0, u1, d, ratio;
} published[] = {
	{"archival.dist", 127484220ULL, 89.7, 3.8, 6.6, 1.070},
	{"personalfiles.dist", 29530586ULL, 76.6, 6.2, 17.2, 1.208},
	{"highperf.dist", 400599152ULL, 68.5, 6.5, 25.0, 1.334},
	{"kernels.dist", 5988932ULL, 22.5, 16.6, 60.9, 2.557},
	{"ubuntuamd.dist", 3048720ULL, 48.2, 17.4, 34.4, 1.526},
};

static double round1(double share)
{
	return round(share * 1000.0) / 10.0; /* fraction -> % rounded to 0.1 */
}

static void test_bundled(void)
{
	for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
		char path[1024];
		struct dist d;
		struct dd_err err;
		struct dist_rows r;

		snprintf(path, sizeof path, DIST("%s"), published[i].file);
		int rc = dist_load(path, &d, &err);
		CU_ASSERT_EQUAL(rc, 0);
		if (rc != 0) {
			fprintf(stderr, "\n  %s\n", err.msg);
			continue;
		}
		dist_compute_rows(&d, &r);
		CU_ASSERT_EQUAL(r.total_blocks, published[i].total);
		CU_ASSERT_DOUBLE_EQUAL(round1(r.u0), published[i].u0, 0.05);
		CU_ASSERT_DOUBLE_EQUAL(round1(r.u1), published[i].u1, 0.05);
		CU_ASSERT_DOUBLE_EQUAL(round1(r.d), published[i].d, 0.05);
		CU_ASSERT_DOUBLE_EQUAL(r.ratio, published[i].ratio, 0.001);
		/* internal consistency of the derived rows */
		CU_ASSERT_EQUAL(r.unique_blocks + r.first_copies + r.redundant, r.total_blocks);
		CU_ASSERT_EQUAL(r.unique_blocks + r.first_copies, r.distinct);
		CU_ASSERT_DOUBLE_EQUAL(r.u0 + r.u1 + r.d, 1.0, 1e-9);
		/* sorted, unique keys, no zero rows; the provenance header is read */
		for (size_t k = 0; k < d.nrows; k++) {
			CU_ASSERT(d.rows[k].blocks > 0);
			if (k)
				CU_ASSERT(d.rows[k - 1].dups < d.rows[k].dups);
		}
		CU_ASSERT_EQUAL(d.zero_blocks, 0);
		CU_ASSERT_EQUAL(d.block_size, 4096);
		CU_ASSERT_STRING_EQUAL(d.hash, "sha1");
		CU_ASSERT_EQUAL(d.merged_rows, 0);
		dist_free(&d);
	}
}

/* The original kernels file holds its table twice; DEDISbench added the copies up, and so do
 * we when reading it unchanged (legacy format). The bundled copy holds the sums. */
static void test_kernels_merged(void)
{
	struct dist d;
	struct dd_err err;
	CU_ASSERT_EQUAL_FATAL(dist_load(UNIT_DATADIR "/legacy-kernels.dist", &d, &err), 0);
	CU_ASSERT_EQUAL(d.nrows, 100);
	CU_ASSERT_EQUAL(d.merged_rows, 100);
	CU_ASSERT_EQUAL(d.rows[0].blocks, 2 * 675183ULL);
	dist_free(&d);
	CU_ASSERT_EQUAL_FATAL(dist_load(DIST("kernels.dist"), &d, &err), 0);
	CU_ASSERT_EQUAL(d.nrows, 100);
	CU_ASSERT_EQUAL(d.merged_rows, 0);
	CU_ASSERT_EQUAL(d.rows[0].dups, 0);
	CU_ASSERT_EQUAL(d.rows[0].blocks, 2 * 675183ULL);
	CU_ASSERT_EQUAL(d.rows[d.nrows - 1].dups, 557);
	CU_ASSERT_EQUAL(d.rows[d.nrows - 1].blocks, 2);
	dist_free(&d);

	CU_ASSERT_EQUAL_FATAL(dist_load(DIST("personalfiles.dist"), &d, &err), 0);
	CU_ASSERT_EQUAL(d.merged_rows, 0);
	CU_ASSERT_EQUAL(d.rows[0].dups, 0); /* the dups=0 row is the file's last line */
	CU_ASSERT_EQUAL(d.rows[0].blocks, 22610369ULL);
	dist_free(&d);
}

static void test_legacy_vs_dedis_repeats(void)
{
	static const char legacy[] = "1 5\n0 3\n1 2\n";
	static const char dedis[] = "# dedisgen 0.1.0\n1 5\n0 3\n1 2\n";
	struct dist d;
	struct dd_err err;

	CU_ASSERT_EQUAL_FATAL(dist_parse(legacy, strlen(legacy), "legacy", &d, &err), 0);
	CU_ASSERT_EQUAL(d.nrows, 2);
	CU_ASSERT_EQUAL(d.merged_rows, 1);
	CU_ASSERT(d.rows[1].dups == 1 && d.rows[1].blocks == 7);
	dist_free(&d);

	CU_ASSERT_EQUAL(dist_parse(dedis, strlen(dedis), "dedis", &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dedis:4: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "repeated (first on line 2)"));
	CU_ASSERT_PTR_NULL(d.rows);
}

static const struct {
	const char *file;
	int line;
	const char *reason;
} bad[] = {
	{"bad-letters.dist", 3, "expected two unsigned integers '<duplicates> <blocks>', got 'x 5'"},
	{"bad-negative.dist", 2, "negative"},
	{"bad-fraction.dist", 2, "fraction"},
	{"bad-three-fields.dist", 2, "3 fields"},
	{"bad-one-field.dist", 3, "1 field"},
	{"bad-value-overflow.dist", 2, "blocks value '18446744073709551616' overflows 64 bits"},
	{"bad-row-overflow.dist", 2, "row size"},
	{"bad-dups-max.dist", 1, "row size"},
	{"bad-total-overflow.dist", 2, "total logical blocks"},
	{"bad-duplicate-key.dist", 5, "duplicates value 3 repeated (first on line 3)"},
	{"bad-duplicate-before-junk.dist", 3, "repeated"},
	{"bad-blocks-zero.dist", 2, "blocks is 0"},
	{"bad-empty.dist", 1, "empty file"},
	{"bad-blank-lines.dist", 3, "no records"},
	{"bad-all-comments.dist", 4, "no records"},
	{"bad-zero-blocks-header.dist", 2, "zero-blocks"},
	{"bad-zero-blocks-no-record.dist", 2, "'# zero-blocks: 5' does not match the records: the zero block, one content stored 5 times, needs a record '4 <blocks>'"},
	{"bad-block-size-header.dist", 1, "block-size must be > 0"},
	{"bad-hash-header.dist", 1, "hash name"},
	{"bad-hex.dist", 2, "hexadecimal"},
	{"bad-plus.dist", 2, "sign"},
	{"bad-junk.dist", 2, "junk after number"},
	{"bad-exponent.dist", 2, "exponent"},
	{"bad-cr-only.dist", 1, "carriage return"},
	{"bad-nul.dist", 2, "NUL byte"},
	{"bad-control.dist", 2, "control character 0x0b"},
	{"bad-comment-eats-field.dist", 2, "1 field"},
};

static void test_bad_files(void)
{
	CU_ASSERT(sizeof bad / sizeof bad[0] >= 15);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char path[1024], where[256];
		struct dist d;
		struct dd_err err;

		snprintf(path, sizeof path, DATA("%s"), bad[i].file);
		snprintf(where, sizeof where, "%s:%d: ", bad[i].file, bad[i].line);
		memset(&err, 0, sizeof err);
		int rc = dist_load(path, &d, &err);
		int ok = rc == -1 && strstr(err.msg, where) && strstr(err.msg, bad[i].reason);
		CU_ASSERT(ok);
		if (!ok)
			fprintf(stderr, "\n  %s: rc %d, want \"%s\" + \"%s\", got \"%s\"\n", bad[i].file, rc,
				where, bad[i].reason, err.msg);
		CU_ASSERT_PTR_NULL(d.rows);
		CU_ASSERT_EQUAL(d.nrows, 0);
		dist_free(&d); /* safe on a failed load */
	}
}

static void test_missing_file(void)
{
	struct dist d;
	struct dd_err err;
	CU_ASSERT_EQUAL(dist_load(DATA("no-such-file.dist"), &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no-such-file.dist"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot open"));
	CU_ASSERT_EQUAL(dist_load(UNIT_DATADIR, &d, &err), -1); /* a directory */
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a directory, not a regular file"));
}

static void test_comments_and_order(void)
{
	struct dist d;
	struct dd_err err;
	int rc = dist_load(DATA("good-commented.dist"), &d, &err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(d.nrows, 4);
	static const struct dist_row want[] = {{0, 100}, {1, 40}, {2, 30}, {7, 2}};
	for (size_t i = 0; i < 4 && i < d.nrows; i++) {
		CU_ASSERT_EQUAL(d.rows[i].dups, want[i].dups);
		CU_ASSERT_EQUAL(d.rows[i].blocks, want[i].blocks);
	}
	CU_ASSERT_EQUAL(d.zero_blocks, 8); /* the record 7 2: one of its contents */
	CU_ASSERT_EQUAL(d.block_size, 4096);
	CU_ASSERT_STRING_EQUAL(d.hash, "sha256");
	CU_ASSERT_EQUAL(d.merged_rows, 0);
	struct dist_rows r;
	dist_compute_rows(&d, &r);
	CU_ASSERT_EQUAL(r.total_blocks, 100 + 80 + 90 + 16);
	CU_ASSERT_EQUAL(r.distinct, 172);
	CU_ASSERT_EQUAL(r.unique_blocks, 100);
	CU_ASSERT_EQUAL(r.first_copies, 72);
	CU_ASSERT_EQUAL(r.redundant, 40 + 60 + 14);
	dist_free(&d);

	CU_ASSERT_EQUAL_FATAL(dist_load(DATA("good-crlf.dist"), &d, &err), 0);
	CU_ASSERT_EQUAL(d.nrows, 3);
	CU_ASSERT(d.rows[0].dups == 0 && d.rows[0].blocks == 5);
	CU_ASSERT(d.rows[2].dups == 3 && d.rows[2].blocks == 1);
	dist_free(&d);

	/* extreme but valid values */
	static const char big[] = "18446744073709551614 1\n";
	CU_ASSERT_EQUAL_FATAL(dist_parse(big, strlen(big), "big", &d, &err), 0);
	dist_compute_rows(&d, &r);
	CU_ASSERT_EQUAL(r.total_blocks, UINT64_MAX);
	dist_free(&d);
}

static int same_dist(const struct dist *a, const struct dist *b)
{
	if (a->nrows != b->nrows || a->zero_blocks != b->zero_blocks || a->block_size != b->block_size ||
	    strcmp(a->hash, b->hash) != 0)
		return 0;
	for (size_t i = 0; i < a->nrows; i++)
		if (a->rows[i].dups != b->rows[i].dups || a->rows[i].blocks != b->rows[i].blocks)
			return 0;
	return 1;
}

static void test_round_trip(void)
{
	static const struct dist_row rows[] = {
		{5, 3}, {0, 1000}, {1, 200}, {UINT64_C(1) << 40, 1}, {2, 50},
	};
	static const char *const header[] = {
		"dedisgen 0.1.0", "source: /srv/data", "block-size: 4096", "hash: sha1", "zero-blocks: 6",
	};
	struct dist a, b;
	struct dd_err err;
	char *text = NULL;
	size_t len = 0;

	CU_ASSERT_EQUAL_FATAL(dist_from_rows(rows, 5, &a, &err), 0);
	CU_ASSERT_EQUAL(a.nrows, 5);
	for (size_t i = 1; i < a.nrows; i++)
		CU_ASSERT(a.rows[i - 1].dups < a.rows[i].dups);

	FILE *f = open_memstream(&text, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(dist_write(f, &a, header, 5), 0);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "# dedisgen 0.1.0\n# source: /srv/data\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n0 1000\n1 200\n2 50\n5 3\n1099511627776 1\n"));
	CU_ASSERT_EQUAL_FATAL(dist_parse(text, len, "roundtrip", &b, &err), 0);
	a.zero_blocks = 6;
	a.block_size = 4096;
	strcpy(a.hash, "sha1");
	CU_ASSERT(same_dist(&a, &b));
	dist_free(&b);
	free(text);

	/* without headers, rows only; still parses back to the same rows */
	text = NULL;
	f = open_memstream(&text, &len);
	CU_ASSERT_EQUAL(dist_write(f, &a, NULL, 0), 0);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(dist_parse(text, len, "plain", &b, &err), 0);
	a.zero_blocks = 0;
	a.block_size = 0;
	a.hash[0] = '\0';
	CU_ASSERT(same_dist(&a, &b));
	dist_free(&b);
	free(text);

	/* a header with a newline would break the format */
	static const char *const evil[] = {"ok", "two\nlines"};
	f = fopen("/dev/null", "w");
	CU_ASSERT_EQUAL(dist_write(f, &a, evil, 2), -1);
	fclose(f);
	dist_free(&a);
}

static void test_from_rows_errors(void)
{
	struct dist d;
	struct dd_err err;
	static const struct dist_row dup[] = {{1, 2}, {0, 5}, {1, 3}};
	static const struct dist_row zero[] = {{1, 2}, {4, 0}};
	static const struct dist_row over[] = {{0, UINT64_MAX}, {1, 1}};

	CU_ASSERT_EQUAL(dist_from_rows(dup, 3, &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rows:3: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "repeated"));
	CU_ASSERT_EQUAL(dist_from_rows(zero, 2, &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rows:2: blocks is 0"));
	CU_ASSERT_EQUAL(dist_from_rows(over, 2, &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "overflows"));
	CU_ASSERT_EQUAL(dist_from_rows(NULL, 0, &d, &err), -1);
	CU_ASSERT_PTR_NULL(d.rows);
}

static void test_compute_rows_empty(void)
{
	struct dist d;
	struct dist_rows r;
	memset(&d, 0, sizeof d);
	dist_compute_rows(&d, &r);
	CU_ASSERT_EQUAL(r.total_blocks, 0);
	CU_ASSERT_EQUAL(r.ratio, 0.0);
	CU_ASSERT_EQUAL(r.u0, 0.0);
}


/* ---- sections ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;
	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len + 4096 + 1 > cap) {
			cap = 2 * cap + 8192;
			char *nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		size_t got = fread(buf + *len, 1, cap - *len - 1, f);
		*len += got;
		if (got == 0)
			break;
	}
	fclose(f);
	if (buf)
		buf[*len] = '\0';
	return buf;
}

static char *write_to_string(const struct dist *d, const char *const *header, size_t nheader, int *rc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	*rc = dist_write(f, d, header, nheader);
	fclose(f);
	return text;
}

static void test_sections_good(void)
{
	struct dist d;
	struct dd_err err;
	CU_ASSERT_EQUAL_FATAL(dist_load(DATA("good-sections.dist"), &d, &err), 0);
	CU_ASSERT_EQUAL(d.nrows, 4);
	CU_ASSERT_EQUAL(d.zero_blocks, 8);
	/* compressibility */
	CU_ASSERT(d.comp.present);
	CU_ASSERT_EQUAL(d.comp.sample_rate, 0.0625);
	CU_ASSERT_EQUAL(d.comp.measured, 88);
	CU_ASSERT_EQUAL(d.comp.class_measured[0], 60);
	CU_ASSERT_EQUAL(d.comp.class_measured[1], 25);
	CU_ASSERT_EQUAL(d.comp.class_measured[2], 0);
	CU_ASSERT_EQUAL(d.comp.class_measured[3], 3);
	CU_ASSERT_EQUAL_FATAL(d.comp.ncells, 6);
	const struct dist_comp_cell *c = &d.comp.cells[2];
	/* version 1's means (1/1024 of the block) are read in this version's 1/2^20 */
	CU_ASSERT(c->cls == 0 && c->zstd_bucket == 31 && c->lz4_bucket == 31 && c->contents == 100 &&
		  c->zstd_mean == 1024 * 1024 && c->lz4_mean == 1024 * 1024);
	c = &d.comp.cells[5];
	CU_ASSERT(c->cls == 3 && c->zstd_bucket == 0 && c->lz4_bucket == 1 && c->contents == 3 &&
		  c->zstd_mean == 10 * 1024 && c->lz4_mean == 40 * 1024);
	/* locality */
	const struct dist_locality *l = &d.locality;
	CU_ASSERT(l->present);
	CU_ASSERT(l->analysed == 2000 && l->window == 0 && l->duplicates == 800 && l->sequential == 592);
	CU_ASSERT(l->new_runs.count[0] == 100 && l->new_runs.blocks[0] == 100);
	CU_ASSERT(l->new_runs.count[4] == 50 && l->new_runs.blocks[4] == 1100);
	CU_ASSERT(l->dup_runs.count[6] == 5 && l->dup_runs.blocks[6] == 400);
	CU_ASSERT(l->copy_runs.count[5] == 10 && l->copy_runs.blocks[5] == 360);
	CU_ASSERT(l->zero_runs.count[3] == 5 && l->zero_runs.blocks[3] == 40);
	CU_ASSERT_EQUAL(l->zero_runs.count[2], 0);
	CU_ASSERT_EQUAL(dist_sections_check(&d, &err), 0);
	dist_free(&d);
	CU_ASSERT_PTR_NULL(d.comp.cells);
	CU_ASSERT(!d.comp.present && !d.locality.present);
}

/* The file is written the way the writer writes it: text -> struct -> text gives it back byte for
 * byte, and struct -> text -> struct gives the struct back. */
static void test_sections_round_trip(void)
{
	static const char *const header[] = {"dedisgen 0.2.0", "source: /srv/data", "block-size: 4096", "hash: sha1",
					     "bytes: 6447104", "zero-blocks: 8"};
	size_t len;
	char *orig = slurp(DATA("good-sections-v2.dist"), &len);
	struct dist a, b;
	struct dd_err err;
	int rc;
	CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
	CU_ASSERT_EQUAL_FATAL(dist_parse(orig, len, "orig", &a, &err), 0);
	char *text = write_to_string(&a, header, 6, &rc);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(text, orig);
	CU_ASSERT_EQUAL_FATAL(dist_parse(text, strlen(text), "again", &b, &err), 0);
	CU_ASSERT_EQUAL(b.comp.sample_rate, a.comp.sample_rate);
	CU_ASSERT_EQUAL(b.comp.measured, a.comp.measured);
	CU_ASSERT_EQUAL(memcmp(b.comp.class_measured, a.comp.class_measured, sizeof a.comp.class_measured), 0);
	CU_ASSERT_EQUAL_FATAL(b.comp.ncells, a.comp.ncells);
	for (size_t i = 0; i < a.comp.ncells; i++) {
		const struct dist_comp_cell *x = &a.comp.cells[i], *y = &b.comp.cells[i];
		CU_ASSERT(x->cls == y->cls && x->zstd_bucket == y->zstd_bucket && x->lz4_bucket == y->lz4_bucket &&
			  x->contents == y->contents && x->zstd_mean == y->zstd_mean && x->lz4_mean == y->lz4_mean);
	}
	CU_ASSERT_EQUAL(memcmp(&a.locality, &b.locality, sizeof a.locality), 0);
	dist_free(&b);
	free(text);

	/* sample probabilities are written as the shortest decimal that reads back exactly */
	static const struct {
		double p;
		const char *text;
	} probs[] = {{1, "sample 1 "}, {0.5, "sample 0.5 "}, {1.0 / 64, "sample 0.015625 "},
		     {1.0 / 1048576, "sample 0.00000095367431640625 "}, {0.1, "sample 0.1 "}};
	for (size_t i = 0; i < sizeof probs / sizeof probs[0]; i++) {
		a.comp.sample_rate = probs[i].p;
		if (probs[i].p == 1) { /* with p = 1 every content is measured: weights are exactly 1 */
			a.comp.cells[2].contents = 5; /* class 0: 55 + 0 + 5 = 60 measured */
			a.comp.cells[0].contents = 50;
			a.comp.cells[1].contents = 5;
			a.comp.cells[3].contents = 20;
			a.comp.cells[4].contents = 5;
		}
		text = write_to_string(&a, NULL, 0, &rc);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(text, probs[i].text));
		CU_ASSERT_EQUAL(dist_parse(text, strlen(text), "p", &b, &err), 0);
		CU_ASSERT_EQUAL(b.comp.sample_rate, probs[i].p);
		dist_free(&b);
		free(text);
	}

	/* only one section, either one: the other stays absent */
	a.comp.present = false;
	text = write_to_string(&a, NULL, 0, &rc);
	CU_ASSERT_PTR_NULL(strstr(text, "[compressibility"));
	CU_ASSERT_EQUAL_FATAL(dist_parse(text, strlen(text), "loc-only", &b, &err), 0);
	CU_ASSERT(!b.comp.present && b.locality.present && b.comp.cells == NULL);
	dist_free(&b);
	free(text);
	a.comp.present = true;
	a.locality.present = false;
	text = write_to_string(&a, NULL, 0, &rc);
	CU_ASSERT_PTR_NULL(strstr(text, "[locality"));
	CU_ASSERT_EQUAL_FATAL(dist_parse(text, strlen(text), "comp-only", &b, &err), 0);
	CU_ASSERT(b.comp.present && !b.locality.present);
	dist_free(&b);
	free(text);

	/* the writer refuses a struct it could not read back, and writes nothing */
	a.comp.cells[1].zstd_mean = 100 * 1024; /* bucket 12 holds 384..416 KiB (of 1 Mi units) */
	text = write_to_string(&a, header, 6, &rc);
	CU_ASSERT_EQUAL(rc, -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	CU_ASSERT_STRING_EQUAL(text, "");
	CU_ASSERT_EQUAL(dist_sections_check(&a, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[compressibility 2]: cell 0 12 14: the zstd mean 102400 is outside"));
	free(text);
	a.comp.cells[1].zstd_mean = 400 * 1024;
	a.locality.present = true;
	a.locality.sequential = 601; /* 590 in copy runs, at most 2 more per zero run (5) */
	CU_ASSERT_EQUAL(dist_sections_check(&a, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[locality 1]: 601 sequential duplicates"));
	a.locality.sequential = 600;
	CU_ASSERT_EQUAL(dist_sections_check(&a, &err), 0);
	dist_free(&a);
	free(orig);
}

/* Files that older tools wrote still load, and a section makes a file a dedis file (no legacy
 * merging of repeated records even without a '#'). */
static void test_sections_legacy(void)
{
	static const char no_hash[] = "1 5\n0 3\n1 2\n[locality 1]\nanalysed 12 0\nduplicates 2 1\nnew 3 1 10\n"
				      "dup 1 1 2\ncopy 1 1 2\n";
	struct dist d;
	struct dd_err err;
	CU_ASSERT_EQUAL(dist_parse(no_hash, strlen(no_hash), "nohash", &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nohash:3: duplicates value 1 repeated (first on line 1)"));
	CU_ASSERT_EQUAL(dist_parse(no_hash + 4, strlen(no_hash) - 4, "ok", &d, &err), 0);
	CU_ASSERT(d.locality.present && !d.comp.present && d.merged_rows == 0);
	dist_free(&d);
	/* a file without sections has none */
	CU_ASSERT_EQUAL_FATAL(dist_load(DATA("good-commented.dist"), &d, &err), 0);
	CU_ASSERT(!d.comp.present && !d.locality.present && d.comp.cells == NULL && d.comp.ncells == 0);
	dist_free(&d);
}

static void test_sections_newer_unknown(void)
{
	struct dist d;
	struct dd_err err;
	CU_ASSERT_EQUAL(dist_load(DATA("bad-section-newer.dist"), &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad-section-newer.dist:4: section 'locality' version 2 is newer than "
					       "this dedis reads (1); use a newer dedis"));
	CU_ASSERT_EQUAL(dist_load(DATA("bad-section-unknown.dist"), &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad-section-unknown.dist:4: unknown section 'dedup-groups' (this dedis "
					       "reads compressibility 1 and 2, locality 1, granularity 1, alignment 1, cdc 1)"));
	CU_ASSERT_PTR_NULL(d.rows);
}

/* Every reject rule: one edit of good-sections.dist (replace the first `find` by `repl`), the
 * line the error names and a piece of its reason. */
static const struct {
	const char *find, *repl;
	int line;
	const char *reason;
} section_edits[] = {
	/* headers */
	{"[locality 1]", "[locality 1", 25, "malformed section header '[locality 1': expected '[NAME VERSION]'"},
	{"[locality 1]", "[locality]", 25, "malformed section header"},
	{"[locality 1]", "[locality 0]", 25, "the version is a positive integer"},
	{"[locality 1]", "[locality x]", 25, "the version is a positive integer"},
	{"[locality 1]", "[locality  1]", 25, "the version is a positive integer"},
	{"[locality 1]", "[Locality 1]", 25, "malformed section header"},
	{"[locality 1]", "[locality 3]", 25, "section 'locality' version 3 is newer than this dedis reads (1)"},
	{"[locality 1]", "[locality 99999999999999999999]", 25, "the version is a positive integer"},
	{"[locality 1]", "[zstd 1]", 25, "unknown section 'zstd' (this dedis reads compressibility 1 and 2, locality 1, granularity 1, alignment 1, cdc 1)"},
	{"[compressibility 1]", "[compressibility 3]", 11, "section 'compressibility' version 3 is newer"},
	{"[locality 1]", "[compressibility 1]", 25, "section 'compressibility' given twice (first on line 11)"},
	{"[locality 1]", " [locality 1]", 25, "a section header starts in column 1"},
	{"[compressibility 1]", " [compressibility 1]", 11, "a section header starts in column 1"},
	{"[locality 1]", "cell 3 0 0 3 10 10\n[locality 1]", 25, "cell 3 0 0 comes after cell 3 0 1"},
	{"# zero-blocks: 8\n", "# zero-blocks: 8\n[locality 1]\nanalysed 1 0\nduplicates 0 0\nnew 0 1 1\n", 11,
	 "a record inside section 'locality' (started on line 7): records come before the first section"},
	{"zero 3 5 40", "zero 3 5 40\n[compressibility 1]", 39,
	 "section 'compressibility' given twice (first on line 11)"},
	{"[compressibility 1]", "[locality 1]\nanalysed 0 0\nduplicates 0 0\n[compressibility 1]", 14,
	 "section 'compressibility' after 'locality' (the order is compressibility, locality, granularity, alignment, then cdc)"},
	{"analysed 2000 0", "analysed 2000 0\n7 3", 29, "a record inside section 'locality'"},
	/* [compressibility 1] */
	{"codecs zstd-1 lz4\n", "", 14, "'sample' before 'codecs'"},
	{"codecs zstd-1 lz4", "codecs lz4 zstd-1", 14, "version 1 measures exactly 'codecs zstd-1 lz4'"},
	{"codecs zstd-1 lz4", "codecs zstd-1", 14, "exactly 'codecs zstd-1 lz4'"},
	{"codecs zstd-1 lz4", "codecs zstd-1 lz4 gzip", 14, "exactly 'codecs zstd-1 lz4'"},
	{"sample 0.0625 88", "codecs zstd-1 lz4", 15, "'codecs' repeated (first on line 14)"},
	{"sample 0.0625 88\n", "", 15, "'measured' before 'sample'"},
	{"sample 0.0625 88", "sample 0.0625 88\nsample 0.0625 88", 16, "'sample' repeated (first on line 15)"},
	{"sample 0.0625 88", "sample 0 88", 15, "sample: P '0': out of range"},
	{"sample 0.0625 88", "sample 1.5 88", 15, "sample: P '1.5': out of range"},
	{"sample 0.0625 88", "sample -0.5 88", 15, "negative"},
	{"sample 0.0625 88", "sample +0.5 88", 15, "sign"},
	{"sample 0.0625 88", "sample 6.25e-2 88", 15, "exponent"},
	{"sample 0.0625 88", "sample 1/16 88", 15, "not a decimal number"},
	{"sample 0.0625 88", "sample 0.06.25 88", 15, "not a decimal number"},
	{"sample 0.0625 88", "sample . 88", 15, "not a decimal number"},
	{"sample 0.0625 88", "sample 0.0625", 15, "'sample' expects 2 values"},
	{"sample 0.0625 88", "sample 0.0625 88 1", 15, "'sample' expects 2 values"},
	{"sample 0.0625 88", "sample 0.0625 x", 15, "MEASURED 'x': not a number"},
	{"sample 0.0625 88", "sample 0.0625 87", 11, "sample says 87 contents measured, the 'measured' lines sum to 88"},
	{"measured 1 25", "measured 64 25", 17, "measured: CLASS 64 is out of range (at most 63)"},
	{"measured 1 25", "measured 1 0", 17, "class 1 with 0 contents"},
	{"measured 1 25", "measured 1", 17, "'measured' expects 2 values"},
	{"measured 1 25", "measured 0 25", 17, "class 0 repeated (first on line 16)"},
	{"measured 1 25", "measured 1 -25", 17, "N '-25': negative number"},
	{"measured 1 25", "measured 1 25 # a comment", 0, NULL},
	{"measured 3 3\n", "measured 3 3\nmeasured 4 1\n", 11, "class 4: 1 contents measured but no cell"},
	{"measured 3 3\n", "", 11, "class 3 has cells but no 'measured' line"},
	{"measured 0 60", "measured 0 1001", 11, "class 0: the cells hold 1000 contents, fewer than the 1001 measured"},
	{"sample 0.0625 88", "sample 1 88", 11, "class 0: the cells hold 1000 contents, but sample 1 means all the 60"},
	{"cell 3 0 1 3 10 40", "cell 3 0 1 3 10", 24, "'cell' expects 6 values"},
	{"cell 3 0 1 3 10 40", "cell 3 0 1 3 10 40 9", 24, "'cell' expects 6 values"},
	{"cell 3 0 1 3 10 40", "cell 3 32 1 3 10 40", 24, "cell: ZB 32 is out of range (at most 31)"},
	{"cell 3 0 1 3 10 40", "cell 3 0 32 3 10 40", 24, "cell: LB 32 is out of range"},
	{"cell 3 0 1 3 10 40", "cell 64 0 1 3 10 40", 24, "cell: CLASS 64 is out of range"},
	{"cell 3 0 1 3 10 40", "cell 3 0 1 0 10 40", 24, "CONTENTS is 0"},
	{"cell 3 0 1 3 10 40", "cell 3 0 1 3 1025 40", 24, "cell: ZMEAN 1025 is out of range (at most 1024)"},
	{"cell 3 0 1 3 10 40", "cell 3 0 1 3 33 40", 24, "the zstd mean 33 is outside its bucket (0..32)"},
	{"cell 3 0 1 3 10 40", "cell 3 0 1 3 10 31", 24, "the LZ4 mean 31 is outside its bucket (32..64)"},
	{"cell 1 31 31 60 1020 1024", "cell 1 31 31 60 991 1024", 23, "the zstd mean 991 is outside its bucket (992..1024)"},
	{"cell 3 0 1 3 10 40", "cell 3 0 1 18446744073709551616 10 40", 24, "CONTENTS '18446744073709551616': overflows"},
	{"cell 3 0 1 3 10 40", "cell 3 0 1 3 10.5 40", 24, "ZMEAN '10.5': fraction"},
	{"cell 0 12 14 300 400 460\n", "", 0, NULL},
	{"cell 0 12 14 300 400 460", "cell 0 5 9 300 170 300", 20, "cell 0 5 9 repeats cell 0 5 9"},
	{"cell 0 12 14 300 400 460", "cell 0 4 31 300 140 1000", 20, "comes after cell 0 5 9"},
	{"cell 1 3 4 140 110 150", "cell 0 3 4 140 110 150", 22, "comes after cell 0 31 31"},
	{"cell 0 5 9 600 170 300\n", "zstd 0 5 9 600 170 300\n", 19, "unknown keyword 'zstd' (codecs, sample, measured, cell)"},
	{"measured 0 60\nmeasured 1 25\nmeasured 3 3\ncell 0 5 9 600 170 300\ncell 0 12 14 300 400 460\n"
	 "cell 0 31 31 100 1024 1024\ncell 1 3 4 140 110 150\ncell 1 31 31 60 1020 1024\ncell 3 0 1 3 10 40\n", "", 11,
	 "no cells"},
	{"codecs zstd-1 lz4\nsample 0.0625 88\nmeasured 0 60\nmeasured 1 25\nmeasured 3 3\ncell 0 5 9 600 170 300\n"
	 "cell 0 12 14 300 400 460\ncell 0 31 31 100 1024 1024\ncell 1 3 4 140 110 150\ncell 1 31 31 60 1020 1024\n"
	 "cell 3 0 1 3 10 40\n", "", 11, "[compressibility 1] has no 'codecs' line"},
	{"sample 0.0625 88\nmeasured 0 60\nmeasured 1 25\nmeasured 3 3\ncell 0 5 9 600 170 300\n"
	 "cell 0 12 14 300 400 460\ncell 0 31 31 100 1024 1024\ncell 1 3 4 140 110 150\ncell 1 31 31 60 1020 1024\n"
	 "cell 3 0 1 3 10 40\n", "", 11, "[compressibility 1] has no 'sample' line"},
	{"cell 0 5 9 600 170 300", "cell 0 5 9 600 170 300 1 2 3 4 5", 19, "12 fields"},
	/* [locality 1] */
	{"analysed 2000 0\n", "", 28, "'duplicates' before 'analysed'"},
	{"duplicates 800 592\n", "", 29, "'new' before 'duplicates'"},
	{"duplicates 800 592", "analysed 2000 0", 29, "'analysed' repeated (first on line 28)"},
	{"duplicates 800 592", "duplicates 800 592\nduplicates 800 592", 30, "'duplicates' repeated (first on line 29)"},
	{"analysed 2000 0", "analysed 2000", 28, "'analysed' expects 2 values ('analysed BLOCKS WINDOW'), got 1"},
	{"analysed 2000 0", "analysed 2000 0 0", 28, "expects 2 values"},
	{"analysed 2000 0", "analysed 0x7d0 0", 28, "BLOCKS '0x7d0': hexadecimal"},
	{"analysed 2000 0", "analysed 2001 0", 25, "the new runs (1200 blocks) and the 800 duplicates do not add up to the 2001"},
	{"analysed 2000 0", "analysed 700 0", 25, "800 duplicates among 700 blocks analysed"},
	{"analysed 2000 0", "analysed 2000 32", 0, NULL}, /* a merge's runs may outgrow WINDOW */
	{"analysed 2000 0", "analysed 2000 64", 0, NULL},
	{"duplicates 800 592", "duplicates 801 592", 25, "the dup runs hold 800 blocks, not the 801 duplicates"},
	{"duplicates 800 592", "duplicates 800 589", 25, "589 sequential duplicates, but the copy runs make 590 (plus at most two per zero run)"},
	{"duplicates 800 592", "duplicates 800 590", 0, NULL},
	{"duplicates 800 592", "duplicates 800 600", 0, NULL},
	{"duplicates 800 592", "duplicates 800 601", 25, "601 sequential duplicates"},
	{"dup 0 40 40", "dup 0 40 41", 32, "dup 0: 40 runs of 1 to 1 blocks cannot hold 41 blocks"},
	{"dup 3 30 360", "dup 3 30 239", 33, "dup 3: 30 runs of 8 to 15 blocks cannot hold 239 blocks"},
	{"dup 3 30 360", "dup 3 30 451", 33, "cannot hold 451 blocks"},
	{"dup 3 30 360", "dup 3 0 0", 33, "dup 3: COUNT is 0"},
	{"dup 3 30 360", "dup 48 1 1", 33, "dup: K 48 is out of range (at most 47)"},
	{"dup 3 30 360", "dup 0 30 30", 33, "dup 0 repeats dup 0"},
	{"dup 6 5 400", "dup 2 5 20", 34, "dup 2 comes after dup 3"},
	{"dup 6 5 400", "dup 47 1 18446744073709551615", 34, "dup 47: 1 runs of 140737488355328 to 281474976710655 blocks cannot hold"},
	{"copy 5 10 360", "copy 5 10 359", 25, "the copy runs (759) and zero runs (40) do not add up to the 800 duplicates"},
	{"copy 0 100 100\n", "", 25, "do not add up"},
	{"zero 3 5 40", "zero 3 5 40\nnew 5 1 33", 25, "the new runs (1233 blocks)"},
	{"zero 3 5 40", "zero 3 5 40\nnew 3 1 8", 39, "new 3 comes after new 4"},
	{"zero 3 5 40", "zero 3 5", 38, "'zero' expects 3 values"},
	{"zero 3 5 40", "ones 3 5 40", 38, "unknown keyword 'ones' (analysed, duplicates, new, dup, copy, zero)"},
	{"zero 3 5 40", "zero 3 5 40 # the zero block", 0, NULL},
	/* interleaved kinds are fine as long as each kind is sorted */
	{"new 4 50 1100\ndup 0 40 40\n", "dup 0 40 40\nnew 4 50 1100\n", 0, NULL},
	{"analysed 2000 0\nduplicates 800 592\nnew 0 100 100\nnew 4 50 1100\ndup 0 40 40\ndup 3 30 360\ndup 6 5 400\n"
	 "copy 0 100 100\ncopy 2 60 300\ncopy 5 10 360\nzero 3 5 40\n", "analysed 2000 0\n", 25,
	 "[locality 1] has no 'duplicates' line"},
	{"analysed 2000 0\nduplicates 800 592\nnew 0 100 100\nnew 4 50 1100\ndup 0 40 40\ndup 3 30 360\ndup 6 5 400\n"
	 "copy 0 100 100\ncopy 2 60 300\ncopy 5 10 360\nzero 3 5 40\n", "analysed 0 0\nduplicates 0 0\n", 0, NULL},
	{"analysed 2000 0\nduplicates 800 592\nnew 0 100 100\nnew 4 50 1100\ndup 0 40 40\ndup 3 30 360\ndup 6 5 400\n"
	 "copy 0 100 100\ncopy 2 60 300\ncopy 5 10 360\nzero 3 5 40\n", "", 25, "[locality 1] has no 'analysed' line"},
	/* CRLF line ends in the sections as elsewhere */
	{"zero 3 5 40\n", "zero 3 5 40\r\n", 0, NULL},
	{"zero 3 5 40\n", "zero 3 5\r40\n", 38, "carriage return"},
};

static void test_sections_edits(void)
{
	size_t len;
	char *orig = slurp(DATA("good-sections.dist"), &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
	for (size_t i = 0; i < sizeof section_edits / sizeof section_edits[0]; i++) {
		const char *at = strstr(orig, section_edits[i].find);
		CU_ASSERT_PTR_NOT_NULL(at);
		if (!at) {
			fprintf(stderr, "\n  edit %zu: '%s' not in the file\n", i, section_edits[i].find);
			continue;
		}
		size_t pre = (size_t)(at - orig), fl = strlen(section_edits[i].find), rl = strlen(section_edits[i].repl);
		char *text = malloc(len - fl + rl + 1);
		memcpy(text, orig, pre);
		memcpy(text + pre, section_edits[i].repl, rl);
		memcpy(text + pre + rl, at + fl, len - pre - fl + 1);
		struct dist d;
		struct dd_err err;
		memset(&err, 0, sizeof err);
		int rc = dist_parse(text, len - fl + rl, "edit.dist", &d, &err), ok;
		if (!section_edits[i].reason) {
			ok = rc == 0 && d.comp.present && d.locality.present && dist_sections_check(&d, NULL) == 0;
		} else {
			char where[64];
			snprintf(where, sizeof where, "edit.dist:%d: ", section_edits[i].line);
			ok = rc == -1 && strstr(err.msg, where) == err.msg && strstr(err.msg, section_edits[i].reason) &&
			     d.rows == NULL && d.comp.cells == NULL && !d.comp.present && !d.locality.present;
		}
		CU_ASSERT(ok);
		if (!ok)
			fprintf(stderr, "\n  edit %zu ('%s' -> '%s'): rc %d, want %d \"%s\", got \"%s\"\n", i,
				section_edits[i].find, section_edits[i].repl, rc, section_edits[i].line,
				section_edits[i].reason ? section_edits[i].reason : "(accepted)", err.msg);
		dist_free(&d);
		free(text);
	}
	free(orig);
}

/* A tiny compressed size: version 1 rounded it to a mean of 0 and its ratio came out 0:1; version 2
 * keeps 1/2^20 of the block, never 0, and a version 1 0 reads as 1/4096 of the block. */
static void test_sections_tiny_means(void)
{
	static const char v1[] = "0 200\n[compressibility 1]\ncodecs zstd-1 lz4\nsample 1 200\nmeasured 0 200\n"
				 "cell 0 0 0 200 0 4\n";
	static const char v2[] = "0 200\n[compressibility 2]\ncodecs zstd-1 lz4\nsample 1 200\nmeasured 0 200\n"
				 "cell 0 0 0 200 432 4352\n";
	struct dist d;
	struct dd_err err;
	struct dist_comp_figures f;
	CU_ASSERT_EQUAL_FATAL(dist_parse(v1, sizeof v1 - 1, "v1", &d, &err), 0);
	CU_ASSERT_EQUAL(d.comp.cells[0].zstd_mean, DIST_COMP_UNIT / 4096);
	dist_comp_figures(&d.comp, &f);
	CU_ASSERT_DOUBLE_EQUAL(f.zstd_ratio, 4096, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f.lz4_ratio, 256, 1e-9);
	dist_free(&d);
	CU_ASSERT_EQUAL_FATAL(dist_parse(v2, sizeof v2 - 1, "v2", &d, &err), 0);
	dist_comp_figures(&d.comp, &f);
	CU_ASSERT_DOUBLE_EQUAL(f.zstd_ratio, (double)DIST_COMP_UNIT / 432, 1e-9); /* 27 B of 64 KiB: 2427:1 */
	dist_free(&d);
	char zero[sizeof v2];
	memcpy(zero, v2, sizeof v2);
	memcpy(strstr(zero, "432"), "000", 3);
	CU_ASSERT_EQUAL(dist_parse(zero, sizeof zero - 1, "zero", &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a mean size of 0"));
}

/* [granularity 1]: a file with all three sections reads, writes back byte for byte, and sums from
 * apart (threads, analyses) add up to a section that checks; every reject rule once. */
static const char gran_text[] = "# block-size: 4096\n0 40\n1 2\n[locality 1]\n"
				"# stream order: new = first occurrences, dup = duplicates, copy = copied sequences\n"
				"# (source +1 each block), zero = duplicates of the zero block; bin k = lengths 2^k..2^(k+1)-1\n"
				"analysed 44 0\nduplicates 2 1\nnew 5 1 42\ndup 1 1 2\ncopy 1 1 2\n"
				"[granularity 1]\n"
				"# 128 KiB windows aligned in their file; the first SIZE bytes of each compressed alone,\n"
				"# all-zero pieces left out: bytes in, bytes out per codec (ratio = BYTES / out)\n"
				"codecs zstd-1 zstd-3 lz4\nsample 0.5 3\n"
				"piece 4096 8192 4000 3900 5000\npiece 8192 16384 7000 6800 9000\n"
				"piece 16384 32768 12000 11500 17000\npiece 32768 65536 21000 20000 33000\n"
				"piece 65536 131072 38000 36000 64000\npiece 131072 262144 70000 66000 126000\n";

static const struct {
	const char *find, *repl;
	int line;
	const char *reason;
} gran_edits[] = {
	{"codecs zstd-1 zstd-3 lz4", "codecs zstd-1 lz4", 15, "exactly 'codecs zstd-1 zstd-3 lz4'"},
	{"codecs zstd-1 zstd-3 lz4\n", "", 15, "'sample' before 'codecs'"},
	{"sample 0.5 3", "sample 0 3", 16, "sample: P '0': out of range"},
	{"sample 0.5 3", "sample 0.5", 16, "'sample' expects 2 values"},
	{"sample 0.5 3", "sample 0.5 1", 12, "piece 4096: 8192 bytes are not whole pieces of at most one per window"},
	{"piece 4096 8192", "piece 4096 8191", 12, "bytes are not whole pieces"},
	{"piece 8192 16384 7000", "piece 8192 16384 17000", 12, "piece 8192: 17000 compressed bytes of 16384"},
	{"piece 8192 16384 7000", "piece 8192 16384 0", 12, "1 byte or more"},
	{"piece 8192", "piece 8000", 18, "SIZE 8000 is not one of 4096"},
	{"piece 8192", "piece 4096", 18, "piece 4096 repeated"},
	{"piece 8192 16384 7000 6800 9000\npiece 16384", "piece 16384 32768 12000 11500 17000\npiece 8192", 19,
	 "piece 8192 out of order"},
	{"piece 4096 8192 4000 3900 5000", "piece 4096 8192 4000 3900", 17, "'piece' expects 5 values"},
	{"piece 4096 8192 4000 3900 5000", "pieces 4096 8192 4000 3900 5000", 17, "unknown keyword 'pieces'"},
	{"[granularity 1]", "[granularity 2]", 12, "section 'granularity' version 2 is newer than this dedis reads (1)"},
	{"copy 1 1 2\n", "copy 1 1 2\n[granularity 1]\ncodecs zstd-1 zstd-3 lz4\nsample 1 0\n", 15, "given twice"},
	{"[locality 1]", "[granularity 1]\ncodecs zstd-1 zstd-3 lz4\nsample 1 0\n[locality 1]", 7,
	 "section 'locality' after 'granularity' (the order is compressibility, locality, granularity, alignment, then cdc)"},
	{"piece 4096 8192 4000 3900 5000\n", "", 0, NULL}, /* a size left out measured nothing */
	{"piece 131072 262144 70000 66000 126000\n", "piece 131072 262144 70000 66000 126000 # last\n", 0, NULL},
};

static void test_sections_granularity(void)
{
	struct dist a, b;
	struct dd_err err;
	int rc;
	CU_ASSERT_EQUAL_FATAL(dist_parse(gran_text, strlen(gran_text), "gran", &a, &err), 0);
	CU_ASSERT(a.gran.present && a.locality.present && !a.comp.present);
	CU_ASSERT(a.gran.sample_rate == 0.5 && a.gran.windows == 3 && a.gran.bytes[5] == 262144 &&
		  a.gran.zstd1[0] == 4000 && a.gran.zstd3[3] == 20000 && a.gran.lz4[5] == 126000);
	static const char *const header[] = {"block-size: 4096"};
	char *text = write_to_string(&a, header, 1, &rc);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(text, gran_text);
	free(text);
	/* sums made apart add up: twice the windows, twice every sum, at the same rate */
	b = a;
	for (int k = 0; k < DIST_GRAN_SIZES; k++) {
		b.gran.bytes[k] *= 2;
		b.gran.zstd1[k] *= 2;
		b.gran.zstd3[k] *= 2;
		b.gran.lz4[k] *= 2;
	}
	b.gran.windows *= 2;
	CU_ASSERT_EQUAL(dist_sections_check(&b, &err), 0);
	b.gran.zstd3[2] = b.gran.bytes[2] + 1;
	CU_ASSERT_EQUAL(dist_sections_check(&b, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[granularity 1]: piece 16384: 65537 compressed bytes"));
	dist_free(&a);
	for (size_t i = 0; i < sizeof gran_edits / sizeof gran_edits[0]; i++) {
		const char *at = strstr(gran_text, gran_edits[i].find);
		CU_ASSERT_PTR_NOT_NULL_FATAL(at);
		size_t pre = (size_t)(at - gran_text), fl = strlen(gran_edits[i].find), rl = strlen(gran_edits[i].repl);
		char buf[4096];
		snprintf(buf, sizeof buf, "%.*s%s%s", (int)pre, gran_text, gran_edits[i].repl, at + fl);
		memset(&err, 0, sizeof err);
		rc = dist_parse(buf, strlen(buf), "g.dist", &a, &err);
		char where[64];
		snprintf(where, sizeof where, "g.dist:%d: ", gran_edits[i].line);
		bool ok = gran_edits[i].reason ? rc == -1 && strstr(err.msg, where) == err.msg &&
						 strstr(err.msg, gran_edits[i].reason) && !a.gran.present
					       : rc == 0 && a.gran.present;
		CU_ASSERT(ok);
		if (!ok)
			fprintf(stderr, "\n  granularity edit %zu: rc %d, want %d \"%s\", got \"%s\"\n", i, rc,
				gran_edits[i].line, gran_edits[i].reason ? gran_edits[i].reason : "(accepted)", err.msg);
		(void)rl;
		dist_free(&a);
	}
}

int suite_distfile(void); /* listed in suites_lib.c */

int suite_distfile(void)
{
	static const struct unit_test tests[] = {
		{"bundled distributions vs published figures", test_bundled},
		{"kernels.dist repeated table adds up", test_kernels_merged},
		{"sections: a tiny compressed size keeps its ratio", test_sections_tiny_means},
		{"repeated keys: legacy adds, dedis format refuses", test_legacy_vs_dedis_repeats},
		{"malformed files", test_bad_files},
		{"missing file", test_missing_file},
		{"comments, headers, any order", test_comments_and_order},
		{"write/parse round trip", test_round_trip},
		{"from_rows errors", test_from_rows_errors},
		{"compute_rows on empty", test_compute_rows_empty},
		{"sections: a good file", test_sections_good},
		{"sections: exact round trip, writer refuses what it cannot read", test_sections_round_trip},
		{"sections: old files load, a section makes a dedis file", test_sections_legacy},
		{"sections: newer and unknown sections rejected", test_sections_newer_unknown},
		{"sections: every reject rule", test_sections_edits},
		{"sections: granularity reads, writes back, adds up, rejects", test_sections_granularity},
		{NULL, NULL},
	};
	return unit_add_suite("distfile", tests);
}
