/* verify.h - the content ledger: for each block of a worker's region, the content id last
 * written there; used to check reads (online) and to derive what the target should now hold. */
#ifndef DEDIS_BENCH_VERIFY_H
#define DEDIS_BENCH_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "content.h"

/* ids[b] = content id + 1; 0 = never written (reads back as zeros on a fresh target). 8 B per
 * block, in an anonymous mapping touched only where written. */
struct ledger {
	uint64_t *ids;
	uint64_t nblocks;
};

int ledger_init(struct ledger *l, uint64_t nblocks);
void ledger_free(struct ledger *l);

static inline void ledger_set(struct ledger *l, uint64_t block, uint64_t id) { l->ids[block] = id + 1; }
/* false when the block was never written */
static inline bool ledger_get(const struct ledger *l, uint64_t block, uint64_t *id)
{
	if (!l->ids[block])
		return false;
	*id = l->ids[block] - 1;
	return true;
}

/* What a read found, against what the ledger expects. */
struct verify_result {
	bool ok;
	enum content_kind found;  /* zero, a valid block (found_id), or garbage */
	uint64_t found_id;
	bool expected_written;
	uint64_t expected_id;
};

/* Check a block read from `block` against the ledger. */
void verify_block(const struct ledger *l, const struct content_gen *g, uint64_t block, const void *buf,
		  struct verify_result *r);
/* "expected id 0x.. , found zeros" and the like, for messages. */
void verify_describe(const struct verify_result *r, char *buf, size_t len);

#endif
