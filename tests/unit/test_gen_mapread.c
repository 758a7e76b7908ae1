/* test_gen_mapread.c - dedisgen's mapped reads: a range at any offset gives the file's bytes, a
 * page the file no longer holds is caught by the guard (SIGBUS) and reported, and no other is. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gen/mapread.h"
#include "unit.h"

#define FILE_LEN (3u << 20)

static int make_file(char *path, size_t len)
{
	strcpy(path, "/tmp/dedis-mapread.XXXXXX");
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	uint8_t *buf = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	for (size_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(k * 31 + k / 4096);
	CU_ASSERT_FATAL(write(fd, buf, len) == (ssize_t)len);
	free(buf);
	return fd;
}

/* Ranges starting inside a page (dedisgen-mpi's stripes need not be page-aligned) and on one. */
static void test_bytes(void)
{
	char path[64];
	int fd = make_file(path, FILE_LEN);
	struct map_file mf;
	map_file_probe(fd, &mf);
	CU_ASSERT_TRUE(mf.mappable);
	CU_ASSERT_TRUE(mf.residency_visible); /* our own file */
	const uint64_t offs[] = {0, 1, 4095, 4096, 5000, FILE_LEN - 10};
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
		struct map_range m;
		size_t len = offs[i] + 65536 <= FILE_LEN ? 65536 : FILE_LEN - offs[i];
		/* the file was just written: every page is in memory, so resident_only maps it too */
		CU_ASSERT_EQUAL_FATAL(map_range_open(fd, &mf, offs[i], len, true, &m), MAP_OPEN_OK);
		size_t bad = 0;
		for (size_t k = 0; k < len; k++) {
			uint64_t at = offs[i] + k;
			bad += m.data[k] != (uint8_t)(at * 31 + at / 4096);
		}
		CU_ASSERT_EQUAL(bad, 0);
		map_range_close(&m);
		CU_ASSERT_PTR_NULL(m.base);
	}
	close(fd);
	unlink(path);
}

struct sum_work {
	const uint8_t *data;
	size_t len;
	unsigned long sum;
};

static int sum_all(void *arg)
{
	struct sum_work *w = arg;
	for (size_t k = 0; k < w->len; k++)
		w->sum += w->data[k];
	return 7;
}

/* The guard returns fn's value untouched; a range cut short under it faults, is caught, and the
 * next guarded call (the mask restored, the handler still ours) is caught again. */
static void test_guard(void)
{
	char path[64];
	int fd = make_file(path, FILE_LEN);
	struct map_file mf;
	map_file_probe(fd, &mf);
	struct map_range m;
	CU_ASSERT_EQUAL_FATAL(map_range_open(fd, &mf, 4096, FILE_LEN - 4096, false, &m), MAP_OPEN_OK);
	struct sum_work w = {m.data, FILE_LEN - 4096, 0};
	const void *fault = "not set";
	CU_ASSERT_EQUAL(map_guarded(&m, sum_all, &w, &fault), 7);
	CU_ASSERT_PTR_NULL(fault);
	CU_ASSERT(w.sum > 0);
	CU_ASSERT_EQUAL_FATAL(ftruncate(fd, 1u << 20), 0);
	for (int round = 0; round < 2; round++) {
		w.sum = 0;
		CU_ASSERT_EQUAL(map_guarded(&m, sum_all, &w, &fault), -1);
		/* the range starts at the file's offset 4096: the first byte past the new end faults */
		CU_ASSERT_PTR_EQUAL(fault, m.data + (1u << 20) - 4096);
		sigset_t now;
		CU_ASSERT_EQUAL(sigprocmask(SIG_BLOCK, NULL, &now), 0);
		CU_ASSERT_FALSE(sigismember(&now, SIGBUS)); /* else the next fault would kill */
	}
	map_range_close(&m);
	close(fd);
	unlink(path);
}

static int raise_bus(void *arg)
{
	(void)arg;
	raise(SIGBUS);
	return 0;
}

/* A SIGBUS that no fault raised (kill, raise) is not the guard's, even inside it: it still ends
 * the process (or goes to the handler there was before: a sanitizer's), as without the guard. */
static void test_sent_sigbus(void)
{
	char path[64];
	int fd = make_file(path, FILE_LEN);
	for (int inside = 0; inside < 2; inside++) {
		pid_t pid = fork();
		CU_ASSERT_FATAL(pid >= 0);
		if (pid == 0) {
			struct map_range m;
			struct map_file mf;
			const void *fault;
			map_file_probe(fd, &mf);
			if (map_range_open(fd, &mf, 0, FILE_LEN, false, &m) != MAP_OPEN_OK)
				_exit(3);
			if (inside)
				map_guarded(&m, raise_bus, NULL, &fault);
			else
				raise(SIGBUS);
			_exit(0); /* the signal was swallowed */
		}
		int status;
		CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
		CU_ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		CU_ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	}
	close(fd);
	unlink(path);
}

/* Files of pseudo file systems (procfs here; sysfs' PCI resource files are device memory) are
 * never mapped: map_range_open refuses them, and the caller reads them by pread. */
static void test_pseudo_fs(void)
{
	int fd = open("/proc/self/status", O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	struct map_file mf;
	map_file_probe(fd, &mf);
	CU_ASSERT_FALSE(mf.mappable);
	struct map_range m;
	CU_ASSERT_EQUAL(map_range_open(fd, &mf, 0, 4096, false, &m), MAP_OPEN_FAILED);
	CU_ASSERT_PTR_NULL(m.base);
	close(fd);
}

int suite_gen_mapread(void)
{
	static const struct unit_test tests[] = {
		{"mapped reads: the file's bytes at any offset", test_bytes},
		{"mapped reads: a file cut short is caught, twice", test_guard},
		{"mapped reads: a SIGBUS sent, not faulted, still ends the process", test_sent_sigbus},
		{"mapped reads: files of pseudo file systems are not mapped", test_pseudo_fs},
		{NULL, NULL},
	};
	return unit_add_suite("gen_mapread", tests);
}
