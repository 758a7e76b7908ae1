/* worker.c - the operation loop of one worker: decide (direction, due time, block, content),
 * queue through the engine, account completions; open loop in nominal mode, closed in peak. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "bench/workload/access.h"
#include "lib/content.h"
#include "bench/content/dupgen.h"
#include "bench/workload/rate.h"
#include "lib/safefile.h"
#include "bench/report/tally.h"
#include "bench/content/verify.h"
#include "bench/worker.h"

/* Per-worker stream numbers: each purpose has its own stream so changing one knob (say the
 * read share) does not reshuffle the offsets or the contents. */
enum { STREAM_ACCESS, STREAM_CONTENT, STREAM_MIX, STREAM_POPULATE, STREAMS };

struct wctx {
	const struct bench_config *cfg;
	struct worker_shared *ws;
	struct run_shared *sh;
	unsigned index;
	struct io_ctx io;
	const char *shown;          /* the target's file as messages name it (io.path but for an engine
	                             * volume, opened through the directory held since probe) */
	const struct ioengine_ops *eng;
	struct io_unit *units;
	struct io_unit **free_units;
	unsigned nfree;
	uint64_t base;          /* byte offset of the region */
	struct rng r_access, r_content, r_mix;
	struct access_gen access;
	struct dupgen dup;
	struct content_gen content;
	struct schedule sched[2];   /* [0] all ops or reads, [1] writes when rates are separate */
	struct pacer pacer;         /* nominal: waits for the next op's due time */
	bool split_rates;
	uint64_t quota, issued;
	uint64_t deadline;
	uint32_t *access_counts;
	struct ledger ledger;       /* when cfg->ledger: what each block should hold */
	struct dupgen verify_dup;   /* UNKNOWN_LAYOUT: the earlier run's first writes */
	uint64_t slot_next;         /* scaled, write-order slots: the next first write's slot */
	struct id_counts ids;
	FILE *latlog;
};

static void on_wake(int sig) { (void)sig; }

static bool stopping(const struct wctx *w)
{
	return __atomic_load_n(&w->sh->stop, __ATOMIC_RELAXED) != 0;
}

/* The worker's first failure, "worker N: <what fmt says>: <err>", and the run stopped. */
static void record_failure_said(struct wctx *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void record_failure_said(struct wctx *w, int err, const char *fmt, ...)
{
	/* A call the launcher's stop signal interrupted (SIGUSR1 has no SA_RESTART, to cut sleeps
	 * short) is the run being stopped, not a failure. */
	if (w->ws->error || (err == EINTR && stopping(w)))
		return;
	w->ws->error = err;
	char *m = w->ws->errmsg;
	size_t cap = sizeof w->ws->errmsg, n;
	n = (size_t)snprintf(m, cap, "worker %llu: ", (unsigned long long)config_worker_number(w->cfg, w->index));
	va_list ap;
	va_start(ap, fmt);
	n += n < cap ? (size_t)vsnprintf(m + n, cap - n, fmt, ap) : 0;
	va_end(ap);
	if (n < cap)
		snprintf(m + n, cap - n, ": %s", strerror(err));
	__atomic_store_n(&w->sh->stop, 1, __ATOMIC_RELAXED);
}

/* A failure on the target: what, at offset (UINT64_MAX: not at an offset, a flush), of its file. */
static void record_failure(struct wctx *w, int err, const char *what, uint64_t offset)
{
	const char *path = w->shown ? w->shown : "null";
	if (offset == UINT64_MAX)
		record_failure_said(w, err, "%s of %s", what, path);
	else
		record_failure_said(w, err, "%s at offset %llu of %s", what, (unsigned long long)offset, path);
}

static void *alloc_aligned(size_t len)
{
	void *p = NULL;
	return posix_memalign(&p, 4096, len) ? NULL : p;
}

/* --latency-log: the worker's own CSV in the held output directory, a fresh file (never a link
 * or an old file written through). 0 or an errno. */
static int open_latency_log(struct wctx *w)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/latency.%llu.csv", config_output_at(w->cfg, OUT_DIR),
		 (unsigned long long)config_worker_number(w->cfg, w->index));
	int fd = safefile_fresh(path);
	w->latlog = fd < 0 ? NULL : fdopen(fd, "w");
	if (!w->latlog) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return e;
	}
	setvbuf(w->latlog, NULL, _IOFBF, 1 << 20);
	fputs("issue_us,dir,offset,latency_ns\n", w->latlog);
	return 0;
}

static int setup(struct wctx *w)
{
	const struct bench_config *c = w->cfg;
	uint64_t seed = c->seed, number = config_worker_number(c, w->index);
	rng_split(&w->r_access, seed, number * STREAMS + STREAM_ACCESS);
	rng_split(&w->r_content, seed, number * STREAMS + STREAM_CONTENT);
	rng_split(&w->r_mix, seed, number * STREAMS + STREAM_MIX);
	access_init(&w->access, c->o.access, c->region_blocks, c->nurand_a, c->nurand_c);
	if (c->scaled)
		dupgen_init_scaled(&w->dup, &c->layout, number);
	else
		dupgen_init(&w->dup, &c->dup, number);
	w->slot_next = c->scale_by_block ? 0 : config_worker_slot0(c, w->index);
	if (config_content_init(c, &w->content, seed))
		return EINVAL;
	w->quota = c->total_ops ? config_worker_ops(c, w->index) : UINT64_MAX;

	unsigned depth = (unsigned)c->o.iodepth;
	w->units = calloc(depth, sizeof *w->units);
	w->free_units = calloc(depth, sizeof *w->free_units);
	if (!w->units || !w->free_units)
		return ENOMEM;
	for (unsigned i = 0; i < depth; i++) {
		w->units[i].buf = alloc_aligned(c->o.block_size);
		if (!w->units[i].buf)
			return ENOMEM;
		w->units[i].index = i;
		w->units[i].len = (uint32_t)c->o.block_size;
		w->free_units[w->nfree++] = &w->units[i];
	}
	size_t counts_len = c->region_blocks * sizeof *w->access_counts;
	w->access_counts = mmap(NULL, counts_len ? counts_len : 1, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (w->access_counts == MAP_FAILED) {
		w->access_counts = NULL;
		return ENOMEM;
	}
	/* Random access over a large counter array: huge pages save a TLB miss per operation. */
	madvise(w->access_counts, counts_len ? counts_len : 1, MADV_HUGEPAGE);
	if (idc_init(&w->ids, 4096))
		return ENOMEM;
	if (c->ledger)
		ledger_slice(&c->ledger_map, w->index, &w->ledger);
	if (c->have_verify_layout)
		dupgen_init_scaled(&w->verify_dup, &c->verify_layout, number);

	char path[4096];
	target_worker_path(&c->target, w->index, path, sizeof path, &w->base);
	w->eng = c->engine;
	w->io.path = (w->eng->flags & IOENGINE_NO_FILE) ? NULL : strdup(path);
	w->shown = target_shown(&c->target, w->io.path);
	w->io.open_flags = (c->direct ? O_DIRECT : 0) | (c->dsync ? O_DSYNC : 0) | target_open_flags(&c->target);
	w->io.read_only = c->target.no_writes;
	w->io.fsync_each = c->fsync_each;
	w->io.hints = c->o.hints;
	w->io.depth = depth;
	w->io.slots = w->units;
	w->io.opts = ioengine_options(&c->o, w->eng);
	w->io.fd = -1;
	int rc = w->eng->open(&w->io);
	if (rc < 0)
		return -rc;
	/* the file checked and prepared, not one put in its place since */
	if (w->io.fd >= 0 && target_check_opened(&c->target, w->index, w->io.fd))
		return errno;
	return c->o.latency_log ? open_latency_log(w) : 0;
}

static void note_mismatch(struct wctx *w, const char *what, uint64_t offset, const struct verify_result *r)
{
	if (w->ws->nmismatch >= sizeof w->ws->mismatch / sizeof w->ws->mismatch[0])
		return;
	char found[128];
	verify_describe(r, found, sizeof found);
	snprintf(w->ws->mismatch[w->ws->nmismatch++], sizeof w->ws->mismatch[0], "worker %llu: %s at offset %llu of %s: %s",
		 (unsigned long long)config_worker_number(w->cfg, w->index), what, (unsigned long long)offset,
		 w->shown ? w->shown : "null", found);
}

/* One transfer outside the timed loop (populate, final check), waited for; 0 or an errno,
 * recorded as the worker's failure. */
static int transfer_now(struct wctx *w, struct io_unit *u, enum io_dir dir, uint64_t offset, uint32_t len,
			const char *what)
{
	u->dir = dir;
	u->offset = offset;
	u->len = len;
	u->error = 0;
	int rc = w->eng->queue(&w->io, u);
	if (rc == IO_Q_QUEUED) {
		rc = w->eng->commit(&w->io);
		while (!rc) {
			int got = w->eng->getevents(&w->io, 1, 1, UINT64_MAX);
			if (got == 1)
				break;
			if (got < 0 && got != -EINTR)
				rc = got;
		}
	}
	if (rc < 0) {
		record_failure(w, -rc, what, offset);
		return -rc;
	}
	if (u->error)
		record_failure(w, u->error, what, offset);
	return u->error;
}

/* What `block` must hold, from its ledger word (id + 1, 0 = no entry); false: nothing is known. */
static bool expect_block(struct wctx *w, uint64_t block, uint64_t word, struct verify_expect *e)
{
	const struct bench_config *c = w->cfg;
	if (!verify_expectation(word, c->unknown, c->seed_given, e))
		return false;
	if (e->method == VM_LAYOUT)
		e->id = dupgen_first(&w->verify_dup, config_block_slot(c, w->index, block));
	return true;
}

static uint64_t ledger_word(const struct wctx *w, uint64_t block)
{
	return w->ledger.ids ? __atomic_load_n(&w->ledger.ids[block], __ATOMIC_RELAXED) : 0;
}

/* Counts a check by method and by what it found; false when it failed. */
static bool account_check(struct wctx *w, const struct verify_result *r)
{
	w->ws->checks_by[r->method]++;
	w->ws->found[r->found]++;
	if (r->found == CONTENT_IS_FOREIGN && !w->ws->foreign_seed)
		w->ws->foreign_seed = r->found_seed;
	return r->ok;
}

/* After the run: read the whole region back and check every block. */
static void final_pass(struct wctx *w)
{
	const struct bench_config *c = w->cfg;
	uint32_t bs = (uint32_t)c->o.block_size;
	uint32_t chunk_blocks = bs >= (1u << 20) ? 1 : (1u << 20) / bs;
	struct io_unit u = {0};
	u.buf = alloc_aligned((size_t)chunk_blocks * bs);
	if (!u.buf) {
		record_failure(w, ENOMEM, "final check", w->base);
		return;
	}
	for (uint64_t b = 0; b < c->region_blocks && !stopping(w); b += chunk_blocks) {
		uint64_t n = c->region_blocks - b < chunk_blocks ? c->region_blocks - b : chunk_blocks;
		if (transfer_now(w, &u, IO_READ, w->base + b * bs, (uint32_t)(n * bs), "final check read"))
			break;
		for (uint64_t i = 0; i < n; i++) {
			struct verify_expect e;
			struct verify_result r;
			if (!expect_block(w, b + i, ledger_word(w, b + i), &e)) {
				w->ws->unchecked++;
				continue;
			}
			verify_check(&w->content, (char *)u.buf + i * bs, &e, &r);
			w->ws->final_checks++;
			if (!account_check(w, &r)) {
				w->ws->final_mismatches++;
				note_mismatch(w, "final check", w->base + (b + i) * bs, &r);
			}
		}
	}
	free(u.buf);
}

/* Fill the region before the run (not timed): sequential, large transfers, one at a time. */
static int populate(struct wctx *w)
{
	const struct bench_config *c = w->cfg;
	if (c->populate == POPULATE_NONE || (w->eng->flags & IOENGINE_NO_FILE))
		return 0;
	uint32_t bs = (uint32_t)c->o.block_size;
	uint32_t chunk_blocks = bs >= (1u << 20) ? 1 : (1u << 20) / bs;
	struct io_unit u = {0};
	u.buf = alloc_aligned((size_t)chunk_blocks * bs);
	if (!u.buf)
		return ENOMEM;
	struct rng r;
	struct dupgen dg;
	uint64_t number = config_worker_number(c, w->index);
	rng_split(&r, c->seed, number * STREAMS + STREAM_POPULATE);
	/* Populate ids come from a separate unique-id space so they never equal the run's. */
	dupgen_init(&dg, &c->dup, number + CONTENT_MAX_WORKERS / 2);
	uint64_t first_block = config_block_slot(c, w->index, 0);
	int rc = 0;
	for (uint64_t b = 0; b < c->region_blocks && !rc && !stopping(w); b += chunk_blocks) {
		uint64_t n = c->region_blocks - b < chunk_blocks ? c->region_blocks - b : chunk_blocks;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t id = c->populate == POPULATE_ZERO ? CONTENT_ZERO
				      : c->scaled	     ? dupgen_first(&w->dup, first_block + b + i)
							     : dupgen_next(&dg, &r);
			config_fill_content(c, &w->content, c->scaled ? &w->dup : &dg, id, (char *)u.buf + i * bs);
			if (w->ledger.ids)
				ledger_set(&w->ledger, b + i, id);
		}
		rc = transfer_now(w, &u, IO_WRITE, w->base + b * bs, (uint32_t)(n * bs), "populate write");
	}
	if (!rc && w->io.fd >= 0 && fsync(w->io.fd) && errno != EINVAL)
		record_failure(w, rc = errno, "populate fsync", UINT64_MAX);
	free(u.buf);
	return rc;
}

/* The next operation's direction and due time; false when the run is over for this worker. */
static bool next_op(struct wctx *w, enum io_dir *dir, uint64_t *due, uint64_t now)
{
	const struct bench_config *c = w->cfg;
	if (w->issued >= w->quota)
		return false;
	struct schedule *s = &w->sched[0];
	if (w->split_rates) {
		bool writes_first = schedule_peek(&w->sched[1]) < schedule_peek(&w->sched[0]);
		s = &w->sched[writes_first];
		*dir = writes_first ? IO_WRITE : IO_READ;
	} else if (c->o.mode == MODE_WRITE) {
		*dir = IO_WRITE;
	} else if (c->o.mode == MODE_READ) {
		*dir = IO_READ;
	} else {
		*dir = rng_below(&w->r_mix, 100) < c->o.read_pct ? IO_READ : IO_WRITE;
	}
	*due = s->active ? schedule_peek(s) : now;
	if (*due >= w->deadline)
		return false;
	if (s->active)
		schedule_advance(s);
	return true;
}

/* The content of the next write to `block`. Scaled: a block's first write takes its layout
 * instance; an overwrite takes a content that keeps the live data on the distribution. */
static uint64_t next_content(struct wctx *w, uint64_t block)
{
	const struct bench_config *c = w->cfg;
	uint64_t prev = 0, id;
	bool had = w->ledger.ids && ledger_get(&w->ledger, block, &prev);
	if (!c->scaled)
		id = dupgen_next(&w->dup, &w->r_content);
	else if (had)
		id = dupgen_overwrite(&w->dup, prev);
	else
		id = dupgen_first(&w->dup, c->scale_by_block ? config_block_slot(c, w->index, block) : w->slot_next++);
	if (had) {
		w->ws->overwrites++;
		w->ws->overwrites_changed += id != prev;
	}
	return id;
}

static void prepare(struct wctx *w, struct io_unit *u, enum io_dir dir, uint64_t due)
{
	uint32_t bs = (uint32_t)w->cfg->o.block_size;
	u->dir = dir;
	u->block = access_next(&w->access, &w->r_access);
	u->offset = w->base + u->block * bs;
	u->len = bs;
	u->due_ns = due;
	u->error = 0;
	if (dir == IO_WRITE) {
		u->content_id = next_content(w, u->block);
		config_fill_content(w->cfg, &w->content, &w->dup, u->content_id, u->buf);
		/* Recorded at submission: the next write to this block must see this one as its victim. */
		if (w->ledger.ids)
			ledger_set(&w->ledger, u->block, u->content_id);
	} else if (w->ledger.ids) {
		/* What a read submitted now must find (a later write to the block may also win). */
		u->content_id = w->ledger.ids[u->block];
	}
}

/* A read must return what was last written there when it was submitted, or what a write
 * submitted after it put there; a block no ledger entry describes is checked as the run's
 * policy says (zeros, identified from its bytes, the layout's content, or not at all). */
static void check_read(struct wctx *w, const struct io_unit *u)
{
	struct verify_expect e;
	struct verify_result r;
	uint64_t at_submit = u->content_id, now;
	if (!expect_block(w, u->block, at_submit, &e)) {
		w->ws->unchecked++;
		return;
	}
	verify_check(&w->content, u->buf, &e, &r);
	if (!r.ok && (now = ledger_word(w, u->block)) != at_submit && expect_block(w, u->block, now, &e))
		verify_check(&w->content, u->buf, &e, &r);
	w->ws->read_checks++;
	if (!account_check(w, &r)) {
		w->ws->read_mismatches++;
		note_mismatch(w, "read", u->offset, &r);
	}
}

static void complete(struct wctx *w, struct io_unit *u, uint64_t now)
{
	if (u->error) {
		record_failure(w, u->error, u->dir == IO_WRITE ? "write" : "read", u->offset);
		return;
	}
	struct dir_stats *d = &w->ws->dir[u->dir];
	uint64_t lat = now > u->due_ns ? now - u->due_ns : 0;
	hist_record(&d->lat, lat);
	__atomic_store_n(&d->bytes, d->bytes + u->len, __ATOMIC_RELAXED);
	__atomic_store_n(&d->ops, d->ops + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&w->ws->last_ns, now, __ATOMIC_RELAXED);
	w->access_counts[u->block]++;
	if (u->dir == IO_READ && w->cfg->check_reads && w->ledger.ids)
		check_read(w, u);
	if (u->dir == IO_WRITE) {
		if (u->content_id & CONTENT_UNIQUE_BIT)
			w->ids.unique++;
		else if (idc_add(&w->ids, u->content_id, 1))
			record_failure(w, ENOMEM, "tally", u->offset);
	}
	if (w->latlog)
		fprintf(w->latlog, "%llu,%c,%llu,%llu\n", (unsigned long long)((u->due_ns - w->sh->t0_ns) / 1000),
			u->dir == IO_WRITE ? 'W' : 'R', (unsigned long long)u->offset, (unsigned long long)lat);
}

static void reap(struct wctx *w, unsigned min, uint64_t timeout)
{
	int n = w->eng->getevents(&w->io, min, w->io.depth, timeout);
	if (n < 0) {
		if (n != -EINTR)
			record_failure(w, -n, "getevents", UINT64_MAX);
		return;
	}
	uint64_t now = now_ns();
	for (int i = 0; i < n; i++) {
		struct io_unit *u = w->eng->event(&w->io, (unsigned)i);
		complete(w, u, now);
		w->free_units[w->nfree++] = u;
	}
}

/* Hands u to the engine; one the engine completed at once is accounted here (*now moved on).
 * false when the engine failed (recorded): issue no more. */
static bool submit(struct wctx *w, struct io_unit *u, uint64_t *now)
{
	int rc = w->eng->queue(&w->io, u);
	if (rc == IO_Q_COMPLETED) {
		*now = now_ns();
		complete(w, u, *now);
		w->free_units[w->nfree++] = u;
		return true;
	}
	if (rc < 0) {
		record_failure(w, -rc, "queue", u->offset);
		w->free_units[w->nfree++] = u;
		return false;
	}
	/* Submit at once rather than in a batch: the device starts on this one while the next
	 * block's content is generated (a batch would let the queue drain). */
	int crc = w->eng->commit(&w->io);
	if (crc < 0) { /* not in flight: the drain at the end must not wait for it */
		record_failure(w, -crc, "submit", u->offset);
		w->free_units[w->nfree++] = u;
		return false;
	}
	return true;
}

/* The end of the loop (stopped_at: when the run was stopped, or UINT64_MAX): what is in flight
 * drained so every issued op is accounted for, and a nominal run's missed operations counted. */
static void finish(struct wctx *w, uint64_t stopped_at)
{
	while (w->io.depth - w->nfree > 0) {
		unsigned before = w->nfree;
		reap(w, 1, UINT64_MAX);
		if (w->nfree == before && w->ws->error)
			break;
	}
	/* A target that fell behind at the end (a stall across the deadline) leaves operations due
	 * and never issued: no latency of theirs is in any percentile, so they are counted - up to
	 * the stop of a run cut short too (it said 0 missed with a backlog of 170,000). */
	uint64_t until = stopped_at < w->deadline ? stopped_at : w->deadline;
	if (w->sched[0].active && until != UINT64_MAX && !w->ws->error) {
		uint64_t due = schedule_due_before(&w->sched[0], until);
		if (w->split_rates)
			due += schedule_due_before(&w->sched[1], until);
		due = due < w->quota ? due : w->quota;
		w->ws->missed = due > w->issued ? due - w->issued : 0;
	}
}

static void run_loop(struct wctx *w)
{
	unsigned depth = w->io.depth;
	bool more = true;
	bool pending_valid = false;
	enum io_dir pdir = IO_WRITE;
	uint64_t pdue = 0;
	w->ws->first_ns = now_ns();
	while (!stopping(w)) {
		uint64_t now = now_ns();
		/* Nominal runs too: operations due before the deadline but not issued by it are the
		 * target's shortfall (the achieved rate shows it), not more run time. */
		if (now >= w->deadline)
			break;
		while (w->nfree && more) {
			if (!pending_valid) {
				more = next_op(w, &pdir, &pdue, now);
				if (!more)
					break;
				pending_valid = true;
			}
			if (pdue > now)
				break; /* not due yet (nominal) */
			struct io_unit *u = w->free_units[--w->nfree];
			prepare(w, u, pdir, pdue);
			/* Peak: latency starts at submission, after our own content generation. Nominal:
			 * at the scheduled time, so any delay (ours or the device's) shows. */
			if (!w->sched[0].active)
				u->due_ns = now_ns();
			pending_valid = false;
			w->issued++;
			if (!submit(w, u, &now))
				break;
			if (stopping(w))
				break;
			if (now >= w->deadline)
				break;
		}
		unsigned inflight = depth - w->nfree;
		if (!more && inflight == 0)
			break;
		if (inflight) {
			/* Wait for a completion; when the next op is due sooner, only until then. */
			uint64_t timeout = UINT64_MAX;
			unsigned min = 1;
			if (pending_valid && w->nfree) {
				uint64_t t = now_ns();
				timeout = pdue > t ? pdue - t : 0;
				min = timeout ? 1 : 0;
			}
			reap(w, min, timeout);
		} else if (pending_valid && pdue > now) {
			(void)pacer_sleep_until(&w->pacer, pdue < w->deadline ? pdue : w->deadline); /* EINTR: re-checked */
		}
	}
	finish(w, stopping(w) ? now_ns() : UINT64_MAX); /* interrupted, or another worker failed */
}

static int ship_tallies(struct wctx *w, int fd)
{
	struct access_freq af = {0};
	int rc = afreq_from_counts(&af, w->access_counts, w->cfg->region_blocks) ||
		 tally_write(fd, &w->ids, &af);
	afreq_free(&af);
	return rc ? EIO : 0;
}

int worker_main(const struct worker_args *a)
{
	struct wctx w = {0};
	w.cfg = a->cfg;
	w.index = a->index;
	w.sh = a->sh;
	w.ws = &a->sh->w[a->index];
	/* The launcher decides when to stop: the terminal's ^C reaches the whole group, so ignore it
	 * here and let SIGUSR1 (sent by the launcher) cut sleeps short. Die with the launcher. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN); /* a hangup reaches the whole group too */
	struct sigaction sa = {0};
	sa.sa_handler = on_wake;
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);

	int rc = setup(&w);
	if (rc)
		record_failure(&w, rc, "setup", UINT64_MAX);
	else
		rc = populate(&w);
	__atomic_store_n(&w.ws->state, w.ws->error ? WORKER_FAILED : WORKER_READY, __ATOMIC_RELAXED);
	char one = 1;
	if (write(a->ready_fd, &one, 1) != 1)
		rc = EIO;
	char buf;
	while (read(a->go_fd, &buf, 1) < 0 && errno == EINTR)
		;
	if (!rc && !stopping(&w)) {
		const struct bench_config *c = w.cfg;
		uint64_t t0 = __atomic_load_n(&w.sh->t0_ns, __ATOMIC_ACQUIRE);
		w.deadline = c->o.time_ns ? t0 + c->o.time_ns : UINT64_MAX;
		/* The whole run's schedule (every part's workers together issue RATE ops/s). */
		uint64_t number = config_worker_number(c, w.index), workers = c->part.workers;
		if (c->o.read_rate > 0) {
			w.split_rates = true;
			schedule_init(&w.sched[0], t0, c->o.read_rate, workers, number);
			schedule_init(&w.sched[1], t0, c->o.write_rate, workers, number);
		} else {
			schedule_init(&w.sched[0], t0, c->o.rate, workers, number);
		}
		pacer_init(&w.pacer);
		/* A nominal run's latency counts from each operation's scheduled time, so the timer's
		 * lateness in waking us counts too: the default 50 us slack would add that to every
		 * operation (p50 75 us against 0 on the null target). */
		if (w.sched[0].active)
			(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
		__atomic_store_n(&w.ws->state, WORKER_RUNNING, __ATOMIC_RELAXED);
		run_loop(&w);
		__atomic_store_n(&w.ws->state, WORKER_FINISHING, __ATOMIC_RELEASE);
		/* (a run stopped by a signal skips it: the user asked to stop) */
		if (c->final_pass && !w.ws->error)
			final_pass(&w);
	}
	/* named: "latency log of DIR/dedisbench.0" sent one looking at the target file */
	if (w.latlog && fclose(w.latlog))
		record_failure_said(&w, errno, "cannot write its latency log %s/latency.%llu.csv", w.cfg->o.output_dir,
				    (unsigned long long)config_worker_number(w.cfg, w.index));
	if (w.ids.map.keys && w.access_counts && ship_tallies(&w, a->tally_fd) && !w.ws->error)
		record_failure(&w, EIO, "tally", UINT64_MAX);
	if (w.eng) {
		int crc = w.eng->close(&w.io);
		if (crc && !w.ws->error)
			record_failure(&w, -crc, "flush on close", UINT64_MAX);
	}
	int failed = w.ws->error != 0;
	__atomic_store_n(&w.ws->state, failed ? WORKER_FAILED : WORKER_DONE, __ATOMIC_RELEASE);
	return failed;
}
