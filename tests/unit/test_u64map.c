/* test_u64map.c - the u64 -> u64 map: values start at 0 and stay with their key through growth,
 * the walk visits every key once, find does not insert, and the free-slot key is refused. */
#include <stdlib.h>
#include "lib/u64map.h"
#include "unit.h"

static void test_growth_keeps_values(void)
{
	struct u64map m = {0};
	const uint64_t n = 100000; /* past several growths from the first 1024 slots */
	for (uint64_t k = 0; k < n; k++) {
		uint64_t *v = u64map_at(&m, k * 7919);
		CU_ASSERT_PTR_NOT_NULL_FATAL(v);
		CU_ASSERT_EQUAL(*v, 0);
		*v = k + 1;
	}
	for (uint64_t k = 0; k < n; k += 3)
		*u64map_at(&m, k * 7919) += 1;
	CU_ASSERT_EQUAL(m.used, n);
	CU_ASSERT(m.used * 4 <= m.cap * 3);
	for (uint64_t k = 0; k < n; k++) {
		const uint64_t *v = u64map_find(&m, k * 7919);
		CU_ASSERT_PTR_NOT_NULL_FATAL(v);
		CU_ASSERT_EQUAL(*v, k + 1 + (k % 3 == 0));
	}
	CU_ASSERT_PTR_NULL(u64map_find(&m, 1));
	CU_ASSERT_EQUAL(m.used, n);
	u64map_free(&m);
	CU_ASSERT_EQUAL(m.cap, 0);
}

static void test_walk_and_limits(void)
{
	struct u64map m;
	CU_ASSERT_EQUAL_FATAL(u64map_init(&m, 5000), 0);
	CU_ASSERT(m.cap >= 10000);
	size_t cap = m.cap;
	uint64_t sum = 0;
	for (uint64_t k = 1; k <= 5000; k++) {
		*u64map_at(&m, k << 40) = k;
		sum += k;
	}
	CU_ASSERT_EQUAL(m.cap, cap); /* sized for them: no growth */
	CU_ASSERT_PTR_NULL(u64map_at(&m, U64MAP_EMPTY));
	size_t pos = 0, seen = 0;
	uint64_t key, val, got = 0;
	while (u64map_next(&m, &pos, &key, &val)) {
		CU_ASSERT_EQUAL(key >> 40, val);
		got += val;
		seen++;
	}
	CU_ASSERT_EQUAL(seen, 5000);
	CU_ASSERT_EQUAL(got, sum);
	u64map_free(&m);
	struct u64map empty = {0};
	pos = 0;
	CU_ASSERT_FALSE(u64map_next(&empty, &pos, &key, &val));
	CU_ASSERT_PTR_NULL(u64map_find(&empty, 3));
	u64map_free(&empty);
}

int suite_u64map(void)
{
	static const struct unit_test tests[] = {
		{"values start at 0 and keep their keys through growth; find never inserts", test_growth_keeps_values},
		{"the walk visits each key once; a sized map does not grow; the free-slot key is refused", test_walk_and_limits},
		{NULL, NULL},
	};
	return unit_add_suite("u64map", tests);
}
