/* report.c - Jansson building blocks of the JSON reports (latency in microseconds, distribution
 * rows) and the atomic write: temp file, fsync, rename, so readers never see a partial JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fullio.h"
#include "lib/report.h"
#include "lib/safefile.h"

/* Sets key to a new value; on any failure drops the object and returns -1. */
static int put(json_t *obj, const char *key, json_t *value)
{
	if (!value || json_object_set_new(obj, key, value) != 0)
		return -1;
	return 0;
}

int report_keys_snake_case(json_t *obj)
{
	if (!json_is_object(obj))
		return 0;
	json_t *renamed = json_object();
	const char *key;
	json_t *value;
	if (!renamed)
		return -1;
	json_object_foreach(obj, key, value) {
		char name[256];
		snprintf(name, sizeof name, "%s", key);
		for (char *c = name; *c; c++)
			if (*c == '-')
				*c = '_';
		if (json_object_set(renamed, name, value)) {
			json_decref(renamed);
			return -1;
		}
	}
	int rc = json_object_clear(obj) || json_object_update(obj, renamed) ? -1 : 0;
	json_decref(renamed);
	return rc;
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
json_t *report_count(uint64_t v)
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
	if (put(o, "blocks", report_count(r->total_blocks)) ||
	    put(o, "distinct", report_count(r->distinct)) ||
	    put(o, "U0", json_real(r->u0)) ||
	    put(o, "U1", json_real(r->u1)) ||
	    put(o, "D", json_real(r->d)) ||
	    put(o, "ratio", json_real(r->ratio))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int report_write_atomic(json_t *doc, const char *path)
{
	if (!doc || !path) {
		errno = EINVAL;
		return -1;
	}
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	/* A temp file renamed over the name (fsynced first), or in place through to /dev/null, a
	 * FIFO or a terminal: never through a link to a file, never into an existing file. */
	struct safefile s;
	int rc = safefile_open(&s, path);
	if (!rc && (fullio_write(s.fd, text, strlen(text)) || fullio_write(s.fd, "\n", 1))) {
		int e = errno;
		safefile_abort(&s);
		errno = e;
		rc = -1;
	} else if (!rc) {
		rc = safefile_commit(&s, true);
	}
	int e = errno;
	free(text);
	errno = e;
	return rc;
}
