/* output.c - dedisgen's writes: temp-then-rename outputs, the distribution header, and the
 * histogram plot (data file + gnuplot -c plots/dedisgen-histogram.gp, run with posix_spawn). */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "distcmp.h"
#include "output.h"

extern char **environ;

int pending_open(struct pending *p, const char *path)
{
	memset(p, 0, sizeof *p);
	size_t len = strlen(path) + 32;
	if (!(p->path = strdup(path)) || !(p->tmp = malloc(len))) {
		free(p->path);
		p->path = NULL;
		errno = ENOMEM;
		return -1;
	}
	snprintf(p->tmp, len, "%s.tmp.%ld", path, (long)getpid());
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		pending_abort(p);
		errno = EISDIR;
		return -1;
	}
	/* An existing non-regular file (/dev/null, a FIFO) is written in place: renaming a temp
	 * file over it would replace the device node with a regular file. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		free(p->tmp);
		p->tmp = NULL;
		if ((p->f = fopen(path, "w")))
			return 0;
		int e = errno;
		free(p->path);
		memset(p, 0, sizeof *p);
		errno = e;
		return -1;
	}
	if (!(p->f = fopen(p->tmp, "wx"))) {
		int e = errno;
		free(p->tmp);
		free(p->path);
		memset(p, 0, sizeof *p);
		errno = e;
		return -1;
	}
	return 0;
}

int pending_commit(struct pending *p)
{
	int rc = 0;
	if (fflush(p->f) || ferror(p->f) || (p->tmp && fsync(fileno(p->f))))
		rc = -1;
	if (fclose(p->f))
		rc = -1;
	p->f = NULL;
	if (!rc && p->tmp && rename(p->tmp, p->path))
		rc = -1;
	int e = errno;
	if (rc && p->tmp)
		unlink(p->tmp);
	free(p->tmp);
	free(p->path);
	p->tmp = p->path = NULL;
	errno = e;
	return rc;
}

void pending_abort(struct pending *p)
{
	if (p->f)
		fclose(p->f);
	if (p->tmp)
		unlink(p->tmp);
	free(p->tmp);
	free(p->path);
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

static const char *script_path(char *buf, size_t len)
{
	const char *env = getenv("DEDIS_PLOTS_DIR");
	const char *dirs[] = {env, DEDIS_SRCDIR "/plots", DEDIS_DATADIR "/plots"};
	for (size_t i = 0; i < 3; i++) {
		if (!dirs[i])
			continue;
		snprintf(buf, len, "%s/dedisgen-histogram.gp", dirs[i]);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

bool plot_available(void)
{
	const char *path = getenv("PATH");
	char buf[4096], sb[4096];
	if (!script_path(sb, sizeof sb))
		return false;
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)n, path);
		if (access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

int plot_histogram(const struct dist *d, const char *title, const char *png, char *why, size_t whylen)
{
	char script[4096], data[] = "/tmp/dedisgen-plot.XXXXXX";
	struct dist_pow2 h;
	struct pending out;
	int rc = -1, fd, status;
	pid_t pid;

	if (!script_path(script, sizeof script)) {
		snprintf(why, whylen, "--plot: plots/dedisgen-histogram.gp not found (set DEDIS_PLOTS_DIR)");
		return -1;
	}
	if (pending_open(&out, png)) {
		snprintf(why, whylen, "--plot %s: %s", png, strerror(errno));
		return -1;
	}
	if (!out.tmp) { /* gnuplot writes the PNG to a temp path and we rename it: needs a regular file */
		pending_abort(&out);
		snprintf(why, whylen, "--plot %s: not a regular file", png);
		return -1;
	}
	fclose(out.f);
	out.f = NULL;
	if ((fd = mkstemp(data)) < 0) {
		snprintf(why, whylen, "--plot: temp file: %s", strerror(errno));
		pending_abort(&out);
		return -1;
	}
	FILE *f = fdopen(fd, "w");
	dist_pow2_histogram(d, &h);
	fprintf(f, "# copies_low copies_high share_of_blocks contents\n");
	for (int k = 0; k <= h.top; k++)
		if (h.blocks[k])
			fprintf(f, "%.0f %.0f %.9g %" PRIu64 "\n", ldexp(1, k), ldexp(1, k + 1) - 1, h.share[k], h.contents[k]);
	if (fclose(f)) {
		snprintf(why, whylen, "--plot: writing the data: %s", strerror(errno));
		goto out;
	}
	char *argv[] = {"gnuplot", "-c", script, data, out.tmp, (char *)title, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e) {
		snprintf(why, whylen, "--plot: cannot run gnuplot: %s", strerror(e));
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, whylen, "--plot: gnuplot failed (status %d)", status);
		goto out;
	}
	if (rename(out.tmp, out.path)) {
		snprintf(why, whylen, "--plot %s: %s", png, strerror(errno));
		goto out;
	}
	free(out.tmp);
	out.tmp = NULL;
	rc = 0;
out:
	unlink(data);
	pending_abort(&out);
	return rc;
}
