/* launcher.c - the parent process: shared stats mapping, fork of N workers, the start barrier
 * (a pipe closed at t0), a signalfd loop for SIGINT/SIGTERM/SIGCHLD and 1 s ticks, the merge. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench/launcher.h"
#include "lib/stopsignals.h"
#include "lib/content.h"
#include "reference-engine/engine.h"
#include "bench/report/tally.h"
#include "bench/worker.h"

struct launch {
	const struct bench_config *c;
	const struct launcher_peers *peers; /* NULL: a whole run */
	unsigned procs;
	struct run_shared *sh;
	size_t sh_len;
	pid_t *pids;
	int *tally_fds;
	int sfd;
	int ready_r, go_w;
	unsigned live;
	bool interrupted, failed;
	uint64_t stopped_ns;   /* when the workers were first told to stop (0: not yet) */
	bool overrun_checked;  /* the workers' timed phases were checked for an overrun */
	bool overran;          /* ...and one was ended inside a call to the target */
	char failure[512];
};

__attribute__((format(printf, 2, 3)))
static void set_failure(struct launch *l, const char *fmt, ...)
{
	if (l->failed)
		return;
	l->failed = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->failure, sizeof l->failure, fmt, ap);
	va_end(ap);
}

static void stop_all(struct launch *l)
{
	if (!l->stopped_ns)
		l->stopped_ns = now_ns();
	__atomic_store_n(&l->sh->stop, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < l->procs; i++)
		if (l->pids[i] > 0)
			kill(l->pids[i], SIGUSR1);
}

/* Reap finished workers; a worker that failed or died stops the others. */
static void reap(struct launch *l)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (unsigned i = 0; i < l->procs; i++) {
			if (l->pids[i] != pid)
				continue;
			l->pids[i] = -1;
			l->live--;
			if (WIFSIGNALED(status)) {
				set_failure(l, "worker %u was killed by signal %d", i, WTERMSIG(status));
				stop_all(l);
			} else if (WEXITSTATUS(status) != 0) {
				if (l->sh->w[i].errmsg[0])
					set_failure(l, "%s", l->sh->w[i].errmsg);
				else
					set_failure(l, "worker %u exited with status %d", i, WEXITSTATUS(status));
				stop_all(l);
			}
		}
	}
}

static void handle_signals(struct launch *l)
{
	struct signalfd_siginfo si;
	while (read(l->sfd, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo == SIGCHLD) {
			reap(l);
		} else if (!l->interrupted) {
			l->interrupted = true;
			stop_all(l);
		}
	}
}

static int spawn(struct launch *l, int ready_w, int go_r, sigset_t *old)
{
	for (unsigned i = 0; i < l->procs; i++) {
		char name[32];
		snprintf(name, sizeof name, "dedisbench-tally-%u", i);
		l->tally_fds[i] = memfd_create(name, MFD_CLOEXEC);
		if (l->tally_fds[i] < 0)
			return -1;
	}
	for (unsigned i = 0; i < l->procs; i++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			close(l->ready_r);
			close(l->go_w);
			close(l->sfd);
			/* SIGUSR1 stays blocked until the worker has its handler: a stop sent right after
			 * the fork (a signal that was pending before the run) must not kill it. */
			sigset_t m = *old;
			sigaddset(&m, SIGUSR1);
			sigprocmask(SIG_SETMASK, &m, NULL);
			struct worker_args a = {l->c, i, l->sh, ready_w, go_r, l->tally_fds[i]};
			_exit(worker_main(&a));
		}
		l->pids[i] = pid;
		l->live++;
	}
	return 0;
}

/* Phase 1: every worker has populated and opened its target, or the run is over. */
static bool wait_ready(struct launch *l)
{
	unsigned ready = 0;
	while (ready < l->procs && !l->failed && !l->interrupted) {
		struct pollfd p[2] = {{l->sfd, POLLIN, 0}, {l->ready_r, POLLIN, 0}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return false;
		if (p[0].revents)
			handle_signals(l);
		if (p[1].revents & POLLIN) {
			char buf[64];
			ssize_t n = read(l->ready_r, buf, sizeof buf);
			if (n > 0)
				ready += (unsigned)n;
		}
	}
	for (unsigned i = 0; i < l->procs; i++)
		if (__atomic_load_n(&l->sh->w[i].state, __ATOMIC_RELAXED) == WORKER_FAILED) {
			set_failure(l, "%s", l->sh->w[i].errmsg);
			stop_all(l);
		}
	return !l->failed && !l->interrupted;
}

/* One line on a terminal, rewritten each second: elapsed, share of the end condition done,
 * throughput, IOPS and p99 of the last second. */
static void progress_line(const struct launch *l, const struct ts_interval *iv)
{
	const struct bench_config *c = l->c;
	double done = 0;
	if (c->o.time_ns)
		done = iv->seconds * 1e9 / (double)c->o.time_ns;
	/* iv counts the whole run where the peers give its view: so does the bound then. */
	uint64_t bound = l->peers && l->peers->view ? c->part.run_ops : c->total_ops;
	if (bound) {
		double by_size = (double)iv->ops / (double)bound;
		done = by_size > done ? by_size : done;
	}
	fprintf(stderr, "\r%7.0fs  %5.1f %%  %9.1f MiB/s  %10.0f IOPS  p99 %9.1f us ", iv->seconds,
		100 * (done < 1 ? done : 1), iv->mib_s, iv->iops, iv->p99_us);
}

/* Phase 2: until every worker has exited; a time-series row (and a progress line) each second. */
/* The other parts: tell them this one stops early, hear whether one of them did. */
static void check_peers(struct launch *l, bool done)
{
	if (!l->peers)
		return;
	struct dd_err why;
	enum peers_stop stop =
		l->peers->check(l->peers->ctx, l->sh, done, l->failed ? l->failure : NULL, l->interrupted, &why);
	if (stop != PEERS_GO && !l->failed && !l->interrupted) {
		if (stop == PEERS_INTERRUPTED)
			l->interrupted = true; /* as if the signal had reached this part first */
		else
			set_failure(l, "%s", why.msg);
		stop_all(l);
	}
}

/* What the time series and the progress line sample for the row due at `tick` (now, or the
 * run's end), and *at: the time that row ends. This part's stats as they are now, or where the
 * peers say it, the whole run's as of `tick` - NULL while they are not all in yet. */
static const struct run_shared *sampled(const struct launch *l, uint64_t tick, unsigned *procs, uint64_t *at)
{
	*at = now_ns();
	if (l->peers && l->peers->view)
		return l->peers->view(l->peers->ctx, tick, procs, at);
	*procs = l->procs;
	return l->sh;
}

/* How long a worker may stay in its timed phase past the time limit: its last operations and
 * their drain take well under this; a call that has not returned by then is stalled (a device
 * that stopped answering, an engine call that takes seconds). After a stop (a signal, another
 * worker's failure) the same holds with more room, which a test that holds a stopped worker
 * while the stop reaches it needs on a loaded machine. */
#define OVERRUN_GRACE_NS 1000000000ULL
#define STOP_GRACE_NS 10000000000ULL

/* When the timed phases must be over: the grace after the time limit or the stop, whichever
 * comes first; UINT64_MAX for a run without either yet. */
static uint64_t overrun_at(const struct launch *l)
{
	uint64_t by_limit = l->c->o.time_ns ? l->sh->t0_ns + l->c->o.time_ns + OVERRUN_GRACE_NS : UINT64_MAX;
	uint64_t by_stop = l->stopped_ns ? l->stopped_ns + STOP_GRACE_NS : UINT64_MAX;
	return by_limit < by_stop ? by_limit : by_stop;
}

/* The run's time limit holds whatever the target does: a worker still in its timed phase at
 * overrun_at is inside a call that has not returned, and is ended. What it had in flight is
 * unknown (the ledger has it, the target may not; an engine volume recovers from a process that
 * died in a call as from a power loss), so nothing of the target is checked: the run fails. */
static void end_overrunning(struct launch *l)
{
	bool by_limit = l->c->o.time_ns && now_ns() >= l->sh->t0_ns + l->c->o.time_ns + OVERRUN_GRACE_NS;
	unsigned ended = 0, first = 0;
	l->overrun_checked = true;
	for (unsigned i = 0; i < l->procs; i++) {
		if (l->pids[i] <= 0 || __atomic_load_n(&l->sh->w[i].state, __ATOMIC_ACQUIRE) != WORKER_RUNNING)
			continue;
		kill(l->pids[i], SIGKILL);
		first = ended++ ? first : i;
	}
	if (!ended)
		return;
	l->overran = true;
	char more[32] = "";
	if (ended > 1)
		snprintf(more, sizeof more, " (and %u more)", ended - 1);
	set_failure(l, "worker %llu%s was still inside a call to the target %.0f s after %s: ended; what the target "
		    "holds was not checked", (unsigned long long)config_worker_number(l->c, first), more,
		    (by_limit ? OVERRUN_GRACE_NS : STOP_GRACE_NS) / 1e9, by_limit ? "the time limit" : "the run was stopped");
	stop_all(l);
}

static void watch(struct launch *l, struct timeseries *ts, bool progress)
{
	uint64_t t0 = l->sh->t0_ns, next_tick = t0 + 1000000000ULL;
	bool ticking = ts->prev != NULL;
	while (l->live) {
		check_peers(l, false);
		uint64_t now = now_ns();
		int timeout_ms = -1;
		if (ticking) {
			if (now >= next_tick) {
				struct ts_interval iv;
				unsigned procs;
				uint64_t at;
				const struct run_shared *v = sampled(l, next_tick, &procs, &at);
				if (v) {
					ts_sample(ts, v, procs, at, &iv);
					if (progress)
						progress_line(l, &iv);
					next_tick += 1000000000ULL;
					continue;
				}
				timeout_ms = ROW_RETRY_MS; /* the peers' stats for the row are on their way */
			} else {
				timeout_ms = (int)((next_tick - now + 999999) / 1000000);
			}
		}
		if (l->peers && (timeout_ms < 0 || timeout_ms > PEERS_CHECK_MS))
			timeout_ms = PEERS_CHECK_MS;
		uint64_t overrun = l->overrun_checked ? UINT64_MAX : overrun_at(l);
		if (overrun <= now) {
			end_overrunning(l);
			continue;
		}
		uint64_t overrun_ms = overrun == UINT64_MAX ? INT_MAX : (overrun - now + 999999) / 1000000;
		if (overrun_ms < INT_MAX && (timeout_ms < 0 || overrun_ms < (uint64_t)timeout_ms))
			timeout_ms = (int)overrun_ms;
		struct pollfd p = {l->sfd, POLLIN, 0};
		if (poll(&p, 1, timeout_ms) > 0)
			handle_signals(l);
		reap(l); /* a SIGCHLD that arrived before the signalfd existed is still reaped */
	}
	check_peers(l, true);
}

/* What the target holds now, from the shared ledger: every written block's content. `live` gets
 * the live ids (the caller frees it). */
static int collect_live(const struct bench_config *c, struct id_counts *live, uint64_t *blocks, uint64_t *distinct,
			uint64_t *zero)
{
	const uint64_t *words = c->ledger_map.words;
	uint64_t n = c->ledger_map.procs * c->ledger_map.region_blocks;
	for (uint64_t b = 0; b < n; b++) {
		uint64_t v = words[b];
		if (!v)
			continue;
		(*blocks)++;
		if ((v - 1) & CONTENT_UNIQUE_BIT)
			live->unique++; /* a unique id is live on one block at most */
		else if (idc_add(live, v - 1, 1))
			return -1;
		*zero += v - 1 == CONTENT_ZERO;
	}
	*distinct = live->map.used + live->unique;
	return 0;
}

/* The live distribution from the live ids (this part's, or the whole run's). */
static int live_dist(const struct bench_config *c, struct run_result *r, const struct id_counts *live, uint64_t zero)
{
	if (idc_to_dist(live, &r->live))
		return -1;
	r->live.zero_blocks = zero;
	r->live.block_size = c->o.block_size;
	dist_compute_rows(&r->live, &r->live_rows);
	r->have_live = true;
	return 0;
}

/* The engine must hold exactly what the generator left: as many mapped blocks as the ledgers
 * have written blocks, as many distinct stored blocks as they have distinct contents, stored
 * bytes within PHYSICAL_TOLERANCE of what those contents compress to, a clean fsck, and every
 * read must have returned what was written. */
static void validate_engine(const struct bench_config *c, struct run_result *r, const struct id_counts *live,
			    uint64_t mapped, uint64_t distinct)
{
	struct target_observation obs;
	struct dd_err err;
	r->have_engine = true;
	r->expected_mapped = mapped;
	r->expected_distinct = distinct;
	if (target_observe(&c->target, true, &obs, &err)) {
		snprintf(r->mismatch[0], sizeof r->mismatch[0], "cannot open the volume to validate it: %.250s", err.msg);
		r->nmismatch = 1;
		r->engine_match = false;
		return;
	}
	r->observed = obs.stats;
	r->fsck_problems = obs.fsck_problems;
	int crc = obs.close_rc;
	r->engine_unchecked = r->fsck_problems < 0 || crc;
	if (r->engine_unchecked && r->nmismatch < sizeof r->mismatch / sizeof r->mismatch[0])
		/* not a verdict on the data: the check itself failed */
		snprintf(r->mismatch[r->nmismatch++], sizeof r->mismatch[0], "validating %.200s: %s: %s",
			 c->target.path, r->fsck_problems < 0 ? "fsck" : "closing the volume",
			 strerror(r->fsck_problems < 0 ? (int)-r->fsck_problems : -crc));
	bool physical_ok = physical_engine_bytes(c, c->ledger_map.words, c->ledger_map.procs * c->ledger_map.region_blocks,
						 live, !strcmp(r->observed.compress, "lz4"), &r->expected_physical_bytes) == 0;
	r->physical_deviation = r->expected_physical_bytes
					? (double)r->observed.physical_bytes / (double)r->expected_physical_bytes - 1
					: (r->observed.physical_bytes ? 1 : 0);
	physical_ok = physical_ok && r->physical_deviation <= ENGINE_PHYSICAL_TOLERANCE &&
		     r->physical_deviation >= -ENGINE_PHYSICAL_TOLERANCE;
	/* A run that did not empty the volume and has no ledger of its earlier writes (a read of a kept
	 * volume) knows nothing of what it must hold: not a mismatch, and not a match of counts either. */
	r->engine_holdings_unknown = !target_engine_emptied(&c->target) && !c->ledger_map.existed;
	bool holdings_ok = r->engine_holdings_unknown ||
			   (r->observed.mapped_blocks == mapped && r->observed.referenced_blocks == distinct && physical_ok);
	r->engine_match = holdings_ok && r->fsck_problems == 0 && !crc && r->read_mismatches == 0 && r->final_mismatches == 0;
}

/* The workers' final stats copied into r, the run's span, and how it ended. */
static void collect_workers(struct launch *l, struct run_result *r)
{
	const struct bench_config *c = l->c;
	r->procs = l->procs;
	uint64_t last = l->sh->t0_ns;
	for (unsigned i = 0; i < l->procs; i++) {
		memcpy(&r->w[i], &l->sh->w[i], sizeof *r->w);
		if (r->w[i].last_ns > last)
			last = r->w[i].last_ns;
	}
	r->seconds = (double)(last - l->sh->t0_ns) / 1e9;
	/* A nominal time-bounded run lasts its scheduled span even if the last op finished early -
	 * unless --size ended it first: then every worker issued its quota and stopped, and the
	 * span it did not run would divide the rate (2000/s for 0.5 s of a 3 s --time read 341/s). */
	uint64_t done_ops = 0;
	for (unsigned i = 0; i < l->procs; i++)
		done_ops += r->w[i].dir[IO_READ].ops + r->w[i].dir[IO_WRITE].ops;
	bool size_ended = c->total_ops && done_ops >= c->total_ops;
	if (c->nominal && c->o.time_ns && !size_ended && !l->interrupted && !l->failed)
		r->seconds = (double)c->o.time_ns / 1e9 > r->seconds ? (double)c->o.time_ns / 1e9 : r->seconds;
	r->interrupted = l->interrupted;
	r->failed = l->failed;
	snprintf(r->failure, sizeof r->failure, "%s", l->failure);
}

/* The checks every worker made, added up (r->w: every part's, where peers report). */
static void sum_checks(struct run_result *r)
{
	for (unsigned i = 0; i < r->procs; i++) {
		const struct worker_shared *w = &r->w[i];
		r->read_checks += w->read_checks;
		r->read_mismatches += w->read_mismatches;
		r->final_checks += w->final_checks;
		r->final_mismatches += w->final_mismatches;
		r->unchecked += w->unchecked;
		r->missed += w->missed;
		for (int m = 0; m < VM_METHODS; m++)
			r->checks_by[m] += w->checks_by[m];
		for (int k = 0; k < 4; k++)
			r->found[k] += w->found[k];
		if (!r->foreign_seed)
			r->foreign_seed = w->foreign_seed;
		r->overwrites += w->overwrites;
		r->overwrites_changed += w->overwrites_changed;
		for (unsigned k = 0; k < w->nmismatch && r->nmismatch < sizeof r->mismatch / sizeof r->mismatch[0]; k++)
			memcpy(r->mismatch[r->nmismatch++], w->mismatch[k], sizeof r->mismatch[0]);
	}
}

/* What was written (its distribution) and where the accesses went. */
static void written_and_accessed(struct run_result *r, struct id_counts *ids, struct access_freq *af)
{
	if ((ids->map.used || ids->unique) && idc_to_dist(ids, &r->written) == 0) {
		dist_compute_rows(&r->written, &r->written_rows);
		r->have_written = true;
	}
	r->hottest10 = afreq_hottest_share(af, 0.10);
	for (size_t i = 0; i < af->n; i++) {
		r->region_blocks += af->blocks[i];
		if (af->count[i])
			r->accessed_blocks += af->blocks[i];
	}
}

static void collect(struct launch *l, struct run_result *r)
{
	const struct bench_config *c = l->c;
	r->w = calloc(l->procs, sizeof *r->w);
	if (!r->w) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "out of memory collecting the results");
		return;
	}
	collect_workers(l, r);
	struct id_counts ids = {0}, live = {0};
	struct access_freq af = {0};
	bool ok = idc_init(&ids, 4096) == 0 && idc_init(&live, 4096) == 0;
	for (unsigned i = 0; ok && i < l->procs; i++)
		if (lseek(l->tally_fds[i], 0, SEEK_SET) < 0 || tally_read_merge(l->tally_fds[i], &ids, &af))
			ok = false;
	uint64_t live_blocks = 0, live_distinct = 0, live_zero = 0;
	if (ok && c->ledger && collect_live(c, &live, &live_blocks, &live_distinct, &live_zero))
		ok = false;
	/* The other parts' workers and tallies join this part's (at the part that reports); every
	 * part takes part, whatever it could collect (the others wait for it). */
	if (!ok && l->peers && !r->failed) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "cannot collect the workers' tallies");
	}
	if (l->peers && l->peers->reduce(l->peers->ctx, r, &ids, &live, &live_zero, &af))
		ok = false;
	results_merge(r);
	sum_checks(r);
	if (ok && c->ledger && live_dist(c, r, &live, live_zero))
		ok = false;
	/* What the target holds, byte for byte, is only known here for a target of this part alone. */
	if (ok && c->ledger && !l->peers && !(c->target.ops->flags & TARGET_STORES_NOTHING))
		r->have_physical = physical_estimate(c, c->ledger_map.words, c->ledger_map.procs * c->ledger_map.region_blocks,
						     &live, &r->physical) == 0;
	if (ok && !l->peers && c->target.ops->observe && !l->overran)
		validate_engine(c, r, &live, live_blocks, live_distinct);
	idc_free(&live);
	if (ok)
		written_and_accessed(r, &ids, &af);
	idc_free(&ids);
	afreq_sort(&af);
	r->access = af; /* the access report's table */
}

int launcher_run(const struct bench_config *c, struct run_result *r, struct dd_err *err)
{
	return launcher_run_part(c, NULL, r, err);
}

/* The launch's shared memory and per-worker tables: 0, or -1 with err (nothing left allocated). */
static int launch_alloc(struct launch *l, struct dd_err *err)
{
	l->sh_len = sizeof *l->sh + l->procs * sizeof l->sh->w[0];
	l->sh = mmap(NULL, l->sh_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	l->pids = calloc(l->procs, sizeof *l->pids);
	l->tally_fds = malloc(l->procs * sizeof *l->tally_fds);
	if (l->sh == MAP_FAILED || !l->pids || !l->tally_fds) {
		err_fail(err, -1, "out of memory for %u workers", l->procs);
		if (l->sh != MAP_FAILED)
			munmap(l->sh, l->sh_len);
		free(l->pids);
		free(l->tally_fds);
		return -1;
	}
	for (unsigned i = 0; i < l->procs; i++) {
		l->tally_fds[i] = -1;
		hist_init(&l->sh->w[i].dir[0].lat);
		hist_init(&l->sh->w[i].dir[1].lat);
	}
	return 0;
}

/* The workers started (ready), every part with them, the time series opened: the barrier opens
 * and the run is watched to its end (returned). */
static uint64_t run_workers(struct launch *l, struct timeseries *ts, bool *progress)
{
	const struct bench_config *c = l->c;
	const struct launcher_peers *peers = l->peers;
	bool go_on = wait_ready(l);
	/* Every part starts together, or none does. */
	if (peers && !peers->start(peers->ctx, go_on) && go_on) {
		go_on = false;
		set_failure(l, "another rank could not start");
		stop_all(l);
	}
	__atomic_store_n(&l->sh->t0_ns, now_ns(), __ATOMIC_RELEASE);
	*progress = !c->o.quiet && isatty(STDERR_FILENO);
	/* Of a larger run, the part that reports writes the one time series (of every part). */
	bool series = c->o.output_dir && (!peers || peers->view);
	/* Ticks every second even without a time series: the host's CPU and memory are sampled. */
	if (go_on && !series && ts_init(ts, l->sh->t0_ns))
		*progress = false;
	if (go_on && series && ts_open(ts, config_output_at(c, OUT_DIR), l->sh->t0_ns)) {
		set_failure(l, "cannot write the time series in %s: %s", c->o.output_dir, strerror(errno));
		stop_all(l);
	}
	close(l->go_w); /* the barrier opens: every worker's read() returns 0 */
	l->go_w = -1;
	watch(l, ts, *progress);
	return now_ns();
}

/* The time series' last row and the host's load, after the run ended at `end`. */
static void finish_series(struct launch *l, struct timeseries *ts, struct run_result *r, uint64_t end)
{
	/* The last, partial interval: kept when it holds operations no row counts yet (the rows add
	 * up to the totals), or, empty, when it is long enough to say something (>= 0.1 s). */
	if (ts->f) {
		unsigned procs;
		uint64_t at;
		const struct run_shared *v = sampled(l, end, &procs, &at);
		if (v && ((double)(end - l->sh->t0_ns) / 1e9 - ts->prev_t >= 0.1 || ts_unsampled_ops(ts, v, procs)))
			ts_sample(ts, v, procs, end, NULL);
	}
	if (ts->prev) {
		hostload_end(&ts->host, "/proc");
		r->host = ts->host;
	}
	if (ts_close(ts)) { /* the run went on: what it measured is reported, as failed */
		char why[sizeof r->failure];
		snprintf(why, sizeof why, "cannot write the time series %s/timeseries.csv: %s", l->c->o.output_dir,
			 strerror(errno));
		results_fail_late(r, why);
	}
}

int launcher_run_part(const struct bench_config *c, const struct launcher_peers *peers, struct run_result *r,
		      struct dd_err *err)
{
	struct launch l = {0};
	l.c = c;
	l.peers = peers;
	l.procs = (unsigned)c->o.procs;
	l.sfd = l.ready_r = l.go_w = -1;
	memset(r, 0, sizeof *r);
	if (launch_alloc(&l, err))
		return -1;

	sigset_t mask, old;
	sigemptyset(&mask);
	stop_signals_set(&mask); /* SIGHUP too: a terminal or ssh session gone left the run's files and lock */
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR1); /* only for the forks to inherit it blocked (see spawn) */
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigdelset(&mask, SIGUSR1);
	l.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	int ready[2] = {-1, -1}, go[2] = {-1, -1};
	int rc = -1;
	struct timeseries ts = {0};
	if (l.sfd < 0 || pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC)) {
		err_fail_errno(err, -1, errno, "cannot set up the launcher");
		goto out;
	}
	l.ready_r = ready[0];
	l.go_w = go[1];
	if (spawn(&l, ready[1], go[0], &old)) {
		err_fail_errno(err, -1, errno, "cannot start workers");
		stop_all(&l);
		close(l.go_w);
		l.go_w = -1;
		while (l.live && waitpid(-1, NULL, 0) > 0)
			l.live--;
		goto out;
	}
	close(ready[1]);
	close(go[0]);
	ready[1] = go[0] = -1;

	bool progress;
	uint64_t end = run_workers(&l, &ts, &progress);
	if (progress)
		fputs("\r\033[K", stderr); /* the summary replaces the progress line */
	collect(&l, r); /* (where peers report, they now hold every part's final stats) */
	finish_series(&l, &ts, r, end);
	rc = 0;
out:
	for (unsigned i = 0; i < l.procs; i++)
		if (l.tally_fds[i] >= 0)
			close(l.tally_fds[i]);
	int fds[] = {l.sfd, l.ready_r, l.go_w, ready[1], go[0]};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	munmap(l.sh, l.sh_len);
	free(l.pids);
	free(l.tally_fds);
	return rc;
}
