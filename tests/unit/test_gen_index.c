/* test_gen_index.c - dedisgen's fingerprint indexes: insert / lookup / count / iterate for the
 * memory and Berkeley DB backends, 32-bit count overflow, DB metadata checks, and the spill. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gen/counter.h"
#include "gen/index/index.h"
#include "rng.h"
#include "unit.h"

#define FL 20

static void make_fp(uint64_t i, uint8_t *fp)
{
	struct rng r;
	rng_split(&r, 42, i);
	for (int k = 0; k < FL; k += 4) {
		uint64_t v = rng_next(&r);
		memcpy(fp + k, &v, 4);
	}
}

static char dbdir[64];

static void mkdb(void)
{
	snprintf(dbdir, sizeof dbdir, "/tmp/dedis-unit-db.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dbdir));
}

static void rmdb(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dbdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* Inserts i with count (i % 7) + 1, n fingerprints; checks lookups and distinct. */
static void exercise(struct gindex *ix, uint64_t n)
{
	uint8_t fp[FL];
	for (uint64_t i = 0; i < n; i++) {
		make_fp(i, fp);
		for (uint64_t c = 0; c <= i % 7; c++)
			CU_ASSERT_EQUAL_FATAL(ix->ops->add(ix, fp, 1), 0);
	}
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t c = 0;
		make_fp(i, fp);
		CU_ASSERT_EQUAL_FATAL(ix->ops->lookup(ix, fp, &c), 1);
		CU_ASSERT_EQUAL_FATAL(c, i % 7 + 1);
	}
	make_fp(n + 1000, fp);
	uint64_t c = 99;
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c), 0);
	CU_ASSERT_EQUAL(c, 99);
}

struct sum {
	uint64_t n, total;
	uint8_t last[FL];
	int unsorted;
};

static int visit(const uint8_t *fp, uint64_t count, void *arg)
{
	struct sum *s = arg;
	if (s->n && memcmp(s->last, fp, FL) >= 0)
		s->unsorted++;
	memcpy(s->last, fp, FL);
	s->n++;
	s->total += count;
	return 0;
}

static uint64_t expected_total(uint64_t n)
{
	uint64_t t = 0;
	for (uint64_t i = 0; i < n; i++)
		t += i % 7 + 1;
	return t;
}

static void test_mem_basic(void)
{
	struct gindex *ix = index_mem_open(FL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	exercise(ix, 50000);
	/* compact: a full-digest slot is 24 B; the load stays in [0.68, 0.85] */
	double bpd = (double)ix->ops->bytes(ix) / (double)ix->ops->distinct(ix);
	CU_ASSERT(bpd <= 40.0);
	struct sum s = {0};
	CU_ASSERT_EQUAL(ix->ops->iterate(ix, false, false, visit, &s), 0);
	CU_ASSERT_EQUAL(s.n, 50000);
	CU_ASSERT_EQUAL(s.total, expected_total(50000));
	/* sorted drain: global fingerprint order, then empty */
	memset(&s, 0, sizeof s);
	CU_ASSERT_EQUAL(ix->ops->iterate(ix, true, true, visit, &s), 0);
	CU_ASSERT_EQUAL(s.n, 50000);
	CU_ASSERT_EQUAL(s.unsorted, 0);
	CU_ASSERT_EQUAL(s.total, expected_total(50000));
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 0);
	CU_ASSERT_EQUAL(ix->ops->bytes(ix), 0);
	exercise(ix, 100); /* usable again */
	ix->ops->close(ix);
}

static void test_mem_bytes_per_distinct_large(void)
{
	/* Over a growth cycle the average is ~31 B; any point stays under 36 B. */
	struct gindex *ix = index_mem_open(FL, 0);
	uint8_t fp[FL];
	double sum = 0;
	int samples = 0;
	for (uint64_t i = 0; i < 400000; i++) {
		make_fp(i, fp);
		CU_ASSERT_EQUAL_FATAL(ix->ops->add(ix, fp, 1), 0);
		if (i > 100000 && i % 1000 == 0) {
			double b = (double)ix->ops->bytes(ix) / (double)(i + 1);
			CU_ASSERT(b < 36.0);
			sum += b;
			samples++;
		}
	}
	CU_ASSERT(sum / samples <= 32.5);
	ix->ops->close(ix);
}

static void test_mem_count_overflow(void)
{
	struct gindex *ix = index_mem_open(FL, 0);
	uint8_t fp[FL];
	uint64_t c = 0;
	make_fp(1, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, UINT32_MAX - 2), 0);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1), 0);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c), 1);
	CU_ASSERT_EQUAL(c, (uint64_t)UINT32_MAX - 1);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 5), 0);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1ULL << 40), 0);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c), 1);
	CU_ASSERT_EQUAL(c, (uint64_t)UINT32_MAX + 4 + (1ULL << 40));
	make_fp(2, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1ULL << 33), 0); /* a new key born large */
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c), 1);
	CU_ASSERT_EQUAL(c, 1ULL << 33);
	struct sum s = {0};
	CU_ASSERT_EQUAL(ix->ops->iterate(ix, true, true, visit, &s), 0);
	CU_ASSERT_EQUAL(s.n, 2);
	CU_ASSERT_EQUAL(s.total, (uint64_t)UINT32_MAX + 4 + (1ULL << 40) + (1ULL << 33));
	ix->ops->close(ix);
}

static void test_mem_limit_full(void)
{
	struct gindex *ix = index_mem_open(FL, 64 * 1024);
	uint8_t fp[FL];
	int full = 0;
	uint64_t i;
	for (i = 0; i < 100000 && !full; i++) {
		make_fp(i, fp);
		int rc = ix->ops->add(ix, fp, 1);
		CU_ASSERT(rc == 0 || rc == INDEX_FULL);
		full = rc == INDEX_FULL;
	}
	CU_ASSERT(full);
	CU_ASSERT(ix->ops->bytes(ix) <= 64 * 1024);
	/* an existing key still counts when full */
	make_fp(0, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1), 0);
	ix->ops->close(ix);
}

static void test_bdb_basic(void)
{
	struct index_meta m = {0};
	char why[512];
	mkdb();
	struct gindex *ix = index_bdb_open(dbdir, 4096, "sha1", true, false, 1 << 20, &m, why, sizeof why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_EQUAL(m.block_size, 4096);
	exercise(ix, 3000);
	struct sum s = {0};
	CU_ASSERT_EQUAL(ix->ops->iterate(ix, true, false, visit, &s), 0);
	CU_ASSERT_EQUAL(s.n, 3000);
	CU_ASSERT_EQUAL(s.unsorted, 0);
	CU_ASSERT_EQUAL(s.total, expected_total(3000));
	m.complete = true;
	m.bytes = 12345;
	CU_ASSERT_EQUAL(index_meta_add_source(&m, "/data/a"), 0);
	CU_ASSERT_EQUAL(index_bdb_set_meta(ix, &m), 0);
	ix->ops->close(ix);
	index_meta_free(&m);

	/* reopen read-only: counts, distinct and metadata persist */
	ix = index_bdb_open(dbdir, 4096, "sha1", false, false, 1 << 20, &m, why, sizeof why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 3000);
	CU_ASSERT_EQUAL(m.bytes, 12345);
	CU_ASSERT_EQUAL_FATAL(m.nsources, 1);
	CU_ASSERT_STRING_EQUAL(m.sources[0], "/data/a");
	uint8_t fp[FL];
	uint64_t c;
	make_fp(10, fp);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c), 1);
	CU_ASSERT_EQUAL(c, 10 % 7 + 1);
	ix->ops->close(ix);
	index_meta_free(&m);

	/* incompatible: other hash; other block size has no analysis */
	CU_ASSERT_PTR_NULL(index_bdb_open(dbdir, 4096, "sha256", true, true, 1 << 20, &m, why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "incompatible"));
	CU_ASSERT_PTR_NULL(index_bdb_open(dbdir, 8192, "sha1", false, false, 1 << 20, &m, why, sizeof why));
	uint64_t sizes[4];
	CU_ASSERT_EQUAL(index_bdb_list(dbdir, sizes, 4), 1);
	CU_ASSERT_EQUAL(sizes[0], 4096);

	/* -k adds; without -k the analysis is replaced */
	ix = index_bdb_open(dbdir, 4096, "sha1", true, true, 1 << 20, &m, why, sizeof why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 3000);
	make_fp(10, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 3), 0);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c), 1);
	CU_ASSERT_EQUAL(c, 10 % 7 + 1 + 3);
	ix->ops->close(ix); /* not marked complete: an interrupted analysis */
	index_meta_free(&m);
	CU_ASSERT_PTR_NULL(index_bdb_open(dbdir, 4096, "sha1", true, true, 1 << 20, &m, why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "interrupted"));
	ix = index_bdb_open(dbdir, 4096, "sha1", true, false, 1 << 20, &m, why, sizeof why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 0);
	CU_ASSERT_EQUAL(m.nsources, 0);
	ix->ops->close(ix);
	index_meta_free(&m);
	rmdb();
}

/* The same fingerprints counted in memory only and through a tiny --mem-limit spilling into
 * Berkeley DB give the same distribution. */
static void test_counter_spill(void)
{
	struct index_meta m = {0};
	char why[512];
	struct dist a, b;
	uint64_t za = 0, zb = 0;
	uint8_t *fps = malloc(20000 * FL), zero[FL];
	CU_ASSERT_PTR_NOT_NULL_FATAL(fps);
	for (uint64_t i = 0; i < 20000; i++)
		make_fp(i % 4000 + (i % 3 ? 0 : i), fps + i * FL); /* a mix of repeats and uniques */
	make_fp(7, zero);

	struct counter *mem = counter_new(FL, 0, NULL);
	CU_ASSERT_EQUAL(counter_add_batch(mem, fps, 20000, why, sizeof why), 0);
	CU_ASSERT_EQUAL(counter_settle(mem, why, sizeof why), 0);
	CU_ASSERT_EQUAL(counter_distribution(mem, zero, &a, &za, why, sizeof why), 0);
	CU_ASSERT_EQUAL(counter_spills(mem), 0);

	mkdb();
	struct gindex *db = index_bdb_open(dbdir, 4096, "sha1", true, false, 1 << 20, &m, why, sizeof why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(db);
	struct counter *sp = counter_new(FL, 100 * 1024, db);
	for (int k = 0; k < 20; k++)
		CU_ASSERT_EQUAL(counter_add_batch(sp, fps + k * 1000 * FL, 1000, why, sizeof why), 0);
	CU_ASSERT_EQUAL(counter_settle(sp, why, sizeof why), 0);
	CU_ASSERT(counter_spills(sp) >= 2);
	CU_ASSERT_EQUAL(counter_distribution(sp, zero, &b, &zb, why, sizeof why), 0);

	CU_ASSERT_EQUAL(za, zb);
	CU_ASSERT(za > 0);
	CU_ASSERT_EQUAL_FATAL(a.nrows, b.nrows);
	CU_ASSERT_EQUAL(memcmp(a.rows, b.rows, a.nrows * sizeof *a.rows), 0);
	struct dist_rows ra;
	dist_compute_rows(&a, &ra);
	CU_ASSERT_EQUAL(ra.total_blocks, 20000);

	dist_free(&a);
	dist_free(&b);
	counter_free(mem);
	counter_free(sp);
	db->ops->close(db);
	index_meta_free(&m);
	free(fps);
	rmdb();
}

int suite_gen_index(void)
{
	static const struct unit_test tests[] = {
		{"mem insert/lookup/count/iterate", test_mem_basic},
		{"mem bytes per distinct", test_mem_bytes_per_distinct_large},
		{"mem counts past 32 bits", test_mem_count_overflow},
		{"mem limit -> INDEX_FULL", test_mem_limit_full},
		{"bdb insert/lookup/meta/keep", test_bdb_basic},
		{"counter spill == memory", test_counter_spill},
		{NULL, NULL},
	};
	return unit_add_suite("gen_index", tests);
}
