/* test_distfile.c - CUnit suite for lib/distfile.c: the bundled distributions against the
 * published Table 1 figures, one malformed file per error class, comments, order, round trip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "distfile.h"
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
		struct dist_error err;
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
	struct dist_error err;
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
	struct dist_error err;

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
		struct dist_error err;

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
	struct dist_error err;
	CU_ASSERT_EQUAL(dist_load(DATA("no-such-file.dist"), &d, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no-such-file.dist"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot open"));
	CU_ASSERT_EQUAL(dist_load(UNIT_DATADIR, &d, &err), -1); /* a directory */
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot read"));
}

static void test_comments_and_order(void)
{
	struct dist d;
	struct dist_error err;
	int rc = dist_load(DATA("good-commented.dist"), &d, &err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(d.nrows, 4);
	static const struct dist_row want[] = {{0, 100}, {1, 40}, {2, 30}, {7, 2}};
	for (size_t i = 0; i < 4 && i < d.nrows; i++) {
		CU_ASSERT_EQUAL(d.rows[i].dups, want[i].dups);
		CU_ASSERT_EQUAL(d.rows[i].blocks, want[i].blocks);
	}
	CU_ASSERT_EQUAL(d.zero_blocks, 17);
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
		"dedisgen 0.1.0", "source: /srv/data", "block-size: 4096", "hash: sha1", "zero-blocks: 12",
	};
	struct dist a, b;
	struct dist_error err;
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
	a.zero_blocks = 12;
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
	struct dist_error err;
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

int suite_distfile(void); /* listed in suites_lib.c */

int suite_distfile(void)
{
	static const struct unit_test tests[] = {
		{"bundled distributions vs published figures", test_bundled},
		{"kernels.dist repeated table adds up", test_kernels_merged},
		{"repeated keys: legacy adds, dedis format refuses", test_legacy_vs_dedis_repeats},
		{"malformed files", test_bad_files},
		{"missing file", test_missing_file},
		{"comments, headers, any order", test_comments_and_order},
		{"write/parse round trip", test_round_trip},
		{"from_rows errors", test_from_rows_errors},
		{"compute_rows on empty", test_compute_rows_empty},
		{NULL, NULL},
	};
	return unit_add_suite("distfile", tests);
}
