/* access_uniform.c - the uniform access pattern: every block of the worker's region equally
 * likely at every operation. */
#include "bench/workload/access.h"

static void uniform_init(struct access_gen *g, const struct access_setup *s)
{
	(void)g;
	(void)s;
}

static uint64_t uniform_next(struct access_gen *g, struct rng *r)
{
	return rng_below(r, g->nblocks);
}

const struct access_pattern access_uniform = {
	.name = "uniform",
	.note = NULL,
	.flags = 0,
	.init = uniform_init,
	.next = uniform_next,
};
