/* verify.h - the content ledger: for every block of the target, the content id last written there
 * (8 B per block); checks reads against it (online), re-reads everything after a run (final). */
#ifndef DEDIS_BENCH_VERIFY_H
#define DEDIS_BENCH_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "content.h"

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
		uint64_t seed, char *err, size_t errlen);
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

/* What a read found, against what the ledger expects. */
struct verify_result {
	bool ok;
	bool checked;             /* false: never written and the target's old bytes are unknown */
	enum content_kind found;  /* zero, a valid block (found_id), or garbage */
	uint64_t found_id;
	bool expected_written;
	uint64_t expected_id;
};

/* Check a block against an expectation (written: holds content `id`; else zeros if zeros_known,
 * unchecked otherwise). */
void verify_check(const struct content_gen *g, const void *buf, bool written, uint64_t id, bool zeros_known,
		  struct verify_result *r);
/* Check a block read from `block` against the ledger. zeros_known: a never-written block must
 * read as zeros (a target this run created or cleared); otherwise it is not checked. */
void verify_block(const struct ledger *l, const struct content_gen *g, uint64_t block, const void *buf,
		  bool zeros_known, struct verify_result *r);
/* "expected content 0x.., found zeros" and the like, for messages. */
void verify_describe(const struct verify_result *r, char *buf, size_t len);

#endif
