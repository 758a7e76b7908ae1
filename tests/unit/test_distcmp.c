/* test_distcmp.c - power-of-two histograms of copies, total-variation distance and row
 * differences, on small distributions worked out by hand. */
#include <math.h>
#include "lib/distcmp.h"
#include "unit.h"

#define NEAR(a, b) CU_ASSERT(fabs((a) - (b)) < 1e-9)

static void mk(struct dist *d, const struct dist_row *rows, size_t n)
{
	struct dd_err e;
	CU_ASSERT_EQUAL_FATAL(dist_from_rows(rows, n, d, &e), 0);
}

/* A: 6 unique, 2 contents x2, 1 content x4: T = 14, distinct 9.
 * B: 10 unique, 2 contents x2: T = 14, distinct 12. */
static const struct dist_row A[] = {{0, 6}, {1, 2}, {3, 1}};
static const struct dist_row B[] = {{0, 10}, {1, 2}};

static void test_pow2(void)
{
	struct dist a;
	struct dist_pow2 h;
	static const struct dist_row rows[] = {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {6, 1}, {7, 1}, {1023, 2}};
	mk(&a, rows, 7);
	dist_pow2_histogram(&a, &h);
	/* copies 1 | 2,3 | 4,7 | 8 | 1024 x2 */
	CU_ASSERT_EQUAL(h.blocks[0], 1);
	CU_ASSERT_EQUAL(h.blocks[1], 5);
	CU_ASSERT_EQUAL(h.contents[1], 2);
	CU_ASSERT_EQUAL(h.blocks[2], 11);
	CU_ASSERT_EQUAL(h.blocks[3], 8);
	CU_ASSERT_EQUAL(h.blocks[10], 2048);
	CU_ASSERT_EQUAL(h.contents[10], 2);
	CU_ASSERT_EQUAL(h.top, 10);
	NEAR(h.share[10], 2048.0 / 2073.0);
	double s = 0;
	for (int k = 0; k < DIST_POW2_BUCKETS; k++)
		s += h.share[k];
	NEAR(s, 1.0);
	dist_free(&a);
}

static void test_compare_hand(void)
{
	struct dist a, b;
	struct dist_diff df;
	mk(&a, A, 3);
	mk(&b, B, 2);
	dist_compare(&a, &b, &df);
	CU_ASSERT_EQUAL(df.a.total_blocks, 14);
	CU_ASSERT_EQUAL(df.b.total_blocks, 14);
	NEAR(df.a.u0, 6.0 / 14);
	NEAR(df.a.u1, 3.0 / 14);
	NEAR(df.a.d, 5.0 / 14);
	NEAR(df.du0, 100.0 * 4 / 14);
	NEAR(df.du1, -100.0 / 14);
	NEAR(df.dd, -300.0 / 14);
	NEAR(df.max_pp, 100.0 * 4 / 14);
	NEAR(df.ratio_err, -0.25);
	/* shares A: 6/14, 4/14, 4/14; B: 10/14, 4/14, 0 -> TV = (4 + 0 + 4) / 2 / 14 */
	NEAR(df.tv, 4.0 / 14);
	dist_free(&a);
	dist_free(&b);
}

static void test_tv_bounds(void)
{
	struct dist a, b;
	struct dist_diff df;
	static const struct dist_row X[] = {{0, 5}}, Y[] = {{9, 3}};
	mk(&a, A, 3);
	dist_compare(&a, &a, &df);
	NEAR(df.tv, 0);
	NEAR(df.max_pp, 0);
	NEAR(df.ratio_err, 0);
	dist_free(&a);
	mk(&a, X, 1);
	mk(&b, Y, 1);
	dist_compare(&a, &b, &df);
	NEAR(df.tv, 1.0);
	NEAR(df.du0, -100);
	NEAR(df.dd, 90);
	dist_free(&a);
	dist_free(&b);
}

int suite_distcmp(void)
{
	static const struct unit_test tests[] = {
		{"power-of-two buckets", test_pow2},
		{"compare, hand-computed", test_compare_hand},
		{"TV distance 0 and 1", test_tv_bounds},
		{NULL, NULL},
	};
	return unit_add_suite("distcmp", tests);
}
