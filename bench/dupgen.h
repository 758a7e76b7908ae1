/* dupgen.h - the content-id generator: each write draws a fresh unique id with the probability
 * of the distribution's unique blocks, otherwise a duplicated content in proportion to its copies. */
#ifndef DEDIS_BENCH_DUPGEN_H
#define DEDIS_BENCH_DUPGEN_H

#include <stddef.h>
#include <stdint.h>
#include "distfile.h"
#include "rng.h"

/* Shared, read-only after dupgen_build (built once before the workers fork). */
struct dupgen_table {
	size_t nrows;          /* rows with dups > 0 */
	uint64_t total;        /* T = sum blocks*(dups+1), the draw space */
	uint64_t unique_weight;/* blocks of the dups = 0 row */
	uint64_t *cum;         /* cum[i] = unique_weight + sum_{j<=i} blocks_j*(dups_j+1) */
	uint64_t *first_id;    /* first content id of row i (ids are 1..distinct duplicated contents) */
	uint64_t *blocks;      /* distinct contents in row i */
	uint64_t *dups;        /* duplicates of each content of row i */
};

int dupgen_build(struct dupgen_table *t, const struct dist *d);
void dupgen_free(struct dupgen_table *t);

/* Per worker: its unique-id counter. */
struct dupgen {
	const struct dupgen_table *t;
	uint64_t worker;
	uint64_t unique_next;
};

void dupgen_init(struct dupgen *g, const struct dupgen_table *t, uint64_t worker);
/* The row a draw x in [unique_weight, total) falls in: binary search over the rows, O(log rows). */
size_t dupgen_row_of(const struct dupgen_table *t, uint64_t x);
/* The next content id (never 0). */
uint64_t dupgen_next(struct dupgen *g, struct rng *r);

#endif
