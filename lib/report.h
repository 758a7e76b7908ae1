/* report.h - Jansson helpers shared by the JSON reports: latency objects, distribution rows,
 * and writing a document atomically (temp file + rename, never a partial JSON). */
#ifndef DEDIS_REPORT_H
#define DEDIS_REPORT_H

#include <jansson.h>
#include "lib/histogram.h"
#include "lib/distfile.h"

/* {"mean","p50","p90","p99","p99_9","max"} in microseconds, as reals (all 0 when empty).
 * Returns a new reference, or NULL when out of memory. */
json_t *report_latency(const struct histogram *h);
/* A 64-bit count as JSON: an integer, or a real past json_int_t (never a wrapped negative). */
json_t *report_count(uint64_t v);
/* {"blocks","distinct","U0","U1","D","ratio"}: blocks = T and distinct as integers, U0/U1/D as
 * fractions in [0,1] (as struct dist_rows holds them), ratio = T/distinct. */
json_t *report_dist_rows(const struct dist_rows *r);
/* Rewrites obj's keys in snake_case ('-' becomes '_'), values and order kept: the reports' one
 * key style, also applied to an older report read back. 0 (also for NULL or a non-object), or -1
 * out of memory. */
int report_keys_snake_case(json_t *obj);
/* Writes `doc` (2-space indent, keys in insertion order, newline-terminated) to
 * path + ".tmp.<pid>" (created O_EXCL|O_NOFOLLOW), fsyncs it and renames it over path; through
 * to a character device or FIFO (/dev/null, /dev/stdout) in place (safefile.h). Returns 0 or -1
 * (errno set; the temp file is removed and path is left untouched). */
int report_write_atomic(json_t *doc, const char *path);

#endif
