/* space.h - physical block accounting: one 32-bit reference word per PBN (LBN references in the
 * low 30 bits, "the index points here" and "reserved" in the top two), allocation, rebuild. */
#ifndef DEDIS_ENGINE_SPACE_H
#define DEDIS_ENGINE_SPACE_H

#include <stdbool.h>
#include <stdint.h>
#include "meta.h"

#define REF_INDEXED 0x80000000u
#define REF_RESERVED 0x40000000u /* allocated, data being written outside the lock, not yet published */
#define REF_LBNS(r) ((r) & 0x3fffffffu)

struct space {
	uint32_t *refs;          /* shared mapping, data_blocks words */
	uint64_t blocks;
	struct vol_counters *c;  /* the shared counters (used / referenced blocks) */
	uint64_t *cursor;        /* the shared allocation cursor */
};

/* A free PBN (no reference at all), searching on from the cursor: sequential allocation turns
 * random logical writes into sequential physical ones. -ENOSPC when none is free. */
int space_alloc(struct space *s, uint64_t *pbn);
void space_ref_lbn(struct space *s, uint64_t pbn);
void space_unref_lbn(struct space *s, uint64_t pbn);
void space_set_indexed(struct space *s, uint64_t pbn, bool on);
/* Hold a freshly allocated PBN while its data is written without the lock (allocation and GC
 * skip it); release it if the write turns out not to need it. */
void space_reserve(struct space *s, uint64_t pbn, bool on);

/* Recompute every reference word and the derived counters from the LBN map and the index
 * entries (given as the PBN list `indexed`); used by recovery. */
void space_rebuild(struct space *s, const uint64_t *lbnmap, uint64_t nlbns, const uint64_t *indexed, uint64_t nindexed);

#endif
