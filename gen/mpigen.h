/* mpigen.h - dedisgen-mpi's parts of one analysis over MPI ranks: a rank's state, the verdict that
 * ends each phase, the placement of its part, the exchange with the owners, the reports at rank 0. */
#ifndef DEDIS_GEN_MPIGEN_H
#define DEDIS_GEN_MPIGEN_H

#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include "gen/run.h"
#include "gen/walk.h"

#define MPIGEN_PROG "dedisgen-mpi"
/* A status for a phase that failed on another rank (that rank says why). */
#define FAILED_ELSEWHERE (-1)

/* A rank's messages: warnings are said at once (naming the rank); while `keep`, the first failure
 * is kept for the phase's verdict, so that one rank says it, once. */
struct voice {
	int rank;
	bool keep;
	char first[1024];
};

void voice_say(void *arg, const char *line);
/* The end of a phase on every rank (collective): rank 0 says the failure of the lowest rank that
 * had one (status not 0; FAILED_ELSEWHERE: it failed because another did); every rank returns the
 * highest status (2 bad input over 1 failure). */
int verdict(struct voice *v, int status);

/* What this rank owns of one block size: the fingerprints whose owner it is, counted over every
 * rank's part, and the samples of those contents. */
struct owned {
	struct gindex *db;        /* --mem-limit: the owner's spill DB */
	struct counter *counter;
	struct comp_sampler *comp;
	uint64_t received;
	struct dist part;         /* the owned contents' rows */
	uint64_t zero_blocks, zero_first;
};

/* Where this rank's part sits: a stripe [start, start + len) of the one file or device every rank
 * was given, or its own PATHs; its blocks' first stream positions (the ranks before it come first). */
struct place {
	bool stripe;
	bool empty;               /* a stripe with no block (more ranks than blocks) */
	uint64_t start, len;
	uint64_t total;           /* bytes of the whole run, when known */
	bool complete;
	uint64_t first_pos[GEN_MAX_SIZES];
};

/* One rank's state through the phases. */
struct gen {
	struct gen_options *o;
	int rank, size;
	struct voice v;
	struct run r;
	struct place pl;
	struct owned own[GEN_MAX_SIZES];
	char own_dir[PATH_MAX];
	uint64_t stream_end[GEN_MAX_SIZES]; /* of the whole stream */
	struct scan_stats st;
	bool scanned;
};

/* Each returns 0 or an exit status; collective unless said. */
/* Places this rank's part (stripe or own PATHs, its first positions) and opens its walk. The
 * failure is kept for the verdict. */
int mpigen_place(struct gen *g, struct walk **w);
/* Refuses two ranks of one host reading the same PATH (not as stripes). */
int mpigen_check_disjoint(struct gen *g);
/* This rank's owned counters (not collective). */
int mpigen_prepare_owned(struct gen *g);
/* One block size after every rank's scan: the exchange and the reduction; returns a status every
 * rank agrees on (the failure said). */
int mpigen_exchange(struct gen *g, int size_index);
/* Rank 0: every rank's sources, in rank order; one row per rank (JSON and summary). */
int mpigen_gather_sources(struct gen *g);
/* Every rank's n items of `size` bytes (MPI type `type`), at rank 0 in rank order: the
 * concatenation (with 8 spare bytes), its item count in *total; NULL and 0 elsewhere. Out of
 * memory or past MPI's int counts aborts every rank: none can go on without the result. */
void *mpigen_gather(const struct gen *g, const void *mine, int n, MPI_Datatype type, size_t size, int *total);
void mpigen_report_ranks(struct gen *g, double scan_seconds, double exchange_seconds);

#endif
