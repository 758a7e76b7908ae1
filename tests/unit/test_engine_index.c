/* test_engine_index.c - the reference engine's index backends (mem, bdb, bloom) run through one
 * scripted sequence, plus the Bloom filter's rates and rebuild, cross-process sharing and the mem
 * table's page-cache footprint. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include <unistd.h>
#include "lib/fingerprint.h"
#include "reference-engine/fpindex.h"
#include "unit.h"

#define FL 20          /* sha1 */
#define N 2000         /* entries in the script */
#define CAP 4096       /* capacity in the script */
#define REPLACED 100   /* fps 0..99 get a new pbn */
#define RM_LO 100      /* fps 100..299 are removed */
#define RM_HI 300

/* Fingerprint number i (salt separates hits from misses): a real sha1, so uniformly spread. */
static void make_fp(const char *salt, uint64_t i, uint8_t *fp)
{
	char buf[64];
	int n = snprintf(buf, sizeof buf, "%s-%llu", salt, (unsigned long long)i);
	struct fp_ctx *c = fp_new("sha1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(fp_hash(c, buf, (size_t)n, fp), 0);
	fp_free(c);
}

static uint64_t pbn_of(uint64_t i) { return i < REPLACED ? 100000 + i : i * 3 + 1; }
static int removed(uint64_t i) { return i >= RM_LO && i < RM_HI; }

static char voldir[64];

static void mkvol_in(const char *dir)
{
	snprintf(voldir, sizeof voldir, "%s/dedis-unit-ix.XXXXXX", dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(voldir));
}

static void mkvol(void)
{
	mkvol_in("/tmp");
}

static void rmvol(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", voldir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static int absent(int rc) { return rc == 0 || rc == INDEX_ABSENT_FILTERED; }

/* Every fingerprint is where the script left it; misses are absent. */
static void check_contents(const struct index_ops *ops, struct index *ix)
{
	uint8_t fp[FL];
	for (uint64_t i = 0; i < N; i++) {
		uint64_t pbn = 7777777;
		make_fp("hit", i, fp);
		int rc = ops->lookup(ix, fp, &pbn);
		if (removed(i)) {
			CU_ASSERT_FATAL(absent(rc));
		} else {
			CU_ASSERT_EQUAL_FATAL(rc, 1);
			CU_ASSERT_EQUAL_FATAL(pbn, pbn_of(i));
		}
	}
	for (uint64_t i = 0; i < 500; i++) {
		uint64_t pbn = 7777777;
		make_fp("miss", i, fp);
		int rc = ops->lookup(ix, fp, &pbn);
		CU_ASSERT_FATAL(absent(rc));
		if (strcmp(ops->name, "bloom"))
			CU_ASSERT_EQUAL_FATAL(rc, 0); /* only a summary vector may answer "filtered" */
		CU_ASSERT_EQUAL(pbn, 7777777);
	}
	struct index_stats s;
	ops->stats(ix, &s);
	CU_ASSERT_EQUAL(s.entries, N - (RM_HI - RM_LO));
}

struct seen {
	uint8_t hit[N];
	uint64_t n;
	int bad;
};

static int collect(void *arg, const uint8_t *fp, uint64_t pbn)
{
	struct seen *s = arg;
	uint64_t i = pbn >= 100000 ? pbn - 100000 : (pbn - 1) / 3;
	uint8_t want[FL];
	if (i >= N || pbn_of(i) != pbn || removed(i) || s->hit[i]) {
		s->bad++;
		return 0;
	}
	make_fp("hit", i, want);
	if (memcmp(want, fp, FL))
		s->bad++;
	s->hit[i] = 1;
	s->n++;
	return 0;
}

static int stop_after_five(void *arg, const uint8_t *fp, uint64_t pbn)
{
	return ++*(int *)arg == 5 ? 42 : 0;
}

static void check_iterate(const struct index_ops *ops, struct index *ix)
{
	struct seen *s = calloc(1, sizeof *s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(ops->iterate(ix, collect, s), 0);
	CU_ASSERT_EQUAL(s->bad, 0);
	CU_ASSERT_EQUAL(s->n, N - (RM_HI - RM_LO));
	free(s);
	int calls = 0;
	CU_ASSERT_EQUAL(ops->iterate(ix, stop_after_five, &calls), 42);
	CU_ASSERT_EQUAL(calls, 5);
}

/* The scripted sequence every backend must pass identically, at a volume's stripe count (0: the
 * full INDEX_STRIPES). */
static void script_at(const struct index_ops *ops, unsigned stripes)
{
	mkvol();
	struct index_params p = {voldir, FL, CAP, 16, 0, stripes};
	struct index *ix = NULL;
	uint8_t fp[FL];
	uint64_t pbn;
	CU_ASSERT_EQUAL_FATAL(ops->create(&p), 0);
	CU_ASSERT_EQUAL_FATAL(ops->open(&p, 0, &ix), 0);
	struct index_stats s;
	ops->stats(ix, &s);
	CU_ASSERT_EQUAL(s.entries, 0);
	make_fp("hit", 0, fp);
	CU_ASSERT(absent(ops->lookup(ix, fp, &pbn)));

	for (uint64_t i = 0; i < N; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(ops->insert(ix, fp, i * 3 + 1), 0);
	}
	ops->stats(ix, &s);
	CU_ASSERT_EQUAL(s.entries, N);
	for (uint64_t i = 0; i < N; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(ops->lookup(ix, fp, &pbn), 1);
		CU_ASSERT_EQUAL_FATAL(pbn, i * 3 + 1);
	}
	/* replace: same count, new pbn */
	for (uint64_t i = 0; i < REPLACED; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(ops->insert(ix, fp, pbn_of(i)), 0);
	}
	ops->stats(ix, &s);
	CU_ASSERT_EQUAL(s.entries, N);
	/* remove, then remove again */
	for (uint64_t i = RM_LO; i < RM_HI; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(ops->remove(ix, fp), 0);
		CU_ASSERT_EQUAL_FATAL(ops->remove(ix, fp), -ENOENT);
	}
	make_fp("miss", 0, fp);
	CU_ASSERT_EQUAL(ops->remove(ix, fp), -ENOENT);
	check_contents(ops, ix);
	check_iterate(ops, ix);
	ops->stats(ix, &s);
	CU_ASSERT(s.bytes > 0);
	CU_ASSERT_EQUAL(ops->flush(ix), 0);
	ops->close(ix);

	/* a clean reopen, then a recovering one */
	for (int recover = 0; recover <= 1; recover++) {
		CU_ASSERT_EQUAL_FATAL(ops->open(&p, recover, &ix), 0);
		check_contents(ops, ix);
		check_iterate(ops, ix);
		CU_ASSERT_EQUAL(ops->flush(ix), 0);
		ops->close(ix);
	}
	/* the wrong geometry is refused */
	struct index_params wrong = {voldir, 32, CAP, 0, 0, stripes};
	CU_ASSERT(ops->open(&wrong, 0, &ix) < 0);
	if (ops == &index_mem_ops) { /* its partitions are the volume's stripes: another count is refused */
		wrong = p;
		wrong.stripes = stripes == INDEX_STRIPES_MIN ? INDEX_STRIPES : INDEX_STRIPES_MIN;
		CU_ASSERT(ops->open(&wrong, 0, &ix) < 0);
	}
	rmvol();
}

static void script(const struct index_ops *ops) { script_at(ops, 0); }

static void test_mem(void) { script(&index_mem_ops); }
/* A small volume's table: INDEX_STRIPES_MIN partitions hold the same script (N entries of CAP). */
static void test_mem_few_stripes(void) { script_at(&index_mem_ops, INDEX_STRIPES_MIN); }

static int count_one(void *arg, const uint8_t *fp, uint64_t pbn)
{
	(void)fp, (void)pbn;
	++*(uint64_t *)arg;
	return 0;
}

/* Pages of `path` in the page cache (mincore on a mapping of it: residency is the file's, not
 * this mapping's). */
static uint64_t cached_pages(const char *path)
{
	int fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	struct stat st;
	CU_ASSERT_FATAL(fstat(fd, &st) == 0);
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(p != MAP_FAILED);
	size_t in = unit_resident_pages(p, (size_t)st.st_size);
	CU_ASSERT_FATAL(in != SIZE_MAX);
	munmap(p, (size_t)st.st_size);
	close(fd);
	return in;
}

/* The table is addressed by hash, so a lookup or insert touches one page no neighbour will use:
 * on a disk file system a fault used to read around it (up to read_ahead_kb, 8 MiB on the
 * project's VMs), and a 4 MiB import into a fresh 1 TiB volume zero-filled 6 GB of its sparse
 * 16 GiB index (4 s). A cold 64 MiB table takes a few hundred inserts: at most the pages they
 * touch (a probe run may cross into the next) plus the header and the partition counts may be
 * cached. A walk (iterate) still sees every entry. */
static void test_mem_cold_inserts(void)
{
	enum { INSERTS = 256 };
	mkvol_in("/var/tmp"); /* on disk (FHS), where /tmp may be a tmpfs */
	struct statfs fs;
	CU_ASSERT_FATAL(statfs(voldir, &fs) == 0);
	if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC) {
		/* the table is faulted in whole at open there, by design, and nothing is read ahead */
		fprintf(stderr, "\n  /var/tmp is a tmpfs here: read-ahead on the index not checked\n");
		rmvol();
		return;
	}
	struct index_params p = {voldir, FL, 1u << 20, 0, 0, 0};
	struct index *ix;
	uint8_t fp[FL];
	char path[128];
	snprintf(path, sizeof path, "%s/index.mem", voldir);
	CU_ASSERT_EQUAL_FATAL(index_mem_ops.create(&p), 0);
	int fd = open(path, O_RDWR);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(fsync(fd) == 0); /* a dirty page cannot be dropped */
	CU_ASSERT(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
	close(fd);
	uint64_t before = cached_pages(path);
	CU_ASSERT_EQUAL_FATAL(index_mem_ops.open(&p, 0, &ix), 0);
	for (uint64_t i = 0; i < INSERTS; i++) {
		make_fp("hit", i, fp);
		uint64_t pbn;
		CU_ASSERT_EQUAL_FATAL(index_mem_ops.lookup(ix, fp, &pbn), 0);
		CU_ASSERT_EQUAL_FATAL(index_mem_ops.insert(ix, fp, i + 1), 0);
	}
	uint64_t after = cached_pages(path), counts_pages = INDEX_STRIPES * 4 / 4096;
	CU_ASSERT(after - before <= 2 * INSERTS + 1 + counts_pages);
	if (after - before > 2 * INSERTS + 1 + counts_pages)
		fprintf(stderr, "\n  %llu pages of index.mem cached after %d inserts\n",
			(unsigned long long)(after - before), INSERTS);
	uint64_t n = 0;
	CU_ASSERT_EQUAL(index_mem_ops.iterate(ix, count_one, &n), 0);
	CU_ASSERT_EQUAL(n, INSERTS);
	index_mem_ops.close(ix);
	rmvol();
}

static void test_stripes_for(void)
{
	CU_ASSERT_EQUAL(index_stripes_for(1), INDEX_STRIPES_MIN);
	CU_ASSERT_EQUAL(index_stripes_for(68), INDEX_STRIPES_MIN);  /* the fuzz volume: 64 + 4 blocks */
	CU_ASSERT_EQUAL(index_stripes_for(257), 128);
	CU_ASSERT_EQUAL(index_stripes_for(8192), 2048);
	CU_ASSERT_EQUAL(index_stripes_for(8193), INDEX_STRIPES);   /* and every larger volume */
	CU_ASSERT_EQUAL(index_stripes_for(1ULL << 40), INDEX_STRIPES);
}
static void test_bdb(void) { script(&index_bdb_ops); }
static void test_bloom(void) { script(&index_bloom_ops); }

static void test_find(void)
{
	CU_ASSERT_PTR_EQUAL(index_find("mem"), &index_mem_ops);
	CU_ASSERT_PTR_EQUAL(index_find("bdb"), &index_bdb_ops);
	CU_ASSERT_PTR_EQUAL(index_find("bloom"), &index_bloom_ops);
	CU_ASSERT_PTR_NULL(index_find("btree"));
	CU_ASSERT_PTR_NULL(index_find(NULL));
	/* the registry's order is the lists' (--help, format's refusal) and its first the default */
	char names[64];
	CU_ASSERT_STRING_EQUAL(fpindex_names(names, sizeof names, ", ", 0), "mem, bdb, bloom");
	CU_ASSERT_STRING_EQUAL(fpindex_names(names, sizeof names, " or ", FPINDEX_OPENS_READ_ONLY), "mem");
	CU_ASSERT_STRING_EQUAL(fpindex_names(names, 8, ", ", 0), "mem, bd"); /* cut to fit */
	char help[128];
	CU_ASSERT_STRING_EQUAL(fpindex_help(help, sizeof help), "mem, bdb (Berkeley DB) or bloom (Bloom filter + bdb)");
	CU_ASSERT_PTR_EQUAL(fpindex_registry[0], &index_mem_ops);
	size_t n = 0;
	for (; fpindex_registry[n]; n++) /* every one reachable by its own name */
		CU_ASSERT_PTR_EQUAL(index_find(fpindex_registry[n]->name), fpindex_registry[n]);
	CU_ASSERT_EQUAL(n, 3);
}

/* At capacity: >= 95 % of misses filtered, false positives (misses bdb had to answer) <= 3 %. */
static void test_bloom_rates(void)
{
	enum { CAPACITY = 10000, MISSES = 10000 };
	mkvol();
	struct index_params p = {voldir, FL, CAPACITY, 0, 0, 0};
	struct index *ix;
	uint8_t fp[FL];
	uint64_t pbn;
	CU_ASSERT_EQUAL_FATAL(index_bloom_ops.create(&p), 0);
	CU_ASSERT_EQUAL_FATAL(index_bloom_ops.open(&p, 0, &ix), 0);
	for (uint64_t i = 0; i < CAPACITY; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(index_bloom_ops.insert(ix, fp, i), 0);
	}
	unsigned filtered = 0, passed = 0;
	for (uint64_t i = 0; i < MISSES; i++) {
		make_fp("miss", i, fp);
		int rc = index_bloom_ops.lookup(ix, fp, &pbn);
		CU_ASSERT_FATAL(absent(rc));
		filtered += rc == INDEX_ABSENT_FILTERED;
		passed += rc == 0;
	}
	CU_ASSERT(filtered * 100 >= MISSES * 95);
	CU_ASSERT(passed * 100 <= MISSES * 3);
	struct index_stats s;
	index_bloom_ops.stats(ix, &s);
	CU_ASSERT_EQUAL(s.entries, CAPACITY);

	/* Remove 40 %, as one GC pass does: remove leaves the bits (no walk of the index per
	 * removal, every writer waiting), so the removed ones still pass the filter to bdb, which
	 * says absent; settle, at the pass's end, rebuilds once, and they are filtered again. */
	for (uint64_t i = 0; i < CAPACITY * 4 / 10; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(index_bloom_ops.remove(ix, fp), 0);
	}
	for (int settled = 0; settled < 2; settled++) {
		if (settled)
			CU_ASSERT_EQUAL_FATAL(index_bloom_ops.settle(ix), 0);
		filtered = 0;
		for (uint64_t i = 0; i < CAPACITY; i++) {
			make_fp("hit", i, fp);
			int rc = index_bloom_ops.lookup(ix, fp, &pbn);
			if (i < CAPACITY * 4 / 10) {
				CU_ASSERT_FATAL(absent(rc));
				filtered += rc == INDEX_ABSENT_FILTERED;
			} else {
				CU_ASSERT_EQUAL_FATAL(rc, 1);
				CU_ASSERT_EQUAL_FATAL(pbn, i);
			}
		}
		if (settled) {
			CU_ASSERT(filtered * 100 >= (CAPACITY * 4 / 10) * 95);
		} else {
			CU_ASSERT_EQUAL(filtered, 0);
		}
	}
	index_bloom_ops.close(ix);
	rmvol();
}

/* A filter wiped behind the backend's back (a crash mid-update) is rebuilt by a recovering open. */
static void test_bloom_recover(void)
{
	mkvol();
	struct index_params p = {voldir, FL, CAP, 0, 0, 0};
	struct index *ix;
	uint8_t fp[FL];
	uint64_t pbn;
	CU_ASSERT_EQUAL_FATAL(index_bloom_ops.create(&p), 0);
	CU_ASSERT_EQUAL_FATAL(index_bloom_ops.open(&p, 0, &ix), 0);
	for (uint64_t i = 0; i < 500; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(index_bloom_ops.insert(ix, fp, i), 0);
	}
	CU_ASSERT_EQUAL(index_bloom_ops.flush(ix), 0);
	index_bloom_ops.close(ix);
	/* zero the bit array (after the 4 KiB header) */
	char path[128];
	snprintf(path, sizeof path, "%s/bloom", voldir);
	int fd = open(path, O_RDWR);
	CU_ASSERT_FATAL(fd >= 0);
	off_t len = lseek(fd, 0, SEEK_END);
	char *zero = calloc(1, (size_t)(len - 4096));
	CU_ASSERT_EQUAL(pwrite(fd, zero, (size_t)(len - 4096), 4096), len - 4096);
	free(zero);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(index_bloom_ops.open(&p, 0, &ix), 0);
	make_fp("hit", 1, fp);
	CU_ASSERT_EQUAL(index_bloom_ops.lookup(ix, fp, &pbn), INDEX_ABSENT_FILTERED); /* stale, as set up */
	index_bloom_ops.close(ix);
	CU_ASSERT_EQUAL_FATAL(index_bloom_ops.open(&p, 1, &ix), 0);
	for (uint64_t i = 0; i < 500; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(index_bloom_ops.lookup(ix, fp, &pbn), 1);
		CU_ASSERT_EQUAL_FATAL(pbn, i);
	}
	index_bloom_ops.close(ix);
	rmvol();
}

/* Child process: open its own handle, insert fps [lo, hi) with pbn = i, check the parent's
 * [plo, phi), close. Exit status 0 when all went well. */
static int child_work(const struct index_ops *ops, const struct index_params *p, uint64_t lo, uint64_t hi,
		      uint64_t plo, uint64_t phi)
{
	struct index *ix;
	uint8_t fp[FL];
	uint64_t pbn;
	if (ops->open(p, 0, &ix))
		return 1;
	int bad = 0;
	for (uint64_t i = plo; i < phi; i++) {
		make_fp("hit", i, fp);
		bad += ops->lookup(ix, fp, &pbn) != 1 || pbn != i;
	}
	for (uint64_t i = lo; i < hi; i++) {
		make_fp("hit", i, fp);
		bad += ops->insert(ix, fp, i) != 0;
	}
	bad += ops->flush(ix) != 0;
	ops->close(ix);
	return bad ? 2 : 0;
}

static void shared(const struct index_ops *ops)
{
	mkvol();
	struct index_params p = {voldir, FL, CAP, 8, 0, 0};
	struct index *a, *b;
	uint8_t fp[FL];
	uint64_t pbn;
	struct index_stats s;
	CU_ASSERT_EQUAL_FATAL(ops->create(&p), 0);
	CU_ASSERT_EQUAL_FATAL(ops->open(&p, 0, &a), 0);
	for (uint64_t i = 0; i < 100; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(ops->insert(a, fp, i), 0);
	}
	/* a child process inserts 100..299 and sees 0..99 */
	fflush(NULL);
	pid_t pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0)
		_exit(child_work(ops, &p, 100, 300, 0, 100));
	int status = -1;
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (uint64_t i = 0; i < 300; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(ops->lookup(a, fp, &pbn), 1);
		CU_ASSERT_EQUAL_FATAL(pbn, i);
	}
	ops->stats(a, &s);
	CU_ASSERT_EQUAL(s.entries, 300); /* the count is shared, not per process */

	/* two handles in one process at once */
	CU_ASSERT_EQUAL_FATAL(ops->open(&p, 0, &b), 0);
	make_fp("hit", 1000, fp);
	CU_ASSERT_EQUAL(ops->insert(b, fp, 1000), 0);
	CU_ASSERT_EQUAL(ops->lookup(a, fp, &pbn), 1);
	CU_ASSERT_EQUAL(pbn, 1000);
	make_fp("hit", 5, fp);
	CU_ASSERT_EQUAL(ops->remove(a, fp), 0);
	CU_ASSERT(absent(ops->lookup(b, fp, &pbn)));
	ops->stats(b, &s);
	CU_ASSERT_EQUAL(s.entries, 300);
	ops->close(b);
	ops->close(a);
	rmvol();
}

static void test_bdb_shared(void) { shared(&index_bdb_ops); }
static void test_bloom_shared(void) { shared(&index_bloom_ops); }

/* A child that dies without closing: the next opener (DB_REGISTER) recovers, nothing is lost. */
static void test_bdb_killed(void)
{
	mkvol();
	struct index_params p = {voldir, FL, CAP, 0, 0, 0};
	struct index *ix;
	uint8_t fp[FL];
	uint64_t pbn;
	CU_ASSERT_EQUAL_FATAL(index_bdb_ops.create(&p), 0);
	fflush(NULL);
	pid_t pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		if (index_bdb_ops.open(&p, 0, &ix))
			_exit(1);
		for (uint64_t i = 0; i < 200; i++) {
			make_fp("hit", i, fp);
			if (index_bdb_ops.insert(ix, fp, i))
				_exit(2);
		}
		_exit(0); /* no close, no flush: committed to the OS only */
	}
	int status = -1;
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL_FATAL(index_bdb_ops.open(&p, 1, &ix), 0);
	for (uint64_t i = 0; i < 200; i++) {
		make_fp("hit", i, fp);
		CU_ASSERT_EQUAL_FATAL(index_bdb_ops.lookup(ix, fp, &pbn), 1);
		CU_ASSERT_EQUAL_FATAL(pbn, i);
	}
	struct index_stats s;
	index_bdb_ops.stats(ix, &s);
	CU_ASSERT_EQUAL(s.entries, 200);
	index_bdb_ops.close(ix);
	rmvol();
}

int suite_engine_index(void)
{
	static const struct unit_test tests[] = {
		{"index_find", test_find},
		{"script_mem", test_mem},
		{"script_mem_few_stripes", test_mem_few_stripes},
		{"mem_cold_inserts_read_no_more", test_mem_cold_inserts},
		{"index_stripes_for", test_stripes_for},
		{"script_bdb", test_bdb},
		{"script_bloom", test_bloom},
		{"bloom_rates_at_capacity", test_bloom_rates},
		{"bloom_rebuild_on_recover", test_bloom_recover},
		{"bdb_two_processes", test_bdb_shared},
		{"bloom_two_processes", test_bloom_shared},
		{"bdb_killed_writer_recovered", test_bdb_killed},
		{NULL, NULL},
	};
	return unit_add_suite("engine_index", tests);
}
