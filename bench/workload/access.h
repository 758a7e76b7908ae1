/* access.h - block-offset generators for one worker's region, as plug-ins: each pattern is one
 * file (access_*.c) defining a struct access_pattern, listed once in access.c's registry. */
#ifndef DEDIS_BENCH_ACCESS_H
#define DEDIS_BENCH_ACCESS_H

#include <stddef.h>
#include <stdint.h>
#include "lib/rng.h"

struct access_gen;
/* The next block number in [0, nblocks): the worker's per-operation step, so keep it cheap. */
typedef uint64_t access_next_fn(struct access_gen *g, struct rng *r);

/* What a pattern is, for the core to read (never its name). */
enum access_flags {
	ACCESS_ORDERED = 1u << 0, /* walks the region in block order and draws no random numbers */
	ACCESS_SKEWED = 1u << 1,  /* some blocks are hotter than others by design */
};

/* A run's pattern constants, the same in every worker (config.c draws them once per run). */
struct access_setup {
	uint64_t nblocks; /* N: the worker's region in blocks */
	uint64_t a;       /* NURand A; 0 means the DEDISbench default N/10 */
	uint64_t c;       /* NURand C, in [0, A] (access_draw_c) */
};

struct access_pattern {
	const char *name; /* the --access word, equal to its registry name */
	const char *note; /* a few words after the name in --help ("wraps around"), or NULL */
	unsigned flags;   /* enum access_flags */
	void (*init)(struct access_gen *g, const struct access_setup *s);
	access_next_fn *next;
};

/* One worker's generator: the pattern's step and the state any pattern may keep. */
struct access_gen {
	access_next_fn *next; /* copied from the pattern, so a step is one indirect call */
	const struct access_pattern *pattern;
	uint64_t nblocks; /* N */
	uint64_t a, c;    /* the run's constants, as the pattern set them */
	uint64_t pos;     /* a walking position (sequential) */
};

/* The registry, in --access order (an option value and the INI access_type number are indexes
 * into it, so a new pattern goes at the end), NULL-terminated. access_names[i] is
 * access_patterns[i]->name: the option table, --help, man page and completion read it. */
extern const struct access_pattern *const access_patterns[];
extern const char *const access_names[];
/* The pattern called name, or NULL. */
const struct access_pattern *access_pattern_find(const char *name);

/* Sets g up for pattern index (an index into access_patterns) over nblocks with the run's
 * constants a and c (see struct access_setup). */
void access_init(struct access_gen *g, int index, uint64_t nblocks, uint64_t a, uint64_t c);

static inline uint64_t access_next(struct access_gen *g, struct rng *r)
{
	return g->next(g, r);
}

/* NURand's run constants (access_nurand.c): the default A for N blocks, and C, a run constant
 * in [0, A] drawn from the seed as TPC-C prescribes, so all workers share it. */
uint64_t access_default_a(uint64_t nblocks);
uint64_t access_draw_c(uint64_t seed, uint64_t a);

#endif
