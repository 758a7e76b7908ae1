/* test_gen_batchread.c - dedisgen's batch reads of small files: io_uring's chains (where the
 * kernel has it) and the plain system calls give each file's bytes, short files and errors alike. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gen/batchread.h"
#include "unit.h"

enum { NFILES = 200 };

static char dir[64];

/* File i holds (i * 37) % 9000 bytes of a pattern of i. */
static size_t len_of(int i)
{
	return (size_t)(i * 37) % 9000;
}

static void fill(uint8_t *p, size_t n, int i)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (uint8_t)(i * 7 + k * 13);
}

/* A sysfs file: its size says 4096, it holds a few bytes, and io_uring cannot open it without
 * blocking (the open goes to a worker: the read must wait for it, which only the link makes it do). */
#define SYSFS "/sys/devices/system/cpu/online"

/* Items: NFILES files (every 10th asked for 100 bytes more than it holds: it "shrank"), then a
 * path that does not exist, a directory (its read fails: EISDIR) and SYSFS. Buffers zeroed: what
 * a reader leaves alone stays 0, and valgrind sees them written either way. */
static struct batch_item *items_new(size_t *n)
{
	*n = NFILES + 3;
	struct batch_item *it = calloc(*n, sizeof *it);
	CU_ASSERT_PTR_NOT_NULL_FATAL(it);
	for (int i = 0; i < NFILES; i++) {
		char *path = malloc(128);
		snprintf(path, 128, "%s/f%03d", dir, i);
		it[i].path = path;
		it[i].size = len_of(i) + (i % 10 == 0 ? 100 : 0);
		it[i].buf = calloc(1, it[i].size + 1);
	}
	char *missing = malloc(128), *sub = malloc(128);
	snprintf(missing, 128, "%s/missing", dir);
	snprintf(sub, 128, "%s/sub", dir);
	it[NFILES] = (struct batch_item){.path = missing, .size = 10, .buf = calloc(1, 11)};
	it[NFILES + 1] = (struct batch_item){.path = sub, .size = 10, .buf = calloc(1, 11)};
	it[NFILES + 2] = (struct batch_item){.path = strdup(SYSFS), .size = 4096, .buf = calloc(1, 4097)};
	return it;
}

static void items_free(struct batch_item *it, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		free((void *)it[j].path);
		free(it[j].buf);
	}
	free(it);
}

/* Every file's bytes, got = what it holds, and the two failures named by their step. */
static void check(const struct batch_item *it)
{
	int bad = 0;
	uint8_t want[9000];
	for (int i = 0; i < NFILES; i++) {
		fill(want, len_of(i), i);
		bad += it[i].err != 0 || it[i].got != len_of(i) || memcmp(it[i].buf, want, len_of(i)) ||
		       it[i].buf[len_of(i)] != 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(it[NFILES].err, ENOENT);
	CU_ASSERT_STRING_EQUAL(it[NFILES].what, "cannot open");
	CU_ASSERT_EQUAL(it[NFILES].got, 0);
	CU_ASSERT_EQUAL(it[NFILES + 1].err, EISDIR);
	CU_ASSERT_STRING_EQUAL(it[NFILES + 1].what, "read error");
	char sys[4096];
	FILE *f = fopen(SYSFS, "rb");
	if (f) { /* no sysfs here: the item fails to open, as the plain read above does */
		size_t len = fread(sys, 1, sizeof sys, f);
		fclose(f);
		CU_ASSERT_EQUAL(it[NFILES + 2].err, 0);
		CU_ASSERT_EQUAL(it[NFILES + 2].got, len);
		CU_ASSERT(len > 0 && !memcmp(it[NFILES + 2].buf, sys, len));
	}
}

static size_t count_plain(const struct batch_item *it, size_t n)
{
	size_t c = 0;
	for (size_t j = 0; j < n; j++)
		c += it[j].plain;
	return c;
}

static void make_files(void)
{
	snprintf(dir, sizeof dir, "/tmp/dedis-unit-batch.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	uint8_t buf[9000];
	for (int i = 0; i < NFILES; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/f%03d", dir, i);
		FILE *f = fopen(path, "wb");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		fill(buf, len_of(i), i);
		CU_ASSERT_EQUAL(fwrite(buf, 1, len_of(i), f), len_of(i));
		fclose(f);
	}
	char sub[128];
	snprintf(sub, sizeof sub, "%s/sub", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0755), 0);
}

static void remove_files(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_sync(void)
{
	make_files();
	size_t n;
	struct batch_item *it = items_new(&n);
	batch_read_sync(it, n);
	check(it);
	items_free(it, n);
	remove_files();
}

/* 202 files through 64 slots, twice on one reader (slots reused across calls); where the kernel
 * has no io_uring (or valgrind does not pass it) the reader is NULL and the plain reads above
 * are what dedisgen uses. */
static void test_uring(void)
{
	struct batch_reader *br = batch_reader_new();
	if (!br) {
		fprintf(stderr, "  (no io_uring here: the system-call reads were tested alone) ");
		return;
	}
	make_files();
	for (int round = 0; round < 2; round++) {
		size_t n;
		struct batch_item *it = items_new(&n);
		CU_ASSERT_EQUAL(batch_reader_read(br, it, n), 0);
		check(it);
		CU_ASSERT_EQUAL(count_plain(it, n), 0);
		CU_ASSERT_EQUAL(batch_reader_unreaped(br), 0);
		items_free(it, n);
	}
	batch_reader_free(br);
	remove_files();
}

/* Opens and reads the kernel could not run (-ECANCELED, as when no io-wq worker can be created
 * under a pids limit; -EAGAIN, -EINTR) are read the plain way: every 1st, 3rd and 7th of them not
 * run, the files still come out whole, neither "shrunk" nor failed, and marked as read plainly
 * (all of them when every open is refused, some but not all otherwise). */
static void test_uring_cancelled(void)
{
	struct batch_reader *br = batch_reader_new();
	if (!br) {
		fprintf(stderr, "  (no io_uring here) ");
		return;
	}
	make_files();
	static const unsigned every[] = {1, 3, 7};
	static const int errnos[] = {ECANCELED, EAGAIN, EINTR};
	for (size_t x = 0; x < sizeof errnos / sizeof *errnos; x++)
		for (size_t e = 0; e < sizeof every / sizeof *every; e++) {
			size_t n;
			struct batch_item *it = items_new(&n);
			batch_reader_inject(br, every[e], errnos[x], 0);
			CU_ASSERT_EQUAL(batch_reader_read(br, it, n), 0);
			check(it);
			size_t plain = count_plain(it, n);
			if (every[e] == 1) {
				CU_ASSERT_EQUAL(plain, n);
			} else {
				CU_ASSERT(plain > 0 && plain < n);
			}
			CU_ASSERT_EQUAL(batch_reader_unreaped(br), 0);
			items_free(it, n);
		}
	batch_reader_free(br);
	remove_files();
}

/* The ring failing mid-batch (after its 1st, 2nd or 5th submission, with requests in the
 * kernel): every request the kernel took is waited for before returning, every item still read,
 * -1 returned, and the reader reads the next batch the plain way. */
static void test_uring_ring_failure(void)
{
	static const unsigned after[] = {1, 2, 5};
	for (size_t a = 0; a < sizeof after / sizeof *after; a++) {
		struct batch_reader *br = batch_reader_new();
		if (!br) {
			fprintf(stderr, "  (no io_uring here) ");
			return;
		}
		make_files();
		for (int round = 0; round < 2; round++) {
			size_t n;
			struct batch_item *it = items_new(&n);
			if (!round)
				batch_reader_inject(br, 0, 0, after[a]);
			CU_ASSERT_EQUAL(batch_reader_read(br, it, n), -1);
			CU_ASSERT_EQUAL(batch_reader_unreaped(br), 0);
			check(it);
			size_t plain = count_plain(it, n);
			if (round || after[a] == 1) { /* broken, or failed before any completion was seen */
				CU_ASSERT_EQUAL(plain, n);
			} else {
				CU_ASSERT(plain > 0);
			}
			items_free(it, n);
		}
		batch_reader_free(br);
		remove_files();
	}
}

int suite_gen_batchread(void)
{
	static const struct unit_test tests[] = {
		{"batch reads: system calls", test_sync},
		{"batch reads: io_uring chains == system calls", test_uring},
		{"batch reads: cancelled opens and reads read the plain way", test_uring_cancelled},
		{"batch reads: a failed ring reads the rest the plain way", test_uring_ring_failure},
		{NULL, NULL},
	};
	return unit_add_suite("gen_batchread", tests);
}
