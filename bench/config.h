/* config.h - the effective configuration of a run: the option table's values checked against
 * each other, defaults that depend on other options resolved, target and distribution loaded. */
#ifndef DEDIS_BENCH_CONFIG_H
#define DEDIS_BENCH_CONFIG_H

#include <limits.h>
#include "lib/compmodel.h"
#include "lib/distfile.h"
#include "bench/content/dupgen.h"
#include "bench/content/grancal.h"
#include "bench/ioengine/ioengine.h"
#include "bench/benchopts.h"
#include "lib/safefile.h"
#include "bench/target/target.h"
#include "bench/content/verify.h"

/* Where a run sits in a larger one: dedisbench-mpi runs one part per MPI rank, and the parts'
 * workers, blocks and size bound are numbered in the whole run. A stand-alone run is its own
 * whole (config_part_alone). */
struct bench_part {
	uint64_t worker_base;       /* the whole run's number of this part's worker 0 */
	uint64_t workers;           /* workers in the whole run (the nominal schedule's W) */
	uint64_t run_ops;           /* the whole run's size bound in operations (0: time-bound) */
	/* The content space the distribution is scaled to: the whole run, or (a replica) the part
	 * alone. First writes take its slots: by block number, or in write order. */
	uint64_t block_base;        /* slot of this part's first block */
	uint64_t blocks;            /* blocks of the whole content space (its capacity) */
	uint64_t ops_base;          /* write order: operations of the space's parts before this one */
	uint64_t space_ops;         /* ... and of the whole space (0: time-bound) */
};

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
	/* what content_identify rebuilds a shifted block's halves by (config_content_init) */
	struct dupgen identify_dup;
	struct dupgen_recipes identify_recipes;
	/* its vocabulary, fitted to the distribution's [granularity 1] (fitted false: none) */
	struct grancal_result vocabulary;
	uint32_t content_compress;  /* content_init's R: --compress R, or 1 */
	struct bench_part part;     /* this run in the whole (a stand-alone run: all of it) */
	bool placed;                /* config_place done: the layout exists */
	/* The outputs' directories, held from the run's start to its end (config_hold_outputs),
	 * and each output's name through its held directory (config_output_at). */
	bool outputs_held;
	struct held_output {
		struct safedir dir;
		char via[PATH_MAX];
	} held[4];
};

/* The outputs a run writes when it ends (and --output-dir's files made as it starts). */
enum config_output { OUT_JSON, OUT_DIST_REPORT, OUT_ACCESS_REPORT, OUT_DIR };

/* The run's content generator under seed: content_init with the run's block size and R, and the
 * model's recipes for a shifted block's halves. 0, or -1 (a bad geometry). */
int config_content_init(const struct bench_config *c, struct content_gen *gen, uint64_t seed);
/* The bytes of content `id` as this run writes them (its recipe from the model, if any); g is
 * the dupgen the id came from, which knows its copy class. */
void config_fill_content(const struct bench_config *c, const struct content_gen *gen, const struct dupgen *g,
			 uint64_t id, void *buf);

/* Validate everything a run needs, without writing anything. Takes ownership of cli->o. */
int config_build(struct bench_cli *cli, struct bench_config *cfg, struct dd_err *err);
/* config_build in two steps, for a run that is part of a larger one: config_probe checks the
 * options and sizes the target (what the whole run needs to know of this part), config_place
 * puts the part in the whole (sizes, quotas, the scaled layout). Both leave cfg to config_free. */
int config_probe(struct bench_cli *cli, struct bench_config *cfg, struct dd_err *err);
int config_place(struct bench_config *cfg, const struct bench_part *part, struct dd_err *err);
/* The part that is a whole run: this config's workers and capacity. */
void config_part_alone(const struct bench_config *cfg, struct bench_part *part);
/* The operations of a size bound of `ops` that workers [first, first + n) of `workers` do
 * (equal quotas, the remainder spread over the first workers). */
uint64_t config_share_ops(uint64_t ops, uint64_t workers, uint64_t first, uint64_t n);
void config_free(struct bench_config *cfg);
/* A report (or, is_dir, a directory of them) at path must not replace the data of target t: not
 * the target file or device, a worker file of a directory target, or anything in an engine volume;
 * a report path must not be a directory, and a directory of them must be one or be creatable
 * (t: a null target, {.ops = &target_null_ops}, where there is none). 0, or -1 with err set. */
int config_check_output(const struct target *t, const char *what, const char *path, bool is_dir,
			struct dd_err *err);

/* Every file a run writes (--json, --dist-report, --access-report, --ledger, what --output-dir
 * receives) passes config_check_output, and none names a file the run reads (dist_path, the
 * --config file, the --trace, an existing --ledger) or another of them: reports are renamed into
 * place, so each would destroy the other. dist_path may be NULL. 0, or -1 with err set. */
int config_check_outputs(const struct target *t, const struct bench_options *o, const char *dist_path,
			 struct dd_err *err);

/* The --ioengine rules a run, a replay and a backup share, before the target is probed: an engine
 * that needs O_DIRECT takes --sync none or direct (none becomes direct), --iodepth above 1 needs an
 * asynchronous engine, an engine's own options need that engine. 0, or -1 with err. */
int config_ioengine_rules(struct bench_options *o, struct dd_err *err);
/* ... and once target t is probed (t->io chosen): the engine applies to t's kind and its check
 * (kernel support) passes. 0, or -1 with err. */
int config_ioengine_fits(const struct bench_options *o, const struct target *t, struct dd_err *err);
/* Resolve the outputs' directories once, now (after config_check_outputs, and --output-dir made),
 * and hold them open: what the run writes at its end goes beneath them, never through a
 * directory name swapped meanwhile for a link. 0, or -1 with err (resource: out of descriptors). */
int config_hold_outputs(struct bench_config *cfg, struct dd_err *err);
/* The name to write output k under: through its held directory, else as given (NULL: not asked
 * for). Messages name the output as given (cfg->o). */
const char *config_output_at(const struct bench_config *cfg, enum config_output k);

/* Create the shared ledger (after the target is prepared); 0 or -1 with err. */
int config_open_ledger(struct bench_config *cfg, struct dd_err *err);

/* Operations worker w must do of total_ops (the remainder spread over the first workers). */
static inline uint64_t config_worker_ops(const struct bench_config *c, unsigned w)
{
	uint64_t p = c->o.procs;
	return c->total_ops / p + (w < c->total_ops % p);
}

/* The first slot of worker w when first writes are numbered in write order: the part's own
 * quotas composed with the parts before it give the whole run's equal quotas. */
static inline uint64_t config_worker_slot0(const struct bench_config *c, unsigned w)
{
	uint64_t p = c->o.procs, q = c->total_ops / p, r = c->total_ops % p;
	return c->part.ops_base + w * q + (w < r ? w : r);
}

/* Worker w's number in the whole run: its RNG streams, its unique ids, its place in the
 * nominal schedule. */
static inline uint64_t config_worker_number(const struct bench_config *c, unsigned w)
{
	return c->part.worker_base + w;
}

/* The slot of block `block` of worker w in the layout, when first writes are numbered by block. */
static inline uint64_t config_block_slot(const struct bench_config *c, unsigned w, uint64_t block)
{
	return c->part.block_base + (uint64_t)w * c->region_blocks + block;
}

#endif
