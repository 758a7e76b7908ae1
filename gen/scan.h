/* scan.h - the analysis pass: one reader thread (the caller) reads every entry of a walk in large
 * sequential reads into big buffers; --threads hashing threads fingerprint and measure them. */
#ifndef DEDIS_GEN_SCAN_H
#define DEDIS_GEN_SCAN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "gen/alignstats.h"
#include "gen/cdcstats.h"
#include "gen/compsample.h"
#include "gen/counter.h"
#include "gen/gransample.h"
#include "gen/locstats.h"
#include "gen/walk.h"

#define SCAN_FIRST_ERRORS 5
#define GEN_SCAN_MAX_SIZES 16

/* Stream positions: every block has one per size (files concatenated in walk order, each
 * block-aligned and tail-padded as read; a device in block order). The reader hands them out
 * with the work, so they do not depend on which hashing thread gets what. */
struct scan_size {
	uint64_t block_size;
	struct counter *counter;   /* where this size's fingerprints are counted */
	struct comp_sampler *comp; /* compressibility sampling; NULL: off */
	struct loc_recorder *loc;  /* locality records; NULL: off */
	uint64_t first_pos;        /* the stream position of the first block (-k continues one) */
	uint64_t blocks;           /* out: blocks hashed at this size */
	uint64_t stream_end;       /* out: the position after the last one handed out */
};

struct scan_progress {
	uint64_t bytes, total;     /* total 0: unknown */
	double seconds;
};

/* How the ranges of files from 1 MiB are read (--read-method, in gen_read_names' order). */
enum scan_read {
	SCAN_READ_AUTO,  /* each thread times both on its first ranges in memory, keeps the cheaper */
	SCAN_READ_PREAD, /* copied into a buffer that stays in the thread's cache */
	SCAN_READ_MMAP,  /* mapped and hashed in place (no copy) */
};

struct scan_config {
	struct walk *walk;
	const char *hash;               /* "sha1" / "sha256" */
	struct scan_size *sizes;        /* distinct powers of two */
	int nsizes;
	int threads;                    /* hashing threads, >= 1 */
	enum scan_read read_method;
	bool skip_tails;                /* leave a file's last partial block out */
	bool strict;                    /* an unreadable entry fails the scan */
	struct gran_sampler *gran;      /* the granularity curve's windows; NULL: off */
	struct align_set *align;        /* the first size's records of 2..32 blocks, every thread's
					 * merged in at its end; NULL: off */
	struct cdc_set *cdc;            /* the chunks of every thread, merged likewise; NULL: off */
	volatile sig_atomic_t *stop;    /* set (by a signal handler) to interrupt; may be NULL */
	void (*progress)(const struct scan_progress *p, void *arg); /* about once a second; may be NULL */
	void *progress_arg;
};

struct scan_stats {
	uint64_t bytes;            /* logical bytes read (tail padding not included) */
	uint64_t files;            /* files and devices read */
	uint64_t errors;           /* entries that could not be read (skipped) */
	char *first_errors[SCAN_FIRST_ERRORS]; /* "path: reason" of the first few */
	int nfirst;
	double seconds;
	bool interrupted;
	uint64_t batches_uring;    /* batches of small files read through io_uring ... */
	uint64_t batches_sync;     /* ... and with system calls (no io_uring here) */
	uint64_t small_file_fallbacks; /* files of io_uring batches read with system calls after all
				    * (the kernel did not run their open or read, or the ring failed) */
	uint64_t ranges_mapped;    /* ranges of large files hashed in place (mapped) ... */
	uint64_t ranges_read;      /* ... and read by pread */
	uint64_t range;            /* the size of large files' ranges (their chunking restarts at each) */
	char failure[512];         /* why scan_run returned -1 */
};

/* Returns 0, or -1 with st->failure set (a hashing or index failure, an unreadable entry with
 * strict, an interruption). Either way st must be released with scan_stats_free. */
int scan_run(const struct scan_config *cfg, struct scan_stats *st);
void scan_stats_free(struct scan_stats *st);

#endif
