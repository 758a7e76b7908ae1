/* config.h - the effective configuration of a run: the option table's values checked against
 * each other, defaults that depend on other options resolved, target and distribution loaded. */
#ifndef DEDIS_BENCH_CONFIG_H
#define DEDIS_BENCH_CONFIG_H

#include "compmodel.h"
#include "distfile.h"
#include "dupgen.h"
#include "ioengine/ioengine.h"
#include "options.h"
#include "target.h"
#include "verify.h"

struct bench_config {
	struct bench_options o;     /* owned */
	bool given[64];
	uint64_t seed;              /* effective (random when not given) */
	enum populate_mode populate;/* resolved: never POPULATE_DEFAULT */
	bool direct, fsync_each, dsync;
	bool nominal;               /* rate, or read/write rates, given */
	char dist_path[4096];
	struct dist dist;
	struct dupgen_table dup;
	struct target target;
	uint64_t region_blocks;     /* blocks per worker */
	uint64_t nurand_a, nurand_c;
	uint64_t total_ops;         /* size bound in operations, 0 = none */
	const struct ioengine_ops *engine;
	bool ledger;                /* keep the per-block content ledger */
	struct ledger_map ledger_map; /* shared by the workers, read by the launcher */
	bool check_reads;           /* online: every read against the ledger (also for engine targets) */
	bool final_pass;            /* re-read and check every block after the run */
	enum verify_unknown unknown;/* how a block no ledger entry describes is checked (verify.h) */
	bool seed_given;            /* --seed, or the seed of a kept --ledger: the data's seed is known */
	bool have_verify_layout;    /* UNKNOWN_LAYOUT: the layout of the run that wrote the target */
	struct scaled_layout verify_layout;
	/* scaled content */
	bool scaled;
	struct scaled_layout layout;
	uint64_t scale_blocks;      /* N: the blocks the distribution is scaled to */
	bool scale_by_block;        /* first writes use slot = global block number (else write order) */
	/* --compress dist with a distribution that says how its contents compress: each content's
	 * recipe (NULL: the plain layout at --compress R, or incompressible) */
	struct compmodel *model;
	uint32_t content_compress;  /* content_init's R: --compress R, or 1 */
};

/* The bytes of content `id` as this run writes them (its recipe from the model, if any); g is
 * the dupgen the id came from, which knows its copy class. */
void config_fill_content(const struct bench_config *c, const struct content_gen *gen, const struct dupgen *g,
			 uint64_t id, void *buf);

/* Validate everything a run needs, without writing anything. Takes ownership of cli->o. */
int config_build(struct bench_cli *cli, struct bench_config *cfg, struct opt_error *err);
/* Where a bundled distribution NAME lives (installed or source tree); 0 if found. */
int config_find_dist(const char *name, char *path, size_t len);
void config_free(struct bench_config *cfg);

/* Create the shared ledger (after the target is prepared); 0 or -1 with err. */
int config_open_ledger(struct bench_config *cfg, char *err, size_t errlen);

/* Operations worker w must do of total_ops (the remainder spread over the first workers). */
static inline uint64_t config_worker_ops(const struct bench_config *c, unsigned w)
{
	uint64_t p = c->o.procs;
	return c->total_ops / p + (w < c->total_ops % p);
}

/* The first slot of worker w when first writes are numbered in write order. */
static inline uint64_t config_worker_slot0(const struct bench_config *c, unsigned w)
{
	uint64_t p = c->o.procs, q = c->total_ops / p, r = c->total_ops % p;
	return w * q + (w < r ? w : r);
}

#endif
