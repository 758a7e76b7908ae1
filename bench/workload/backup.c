/* backup.c - the backup-generations workload: per stream an array of content ids per generation,
 * mutated segment by segment; each generation written sequentially by one process per stream,
 * then the cumulative ratios (expected from the ids, observed from the engine's counters). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench/workload/backup.h"
#include "lib/content.h"
#include "reference-engine/engine.h"
#include "lib/errmsg.h"
#include "lib/rng.h"
#include "bench/report/results.h"
#include "bench/worker.h"

bool backup_option_applies(const char *name)
{
	static const char *const ok[] = {"target", "procs", "file-size", "block-size", "seed", "workload", "generations",
					 "backup-rates", "compress", "sync", "ioengine", "keep", "force", "json", "quiet",
					 "config", "space-cmd", NULL};
	if (ioengine_option_owner(name))
		return true; /* --sqpoll...: the chosen engine's own (one write at a time: no --iodepth) */
	for (int i = 0; ok[i]; i++)
		if (!strcmp(ok[i], name))
			return true;
	return false;
}

int backup_parse_rates(const char *s, struct backup_rates *out)
{
	double v[3];
	char tail;
	if (sscanf(s, "%lf:%lf:%lf%c", &v[0], &v[1], &v[2], &tail) != 3)
		return -1;
	for (int i = 0; i < 3; i++)
		if (!(v[i] >= 0 && v[i] <= 100))
			return -1;
	*out = (struct backup_rates){v[0] / 100, v[1] / 100, v[2] / 100};
	return 0;
}

void backup_mutate(const uint64_t *prev, uint64_t *out, uint64_t n, const struct backup_rates *r, struct rng *rs,
		   uint64_t *next)
{
	uint64_t used = 0;
	/* deletions and additions, in stream order: kept segments keep their order (locality) */
	for (uint64_t s = 0; s < n && used < n; s += BACKUP_SEGMENT) {
		uint64_t len = n - s < BACKUP_SEGMENT ? n - s : BACKUP_SEGMENT;
		if (rng_double(rs) >= r->del)
			for (uint64_t k = 0; k < len && used < n; k++)
				out[used++] = prev[s + k];
		if (rng_double(rs) < r->add)
			for (uint64_t k = 0; k < BACKUP_SEGMENT && used < n; k++)
				out[used++] = (*next)++;
	}
	while (used < n) /* the generation keeps its size: what was deleted beyond what was added */
		out[used++] = (*next)++;
	/* moves: segments swapped with another at random */
	uint64_t nseg = (n + BACKUP_SEGMENT - 1) / BACKUP_SEGMENT, moves = (uint64_t)(r->move * (double)nseg / 2 + 0.5);
	for (uint64_t m = 0; m < moves && nseg > 1; m++) {
		uint64_t a = rng_below(rs, nseg - 1), b = rng_below(rs, nseg - 1); /* the last, partial one stays */
		for (uint64_t k = 0; k < BACKUP_SEGMENT; k++) {
			uint64_t t = out[a * BACKUP_SEGMENT + k];
			out[a * BACKUP_SEGMENT + k] = out[b * BACKUP_SEGMENT + k];
			out[b * BACKUP_SEGMENT + k] = t;
		}
	}
}

/* What the stream processes share with the parent. */
struct stream_shared {
	int error;
	char errmsg[400];
};

/* Write one stream's generation g: its ids, sequentially, in 64-block units. 0, or 1 (errmsg). */
static int write_generation(const struct backup_job *j, unsigned s, unsigned g, const uint64_t *ids,
			    struct stream_shared *sh)
{
	char path[PATH_MAX];
	uint64_t base;
	unsigned region = s * j->generations + g;
	target_worker_path(j->target, region, path, sizeof path, &base);
	struct content_gen gen;
	const uint32_t per = 64;
	void *buf = aligned_alloc(4096, (size_t)per * j->block_size);
	if (!buf || content_init(&gen, j->seed, j->block_size, j->compress)) {
		snprintf(sh->errmsg, sizeof sh->errmsg, "stream %u: out of memory", s);
		free(buf);
		return 1;
	}
	struct io_ctx io = {.path = path, .open_flags = j->open_flags | target_open_flags(j->target), .depth = 1,
			    .opts = j->engine_opts, .fd = -1};
	int rc = j->engine->open(&io);
	if (rc) {
		snprintf(sh->errmsg, sizeof sh->errmsg, "stream %u: cannot open %.300s: %s", s, path, strerror(-rc));
		free(buf);
		return 1;
	}
	if (io.fd >= 0 && target_check_opened(j->target, region, io.fd)) {
		snprintf(sh->errmsg, sizeof sh->errmsg, "target %.300s changed after it was checked", path);
		j->engine->close(&io);
		free(buf);
		return 1;
	}
	int status = 0;
	for (uint64_t b = 0; b < j->blocks && !*j->stop; b += per) {
		uint32_t n = j->blocks - b < per ? (uint32_t)(j->blocks - b) : per;
		for (uint32_t k = 0; k < n; k++)
			content_fill(&gen, ids[b + k], (char *)buf + (size_t)k * j->block_size);
		struct io_unit u = {.dir = IO_WRITE, .offset = base + b * j->block_size, .len = n * j->block_size,
				    .buf = buf, .block = b, .content_id = ids[b]};
		int failed = ioengine_run_one(j->engine, &io, &u);
		if (failed) {
			snprintf(sh->errmsg, sizeof sh->errmsg, "stream %u generation %u: write at offset %llu of %.300s: %s", s,
				 g + 1, (unsigned long long)u.offset, path, strerror(failed));
			status = 1;
			break;
		}
	}
	if (!status && io.fd >= 0 && fsync(io.fd) && errno != EINVAL) {
		snprintf(sh->errmsg, sizeof sh->errmsg, "stream %u: fsync of %.300s: %s", s, path, strerror(errno));
		status = 1;
	}
	int c = j->engine->close(&io);
	if (c && !status) {
		snprintf(sh->errmsg, sizeof sh->errmsg, "stream %u: closing %.300s: %s", s, path, strerror(-c));
		status = 1;
	}
	free(buf);
	return status;
}

/* Share of cur's blocks whose content prev has (both n ids; prev's sorted copy in tmp). */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static double shared_share(const uint64_t *prev, const uint64_t *cur, uint64_t n, uint64_t *tmp)
{
	memcpy(tmp, prev, n * sizeof *tmp);
	qsort(tmp, n, sizeof *tmp, cmp_u64);
	uint64_t hit = 0;
	for (uint64_t i = 0; i < n; i++)
		hit += bsearch(&cur[i], tmp, n, sizeof *tmp, cmp_u64) != NULL;
	return n ? (double)hit / (double)n : 0;
}

static void observe_target(const struct backup_job *j, struct backup_gen *bg)
{
	struct target_observation obs;
	if (target_observe(j->target, false, &obs, NULL))
		return;
	bg->have_observed = true;
	bg->observed_ratio = obs.stats.dedup_ratio;
	bg->observed_physical_bytes = obs.stats.physical_bytes;
}

/* What a backup run keeps from one generation to the next: each stream's contents (cur, prev),
 * its next fresh content and its RNG, and the stream processes' shared reports. */
struct backup_state {
	unsigned streams;
	uint64_t blocks;
	uint64_t *cur, *prev, *tmp, *next;
	struct rng *rs;
	struct stream_shared *sh;
	pid_t *pids;
};

static void state_free(struct backup_state *st)
{
	free(st->cur);
	free(st->prev);
	free(st->tmp);
	free(st->next);
	free(st->rs);
	free(st->pids);
	if (st->sh != MAP_FAILED)
		munmap(st->sh, st->streams * sizeof *st->sh);
}

/* Every stream's first generation: fresh contents of its own. 0, or -1 (out of memory). */
static int state_init(struct backup_state *st, const struct backup_job *j)
{
	unsigned S = st->streams = j->streams;
	uint64_t n = st->blocks = j->blocks;
	st->cur = calloc((size_t)S * n, sizeof *st->cur);
	st->prev = calloc((size_t)S * n, sizeof *st->prev);
	st->tmp = calloc(n, sizeof *st->tmp);
	st->next = calloc(S, sizeof *st->next);
	st->rs = calloc(S, sizeof *st->rs);
	st->sh = mmap(NULL, S * sizeof *st->sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	st->pids = calloc(S, sizeof *st->pids);
	if (!st->cur || !st->prev || !st->tmp || !st->next || !st->rs || st->sh == MAP_FAILED || !st->pids)
		return -1;
	for (unsigned s = 0; s < S; s++) {
		rng_split(&st->rs[s], j->seed, s);
		st->next[s] = 1 + ((uint64_t)s << CONTENT_WORKER_SHIFT); /* stream s's fresh contents, never another's */
		for (uint64_t b = 0; b < n; b++)
			st->cur[(size_t)s * n + b] = st->next[s]++;
	}
	return 0;
}

/* The next generation from the last: each stream's contents mutated, and the share it keeps. */
static void next_generation(const struct backup_job *j, struct backup_state *st, struct backup_gen *bg)
{
	uint64_t n = st->blocks;
	memcpy(st->prev, st->cur, (size_t)st->streams * n * sizeof *st->cur);
	double share = 0;
	for (unsigned s = 0; s < st->streams; s++) {
		backup_mutate(st->prev + (size_t)s * n, st->cur + (size_t)s * n, n, &j->rates, &st->rs[s], &st->next[s]);
		share += shared_share(st->prev + (size_t)s * n, st->cur + (size_t)s * n, n, st->tmp);
	}
	bg->shared_with_previous = share / st->streams;
}

/* Generation g written, one process per stream; a stream's failure in r. */
static void write_streams(const struct backup_job *j, struct backup_state *st, unsigned g, struct backup_result *r)
{
	memset(st->sh, 0, st->streams * sizeof *st->sh);
	fflush(NULL);
	unsigned started = 0;
	for (unsigned s = 0; s < st->streams; s++) {
		pid_t pid = fork();
		if (pid < 0) {
			r->failed = true;
			snprintf(r->failure, sizeof r->failure, "cannot start stream %u: %s", s, strerror(errno));
			break;
		}
		if (pid == 0)
			_exit(write_generation(j, s, g, st->cur + (size_t)s * st->blocks, &st->sh[s]));
		st->pids[started++] = pid;
	}
	for (unsigned s = 0; s < started; s++) {
		int status;
		while (waitpid(st->pids[s], &status, 0) < 0 && errno == EINTR)
			;
		if (!r->failed && (!WIFEXITED(status) || WEXITSTATUS(status))) {
			r->failed = true;
			snprintf(r->failure, sizeof r->failure, "%s",
				 st->sh[s].errmsg[0] ? st->sh[s].errmsg : "a stream process died");
		}
	}
}

/* A written generation's figures: its speed, the expected dedup ratio so far, and the space it
 * was observed to take (the target's own counters, or the space probe). 0, or -1 with r failed. */
static int account_generation(const struct backup_job *j, const struct backup_state *st, struct backup_gen *bg,
			      uint64_t g0, uint64_t *cum_logical, struct backup_result *r)
{
	uint64_t n = st->blocks;
	bg->seconds = (double)(now_ns() - g0) / 1e9;
	bg->logical_bytes = (uint64_t)st->streams * n * j->block_size;
	bg->mib_per_s = bg->seconds > 0 ? (double)bg->logical_bytes / 1048576.0 / bg->seconds : 0;
	*cum_logical += (uint64_t)st->streams * n;
	bg->cum_logical_blocks = *cum_logical;
	for (unsigned s = 0; s < st->streams; s++)
		bg->cum_distinct += st->next[s] - 1 - ((uint64_t)s << CONTENT_WORKER_SHIFT);
	bg->expected_ratio = (double)bg->cum_logical_blocks / (double)bg->cum_distinct;
	if (j->target->ops->observe && (!j->space || j->space->source == SPACE_ENGINE)) {
		observe_target(j, bg);
	} else if (j->space && j->space->source != SPACE_NONE) {
		struct space_reading now;
		struct dd_err err;
		if (space_probe_read(j->space, j->target, &now, &err)) {
			snprintf(r->failure, sizeof r->failure, "%s", err.msg);
			r->failed = true;
			return -1;
		}
		uint64_t used = now.used > j->space->before.used ? now.used - j->space->before.used : 0;
		bg->have_observed = used > 0;
		bg->observed_physical_bytes = used;
		bg->observed_ratio = used ? (double)(*cum_logical * j->block_size) / (double)used : 0;
	}
	return 0;
}

int backup_run(const struct backup_job *j, struct backup_result *r, struct dd_err *err)
{
	memset(r, 0, sizeof *r);
	struct backup_state st = {.sh = MAP_FAILED};
	r->gen = calloc(j->generations, sizeof *r->gen);
	if (!r->gen || state_init(&st, j)) {
		state_free(&st);
		return err_fail(err, -1, "out of memory for %u streams of %llu blocks", j->streams,
				(unsigned long long)j->blocks);
	}
	uint64_t cum_logical = 0, t0 = now_ns();
	for (unsigned g = 0; g < j->generations; g++) {
		if (*j->stop) {
			r->interrupted = true;
			break;
		}
		struct backup_gen *bg = &r->gen[g];
		if (g > 0)
			next_generation(j, &st, bg);
		uint64_t g0 = now_ns();
		write_streams(j, &st, g, r);
		if (r->failed)
			break;
		if (*j->stop) { /* the streams stopped early: this generation is incomplete */
			r->interrupted = true;
			break;
		}
		if (account_generation(j, &st, bg, g0, &cum_logical, r))
			break;
		r->done = g + 1;
	}
	r->seconds = (double)(now_ns() - t0) / 1e9;
	state_free(&st);
	return 0;
}

void backup_free(struct backup_result *r)
{
	free(r->gen);
	r->gen = NULL;
}

void backup_print(FILE *f, const struct backup_job *j, const struct bench_options *o, const struct backup_result *r)
{
	fprintf(f, "dedisbench backup: %u streams x %u generations of %llu blocks of %u B (rates add %.1f %%, delete "
		   "%.1f %%, move %.1f %% of segments; blocks compress about %u:1) on %s, seed %llu\n",
		j->streams, j->generations, (unsigned long long)j->blocks, j->block_size, 100 * j->rates.add,
		100 * j->rates.del, 100 * j->rates.move, j->compress, o->target, (unsigned long long)j->seed);
	if (r->interrupted)
		fprintf(f, "interrupted after %u generations\n", r->done);
	if (r->failed)
		fprintf(f, "FAILED: %s\n", r->failure);
	fprintf(f, "  gen   logical MiB   MiB/s   shared with previous   cumulative ratio expected   observed\n");
	for (unsigned g = 0; g < r->done; g++) {
		const struct backup_gen *bg = &r->gen[g];
		char obs[32] = "-";
		if (bg->have_observed)
			snprintf(obs, sizeof obs, "%.3f", bg->observed_ratio);
		fprintf(f, "  %3u %13.1f %7.1f %21.2f %% %26.3f %10s\n", g + 1, (double)bg->logical_bytes / 1048576,
			bg->mib_per_s, 100 * bg->shared_with_previous, bg->expected_ratio, obs);
	}
	fprintf(f, "elapsed %.3f s\n", r->seconds);
}

json_t *backup_json(const struct backup_job *j, const struct bench_options *o, const struct backup_result *r)
{
	json_t *doc = results_json_header(o, "backup", j->engine->name, r->failed, r->interrupted, r->failure);
	json_t *gens = json_array();
	for (unsigned g = 0; g < r->done; g++) {
		const struct backup_gen *bg = &r->gen[g];
		json_t *gj = json_pack("{s:i, s:I, s:I, s:I, s:f, s:f, s:f, s:f}", "generation", (int)g + 1, "logical_bytes",
				       (json_int_t)bg->logical_bytes, "cumulative_logical_blocks",
				       (json_int_t)bg->cum_logical_blocks, "cumulative_distinct_blocks",
				       (json_int_t)bg->cum_distinct, "expected_ratio", bg->expected_ratio,
				       "shared_with_previous", bg->shared_with_previous, "seconds", bg->seconds, "mib_per_s",
				       bg->mib_per_s);
		json_object_set_new(gj, "observed_ratio", bg->have_observed ? json_real(bg->observed_ratio) : json_null());
		if (bg->have_observed)
			json_object_set_new(gj, "observed_physical_bytes", json_integer((json_int_t)bg->observed_physical_bytes));
		json_array_append_new(gens, gj);
	}
	json_object_set_new(doc, "backup",
			    json_pack("{s:i, s:i, s:I, s:i, s:f, s:f, s:f, s:i, s:f, s:o}", "streams", (int)j->streams,
				      "generations", (int)j->generations, "blocks_per_generation", (json_int_t)j->blocks,
				      "segment_blocks", BACKUP_SEGMENT, "add", j->rates.add, "delete", j->rates.del, "move",
				      j->rates.move, "compress", (int)j->compress, "seconds", r->seconds, "per_generation",
				      gens));
	return doc;
}
