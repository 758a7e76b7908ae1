/* test_reserve.c - array_reserve: capacities double from the first size, and a request whose
 * byte count overflows is refused with the array left as it was. */
#include <stdint.h>
#include <stdlib.h>
#include "lib/reserve.h"
#include "unit.h"

static void test_growth(void)
{
	int *a = NULL;
	size_t cap = 0;
	CU_ASSERT_EQUAL(array_reserve((void **)&a, &cap, 1, sizeof *a, 64), 0);
	CU_ASSERT_EQUAL(cap, 64);
	a[63] = 7;
	CU_ASSERT_EQUAL(array_reserve((void **)&a, &cap, 64, sizeof *a, 64), 0); /* fits: unchanged */
	CU_ASSERT_EQUAL(cap, 64);
	CU_ASSERT_EQUAL(array_reserve((void **)&a, &cap, 65, sizeof *a, 64), 0);
	CU_ASSERT_EQUAL(cap, 128);
	CU_ASSERT_EQUAL(array_reserve((void **)&a, &cap, 1000, sizeof *a, 64), 0);
	CU_ASSERT_EQUAL(cap, 1024);
	CU_ASSERT_EQUAL(a[63], 7); /* realloc kept the contents */
	free(a);
	char *b = NULL;
	size_t bcap = 0;
	CU_ASSERT_EQUAL(array_reserve((void **)&b, &bcap, 5, 1, 0), 0); /* first 0: from 1 */
	CU_ASSERT_EQUAL(bcap, 8);
	free(b);
}

static void test_overflow(void)
{
	int *a = NULL;
	size_t cap = 0;
	CU_ASSERT_EQUAL(array_reserve((void **)&a, &cap, 16, sizeof *a, 16), 0);
	int *before = a;
	CU_ASSERT_EQUAL(array_reserve((void **)&a, &cap, SIZE_MAX / 2, sizeof *a, 16), -1);
	CU_ASSERT_EQUAL(array_reserve((void **)&a, &cap, SIZE_MAX / sizeof *a + 1, sizeof *a, 16), -1);
	CU_ASSERT_PTR_EQUAL(a, before);
	CU_ASSERT_EQUAL(cap, 16);
	/* Doubling from 16 passes SIZE_MAX / 4 although the request does not: the capacity asked for
	 * is clamped to the request (unclamped, its byte count wraps to 0 and realloc frees the
	 * array), and the allocator's refusal leaves the array as it was. */
	CU_ASSERT_EQUAL(array_reserve((void **)&a, &cap, SIZE_MAX / sizeof *a, sizeof *a, 16), -1);
	CU_ASSERT_PTR_EQUAL(a, before);
	CU_ASSERT_EQUAL(cap, 16);
	a[15] = 3; /* still ours */
	CU_ASSERT_EQUAL(a[15], 3);
	free(a);
	/* The same where the wrapped byte count is not 0 but 16 MiB, which realloc would give: elements
	 * of 2^40 + 1 bytes, 2^24 - 1 of them (the most whose bytes fit), doubled from 16 to 2^24. */
	char *big = NULL;
	size_t bigcap = 0, each = ((size_t)1 << 40) + 1;
	CU_ASSERT_EQUAL(SIZE_MAX / each, ((size_t)1 << 24) - 1);
	CU_ASSERT_EQUAL(array_reserve((void **)&big, &bigcap, SIZE_MAX / each, each, 16), -1);
	CU_ASSERT_PTR_NULL(big);
	CU_ASSERT_EQUAL(bigcap, 0);
	free(big);
}

/* Under AddressSanitizer an impossible allocation aborts unless it may return NULL, as malloc does. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

int suite_reserve(void)
{
	static const struct unit_test tests[] = {
		{"array_reserve: doubling from the first capacity", test_growth},
		{"array_reserve: an overflowing request is refused, nothing changed", test_overflow},
		{NULL, NULL},
	};
	return unit_add_suite("reserve", tests);
}
