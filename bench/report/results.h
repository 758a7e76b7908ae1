/* results.h - what a run produced and how it is told: the human summary, the JSON document
 * (schema in doc/results-schema.md), and the 1 s time series. */
#ifndef DEDIS_BENCH_RESULTS_H
#define DEDIS_BENCH_RESULTS_H

#include <stdio.h>
#include <jansson.h>
#include "bench/config.h"
#include "reference-engine/engine.h"
#include "lib/hostload.h"
#include "bench/content/physical.h"
#include "bench/report/spacecheck.h"
#include "bench/report/tally.h"
#include "bench/worker.h"

struct run_result {
	unsigned procs;
	struct worker_shared *w;      /* a copy of each worker's final stats */
	struct dir_stats total[2];
	struct histogram all;         /* both directions */
	double seconds;               /* run start to last completion */
	bool interrupted;             /* SIGINT / SIGTERM */
	bool failed;
	char failure[512];
	bool have_written;
	struct dist written;          /* the distribution of what the run wrote */
	struct dist_rows written_rows;
	double hottest10;             /* share of ops on the most-accessed 10 % of blocks */
	/* Engine targets: what the generator's ledgers say the volume must hold, against what the
	 * engine reports; reads checked against the ledgers. */
	bool have_engine;
	uint64_t expected_mapped, expected_distinct;
	/* What the live distinct contents take stored by the engine's packing rule (LZ4 size + the
	 * fragment header, or a whole block), computed here from the generator's bytes. */
	uint64_t expected_physical_bytes;
	double physical_deviation;     /* observed / expected - 1 */
	struct engine_stats observed;
	long fsck_problems;
	bool engine_match;
	bool engine_unchecked; /* the validation itself failed (an I/O error in fsck or close) */
	bool engine_holdings_unknown; /* a read of a volume's earlier data, no ledger: the expected
	                         * figures are not known; fsck and the reads are what is checked */
	/* The content the target holds after the run (from the ledger). */
	bool have_live;
	struct dist live;
	struct dist_rows live_rows;
	uint64_t overwrites, overwrites_changed;
	/* What an ideal dedup + per-block compression store keeps of the live data. */
	bool have_physical;
	struct physical_estimate physical;
	/* Verification: online reads and the final pass; the first few mismatches. */
	uint64_t read_checks, read_mismatches, final_checks, final_mismatches;
	uint64_t unchecked;           /* reads and final-pass blocks nothing was known about */
	uint64_t missed;              /* nominal: operations due before --time's end, never issued */
	uint64_t checks_by[VM_METHODS]; /* how: ledger, zeros, identified from the bytes, layout */
	uint64_t found[4];            /* what: by enum content_kind */
	uint64_t foreign_seed;        /* the first other seed seen */
	unsigned nmismatch;
	char mismatch[16][320];
	struct access_freq access;    /* how many blocks got each access count (sorted by count) */
	uint64_t region_blocks;       /* blocks in all workers' regions */
	uint64_t accessed_blocks;     /* of which accessed at least once */
	struct space_report space;    /* observed space against the ideal (main fills it) */
	struct host_usage host;       /* the host's CPU and memory over the run */
};

/* Verification's verdict: something was checked, nothing mismatched, and it was not cut short. */
bool results_verify_ok(const struct run_result *r);

/* The run's verdict, which its exit status and its JSON's "status" both say (run_status_names):
 * failed - the run, a report after it or the engine's validation could not be done; mismatch -
 * what was read back or what the engine holds is not what the run wrote, or --verify checked no
 * block; both exit 1 and fill why (one line, err_fail). interrupted and ok exit 0. */
enum run_status { RUN_OK, RUN_INTERRUPTED, RUN_FAILED, RUN_MISMATCH };
extern const char *const run_status_names[];
enum run_status results_status(const struct bench_config *c, const struct run_result *r, struct dd_err *why);

/* The engine line (what the volume must hold against what it holds, fsck, the reads: MATCH or
 * MISMATCH) and its JSON twin, the "engine" key: of a run, and of a replay (which fills only the
 * engine's fields of a zeroed run_result). */
void results_print_engine(FILE *f, const struct run_result *r);
json_t *results_engine_json(const struct run_result *r);
/* How far the engine's stored bytes may be from the expected (packing bins left part-full). */
#define ENGINE_PHYSICAL_TOLERANCE 0.03

/* Sums the workers into total[] and all. */
void results_merge(struct run_result *r);
void results_print(FILE *f, const struct bench_config *c, const struct run_result *r);
/* The JSON's "schema_version" (doc/results-schema.md): 2 writes every key in snake_case
 * (config's "file_size"); 1, with no such key, wrote config's keys as the options ("file-size"). */
#define RESULTS_SCHEMA_VERSION 2
json_t *results_json(const struct bench_config *c, const struct run_result *r);
/* The start every sub-command's JSON shares (replay, backup): tool, command, config with the
 * I/O engine used, status and error. */
json_t *results_json_header(const struct bench_options *o, const char *command, const char *ioengine, bool failed,
			    bool interrupted, const char *failure);
/* In --output-dir: latency-percentiles.csv, dist-buckets.csv, access-frequency.csv (the plots'
 * data), and with --plot the PNGs. 0, or -1 with err. */
int results_write_plots(const struct bench_config *c, const struct run_result *r, struct dd_err *err);
/* --dist-report (the live distribution, dedis-dist format) and --access-report. 0, or -1 with
 * err (the report named). */
int results_write_reports(const struct bench_config *c, const struct run_result *r, struct dd_err *err);
/* A failure found once the workers are done (a report or a plot not written, --space-cmd after
 * the run): the run fails, and its JSON, written last, says so - status "failed", the first
 * failure its error - rather than "ok" beside exit status 1. */
void results_fail_late(struct run_result *r, const char *why);
void results_free(struct run_result *r);

/* Time series: one CSV row a second, per direction. */
struct timeseries {
	FILE *f;
	struct dir_stats *prev; /* per direction, cumulative at the previous row */
	uint64_t t0;
	double prev_t; /* seconds since t0 of the previous row */
	unsigned rows;
	int write_errno;         /* the first row that could not be written: why (0: none) */
	struct host_usage host;  /* the host's CPU and memory, summed over the samples */
	struct host_cpu cpu_prev;
};
/* Interval bookkeeping only (the progress line without --output-dir). */
int ts_init(struct timeseries *ts, uint64_t t0);
/* ts_init plus DIR/timeseries.csv. */
int ts_open(struct timeseries *ts, const char *dir, uint64_t t0);
/* The interval ending at `now`, from the workers' live stats: appended to the CSV if open. */
struct ts_interval {
	double seconds;      /* since t0 */
	uint64_t ops;        /* both directions, since t0 */
	double mib_s, iops;  /* in the interval, both directions */
	double p99_us;       /* the interval's p99, both directions */
};
int ts_sample(struct timeseries *ts, const struct run_shared *sh, unsigned procs, uint64_t now, struct ts_interval *out);
/* Operations (both directions) completed since the previous row: what a final row must count. */
uint64_t ts_unsampled_ops(const struct timeseries *ts, const struct run_shared *sh, unsigned procs);
/* -1 with errno when a row, or the close, could not be written (the file system full): the
 * CSV is cut short. */
int ts_close(struct timeseries *ts);

#endif
