/* replay.c - replay a block trace onto a target through an I/O engine (any: each request is run
 * to completion): one request at a time, in trace order, content by MD5, paced by the timestamps. */
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "lib/content.h"
#include "lib/errmsg.h"
#include "bench/workload/rate.h"
#include "bench/workload/replay.h"
#include "lib/report.h"
#include "bench/report/results.h"
#include "bench/content/physical.h"
#include "bench/worker.h"

bool replay_option_applies(const char *name)
{
	static const char *const ok[] = {"target", "block-size", "seed", "trace", "speed", "sync", "ioengine", "keep",
					 "force", "json", "quiet", "config", NULL};
	if (ioengine_option_owner(name))
		return true; /* --sqpoll...: the chosen engine's own (one request at a time: no --iodepth) */
	for (int i = 0; ok[i]; i++)
		if (!strcmp(ok[i], name))
			return true;
	return false;
}

/* When a request recorded `since` ns after the first is due at `speed`: t0 plus the scaled span,
 * saturated (a span of 2^64 - 1 ns at --speed 1 is due in 584 years: a cast out of range wrapped
 * it to now, and the trace finished at once). */
static uint64_t due_at(uint64_t t0, uint64_t since, double speed)
{
	double d = (double)since / speed;
	if (!(d < 0x1p64))
		return UINT64_MAX;
	uint64_t span = (uint64_t)d;
	return span > UINT64_MAX - t0 ? UINT64_MAX : t0 + span;
}

/* The target opened for the replay (io), as checked: 0, or -1 with err. */
static int open_replay_target(const struct replay_job *j, struct io_ctx *io, char *path, size_t len, uint64_t *base,
			      struct dd_err *err)
{
	target_worker_path(j->target, 0, path, len, base);
	*io = (struct io_ctx){.path = path, .open_flags = j->open_flags | target_open_flags(j->target),
			      .read_only = j->target->no_writes, .fsync_each = j->fsync_each, .depth = 1, .opts = j->engine_opts, .fd = -1};
	int orc = j->engine->open(io);
	if (orc)
		return err_fail(err, -1, "cannot open %s: %s", path, strerror(-orc));
	if (io->fd >= 0 && target_check_opened(j->target, 0, io->fd)) {
		j->engine->close(io);
		return err_fail(err, -1, "target %s changed after it was checked; refusing to write it", path);
	}
	return 0;
}

/* A write request's blocks as the trace says: zeros, or the content of its id. */
static void fill_request(const struct trace *t, const struct trace_req *q, struct content_gen *gen, void *buf)
{
	for (uint32_t k = 0; k < q->nblocks; k++) {
		uint64_t id = t->ids[q->first_id + k];
		char *p = (char *)buf + (size_t)k * TRACE_BLOCK;
		if (id == TRACE_ZERO_ID)
			memset(p, 0, TRACE_BLOCK);
		else
			content_fill(gen, id, p);
	}
}

/* Every request issued when it is due, its latency counted from then; r->seconds: to the last. */
static void replay_requests(const struct replay_job *j, struct replay_result *r, struct io_ctx *io,
				const char *path, uint64_t base, struct content_gen *gen, void *buf)
{
	const struct trace *t = j->trace;
	/* Paced, latency counts from each request's due time: the timer's lateness in waking must not
	 * count too (the default 50 us slack and a plain sleep added 75 us to every request). */
	struct pacer pacer;
	pacer_init(&pacer);
	uint64_t t0 = now_ns(), last = t0, ts0 = t->req[0].ts_ns;
	for (size_t i = 0; i < t->n; i++) {
		const struct trace_req *q = &t->req[i];
		uint64_t due = t0;
		if (j->speed > 0) {
			due = due_at(t0, q->ts_ns - ts0, j->speed);
			while (!*j->stop && !pacer_sleep_until(&pacer, due))
				; /* a signal: stop if it asked to, else sleep on */
		}
		if (*j->stop) {
			r->interrupted = true;
			break;
		}
		uint64_t start = now_ns();
		if (j->speed <= 0)
			due = start; /* as fast as possible: latency from the issue */
		if (q->write)
			fill_request(t, q, gen, buf);
		struct io_unit u = {.dir = q->write ? IO_WRITE : IO_READ, .offset = base + q->block * TRACE_BLOCK,
				    .len = q->nblocks * TRACE_BLOCK, .buf = buf, .block = q->block,
				    .content_id = q->write ? t->ids[q->first_id] : 0, .due_ns = due};
		int failed = ioengine_run_one(j->engine, io, &u);
		if (failed) {
			r->failed = true;
			snprintf(r->failure, sizeof r->failure, "%s of %u bytes at offset %llu of %.300s (trace request %zu): %s",
				 q->write ? "write" : "read", u.len, (unsigned long long)u.offset, path, i + 1,
				 strerror(failed));
			break;
		}
		last = now_ns();
		int d = u.dir;
		hist_record(&r->lat[d], last - due);
		hist_record(&r->all, last - due);
		r->ops[d]++;
		r->bytes[d] += u.len;
		r->done++;
	}
	r->seconds = (double)(last - t0) / 1e9;
}

/* What the engine must store of the live contents (live: trace_live_contents'), by its packing
 * rule on an lz4 volume (physical_engine_block_bytes), a whole block each otherwise. 0, or -1. */
static int expected_engine_bytes(const struct replay_job *j, const uint8_t *live, uint64_t distinct, bool lz4,
				 uint64_t *bytes)
{
	*bytes = distinct * TRACE_BLOCK;
	if (!lz4)
		return 0;
	struct content_gen gen;
	int cap = LZ4_compressBound(TRACE_BLOCK);
	char *scratch = malloc((size_t)cap);
	void *buf = aligned_alloc(64, TRACE_BLOCK);
	int rc = -1;
	if (!scratch || !buf || content_init(&gen, j->seed, TRACE_BLOCK, 1))
		goto out;
	*bytes = 0;
	for (uint64_t id = 0; id < j->trace->distinct + 2; id++) {
		if (!live[id])
			continue;
		if (id == TRACE_ZERO_ID)
			memset(buf, 0, TRACE_BLOCK);
		else
			content_fill(&gen, id, buf);
		*bytes += physical_engine_block_bytes(buf, TRACE_BLOCK, scratch, cap);
	}
	rc = 0;
out:
	free(scratch);
	free(buf);
	return rc;
}

/* The end-to-end check a run of an engine volume gets (launcher.c's validate_engine), against
 * what the requests done leave: mapped blocks, distinct stored contents, stored bytes, a clean
 * fsck. Its verdict in r: failed when the check could not be made, mismatch when it fails. */
static void check_engine(const struct replay_job *j, struct replay_result *r)
{
	struct run_result *e = &r->engine;
	uint64_t mapped = 0, distinct = 0;
	uint8_t *live = trace_live_contents(j->trace, r->done, &mapped, &distinct);
	struct target_observation obs;
	struct dd_err err;
	r->have_engine = e->have_engine = true;
	e->expected_mapped = mapped;
	e->expected_distinct = distinct;
	if (!live)
		err_fail(&err, -1, "out of memory counting the live blocks");
	if (!live || target_observe(j->target, true, &obs, &err)) {
		snprintf(e->mismatch[e->nmismatch++], sizeof e->mismatch[0], "%.300s", err.msg);
		e->engine_unchecked = true;
	} else {
		e->observed = obs.stats;
		e->fsck_problems = obs.fsck_problems;
		e->engine_unchecked = obs.fsck_problems < 0 || obs.close_rc;
		if (e->engine_unchecked)
			snprintf(e->mismatch[e->nmismatch++], sizeof e->mismatch[0], "validating %.200s: %s: %s",
				 j->target->path, obs.fsck_problems < 0 ? "fsck" : "closing the volume",
				 strerror(obs.fsck_problems < 0 ? (int)-obs.fsck_problems : -obs.close_rc));
		bool physical_ok = expected_engine_bytes(j, live, distinct, !strcmp(obs.stats.compress, "lz4"),
							 &e->expected_physical_bytes) == 0;
		e->physical_deviation = e->expected_physical_bytes
						? (double)obs.stats.physical_bytes / (double)e->expected_physical_bytes - 1
						: (obs.stats.physical_bytes ? 1 : 0);
		physical_ok = physical_ok && e->physical_deviation <= ENGINE_PHYSICAL_TOLERANCE &&
			      e->physical_deviation >= -ENGINE_PHYSICAL_TOLERANCE;
		/* a volume this replay did not empty holds what came before: only fsck is checked */
		e->engine_holdings_unknown = !target_engine_emptied(j->target);
		e->engine_match = !e->engine_unchecked && e->fsck_problems == 0 &&
				  (e->engine_holdings_unknown || (obs.stats.mapped_blocks == mapped &&
								  obs.stats.referenced_blocks == distinct && physical_ok));
	}
	free(live);
	if (e->engine_unchecked) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "the engine volume could not be validated: %s",
			 e->mismatch[e->nmismatch - 1]);
	} else if (!e->engine_match) {
		r->mismatch = true;
		snprintf(r->failure, sizeof r->failure, "the engine does not hold what the replay wrote (the engine "
			 "line says what differs)");
	}
}

int replay_run(const struct replay_job *j, struct replay_result *r, struct dd_err *err)
{
	const struct trace *t = j->trace;
	memset(r, 0, sizeof *r);
	for (int d = 0; d < 2; d++)
		hist_init(&r->lat[d]);
	hist_init(&r->all);
	if (trace_live(t, &r->live_blocks, &r->live_distinct))
		return err_fail(err, -1, "out of memory counting the trace's live blocks");
	r->trace_seconds = (double)(t->req[t->n - 1].ts_ns - t->req[0].ts_ns) / 1e9;
	struct content_gen gen;
	if (content_init(&gen, j->seed, TRACE_BLOCK, 1))
		return err_fail(err, -1, "cannot set up the content generator");
	size_t buflen = (size_t)t->max_blocks * TRACE_BLOCK;
	void *buf = aligned_alloc(4096, buflen);
	if (!buf)
		return err_fail(err, -1, "out of memory for a %zu-byte request", buflen);
	char path[PATH_MAX];
	uint64_t base;
	struct io_ctx io;
	if (open_replay_target(j, &io, path, sizeof path, &base, err)) {
		free(buf);
		return -1;
	}
	int slack = j->speed > 0 ? prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL) : -1;
	if (slack > 0)
		(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	replay_requests(j, r, &io, path, base, &gen, buf);
	if (!r->failed && io.fd >= 0 && fsync(io.fd) && errno != EINVAL) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "fsync of %.300s: %s", path, strerror(errno));
	}
	int crc = j->engine->close(&io); /* the engine's volume is flushed here */
	if (crc && !r->failed) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "closing %.300s: %s", path, strerror(-crc));
	}
	if (slack > 0)
		(void)prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
	free(buf);
	if (!r->failed && j->target->ops->observe)
		check_engine(j, r);
	return 0;
}

static double per_s(uint64_t n, double s) { return s > 0 ? (double)n / s : 0; }

static void print_dir(FILE *f, const char *label, uint64_t ops, uint64_t bytes, const struct histogram *h, double s)
{
	fprintf(f, "  %-8s %12llu ops %10.1f IOPS %9.2f MiB/s  lat us: mean %.1f p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f\n",
		label, (unsigned long long)ops, per_s(ops, s), per_s(bytes, s) / 1048576.0, hist_mean(h) / 1e3,
		(double)hist_percentile(h, 50) / 1e3, (double)hist_percentile(h, 90) / 1e3,
		(double)hist_percentile(h, 99) / 1e3, (double)hist_percentile(h, 99.9) / 1e3, (double)h->max / 1e3);
}

void replay_print(FILE *f, const struct replay_job *j, const struct bench_options *o, const struct replay_result *r)
{
	const struct trace *t = j->trace;
	char speed[64];
	if (j->speed > 0)
		snprintf(speed, sizeof speed, "recorded timing x%g", j->speed);
	else
		snprintf(speed, sizeof speed, "as fast as possible");
	fprintf(f, "dedisbench replay: %s, %zu requests (%llu reads, %llu writes), %llu distinct MD5s, %.3f s recorded; "
		   "onto %s, %s, seed %llu\n",
		j->trace_path, t->n, (unsigned long long)t->reads, (unsigned long long)t->writes,
		(unsigned long long)t->distinct, r->trace_seconds, o->target, speed, (unsigned long long)j->seed);
	if (r->interrupted)
		fprintf(f, "interrupted: results cover the %llu requests that ran\n", (unsigned long long)r->done);
	if (r->failed)
		fprintf(f, "FAILED: %s\n", r->failure);
	fprintf(f, "elapsed %.3f s\n", r->seconds);
	if (r->ops[IO_READ])
		print_dir(f, "reads", r->ops[IO_READ], r->bytes[IO_READ], &r->lat[IO_READ], r->seconds);
	if (r->ops[IO_WRITE])
		print_dir(f, "writes", r->ops[IO_WRITE], r->bytes[IO_WRITE], &r->lat[IO_WRITE], r->seconds);
	print_dir(f, "total", r->done, r->bytes[0] + r->bytes[1], &r->all, r->seconds);
	fprintf(f, "live: %llu blocks written, %llu distinct contents (dedup ratio %.3f), as the trace leaves them\n",
		(unsigned long long)r->live_blocks, (unsigned long long)r->live_distinct,
		r->live_distinct ? (double)r->live_blocks / (double)r->live_distinct : 0);
	if (r->have_engine)
		results_print_engine(f, &r->engine);
}

static json_t *dir_json(uint64_t ops, uint64_t bytes, const struct histogram *h, double s)
{
	return json_pack("{s:I, s:I, s:f, s:f, s:f, s:o}", "ops", (json_int_t)ops, "bytes", (json_int_t)bytes, "seconds", s,
			 "iops", per_s(ops, s), "mib_per_s", per_s(bytes, s) / 1048576.0, "latency_us", report_latency(h));
}

json_t *replay_json(const struct replay_job *j, const struct bench_options *o, const struct replay_result *r)
{
	const struct trace *t = j->trace;
	json_t *doc = results_json_header(o, "replay", j->engine->name, r->failed, r->interrupted, r->failure);
	json_object_set_new(doc, "trace",
			    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I}", "path", j->trace_path, "requests",
				      (json_int_t)t->n, "reads", (json_int_t)t->reads, "writes", (json_int_t)t->writes,
				      "read_blocks", (json_int_t)t->read_blocks, "write_blocks", (json_int_t)t->write_blocks,
				      "distinct_md5", (json_int_t)t->distinct, "seconds", r->trace_seconds, "live_blocks",
				      (json_int_t)r->live_blocks, "live_distinct", (json_int_t)r->live_distinct));
	json_object_set_new(doc, "replay",
			    json_pack("{s:f, s:I, s:b}", "speed", j->speed, "requests_done", (json_int_t)r->done,
				      "as_fast_as_possible", j->speed <= 0));
	json_object_set_new(doc, "totals", dir_json(r->done, r->bytes[0] + r->bytes[1], &r->all, r->seconds));
	json_object_set_new(doc, "reads", dir_json(r->ops[IO_READ], r->bytes[IO_READ], &r->lat[IO_READ], r->seconds));
	json_object_set_new(doc, "writes", dir_json(r->ops[IO_WRITE], r->bytes[IO_WRITE], &r->lat[IO_WRITE], r->seconds));
	if (r->have_engine)
		json_object_set_new(doc, "engine", results_engine_json(&r->engine));
	if (r->mismatch) {
		json_object_set_new(doc, "status", json_string(run_status_names[RUN_MISMATCH]));
		json_object_set_new(doc, "error", json_string(r->failure));
	}
	return doc;
}
