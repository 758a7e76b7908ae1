/* test_gen_counts.c - the histogram of copies -> distribution rows -> the distribution file
 * dedisgen writes (header comments, sorted records), read back by dist_load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gen/counts.h"
#include "gen/output.h"
#include "unit.h"

static void test_hist_to_dist(void)
{
	struct count_hist h = {0};
	struct dist d;
	struct dd_err e;
	/* 5 contents seen once, 3 seen twice, 1 seen 1000 times (added in pieces, any order) */
	CU_ASSERT_EQUAL(count_hist_add(&h, 1000, 1), 0);
	CU_ASSERT_EQUAL(count_hist_add(&h, 1, 3), 0);
	CU_ASSERT_EQUAL(count_hist_add(&h, 2, 3), 0);
	CU_ASSERT_EQUAL(count_hist_add(&h, 1, 2), 0);
	CU_ASSERT_EQUAL(count_hist_add(&h, 0, 1), -1);
	CU_ASSERT_EQUAL_FATAL(count_hist_to_dist(&h, &d, &e), 0);
	CU_ASSERT_EQUAL_FATAL(d.nrows, 3);
	CU_ASSERT_EQUAL(d.rows[0].dups, 0);
	CU_ASSERT_EQUAL(d.rows[0].blocks, 5);
	CU_ASSERT_EQUAL(d.rows[1].dups, 1);
	CU_ASSERT_EQUAL(d.rows[1].blocks, 3);
	CU_ASSERT_EQUAL(d.rows[2].dups, 999);
	CU_ASSERT_EQUAL(d.rows[2].blocks, 1);
	struct dist_rows r;
	dist_compute_rows(&d, &r);
	CU_ASSERT_EQUAL(r.total_blocks, 5 + 6 + 1000);
	CU_ASSERT_EQUAL(r.distinct, 9);
	dist_free(&d);
	count_hist_free(&h);
}

static void test_many_counts(void)
{
	struct count_hist h = {0};
	struct dist d;
	struct dd_err e;
	for (uint64_t c = 1; c <= 5000; c++)
		CU_ASSERT_EQUAL_FATAL(count_hist_add(&h, c, c % 3 + 1), 0);
	CU_ASSERT_EQUAL_FATAL(count_hist_to_dist(&h, &d, &e), 0);
	CU_ASSERT_EQUAL_FATAL(d.nrows, 5000);
	for (size_t i = 0; i < d.nrows; i++) {
		CU_ASSERT_EQUAL_FATAL(d.rows[i].dups, i);
		CU_ASSERT_EQUAL_FATAL(d.rows[i].blocks, (i + 1) % 3 + 1);
	}
	dist_free(&d);
	count_hist_free(&h);
	/* empty: an error, never an empty file */
	CU_ASSERT_EQUAL(count_hist_to_dist(&h, &d, &e), -1);
}

static void test_written_file(void)
{
	struct count_hist h = {0};
	struct dist d, back;
	struct dd_err e;
	struct dist_header hd;
	char *src[] = {"/data/a", "/data/b"};
	char path[] = "/tmp/dedis-unit-dist.XXXXXX";
	count_hist_add(&h, 3, 2);
	count_hist_add(&h, 1, 7);
	CU_ASSERT_EQUAL_FATAL(count_hist_to_dist(&h, &d, &e), 0);
	dist_header_build(&hd, "9.9", src, 2, 8192, "sha1", 123456, 3); /* one of the 2 contents stored 3 times */
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	FILE *f = fdopen(fd, "w");
	CU_ASSERT_EQUAL(dist_write(f, &d, hd.ptrs, hd.n), 0);
	fclose(f);
	char text[1024] = {0};
	f = fopen(path, "r");
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	CU_ASSERT(n > 0);
	CU_ASSERT_STRING_EQUAL(text, "# dedisgen 9.9\n"
				     "# source: /data/a /data/b\n"
				     "# block-size: 8192\n"
				     "# hash: sha1\n"
				     "# bytes: 123456\n"
				     "# zero-blocks: 3\n"
				     "0 7\n"
				     "2 2\n");
	CU_ASSERT_EQUAL_FATAL(dist_load(path, &back, &e), 0);
	CU_ASSERT_EQUAL(back.block_size, 8192);
	CU_ASSERT_EQUAL(back.zero_blocks, 3);
	CU_ASSERT_STRING_EQUAL(back.hash, "sha1");
	CU_ASSERT_EQUAL(back.nrows, 2);
	unlink(path);
	dist_free(&back);
	dist_free(&d);
	count_hist_free(&h);
}

int suite_gen_counts(void)
{
	static const struct unit_test tests[] = {
		{"histogram -> rows", test_hist_to_dist},
		{"5000 distinct counts", test_many_counts},
		{"written distribution file", test_written_file},
		{NULL, NULL},
	};
	return unit_add_suite("gen_counts", tests);
}
