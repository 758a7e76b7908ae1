/* mpipeers.h - the launcher's peers over MPI (dedisbench-mpi): one part of the run per rank, a
 * common start, stops that reach every rank, liveness, and the reduction of results at rank 0. */
#ifndef DEDIS_BENCH_MPIPEERS_H
#define DEDIS_BENCH_MPIPEERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "bench/launcher.h"

/* What rank 0 knows of each rank after the reduction. */
struct rank_row {
	char host[64];
	char target[512];  /* its --target, %r and %h substituted (cut short past 511 bytes) */
	unsigned first_worker, workers;
	double seconds;
	bool lost;        /* never sent its final results: its workers' stats are as last heard */
	bool failed, interrupted;
};

struct mpi_peers {
	int rank, size;
	unsigned total_procs;
	uint64_t peer_timeout_ns;
	struct rank_row *rows;    /* every rank's (hosts and workers known everywhere) */
	/* rank 0: every worker's stats, as last heard from its rank */
	struct run_shared *whole;
	size_t whole_len;
	struct worker_shared *inbox; /* rank 0: where each rank's next snapshot arrives */
	void *snap_in;            /* rank 0: MPI_Request per rank, its posted snapshot receive */
	uint64_t *heard_ns;       /* rank 0: when each rank was last heard from (this host's clock) */
	bool *finished;           /* rank 0: each rank's final results arrived (or it is lost); atomics */
	/* rank 0: the time series' rows, cut at each tick on every rank */
	uint64_t t0_ns;
	void *tick_in;            /* MPI_Request per rank, its posted tick receive */
	void **tick_rx;           /* per rank: where its next tick arrives */
	uint64_t *tick_of;        /* per rank: the tick its stats in tick_box are from (0 none, UINT64_MAX final) */
	struct worker_shared *tick_box;
	struct run_shared *at_tick; /* the row's whole run */
	uint64_t row_tick, row_deadline_ns; /* the row being built, and when it is taken as it is */
	bool reduced;             /* every final result is in: the view is the whole run's end */
	uint64_t root_heard_ns;   /* other ranks: when rank 0 was last heard from */
	bool root_lost;           /* other ranks: rank 0 went silent; no result is sent, the job ends */
	uint64_t next_snap_ns;    /* other ranks: when to send the next live snapshot */
	void *snap_buf;
	bool snap_pending;
	void *snap_req;           /* MPI_Request */
	uint64_t next_tick_ns;    /* other ranks: when to send the next tick */
	void *tick_buf, *tick_req;
	bool tick_pending, tick_final_sent;
	void *stop_req;           /* MPI_Request of the posted receive of a stop */
	char stop_buf[512];
	bool stop_posted, stop_sent;
	/* the beat thread: that this rank lives, every 0.1 s, whatever its launcher is doing */
	pthread_t beat_thread;
	pthread_mutex_t beat_lock;
	pthread_cond_t beat_wake;
	bool beating, beat_quit;
	unsigned lost;            /* ranks lost (rank 0) */
	char lost_why[256];
};

/* Call after MPI_Init: learns every rank's host, target and worker count (procs and target
 * here). 0 or -1. */
int mpi_peers_init(struct mpi_peers *p, unsigned procs, const char *target, uint64_t peer_timeout_ns);
void mpi_peers_hooks(struct mpi_peers *p, struct launcher_peers *hooks);
void mpi_peers_free(struct mpi_peers *p);

#endif
