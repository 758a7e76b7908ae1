/* launcher.h - runs a configured benchmark: forks the workers, holds them at a start barrier,
 * watches time, signals and failures, samples the time series, and collects the results. */
#ifndef DEDIS_BENCH_LAUNCHER_H
#define DEDIS_BENCH_LAUNCHER_H

#include <signal.h>
#include "bench/config.h"
#include "bench/report/results.h"
#include "bench/report/tally.h"

/* Returns 0 when the run happened (r filled; r->failed / r->interrupted tell how it ended),
 * -1 when it could not start (err says why). The target must have been prepared. */
int launcher_run(const struct bench_config *c, struct run_result *r, struct dd_err *err);

/* Whether another part stopped the run: no, by failing (or being lost), or on a signal. */
enum peers_stop { PEERS_GO, PEERS_FAILED, PEERS_INTERRUPTED };

/* The other parts of a run that spans several launchers (dedisbench-mpi: one per MPI rank),
 * called from the launcher's thread only. */
struct launcher_peers {
	void *ctx;
	/* Every local worker is populated and open (ready), or not: blocks until every part has
	 * said so; true when all are ready and the timed phase starts now. */
	bool (*start)(void *ctx, bool ready);
	/* At least every PEERS_CHECK_MS while the workers run, and once after they exited (done):
	 * this part's live stats and whether it stops early (failure: why, or interrupted). Returns
	 * PEERS_FAILED, with err, when another part stopped the run by failing (or was lost), and
	 * PEERS_INTERRUPTED when it stopped it on a signal (mpirun delivers one to every part, not
	 * at once: the first to take it interrupts the others). */
	enum peers_stop (*check)(void *ctx, const struct run_shared *sh, bool done, const char *failure,
				 bool interrupted, struct dd_err *err);
	/* Where this part reports (NULL elsewhere): the whole run's stats for the time series row due
	 * at `tick` (a whole second from t0; or the run's end, once reduce has run: every part's
	 * final stats), every part's cut at that tick, with *at set to when the row ends; NULL while
	 * some part's are still on their way (asked again every ROW_RETRY_MS). */
	const struct run_shared *(*view)(void *ctx, uint64_t tick, unsigned *procs, uint64_t *at);
	/* This part's result and its tallies (what it wrote, what its target holds, accesses); at
	 * the reporting part they become the whole run's (r->w grows to every part's workers). 0, or
	 * -1 when the whole could not be reduced (r->failed says why). */
	int (*reduce)(void *ctx, struct run_result *r, struct id_counts *written, struct id_counts *live,
		      uint64_t *live_zero, struct access_freq *af);
};
#define PEERS_CHECK_MS 100
#define ROW_RETRY_MS 5

/* launcher_run for one part of a larger run (peers NULL: launcher_run). */
int launcher_run_part(const struct bench_config *c, const struct launcher_peers *peers, struct run_result *r,
		      struct dd_err *err);

#endif
