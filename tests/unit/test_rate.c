/* test_rate.c - the nominal pacing schedule: per-worker due times, even interleaving of all
 * workers at the requested total rate, and no drift over long runs. */
#include <stdlib.h>
#include <time.h>
#include "bench/workload/rate.h"
#include "unit.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void workers_interleave_evenly(void)
{
	/* 500 ops/s over 4 workers: together one op every 2 ms, worker w offset by w * 2 ms. */
	const uint64_t t0 = 1000000000ULL;
	uint64_t all[4 * 250];
	for (unsigned w = 0; w < 4; w++) {
		struct schedule s;
		schedule_init(&s, t0, 500, 4, w);
		CU_ASSERT_TRUE(s.active);
		for (unsigned k = 0; k < 250; k++) {
			all[w * 250 + k] = schedule_peek(&s);
			schedule_advance(&s);
		}
		CU_ASSERT_EQUAL(schedule_at(&s, 0), t0 + w * 2000000ULL);
		CU_ASSERT_EQUAL(schedule_at(&s, 1), t0 + (4 + w) * 2000000ULL);
	}
	qsort(all, 1000, sizeof all[0], cmp_u64);
	for (int i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(all[i], t0 + (uint64_t)i * 2000000ULL);
	/* 1000 ops span 2 s: the rate is exactly 500/s */
	CU_ASSERT_EQUAL(all[999] - all[0], 999ULL * 2000000ULL);
}

static void no_drift(void)
{
	struct schedule s;
	schedule_init(&s, 0, 3, 1, 0); /* 333333333.33 ns interval: rounding must not accumulate */
	uint64_t k = 3000000000ULL;    /* a thousand million seconds in */
	uint64_t t = schedule_at(&s, k);
	CU_ASSERT(t >= 1000000000ULL * 1000000000ULL - 1 && t <= 1000000000ULL * 1000000000ULL + 1);
}

static void peak_is_inactive(void)
{
	struct schedule s;
	schedule_init(&s, 5, 0, 2, 1);
	CU_ASSERT_FALSE(s.active);
	CU_ASSERT_EQUAL(schedule_at(&s, 100), 5);
}

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void pacer_never_wakes_early(void)
{
	/* a due time is reached, never undershot: past the sleep (3 ms) and within the spin (50 us) */
	struct pacer p;
	pacer_init(&p);
	for (uint64_t ahead = 50000; ahead <= 3000000; ahead *= 60) {
		uint64_t t = mono() + ahead;
		CU_ASSERT_TRUE(pacer_sleep_until(&p, t));
		CU_ASSERT(mono() >= t);
	}
	CU_ASSERT_TRUE(pacer_sleep_until(&p, mono() - 1)); /* already due: at once */
}

int suite_rate(void)
{
	static const struct unit_test tests[] = {
		{"workers interleave evenly at the total rate", workers_interleave_evenly},
		{"due times do not drift", no_drift},
		{"peak has no schedule", peak_is_inactive},
		{"the pacer never wakes before the due time", pacer_never_wakes_early},
		{NULL, NULL},
	};
	return unit_add_suite("rate", tests);
}
