/* test_fullio.c - fullio_write delivers a buffer larger than a pipe holds, whole, to a reader
 * taking it in small reads; fullio_read gets it back whole and says an early end of file
 * (-1, errno 0) apart from an error (-1, errno set). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/fullio.h"
#include "unit.h"

#define BIG (1u << 20) /* 16 times the default pipe buffer: write(2) returns short on it */

struct reader {
	int fd;
	unsigned char *got;
	int rc;
};

static void *read_side(void *arg)
{
	struct reader *r = arg;
	r->rc = fullio_read(r->fd, r->got, BIG);
	return NULL;
}

static void test_pipe_whole(void)
{
	int p[2];
	CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
	unsigned char *src = malloc(BIG), *got = calloc(1, BIG);
	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	for (size_t i = 0; i < BIG; i++)
		src[i] = (unsigned char)(i * 2654435761u >> 13);
	struct reader r = {p[0], got, -2};
	pthread_t t;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, read_side, &r), 0);
	CU_ASSERT_EQUAL(fullio_write(p[1], src, BIG), 0);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(r.rc, 0);
	CU_ASSERT(memcmp(src, got, BIG) == 0);

	/* three bytes, then the end: reading four is an early end of file, not an error */
	CU_ASSERT_EQUAL(fullio_write(p[1], "abc", 3), 0);
	close(p[1]);
	errno = EINVAL;
	CU_ASSERT_EQUAL(fullio_read(p[0], got, 4), -1);
	CU_ASSERT_EQUAL(errno, 0);
	CU_ASSERT(memcmp(got, "abc", 3) == 0);
	close(p[0]);

	/* a closed descriptor: an error, said by errno */
	CU_ASSERT_EQUAL(fullio_write(p[1], "x", 1), -1);
	CU_ASSERT_EQUAL(errno, EBADF);
	free(src);
	free(got);
}

int suite_fullio(void)
{
	static const struct unit_test tests[] = {
		{"a buffer larger than a pipe, written and read whole; an early end of file is no error", test_pipe_whole},
		{NULL, NULL},
	};
	return unit_add_suite("fullio", tests);
}
