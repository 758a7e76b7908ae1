/* test_access.c - offset generators: sequential wrap-around, uniform spread, and NURand checked
 * against the TPC-C formula draw by draw with a fixed RNG, plus its hotspot skew. */
#include <stdlib.h>
#include <string.h>
#include "bench/workload/access.h"
#include "unit.h"

/* A pattern's registry index, as the option table stores it. */
static int pattern(const char *name)
{
	for (int i = 0; access_names[i]; i++)
		if (!strcmp(access_names[i], name))
			return i;
	CU_FAIL_FATAL("no such access pattern");
	return -1;
}

static void sequential_wraps(void)
{
	struct access_gen g;
	struct rng r;
	rng_seed(&r, 1);
	access_init(&g, pattern("seq"), 5, 0, 0);
	for (int lap = 0; lap < 3; lap++)
		for (uint64_t b = 0; b < 5; b++)
			CU_ASSERT_EQUAL(access_next(&g, &r), b);
}

static void uniform_covers_evenly(void)
{
	/* 16 blocks, 160000 draws: chi-square, 15 dof, 0.1 % critical value 37.70. */
	struct access_gen g;
	struct rng r;
	rng_seed(&r, 2);
	access_init(&g, pattern("uniform"), 16, 0, 0);
	uint64_t c[16] = {0};
	for (int i = 0; i < 160000; i++) {
		uint64_t b = access_next(&g, &r);
		CU_ASSERT_FATAL(b < 16);
		c[b]++;
	}
	double chi = 0;
	for (int i = 0; i < 16; i++)
		chi += (c[i] - 10000.0) * (c[i] - 10000.0) / 10000.0;
	CU_ASSERT(chi < 37.70);
}

static void nurand_matches_formula(void)
{
	/* The generator and the formula written out here consume the same RNG stream in the same
	 * order: (((rand(0,A) | rand(0,N-1)) + C) mod N), rand inclusive. */
	const uint64_t n = 100000, a = 8191, c = 1234;
	struct access_gen g;
	struct rng r1, r2;
	rng_seed(&r1, 3);
	rng_seed(&r2, 3);
	access_init(&g, pattern("nurand"), n, a, c);
	for (int i = 0; i < 100000; i++) {
		uint64_t x = rng_range(&r2, 0, a);
		uint64_t y = rng_range(&r2, 0, n - 1);
		uint64_t want = ((x | y) + c) % n;
		CU_ASSERT_EQUAL_FATAL(access_next(&g, &r1), want);
	}
}

static void nurand_defaults(void)
{
	struct access_gen g;
	access_init(&g, pattern("nurand"), 262144, 0, 0);
	CU_ASSERT_EQUAL(g.a, 26214); /* N/10, as DEDISbench */
	CU_ASSERT_EQUAL(access_default_a(5), 1);
	uint64_t c1 = access_draw_c(77, 1000), c2 = access_draw_c(77, 1000);
	CU_ASSERT_EQUAL(c1, c2);
	CU_ASSERT(c1 <= 1000);
	int differ = 0;
	for (uint64_t s = 0; s < 20; s++)
		differ += access_draw_c(s, 1000) != c1;
	CU_ASSERT(differ > 15);
}

/* Every registered pattern is found by its name, its name is the one the option table lists, and
 * the flags the core reads say what it is. */
static void registry_consistent(void)
{
	size_t n = 0;
	for (; access_names[n]; n++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(access_patterns[n]);
		CU_ASSERT_STRING_EQUAL(access_patterns[n]->name, access_names[n]);
		CU_ASSERT_PTR_EQUAL(access_pattern_find(access_names[n]), access_patterns[n]);
		CU_ASSERT_PTR_NOT_NULL(access_patterns[n]->init);
		CU_ASSERT_PTR_NOT_NULL(access_patterns[n]->next);
	}
	CU_ASSERT_PTR_NULL(access_patterns[n]);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_PTR_NULL(access_pattern_find("zipf"));
	/* The INI access_type numbers 0 seq, 1 uniform, 2 nurand are registry positions. */
	CU_ASSERT_EQUAL(pattern("seq"), 0);
	CU_ASSERT_EQUAL(pattern("uniform"), 1);
	CU_ASSERT_EQUAL(pattern("nurand"), 2);
	CU_ASSERT(access_pattern_find("seq")->flags & ACCESS_ORDERED);
	CU_ASSERT(access_pattern_find("nurand")->flags & ACCESS_SKEWED);
	CU_ASSERT_FALSE(access_pattern_find("uniform")->flags & (ACCESS_ORDERED | ACCESS_SKEWED));
	/* --help's "seq (wraps around), uniform, or nurand (TPC-C hotspot)" */
	CU_ASSERT_STRING_EQUAL(access_pattern_find("seq")->note, "wraps around");
	CU_ASSERT_PTR_NULL(access_pattern_find("uniform")->note);
	CU_ASSERT_STRING_EQUAL(access_pattern_find("nurand")->note, "TPC-C hotspot");
}

static int desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x < y) - (x > y);
}

static double hottest10(int kind, uint64_t n, uint64_t draws)
{
	struct access_gen g;
	struct rng r;
	rng_seed(&r, 4);
	access_init(&g, kind, n, 0, access_draw_c(4, access_default_a(n)));
	uint32_t *cnt = calloc(n, sizeof *cnt);
	for (uint64_t i = 0; i < draws; i++)
		cnt[access_next(&g, &r)]++;
	qsort(cnt, n, sizeof *cnt, desc);
	uint64_t hot = 0;
	for (uint64_t i = 0; i < n / 10; i++)
		hot += cnt[i];
	free(cnt);
	return (double)hot / (double)draws;
}

static void nurand_is_skewed(void)
{
	double u = hottest10(pattern("uniform"), 65536, 65536 * 4);
	double h = hottest10(pattern("nurand"), 65536, 65536 * 4);
	CU_ASSERT(h > 3 * u);
	CU_ASSERT(u < 0.2);
}

int suite_access(void)
{
	static const struct unit_test tests[] = {
		{"sequential wraps around", sequential_wraps},
		{"uniform covers evenly (chi-square)", uniform_covers_evenly},
		{"NURand equals the TPC-C formula", nurand_matches_formula},
		{"NURand A and C defaults", nurand_defaults},
		{"NURand hottest 10 % >= 3x uniform", nurand_is_skewed},
		{"registry: names, lookup, order, flags", registry_consistent},
		{NULL, NULL},
	};
	return unit_add_suite("access", tests);
}
