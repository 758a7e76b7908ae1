/* test_fullio.c - fullio_write delivers a buffer larger than a pipe holds, whole, to a reader
 * taking it in small reads; fullio_read gets it back whole and says an early end of file
 * (-1, errno 0) apart from an error (-1, errno set); fullio_pwrite/pread at an offset, and the
 * caller's errno for a transfer past the end. Also errmsg.h's carrier (err_fail, _errno, _forward). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "lib/fullio.h"
#include <stdio.h>
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

static void test_positional(void)
{
	char path[] = "/tmp/dedis-fullio-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	unlink(path);
	unsigned char out[3000], in[3000];
	for (size_t i = 0; i < sizeof out; i++)
		out[i] = (unsigned char)(i * 7);
	CU_ASSERT_EQUAL(fullio_pwrite(fd, out, sizeof out, 5000, ENOSPC), 0);
	CU_ASSERT_EQUAL(fullio_pread(fd, in, sizeof in, 5000, EIO), 0);
	CU_ASSERT_EQUAL(memcmp(in, out, sizeof in), 0);
	/* 8000 is the file's end: nothing there to read, so the caller's errno */
	CU_ASSERT_EQUAL(fullio_pread(fd, in, 10, 8000, EIO), -EIO);
	CU_ASSERT_EQUAL(fullio_pread(-1, in, 10, 0, EIO), -EBADF);
	close(fd);
}

static void test_error_carrier(void)
{
	struct dd_err e = {0};
	CU_ASSERT_EQUAL(err_fail(&e, -1, "value %d: out of range\n", 7), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "value 7: out of range?");
	CU_ASSERT_FALSE(e.resource);
	CU_ASSERT_EQUAL(err_fail_errno(&e, -3, ENOMEM, "reading %s", "x"), -3);
	CU_ASSERT_STRING_EQUAL(e.msg, "reading x: Cannot allocate memory");
	CU_ASSERT_TRUE(e.resource);
	CU_ASSERT_EQUAL(err_forward(&e, 2, "%s", "/data"), 2);
	CU_ASSERT_STRING_EQUAL(e.msg, "/data: reading x: Cannot allocate memory");
	CU_ASSERT_TRUE(e.resource);
	char longctx[600];
	memset(longctx, 'a', sizeof longctx - 1);
	longctx[sizeof longctx - 1] = 0;
	err_forward(&e, 0, "%s", longctx);
	CU_ASSERT_EQUAL(strlen(e.msg), sizeof e.msg - 1);
	err_clear(&e);
	CU_ASSERT_STRING_EQUAL(e.msg, "");
	CU_ASSERT_FALSE(e.resource);
	CU_ASSERT_EQUAL(err_fail(NULL, 4, "dropped"), 4);
}

int suite_fullio(void)
{
	static const struct unit_test tests[] = {
		{"a buffer larger than a pipe, written and read whole; an early end of file is no error", test_pipe_whole},
		{"pwrite/pread at an offset whole; past the end the caller's errno, else -errno", test_positional},
		{"the error carrier formats, appends strerror, forwards with context, marks resource", test_error_carrier},
		{NULL, NULL},
	};
	return unit_add_suite("fullio", tests);
}
