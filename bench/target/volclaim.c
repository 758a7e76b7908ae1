/* volclaim.c - recognising an engine volume dedisbench wrote before overwriting or reading it: its
 * mark (write count and directory mtime), else every mapped block read back must be its own. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include "reference-engine/engine.h"
#include "bench/target/volclaim.h"

#define WINDOW (1u << 20) /* what claim_window takes: whole MiB windows of the volume */

/* The volume as it is now, in the words of the mark. The directory's mtime changes when a
 * volume is removed and formatted again there (counters restart, and may reach the same count);
 * the write count changes with every write by anyone (dedisengine import, another program). */
static void mark_text(const struct stat *dir, uint64_t writes, char *buf, size_t len)
{
	snprintf(buf, len, "dedisbench %s volume mtime=%lld.%09ld writes=%" PRIu64, PACKAGE_VERSION,
		 (long long)dir->st_mtim.tv_sec, dir->st_mtim.tv_nsec, writes);
}

/* Every block, a MiB at a time, through the engine (compressed ones come back as written). */
static enum claim_verdict scan_blocks(struct engine *e, int *err)
{
	uint32_t bs = engine_block_size(e);
	uint64_t total = engine_logical_blocks(e), per = bs >= WINDOW ? 1 : WINDOW / bs;
	uint8_t *buf = malloc((size_t)per * bs);
	if (!buf) {
		*err = ENOMEM;
		return CLAIM_UNREADABLE;
	}
	enum claim_verdict v = CLAIM_EMPTY;
	for (uint64_t lbn = 0; lbn < total && v != CLAIM_FOREIGN; lbn += per) {
		uint64_t n = total - lbn < per ? total - lbn : per;
		for (uint64_t i = 0; i < n; i++) {
			int rc = engine_read(e, lbn + i, buf + i * bs);
			if (rc) {
				*err = -rc;
				free(buf);
				return CLAIM_UNREADABLE;
			}
		}
		enum claim_verdict w = claim_window(buf, (size_t)(n * bs));
		if (w != CLAIM_EMPTY)
			v = w;
	}
	free(buf);
	return v;
}

enum claim_verdict volclaim_inspect(const char *dir, int dir_fd, const char **how, int *err)
{
	const char *dummy;
	if (!how)
		how = &dummy;
	*err = 0;
	struct stat st;
	char mark[160] = "", now[160];
	/* before the open: opening may make files in the directory (rebuilt caches) */
	if (fstat(dir_fd, &st)) {
		*err = errno;
		*how = "it cannot be read";
		return CLAIM_UNREADABLE;
	}
	ssize_t m = fgetxattr(dir_fd, CLAIM_XATTR, mark, sizeof mark - 1);
	mark[m > 0 ? m : 0] = 0;
	struct engine_open_params op = {.read_only = true};
	struct engine *e;
	struct dd_err why;
	int rc = engine_open(dir, &op, &e, &why);
	if (rc) {
		*err = -rc;
		*how = "it cannot be opened";
		return CLAIM_UNREADABLE;
	}
	struct engine_stats s;
	engine_stats(e, &s);
	mark_text(&st, s.logical_writes, now, sizeof now);
	enum claim_verdict v = s.mapped_blocks == 0 ? CLAIM_EMPTY : !strcmp(mark, now) ? CLAIM_OURS : scan_blocks(e, err);
	engine_close(e);
	*how = v == CLAIM_OURS && !strcmp(mark, now) ? "marked as dedisbench's (" CLAIM_XATTR ")"
	       : v == CLAIM_OURS		      ? "its blocks are dedisbench's"
	       : v == CLAIM_EMPTY		      ? "it holds no data"
	       : v == CLAIM_FOREIGN		      ? "it holds data dedisbench did not write"
						      : "it cannot be read";
	return v;
}

void volclaim_mark(const char *dir, int dir_fd)
{
	struct engine_open_params op = {.read_only = true};
	struct engine *e;
	struct dd_err why;
	char text[160];
	if (engine_open(dir, &op, &e, &why))
		return;
	struct engine_stats s;
	engine_stats(e, &s);
	engine_close(e);
	struct stat st;
	if (fstat(dir_fd, &st) == 0) {
		mark_text(&st, s.logical_writes, text, sizeof text);
		(void)fsetxattr(dir_fd, CLAIM_XATTR, text, strlen(text), 0); /* ENOTSUP: the blocks will tell */
	}
}
