/* run.h - one analysis at each block size, shared by dedisgen and dedisgen-mpi: outputs and
 * databases opened before any work, the scan, the distribution and its sections, the outputs. */
#ifndef DEDIS_GEN_RUN_H
#define DEDIS_GEN_RUN_H

#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "gen/counter.h"
#include "lib/fingerprint.h"
#include "gen/alignstats.h"
#include "gen/cdcstats.h"
#include "gen/locstats.h"
#include "gen/genopts.h"
#include "gen/output.h"
#include "gen/scan.h"

#define EXIT_FAILED 1
#define EXIT_BAD_INPUT 2

/* What one block size produced, scan or merge alike. */
struct size_out {
	uint64_t block_size;
	struct gindex *db;         /* --db or the temporary spill DB; NULL: memory only */
	struct counter *counter;
	struct index_meta meta;    /* the DB's figures before this run (-k), then after */
	struct pending out;        /* -o (inactive when not given) */
	char *plot;
	struct pending plot_out;   /* the rendered plot, renamed with the other outputs */
	struct dist dist;
	uint64_t zero_blocks, blocks_read;
	uint8_t zero_fp[FP_MAX_LEN];
	/* compressibility and locality */
	bool prior;                    /* -k onto a DB that holds an analysis */
	struct comp_sampler *comp;     /* NULL: the result has no compressibility section */
	struct loc_recorder *loc;      /* this scan's records (NULL: none made) */
	bool locality;                 /* the result has a locality section */
	bool keep_windows;             /* merge: the DB's own locality windows stay as they are */
	struct dist_locality loc_own;  /* of this analysis' own stream */
	struct dist_locality loc_base; /* of analyses merged in */
	uint64_t first_pos;            /* the stream position of this scan's first block */
	uint64_t stream_end;           /* stream positions used, -k included */
	/* the index's figures for the summary and the JSON (run_build fills them from counter) */
	double index_bytes_per_distinct;
	uint64_t spills;
};

/* say(arg, line): a message without the program's name (default: "PROG: line" on stderr). */
typedef void (*run_say_fn)(void *arg, const char *line);

struct run {
	const struct gen_options *o;
	const char *prog;          /* "dedisgen", "dedisgen-mpi": the JSON's tool and messages */
	const char *hash;
	size_t fl;                 /* fingerprint length */
	struct size_out *s;
	int n;
	char spill_dir[PATH_MAX];  /* temporary DB directory for --mem-limit without --db */
	struct pending json;
	char **sources;            /* absolute paths, this run's */
	int nsources;
	run_say_fn say;            /* NULL: stderr */
	void *say_arg;
	json_t *json_mpi;          /* dedisgen-mpi: the JSON's "mpi" object (run_write takes it) */
	int threads;               /* the scan's hashing threads: the end's merge and walk use as many */
	bool reads_known;          /* a scan ran: the JSON says how its small files were read */
	uint64_t batches_uring, batches_sync, small_file_fallbacks;
	uint64_t ranges_mapped, ranges_read; /* large files' ranges hashed in place / read by pread */
	bool failed;               /* set before run_free: a --db file this run created is removed */
	bool no_gran;              /* dedisgen-mpi: its ranks' windows are not gathered, none measured */
	struct gran_sampler *gran; /* the granularity curve, every size's; NULL: none */
	bool no_align_cdc;         /* dedisgen-mpi: the ranks' records and chunks are not gathered */
	struct align_set *align;   /* the first size's records of 2..32 blocks; NULL: none */
	struct cdc_set *cdc;       /* the chunks (the first size's dist gets them); NULL: none */
	uint64_t cdc_range;        /* the scan's range of large files: forced cuts */
};

void run_say(const struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void run_free(struct run *r);
int run_add_source(struct run *r, const char *path);
/* Every PATH exists, is readable and is of the kind -f / -d asked for. 0, or -1 (said). */
int run_check_kind(const struct run *r);
/* Everything that can be refused, checked before reading a byte: the outputs created (as temp
 * files), the databases opened, a counter per size. 0, or an exit status (said). */
int run_prepare(struct run *r, const uint64_t *sizes, int n);
/* Would one of the outputs (-o, --json, --plot, at every size) be one of this run's inputs?
 * run_prepare asks it first; dedisgen-mpi's other ranks, which write nothing, ask it of rank 0's
 * outputs against their own PATHs. Nothing is created. 0, or an exit status (said). */
int run_check_outputs(const struct run *r, const uint64_t *sizes, int n);
/* A temporary directory for spilled counts (--mem-limit without --db) in dir (PATH_MAX). 0 or -1. */
int run_make_spill_dir(char *dir, const char *what);
void run_remove_spill_dir(const char *dir);
/* The samplers and recorders of a scan of `total` bytes (complete: the total is known, else the
 * automatic rate is the unknown one), with -k the DB's state. 0, or -1 out of memory. */
int run_setup_measuring(struct run *r, uint64_t total, bool complete, int threads);
/* Scans the walk into every size's counter from each size's first_pos; the warnings said, the
 * stream ends kept. scan_run's result; st released by the caller (scan_stats_free). */
int run_scan(struct run *r, struct walk *w, int threads, volatile sig_atomic_t *stop, struct scan_stats *st);
/* Settles every size's counts and builds its distribution and sections. 0, or an exit status. */
int run_build(struct run *r);
/* Writes every output (the summary, -o, --json, --plot, the DB's side data): they appear
 * together or not at all. seconds/bytes/files/errors: this run's scan figures. 0, or an exit status. */
int run_write(struct run *r, double seconds, uint64_t bytes, uint64_t files, uint64_t errors);
/* The progress line on stderr (a scan_config progress callback). */
void run_progress_line(const struct scan_progress *p, void *arg);

#endif
