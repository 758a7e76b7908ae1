/* mpiroute.h - dedisgen-mpi's exchange: fixed-size records sent to chosen ranks in bounded
 * all-to-all rounds (MPI_Alltoallv), delivered to a callback there; every rank learns failures. */
#ifndef DEDIS_GEN_MPIROUTE_H
#define DEDIS_GEN_MPIROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/errmsg.h"

/* Records a rank queues per round, over all destinations (ROUTE_BATCH / ranks each, at least
 * 64): the send and receive buffers stay bounded whatever the data. */
#define ROUTE_BATCH 65536

/* Called on the receiving rank for each record; non-zero: this rank failed (err filled). */
typedef int (*route_deliver_fn)(const uint8_t *rec, void *arg, struct dd_err *err);

struct route {
	int rank, size;
	size_t rec;                /* bytes per record */
	size_t per_dest;           /* records per destination per round */
	uint8_t *send, *recv;
	size_t *filled;            /* records waiting per destination */
	int *scount, *sdispl, *rcount, *rdispl;
	route_deliver_fn deliver;
	void *arg;
	bool failed;               /* this rank failed (delivery or its own put) */
	bool any_failed;           /* a rank failed: every rank stops */
	uint64_t delivered;        /* records delivered here */
	struct dd_err err;         /* this rank's failure */
};

/* Every rank calls init, then put as it likes, then finish (collective). 0 or -1 (oom). */
int route_init(struct route *r, size_t rec_bytes, route_deliver_fn deliver, void *arg);
/* Queues rec for rank dest; a full queue runs a round first (collective with the other ranks'
 * rounds). 0, or -1 when a rank failed (stop putting; call finish). */
int route_put(struct route *r, int dest, const void *rec);
/* Marks this rank failed, why kept as r->err when it is the first (it stops putting; the others
 * learn it at the next round). */
void route_fail(struct route *r, const struct dd_err *why);
/* Runs rounds until every rank is done. 0, or -1 when some rank failed (r->err says why when
 * it was this one). */
int route_finish(struct route *r);
void route_free(struct route *r);

#endif
