/* spacecheck.c - read a target's used space (statfs and allocated blocks, zram mm_stat, the engine's
 * counters, or a user command) before and after a run, and judge it against physical.c's ideal. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "bench/report/results.h"
#include "bench/report/spacecheck.h"

const char *const space_source_names[] = {"none", "statfs", "zram", "engine", "command", NULL};

int space_parse_mm_stat(const char *text, struct zram_mm_stat *out)
{
	/* orig_data_size compr_data_size mem_used_total mem_limit mem_used_max same_pages ... */
	uint64_t v[6];
	if (sscanf(text, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5]) != 6)
		return -1;
	*out = (struct zram_mm_stat){v[0], v[1], v[2], v[5]};
	return 0;
}

int space_parse_bytes(const char *text, uint64_t *out)
{
	while (*text == ' ' || *text == '\t')
		text++;
	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || (*end && *end != '\n' && *end != ' ' && *end != '\t'))
		return -1;
	*out = v;
	return 0;
}

/* The source of each way a target's space is read (target.h). */
static enum space_source source_of_space(enum target_space how)
{
	switch (how) {
	case TARGET_SPACE_STATFS:
		return SPACE_STATFS;
	case TARGET_SPACE_ZRAM:
		return SPACE_ZRAM;
	case TARGET_SPACE_SELF:
		return SPACE_ENGINE;
	default:
		return SPACE_NONE;
	}
}

enum space_source space_source_of(const struct target *t, const char *cmd)
{
	char path[PATH_MAX];
	return cmd ? SPACE_COMMAND : source_of_space(target_space_of(t, path, sizeof path));
}

static int read_zram(const char *path, struct space_reading *out, struct dd_err *err)
{
	char text[512];
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = 0;
	if (!f || space_parse_mm_stat(text, &out->zram)) {
		return err_fail(err, -1, "cannot read zram's %s: %s", path, f ? "not in the mm_stat format" : strerror(errno));
	}
	out->used = out->zram.mem_used_total;
	return 0;
}

/* Run the command with sh -c; its first output line must start with a byte count. */
static int read_command(const char *cmd, struct space_reading *out, struct dd_err *err)
{
	fflush(NULL);
	FILE *f = popen(cmd, "re");
	if (!f) {
		return err_fail_errno(err, -1, errno, "--space-cmd '%.200s': cannot run it", cmd);
	}
	char line[256] = "";
	if (!fgets(line, sizeof line, f))
		line[0] = 0;
	char rest[4096];
	while (fread(rest, 1, sizeof rest, f) > 0) /* read to the end: the command never blocks on a full pipe */
		;
	int status = pclose(f);
	line[strcspn(line, "\n")] = 0;
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		return err_fail(err, -1, "--space-cmd '%.200s': exited with status %d", cmd,
				status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	if (space_parse_bytes(line, &out->used)) {
		return err_fail(err, -1, "--space-cmd '%.200s': printed '%.60s', not a byte count first on its first line",
				cmd, line);
	}
	return 0;
}

/* The worker files' allocated bytes (st_blocks); files not there yet count nothing. */
static uint64_t allocated_bytes(const struct target *t)
{
	uint64_t sum = 0;
	for (unsigned w = 0; w < target_file_count(t); w++) {
		char path[PATH_MAX];
		uint64_t base;
		struct stat st;
		target_worker_path(t, w, path, sizeof path, &base);
		if (!lstat(path, &st) && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_blocks * 512;
	}
	return sum;
}

static int read_statfs(const struct target *t, const char *path, struct space_reading *out, struct dd_err *err)
{
	struct statvfs sv;
	if (statvfs(path, &sv)) {
		return err_fail_errno(err, -1, errno, "cannot statfs %s", path);
	}
	out->used = (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
	out->allocated = allocated_bytes(t);
	return 0;
}

static int read_source(const struct target *t, const struct space_probe *p, struct space_reading *out, struct dd_err *err)
{
	memset(out, 0, sizeof *out);
	switch (p->source) {
	case SPACE_STATFS:
		return read_statfs(t, p->path, out, err);
	case SPACE_ZRAM:
		return read_zram(p->path, out, err);
	case SPACE_COMMAND:
		return read_command(p->cmd, out, err);
	default:
		return 0; /* the engine's counters are read when the launcher validates the volume */
	}
}

int space_probe_init(struct space_probe *p, const struct target *t, const char *cmd, struct dd_err *err)
{
	memset(p, 0, sizeof *p);
	p->cmd = cmd;
	p->source = cmd ? SPACE_COMMAND : source_of_space(target_space_of(t, p->path, sizeof p->path));
	if (cmd)
		snprintf(p->path, sizeof p->path, "%s", t->path);
	return read_source(t, p, &p->before, err);
}

int space_begin(const struct bench_config *c, struct space_probe *p, struct dd_err *err)
{
	return space_probe_init(p, &c->target, c->o.space_cmd, err);
}

int space_probe_read(const struct space_probe *p, const struct target *t, struct space_reading *out, struct dd_err *err)
{
	target_flush(t); /* written data reaches the device before the second reading */
	return read_source(t, p, out, err);
}

int space_end(const struct bench_config *c, struct space_probe *p, struct run_result *r, struct dd_err *err)
{
	struct space_report *s = &r->space;
	memset(s, 0, sizeof *s);
	if (p->source == SPACE_NONE || !r->have_live)
		return 0;
	uint64_t bs = c->o.block_size;
	if (p->source == SPACE_ENGINE && !r->have_engine)
		return 0;
	/* A difference of two readings is the run's data only on a target that started empty: not
	 * where an earlier run's data stays (its ledger kept, worker files reused). The engine's
	 * counters are absolute, and its expectation covers all the live data. */
	if (p->source != SPACE_ENGINE &&
	    (c->ledger_map.existed || target_holds_earlier_data(&c->target)))
		return 0;
	/* Nothing written (a read run on an empty target): no data to judge a system's keeping of;
	 * an efficiency of 0 would read as the worst system, not as no figure. */
	if (!r->live_rows.total_blocks)
		return 0;
	if (space_probe_read(p, &c->target, &s->after, err))
		return -1;
	s->before = p->before;
	s->source = p->source;
	s->logical_bytes = r->live_rows.total_blocks * bs;
	if (p->source == SPACE_ENGINE) {
		/* the engine's packing rule is known exactly: the ideal is what it must store */
		s->observed_bytes = r->observed.physical_bytes;
		s->after.used = r->observed.physical_bytes; /* a volume this run formatted started at 0 */
		s->expected_bytes = r->expected_physical_bytes;
		s->basis = "engine";
		snprintf(s->detail, sizeof s->detail, "engine volume %.3000s (compression %s)", c->target.path,
			 r->observed.compress);
	} else {
		s->observed_bytes = s->after.used > s->before.used ? s->after.used - s->before.used : 0;
		bool compressible = c->model || c->content_compress > 1;
		if (compressible && r->have_physical) {
			s->expected_bytes = (uint64_t)(r->physical.zstd_bytes + 0.5);
			s->basis = "dedup+zstd-1";
		} else {
			s->expected_bytes = (r->have_physical ? r->physical.distinct : r->live_rows.distinct) * bs;
			s->basis = "dedup";
		}
		if (p->source == SPACE_COMMAND)
			snprintf(s->detail, sizeof s->detail, "command: %.3000s", p->cmd);
		else if (p->source == SPACE_ZRAM)
			snprintf(s->detail, sizeof s->detail, "%.200s (%.200s)", c->target.path, p->path);
		else
			snprintf(s->detail, sizeof s->detail, "file system of %.3000s", c->target.path);
	}
	s->efficiency = s->observed_bytes ? (double)s->expected_bytes / (double)s->observed_bytes : 0;
	s->have = true;
	return 0;
}
