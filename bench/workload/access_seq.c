/* access_seq.c - the sequential access pattern: each worker walks its region block by block and
 * wraps around at its end. */
#include "bench/workload/access.h"

static void seq_init(struct access_gen *g, const struct access_setup *s)
{
	(void)s;
	g->pos = 0;
}

static uint64_t seq_next(struct access_gen *g, struct rng *r)
{
	(void)r;
	uint64_t b = g->pos;
	g->pos = b + 1 == g->nblocks ? 0 : b + 1;
	return b;
}

const struct access_pattern access_seq = {
	.name = "seq",
	.note = "wraps around",
	.flags = ACCESS_ORDERED,
	.init = seq_init,
	.next = seq_next,
};
