/* spacecheck.c - read a target's used space (statfs and allocated blocks, zram mm_stat, the engine's
 * counters, or a user command) before and after a run, and judge it against physical.c's ideal
 * of the store kind that fits the target (per block, per 128 KiB record on btrfs, or as chosen). */
#include <errno.h>
#include <limits.h>
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

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape_mount_field(char *s)
{
	char *out = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = 0;
}

/* Is mount point m path itself or a directory above it? */
static bool mount_holds(const char *m, const char *path)
{
	size_t n = strlen(m);
	if (!strcmp(m, "/"))
		return path[0] == '/';
	return !strncmp(m, path, n) && (path[n] == 0 || path[n] == '/');
}

int space_parse_mountinfo(const char *text, const char *path, char *fstype, size_t typelen, char *options,
			  size_t optlen)
{
	size_t best = 0;
	bool found = false;
	while (*text) {
		size_t len = strcspn(text, "\n");
		char line[4096], *save = NULL, *field[16] = {0};
		snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), text);
		text += len + (text[len] == '\n');
		/* id parent major:minor root mountpoint mountopts [optional...] - fstype source superopts */
		unsigned n = 0, dash = 0;
		for (char *tok = strtok_r(line, " ", &save); tok && n < 16; tok = strtok_r(NULL, " ", &save)) {
			if (!dash && n >= 6 && !strcmp(tok, "-"))
				dash = n;
			field[n++] = tok;
		}
		if (!dash || n < dash + 4)
			continue;
		unescape_mount_field(field[4]);
		size_t mlen = strlen(field[4]);
		if (!mount_holds(field[4], path) || (found && mlen < best))
			continue;
		found = true;
		best = mlen;
		snprintf(fstype, typelen, "%s", field[dash + 1]);
		snprintf(options, optlen, "%s,%s", field[5], field[dash + 3]);
	}
	return found ? 0 : -1;
}

void space_forced_compression(const char *options, char *out, size_t len)
{
	const char *key = "compress-force=";
	out[0] = 0;
	for (const char *o = options; o && *o; o = strchr(o, ',') ? strchr(o, ',') + 1 : NULL)
		if (!strncmp(o, key, strlen(key)))
			snprintf(out, len, "%.*s", (int)strcspn(o + strlen(key), ","), o + strlen(key));
}

/* The file system holding a statfs target, from /proc/self/mountinfo ("" when unknown). */
static void learn_file_system(struct space_probe *p)
{
	enum { MOUNTINFO_MAX = 1 << 20 }; /* a container host's table fits many times over */
	char resolved[PATH_MAX];
	p->fstype[0] = p->fsoptions[0] = 0;
	char *text = realpath(p->path, resolved) ? malloc(MOUNTINFO_MAX) : NULL;
	FILE *f = text ? fopen("/proc/self/mountinfo", "re") : NULL;
	if (f) {
		size_t n = fread(text, 1, MOUNTINFO_MAX - 1, f);
		fclose(f);
		text[n] = 0;
		if (space_parse_mountinfo(text, resolved, p->fstype, sizeof p->fstype, p->fsoptions, sizeof p->fsoptions))
			p->fstype[0] = p->fsoptions[0] = 0;
	}
	free(text);
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
	if (p->source == SPACE_STATFS)
		learn_file_system(p);
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

/* The per-block ideal: each distinct content once, compressed alone with zstd -1 when the content
 * is compressible. */
static void expect_block(const struct bench_config *c, const struct run_result *r, struct space_report *s)
{
	bool compressible = c->model || c->content_compress > 1;
	s->model = "block";
	if (compressible && r->have_physical) {
		s->expected_bytes = (uint64_t)(r->physical.zstd_bytes + 0.5);
		s->basis = "dedup+zstd-1";
	} else {
		s->expected_bytes = (r->have_physical ? r->physical.distinct : r->live_rows.distinct) * c->o.block_size;
		s->basis = "dedup";
	}
}

/* The record ideal (compress: a zstd-3 store): false, with the reason, when its figures are not known. */
static bool expect_record(const struct run_result *r, bool compress, struct space_report *s)
{
	const struct record_estimate *rec = &r->physical.record;
	size_t n = strlen(s->model_reason);
	if (!r->have_physical || !rec->have) {
		snprintf(s->model_reason + n, sizeof s->model_reason - n, "; no record figures (block size): per block");
		return false;
	}
	if (compress && !rec->have_zstd3) {
		snprintf(s->model_reason + n, sizeof s->model_reason - n, "; zstd-3 of records unknown (%.80s): per block",
			 rec->why_no_zstd3);
		return false;
	}
	s->model = "record";
	s->basis = compress ? "record-dedup+zstd-3" : "record-dedup";
	s->expected_bytes = (uint64_t)((compress ? rec->dedup_alloc_bytes : rec->distinct * PHYSICAL_RECORD) + 0.5);
	return true;
}

/* The content-defined chunk ideal: false, with the reason, when the distribution has no [cdc 1]. */
static bool expect_cdc(const struct run_result *r, bool compress, struct space_report *s)
{
	const struct cdc_estimate *cdc = &r->physical.cdc;
	size_t n = strlen(s->model_reason);
	if (!r->have_physical || !cdc->have) {
		snprintf(s->model_reason + n, sizeof s->model_reason - n, "; %.80s: per block",
			 r->have_physical ? cdc->why_not : "no physical estimate");
		return false;
	}
	s->model = "cdc";
	bool lz4 = compress && cdc->have_lz4;
	s->basis = lz4 ? "cdc-dedup+lz4" : "cdc-dedup";
	s->expected_bytes = (uint64_t)((lz4 ? cdc->lz4_bytes : cdc->dedup_bytes) + 0.5);
	return true;
}

/* Which ideal fits: --space-model, else btrfs's 128 KiB extents (zstd-3 when compress-force=zstd),
 * else a per-block store; a kind whose figures are not known falls back to per block, saying so. */
static void expect_by_model(const struct bench_config *c, const struct space_probe *p, const struct run_result *r,
			    struct space_report *s)
{
	bool compressible = c->model || c->content_compress > 1;
	int model = c->o.space_model;
	bool compress = compressible;
	if (model != SPACE_MODEL_AUTO) {
		snprintf(s->model_reason, sizeof s->model_reason, "--space-model %s", space_model_names[model]);
	} else if (p->source == SPACE_STATFS && !strcmp(p->fstype, "btrfs")) {
		char forced[32];
		space_forced_compression(p->fsoptions, forced, sizeof forced);
		model = SPACE_MODEL_RECORD;
		compress = compressible && !strncmp(forced, "zstd", 4);
		snprintf(s->model_reason, sizeof s->model_reason, "btrfs, compress-force=%s: 128 KiB extents%s",
			 forced[0] ? forced : "(none)", compress || !compressible ? "" : ", stored uncompressed");
	} else {
		snprintf(s->model_reason, sizeof s->model_reason, "%s: per block",
			 p->source == SPACE_STATFS && p->fstype[0] ? p->fstype : "the default");
	}
	if ((model == SPACE_MODEL_RECORD && expect_record(r, compress, s)) ||
	    (model == SPACE_MODEL_CDC && expect_cdc(r, compress, s)))
		return;
	expect_block(c, r, s);
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
		s->model = "engine";
		snprintf(s->model_reason, sizeof s->model_reason, "the engine's packing rule is known exactly");
		snprintf(s->detail, sizeof s->detail, "engine volume %.3000s (compression %s)", c->target.path,
			 r->observed.compress);
	} else {
		s->observed_bytes = s->after.used > s->before.used ? s->after.used - s->before.used : 0;
		expect_by_model(c, p, r, s);
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
