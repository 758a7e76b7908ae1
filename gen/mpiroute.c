/* mpiroute.c - bounded all-to-all rounds of fixed-size records: counts exchanged, then the
 * records, then one allreduce saying whether a rank has more to send and whether one failed. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "gen/mpiroute.h"

int route_init(struct route *r, size_t rec_bytes, route_deliver_fn deliver, void *arg)
{
	memset(r, 0, sizeof *r);
	MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &r->size);
	r->rec = rec_bytes;
	r->per_dest = ROUTE_BATCH / (size_t)r->size;
	if (r->per_dest < 64)
		r->per_dest = 64;
	size_t n = (size_t)r->size;
	r->deliver = deliver;
	r->arg = arg;
	r->send = malloc(n * r->per_dest * rec_bytes);
	r->recv = malloc(n * r->per_dest * rec_bytes);
	r->filled = calloc(n, sizeof *r->filled);
	r->scount = calloc(4 * n, sizeof *r->scount);
	if (!r->send || !r->recv || !r->filled || !r->scount) {
		route_free(r);
		return -1;
	}
	r->sdispl = r->scount + n;
	r->rcount = r->scount + 2 * n;
	r->rdispl = r->scount + 3 * n;
	return 0;
}

void route_fail(struct route *r, const struct dd_err *why)
{
	if (!r->failed)
		r->err = *why;
	r->failed = true;
}

/* One round: what is queued goes out, what arrives is delivered. 1: a rank has more to send,
 * 0: every rank is done, -1: a rank failed. */
static int round_trip(struct route *r, bool done)
{
	size_t chunk = r->per_dest * r->rec;
	for (int d = 0; d < r->size; d++) {
		r->scount[d] = (int)(r->filled[d] * r->rec);
		r->sdispl[d] = (int)((size_t)d * chunk);
	}
	MPI_Alltoall(r->scount, 1, MPI_INT, r->rcount, 1, MPI_INT, MPI_COMM_WORLD);
	int at = 0;
	for (int d = 0; d < r->size; d++) {
		r->rdispl[d] = at;
		at += r->rcount[d];
	}
	MPI_Alltoallv(r->send, r->scount, r->sdispl, MPI_BYTE, r->recv, r->rcount, r->rdispl, MPI_BYTE,
		      MPI_COMM_WORLD);
	memset(r->filled, 0, (size_t)r->size * sizeof *r->filled);
	for (size_t off = 0; off < (size_t)at && !r->failed; off += r->rec) {
		struct dd_err why = {0};
		if (r->deliver(r->recv + off, r->arg, &why))
			route_fail(r, &why);
		else
			r->delivered++;
	}
	int mine[2] = {!done, r->failed}, all[2];
	MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	r->any_failed = all[1] != 0;
	return r->any_failed ? -1 : all[0];
}

int route_put(struct route *r, int dest, const void *rec)
{
	if (r->any_failed || r->failed)
		return -1;
	if (r->filled[dest] == r->per_dest && round_trip(r, false) < 0)
		return -1;
	memcpy(r->send + ((size_t)dest * r->per_dest + r->filled[dest]) * r->rec, rec, r->rec);
	r->filled[dest]++;
	return 0;
}

int route_finish(struct route *r)
{
	int more = 1;
	while (!r->any_failed && more > 0)
		more = round_trip(r, true);
	return r->any_failed ? -1 : 0;
}

void route_free(struct route *r)
{
	free(r->send);
	free(r->recv);
	free(r->filled);
	free(r->scount);
	memset(r, 0, sizeof *r);
}
