/* access.h - block-offset generators for one worker's region: sequential (wrapping), uniform,
 * and TPC-C NURand: (((rand(0,A) | rand(0,N-1)) + C) mod N). */
#ifndef DEDIS_BENCH_ACCESS_H
#define DEDIS_BENCH_ACCESS_H

#include <stdint.h>
#include "bench/benchopts.h"
#include "lib/rng.h"

struct access_gen {
	enum access_kind kind;
	uint64_t nblocks; /* N */
	uint64_t a;       /* NURand A */
	uint64_t c;       /* NURand C, the same in every worker of a run */
	uint64_t next;    /* sequential position */
};

/* a = 0 means the DEDISbench default N/10. C is drawn by the caller once per run
 * (access_draw_c) so all workers share it. */
void access_init(struct access_gen *g, enum access_kind kind, uint64_t nblocks, uint64_t a, uint64_t c);
uint64_t access_default_a(uint64_t nblocks);
/* TPC-C: C is a run constant in [0, A]. */
uint64_t access_draw_c(uint64_t seed, uint64_t a);

static inline uint64_t access_nurand(struct rng *r, uint64_t a, uint64_t n, uint64_t c)
{
	return ((rng_range(r, 0, a) | rng_range(r, 0, n - 1)) + c) % n;
}

/* The next block number in [0, nblocks). */
static inline uint64_t access_next(struct access_gen *g, struct rng *r)
{
	switch (g->kind) {
	case ACCESS_SEQ: {
		uint64_t b = g->next;
		g->next = b + 1 == g->nblocks ? 0 : b + 1;
		return b;
	}
	case ACCESS_UNIFORM:
		return rng_below(r, g->nblocks);
	case ACCESS_NURAND:
	default:
		return access_nurand(r, g->a, g->nblocks, g->c);
	}
}

#endif
