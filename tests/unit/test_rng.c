/* test_rng.c - the PRNG: determinism per seed, independent split streams, unbiased bounded
 * draws (chi-square with a fixed seed), inclusive ranges. */
#include <string.h>
#include "lib/rng.h"
#include "unit.h"

static void same_seed_same_stream(void)
{
	struct rng a, b;
	rng_seed(&a, 42);
	rng_seed(&b, 42);
	for (int i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(rng_next(&a), rng_next(&b));
	rng_seed(&b, 43);
	rng_seed(&a, 42);
	int same = 0;
	for (int i = 0; i < 1000; i++)
		same += rng_next(&a) == rng_next(&b);
	CU_ASSERT_EQUAL(same, 0);
}

static void split_streams_differ(void)
{
	struct rng a, b, a2;
	rng_split(&a, 7, 0);
	rng_split(&b, 7, 1);
	rng_split(&a2, 7, 0);
	int same = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = rng_next(&a);
		same += x == rng_next(&b);
		CU_ASSERT_EQUAL(x, rng_next(&a2));
	}
	CU_ASSERT_EQUAL(same, 0);
}

static void below_is_bounded_and_uniform(void)
{
	/* 10 buckets, 1e6 draws: chi-square with 9 degrees of freedom; 27.88 is the 0.1 % critical value. */
	struct rng r;
	rng_seed(&r, 1);
	uint64_t counts[10] = {0};
	const int n = 1000000;
	for (int i = 0; i < n; i++) {
		uint64_t x = rng_below(&r, 10);
		CU_ASSERT_FATAL(x < 10);
		counts[x]++;
	}
	double chi = 0, e = n / 10.0;
	for (int i = 0; i < 10; i++)
		chi += (counts[i] - e) * (counts[i] - e) / e;
	CU_ASSERT(chi < 27.88);
}

static void range_is_inclusive(void)
{
	struct rng r;
	rng_seed(&r, 2);
	int seen_lo = 0, seen_hi = 0;
	for (int i = 0; i < 10000; i++) {
		uint64_t x = rng_range(&r, 5, 8);
		CU_ASSERT(x >= 5 && x <= 8);
		seen_lo |= x == 5;
		seen_hi |= x == 8;
	}
	CU_ASSERT(seen_lo && seen_hi);
	CU_ASSERT_EQUAL(rng_range(&r, 9, 9), 9);
}

static void double_in_unit_interval(void)
{
	struct rng r;
	rng_seed(&r, 3);
	double sum = 0;
	for (int i = 0; i < 100000; i++) {
		double d = rng_double(&r);
		CU_ASSERT(d >= 0 && d < 1);
		sum += d;
	}
	CU_ASSERT_DOUBLE_EQUAL(sum / 100000, 0.5, 0.01);
}

int suite_rng(void)
{
	static const struct unit_test tests[] = {
		{"same seed, same stream", same_seed_same_stream},
		{"split streams differ", split_streams_differ},
		{"rng_below bounded and uniform", below_is_bounded_and_uniform},
		{"rng_range inclusive", range_is_inclusive},
		{"rng_double in [0,1)", double_in_unit_interval},
		{NULL, NULL},
	};
	return unit_add_suite("rng", tests);
}
