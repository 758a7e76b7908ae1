/* test_dupgen.c - the content-id sampler: frequencies match the distribution (chi-square with a
 * fixed seed), ids stay in their row's range, unique ids are fresh and per worker. */
#include <stdlib.h>
#include <string.h>
#include "content.h"
#include "distfile.h"
#include "dupgen.h"
#include "unit.h"

static void build(struct dist *d, struct dupgen_table *t, const struct dist_row *rows, size_t n)
{
	struct dist_error e;
	CU_ASSERT_FATAL(dist_from_rows(rows, n, d, &e) == 0);
	CU_ASSERT_FATAL(dupgen_build(t, d) == 0);
}

static void frequencies_follow_distribution(void)
{
	/* T = 1000 + 200*2 + 50*4 + 10*10 = 1700. P(unique) = 1000/1700, P(row dups=1) = 400/1700... */
	const struct dist_row rows[] = {{9, 10}, {0, 1000}, {1, 200}, {3, 50}};
	struct dist d;
	struct dupgen_table t;
	build(&d, &t, rows, 4);
	CU_ASSERT_EQUAL(t.total, 1700);
	CU_ASSERT_EQUAL(t.nrows, 3);
	struct dupgen g;
	struct rng r;
	dupgen_init(&g, &t, 0);
	rng_seed(&r, 12345);
	const int n = 1000000;
	uint64_t cat[4] = {0}, in_row9[10] = {0};
	for (int i = 0; i < n; i++) {
		uint64_t id = dupgen_next(&g, &r);
		CU_ASSERT_NOT_EQUAL_FATAL(id, 0);
		if (id & CONTENT_UNIQUE_BIT) {
			cat[0]++;
			continue;
		}
		/* ids 1..200 are the dups=1 row, 201..250 dups=3, 251..260 dups=9 */
		CU_ASSERT_FATAL(id >= 1 && id <= 260);
		if (id <= 200)
			cat[1]++;
		else if (id <= 250)
			cat[2]++;
		else {
			cat[3]++;
			in_row9[id - 251]++;
		}
	}
	const double p[4] = {1000 / 1700.0, 400 / 1700.0, 200 / 1700.0, 100 / 1700.0};
	double chi = 0;
	for (int i = 0; i < 4; i++)
		chi += (cat[i] - n * p[i]) * (cat[i] - n * p[i]) / (n * p[i]);
	CU_ASSERT(chi < 16.27); /* 3 dof, 0.1 % */
	/* contents within a row are equally likely: 9 dof, 0.1 % critical value 27.88 */
	double chi9 = 0, e = cat[3] / 10.0;
	for (int i = 0; i < 10; i++)
		chi9 += (in_row9[i] - e) * (in_row9[i] - e) / e;
	CU_ASSERT(chi9 < 27.88);
	CU_ASSERT_EQUAL(g.unique_next, cat[0]);
	dupgen_free(&t);
	dist_free(&d);
}

static void unique_ids_are_fresh_per_worker(void)
{
	const struct dist_row rows[] = {{0, 10}};
	struct dist d;
	struct dupgen_table t;
	build(&d, &t, rows, 1);
	struct dupgen a, b;
	struct rng r;
	rng_seed(&r, 1);
	dupgen_init(&a, &t, 0);
	dupgen_init(&b, &t, 1);
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t x = dupgen_next(&a, &r), y = dupgen_next(&b, &r);
		CU_ASSERT_EQUAL(x, content_unique_id(0, i));
		CU_ASSERT_EQUAL(y, content_unique_id(1, i));
		CU_ASSERT_NOT_EQUAL(x, y);
	}
	dupgen_free(&t);
	dist_free(&d);
}

static void bundled_distribution_unique_share(void)
{
	struct dist d;
	struct dist_error e;
	struct dupgen_table t;
	CU_ASSERT_FATAL(dist_load(DEDIS_SRCDIR "/distributions/kernels.dist", &d, &e) == 0);
	CU_ASSERT_FATAL(dupgen_build(&t, &d) == 0);
	struct dist_rows rows;
	dist_compute_rows(&d, &rows);
	struct dupgen g;
	struct rng r;
	dupgen_init(&g, &t, 0);
	rng_seed(&r, 9);
	const int n = 400000;
	int uniq = 0;
	for (int i = 0; i < n; i++)
		uniq += (dupgen_next(&g, &r) & CONTENT_UNIQUE_BIT) != 0;
	/* binomial sd = sqrt(p(1-p)/n) ~ 0.066 %; allow 5 sd */
	CU_ASSERT_DOUBLE_EQUAL((double)uniq / n, rows.u0, 0.0033);
	/* the row search agrees with a linear scan at every boundary */
	for (size_t i = 0; i < t.nrows; i++) {
		CU_ASSERT_EQUAL(dupgen_row_of(&t, t.cum[i] - 1), i);
		if (i + 1 < t.nrows)
			CU_ASSERT_EQUAL(dupgen_row_of(&t, t.cum[i]), i + 1);
	}
	dupgen_free(&t);
	dist_free(&d);
}

int suite_dupgen(void)
{
	static const struct unit_test tests[] = {
		{"frequencies follow the distribution (chi-square)", frequencies_follow_distribution},
		{"unique ids are fresh and per worker", unique_ids_are_fresh_per_worker},
		{"bundled kernels: unique share and row search", bundled_distribution_unique_share},
		{NULL, NULL},
	};
	return unit_add_suite("dupgen", tests);
}
