/* test_content.c - content(seed, id): a pure function, distinct bytes for distinct ids and
 * seeds, unique ids never shared between workers, identification, and incompressible bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "content.h"
#include "unit.h"

#define BS 4096

static void *block(void)
{
	void *p = NULL;
	CU_ASSERT_FATAL(posix_memalign(&p, 64, BS) == 0);
	return p;
}

static void deterministic(void)
{
	struct content_gen a, b;
	CU_ASSERT_FATAL(content_init(&a, 99, BS, 1) == 0);
	CU_ASSERT_FATAL(content_init(&b, 99, BS, 1) == 0);
	uint8_t *x = block(), *y = block();
	for (uint64_t id = 1; id < 200; id++) {
		content_fill(&a, id, x);
		content_fill(&b, id, y);
		CU_ASSERT_EQUAL(memcmp(x, y, BS), 0);
	}
	free(x);
	free(y);
}

static void distinct_ids_and_seeds_differ(void)
{
	struct content_gen a, b;
	content_init(&a, 1, BS, 1);
	content_init(&b, 2, BS, 1);
	uint8_t *x = block(), *y = block();
	for (uint64_t id = 1; id < 2000; id++) {
		content_fill(&a, id, x);
		content_fill(&a, id + 1, y);
		CU_ASSERT_NOT_EQUAL(memcmp(x, y, BS), 0);
		/* the payloads differ too, not only the header */
		CU_ASSERT_NOT_EQUAL(memcmp(x + 64, y + 64, BS - 64), 0);
		content_fill(&b, id, y);
		CU_ASSERT_NOT_EQUAL(memcmp(x, y, BS), 0);
	}
	/* Unique ids: top bit set, worker encoded, never equal across workers or to duplicate ids. */
	CU_ASSERT((content_unique_id(0, 0) & CONTENT_UNIQUE_BIT) != 0);
	for (uint64_t w = 0; w < 8; w++)
		for (uint64_t v = w + 1; v < 8; v++)
			for (uint64_t n = 0; n < 100; n++)
				CU_ASSERT_NOT_EQUAL(content_unique_id(w, n), content_unique_id(v, n));
	CU_ASSERT_NOT_EQUAL(content_unique_id(0, 5), 5);
	free(x);
	free(y);
}

static void zero_block_and_identify(void)
{
	struct content_gen g, other;
	content_init(&g, 5, BS, 1);
	content_init(&other, 6, BS, 1);
	uint8_t *x = block();
	uint64_t id = 123;
	content_fill(&g, CONTENT_ZERO, x);
	for (int i = 0; i < BS; i++)
		CU_ASSERT_EQUAL_FATAL(x[i], 0);
	CU_ASSERT_EQUAL(content_identify(&g, x, &id), CONTENT_IS_ZERO);
	CU_ASSERT_EQUAL(id, CONTENT_ZERO);
	content_fill(&g, 777, x);
	CU_ASSERT_EQUAL(content_identify(&g, x, &id), CONTENT_IS_VALID);
	CU_ASSERT_EQUAL(id, 777);
	uint64_t uid = content_unique_id(3, 41);
	content_fill(&g, uid, x);
	CU_ASSERT_EQUAL(content_identify(&g, x, &id), CONTENT_IS_VALID);
	CU_ASSERT_EQUAL(id, uid);
	CU_ASSERT_EQUAL(content_identify(&other, x, &id), CONTENT_IS_GARBAGE);
	x[BS - 1] ^= 1; /* a torn or corrupted payload */
	CU_ASSERT_EQUAL(content_identify(&g, x, &id), CONTENT_IS_GARBAGE);
	free(x);
}

static void bytes_look_random(void)
{
	/* Incompressible means no redundancy a compressor could use: over 1 MiB of blocks the byte
	 * entropy is within 0.01 bit of 8 and no 8-byte word repeats inside a block. */
	struct content_gen g;
	content_init(&g, 11, BS, 1);
	uint8_t *x = block();
	uint64_t hist[256] = {0};
	for (uint64_t id = 1; id <= 256; id++) {
		content_fill(&g, id, x);
		for (int i = 0; i < BS; i++)
			hist[x[i]]++;
		const uint64_t *w = (const uint64_t *)x;
		for (int i = 4; i < BS / 8; i += 61)
			for (int j = i + 1; j < BS / 8; j++)
				CU_ASSERT_NOT_EQUAL_FATAL(w[i], w[j]);
	}
	double n = 256.0 * BS, h = 0;
	for (int i = 0; i < 256; i++)
		if (hist[i])
			h -= hist[i] / n * log2(hist[i] / n);
	CU_ASSERT(h > 7.99);
	free(x);
}

static void rejects_bad_geometry(void)
{
	struct content_gen g;
	CU_ASSERT_NOT_EQUAL(content_init(&g, 1, 100, 1), 0);
	CU_ASSERT_NOT_EQUAL(content_init(&g, 1, 32, 1), 0);
	CU_ASSERT_EQUAL(content_init(&g, 1, 512, 1), 0);
	CU_ASSERT_EQUAL(content_init(&g, 1, 1 << 20, 1), 0);
}

int suite_content(void)
{
	static const struct unit_test tests[] = {
		{"pure function of (seed, id)", deterministic},
		{"distinct ids / seeds / workers differ", distinct_ids_and_seeds_differ},
		{"zero block and identification", zero_block_and_identify},
		{"bytes are incompressible", bytes_look_random},
		{"block size must be a multiple of 64", rejects_bad_geometry},
		{NULL, NULL},
	};
	return unit_add_suite("content", tests);
}
