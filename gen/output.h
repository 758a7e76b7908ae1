/* output.h - everything dedisgen writes: a file created as a temp next to its final name and
 * renamed on commit (never a half-written output), distribution files, the gnuplot histogram. */
#ifndef DEDIS_GEN_OUTPUT_H
#define DEDIS_GEN_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "lib/distfile.h"
#include "lib/safefile.h"
#include "lib/errmsg.h"

struct pending {
	char *path;        /* as given (messages) */
	char *at;          /* its name through its directory, held since pending_open (NULL: in place) */
	char *tmp;
	FILE *f;
	struct safedir dir;
};

/* Creates path.tmp.<pid> now (so an unwritable output is found before any work), in path's
 * directory, which it holds to the end: renamed there even if the directory's name is swapped
 * for a link meanwhile (a scan takes long). Returns 0 or -1 (errno set). */
int pending_open(struct pending *p, const char *path);
/* Flushes, fsyncs and renames over the final path; removes the temp on failure. */
int pending_commit(struct pending *p);
/* The same in two steps, so several outputs appear together or not at all: pending_sync
 * (flush, fsync, close; the temp file stays) for each, then pending_publish (rename) for each.
 * Both remove the temp on failure. */
int pending_sync(struct pending *p);
int pending_publish(struct pending *p);
/* Removes the temp file (safe to call twice, or on a never-opened pending). */
void pending_abort(struct pending *p);

/* The header lines dedisgen writes before the records (strings owned by the caller's buffer). */
struct dist_header {
	char lines[8][1024];
	const char *ptrs[8];
	size_t n;
};
void dist_header_build(struct dist_header *h, const char *version, char *const *sources, int nsources,
		       uint64_t block_size, const char *hash, uint64_t bytes, uint64_t zero_blocks);

/* Is gnuplot runnable? (checked before a scan, so a missing gnuplot fails fast). */
bool plot_available(void);
/* Is png refused for a rendered plot (err: the message)? When it exists as a device, a FIFO or a
 * socket: the PNG is renamed into place, which would replace the node, and probing a FIFO with
 * pending_open would block until a reader came. Asked before any work, so such a --plot is bad
 * input (exit 2). */
bool plot_target_refused(const char *png, struct dd_err *err);
/* Renders d's power-of-two histogram of copies into png (via a temp file + rename) with the
 * script plots/dedisgen-histogram.gp. Returns 0, or -1 with err filled. With `later` the temp
 * file is left rendered in *later for the caller to pending_publish (or abort). */
int plot_histogram(const struct dist *d, const char *title, const char *png, struct pending *later, struct dd_err *err);
/* Two histograms overlaid (dedisgen compare --plot); caption (may be empty) under the picture. */
int plot_compare(const struct dist *a, const struct dist *b, const char *title_a, const char *title_b,
		 const char *caption, const char *png, struct dd_err *err);

#endif
