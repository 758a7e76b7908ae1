/* driver.c - the main of every fuzz harness: AFL++'s persistent loop when built by afl-cc (the
 * long mode, tests/fuzz/run-afl.sh), else a replay of the files and directories given. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"

void harness_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("harness: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

#ifdef __AFL_FUZZ_TESTCASE_LEN
__AFL_FUZZ_INIT();

/* Inputs per forked child before AFL forks a fresh one (from the state after harness_setup);
 * a build with -DHARNESS_LOOP=small checks that a child's exit leaves its successors whole. */
#ifndef HARNESS_LOOP
#define HARNESS_LOOP 100000
#endif

int main(void)
{
	if (harness_setup())
		return 1;
	__AFL_INIT();
	const unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
	while (__AFL_LOOP(HARNESS_LOOP))
		harness_one(buf, (size_t)__AFL_FUZZ_TESTCASE_LEN);
	return 0;
}
#else

/* Each input gets this long; a hang fails the replay instead of stalling make check. */
#define REPLAY_SECONDS 20

static int replay_file(const char *path, unsigned *count)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* exactly the input's size, so a sanitizer sees a read past its end */
	uint8_t *buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf || got != (size_t)st.st_size) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		free(buf);
		return -1;
	}
	alarm(REPLAY_SECONDS);
	harness_one(buf, got);
	alarm(0);
	free(buf);
	(*count)++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, unsigned *count)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char **grown = realloc(names, (n + 1) * sizeof *names);
		if (!grown)
			break;
		names = grown;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_names);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (!rc && names[i])
			rc = replay_file(path, count);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR... (replays each input through the harness)\n", argv[0]);
		return 2;
	}
	if (harness_setup())
		return 1;
	unsigned count = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int rc = stat(argv[i], &st) ? (fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno)), -1)
		       : S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count)
					     : replay_file(argv[i], &count);
		if (rc)
			return 1;
	}
	printf("%s: %u inputs replayed, no defect\n", argv[0], count);
	return 0;
}
#endif
