/* access.c - set-up of the offset generators (the per-operation step is inline in access.h);
 * NURand's constants are chosen once per run from the seed, as TPC-C prescribes. */
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

void access_init(struct access_gen *g, enum access_kind kind, uint64_t nblocks, uint64_t a, uint64_t c)
{
	g->kind = kind;
	g->nblocks = nblocks;
	g->a = a ? a : access_default_a(nblocks);
	g->c = c;
	g->next = 0;
}
