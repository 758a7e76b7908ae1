/* report.c - Jansson building blocks of the JSON reports (latency in microseconds, distribution
 * rows) and the atomic write: temp file, fsync, rename, so readers never see a partial JSON. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"

/* Sets key to a new value; on any failure drops the object and returns -1. */
static int put(json_t *obj, const char *key, json_t *value)
{
	if (!value || json_object_set_new(obj, key, value) != 0)
		return -1;
	return 0;
}

static json_t *us(uint64_t ns)
{
	return json_real((double)ns / 1000.0);
}

json_t *report_latency(const struct histogram *h)
{
	json_t *o = json_object();
	int empty = h->count == 0;

	if (!o)
		return NULL;
	if (put(o, "mean", json_real(hist_mean(h) / 1000.0)) ||
	    put(o, "p50", us(hist_percentile(h, 50.0))) ||
	    put(o, "p90", us(hist_percentile(h, 90.0))) ||
	    put(o, "p99", us(hist_percentile(h, 99.0))) ||
	    put(o, "p99_9", us(hist_percentile(h, 99.9))) ||
	    put(o, "max", us(empty ? 0 : h->max))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Counts beyond json_int_t are written as reals rather than wrapped. */
static json_t *count(uint64_t v)
{
	if (v > (uint64_t)INT64_MAX)
		return json_real((double)v);
	return json_integer((json_int_t)v);
}

json_t *report_dist_rows(const struct dist_rows *r)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (put(o, "blocks", count(r->total_blocks)) ||
	    put(o, "distinct", count(r->distinct)) ||
	    put(o, "U0", json_real(r->u0)) ||
	    put(o, "U1", json_real(r->u1)) ||
	    put(o, "D", json_real(r->d)) ||
	    put(o, "ratio", json_real(r->ratio))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Best effort: makes the rename itself durable. */
static void sync_parent_dir(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return;
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(copy);
}

int report_write_atomic(json_t *doc, const char *path)
{
	char *text = NULL, *tmp = NULL;
	int fd = -1, saved;
	size_t tlen;

	if (!doc || !path) {
		errno = EINVAL;
		return -1;
	}
	text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	/* An existing non-regular file (/dev/null, /dev/stdout, a FIFO) is written in place: renaming
	 * a temp file over it would replace the device node with a regular file. */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write_all(fd, text, strlen(text)) != 0 || write_all(fd, "\n", 1) != 0) {
			saved = errno;
			if (fd >= 0)
				close(fd);
			free(text);
			errno = saved;
			return -1;
		}
		free(text);
		return close(fd);
	}
	tlen = strlen(path) + 32;
	if (!(tmp = malloc(tlen)))
		goto fail;
	snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (write_all(fd, text, strlen(text)) != 0 || write_all(fd, "\n", 1) != 0)
		goto fail_unlink;
	if (fsync(fd) != 0)
		goto fail_unlink;
	if (close(fd) != 0) {
		fd = -1;
		goto fail_unlink;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto fail_unlink;
	sync_parent_dir(path);
	free(tmp);
	free(text);
	return 0;
fail_unlink:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
fail:
	saved = errno;
	free(tmp);
	free(text);
	errno = saved;
	return -1;
}
