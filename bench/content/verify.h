/* verify.h - the content ledger: for every block of the target, the content id last written there
 * (8 B per block); checks reads against it (online), re-reads everything after a run (final). */
#ifndef DEDIS_BENCH_VERIFY_H
#define DEDIS_BENCH_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/content.h"
#include "lib/errmsg.h"

/* One shared mapping for all workers (they see each other's slices; the launcher reads them all
 * at the end). Anonymous when small, a temp file when large, or a named file (--ledger) that a
 * later run reopens to verify what an earlier one wrote. Words: id + 1, 0 = never written. */
struct ledger_file_header {
	char magic[8];          /* "DEDISLED" */
	uint32_t version;
	uint32_t block_size;
	uint64_t procs;
	uint64_t region_blocks;
	uint64_t seed;
	uint64_t reserved[3];
};

struct ledger_map {
	void *map;
	size_t map_len;
	uint64_t *words;        /* procs * region_blocks */
	uint64_t procs, region_blocks;
	bool persistent;        /* --ledger FILE */
	bool existed;           /* the file was there: a later run over an earlier one's data */
	uint64_t file_seed;     /* the seed recorded in an existing file */
};

#define LEDGER_ANON_MAX (256ULL << 20) /* above this the ledger lives in a temp file */

/* Create or open. path NULL: anonymous / temp file. With a path, an existing file must have the
 * same geometry (err says otherwise). Returns 0 or -1. */
int ledger_open(struct ledger_map *m, const char *path, uint32_t block_size, uint64_t procs, uint64_t region_blocks,
		uint64_t seed, struct dd_err *err);
/* Peek at an existing ledger file's seed without mapping it (for option checks): 0, or -1 if absent. */
int ledger_peek_seed(const char *path, uint64_t *seed);
int ledger_sync(struct ledger_map *m);
void ledger_close(struct ledger_map *m);

/* A worker's view: its slice of the shared words. */
struct ledger {
	uint64_t *ids;
	uint64_t nblocks;
};

static inline void ledger_slice(const struct ledger_map *m, uint64_t worker, struct ledger *l)
{
	l->ids = m->words + worker * m->region_blocks;
	l->nblocks = m->region_blocks;
}

static inline void ledger_set(struct ledger *l, uint64_t block, uint64_t id)
{
	__atomic_store_n(&l->ids[block], id + 1, __ATOMIC_RELAXED);
}
/* false when the block was never written */
static inline bool ledger_get(const struct ledger *l, uint64_t block, uint64_t *id)
{
	uint64_t v = __atomic_load_n(&l->ids[block], __ATOMIC_RELAXED);
	if (!v)
		return false;
	*id = v - 1;
	return true;
}

/* How a block the ledger has no entry for is judged (this run never wrote it, nor did the
 * earlier run whose --ledger this is). */
enum verify_unknown {
	UNKNOWN_SKIP,     /* not checked: a kept ledger says never written, the old bytes are unknown */
	UNKNOWN_ZEROS,    /* must read as zeros: a target this run created or cleared */
	UNKNOWN_IDENTIFY, /* an earlier run's data, no ledger: zeros or an intact dedisbench block */
	UNKNOWN_LAYOUT,   /* ... and its seed given: the scaled layout's first-write content there */
};

/* How a block was checked; the results count checks per method. */
enum verify_method { VM_LEDGER, VM_ZEROS, VM_IDENTIFY, VM_LAYOUT, VM_METHODS };
extern const char *const verify_method_names[VM_METHODS];

/* What a block must hold. */
struct verify_expect {
	enum verify_method method;
	uint64_t id;            /* VM_LEDGER, VM_LAYOUT: this content (CONTENT_ZERO: zeros) */
	bool seed_claimed;      /* VM_IDENTIFY: the data's seed is this run's, so another seed is wrong */
};

/* What a read found, against what was expected. */
struct verify_result {
	bool ok;
	bool checked;             /* false: nothing is known about the block (not counted) */
	enum verify_method method;
	enum content_kind found;  /* zero, valid (found_id), foreign (found_id under found_seed), garbage */
	uint64_t found_id;
	uint64_t found_seed;
	struct verify_expect want;
};

/* The expectation for a block from its ledger word (id + 1, 0 = no entry) and the policy for
 * blocks without one; false when the block cannot be checked. VM_LAYOUT's id is the caller's to
 * fill (the layout belongs to the worker). */
bool verify_expectation(uint64_t ledger_word, enum verify_unknown unknown, bool seed_claimed,
			struct verify_expect *e);
/* Check a block against an expectation. */
void verify_check(const struct content_gen *g, const void *buf, const struct verify_expect *e,
		  struct verify_result *r);
/* "expected content 0x.., found zeros" and the like, for messages. */
void verify_describe(const struct verify_result *r, char *buf, size_t len);

#endif
