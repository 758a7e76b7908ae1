/* test_bitfilter.c - the membership bitmap: every added key is found, most others are turned away,
 * its size follows the keys, and past its cap there is none (every key may be present). */
#include <stdint.h>
#include "lib/bitfilter.h"
#include "lib/rng.h"
#include "unit.h"

static void test_members(void)
{
	enum { KEYS = 5000, OTHERS = 100000 };
	struct bitfilter f;
	struct rng g;
	CU_ASSERT_EQUAL_FATAL(bitfilter_init(&f, KEYS, 16, (size_t)1 << 20), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.bits);
	CU_ASSERT_EQUAL(f.mask + 1, (uint64_t)1 << 17); /* 80,000 bits asked: the next power of two */
	rng_seed(&g, 11);
	for (int i = 0; i < KEYS; i++)
		bitfilter_add(&f, rng_next(&g));
	rng_seed(&g, 11);
	int missed = 0;
	for (int i = 0; i < KEYS; i++)
		missed += !bitfilter_maybe(&f, rng_next(&g));
	CU_ASSERT_EQUAL(missed, 0);
	/* others (another seed): about KEYS / 2^17 = 3.8 % pass; 6 % is a wide margin at 100,000 */
	rng_seed(&g, 12);
	int passed = 0;
	for (int i = 0; i < OTHERS; i++)
		passed += bitfilter_maybe(&f, rng_next(&g));
	CU_ASSERT(passed > OTHERS / 100 * 2 && passed < OTHERS / 100 * 6);
	bitfilter_free(&f);
	CU_ASSERT_PTR_NULL(f.bits);
}

static void test_cap(void)
{
	struct bitfilter f;
	CU_ASSERT_EQUAL(bitfilter_init(&f, 1000, 16, 8192), 0); /* 16,000 bits past a cap of 8,192 */
	CU_ASSERT_PTR_NULL(f.bits);
	bitfilter_add(&f, 42); /* nothing to set */
	CU_ASSERT(bitfilter_maybe(&f, 7) && bitfilter_maybe(&f, 42));
	CU_ASSERT_EQUAL(bitfilter_init(&f, 0, 16, 8192), 0); /* no keys: the smallest bitmap */
	CU_ASSERT_EQUAL(f.mask + 1, 512);
	CU_ASSERT(!bitfilter_maybe(&f, 7));
	bitfilter_free(&f);
}

int suite_bitfilter(void)
{
	static const struct unit_test tests[] = {
		{"bitfilter: added keys found, others mostly not", test_members},
		{"bitfilter: none past its cap, the smallest for no keys", test_cap},
		{NULL, NULL},
	};
	return unit_add_suite("bitfilter", tests);
}
