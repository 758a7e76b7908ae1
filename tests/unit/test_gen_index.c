/* test_gen_index.c - dedisgen's fingerprint indexes: insert / lookup / count / first position /
 * iterate for the memory and Berkeley DB backends, 32-bit count overflow, the memory index's
 * merge of another, DB metadata and side records, the refusal of old-format DBs, and the spill. */
#include <db.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gen/counter.h"
#include "gen/index/gindex.h"
#include "lib/rng.h"
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

/* The positions fingerprint i is added at (copy c of i % 7 + 1): out of order, as threads add
 * them; the first position is the smallest, (i * 7919) % 100003 + 3 * (i % 7). */
static uint64_t pos_of(uint64_t i, uint64_t c)
{
	return (i * 7919) % 100003 + 3 * (i % 7 - c) + (c == 0 ? 0 : 1);
}

static uint64_t first_of(uint64_t i)
{
	uint64_t m = UINT64_MAX;
	for (uint64_t c = 0; c <= i % 7; c++)
		if (pos_of(i, c) < m)
			m = pos_of(i, c);
	return m;
}

/* Inserts i with count (i % 7) + 1, n fingerprints; checks lookups (count and first position)
 * and distinct. */
static void exercise(struct gindex *ix, uint64_t n)
{
	uint8_t fp[FL];
	for (uint64_t i = 0; i < n; i++) {
		make_fp(i, fp);
		for (uint64_t c = 0; c <= i % 7; c++)
			CU_ASSERT_EQUAL_FATAL(ix->ops->add(ix, fp, 1, pos_of(i, c)), 0);
	}
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t c = 0, f = 0;
		make_fp(i, fp);
		CU_ASSERT_EQUAL_FATAL(ix->ops->lookup(ix, fp, &c, &f), 1);
		CU_ASSERT_EQUAL_FATAL(c, i % 7 + 1);
		CU_ASSERT_EQUAL_FATAL(f, first_of(i));
	}
	make_fp(n + 1000, fp);
	uint64_t c = 99;
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c, NULL), 0);
	CU_ASSERT_EQUAL(c, 99);
}

struct sum {
	uint64_t n, total, firsts;
	uint8_t last[FL];
	int unsorted;
};

static int visit(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct sum *s = arg;
	if (s->n && memcmp(s->last, fp, FL) >= 0)
		s->unsorted++;
	memcpy(s->last, fp, FL);
	s->n++;
	s->total += count;
	s->firsts += first;
	return 0;
}

static uint64_t expected_firsts(uint64_t n)
{
	uint64_t t = 0;
	for (uint64_t i = 0; i < n; i++)
		t += first_of(i);
	return t;
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
	/* compact: a full-digest slot is 30 B (count, 48-bit first position); load in [0.68, 0.85] */
	double bpd = (double)ix->ops->bytes(ix) / (double)ix->ops->distinct(ix);
	CU_ASSERT(bpd <= 48.0);
	struct sum s = {0};
	CU_ASSERT_EQUAL(ix->ops->iterate(ix, false, false, visit, &s), 0);
	CU_ASSERT_EQUAL(s.n, 50000);
	CU_ASSERT_EQUAL(s.total, expected_total(50000));
	CU_ASSERT_EQUAL(s.firsts, expected_firsts(50000));
	/* sorted drain: global fingerprint order, then empty */
	memset(&s, 0, sizeof s);
	CU_ASSERT_EQUAL(ix->ops->iterate(ix, true, true, visit, &s), 0);
	CU_ASSERT_EQUAL(s.n, 50000);
	CU_ASSERT_EQUAL(s.unsorted, 0);
	CU_ASSERT_EQUAL(s.total, expected_total(50000));
	CU_ASSERT_EQUAL(s.firsts, expected_firsts(50000));
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 0);
	CU_ASSERT_EQUAL(ix->ops->bytes(ix), 0);
	exercise(ix, 100); /* usable again */
	ix->ops->close(ix);
}

static void test_mem_bytes_per_distinct_large(void)
{
	/* Over a growth cycle the average is ~39 B (30 B slots); any point stays under 45 B. */
	struct gindex *ix = index_mem_open(FL, 0);
	uint8_t fp[FL];
	double sum = 0;
	int samples = 0;
	for (uint64_t i = 0; i < 400000; i++) {
		make_fp(i, fp);
		CU_ASSERT_EQUAL_FATAL(ix->ops->add(ix, fp, 1, i), 0);
		if (i > 100000 && i % 1000 == 0) {
			double b = (double)ix->ops->bytes(ix) / (double)(i + 1);
			CU_ASSERT(b < 45.0);
			sum += b;
			samples++;
		}
	}
	CU_ASSERT(sum / samples <= 40.6);
	/* a position past 48 bits is refused, not truncated */
	make_fp(1, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1, INDEX_POS_MAX + 1), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(ix->err.msg, "2^48"));
	uint64_t c, f;
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1, INDEX_POS_MAX), 0);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c, &f), 1);
	CU_ASSERT_EQUAL(f, 1); /* min(1, 2^48 - 1) */
	ix->ops->close(ix);
}

static void test_mem_count_overflow(void)
{
	struct gindex *ix = index_mem_open(FL, 0);
	uint8_t fp[FL];
	uint64_t c = 0;
	uint64_t f = 0;
	make_fp(1, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, UINT32_MAX - 2, 500), 0);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1, 700), 0);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c, &f), 1);
	CU_ASSERT_EQUAL(c, (uint64_t)UINT32_MAX - 1);
	CU_ASSERT_EQUAL(f, 500);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 5, 400), 0);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1ULL << 40, 450), 0);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c, &f), 1);
	CU_ASSERT_EQUAL(c, (uint64_t)UINT32_MAX + 4 + (1ULL << 40));
	CU_ASSERT_EQUAL(f, 400); /* the first position survives the move to the overflow list */
	make_fp(2, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1ULL << 33, 9), 0); /* a new key born large */
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c, &f), 1);
	CU_ASSERT_EQUAL(c, 1ULL << 33);
	CU_ASSERT_EQUAL(f, 9);
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
		int rc = ix->ops->add(ix, fp, 1, i);
		CU_ASSERT(rc == 0 || rc == INDEX_FULL);
		full = rc == INDEX_FULL;
	}
	CU_ASSERT(full);
	CU_ASSERT(ix->ops->bytes(ix) <= 64 * 1024);
	/* an existing key still counts when full */
	make_fp(0, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 1, 0), 0);
	ix->ops->close(ix);
}

/* One entry of the joint-walk tests: fingerprint, then its count and position in each index
 * (count 0: absent there). */
enum { JOINT_MAX = 16 };
struct joint_case {
	uint8_t fp[FL];
	uint64_t n[JOINT_MAX], f[JOINT_MAX];
};

/* Fingerprint k of the joint-walk test: make_fp's, but pairs 2j and 2j + 1 below 600 share bytes
 * 0..8 (shard and hash) and differ only in their last byte: distinct digests the walk must keep
 * apart though they sort as equals. */
static void joint_fp(uint64_t k, uint8_t *fp)
{
	make_fp(k < 600 ? k & ~UINT64_C(1) : k, fp);
	if (k < 600 && (k & 1))
		fp[FL - 1] ^= 0x5a;
}

/* What a joint walk visited, added to an index of its own: a digest visited twice would be
 * counted once there, so `visits` over its distinct tells. */
struct joint_seen {
	struct gindex *out;
	uint64_t visits;
	struct sum sum;
};

static int joint_visit(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct joint_seen *s = arg;
	s->visits++;
	s->sum.n++;
	s->sum.total += count;
	s->sum.firsts += first;
	return s->out->ops->add(s->out, fp, count, first) ? -1 : 0;
}

/* Stops a walk at its third visit, returning 7. */
static int stop_at_three(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	(void)fp, (void)count, (void)first;
	return ++*(int *)arg == 3 ? 7 : 0;
}

/* Walking nix indexes as one == adding their entries to one index one by one: 30,000
 * fingerprints, each in some of the indexes (with 2: a third in a only, a third in b only, a
 * third in both), hash-sharing pairs across and within them, counts past 32 bits in one, in
 * several or only in their sum, and shards that wrap around their end. The shards of first bytes
 * below 32 are each held by one index alone (visited as they are, not gathered). Crowded: every
 * fingerprint in one shard, one in 8 of them in the lowest 1/256 of its hash space (bytes 1..8,
 * the walk's hash, read little-endian: byte 8 on top), so the walk gathers that shard in slices
 * and, with 3 indexes, the first slice outgrows its table (more would make the indexes' own Robin
 * Hood runs, and the test under valgrind, very long). The indexes are left as they were. */
static void check_iterate_all(int nix, bool crowded)
{
	enum { N = 30000 };
	struct joint_case *cs = calloc(N, sizeof *cs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	for (uint64_t k = 0; k < N; k++) {
		struct joint_case *e = &cs[k];
		joint_fp(k, e->fp);
		if (crowded) { /* pairs (k, k ^ 1) below 600 keep sharing bytes 0..8 */
			e->fp[0] = 0x42;
			if (((k >> 1) & 7) == 0)
				e->fp[8] = 0;
		}
		/* the indexes holding it: a non-empty subset */
		unsigned in = nix == 2 ? (unsigned)((k * 2654435761u) % 3 + 1)
				       : (unsigned)(((k * 2654435761u) >> 7) % ((1u << nix) - 1) + 1);
		if (e->fp[0] < 32)
			in = 1u << (e->fp[0] % nix);
		for (int x = 0; x < nix; x++) {
			if (!(in >> x & 1))
				continue;
			e->n[x] = (k + (uint64_t)x) % (x == 1 ? 3 : 5) + 1;
			e->f[x] = (k * (x == 0 ? 7919 : x == 1 ? 104729 : 15485863u * (uint64_t)x)) % 90001;
		}
	}
	cs[700].n[0] = (1ULL << 32) + 5, cs[700].n[1] = cs[700].n[1] ? cs[700].n[1] : 2; /* large in a */
	memset(cs[701].n, 0, sizeof cs[701].n), cs[701].n[nix - 1] = (1ULL << 33) + 1; /* large in the last only */
	cs[702].n[0] = UINT32_MAX - 3, cs[702].n[1] = 10;                                 /* large once summed */
	cs[703].n[0] = 1ULL << 34, cs[703].n[1] = 1ULL << 35;                             /* large in both */
	if (nix > 2) {
		cs[704].n[0] = 0; /* large only once three others' are summed */
		for (int x = 1; x < nix; x++)
			cs[704].n[x] = UINT32_MAX / 3 + 7;
	}
	for (int k = 700; k < 705; k++)
		for (int x = 0; x < nix; x++)
			cs[k].f[x] = cs[k].f[x] ? cs[k].f[x] : 77 + (uint64_t)x;

	struct gindex *ix[JOINT_MAX], *ref = index_mem_open(FL, 0);
	uint64_t held[JOINT_MAX] = {0}, bytes[JOINT_MAX], distinct = 0;
	for (int x = 0; x < nix; x++)
		ix[x] = index_mem_open(FL, 0);
	for (uint64_t k = 0; k < N; k++) {
		struct joint_case *e = &cs[k];
		bool any = false;
		for (int x = 0; x < nix; x++) {
			if (!e->n[x])
				continue;
			CU_ASSERT_EQUAL_FATAL(ix[x]->ops->add(ix[x], e->fp, e->n[x], e->f[x]), 0);
			CU_ASSERT_EQUAL_FATAL(ref->ops->add(ref, e->fp, e->n[x], e->f[x]), 0);
			held[x]++;
			any = true;
		}
		distinct += any;
	}
	for (int x = 0; x < nix; x++) {
		CU_ASSERT_EQUAL(ix[x]->ops->distinct(ix[x]), held[x]);
		bytes[x] = ix[x]->ops->bytes(ix[x]);
	}
	struct joint_seen seen = {.out = index_mem_open(FL, 0)};
	CU_ASSERT_EQUAL_FATAL(index_mem_iterate_all(ix, nix, joint_visit, &seen), 0);
	for (int x = 0; x < nix; x++) { /* left as they were */
		CU_ASSERT_EQUAL(ix[x]->ops->distinct(ix[x]), held[x]);
		CU_ASSERT_EQUAL(ix[x]->ops->bytes(ix[x]), bytes[x]);
	}
	CU_ASSERT_EQUAL(seen.visits, distinct); /* each digest once ... */
	CU_ASSERT_EQUAL(seen.out->ops->distinct(seen.out), distinct);
	int wrong = 0;
	for (uint64_t k = 0; k < N; k++) { /* ... with its counts summed and its earliest position */
		struct joint_case *e = &cs[k];
		uint64_t c = 0, f = 0, want_n = 0, want_f = UINT64_MAX;
		for (int x = 0; x < nix; x++) {
			if (!e->n[x])
				continue;
			want_n += e->n[x];
			if (e->f[x] < want_f)
				want_f = e->f[x];
		}
		if (!want_n)
			continue;
		if (seen.out->ops->lookup(seen.out, e->fp, &c, &f) != 1 || c != want_n || f != want_f)
			wrong++;
	}
	CU_ASSERT_EQUAL(wrong, 0);
	struct sum sr = {0};
	CU_ASSERT_EQUAL(ref->ops->iterate(ref, false, false, visit, &sr), 0);
	CU_ASSERT_EQUAL(seen.sum.n, sr.n);
	CU_ASSERT_EQUAL(seen.sum.total, sr.total);
	CU_ASSERT_EQUAL(seen.sum.firsts, sr.firsts);
	/* a visitor's non-zero return stops the walk and is returned */
	CU_ASSERT_EQUAL(index_mem_iterate_all(ix, nix, stop_at_three, &(int){0}), 7);
	for (int x = 0; x < nix; x++)
		ix[x]->ops->close(ix[x]);
	seen.out->ops->close(seen.out);
	ref->ops->close(ref);
	free(cs);
}

static void test_mem_iterate_all(void)
{
	check_iterate_all(2, false);
	check_iterate_all(3, false);
	check_iterate_all(4, false);
	check_iterate_all(16, false); /* as many as the hashing threads of a 16-core scan */
	check_iterate_all(3, true);
	check_iterate_all(16, true);
}

struct side_seen {
	int n;
	uint64_t keys[8];
	size_t lens[8];
};

static int see_side(const uint8_t *key, const uint8_t *val, size_t vlen, void *arg)
{
	struct side_seen *s = arg;
	if (s->n < 8) {
		s->keys[s->n] = key[7];
		s->lens[s->n] = vlen;
	}
	s->n++;
	return 0;
}

static void test_bdb_basic(void)
{
	struct index_meta m = {0};
	struct dd_err why = {0};
	mkdb();
	struct gindex *ix = index_bdb_open(dbdir, 4096, "sha1", true, false, 1 << 20, &m, &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_EQUAL(m.block_size, 4096);
	exercise(ix, 3000);
	struct sum s = {0};
	CU_ASSERT_EQUAL(ix->ops->iterate(ix, true, false, visit, &s), 0);
	CU_ASSERT_EQUAL(s.n, 3000);
	CU_ASSERT_EQUAL(s.unsorted, 0);
	CU_ASSERT_EQUAL(s.total, expected_total(3000));
	CU_ASSERT_EQUAL(s.firsts, expected_firsts(3000));
	/* side records: beside the counts, never among them */
	static const uint8_t val[3] = {1, 2, 3};
	uint8_t key8[8] = {0, 0, 0, 0, 0, 0, 0, 5}, sfp[FL];
	make_fp(3, sfp); /* the same bytes as a counted fingerprint, under the 's' tag */
	CU_ASSERT_EQUAL(index_bdb_put_side(ix, 'l', key8, 8, val, 3), 0);
	key8[7] = 4;
	CU_ASSERT_EQUAL(index_bdb_put_side(ix, 'l', key8, 8, val, 2), 0);
	CU_ASSERT_EQUAL(index_bdb_put_side(ix, 's', sfp, FL, val, 1), 0);
	CU_ASSERT_EQUAL(index_bdb_put_side(ix, 's', sfp, FL - 1, val, 1), -1); /* a fingerprint's length */
	memset(&s, 0, sizeof s);
	CU_ASSERT_EQUAL(ix->ops->iterate(ix, true, false, visit, &s), 0);
	CU_ASSERT_EQUAL(s.n, 3000);
	CU_ASSERT_EQUAL(s.total, expected_total(3000));
	struct side_seen seen = {0};
	CU_ASSERT_EQUAL(index_bdb_each_side(ix, 'l', 8, see_side, &seen), 0);
	CU_ASSERT_EQUAL(seen.n, 2);
	CU_ASSERT_EQUAL(seen.keys[0], 4); /* key order */
	CU_ASSERT_EQUAL(seen.keys[1], 5);
	CU_ASSERT_EQUAL(seen.lens[1], 3);
	memset(&seen, 0, sizeof seen);
	CU_ASSERT_EQUAL(index_bdb_each_side(ix, 's', FL, see_side, &seen), 0);
	CU_ASSERT_EQUAL(seen.n, 1);
	m.complete = true;
	m.bytes = 12345;
	m.stream_blocks = 777;
	m.sample_rate = 0.0625;
	m.locality = true;
	m.own = (struct dist_locality){.present = true, .analysed = 20, .duplicates = 14};
	m.own.dup_runs.count[2] = 3;
	m.own.dup_runs.blocks[2] = 14;
	CU_ASSERT_EQUAL(index_meta_add_source(&m, "/data/a"), 0);
	CU_ASSERT_EQUAL(index_bdb_set_meta(ix, &m), 0);
	ix->ops->close(ix);
	index_meta_free(&m);

	/* reopen read-only: counts, first positions, distinct (side records left out), metadata */
	ix = index_bdb_open(dbdir, 4096, "sha1", false, false, 1 << 20, &m, &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 3000);
	CU_ASSERT_EQUAL(m.bytes, 12345);
	CU_ASSERT_EQUAL(m.format, 2);
	CU_ASSERT_EQUAL(m.stream_blocks, 777);
	CU_ASSERT_EQUAL(m.sample_rate, 0.0625);
	CU_ASSERT(m.locality && m.own.present && !m.base.present);
	CU_ASSERT_EQUAL(m.own.analysed, 20);
	CU_ASSERT_EQUAL(m.own.dup_runs.count[2], 3);
	CU_ASSERT_EQUAL(m.own.dup_runs.blocks[2], 14);
	CU_ASSERT_EQUAL_FATAL(m.nsources, 1);
	CU_ASSERT_STRING_EQUAL(m.sources[0], "/data/a");
	uint8_t fp[FL];
	uint64_t c, f;
	make_fp(10, fp);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c, &f), 1);
	CU_ASSERT_EQUAL(c, 10 % 7 + 1);
	CU_ASSERT_EQUAL(f, first_of(10));
	memset(&seen, 0, sizeof seen);
	CU_ASSERT_EQUAL(index_bdb_each_side(ix, 'l', 8, see_side, &seen), 0);
	CU_ASSERT_EQUAL(seen.n, 2);
	ix->ops->close(ix);
	index_meta_free(&m);

	/* incompatible: other hash; other block size has no analysis */
	CU_ASSERT_PTR_NULL(index_bdb_open(dbdir, 4096, "sha256", true, true, 1 << 20, &m, &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why.msg, "incompatible"));
	CU_ASSERT_PTR_NULL(index_bdb_open(dbdir, 8192, "sha1", false, false, 1 << 20, &m, &why));
	uint64_t sizes[4];
	CU_ASSERT_EQUAL(index_bdb_list(dbdir, sizes, 4), 1);
	CU_ASSERT_EQUAL(sizes[0], 4096);

	/* -k adds; without -k the analysis is replaced */
	ix = index_bdb_open(dbdir, 4096, "sha1", true, true, 1 << 20, &m, &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 3000);
	make_fp(10, fp);
	CU_ASSERT_EQUAL(ix->ops->add(ix, fp, 3, 0), 0);
	CU_ASSERT_EQUAL(ix->ops->lookup(ix, fp, &c, &f), 1);
	CU_ASSERT_EQUAL(c, 10 % 7 + 1 + 3);
	CU_ASSERT_EQUAL(f, 0);
	CU_ASSERT_EQUAL(index_bdb_drop_side(ix, 'l', 8), 0);
	memset(&seen, 0, sizeof seen);
	CU_ASSERT_EQUAL(index_bdb_each_side(ix, 'l', 8, see_side, &seen), 0);
	CU_ASSERT_EQUAL(seen.n, 0);
	CU_ASSERT_EQUAL(index_bdb_each_side(ix, 's', FL, see_side, &seen), 0);
	CU_ASSERT_EQUAL(seen.n, 1);
	ix->ops->close(ix); /* not marked complete: an interrupted analysis */
	index_meta_free(&m);
	CU_ASSERT_PTR_NULL(index_bdb_open(dbdir, 4096, "sha1", true, true, 1 << 20, &m, &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why.msg, "interrupted"));
	ix = index_bdb_open(dbdir, 4096, "sha1", true, false, 1 << 20, &m, &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 0);
	CU_ASSERT_EQUAL(m.nsources, 0);
	ix->ops->close(ix);
	index_meta_free(&m);
	rmdb();
}

/* A DB written by dedis 0.1 (8-byte counts, metadata format 1) is recognised: replaced by a new
 * scan, refused with a reason by -k and by read-only opens (merge). */
static void test_bdb_old_format(void)
{
	struct index_meta m = {0};
	struct dd_err why = {0};
	char path[128];
	DB *db;
	mkdb();
	snprintf(path, sizeof path, "%s/dedisgen-4096.db", dbdir);
	CU_ASSERT_EQUAL_FATAL(db_create(&db, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(db->open(db, NULL, path, NULL, DB_BTREE, DB_CREATE, 0644), 0);
	static const char meta[] = "{\"format\":1,\"block_size\":4096,\"hash\":\"sha1\",\"complete\":true,"
				   "\"bytes\":4096,\"files\":1,\"errors\":0,\"sources\":[\"/old\"]}";
	uint8_t fp[FL], count[8] = {1};
	make_fp(1, fp);
	DBT k = {.data = "dedisgen:meta", .size = 13}, v = {.data = (void *)meta, .size = sizeof meta - 1};
	CU_ASSERT_EQUAL(db->put(db, NULL, &k, &v, 0), 0);
	k = (DBT){.data = fp, .size = FL};
	v = (DBT){.data = count, .size = 8};
	CU_ASSERT_EQUAL(db->put(db, NULL, &k, &v, 0), 0);
	db->close(db, 0);

	CU_ASSERT_PTR_NULL(index_bdb_open(dbdir, 4096, "sha1", true, true, 1 << 20, &m, &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why.msg, "old format 1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why.msg, "without -k"));
	CU_ASSERT_PTR_NULL(index_bdb_open(dbdir, 4096, "sha1", false, false, 1 << 20, &m, &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why.msg, "old format 1"));
	struct gindex *ix = index_bdb_open(dbdir, 4096, "sha1", true, false, 1 << 20, &m, &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix); /* a new scan replaces it */
	CU_ASSERT_EQUAL(ix->ops->distinct(ix), 0);
	CU_ASSERT_EQUAL(m.format, 2);
	ix->ops->close(ix);
	index_meta_free(&m);
	rmdb();
}

static int sum_firsts(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	uint64_t *s = arg;
	s[0] += first * (fp[5] + 1); /* weighted: a first moved to another content shows */
	s[1]++;
	return 0;
}

/* The same fingerprints counted in memory only and through a tiny --mem-limit spilling into
 * Berkeley DB give the same distribution and the same first positions. */
static void test_counter_spill(void)
{
	struct index_meta m = {0};
	struct dd_err why = {0};
	struct dist a, b;
	uint64_t za = 0, zb = 0;
	uint8_t *fps = malloc(20000 * FL), zero[FL];
	CU_ASSERT_PTR_NOT_NULL_FATAL(fps);
	for (uint64_t i = 0; i < 20000; i++)
		make_fp(i % 4000 + (i % 3 ? 0 : i), fps + i * FL); /* a mix of repeats and uniques */
	make_fp(7, zero);

	uint64_t fa[2] = {0}, fb[2] = {0}, zfa, zfb;
	struct counter *mem = counter_new(FL, 0, NULL);
	/* two halves, the second first: first positions are minimums, not arrival order */
	CU_ASSERT_EQUAL(counter_add_batch(mem, 0, fps + 10000 * FL, 10000, 10000, &why), 0);
	CU_ASSERT_EQUAL(counter_add_batch(mem, 0, fps, 10000, 0, &why), 0);
	CU_ASSERT_EQUAL(counter_settle(mem, &why), 0);
	CU_ASSERT_EQUAL(counter_distribution(mem, zero, sum_firsts, fa, &a, &za, &zfa, &why), 0);
	CU_ASSERT_EQUAL(counter_spills(mem), 0);
	CU_ASSERT_EQUAL(zfa, 7); /* make_fp(7): first at position 7 (i % 4000 == 7, i % 3 != 0) */

	mkdb();
	struct gindex *db = index_bdb_open(dbdir, 4096, "sha1", true, false, 1 << 20, &m, &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(db);
	struct counter *sp = counter_new(FL, 100 * 1024, db);
	for (int k = 19; k >= 0; k--)
		CU_ASSERT_EQUAL(counter_add_batch(sp, 0, fps + k * 1000 * FL, 1000, (uint64_t)k * 1000, &why), 0);
	CU_ASSERT_EQUAL(counter_settle(sp, &why), 0);
	CU_ASSERT(counter_spills(sp) >= 2);
	CU_ASSERT_EQUAL(counter_distribution(sp, zero, sum_firsts, fb, &b, &zb, &zfb, &why), 0);
	CU_ASSERT_EQUAL(fa[0], fb[0]);
	CU_ASSERT_EQUAL(fa[1], fb[1]);
	CU_ASSERT_EQUAL(zfa, zfb);

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

/* Writers on threads: each adds every 4th slice of 500 fingerprints, concurrently, into its own
 * parts; the result, their parts walked as one (or spilled), is the single writer's. */
struct writer_job {
	struct counter *c;
	const uint8_t *fps;
	int writer, rc;
};

static void *write_slices(void *arg)
{
	struct writer_job *j = arg;
	struct dd_err why = {0};
	for (uint64_t k = (uint64_t)j->writer; k < 40 && !j->rc; k += 4)
		j->rc = counter_add_batch(j->c, j->writer, j->fps + k * 500 * FL, 500, k * 500, &why);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The distinct fingerprints each of write_slices' 4 writers adds, summed (by sorting). */
static uint64_t writers_distinct_sum(const uint8_t *fps)
{
	uint64_t sum = 0, *mine = malloc(10 * 500 * sizeof *mine);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mine);
	for (int w = 0; w < 4; w++) {
		size_t n = 0;
		for (uint64_t k = (uint64_t)w; k < 40; k += 4)
			for (uint64_t i = k * 500; i < k * 500 + 500; i++)
				memcpy(&mine[n++], fps + i * FL, sizeof *mine); /* make_fp's first 8 bytes differ */
		qsort(mine, n, sizeof *mine, cmp_u64);
		for (size_t i = 0; i < n; i++)
			sum += !i || mine[i] != mine[i - 1];
	}
	free(mine);
	return sum;
}

static void test_counter_writers(void)
{
	struct index_meta m = {0};
	struct dd_err why = {0};
	uint8_t *fps = malloc(20000 * FL), zero[FL];
	CU_ASSERT_PTR_NOT_NULL_FATAL(fps);
	for (uint64_t i = 0; i < 20000; i++)
		make_fp(i % 4000 + (i % 3 ? 0 : i), fps + i * FL);
	make_fp(3000, zero); /* at positions 1500 (writer 3), 7000, 11000 and 19000 (writer 2) */

	struct counter *one = counter_new(FL, 0, NULL);
	CU_ASSERT_EQUAL(counter_add_batch(one, 0, fps, 20000, 0, &why), 0);
	struct dist a;
	uint64_t fa[2] = {0}, za, zfa;
	CU_ASSERT_EQUAL(counter_settle(one, &why), 0);
	uint64_t one_bound = counter_distinct_bound(one); /* one writer: exact, settled or not */
	CU_ASSERT_EQUAL(counter_distribution(one, zero, sum_firsts, fa, &a, &za, &zfa, &why), 0);
	CU_ASSERT_EQUAL(one_bound, fa[1]);
	CU_ASSERT_EQUAL(za, 4);
	CU_ASSERT_EQUAL(zfa, 1500);

	mkdb();
	struct gindex *db = index_bdb_open(dbdir, 4096, "sha1", true, false, 1 << 20, &m, &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(db);
	for (int spill = 0; spill < 2; spill++) {
		struct counter *c = counter_new(FL, spill ? 400 * 1024 : 0, spill ? db : NULL);
		CU_ASSERT_EQUAL_FATAL(counter_set_writers(c, 4), 0);
		struct writer_job jobs[4];
		pthread_t t[4];
		for (int w = 0; w < 4; w++) {
			jobs[w] = (struct writer_job){c, fps, w, 0};
			CU_ASSERT_EQUAL_FATAL(pthread_create(&t[w], NULL, write_slices, &jobs[w]), 0);
		}
		for (int w = 0; w < 4; w++) {
			pthread_join(t[w], NULL);
			CU_ASSERT_EQUAL(jobs[w].rc, 0);
		}
		struct dist b;
		uint64_t fb[2] = {0}, zb, zfb;
		/* before the final walk: the sum of the writers' own distinct contents; with a back, unknown */
		uint64_t bound = counter_distinct_bound(c);
		CU_ASSERT_EQUAL(bound, spill ? UINT64_MAX : writers_distinct_sum(fps));
		CU_ASSERT(spill || bound > fa[1]); /* the writers share contents */
		CU_ASSERT_EQUAL(counter_settle(c, &why), 0);
		CU_ASSERT_EQUAL(counter_distinct_bound(c), bound); /* settling merges nothing now */
		CU_ASSERT_EQUAL(counter_distribution(c, zero, sum_firsts, fb, &b, &zb, &zfb, &why), 0);
		if (!spill) /* walked: exact */
			CU_ASSERT_EQUAL(counter_distinct_bound(c), fa[1]);
		CU_ASSERT(spill ? counter_spills(c) >= 2 : counter_spills(c) == 0);
		/* per distinct content, the writers' overlapping parts cost at least one index's worth */
		if (!spill)
			CU_ASSERT(counter_bytes_per_distinct(c) >= counter_bytes_per_distinct(one));
		CU_ASSERT_EQUAL(fa[0], fb[0]); /* the same first positions */
		CU_ASSERT_EQUAL(fa[1], fb[1]); /* the same distinct contents */
		CU_ASSERT_EQUAL(za, zb);
		CU_ASSERT_EQUAL(zfa, zfb);
		CU_ASSERT_EQUAL_FATAL(a.nrows, b.nrows);
		CU_ASSERT_EQUAL(memcmp(a.rows, b.rows, a.nrows * sizeof *a.rows), 0);
		dist_free(&b);
		counter_free(c);
	}
	dist_free(&a);
	counter_free(one);
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
		{"mem: 2, 3, 4 and 16 indexes walked as one == one add per entry (one shard crowded too)", test_mem_iterate_all},
		{"bdb insert/lookup/meta/keep/side records", test_bdb_basic},
		{"bdb old format refused by -k and merge", test_bdb_old_format},
		{"counter spill == memory", test_counter_spill},
		{"counter: 4 writer threads == 1 writer (walked as one, spilled)", test_counter_writers},
		{NULL, NULL},
	};
	return unit_add_suite("gen_index", tests);
}
