/* test_fingerprint.c - CUnit suite for lib/fingerprint.c: the FIPS 180 "abc" vectors for sha1
 * and sha256, unknown names, and reuse of one context across many blocks. */
#include <stdio.h>
#include <string.h>

#include "lib/fingerprint.h"
#include "unit.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void check(const char *name, const char *msg, size_t mlen, const char *want)
{
	struct fp_ctx *c = fp_new(name);
	uint8_t out[FP_MAX_LEN];
	char h[2 * FP_MAX_LEN + 1];

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(fp_len(c), strlen(want) / 2);
	CU_ASSERT_EQUAL(fp_hash(c, msg, mlen, out), 0);
	hex(out, fp_len(c), h);
	CU_ASSERT_STRING_EQUAL(h, want);
	fp_free(c);
}

static void test_vectors(void)
{
	check("sha1", "abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
	check("sha256", "abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check("sha1", "", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	check("sha256", "", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	check("sha1", two, strlen(two), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	check("sha256", two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_names(void)
{
	struct fp_ctx *c = fp_new("sha1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(fp_name(c), "sha1");
	CU_ASSERT_EQUAL(fp_len(c), 20);
	fp_free(c);
	c = fp_new("SHA256");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(fp_name(c), "sha256");
	CU_ASSERT_EQUAL(fp_len(c), 32);
	fp_free(c);

	CU_ASSERT_PTR_NULL(fp_new("nosuchhash"));
	CU_ASSERT_PTR_NULL(fp_new(""));
	CU_ASSERT_PTR_NULL(fp_new(NULL));
	CU_ASSERT_PTR_NULL(fp_new("sha512")); /* exists in OpenSSL, but longer than FP_MAX_LEN */
	CU_ASSERT_PTR_NULL(fp_new("sha1 "));
	fp_free(NULL);
}

static void test_reuse(void)
{
	struct fp_ctx *c = fp_new("sha256"), *fresh;
	static uint8_t block[4096];
	uint8_t a[FP_MAX_LEN], b[FP_MAX_LEN], first[FP_MAX_LEN];
	char h[2 * FP_MAX_LEN + 1];

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* "abc", then many other blocks, then "abc" again: same digest, no state carried over */
	CU_ASSERT_EQUAL(fp_hash(c, "abc", 3, first), 0);
	for (int i = 0; i < 1000; i++) {
		memset(block, i & 0xff, sizeof block);
		block[0] = (uint8_t)(i >> 8);
		CU_ASSERT_EQUAL(fp_hash(c, block, sizeof block, a), 0);
		fresh = fp_new("sha256");
		CU_ASSERT_EQUAL(fp_hash(fresh, block, sizeof block, b), 0);
		fp_free(fresh);
		CU_ASSERT_EQUAL(memcmp(a, b, 32), 0);
	}
	CU_ASSERT_EQUAL(fp_hash(c, "abc", 3, a), 0);
	CU_ASSERT_EQUAL(memcmp(a, first, 32), 0);
	hex(a, 32, h);
	CU_ASSERT_STRING_EQUAL(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* different blocks, different digests */
	memset(block, 0, sizeof block);
	CU_ASSERT_EQUAL(fp_hash(c, block, sizeof block, a), 0);
	block[4095] = 1;
	CU_ASSERT_EQUAL(fp_hash(c, block, sizeof block, b), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(a, b, 32), 0);
	fp_free(c);
}

int suite_fingerprint(void); /* listed in suites_lib.c */

int suite_fingerprint(void)
{
	static const struct unit_test tests[] = {
		{"test vectors", test_vectors},
		{"names", test_names},
		{"context reuse", test_reuse},
		{NULL, NULL},
	};
	return unit_add_suite("fingerprint", tests);
}
