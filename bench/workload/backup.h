/* backup.h - Data Domain's synthetic backup workload: S streams each write G generations, each
 * a modified copy of the previous one (segments deleted, added, moved), as sequential streams
 * to a file or region per generation; expected and observed cumulative dedup ratio per generation. */
#ifndef DEDIS_BENCH_BACKUP_H
#define DEDIS_BENCH_BACKUP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "bench/ioengine/ioengine.h"
#include "bench/benchopts.h"
#include "bench/report/spacecheck.h"
#include "bench/target/target.h"

#define BACKUP_SEGMENT 8  /* blocks a change moves together (32 KiB of 4 KiB blocks: a file's piece) */
#define BACKUP_MAX_GENERATIONS 1000

/* Percentages of the previous generation's segments: deleted, added (fresh data after a
 * segment), moved (swapped with another): "ADD:DEL:MOVE" as --backup-rates takes them. */
struct backup_rates {
	double add, del, move;
};
int backup_parse_rates(const char *s, struct backup_rates *out);

/* Generation g+1 of a stream from generation g (ids, n blocks each), fresh ids counted from *next.
 * The length stays n: a longer result is cut, a shorter one gets fresh segments at its end. */
struct rng;
void backup_mutate(const uint64_t *prev, uint64_t *out, uint64_t n, const struct backup_rates *r, struct rng *rs,
		   uint64_t *next);

struct backup_job {
	const struct target *target;     /* probed with streams x generations regions */
	const struct ioengine_ops *engine; /* --ioengine's, or the target's own (engine:) */
	const void *engine_opts;         /* its option values (io_ctx.opts) */
	unsigned streams, generations;
	uint64_t blocks;                 /* per generation */
	uint32_t block_size;
	uint32_t compress;               /* content_init's R */
	struct backup_rates rates;
	uint64_t seed;
	int open_flags;
	const struct space_probe *space; /* the target's used space, read after each generation (NULL: none) */
	volatile sig_atomic_t *stop;
};

struct backup_gen {
	uint64_t logical_bytes;          /* this generation, all streams */
	uint64_t cum_logical_blocks, cum_distinct;
	double expected_ratio;           /* cumulative: logical blocks / distinct contents */
	bool have_observed;
	double observed_ratio;           /* engine: mapped / referenced; else cumulative logical / used */
	uint64_t observed_physical_bytes; /* engine: physical_bytes; else used space since the start */
	double shared_with_previous;     /* blocks whose content the previous generation had, share */
	double seconds, mib_per_s;
};

struct backup_result {
	struct backup_gen *gen;          /* generations entries */
	unsigned done;                   /* generations completed */
	bool interrupted, failed;
	char failure[512];
	double seconds;
};

/* 0 when it ran (r says how it ended), -1 when it could not start (err). backup_free(r) after. */
int backup_run(const struct backup_job *j, struct backup_result *r, struct dd_err *err);
void backup_free(struct backup_result *r);
void backup_print(FILE *f, const struct backup_job *j, const struct bench_options *o, const struct backup_result *r);
json_t *backup_json(const struct backup_job *j, const struct bench_options *o, const struct backup_result *r);
bool backup_option_applies(const char *name);

#endif
