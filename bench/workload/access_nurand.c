/* access_nurand.c - the TPC-C NURand access pattern, (((rand(0,A) | rand(0,N-1)) + C) mod N):
 * a few hot blocks; A and C are run constants chosen once per run from the seed. */
#include "bench/workload/access.h"

uint64_t access_default_a(uint64_t nblocks)
{
	uint64_t a = nblocks / 10;
	return a ? a : 1;
}

uint64_t access_draw_c(uint64_t seed, uint64_t a)
{
	struct rng r;
	rng_split(&r, seed, 0x4e5552414e44ULL); /* "NURAND": a stream no worker uses */
	return rng_range(&r, 0, a);
}

static void nurand_init(struct access_gen *g, const struct access_setup *s)
{
	g->a = s->a ? s->a : access_default_a(s->nblocks);
	g->c = s->c;
}

static uint64_t nurand_next(struct access_gen *g, struct rng *r)
{
	return ((rng_range(r, 0, g->a) | rng_range(r, 0, g->nblocks - 1)) + g->c) % g->nblocks;
}

const struct access_pattern access_nurand = {
	.name = "nurand",
	.note = "TPC-C hotspot",
	.flags = ACCESS_SKEWED,
	.init = nurand_init,
	.next = nurand_next,
};
