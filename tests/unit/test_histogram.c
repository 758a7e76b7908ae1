/* test_histogram.c - CUnit suite for lib/histogram.c: bucket layout (monotone, contiguous,
 * bounded relative error), percentiles of known data, merge, interval diff, empty histograms. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/histogram.h"
#include "unit.h"

static void test_layout(void)
{
	CU_ASSERT_EQUAL(hist_bucket_low(0), 0);
	CU_ASSERT_EQUAL(hist_bucket_high(HIST_BUCKETS - 1), UINT64_MAX);
	for (unsigned b = 0; b + 1 < HIST_BUCKETS; b++) {
		uint64_t lo = hist_bucket_low(b), hi = hist_bucket_high(b);
		CU_ASSERT(lo <= hi);
		CU_ASSERT_EQUAL(hist_bucket_low(b + 1), hi + 1); /* contiguous, monotone */
		CU_ASSERT_EQUAL(hist_bucket_of(lo), b);
		CU_ASSERT_EQUAL(hist_bucket_of(hi), b);
	}
	/* exact below 2^HIST_SUB_BITS (and up to 2^(HIST_SUB_BITS+1)) */
	for (uint64_t v = 0; v < (2u << HIST_SUB_BITS); v++) {
		CU_ASSERT_EQUAL(hist_bucket_low(hist_bucket_of(v)), v);
		CU_ASSERT_EQUAL(hist_bucket_high(hist_bucket_of(v)), v);
	}
	/* the last regular value and saturation */
	uint64_t top = (UINT64_C(1) << HIST_MAX_EXP) - 1;
	CU_ASSERT_EQUAL(hist_bucket_of(top), HIST_BUCKETS - 1);
	CU_ASSERT_EQUAL(hist_bucket_low(HIST_BUCKETS - 1), top - (top >> (HIST_SUB_BITS + 1)));
	CU_ASSERT_EQUAL(hist_bucket_of(top + 1), HIST_BUCKETS - 1);
	CU_ASSERT_EQUAL(hist_bucket_of(UINT64_MAX), HIST_BUCKETS - 1);
	CU_ASSERT(hist_bucket_of(top) > hist_bucket_of(top >> 1));
}

static void test_relative_error(void)
{
	/* a geometric sweep plus every power-of-two edge: the bucket's upper bound (what a
	 * percentile reports) is within 1/64 of the value */
	double worst = 0;
	uint64_t v = 1;
	while (v < (UINT64_C(1) << HIST_MAX_EXP)) {
		for (int d = -1; d <= 1; d++) {
			uint64_t x = v + (uint64_t)d;
			if (x == 0 || x >= (UINT64_C(1) << HIST_MAX_EXP))
				continue;
			unsigned b = hist_bucket_of(x);
			CU_ASSERT(hist_bucket_low(b) <= x && x <= hist_bucket_high(b));
			double err = (double)(hist_bucket_high(b) - x) / (double)x;
			if (err > worst)
				worst = err;
		}
		v = v + v / 37 + 1;
	}
	for (int e = 0; e < HIST_MAX_EXP; e++) {
		uint64_t x = UINT64_C(1) << e;
		unsigned b = hist_bucket_of(x);
		double err = (double)(hist_bucket_high(b) - x) / (double)x;
		if (err > worst)
			worst = err;
		CU_ASSERT_EQUAL(hist_bucket_low(b), x);
	}
	CU_ASSERT(worst <= 1.0 / 64);
	CU_ASSERT(worst > 0.0);
}

static void fill_uniform(struct histogram *h, uint64_t from, uint64_t to)
{
	for (uint64_t v = from; v <= to; v++)
		hist_record(h, v);
}

static void test_percentiles(void)
{
	static struct histogram h;
	hist_init(&h);
	fill_uniform(&h, 1, 100000);
	CU_ASSERT_EQUAL(h.count, 100000);
	CU_ASSERT_EQUAL(h.min, 1);
	CU_ASSERT_EQUAL(h.max, 100000);
	CU_ASSERT_EQUAL(h.sum, 100000ULL * 100001ULL / 2);
	static const double ps[] = {1, 10, 25, 50, 75, 90, 99, 99.9};
	for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
		double want = ps[i] * 1000.0;
		uint64_t got = hist_percentile(&h, ps[i]);
		CU_ASSERT(got >= want);
		CU_ASSERT(fabs((double)got - want) / want <= 0.016);
	}
	CU_ASSERT_EQUAL(hist_percentile(&h, 100), 100000);
	CU_ASSERT_EQUAL(hist_percentile(&h, 0), 1);
	CU_ASSERT_DOUBLE_EQUAL(hist_mean(&h), 50000.5, 1e-9);

	/* small exact values, constant data, and clamping to [min, max] */
	hist_init(&h);
	for (uint64_t v = 1; v <= 10; v++)
		hist_record(&h, v);
	CU_ASSERT_EQUAL(hist_percentile(&h, 50), 5);
	CU_ASSERT_EQUAL(hist_percentile(&h, 90), 9);
	CU_ASSERT_EQUAL(hist_percentile(&h, 91), 10);
	hist_init(&h);
	for (int i = 0; i < 1000; i++)
		hist_record(&h, 123456789);
	CU_ASSERT_EQUAL(hist_percentile(&h, 50), 123456789);
	CU_ASSERT_EQUAL(hist_percentile(&h, 99.9), 123456789);

	/* 99 fast + 1 slow: p99 fast, p99.9 slow; saturated values keep the true max */
	hist_init(&h);
	for (int i = 0; i < 99; i++)
		hist_record(&h, 1000);
	hist_record(&h, UINT64_C(1) << 50);
	CU_ASSERT(hist_percentile(&h, 99) <= 1000 + 1000 / 64);
	CU_ASSERT_EQUAL(hist_percentile(&h, 99.9), UINT64_C(1) << 50);
	CU_ASSERT_EQUAL(h.max, UINT64_C(1) << 50);
}

static void test_merge(void)
{
	static struct histogram a, b, all, m;
	hist_init(&a);
	hist_init(&b);
	hist_init(&all);
	srand(42);
	for (int i = 0; i < 50000; i++) {
		uint64_t v = (uint64_t)rand() * (uint64_t)(1 + i % 97);
		hist_record(i % 3 ? &a : &b, v);
		hist_record(&all, v);
	}
	hist_init(&m);
	hist_merge(&m, &a);
	hist_merge(&m, &b);
	CU_ASSERT_EQUAL(memcmp(&m, &all, sizeof m), 0);
	CU_ASSERT_EQUAL(hist_percentile(&m, 99), hist_percentile(&all, 99));

	/* merging an empty histogram changes nothing */
	static struct histogram e;
	hist_init(&e);
	hist_merge(&m, &e);
	CU_ASSERT_EQUAL(memcmp(&m, &all, sizeof m), 0);
}

static void test_diff(void)
{
	static struct histogram before, after, d, interval;
	hist_init(&after);
	hist_init(&interval);
	for (uint64_t v = 1; v <= 1000; v++)
		hist_record(&after, v * 10);
	before = after; /* cumulative snapshot */
	for (uint64_t v = 500; v <= 700; v++) {
		hist_record(&after, v * 1000);
		hist_record(&interval, v * 1000);
	}
	hist_diff(&d, &after, &before);
	CU_ASSERT_EQUAL(d.count, 201);
	CU_ASSERT_EQUAL(d.sum, interval.sum);
	CU_ASSERT_EQUAL(memcmp(d.buckets, interval.buckets, sizeof d.buckets), 0);
	/* estimated extremes lie within the true values' buckets */
	CU_ASSERT_EQUAL(hist_bucket_of(d.min), hist_bucket_of(500000));
	CU_ASSERT_EQUAL(d.max, 700000); /* clamped by a's max */
	CU_ASSERT(d.min <= 500000);
	CU_ASSERT_EQUAL(hist_percentile(&d, 50), hist_percentile(&interval, 50));

	/* no change: an empty interval */
	hist_diff(&d, &before, &before);
	CU_ASSERT_EQUAL(d.count, 0);
	CU_ASSERT_EQUAL(d.min, UINT64_MAX);
	CU_ASSERT_EQUAL(d.max, 0);
	CU_ASSERT_EQUAL(hist_percentile(&d, 50), 0);

	/* dst may alias a */
	d = after;
	hist_diff(&d, &d, &before);
	CU_ASSERT_EQUAL(d.count, 201);
	CU_ASSERT_EQUAL(memcmp(d.buckets, interval.buckets, sizeof d.buckets), 0);
}

static void test_empty(void)
{
	static struct histogram h;
	memset(&h, 0xab, sizeof h);
	hist_init(&h);
	CU_ASSERT_EQUAL(h.count, 0);
	CU_ASSERT_EQUAL(h.sum, 0);
	CU_ASSERT_EQUAL(h.min, UINT64_MAX);
	CU_ASSERT_EQUAL(h.max, 0);
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		CU_ASSERT_EQUAL(h.buckets[b], 0);
	CU_ASSERT_EQUAL(hist_percentile(&h, 50), 0);
	CU_ASSERT_EQUAL(hist_percentile(&h, 0), 0);
	CU_ASSERT_EQUAL(hist_percentile(&h, 100), 0);
	CU_ASSERT_EQUAL(hist_mean(&h), 0.0);
	hist_record(&h, 0);
	CU_ASSERT_EQUAL(h.min, 0);
	CU_ASSERT_EQUAL(hist_percentile(&h, 50), 0);
}

int suite_histogram(void); /* listed in suites_lib.c */

int suite_histogram(void)
{
	static const struct unit_test tests[] = {
		{"bucket layout", test_layout},
		{"relative error <= 1/64", test_relative_error},
		{"percentiles", test_percentiles},
		{"merge", test_merge},
		{"diff", test_diff},
		{"empty", test_empty},
		{NULL, NULL},
	};
	return unit_add_suite("histogram", tests);
}
