/* worker.h - one benchmark worker process: populate its region, wait at the start barrier,
 * run the operation loop through an I/O engine, publish live stats and ship its tallies. */
#ifndef DEDIS_BENCH_WORKER_H
#define DEDIS_BENCH_WORKER_H

#include <stdint.h>
#include "bench/config.h"
#include <time.h>
#include "lib/histogram.h"
#include "bench/workload/rate.h"

struct dir_stats {
	uint64_t ops;
	uint64_t bytes;
	struct histogram lat;
};

/* RUNNING is the timed phase (its operations and their drain), the one --time bounds;
 * FINISHING what follows it (the final check, the tallies, the flush at close). */
enum worker_state { WORKER_STARTING, WORKER_READY, WORKER_RUNNING, WORKER_FINISHING, WORKER_DONE, WORKER_FAILED };

/* Lives in memory shared with the launcher: written by its worker only. */
struct worker_shared {
	struct dir_stats dir[2]; /* IO_READ, IO_WRITE */
	uint64_t first_ns, last_ns; /* first issue, last completion (CLOCK_MONOTONIC) */
	uint64_t overwrites;        /* writes to a block that held content already */
	uint64_t overwrites_changed;/* ... with different content */
	uint64_t read_checks;       /* online: reads checked against the ledger */
	uint64_t read_mismatches;
	uint64_t final_checks;      /* final pass: blocks checked */
	uint64_t final_mismatches;
	uint64_t unchecked;         /* reads and final-pass blocks nothing was known about */
	uint64_t missed;            /* nominal, ended by --time: operations due before the end, never issued */
	uint64_t checks_by[VM_METHODS]; /* checks (online and final) by how they were made */
	uint64_t found[4];          /* checked blocks by what they held (enum content_kind) */
	uint64_t foreign_seed;      /* the seed of the first block of another seed found */
	unsigned nmismatch;         /* messages kept (the first few mismatches: where, expected, found) */
	char mismatch[4][320];
	int state;
	int error;                  /* errno of the failure */
	char errmsg[256];
};

struct run_shared {
	int stop;                   /* set by the launcher (signal) or a failing worker */
	uint64_t t0_ns;             /* start time, written before the barrier opens */
	struct worker_shared w[];
};

struct worker_args {
	const struct bench_config *cfg;
	unsigned index;
	struct run_shared *sh;
	int ready_fd;   /* write one byte when populated and open */
	int go_fd;      /* read returns 0 (EOF) when the run starts */
	int tally_fd;   /* memfd receiving the tallies at the end */
};

/* Returns the process exit status: 0 ok, 1 failure (recorded in sh->w[index]). */
int worker_main(const struct worker_args *a);

#endif
