/* output.c - dedisgen's writes: temp-then-rename outputs, the distribution header, and the
 * histogram plot (data file + gnuplot -c plots/dedisgen-histogram.gp, run with posix_spawn). */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/distcmp.h"
#include "gen/output.h"
#include "lib/plot.h"
#include "lib/safefile.h"


int pending_open(struct pending *p, const char *path)
{
	memset(p, 0, sizeof *p);
	char at[PATH_MAX];
	if (safefile_in_place(path))
		snprintf(at, sizeof at, "%s", path);
	else if (safedir_hold_parent(&p->dir, path, at, sizeof at))
		return -1;
	size_t len = strlen(at) + 32;
	if (!(p->path = strdup(path)) || !(p->at = strdup(at)) || !(p->tmp = malloc(len))) {
		pending_abort(p);
		errno = ENOMEM;
		return -1;
	}
	snprintf(p->tmp, len, "%s.tmp.%ld", at, (long)getpid());
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		pending_abort(p);
		errno = EISDIR;
		return -1;
	}
	/* A block device or a socket is never an output (an output is replaced, never written
	 * through: a planted link to a disk must not become a write to it). */
	if (safefile_refused(path)) {
		pending_abort(p);
		errno = EPERM;
		return -1;
	}
	/* An existing character device or FIFO (/dev/null, /dev/stdout, a pipe) is written in place:
	 * renaming a temp file over it would replace the node with a regular file. Anything else -
	 * a file, a link to one - is replaced by the temp file, never written through. */
	if (safefile_in_place(path)) {
		free(p->tmp);
		p->tmp = NULL;
		int fd = safefile_open_in_place(path);
		if (fd >= 0 && (p->f = fdopen(fd, "w")))
			return 0;
		int e = errno;
		if (fd >= 0)
			close(fd);
		pending_abort(p);
		errno = e;
		return -1;
	}
	if (!(p->f = fopen(p->tmp, "wx"))) {
		int e = errno;
		free(p->tmp);
		p->tmp = NULL; /* not ours to remove */
		pending_abort(p);
		errno = e;
		return -1;
	}
	return 0;
}

int pending_sync(struct pending *p)
{
	int rc = 0;
	if (!p->f) /* already synced (or a rendered plot) */
		return 0;
	if (fflush(p->f) || ferror(p->f) || (p->tmp && fsync(fileno(p->f))))
		rc = -1;
	int e = errno;
	if (fclose(p->f))
		rc = -1;
	else
		errno = e;
	p->f = NULL;
	if (rc) {
		e = errno;
		pending_abort(p);
		errno = e;
	}
	return rc;
}

int pending_publish(struct pending *p)
{
	int rc = p->tmp && rename(p->tmp, p->at) ? -1 : 0;
	int e = errno;
	if (!rc) { /* renamed: nothing to remove */
		free(p->tmp);
		p->tmp = NULL;
	}
	pending_abort(p);
	errno = e;
	return rc;
}

int pending_commit(struct pending *p)
{
	return pending_sync(p) || pending_publish(p) ? -1 : 0;
}

void pending_abort(struct pending *p)
{
	if (p->f)
		fclose(p->f);
	if (p->tmp)
		unlink(p->tmp);
	if (p->at && p->dir.fd > 0) /* (a zeroed pending holds nothing) */
		safedir_release(&p->dir);
	free(p->tmp);
	free(p->path);
	free(p->at);
	memset(p, 0, sizeof *p);
}

void dist_header_build(struct dist_header *h, const char *version, char *const *sources, int nsources,
		       uint64_t block_size, const char *hash, uint64_t bytes, uint64_t zero_blocks)
{
	size_t used = 0;
	h->n = 0;
	snprintf(h->lines[h->n++], sizeof h->lines[0], "dedisgen %s", version);
	char *s = h->lines[h->n++];
	used = (size_t)snprintf(s, sizeof h->lines[0], "source:");
	for (int i = 0; i < nsources && used < sizeof h->lines[0]; i++) {
		/* A newline in a path would end the comment: shown as '?'. */
		used += (size_t)snprintf(s + used, sizeof h->lines[0] - used, " %s", sources[i]);
	}
	for (char *c = s; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = '?';
	snprintf(h->lines[h->n++], sizeof h->lines[0], "block-size: %" PRIu64, block_size);
	snprintf(h->lines[h->n++], sizeof h->lines[0], "hash: %s", hash);
	snprintf(h->lines[h->n++], sizeof h->lines[0], "bytes: %" PRIu64, bytes);
	snprintf(h->lines[h->n++], sizeof h->lines[0], "zero-blocks: %" PRIu64, zero_blocks);
	for (size_t i = 0; i < h->n; i++)
		h->ptrs[i] = h->lines[i];
}

bool plot_available(void)
{
	char script[4096];
	return plot_gnuplot_available() && plot_script("dedisgen-histogram.gp", script, sizeof script) == 0 &&
	       plot_script("dedisgen-compare.gp", script, sizeof script) == 0;
}

bool plot_target_refused(const char *png, struct dd_err *err)
{
	struct stat st;
	/* a new name, a file or a link to one; a directory is said by pending_open (EISDIR); never a
	 * descriptor by name (/dev/stdout), written in place, where gnuplot's file cannot be renamed */
	if (!safefile_in_place(png) && (stat(png, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return false;
	err_fail(err, -1, "--plot %s: not a regular file (the PNG is renamed into place)", png);
	return true;
}

/* One histogram as the plot scripts read it: copies_low copies_high share_of_blocks contents. */
static int write_histogram(const struct dist *d, char *path, struct dd_err *err)
{
	struct dist_pow2 h;
	int fd = mkstemp(path);
	if (fd < 0) {
		err_fail(err, -1, "--plot: temp file: %s", strerror(errno));
		return -1;
	}
	FILE *f = fdopen(fd, "w");
	dist_pow2_histogram(d, &h);
	fprintf(f, "# copies_low copies_high share_of_blocks contents\n");
	for (int k = 0; k <= h.top; k++)
		if (h.blocks[k])
			fprintf(f, "%.0f %.0f %.9g %" PRIu64 "\n", ldexp(1, k), ldexp(1, k + 1) - 1, h.share[k], h.contents[k]);
	if (fclose(f)) {
		err_fail(err, -1, "--plot: writing the data: %s", strerror(errno));
		unlink(path);
		return -1;
	}
	return 0;
}

/* Render into a temp name next to png and rename it in place, so a failed plot leaves nothing. */
static int render(const char *script, const char *const *data, size_t ndata, const char *const *titles,
		  size_t ntitles, const char *png, struct pending *later, struct dd_err *err)
{
	struct pending own, *out = later && later->tmp ? later : &own; /* later: opened when the run began */
	if (out == &own && pending_open(&own, png)) {
		err_fail(err, -1, "--plot %s: %s", png, strerror(errno));
		return -1;
	}
	if (!out->tmp) { /* gnuplot writes to a temp path we rename: needs a regular file */
		pending_abort(out);
		err_fail(err, -1, "--plot %s: not a regular file", png);
		return -1;
	}
	if (out->f)
		fclose(out->f);
	out->f = NULL;
	const char *args[8];
	size_t n = 0;
	for (size_t i = 0; i < ndata; i++)
		args[n++] = data[i];
	args[n++] = out->tmp;
	for (size_t i = 0; i < ntitles; i++)
		args[n++] = titles[i];
	int rc = plot_render(script, args, n, out->tmp, png, err);
	if (!rc && later) { /* the caller renames it with its other outputs */
		if (out == &own)
			*later = own;
		return 0;
	}
	if (!rc && pending_publish(out)) {
		err_fail(err, -1, "--plot %s: %s", png, strerror(errno));
		rc = -1;
	}
	if (rc)
		pending_abort(out);
	return rc;
}

int plot_histogram(const struct dist *d, const char *title, const char *png, struct pending *later, struct dd_err *err)
{
	char data[] = "/tmp/dedisgen-plot.XXXXXX";
	if (write_histogram(d, data, err))
		return -1;
	const char *files[] = {data};
	int rc = render("dedisgen-histogram.gp", files, 1, &title, 1, png, later, err);
	unlink(data);
	return rc;
}

int plot_compare(const struct dist *a, const struct dist *b, const char *title_a, const char *title_b,
		 const char *caption, const char *png, struct dd_err *err)
{
	char da[] = "/tmp/dedisgen-plot.XXXXXX", db[] = "/tmp/dedisgen-plot.XXXXXX";
	if (write_histogram(a, da, err))
		return -1;
	if (write_histogram(b, db, err)) {
		unlink(da);
		return -1;
	}
	/* the caption in lines of about 135 characters, broken at spaces */
	char wrapped[512];
	snprintf(wrapped, sizeof wrapped, "%s", caption ? caption : "");
	size_t col = 0;
	char *space = NULL;
	for (char *p = wrapped; *p; p++, col++) {
		if (*p == ' ')
			space = p;
		if (col >= 135 && space) {
			*space = '\n';
			col = (size_t)(p - space);
			space = NULL;
		}
	}
	const char *files[] = {da, db}, *titles[] = {title_a, title_b, "dedisgen compare", wrapped};
	int rc = render("dedisgen-compare.gp", files, 2, titles, 4, png, NULL, err);
	unlink(da);
	unlink(db);
	return rc;
}
