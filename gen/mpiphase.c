/* mpiphase.c - what every phase of dedisgen-mpi's ranks shares, below placement and exchange: a
 * rank's voice, the verdict that ends a phase, and the gather of every rank's items at rank 0. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen/mpigen.h"

void voice_say(void *arg, const char *line)
{
	struct voice *v = arg;
	if (v->keep && strncmp(line, "warning", 7)) {
		if (!v->first[0])
			snprintf(v->first, sizeof v->first, "%s", line);
		return;
	}
	if (v->rank)
		fprintf(stderr, MPIGEN_PROG ": rank %d: %s\n", v->rank, line);
	else
		fprintf(stderr, MPIGEN_PROG ": %s\n", line);
}

/* The end of a phase on every rank: rank 0 says the failure of the lowest rank that had one
 * (status not 0; FAILED_ELSEWHERE: it failed because another did); every rank returns the
 * highest status (2 bad input over 1 failure). */
int verdict(struct voice *v, int status)
{
	int own = status == FAILED_ELSEWHERE ? 0 : status;
	int mine = own ? v->rank : INT32_MAX, lowest, worst;
	MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&own, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (lowest != INT32_MAX) {
		char msg[sizeof v->first];
		snprintf(msg, sizeof msg, "%s", v->first[0] ? v->first : "failed");
		MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, lowest, MPI_COMM_WORLD);
		if (v->rank == 0) {
			if (lowest)
				fprintf(stderr, MPIGEN_PROG ": rank %d: %s\n", lowest, msg);
			else
				fprintf(stderr, MPIGEN_PROG ": %s\n", msg);
		}
	}
	v->first[0] = 0;
	return worst;
}

void *mpigen_gather(const struct gen *g, const void *mine, int n, MPI_Datatype type, size_t size, int *total)
{
	int *counts = NULL, *displs = NULL, sum = 0;
	char *all = NULL;
	if (g->rank == 0 && (!(counts = calloc((size_t)g->size, sizeof *counts)) ||
			     !(displs = calloc((size_t)g->size, sizeof *displs))))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int k = 0; g->rank == 0 && k < g->size; k++) {
		displs[k] = sum;
		if (sum > INT32_MAX - counts[k])
			MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
		sum += counts[k];
	}
	if (g->rank == 0 && !(all = malloc((size_t)sum * size + 8)))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gatherv(mine, n, type, all, counts, displs, type, 0, MPI_COMM_WORLD);
	free(counts);
	free(displs);
	*total = sum;
	return all;
}
